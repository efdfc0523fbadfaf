//! Runs a scenario's steps against a stored task: at once up to its first wait, then in a tokio task.

use std::sync::Arc;
use std::time::Duration;

use crate::protocol::{Artifact, Message, Part, Role, StreamResponse, TaskArtifactUpdateEvent, TaskState};
use crate::server::scenario::{Step, TemplateVars, render_parts};

use super::store::{TaskHandle, TaskInner};

/// Runs `steps` for the task: those before the first `sleep` at once, the rest in a tokio task of
/// their own. `input` is the text that triggered the run (for templates). A run stops early when
/// the task is canceled or another run supersedes it.
///
/// A script that never waits (echo, most ACTS behaviours) is thus done before the call that
/// started it answers, with no task to schedule and no one to wake; its events are in the log
/// for whoever subscribed before, as they would be had it run elsewhere.
pub fn spawn_run(handle: Arc<TaskHandle>, steps: &[Step], input: String) {
    let waits_at = steps.iter().position(|s| matches!(s, Step::Sleep { .. })).unwrap_or(steps.len());
    // One update for the new run and its steps up to the first wait: one lock, one wake-up.
    let (generation, go_on) = handle.update(|t| {
        t.run_generation += 1;
        let generation = t.run_generation;
        let go_on = steps[..waits_at].iter().enumerate().all(|(i, step)| apply_to(t, i, step, &input, generation));
        (generation, go_on)
    });
    if go_on && waits_at < steps.len() {
        let rest: Vec<(usize, Step)> = steps.iter().cloned().enumerate().skip(waits_at).collect();
        tokio::spawn(async move { run(handle, rest, input, generation).await });
    }
}

async fn run(handle: Arc<TaskHandle>, steps: Vec<(usize, Step)>, input: String, generation: u64) {
    for (i, step) in steps {
        if let Step::Sleep { ms } = step {
            let mut stopped = std::pin::pin!(handle.stopped());
            // Enabled before the generation is read, so that a stop sent in between is not missed.
            stopped.as_mut().enable();
            if handle.lock().run_generation != generation {
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                _ = stopped => return,
            }
            continue;
        }
        if !apply(&handle, i, &step, &input, generation) {
            return;
        }
    }
}

/// Applies one status, artifact or reply step (the `i`th of the script); false when the run must
/// stop (superseded, or the task already finished).
fn apply(handle: &TaskHandle, i: usize, step: &Step, input: &str, generation: u64) -> bool {
    handle.update(|t| apply_to(t, i, step, input, generation))
}

/// [`apply`], under the task's lock.
fn apply_to(t: &mut TaskInner, i: usize, step: &Step, input: &str, generation: u64) -> bool {
    if t.run_generation != generation || t.state().is_terminal() {
        return false;
    }
    let Some(task) = t.live_mut() else { return false };
    let (task_id, context_id) = (task.id.clone(), task.context_id.clone());
    let vars = TemplateVars { input, task_id: &task_id, context_id: &context_id };
    match step {
        Step::Status { state, text } => {
            let message = text.as_ref().map(|s| agent_message(&task_id, &context_id, vec![Part::text(vars.render(s))]));
            t.set_status(*state, message);
        }
        Step::Artifact { artifact_id, name, parts, append, last_chunk } => {
            let artifact = Artifact {
                artifact_id: artifact_id.clone().unwrap_or_else(|| format!("artifact-{i}")),
                name: name.clone().unwrap_or_default(),
                description: String::new(),
                parts: render_parts(parts, &vars),
                metadata: None,
                extensions: Vec::new(),
            };
            merge_artifact(&mut task.artifacts, &artifact, *append);
            let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                task_id,
                context_id,
                artifact,
                append: *append,
                last_chunk: *last_chunk,
                metadata: None,
            });
            t.log.push(ev, false);
        }
        Step::Reply { .. } | Step::Sleep { .. } => {}
    }
    true
}

/// Applies an artifact update to the task's artifact list (§4.2.2 `append`).
fn merge_artifact(list: &mut Vec<Artifact>, update: &Artifact, append: bool) {
    match list.iter_mut().find(|a| a.artifact_id == update.artifact_id) {
        Some(existing) if append => existing.parts.extend(update.parts.iter().cloned()),
        Some(existing) => *existing = update.clone(),
        None => list.push(update.clone()),
    }
}

/// A message from the agent in the given task and context.
pub fn agent_message(task_id: &str, context_id: &str, parts: Vec<Part>) -> Message {
    Message {
        message_id: crate::server::ids::new_id(),
        context_id: context_id.to_owned(),
        task_id: task_id.to_owned(),
        role: Role::Agent,
        parts,
        metadata: None,
        extensions: Vec::new(),
        reference_task_ids: Vec::new(),
    }
}

/// Cancels the task: CANCELED with an event, and the running script told to stop. Returns the state
/// that prevented it if the task was already terminal.
pub fn cancel(handle: &TaskHandle) -> Result<(), TaskState> {
    let r = handle.update(|t| {
        let state = t.state();
        if state.is_terminal() {
            return Err(state);
        }
        t.run_generation += 1;
        t.set_status(TaskState::Canceled, None);
        Ok(())
    });
    if r.is_ok() {
        handle.signal_stop();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::scenario::Scenario;
    use crate::server::tasks::TaskStore;

    fn task(store: &TaskStore) -> Arc<TaskHandle> {
        let first = agent_message("", "", vec![Part::text("hi")]);
        let scenario = Arc::new(Scenario {
            name: "t".into(),
            description: String::new(),
            prefixes: vec![],
            steps: vec![],
            continuations: vec![],
        });
        store.create("", "", "ctx".into(), first, scenario).unwrap()
    }

    fn status(state: TaskState) -> Step {
        Step::Status { state, text: None }
    }

    #[tokio::test]
    async fn a_script_that_never_waits_is_done_when_the_call_returns() {
        let store = TaskStore::new(8, 64, 8);
        let h = task(&store);
        let art = Step::Artifact {
            artifact_id: None,
            name: None,
            parts: vec![Part::text("{{input}}!")],
            append: false,
            last_chunk: false,
        };
        spawn_run(h.clone(), &[status(TaskState::Working), art, status(TaskState::Completed)], "x".into());
        let g = h.lock();
        assert_eq!(g.state(), TaskState::Completed);
        let t = g.task();
        assert_eq!(t.artifacts[0].artifact_id, "artifact-1", "named by the step's place in the script");
        assert_eq!(t.artifacts[0].parts[0].as_text(), Some("x!"));
    }

    #[tokio::test]
    async fn a_script_goes_on_in_the_background_from_its_first_wait() {
        let store = TaskStore::new(8, 64, 8);
        let h = task(&store);
        let steps = vec![status(TaskState::Working), Step::Sleep { ms: 20 }, status(TaskState::Completed)];
        let mut sub = h.subscribe_after(Some(0));
        spawn_run(h.clone(), &steps, String::new());
        assert_eq!(h.lock().state(), TaskState::Working);
        tokio::time::timeout(Duration::from_secs(10), sub.settled()).await.unwrap();
        assert_eq!(h.lock().state(), TaskState::Completed);
    }

    #[tokio::test]
    async fn a_cancel_stops_a_waiting_script() {
        let store = TaskStore::new(8, 64, 8);
        let h = task(&store);
        let steps = vec![status(TaskState::Working), Step::Sleep { ms: 600_000 }, status(TaskState::Completed)];
        spawn_run(h.clone(), &steps, String::new());
        tokio::task::yield_now().await;
        cancel(&h).unwrap();
        drop(store);
        // The script's task ends: nothing but the test holds the handle once it has.
        tokio::time::timeout(Duration::from_secs(10), async {
            while Arc::strong_count(&h) > 1 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the sleeping script stopped");
        assert_eq!(h.lock().state(), TaskState::Canceled);
    }
}
