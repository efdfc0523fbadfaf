//! Verdicts and reports: the event model every sink consumes, and the writers (JSON, JUnit, terminal,
//! ACTS subset).

pub mod acts;
pub mod json;
pub mod junit;
pub mod model;
pub mod terminal;

pub use json::{Report, RunInfo, SuiteSource, TargetInfo, build_report, write_json};
pub use model::*;

/// A consumer of run events (DESIGN "One event model, many sinks").
///
/// Sinks never fail the run: a sink that can hit I/O errors keeps them and reports them when asked.
pub trait Sink {
    /// Receives one event, in run order.
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
