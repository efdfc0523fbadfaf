//! The in-memory task store: tasks keyed by id, each with its state, event log, push configs and
//! the stop signal of its running script. A finished task never changes again, so it is kept as
//! its JSON, a fraction of the memory of its typed form; its event log goes too once no one
//! follows it, since nothing can subscribe to a finished task.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};

use tokio::sync::Notify;

use super::log::{EventLog, Lagged, LoggedEvent};
use crate::protocol::{
    Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use crate::server::scenario::Scenario;

/// Told every state a task enters, after the change, outside the task's lock: how the
/// client-check recording learns which tasks waited for input or authorization.
#[derive(Clone)]
pub struct StateWatch(pub Arc<StateFn>);

/// What a [`StateWatch`] calls: the task's id and the state it entered.
pub type StateFn = dyn Fn(&str, TaskState) + Send + Sync;

impl std::fmt::Debug for StateWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateWatch")
    }
}

/// A task as stored: typed while it can change, its JSON once it has finished.
#[derive(Debug)]
enum Body {
    Live(Box<Task>),
    Finished {
        /// The task in full, as GetTask shows it without `historyLength`.
        json: Box<str>,
        /// What listing filters and sorts on, without reading the JSON.
        context_id: String,
        state: TaskState,
        timestamp: Option<Timestamp>,
    },
}

/// The mutable part of a task, guarded by its handle's lock.
#[derive(Debug)]
pub struct TaskInner {
    body: Body,
    /// Everything emitted for the task, in generation order.
    pub log: EventLog,
    /// Registered webhooks by config id.
    pub push_configs: BTreeMap<String, TaskPushNotificationConfig>,
    /// The script the task follows, for continuations.
    pub scenario: Arc<Scenario>,
    /// Bumped whenever a new script run starts, so that a stale run stops.
    pub run_generation: u64,
    pub push_worker_running: bool,
    max_history: usize,
    /// Status timestamps in whole seconds (an agent without millisecond precision, §5.6.1).
    whole_seconds: bool,
}

impl TaskInner {
    /// Sets a new status, records its message in history and logs the update event. A finished
    /// task's status is final: it stays as it is, and the last sequence number is returned.
    pub fn set_status(&mut self, state: TaskState, message: Option<Message>) -> u64 {
        let Body::Live(task) = &mut self.body else {
            return self.log.last_seq().unwrap_or(0);
        };
        let status = TaskStatus { state, message: message.clone(), timestamp: Some(stamp(self.whole_seconds)) };
        task.status = status.clone();
        let ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            status,
            metadata: None,
        });
        if let Some(m) = message {
            self.push_history(m);
        }
        let seq = self.log.push(ev, state.is_terminal() || state.is_interrupted());
        if state.is_terminal() {
            self.finish();
        }
        seq
    }

    /// Appends to history, dropping the oldest message past the limit (a finished task's history
    /// is final).
    pub fn push_history(&mut self, m: Message) {
        if let Body::Live(task) = &mut self.body {
            if task.history.len() >= self.max_history {
                task.history.remove(0);
            }
            task.history.push(m);
        }
    }

    /// Overwrites a finished task's state (a fault: the faithful mock never changes a finished
    /// task). No event is logged: no one can subscribe to a finished task.
    pub fn overwrite_finished_state(&mut self, new: TaskState) {
        let Body::Finished { json, state, timestamp, .. } = &mut self.body else { return };
        let mut task: Task = serde_json::from_str(json).expect("the store reads its own JSON");
        let now = stamp(self.whole_seconds);
        task.status = TaskStatus { state: new, message: None, timestamp: Some(now) };
        *json = serde_json::to_string(&task).expect("protocol types serialize").into_boxed_str();
        *state = new;
        *timestamp = Some(now);
    }

    /// From now on the task is its JSON.
    fn finish(&mut self) {
        let Body::Live(task) = &mut self.body else { return };
        // Sized for a small task at once: growing the buffer step by step showed in profiles.
        let mut buf = Vec::with_capacity(1024);
        serde_json::to_writer(&mut buf, &**task).expect("protocol types serialize");
        let json = String::from_utf8(buf).expect("serde_json writes UTF-8").into_boxed_str();
        let context_id = std::mem::take(&mut task.context_id);
        self.body = Body::Finished { json, context_id, state: task.status.state, timestamp: task.status.timestamp };
    }

    pub fn state(&self) -> TaskState {
        match &self.body {
            Body::Live(t) => t.status.state,
            Body::Finished { state, .. } => *state,
        }
    }

    pub fn context_id(&self) -> &str {
        match &self.body {
            Body::Live(t) => &t.context_id,
            Body::Finished { context_id, .. } => context_id,
        }
    }

    /// When the current status was set.
    pub fn status_timestamp(&self) -> Option<Timestamp> {
        match &self.body {
            Body::Live(t) => t.status.timestamp,
            Body::Finished { timestamp, .. } => *timestamp,
        }
    }

    /// The task as it stands (full history and artifacts).
    pub fn task(&self) -> Cow<'_, Task> {
        match &self.body {
            Body::Live(t) => Cow::Borrowed(t),
            Body::Finished { json, .. } => {
                Cow::Owned(serde_json::from_str(json).expect("the store reads its own JSON"))
            }
        }
    }

    /// The task, while it can still change.
    pub fn live_mut(&mut self) -> Option<&mut Task> {
        match &mut self.body {
            Body::Live(t) => Some(t),
            Body::Finished { .. } => None,
        }
    }

    /// The task as JSON with at most `history_length` messages and artifacts only if
    /// `include_artifacts` (see [`super::view::view`]); a finished task shown whole costs a copy.
    pub fn task_json(&self, history_length: Option<i32>, include_artifacts: bool) -> String {
        let mut out = String::new();
        self.write_task_json(&mut out, history_length, include_artifacts);
        out
    }

    /// [`TaskInner::task_json`], appended to `out`.
    pub fn write_task_json(&self, out: &mut String, history_length: Option<i32>, include_artifacts: bool) {
        match &self.body {
            Body::Finished { json, .. } if history_length.is_none() && include_artifacts => out.push_str(json),
            _ => {
                let task = super::view::view(&self.task(), history_length, include_artifacts);
                out.push_str(&serde_json::to_string(&task).expect("protocol types serialize"));
            }
        }
    }
}

/// A stored task: its lock, its change signal and its script's stop signal.
#[derive(Debug)]
pub struct TaskHandle {
    /// Tenant the task belongs to ("" when none).
    pub tenant: String,
    /// The caller that created it ("" when the mock authenticates no one): only it sees the task.
    pub owner: String,
    pub id: String,
    inner: Mutex<TaskInner>,
    /// Notified after every change: subscribers look at the log again.
    changed: Notify,
    /// Notified when the running script must stop.
    stop: Notify,
    subscribers: AtomicUsize,
    open_streams: AtomicUsize,
    /// Told when the task finishes, so that it can be evicted; weak, as the store owns the task.
    store: Weak<Mutex<Index>>,
    watch: Option<StateWatch>,
}

impl TaskHandle {
    /// Locks the task for reading. Never call `update` while holding this.
    pub fn lock(&self) -> MutexGuard<'_, TaskInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` under the lock, then wakes every subscriber (after unlocking, so that a woken
    /// subscriber can take the lock at once).
    pub fn update<R>(&self, f: impl FnOnce(&mut TaskInner) -> R) -> R {
        let (r, finished, entered) = {
            let mut g = self.lock();
            let before = g.state();
            let r = f(&mut g);
            let after = g.state();
            (r, !before.is_terminal() && after.is_terminal(), (before != after).then_some(after))
        };
        if let (Some(state), Some(watch)) = (entered, &self.watch) {
            (watch.0)(&self.id, state);
        }
        // Outside the task's lock: the store's lock is never taken while a task's is held.
        if finished && let Some(index) = self.store.upgrade() {
            lock_index(&index).finished(self);
        }
        self.changed.notify_waiters();
        if finished {
            self.forget_log_if_unfollowed();
        }
        r
    }

    /// Tells the running script (if any) to stop at its next step or wait. The script also stops
    /// when it sees `run_generation` change, which callers bump first: a script that was not yet
    /// waiting when this was sent sees that instead.
    pub fn signal_stop(&self) {
        self.stop.notify_waiters();
    }

    /// Resolves at the next [`TaskHandle::signal_stop`] after it is enabled.
    pub fn stopped(&self) -> tokio::sync::futures::Notified<'_> {
        self.stop.notified()
    }

    /// Follows the task's events strictly after `after` (`None`: from the first event).
    pub fn subscribe_after(self: &Arc<Self>, after: Option<u64>) -> Subscription {
        self.subscribers.fetch_add(1, Ordering::AcqRel);
        Subscription { handle: self.clone(), cursor: after }
    }

    /// Number of live subscriptions (streams, blocking waits and push workers).
    pub fn subscriber_count(&self) -> usize {
        self.subscribers.load(Ordering::Acquire)
    }

    /// Drops a finished task's events once no one follows it: nothing can subscribe to a finished
    /// task, so no one will read them. Skipped if the task is busy; eviction frees them anyway.
    fn forget_log_if_unfollowed(&self) {
        if self.subscriber_count() != 0 {
            return;
        }
        let mut g = match self.inner.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return,
        };
        if g.state().is_terminal() && self.subscriber_count() == 0 {
            g.log.forget();
        }
    }

    /// Reserves one of at most `max` concurrent SSE streams on this task; the slot is released when
    /// the returned guard drops (the stream ends or the client goes away).
    pub fn try_open_stream(self: &Arc<Self>, max: usize) -> Option<StreamSlot> {
        self.open_streams
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < max).then_some(n + 1))
            .ok()
            .map(|_| StreamSlot(self.clone()))
    }
}

/// One of a task's concurrent stream slots; dropping it frees the slot.
#[derive(Debug)]
pub struct StreamSlot(Arc<TaskHandle>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.open_streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A cursor over a task's event log that wakes when new events arrive.
#[derive(Debug)]
pub struct Subscription {
    handle: Arc<TaskHandle>,
    cursor: Option<u64>,
}

impl Subscription {
    /// The task as it stands now.
    pub fn task_now(&self) -> crate::protocol::Task {
        self.handle.lock().task().into_owned()
    }

    /// The next batch of events, waiting for at least one. `Err` when events were dropped from the
    /// log before this subscriber read them.
    pub async fn next_batch(&mut self) -> Result<Vec<LoggedEvent>, Lagged> {
        loop {
            let mut changed = std::pin::pin!(self.handle.changed.notified());
            // Registered before looking, so that an event logged in between still wakes it.
            changed.as_mut().enable();
            let batch = self.handle.lock().log.after(self.cursor)?;
            if let Some(last) = batch.last() {
                self.cursor = Some(last.seq);
                return Ok(batch);
            }
            changed.await;
        }
    }

    /// True once the task has settled after the cursor: an event that ends a stream (a terminal
    /// or interrupted state) came, or the task finished. Reads no events, so it copies none.
    pub fn is_settled(&self) -> bool {
        let g = self.handle.lock();
        g.state().is_terminal() || g.log.closes_after(self.cursor)
    }

    /// Waits until [`Subscription::is_settled`].
    pub async fn settled(&mut self) {
        loop {
            let mut changed = std::pin::pin!(self.handle.changed.notified());
            changed.as_mut().enable();
            if self.is_settled() {
                return;
            }
            changed.await;
        }
    }

    pub fn handle(&self) -> &Arc<TaskHandle> {
        &self.handle
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if self.handle.subscribers.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.handle.forget_log_if_unfollowed();
        }
    }
}

/// The store refused a new task because every slot holds an unfinished one.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the mock's task store is full ({limit} unfinished tasks); finish or cancel some first")]
pub struct StoreFull {
    pub limit: usize,
}

/// The store's one lock guards this: the tasks by id and the order in which they finished.
#[derive(Debug, Default)]
struct Index {
    /// By task id alone: the mock mints every id (a v4 UUID), so ids never collide across tenants.
    tasks: HashMap<String, Arc<TaskHandle>>,
    /// Finished tasks, oldest first: eviction takes from the front, so a full store costs an
    /// insert no more than an empty one.
    finished: VecDeque<Arc<TaskHandle>>,
}

impl Index {
    /// Books a task that just finished for eviction, if it is still the one stored under its id
    /// (a fault may make a newer task replace it).
    fn finished(&mut self, handle: &TaskHandle) {
        if let Some(h) = self.tasks.get(&handle.id)
            && std::ptr::eq(Arc::as_ptr(h), handle)
        {
            self.finished.push_back(h.clone());
        }
    }

    /// Removes the task that finished longest ago and has no subscriber, and returns it so that
    /// the caller frees it after unlocking. A subscriber of a finished task is passing (a stream
    /// sending its last event, a blocking call answering, a push worker delivering), so the tasks
    /// passed over number at most the live subscriptions, whatever the size of the store. `None`
    /// when every stored task is unfinished or followed.
    fn evict_one(&mut self) -> Option<Arc<TaskHandle>> {
        while let Some(i) = self.finished.iter().position(|h| h.subscriber_count() == 0) {
            let h = self.finished.remove(i).expect("the position found is in range");
            // Only the entry for this very task frees a slot (defensive: a task finishes once).
            if self.tasks.get(&h.id).is_some_and(|stored| Arc::ptr_eq(stored, &h)) {
                return self.tasks.remove(&h.id);
            }
        }
        None
    }
}

fn lock_index(index: &Mutex<Index>) -> MutexGuard<'_, Index> {
    index.lock().unwrap_or_else(|p| p.into_inner())
}

/// All tasks, bounded; finished tasks are evicted oldest-first when room is needed.
///
/// One lock guards the index, and it is held only for a lookup, an insert or an eviction, never
/// while a task's own lock is taken, so no operation on one task waits on work for another.
#[derive(Debug)]
pub struct TaskStore {
    index: Arc<Mutex<Index>>,
    max_tasks: usize,
    max_events: usize,
    max_history: usize,
    /// A fault's one id for every new task (the newest task stored under it replaces the one
    /// before); `None`: a fresh id each.
    reused_id: Option<String>,
    watch: Option<StateWatch>,
    whole_seconds: bool,
}

/// The time now, to the precision the agent keeps.
fn stamp(whole_seconds: bool) -> Timestamp {
    let now = Timestamp::now();
    if whole_seconds { now.whole_seconds() } else { now }
}

impl TaskStore {
    pub fn new(max_tasks: usize, max_events: usize, max_history: usize) -> Self {
        TaskStore {
            index: Arc::new(Mutex::new(Index::default())),
            max_tasks: max_tasks.max(1),
            max_events,
            max_history: max_history.max(1),
            reused_id: None,
            whole_seconds: false,
            watch: None,
        }
    }

    /// Tells `watch` every state each task enters from now on.
    pub fn watch_states(mut self, watch: StateWatch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// Keeps status timestamps in whole seconds (§5.6.1: "When millisecond precision is not
    /// available").
    pub fn whole_seconds(mut self, on: bool) -> Self {
        self.whole_seconds = on;
        self
    }

    /// Gives every new task `id` (a fault, §3.4.2).
    pub fn reuse_task_id(mut self, id: Option<&str>) -> Self {
        self.reused_id = id.map(str::to_owned);
        self
    }

    fn index(&self) -> MutexGuard<'_, Index> {
        lock_index(&self.index)
    }

    /// Stores a new SUBMITTED task holding `first` in its history; the task as created is event 0.
    pub fn create(
        &self,
        tenant: &str,
        owner: &str,
        context_id: String,
        first: Message,
        scenario: Arc<Scenario>,
    ) -> Result<Arc<TaskHandle>, StoreFull> {
        let id = self.reused_id.clone().unwrap_or_else(crate::server::ids::new_id);
        let mut first = first;
        first.task_id = id.clone();
        first.context_id = context_id.clone();
        let task = Task {
            id: id.clone(),
            context_id,
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(stamp(self.whole_seconds)),
            },
            artifacts: Vec::new(),
            history: vec![first],
            metadata: None,
        };
        let mut log = EventLog::new(self.max_events);
        // Event 0 is the task as created. Whoever needs it gets it as a snapshot of its own (a
        // stream's first event, a push worker's first delivery), so the log keeps no copy.
        log.skip();
        let handle = Arc::new(TaskHandle {
            tenant: tenant.to_owned(),
            owner: owner.to_owned(),
            id: id.clone(),
            inner: Mutex::new(TaskInner {
                body: Body::Live(Box::new(task)),
                log,
                push_configs: BTreeMap::new(),
                scenario,
                run_generation: 0,
                push_worker_running: false,
                max_history: self.max_history,
                whole_seconds: self.whole_seconds,
            }),
            changed: Notify::new(),
            stop: Notify::new(),
            subscribers: AtomicUsize::new(0),
            open_streams: AtomicUsize::new(0),
            store: Arc::downgrade(&self.index),
            watch: self.watch.clone(),
        });
        let mut evicted = None;
        {
            let mut index = self.index();
            while index.tasks.len() >= self.max_tasks && !index.tasks.contains_key(&id) {
                match index.evict_one() {
                    Some(h) => evicted = Some(h),
                    None => return Err(StoreFull { limit: self.max_tasks }),
                }
            }
            index.tasks.insert(id, handle.clone());
        }
        // Freed here, after unlocking: no other task waits on this one's memory being returned.
        drop(evicted);
        Ok(handle)
    }

    /// The task with this id, if the tenant and the caller (`owner`) may see it.
    pub fn get(&self, tenant: &str, owner: &str, id: &str) -> Option<Arc<TaskHandle>> {
        self.get_any_owner(tenant, id).filter(|h| h.owner == owner)
    }

    /// The task with this id under `tenant`, whichever caller created it.
    pub fn get_any_owner(&self, tenant: &str, id: &str) -> Option<Arc<TaskHandle>> {
        self.index().tasks.get(id).filter(|h| h.tenant == tenant).cloned()
    }

    /// The tasks the caller (`owner`) sees under `tenant`; every caller's with `None`.
    pub fn all(&self, tenant: &str, owner: Option<&str>) -> Vec<Arc<TaskHandle>> {
        self.index()
            .tasks
            .values()
            .filter(|h| h.tenant == tenant && owner.is_none_or(|o| h.owner == o))
            .cloned()
            .collect()
    }

    pub fn len(&self) -> usize {
        self.index().tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{Part, Role};

    fn store(max_tasks: usize) -> TaskStore {
        TaskStore::new(max_tasks, 16, 16)
    }

    fn message() -> Message {
        Message {
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id: String::new(),
            task_id: String::new(),
            role: Role::User,
            parts: vec![Part::text("hi")],
            metadata: None,
            extensions: vec![],
            reference_task_ids: vec![],
        }
    }

    fn scenario() -> Arc<Scenario> {
        Arc::new(Scenario {
            name: "t".into(),
            description: String::new(),
            prefixes: vec![],
            steps: vec![],
            continuations: vec![],
        })
    }

    fn create(store: &TaskStore) -> Result<Arc<TaskHandle>, StoreFull> {
        store.create("", "", "ctx".into(), message(), scenario())
    }

    fn finish(h: &TaskHandle) {
        h.update(|t| t.set_status(TaskState::Completed, None));
    }

    fn stored(store: &TaskStore, h: &TaskHandle) -> bool {
        store.get("", "", &h.id).is_some()
    }

    #[test]
    fn evicts_in_the_order_tasks_finished_not_the_order_they_started() {
        let s = store(3);
        let (a, b, c) = (create(&s).unwrap(), create(&s).unwrap(), create(&s).unwrap());
        finish(&b);
        finish(&a);
        finish(&c);
        let d = create(&s).unwrap();
        assert!(!stored(&s, &b), "b finished first");
        assert!(stored(&s, &a) && stored(&s, &c) && stored(&s, &d));
        let _e = create(&s).unwrap();
        assert!(!stored(&s, &a), "then a");
        assert!(stored(&s, &c));
        assert_eq!(s.len(), 3);
    }

    #[test]
    fn unfinished_tasks_are_never_evicted() {
        let s = store(2);
        let (a, b) = (create(&s).unwrap(), create(&s).unwrap());
        assert_eq!(create(&s).unwrap_err().limit, 2);
        assert!(stored(&s, &a) && stored(&s, &b));
        finish(&b);
        let c = create(&s).unwrap();
        assert!(stored(&s, &a) && !stored(&s, &b) && stored(&s, &c));
    }

    #[test]
    fn a_followed_task_is_passed_over_until_its_subscriber_leaves() {
        let s = store(2);
        let (a, b) = (create(&s).unwrap(), create(&s).unwrap());
        finish(&a);
        finish(&b);
        let sub = a.subscribe_after(Some(0));
        let c = create(&s).unwrap();
        assert!(stored(&s, &a), "a has a subscriber");
        assert!(!stored(&s, &b));
        finish(&c);
        drop(sub);
        let _d = create(&s).unwrap();
        assert!(!stored(&s, &a), "a finished before c and is free now");
        assert!(stored(&s, &c));
    }

    #[test]
    fn a_reused_id_stores_the_newest_task_and_keeps_the_store_bounded() {
        let s = store(2).reuse_task_id(Some("same"));
        let a = create(&s).unwrap();
        let b = create(&s).unwrap();
        assert_eq!((a.id.as_str(), b.id.as_str()), ("same", "same"));
        assert!(Arc::ptr_eq(&s.get("", "", "same").unwrap(), &b), "the newest replaces the one before");
        assert_eq!(s.len(), 1);
        finish(&a);
        let _c = create(&s).unwrap();
        assert_eq!(s.len(), 1, "a replaced task is not booked for eviction, and takes no slot");
    }

    #[test]
    fn a_finished_state_can_be_overwritten_only_on_purpose() {
        let s = store(2);
        let a = create(&s).unwrap();
        finish(&a);
        a.update(|t| t.set_status(TaskState::Working, None));
        assert_eq!(a.lock().state(), TaskState::Completed, "a finished task's status is final");
        a.update(|t| t.overwrite_finished_state(TaskState::Canceled));
        let g = a.lock();
        assert_eq!(g.state(), TaskState::Canceled);
        assert_eq!(g.task().status.state, TaskState::Canceled);
    }

    #[test]
    fn a_full_store_of_followed_tasks_refuses_new_ones() {
        let s = store(1);
        let a = create(&s).unwrap();
        finish(&a);
        let _sub = a.subscribe_after(Some(0));
        assert!(create(&s).is_err());
        assert!(stored(&s, &a));
    }

    #[test]
    fn a_task_takes_one_place_in_the_eviction_line() {
        let s = store(2);
        let a = create(&s).unwrap();
        finish(&a);
        a.update(|t| t.set_status(TaskState::Canceled, None));
        a.update(|t| t.push_worker_running = false);
        assert_eq!(s.index().finished.len(), 1);
        let _b = create(&s).unwrap();
        let _c = create(&s).unwrap();
        assert!(!stored(&s, &a));
        assert!(s.index().finished.is_empty());
    }

    #[test]
    fn a_finished_task_reads_back_as_it_was() {
        let s = store(4);
        let h = create(&s).unwrap();
        h.update(|t| t.set_status(TaskState::Working, None));
        h.update(|t| {
            let task = t.live_mut().expect("a working task is live");
            task.artifacts.push(crate::protocol::Artifact {
                artifact_id: "a".into(),
                name: "n".into(),
                description: String::new(),
                parts: vec![Part::text("out")],
                metadata: None,
                extensions: vec![],
            });
        });
        let mut done = message();
        done.role = Role::Agent;
        h.update(|t| t.set_status(TaskState::Completed, Some(done.clone())));
        let g = h.lock();
        assert!(matches!(g.body, Body::Finished { .. }));
        let task = g.task().into_owned();
        assert_eq!(task.status.state, TaskState::Completed);
        assert_eq!(task.status.message.as_ref(), Some(&done));
        assert_eq!(task.history.last(), Some(&done));
        assert_eq!(task.artifacts[0].parts[0].as_text(), Some("out"));
        assert_eq!(g.context_id(), "ctx");
        assert_eq!(g.status_timestamp(), task.status.timestamp);
        assert_eq!(g.task_json(None, true), serde_json::to_string(&task).unwrap());
        let trimmed: Task = serde_json::from_str(&g.task_json(Some(1), false)).unwrap();
        assert_eq!(trimmed.history, vec![done]);
        assert!(trimmed.artifacts.is_empty());
    }

    #[test]
    fn a_finished_task_keeps_its_events_while_followed_and_drops_them_after() {
        let s = store(4);
        let followed = create(&s).unwrap();
        let sub = followed.subscribe_after(Some(0));
        finish(&followed);
        assert_eq!(followed.lock().log.after(Some(0)).unwrap().len(), 1, "the subscriber has not read it yet");
        drop(sub);
        assert!(followed.lock().log.after(Some(1)).unwrap().is_empty());
        assert!(followed.lock().log.after(Some(0)).is_err(), "forgotten: nothing can subscribe any more");
        assert_eq!(followed.lock().log.last_seq(), Some(1), "sequence numbers stay");
        let alone = create(&s).unwrap();
        finish(&alone);
        assert!(alone.lock().log.after(Some(0)).is_err());
    }

    #[tokio::test]
    async fn a_subscriber_settles_on_an_interruption_after_it_or_on_the_end() {
        let s = store(4);
        let h = create(&s).unwrap();
        h.update(|t| t.set_status(TaskState::InputRequired, None));
        let seq = h.lock().log.last_seq();
        let mut sub = h.subscribe_after(seq);
        let waiting = tokio::spawn(async move { sub.settled().await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "the interruption before it does not count");
        h.update(|t| t.set_status(TaskState::Working, None));
        h.update(|t| t.set_status(TaskState::InputRequired, None));
        tokio::time::timeout(std::time::Duration::from_secs(10), waiting).await.unwrap().unwrap();
        let mut late = h.subscribe_after(h.lock().log.last_seq());
        finish(&h);
        tokio::time::timeout(std::time::Duration::from_secs(10), late.settled()).await.unwrap();
    }

    #[test]
    fn a_task_is_seen_only_under_its_tenant_and_by_its_owner() {
        let s = store(4);
        let h = s.create("t1", "caller-1", "ctx".into(), message(), scenario()).unwrap();
        assert!(s.get("t1", "caller-1", &h.id).is_some());
        assert!(s.get("t1", "caller-2", &h.id).is_none());
        assert!(s.get("t2", "caller-1", &h.id).is_none());
        assert!(s.get_any_owner("t1", &h.id).is_some());
        assert_eq!(s.all("t1", Some("caller-1")).len(), 1);
        assert!(s.all("t1", Some("caller-2")).is_empty());
        assert!(s.all("", None).is_empty());
    }
}
