//! Codex's hook trust: definition hashes, trust keys, and the legacy
//! `notify` program, which is trusted like a hook.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::entry::{LayerSource, TrustState};
use super::wire::HookStateWire;
use crate::event::CodexEvent;

/// The legacy `notify = ["prog", "args"…]` setting. A project's `notify`
/// runs a program of the project's choosing, so dsh treats it like a project
/// hook: listed, trusted like the others, logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// Program and leading arguments.
    pub argv: Vec<String>,
    /// The config.toml it came from.
    pub origin: PathBuf,
    /// Which layer that file is.
    pub layer: LayerSource,
    /// Whether it may run under Codex's trust rules (see `notify_trust` in this module).
    pub trust: TrustState,
}

/// The event name `notify` is listed and logged under.
pub const NOTIFY_EVENT: &str = "notify";

impl NotifyConfig {
    /// `<config.toml>#notify`, its origin in the log and in `dsh hooks list`.
    pub fn origin_label(&self) -> String {
        format!("{}#{NOTIFY_EVENT}", self.origin.display())
    }

    /// The command as listed: the argv, space-separated.
    pub fn command(&self) -> String {
        self.argv.join(" ")
    }

    /// Codex's `[hooks.state."…"]` key for it: `<config.toml>:notify`.
    pub fn key(&self) -> String {
        format!("{}:{NOTIFY_EVENT}", self.origin.display())
    }

    /// Its definition hash: the argv as compact JSON.
    pub fn definition_hash(&self) -> String {
        sha256_hex(&serde_json::to_vec(&self.argv).unwrap_or_default())
    }
}

/// The trust of a `notify` from `layer`: managed layers are managed; a
/// user's own `notify` is what Codex runs without any review, so it counts
/// as trusted; a project's needs its project trusted and a matching
/// `trusted_hash` under its key in user or managed configuration, like any
/// project hook.
pub(super) fn notify_trust(
    notify: &NotifyConfig,
    project_trusted: bool,
    states: &BTreeMap<String, HookStateWire>,
) -> TrustState {
    let state = states.get(&notify.key()).cloned().unwrap_or_default();
    match notify.layer {
        LayerSource::Requirements | LayerSource::System => TrustState::Managed,
        _ if state.enabled == Some(false) => TrustState::Disabled,
        LayerSource::User => TrustState::Trusted,
        LayerSource::Project if !project_trusted => TrustState::Untrusted,
        LayerSource::Project => match state.trusted_hash.as_deref() {
            Some(trusted) if trusted == notify.definition_hash() => TrustState::Trusted,
            Some(_) => TrustState::Modified,
            None => TrustState::Untrusted,
        },
    }
}

/// What Codex hashes for one handler, its keys in sorted order.
#[derive(Serialize)]
struct HashedIdentity<'a> {
    event_name: &'a str,
    hooks: [HashedHandler<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    matcher: Option<&'a str>,
}

/// One handler as hashed, its keys in sorted order.
#[derive(Serialize)]
struct HashedHandler<'a> {
    #[serde(
        rename = "additionalContextLimit",
        skip_serializing_if = "Option::is_none"
    )]
    additional_context_limit: Option<u64>,
    #[serde(rename = "async")]
    is_async: bool,
    command: &'a str,
    #[serde(rename = "statusMessage", skip_serializing_if = "Option::is_none")]
    status_message: Option<&'a str>,
    timeout: u64,
    #[serde(rename = "type")]
    kind: &'a str,
}

/// Codex's definition hash of one command handler: SHA-256 of the
/// key-sorted compact JSON of `{event_name, matcher?, hooks: [handler]}`
/// with the timeout normalized (default, minimum 1, per-event clamp),
/// `commandWindows` dropped and `additionalContextLimit` kept only where the
/// event can emit context. Verified against Codex 0.169's `hooks/list`.
pub fn definition_hash(
    event: CodexEvent,
    matcher: Option<&str>,
    command: &str,
    timeout_secs: u64,
    is_async: bool,
    status_message: Option<&str>,
    additional_context_limit: Option<u64>,
) -> String {
    // Fields declared in sorted key order: serde writes them in that order.
    let identity = HashedIdentity {
        event_name: &event.key_label(),
        hooks: [HashedHandler {
            additional_context_limit,
            is_async,
            command,
            status_message,
            timeout: timeout_secs,
            kind: "command",
        }],
        matcher,
    };
    sha256_hex(&serde_json::to_vec(&identity).unwrap_or_default())
}

/// SHA-256 of `bytes` as `sha256:<hex>`, the form Codex's trust hashes take
/// (dsh's own trust store uses the same form).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(71);
    hex.push_str("sha256:");
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// Codex's trust key of one handler.
pub fn trust_key(source: &Path, event: CodexEvent, group: usize, handler: usize) -> String {
    format!(
        "{}:{}:{group}:{handler}",
        source.display(),
        event.key_label()
    )
}
