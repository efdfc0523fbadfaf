//! Runs a scenario's steps against a stored task, one step at a time, in its own tokio task.

use std::sync::Arc;
use std::time::Duration;

use crate::protocol::{Artifact, Message, Part, Role, StreamResponse, TaskArtifactUpdateEvent, TaskState};
use crate::server::scenario::{Step, TemplateVars, render_parts};

use super::store::TaskHandle;

/// Starts running `steps` for the task in the background. `input` is the text that triggered the
/// run (for templates). A run stops early when the task is canceled or another run supersedes it.
pub fn spawn_run(handle: Arc<TaskHandle>, steps: Vec<Step>, input: String) {
    let generation = handle.update(|t| {
        t.run_generation += 1;
        t.run_generation
    });
    tokio::spawn(async move { run(handle, steps, input, generation).await });
}

async fn run(handle: Arc<TaskHandle>, steps: Vec<Step>, input: String, generation: u64) {
    let mut stop = handle.stop_receiver();
    stop.borrow_and_update();
    for (i, step) in steps.into_iter().enumerate() {
        if let Step::Sleep { ms } = step {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                _ = stop.changed() => return,
            }
            continue;
        }
        let keep_going = handle.update(|t| {
            if t.run_generation != generation || t.state().is_terminal() {
                return false;
            }
            let (task_id, context_id) = (t.task.id.clone(), t.task.context_id.clone());
            let vars = TemplateVars { input: &input, task_id: &task_id, context_id: &context_id };
            match step {
                Step::Status { state, text } => {
                    let message = text.map(|s| agent_message(&task_id, &context_id, vec![Part::text(vars.render(&s))]));
                    t.set_status(state, message);
                }
                Step::Artifact { artifact_id, name, parts, append, last_chunk } => {
                    let artifact = Artifact {
                        artifact_id: artifact_id.unwrap_or_else(|| format!("artifact-{i}")),
                        name: name.unwrap_or_default(),
                        description: String::new(),
                        parts: render_parts(&parts, &vars),
                        metadata: None,
                        extensions: Vec::new(),
                    };
                    merge_artifact(&mut t.task.artifacts, &artifact, append);
                    let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                        task_id,
                        context_id,
                        artifact,
                        append,
                        last_chunk,
                        metadata: None,
                    });
                    t.log.push(ev, false);
                }
                Step::Reply { .. } | Step::Sleep { .. } => {}
            }
            true
        });
        if !keep_going {
            return;
        }
    }
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
        message_id: uuid::Uuid::new_v4().to_string(),
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
