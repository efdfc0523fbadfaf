//! The task engine: the store, each task's state and event log, and the scenario runner.

pub mod log;
pub mod runner;
pub mod store;
pub mod view;

pub use log::{EventLog, Lagged, LoggedEvent};
pub use store::{StateWatch, StoreFull, StreamSlot, Subscription, TaskHandle, TaskInner, TaskStore};
