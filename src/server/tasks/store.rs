//! The in-memory task store: tasks keyed by tenant and id, each with its state, event log, push
//! configs and the cancel signal of its running script.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::watch;

use super::log::{EventLog, Lagged, LoggedEvent};
use crate::protocol::{
    Message, StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use crate::server::scenario::Scenario;

/// The mutable part of a task, guarded by its handle's lock.
#[derive(Debug)]
pub struct TaskInner {
    /// The task as it stands (full history and artifacts).
    pub task: Task,
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
}

impl TaskInner {
    /// Sets a new status, records its message in history and logs the update event.
    pub fn set_status(&mut self, state: TaskState, message: Option<Message>) -> u64 {
        let status = TaskStatus { state, message: message.clone(), timestamp: Some(Timestamp::now()) };
        self.task.status = status.clone();
        if let Some(m) = message {
            self.push_history(m);
        }
        let ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.task.id.clone(),
            context_id: self.task.context_id.clone(),
            status,
            metadata: None,
        });
        self.log.push(ev, state.is_terminal() || state.is_interrupted())
    }

    /// Appends to history, dropping the oldest message past the limit.
    pub fn push_history(&mut self, m: Message) {
        if self.task.history.len() >= self.max_history {
            self.task.history.remove(0);
        }
        self.task.history.push(m);
    }

    pub fn state(&self) -> TaskState {
        self.task.status.state
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
    changed: watch::Sender<u64>,
    stop: watch::Sender<u64>,
    open_streams: AtomicUsize,
    /// Told when the task finishes, so that it can be evicted; weak, as the store owns the task.
    store: Weak<Mutex<Index>>,
}

impl TaskHandle {
    /// Locks the task for reading. Never call `update` while holding this.
    pub fn lock(&self) -> MutexGuard<'_, TaskInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` under the lock, then wakes every subscriber (after unlocking, so that a woken
    /// subscriber can take the lock at once).
    pub fn update<R>(&self, f: impl FnOnce(&mut TaskInner) -> R) -> R {
        let (r, finished) = {
            let mut g = self.lock();
            let was_terminal = g.state().is_terminal();
            let r = f(&mut g);
            (r, !was_terminal && g.state().is_terminal())
        };
        // Outside the task's lock: the store's lock is never taken while a task's is held.
        if finished && let Some(index) = self.store.upgrade() {
            lock_index(&index).finished(&self.id);
        }
        self.changed.send_modify(|v| *v += 1);
        r
    }

    /// Tells the running script (if any) to stop at its next step or wait.
    pub fn signal_stop(&self) {
        self.stop.send_modify(|v| *v += 1);
    }

    pub fn stop_receiver(&self) -> watch::Receiver<u64> {
        self.stop.subscribe()
    }

    /// Follows the task's events strictly after `after` (`None`: from the first event).
    pub fn subscribe_after(self: &Arc<Self>, after: Option<u64>) -> Subscription {
        Subscription { handle: self.clone(), cursor: after, rx: self.changed.subscribe() }
    }

    /// Number of live subscriptions (streams, blocking waits and push workers).
    pub fn subscriber_count(&self) -> usize {
        self.changed.receiver_count()
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
    rx: watch::Receiver<u64>,
}

impl Subscription {
    /// The next batch of events, waiting for at least one. `Err` when events were dropped from the
    /// log before this subscriber read them.
    pub async fn next_batch(&mut self) -> Result<Vec<LoggedEvent>, Lagged> {
        loop {
            self.rx.borrow_and_update();
            let batch = {
                let g = self.handle.lock();
                g.log.after(self.cursor)?
            };
            if let Some(last) = batch.last() {
                self.cursor = Some(last.seq);
                return Ok(batch);
            }
            if self.rx.changed().await.is_err() {
                // The handle is alive as long as we hold it, so the sender cannot be gone; be safe.
                return Ok(Vec::new());
            }
        }
    }

    pub fn handle(&self) -> &Arc<TaskHandle> {
        &self.handle
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
    fn finished(&mut self, id: &str) {
        if let Some(h) = self.tasks.get(id) {
            self.finished.push_back(h.clone());
        }
    }

    /// Removes the task that finished longest ago and has no subscriber. A subscriber of a finished
    /// task is passing (a stream sending its last event, a blocking call answering, a push worker
    /// delivering), so the tasks passed over number at most the live subscriptions, whatever the
    /// size of the store. False when every stored task is unfinished or followed.
    fn evict_one(&mut self) -> bool {
        while let Some(i) = self.finished.iter().position(|h| h.subscriber_count() == 0) {
            let h = self.finished.remove(i).expect("the position found is in range");
            // Only the entry for this very task frees a slot (defensive: a task finishes once).
            if self.tasks.get(&h.id).is_some_and(|stored| Arc::ptr_eq(stored, &h)) {
                self.tasks.remove(&h.id);
                return true;
            }
        }
        false
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
}

impl TaskStore {
    pub fn new(max_tasks: usize, max_events: usize, max_history: usize) -> Self {
        TaskStore {
            index: Arc::new(Mutex::new(Index::default())),
            max_tasks: max_tasks.max(1),
            max_events,
            max_history: max_history.max(1),
        }
    }

    fn index(&self) -> MutexGuard<'_, Index> {
        lock_index(&self.index)
    }

    /// Stores a new SUBMITTED task holding `first` in its history, and logs the Task event (seq 0).
    pub fn create(
        &self,
        tenant: &str,
        owner: &str,
        context_id: String,
        first: Message,
        scenario: Arc<Scenario>,
    ) -> Result<Arc<TaskHandle>, StoreFull> {
        let id = uuid::Uuid::new_v4().to_string();
        let mut first = first;
        first.task_id = id.clone();
        first.context_id = context_id.clone();
        let task = Task {
            id: id.clone(),
            context_id,
            status: TaskStatus { state: TaskState::Submitted, message: None, timestamp: Some(Timestamp::now()) },
            artifacts: Vec::new(),
            history: vec![first],
            metadata: None,
        };
        let mut log = EventLog::new(self.max_events);
        log.push(StreamResponse::Task(task.clone()), false);
        let handle = Arc::new(TaskHandle {
            tenant: tenant.to_owned(),
            owner: owner.to_owned(),
            id: id.clone(),
            inner: Mutex::new(TaskInner {
                task,
                log,
                push_configs: BTreeMap::new(),
                scenario,
                run_generation: 0,
                push_worker_running: false,
                max_history: self.max_history,
            }),
            changed: watch::Sender::new(0),
            stop: watch::Sender::new(0),
            open_streams: AtomicUsize::new(0),
            store: Arc::downgrade(&self.index),
        });
        let mut index = self.index();
        while index.tasks.len() >= self.max_tasks {
            if !index.evict_one() {
                return Err(StoreFull { limit: self.max_tasks });
            }
        }
        index.tasks.insert(id, handle.clone());
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
        let sub = a.subscribe_after(None);
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
    fn a_full_store_of_followed_tasks_refuses_new_ones() {
        let s = store(1);
        let a = create(&s).unwrap();
        finish(&a);
        let _sub = a.subscribe_after(None);
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
