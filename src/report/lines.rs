//! `--json-lines`: one compact JSON object per run event, flushed at once so that a consumer can
//! follow the run as it happens.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::events::{RunEvent, Sink};

/// One event as the JSON object [`JsonLines`] writes.
pub fn event_to_json(ev: &RunEvent) -> Value {
    match ev {
        RunEvent::RunStarted { info, planned } => json!({
            "event": "run_started",
            "run_id": info.run_id,
            "target": info.target.url,
            "planned": planned.len(),
            "checks": planned,
        }),
        RunEvent::CheckStarted { id } => json!({"event": "check_started", "id": id}),
        RunEvent::CheckFinished(result) => json!({"event": "check_finished", "result": result}),
        RunEvent::BaselineApplied(baseline) => json!({"event": "baseline_applied", "baseline": baseline}),
        RunEvent::RunFinished { verdict, reasons, duration_ms, finished_at } => json!({
            "event": "run_finished",
            "verdict": verdict,
            "reasons": reasons,
            "exit_code": verdict.exit_code(),
            "duration_ms": duration_ms,
            "finished_at": finished_at,
        }),
    }
}

#[derive(Debug)]
pub struct JsonLines<W: Write> {
    out: W,
    // `Sink::event` cannot return errors (sinks must not stop the run); the first one is kept here.
    error: Option<io::Error>,
}

impl<W: Write> JsonLines<W> {
    pub fn new(out: W) -> Self {
        JsonLines { out, error: None }
    }

    /// The first write error, if any.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// Returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

impl<W: Write> Sink for JsonLines<W> {
    fn event(&mut self, ev: &RunEvent) {
        if self.error.is_some() {
            return;
        }
        let mut line = event_to_json(ev).to_string();
        line.push('\n');
        if let Err(e) = self.out.write_all(line.as_bytes()).and_then(|()| self.out.flush()) {
            self.error = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{CheckMeta, CheckResult, Level, Outcome, SpecRef, Verdict};

    #[test]
    fn one_object_per_event() {
        let meta = CheckMeta {
            id: "a".into(),
            title: "a".into(),
            suite: "s".into(),
            profile: "core".into(),
            level: Level::Must,
            spec: SpecRef::default(),
            scored: true,
        };
        let mut sink = JsonLines::new(Vec::new());
        sink.event(&RunEvent::RunStarted { info: Box::default(), planned: vec!["a".into()] });
        sink.event(&RunEvent::CheckStarted { id: "a".into() });
        sink.event(&RunEvent::CheckFinished(Box::new(CheckResult::new(&meta, Outcome::Pass))));
        sink.event(&RunEvent::RunFinished {
            verdict: Verdict::Conformant,
            reasons: vec![],
            duration_ms: 3,
            finished_at: "t".into(),
        });
        let out = String::from_utf8(sink.finish().unwrap()).unwrap();
        let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["checks"], json!(["a"]));
        assert_eq!(lines[1]["id"], "a");
        assert_eq!(lines[2]["result"]["outcome"], "pass");
        assert_eq!(lines[3]["exit_code"], 0);
    }
}
