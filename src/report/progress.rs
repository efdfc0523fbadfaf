//! A progress bar for runs that take more than a second (indicatif), as a sink of the run events.
//!
//! It draws on stderr only when the caller enabled it (stderr is a terminal and `--quiet` is off),
//! appears once the run has lasted [`DELAY`], and clears itself before the end-of-run view prints.

use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::events::{RunEvent, Sink};
use super::model::Outcome;

/// How long a run goes before the bar appears: short runs stay quiet.
pub const DELAY: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    enabled: bool,
    shown: bool,
    started: Option<Instant>,
    failed: u64,
}

impl Progress {
    /// `enabled`: whether the bar may draw at all (on a terminal, not `--quiet`).
    pub fn new(enabled: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} checks {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        Progress { bar, enabled, shown: false, started: None, failed: 0 }
    }

    /// Checks finished so far.
    pub fn position(&self) -> u64 {
        self.bar.position()
    }

    /// Whether the bar has been drawn.
    pub fn shown(&self) -> bool {
        self.shown
    }

    fn maybe_show(&mut self) {
        if self.enabled && !self.shown && self.started.is_some_and(|t| t.elapsed() >= DELAY) {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(200));
            self.shown = true;
        }
    }
}

impl Sink for Progress {
    fn event(&mut self, ev: &RunEvent) {
        match ev {
            RunEvent::RunStarted { planned, .. } => {
                self.started = Some(Instant::now());
                self.bar.set_length(planned.len() as u64);
            }
            RunEvent::CheckStarted { id } => {
                self.maybe_show();
                if self.failed == 0 {
                    self.bar.set_message(id.clone());
                }
            }
            RunEvent::CheckFinished(r) => {
                self.bar.inc(1);
                if r.outcome == Outcome::Fail {
                    self.failed += 1;
                    self.bar.set_message(format!("{} failed (latest {})", self.failed, r.id));
                }
                self.maybe_show();
            }
            RunEvent::BaselineApplied(_) => {}
            RunEvent::RunFinished { .. } => self.bar.finish_and_clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CheckMeta, CheckResult, Level, SpecRef, Verdict};

    #[test]
    fn counts_checks_and_stays_hidden_when_disabled() {
        let meta = CheckMeta {
            id: "A".into(),
            title: "A".into(),
            suite: "s".into(),
            profile: "core".into(),
            level: Level::Must,
            spec: SpecRef::default(),
            scored: true,
        };
        let mut p = Progress::new(false);
        p.event(&RunEvent::RunStarted { info: Box::default(), planned: vec!["A".into(), "B".into()] });
        std::thread::sleep(DELAY + Duration::from_millis(50));
        p.event(&RunEvent::CheckStarted { id: "A".into() });
        p.event(&RunEvent::CheckFinished(Box::new(CheckResult::new(&meta, Outcome::Fail))));
        assert_eq!(p.position(), 1);
        assert!(!p.shown(), "a disabled bar never draws");
        p.event(&RunEvent::RunFinished {
            verdict: Verdict::NonConformant,
            reasons: vec![],
            duration_ms: 1,
            finished_at: String::new(),
        });
    }
}
