//! Differential diagnosis of the neutral SendMessage. When the message CORE-SEND-001 sends gets no
//! JSON-RPC success with a task or a message, nearly every other check would wait on that one
//! failure without the report saying why. Before they run, the kit sends the same request varied
//! one dimension at a time (the table [`VARIANTS`]), then all 0.3 dimensions together: a handful of
//! requests under one bound. What the agent accepts and refuses becomes one finding
//! (KIT-DIAG-001), and the variant that works becomes the run's workaround (`workaround.rs`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::context::{Ctx, truncate};
use super::evidence::ToEvidence as _;
use super::request::normalize_params;
use super::workaround::{self, Spelling, Version, Workaround, bare_kind};
use crate::client::http::HttpExchange;
use crate::client::rpc::rpc_request;
use crate::report::{CheckMeta, CheckResult, Evidence, Failure, Outcome, SkipReason};

/// The check the diagnosis waits on when the interface cannot be used.
const INTERFACE: &str = "KIT-IFACE-001";

/// The check whose neutral SendMessage the diagnosis repeats: graded on the true 1.0 request, never
/// under the workaround.
pub const ANCHOR: &str = crate::report::causes::DIAGNOSED;

/// Bound on the whole diagnosis.
pub const BOUND: Duration = Duration::from_secs(30);

/// One way of varying the neutral request.
pub struct Variant {
    /// What the variant sends, in words ("role user").
    pub label: &'static str,
    /// What the 1.0 request sends instead ("role ROLE_USER").
    pub instead: &'static str,
    pub spelling: Spelling,
    /// The message with only its REQUIRED members (messageId, role, parts with their text) and no
    /// other param: diagnostic only, since no check can be graded without what it is about.
    pub minimal: bool,
    /// Why the agent fails the 1.0 request, when this variant alone works.
    pub cause: &'static str,
}

// The neutral request and the variants: at most eight requests.
const _: () = assert!(VARIANTS.len() < 8);

const ALL_LEGACY: Spelling =
    Spelling { roles: true, states: false, kinds: true, method: true, version: Version::Legacy };

/// The variants, tried in this order: one dimension each, then every 0.3 dimension together. The
/// first that works is the workaround.
pub const VARIANTS: &[Variant] = &[
    Variant {
        label: "role user",
        instead: "role ROLE_USER",
        spelling: Spelling { roles: true, ..Spelling::NONE },
        minimal: false,
        cause: "the agent expects the 0.3 enum spelling (§5.5 requires ROLE_USER)",
    },
    Variant {
        label: "the 0.3 kind discriminators",
        instead: "a message and parts without kind",
        spelling: Spelling { kinds: true, ..Spelling::NONE },
        minimal: false,
        cause: "the agent expects the 0.3 kind discriminators (Appendix A.2.1: 1.0 has no kind)",
    },
    Variant {
        label: "the 0.3 method message/send",
        instead: "method SendMessage",
        spelling: Spelling { method: true, ..Spelling::NONE },
        minimal: false,
        cause: "the agent serves only the 0.3 method name (§5.3 and §9.1 name it SendMessage)",
    },
    Variant {
        label: "no A2A-Version header",
        instead: "A2A-Version 1.0",
        spelling: Spelling { version: Version::Omitted, ..Spelling::NONE },
        minimal: false,
        cause: "the agent refuses the version the kit names (§3.6.2: agents MUST process requests using the semantics \
                of the requested A2A-Version)",
    },
    Variant {
        label: "A2A-Version 0.3",
        instead: "A2A-Version 1.0",
        spelling: Spelling { version: Version::Legacy, ..Spelling::NONE },
        minimal: false,
        cause: "the agent serves A2A 0.3 only (§3.6.2: an unsupported version is a VersionNotSupportedError)",
    },
    Variant {
        label: "only the REQUIRED fields",
        instead: "the kit's message",
        spelling: Spelling::NONE,
        minimal: true,
        cause: "the agent refuses a member the kit sends beyond the REQUIRED ones",
    },
    Variant {
        label: "every 0.3 spelling together",
        instead: "the 1.0 request",
        spelling: ALL_LEGACY,
        minimal: false,
        cause: "the agent expects a 0.3 request",
    },
];

/// How the agent answered one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A SendMessageResponse holding a task or a message (`"task"` / `"message"`).
    Wrapped(&'static str),
    /// A Task or Message as the result itself.
    Bare(&'static str),
    /// Anything else, in words ("HTTP 500 (text/plain)").
    Refused(String),
}

impl Answer {
    fn works(&self) -> bool {
        !matches!(self, Answer::Refused(_))
    }

    fn words(&self) -> String {
        match self {
            Answer::Wrapped(k) => format!("a SendMessageResponse with a {k}"),
            Answer::Bare(k) => format!("a bare {}", if *k == "task" { "Task" } else { "Message" }),
            Answer::Refused(how) => how.clone(),
        }
    }
}

/// One request of the diagnosis and its answer.
#[derive(Debug, Clone)]
pub struct Attempt {
    /// Index into [`VARIANTS`]; `None` for the neutral request.
    pub variant: Option<usize>,
    pub answer: Answer,
    /// The answer's result when it worked (for the states it shows).
    result: Option<Value>,
    pub evidence: Evidence,
}

/// What the diagnosis found.
#[derive(Debug, Clone)]
pub struct Diagnosis {
    /// The neutral request first, then each variant sent.
    pub attempts: Vec<Attempt>,
    /// Variants not sent: identical to the neutral request, or past the bound.
    pub not_sent: Vec<(usize, &'static str)>,
    /// The first variant that worked (not the minimal one): the workaround's change.
    pub chosen: Option<usize>,
    /// What the run changes in the other checks' requests: `None` when no variant worked.
    pub workaround: Option<Workaround>,
    pub elapsed: Duration,
}

impl Diagnosis {
    /// The neutral request's answer.
    pub fn neutral(&self) -> &Answer {
        &self.attempts[0].answer
    }

    /// True when the neutral SendMessage succeeded and nothing was diagnosed.
    pub fn healthy(&self) -> bool {
        matches!(self.neutral(), Answer::Wrapped(_))
    }

    /// The finding in plain words: what the agent refuses, what it accepts, and what follows.
    pub fn message(&self, applied: bool) -> String {
        let neutral = self.neutral();
        if let Answer::Bare(k) = neutral {
            return format!(
                "SendMessage accepts the 1.0 request but answers {}, not a SendMessageResponse holding it \
                 ({{\"{k}\": …}}); the request is not at fault, so no variant was tried and nothing is worked around",
                neutral.words()
            );
        }
        let sent: Vec<&Attempt> = self.attempts.iter().filter(|a| a.variant.is_some()).collect();
        let Some(v) = self.chosen.map(|i| &VARIANTS[i]) else {
            if sent.iter().all(|a| a.answer == *neutral) && !sent.is_empty() {
                return format!(
                    "SendMessage answers {} to the 1.0 request, and every variant was refused the same way: {}; the \
                     0.3 spellings the kit tried are not the cause, so nothing is worked around",
                    neutral.words(),
                    neutral.words()
                );
            }
            let each: Vec<String> =
                sent.iter().map(|a| format!("{}: {}", label(a), a.answer.words())).collect::<Vec<_>>();
            return format!(
                "SendMessage answers {} to the 1.0 request and no variant succeeded ({}); nothing is worked around",
                neutral.words(),
                each.join("; ")
            );
        };
        let winner = self.attempts.iter().find(|a| a.variant == self.chosen).map(|a| &a.answer);
        let mut s = format!(
            "SendMessage answers {} to {} and succeeds with {}: {}",
            neutral.words(),
            v.instead,
            v.label,
            v.cause
        );
        if let Some(Answer::Bare(k)) = winner {
            let shape = if *k == "task" { "Task" } else { "Message" };
            s.push_str(&format!(
                "; it answers with a bare {shape} where a SendMessageResponse ({{\"{k}\": …}}) is due"
            ));
        }
        s.push('.');
        let others: Vec<&&Attempt> = sent.iter().filter(|a| a.variant != self.chosen).collect();
        let accepted: Vec<String> = others.iter().filter(|a| a.answer.works()).map(|a| label(a).to_owned()).collect();
        let same: Vec<String> = others.iter().filter(|a| a.answer == *neutral).map(|a| label(a).to_owned()).collect();
        let otherwise: Vec<String> = others
            .iter()
            .filter(|a| !a.answer.works() && a.answer != *neutral)
            .map(|a| format!("{} ({})", label(a), a.answer.words()))
            .collect();
        if !accepted.is_empty() {
            s.push_str(&format!(" Also accepted: {}.", accepted.join(", ")));
        }
        if !same.is_empty() {
            s.push_str(&format!(" Refused like the 1.0 request: {}.", same.join(", ")));
        }
        if !otherwise.is_empty() {
            s.push_str(&format!(" Refused otherwise: {}.", otherwise.join(", ")));
        }
        if applied {
            s.push_str(&format!(
                " The other checks are graded with that change (workaround: {}); {ANCHOR} is graded on the 1.0 request.",
                self.workaround.as_ref().map(|w| w.notes().join("; ")).unwrap_or_default()
            ));
        } else {
            s.push_str(&format!(" --no-workaround: the checks that need a task wait on {ANCHOR}."));
        }
        s
    }

    /// One line per request: what it varied and how it was answered.
    pub fn lines(&self) -> String {
        let mut out: Vec<String> =
            self.attempts.iter().map(|a| format!("{}: {}", label(a), a.answer.words())).collect();
        out.extend(self.not_sent.iter().map(|(i, why)| format!("{}: not sent ({why})", VARIANTS[*i].label)));
        out.join("\n")
    }
}

/// KIT-DIAG-001's result: a pass saying the neutral SendMessage succeeded, or the finding (an info
/// result, never scored: the failure it explains is CORE-SEND-001's) with every request as
/// evidence.
pub fn verdict(ctx: &Ctx, meta: &CheckMeta) -> CheckResult {
    let Some(d) = &ctx.diagnosis else {
        return match &ctx.interface_problem {
            Some(_) => CheckResult {
                depends_on: Some(INTERFACE.into()),
                ..CheckResult::skipped(
                    meta,
                    SkipReason::DependsOnFailed,
                    format!("{INTERFACE}: the interface cannot be used"),
                )
            },
            None => CheckResult::skipped(meta, SkipReason::Filtered, "the diagnosis did not run in this run"),
        };
    };
    let took = format!("{} request(s) in {} ms", d.attempts.len(), d.elapsed.as_millis());
    let evidence = d.attempts.iter().map(|a| a.evidence.clone()).collect();
    let duration_ms = d.elapsed.as_millis() as u64;
    if d.healthy() {
        return CheckResult {
            measurement: Some(format!("the neutral SendMessage got {}: no diagnosis was needed", d.neutral().words())),
            evidence,
            duration_ms,
            ..CheckResult::new(meta, Outcome::Pass)
        };
    }
    let failure = Failure {
        message: d.message(ctx.workaround.is_some()),
        step_id: None,
        pointer: None,
        expected: Some("a JSON-RPC success holding a SendMessageResponse with a task or a message".into()),
        actual: Some(ctx.redactor.redact(&d.lines())),
    };
    CheckResult { measurement: Some(took), evidence, duration_ms, ..CheckResult::violated(meta, ctx.strict, failure) }
}

fn label(a: &Attempt) -> &'static str {
    a.variant.map_or("the 1.0 request", |i| VARIANTS[i].label)
}

/// The neutral SendMessage's params, as CORE-SEND-001 sends them: a user message with one text part
/// (`--prompt`) and a messageId, with the interface's tenant.
fn neutral_params(ctx: &Ctx) -> Value {
    let params = json!({"message": {"role": "ROLE_USER", "parts": [{"text": ctx.prompt}]}});
    normalize_params("send_message", params, &ctx.tenant, &ctx.behaviors)
}

/// `params` with only the REQUIRED members of the message and no other param.
fn minimal(params: &Value) -> Value {
    let m = &params["message"];
    let parts: Vec<Value> = m["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p.get("text").map_or_else(|| p.clone(), |t| json!({"text": t})))
        .collect();
    json!({"message": {"messageId": m["messageId"], "role": m["role"], "parts": parts}})
}

/// Runs the diagnosis, within `bound` (at most [`BOUND`]): the neutral request, and when that
/// fails, the variants.
/// Each request waits at most `per_request` (the run's check timeout).
pub async fn run(ctx: &Ctx, bound: Duration, per_request: Duration) -> Diagnosis {
    let started = Instant::now();
    let deadline = started + bound.min(BOUND);
    let neutral = neutral_params(ctx);
    let first = attempt(ctx, None, neutral.clone(), deadline, per_request).await;
    let mut d = Diagnosis {
        attempts: vec![first],
        not_sent: Vec::new(),
        chosen: None,
        workaround: None,
        elapsed: Duration::ZERO,
    };
    if d.neutral().works() {
        // Healthy, or a bare result to a request the agent accepts: no variant can say more.
        d.elapsed = started.elapsed();
        return d;
    }
    if d.attempts[0].evidence.status.is_none() {
        // No answer at all (silence, a reset): no variant of the request's content can say why, and
        // each would wait out the same silence.
        d.not_sent.extend((0..VARIANTS.len()).map(|i| (i, "the agent gave the 1.0 request no answer at all")));
        d.elapsed = started.elapsed();
        return d;
    }
    for (i, v) in VARIANTS.iter().enumerate() {
        // Each variant is a message of its own: an agent may refuse a messageId it has seen.
        let mut params = neutral.clone();
        params["message"]["messageId"] = json!(uuid::Uuid::new_v4().to_string());
        if v.minimal {
            let trimmed = minimal(&params);
            if trimmed == params {
                d.not_sent.push((i, "the 1.0 request has only the REQUIRED fields already"));
                continue;
            }
            params = trimmed;
        }
        if Instant::now() >= deadline {
            d.not_sent.push((i, "past the diagnosis bound"));
            continue;
        }
        if d.attempts.last().is_some_and(|a| a.evidence.status.is_none()) {
            d.not_sent.push((i, "the agent stopped answering"));
            continue;
        }
        d.attempts.push(attempt(ctx, Some(i), params, deadline, per_request).await);
    }
    // The minimal variant only tells; leaving out what the checks are about is no workaround.
    if let Some(a) = d.attempts.iter().find(|a| a.answer.works() && a.variant.is_some_and(|i| !VARIANTS[i].minimal)) {
        let mut spelling = a.variant.map_or(Spelling::NONE, |i| VARIANTS[i].spelling);
        // No SendMessage variant can vary a task state; the agent's own answer can show them.
        spelling.states = spelling.roles && a.result.as_ref().is_some_and(workaround::shows_legacy_states);
        d.workaround = Some(Workaround { spelling, bare: matches!(a.answer, Answer::Bare(_)) });
        d.chosen = a.variant;
    }
    d.elapsed = started.elapsed();
    d
}

async fn attempt(
    ctx: &Ctx,
    variant: Option<usize>,
    params: Value,
    deadline: Instant,
    per_request: Duration,
) -> Attempt {
    let spelling = variant.map_or(Spelling::NONE, |i| VARIANTS[i].spelling);
    let id = json!(format!("kit-diag-{}", variant.map_or(0, |i| i + 1)));
    let mut req = rpc_request(&ctx.rpc_url, &id, "SendMessage", Some(params));
    if !spelling.is_none() {
        // The same code that rewrites the other checks' requests under the workaround.
        Workaround { spelling, bare: false }.rewrite(&mut req, &ctx.rpc_url, false);
    }
    let step = format!("diagnosis {}", variant.map_or("1.0 request", |i| VARIANTS[i].label));
    let left = deadline.saturating_duration_since(Instant::now()).min(per_request);
    let sent = req.clone();
    let outcome = match tokio::time::timeout(left, ctx.exchange(&format!("KIT-DIAG-001 / {step}"), req)).await {
        Ok(x) => x,
        Err(_) => Err(format!("no answer within {} ms", left.as_millis())),
    };
    match outcome {
        Ok(x) => {
            let (answer, result) = classify(&x);
            Attempt { variant, answer, result, evidence: x.to_evidence(Some(&step), &ctx.redactor) }
        }
        Err(why) => {
            let why = ctx.redactor.redact(&why);
            let evidence = Evidence {
                step_id: Some(step),
                method: sent.method.clone(),
                url: sent.url.clone(),
                request_body: sent.body.as_deref().map(|b| ctx.redactor.redact(&String::from_utf8_lossy(b))),
                ..Evidence::default()
            };
            Attempt { variant, answer: Answer::Refused(format!("no answer ({why})")), result: None, evidence }
        }
    }
}

/// What an answer is, for the diagnosis: a SendMessageResponse, a bare Task or Message, or a
/// refusal told the way a person would ("HTTP 500 (text/plain)", "JSON-RPC error -32602 ...").
fn classify(x: &HttpExchange) -> (Answer, Option<Value>) {
    let ct = x.content_type().unwrap_or("no content type");
    let ct = ct.split(';').next().unwrap_or(ct).trim().to_owned();
    let Ok(v) = serde_json::from_slice::<Value>(&x.body) else {
        return (Answer::Refused(format!("HTTP {} ({ct})", x.status)), None);
    };
    if let Some(err) = v.get("error") {
        let code = err.get("code").map(Value::to_string).unwrap_or_else(|| "without a code".into());
        let msg =
            err.get("message").and_then(Value::as_str).map(|m| format!(" ({})", truncate(m, 80))).unwrap_or_default();
        return (Answer::Refused(format!("JSON-RPC error {code}{msg}")), None);
    }
    let Some(result) = v.get("result") else {
        return (Answer::Refused(format!("HTTP {} with JSON that is no JSON-RPC response", x.status)), None);
    };
    for k in ["task", "message"] {
        if result.get(k).is_some_and(Value::is_object) {
            return (Answer::Wrapped(k), Some(result.clone()));
        }
    }
    match bare_kind(result) {
        Some(k) => (Answer::Bare(k), Some(result.clone())),
        None => (Answer::Refused("a result that is neither a task nor a message".into()), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(variant: Option<usize>, answer: Answer) -> Attempt {
        Attempt { variant, answer, result: None, evidence: Evidence::default() }
    }

    fn refused(how: &str) -> Answer {
        Answer::Refused(how.into())
    }

    #[test]
    fn the_variant_table_varies_one_dimension_then_all() {
        let one =
            |s: &Spelling| [s.roles, s.kinds, s.method, s.version != Version::Current].iter().filter(|x| **x).count();
        let (last, singles) = VARIANTS.split_last().unwrap();
        assert!(singles.iter().all(|v| one(&v.spelling) + usize::from(v.minimal) == 1));
        assert_eq!(last.spelling, ALL_LEGACY);
    }

    #[test]
    fn the_finding_names_what_works_and_what_does_not() {
        let crash = refused("HTTP 500 (text/plain)");
        let d = Diagnosis {
            attempts: vec![
                attempt(None, crash.clone()),
                attempt(Some(0), Answer::Bare("task")),
                attempt(Some(1), crash.clone()),
                attempt(Some(2), refused("JSON-RPC error -32601 (\"Method not found\")")),
                attempt(Some(6), Answer::Bare("task")),
            ],
            not_sent: vec![(5, "the 1.0 request has only the REQUIRED fields already")],
            chosen: Some(0),
            workaround: Some(Workaround { spelling: VARIANTS[0].spelling, bare: true }),
            elapsed: Duration::ZERO,
        };
        let m = d.message(true);
        assert!(
            m.starts_with(
                "SendMessage answers HTTP 500 (text/plain) to role ROLE_USER and succeeds with role user: the agent \
                 expects the 0.3 enum spelling (§5.5 requires ROLE_USER); it answers with a bare Task"
            ),
            "{m}"
        );
        assert!(m.contains("Also accepted: every 0.3 spelling together."), "{m}");
        assert!(m.contains("Refused like the 1.0 request: the 0.3 kind discriminators."), "{m}");
        assert!(m.contains("Refused otherwise: the 0.3 method message/send (JSON-RPC error -32601"), "{m}");
        assert!(m.contains("workaround: role sent in its 0.3 spelling"), "{m}");
        assert!(d.message(false).contains("--no-workaround"));
        assert!(d.lines().contains("only the REQUIRED fields: not sent"));
    }

    #[test]
    fn refused_the_same_way_has_no_workaround() {
        let crash = refused("HTTP 500 (text/plain)");
        let d = Diagnosis {
            attempts: (0..7usize).map(|i| attempt(i.checked_sub(1), crash.clone())).collect(),
            not_sent: Vec::new(),
            chosen: None,
            workaround: None,
            elapsed: Duration::ZERO,
        };
        assert!(d.message(true).contains("every variant was refused the same way: HTTP 500 (text/plain)"));
        assert!(d.workaround.is_none());
    }
}
