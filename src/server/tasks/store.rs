//! The in-memory task store: tasks keyed by tenant and id, each with its state, event log, push
//! configs and the cancel signal of its running script.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

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
    last_touched: Mutex<Instant>,
    open_streams: AtomicUsize,
}

impl TaskHandle {
    /// Locks the task for reading. Never call `update` while holding this.
    pub fn lock(&self) -> MutexGuard<'_, TaskInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` under the lock, then wakes every subscriber (after unlocking, so that a woken
    /// subscriber can take the lock at once).
    pub fn update<R>(&self, f: impl FnOnce(&mut TaskInner) -> R) -> R {
        let r = {
            let mut g = self.lock();
            f(&mut g)
        };
        *self.last_touched.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
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

    fn touched(&self) -> Instant {
        *self.last_touched.lock().unwrap_or_else(|p| p.into_inner())
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

/// All tasks, bounded; finished tasks are evicted oldest-first when room is needed.
#[derive(Debug)]
pub struct TaskStore {
    tasks: Mutex<HashMap<(String, String), Arc<TaskHandle>>>,
    max_tasks: usize,
    max_events: usize,
    max_history: usize,
}

impl TaskStore {
    pub fn new(max_tasks: usize, max_events: usize, max_history: usize) -> Self {
        TaskStore {
            tasks: Mutex::new(HashMap::new()),
            max_tasks: max_tasks.max(1),
            max_events,
            max_history: max_history.max(1),
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<(String, String), Arc<TaskHandle>>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
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
            last_touched: Mutex::new(Instant::now()),
            open_streams: AtomicUsize::new(0),
        });
        let mut map = self.map();
        if map.len() >= self.max_tasks {
            let victim = map
                .iter()
                .filter(|(_, h)| h.lock().state().is_terminal() && h.subscriber_count() == 0)
                .min_by_key(|(_, h)| h.touched())
                .map(|(k, _)| k.clone());
            match victim {
                Some(k) => {
                    map.remove(&k);
                }
                None => return Err(StoreFull { limit: self.max_tasks }),
            }
        }
        map.insert((tenant.to_owned(), id), handle.clone());
        Ok(handle)
    }

    /// The task with this id, if the tenant and the caller (`owner`) may see it.
    pub fn get(&self, tenant: &str, owner: &str, id: &str) -> Option<Arc<TaskHandle>> {
        self.get_any_owner(tenant, id).filter(|h| h.owner == owner)
    }

    /// The task with this id under `tenant`, whichever caller created it.
    pub fn get_any_owner(&self, tenant: &str, id: &str) -> Option<Arc<TaskHandle>> {
        self.map().get(&(tenant.to_owned(), id.to_owned())).cloned()
    }

    /// The tasks the caller (`owner`) sees under `tenant`; every caller's with `None`.
    pub fn all(&self, tenant: &str, owner: Option<&str>) -> Vec<Arc<TaskHandle>> {
        self.map().values().filter(|h| h.tenant == tenant && owner.is_none_or(|o| h.owner == o)).cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
