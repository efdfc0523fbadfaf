//! Mock settings as data: what a client scenario (`mock-peer/client-scenarios/`) or a freedom
//! (`mock-peer/freedoms/`) changes in the mock it runs on. Each is something an agent may do; two
//! entries that set one setting are refused together, whatever order they come in.

use serde::Deserialize;

use super::binding::Bindings;
use super::config::{ExtendedCard, MockConfig, WebhookPolicy};

/// The settings one entry changes; absent members leave the mock as it is.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MockSettings {
    /// The scenario a message no `tck-*` prefix selects runs.
    #[serde(default)]
    pub default_scenario: Option<String>,
    /// The first stream of each task ends after this many events.
    #[serde(default)]
    pub cut_streams_after: Option<usize>,
    #[serde(default)]
    pub tenant: Option<String>,
    /// Extension URIs declared optional on the card, added to the mock's own.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// The card's interface on another host.
    #[serde(default)]
    pub interface_elsewhere: bool,
    /// Declare (and serve) only the core methods: no streaming, no push notifications, no
    /// extended card; the mock answers those operations with the errors §3.3.4 names.
    #[serde(default)]
    pub core_only: bool,
    /// The one binding declared and served (`jsonrpc` or `http+json`).
    #[serde(default)]
    pub binding: Option<OneBinding>,
    /// Declare `capabilities.streaming` false and refuse the streaming methods.
    #[serde(default)]
    pub no_streaming: bool,
    /// Declare `capabilities.pushNotifications` false and refuse the push config methods.
    #[serde(default)]
    pub no_push: bool,
    /// Declare no extended card.
    #[serde(default)]
    pub no_extended_card: bool,
    /// Refuse webhooks on loopback, private and link-local addresses (§13's SSRF advice).
    #[serde(default)]
    pub ssrf_guard: bool,
    /// Close SubscribeToTask streams at an interrupted state too (§11.7), not only at a terminal one.
    #[serde(default)]
    pub subscribe_closes_at_interrupted: bool,
    /// Every error carries an ErrorInfo detail, JSON-RPC's standard codes included.
    #[serde(default)]
    pub error_info_everywhere: bool,
    /// Refuse a `messageId` already used (-32602).
    #[serde(default)]
    pub single_use_message_ids: bool,
    /// Honour no `tck-*` prefix: every message runs the default scenario, as an ordinary agent.
    #[serde(default)]
    pub no_test_contract: bool,
    /// Generate no `contextId` for a message that carries none (§3.4.1: an agent MAY).
    #[serde(default)]
    pub no_context_ids: bool,
    /// Keep status timestamps in whole seconds (written `.000Z`).
    #[serde(default)]
    pub whole_second_timestamps: bool,
    /// End every task stream with the task as it stands, once more, before closing (§11.7).
    #[serde(default)]
    pub final_task_snapshot: bool,
    /// Declare no resume extension (stream events then need no `id:`).
    #[serde(default)]
    pub no_resume_extension: bool,
    /// The most items one ListTasks or ListTaskPushNotificationConfigs page holds, whatever
    /// `pageSize` asks (the rest follows `nextPageToken`).
    #[serde(default)]
    pub page_cap: Option<usize>,
}

/// A binding served alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum OneBinding {
    #[serde(rename = "jsonrpc")]
    JsonRpc,
    #[serde(rename = "http+json")]
    HttpJson,
}

/// Two entries that set one setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{a:?} and {b:?} both set {what}; choose one")]
pub struct Clash {
    pub a: String,
    pub b: String,
    pub what: &'static str,
}

impl MockSettings {
    /// The settings this entry claims for itself: no other entry may set them too. Flags that only
    /// switch something off (no streaming, say) or add to a list can be given by many.
    fn exclusive(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for (what, set) in [
            ("the scenario every message runs", self.default_scenario.is_some()),
            ("a stream cut", self.cut_streams_after.is_some()),
            ("the tenant", self.tenant.is_some()),
            ("the binding served", self.binding.is_some()),
            ("the page size", self.page_cap.is_some()),
        ] {
            if set {
                out.push(what);
            }
        }
        out
    }

    /// Sets `config` as each of `entries` (named, for a clash) says.
    pub fn apply_all<'a>(
        entries: impl IntoIterator<Item = (&'a str, &'a MockSettings)>,
        config: &mut MockConfig,
    ) -> Result<(), Clash> {
        let mut set_by: Vec<(&'static str, &'a str)> = Vec::new();
        for (name, s) in entries {
            for what in s.exclusive() {
                if let Some((_, a)) = set_by.iter().find(|(w, _)| *w == what) {
                    return Err(Clash { a: (*a).to_owned(), b: name.to_owned(), what });
                }
                set_by.push((what, name));
            }
            s.apply(config);
        }
        Ok(())
    }

    fn apply(&self, config: &mut MockConfig) {
        if let Some(s) = &self.default_scenario {
            config.default_scenario = Some(s.clone());
        }
        if let Some(n) = self.cut_streams_after {
            config.cut_streams_after = Some(n);
        }
        if let Some(t) = &self.tenant {
            config.tenant = t.clone();
        }
        config.extensions.extend(self.extensions.iter().cloned());
        config.interface_elsewhere |= self.interface_elsewhere;
        if let Some(b) = self.binding {
            config.bindings = match b {
                OneBinding::JsonRpc => Bindings::JsonRpc,
                OneBinding::HttpJson => Bindings::HttpJson,
            };
        }
        if self.core_only || self.no_streaming {
            config.streaming = false;
        }
        if self.core_only || self.no_push {
            config.push_notifications = false;
        }
        if self.core_only || self.no_extended_card {
            config.extended_card = ExtendedCard::Off;
        }
        if self.ssrf_guard {
            config.webhooks = WebhookPolicy::PublicOnly;
        }
        if self.subscribe_closes_at_interrupted {
            config.subscribe_until_terminal = false;
        }
        config.error_info_everywhere |= self.error_info_everywhere;
        config.single_use_message_ids |= self.single_use_message_ids;
        if self.no_test_contract {
            config.behaviors = false;
        }
        config.context_ids = config.context_ids && !self.no_context_ids;
        config.whole_second_timestamps |= self.whole_second_timestamps;
        config.final_task_snapshot |= self.final_task_snapshot;
        if self.no_resume_extension {
            config.resume_extension = false;
        }
        if let Some(n) = self.page_cap {
            config.limits.max_page_size = n.max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_setting_set_twice_clashes_and_switches_combine() {
        let a = MockSettings { binding: Some(OneBinding::JsonRpc), no_push: true, ..Default::default() };
        let b = MockSettings { binding: Some(OneBinding::HttpJson), ..Default::default() };
        let c = MockSettings { no_push: true, no_streaming: true, ..Default::default() };
        let mut config = MockConfig::default();
        let e = MockSettings::apply_all([("a", &a), ("b", &b)], &mut config).unwrap_err();
        assert_eq!(e.what, "the binding served");
        let mut config = MockConfig::default();
        MockSettings::apply_all([("a", &a), ("c", &c)], &mut config).unwrap();
        assert_eq!(config.bindings, Bindings::JsonRpc);
        assert!(!config.push_notifications && !config.streaming);
    }
}
