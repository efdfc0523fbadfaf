//! The run's event stream (DESIGN "One event model, many sinks"): the engine emits these, and the
//! JSON report, JUnit, the terminal view and `--json-lines` are each a consumer of them.

use super::model::{BaselineReport, CheckResult, RunInfo, Verdict};

/// In order: one `RunStarted`, then per check a `CheckStarted` and a `CheckFinished` (checks
/// overlap, so these interleave), then, when a baseline was given, one `BaselineApplied`, then one
/// `RunFinished`.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    RunStarted {
        info: Box<RunInfo>,
        /// Ids of every check that will be reported, in plan order: the order of the report.
        planned: Vec<String>,
    },
    CheckStarted {
        id: String,
    },
    CheckFinished(Box<CheckResult>),
    /// What a baseline made of the finished checks; the `RunFinished` that follows already
    /// carries the verdict with the baseline applied.
    BaselineApplied(Box<BaselineReport>),
    RunFinished {
        verdict: Verdict,
        /// Why: the failed or undecided checks, or what kept the run from checking anything.
        reasons: Vec<String>,
        duration_ms: u64,
        /// RFC 3339 UTC, whole seconds: every rendering of one run carries the same time.
        finished_at: String,
    },
}

/// A consumer of run events.
///
/// Sinks never fail the run: a sink that can hit I/O errors keeps them and reports them when asked.
pub trait Sink {
    fn event(&mut self, ev: &RunEvent);
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn event(&mut self, ev: &RunEvent) {
        (**self).event(ev);
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn event(&mut self, ev: &RunEvent) {
        (**self).event(ev);
    }
}

/// Fans every event out to several sinks, in order (e.g. `Vec<&mut dyn Sink>` or `Vec<Box<dyn Sink>>`).
impl<S: Sink> Sink for Vec<S> {
    fn event(&mut self, ev: &RunEvent) {
        for sink in self.iter_mut() {
            sink.event(ev);
        }
    }
}

/// A sink that ignores everything (a run nobody watches but its caller's collector).
impl Sink for () {
    fn event(&mut self, _: &RunEvent) {}
}
