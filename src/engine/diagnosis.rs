//! What the differential diagnosis of the neutral SendMessage found (see `diagnose.rs`, which runs
//! it): the variants it tries, what each got, and the workaround it chose. Data only, so that the
//! run-wide context can hold it without depending on the code that sends the requests.

use std::time::Duration;

use serde_json::Value;

use super::workaround::{Spelling, Version, Workaround};
use crate::report::Evidence;

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

pub(crate) const ALL_LEGACY: Spelling =
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
    pub(crate) fn works(&self) -> bool {
        !matches!(self, Answer::Refused(_))
    }

    pub(crate) fn words(&self) -> String {
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
    pub(crate) result: Option<Value>,
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
                 ({{\"{k}\": …}}); the request is not at fault, so no variant was tried{}",
                neutral.words(),
                if applied {
                    format!(
                        "; the other checks read the answer as {{\"{k}\": …}} (the shape is KIT-SEND-001's finding)"
                    )
                } else {
                    ", and --no-workaround leaves the other checks to read it as it came".to_owned()
                }
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

pub(crate) fn label(a: &Attempt) -> &'static str {
    a.variant.map_or("the 1.0 request", |i| VARIANTS[i].label)
}
