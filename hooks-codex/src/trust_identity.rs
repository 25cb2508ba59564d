//! What identifies a Codex hook for dsh's hook trust: the definition that
//! is hashed (with the executed files' contents) into the `sha256:…` keys
//! of `$DSH_HOME/trust.json`. (Codex's own `trusted_hash` is another hash,
//! [`crate::config::definition_hash`].)
//!
//! The serialized form is a compatibility contract: its keys, their order
//! and their values decide every stored hash. Changing any of them asks
//! every user to trust every project hook again (the golden test below
//! guards it). Hashing and the store are `dsh-trust`'s.

use std::path::PathBuf;

use serde::Serialize;

use crate::config::HookEntry;

/// A Codex hook's trust identity, serialized in this field order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrustIdentity {
    /// Always `"codex"`.
    pub dialect: &'static str,
    /// The file it came from (`hooks.json` or `config.toml`).
    pub file: String,
    /// Codex event name.
    pub event: String,
    /// The effective matcher.
    pub matcher: Option<String>,
    /// Handler type: `command`, `prompt`, `agent`, `mcp_tool`.
    pub handler: String,
    /// The command, for command handlers.
    pub command: Option<String>,
    /// Effective timeout in seconds.
    pub timeout: u64,
    /// `async: true`.
    #[serde(rename = "async")]
    pub is_async: bool,
    /// `statusMessage`.
    #[serde(rename = "statusMessage")]
    pub status_message: Option<String>,
}

impl HookEntry {
    /// The file this hook came from: the part of its origin before `#`
    /// (empty when the origin names no file).
    pub fn file(&self) -> PathBuf {
        PathBuf::from(self.file_text())
    }

    fn file_text(&self) -> &str {
        self.origin
            .split_once('#')
            .map(|(file, _)| file)
            .unwrap_or_default()
    }

    /// This hook's trust identity.
    pub fn trust_identity(&self) -> TrustIdentity {
        TrustIdentity {
            dialect: "codex",
            file: self.file_text().to_owned(),
            event: self.event.clone(),
            matcher: self.matcher.clone(),
            handler: self.handler.clone(),
            command: self.command.clone(),
            timeout: self.timeout_secs,
            is_async: self.is_async,
            status_message: self.status_message.clone(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{CodexDiscovery, load};

    /// The hooks the golden hashes were computed from (on the code before
    /// the identity became a struct, with the file at `GOLDEN_FILE`).
    const HOOKS: &str = r#"{"hooks":{"PreToolUse":[{"matcher":"^Bash$","hooks":[{"type":"command","command":"echo codex","timeout":20,"statusMessage":"checking"}]}],
"Stop":[{"hooks":[{"type":"command","command":"echo stop","async":true}]}]}}"#;
    const GOLDEN_FILE: &str = "/tmp/dsh-golden/p/.codex/hooks.json";

    fn identities() -> Vec<TrustIdentity> {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let hooks = project.path().join(".codex/hooks.json");
        std::fs::create_dir(project.path().join(".codex")).unwrap();
        std::fs::write(&hooks, HOOKS).unwrap();
        let mut discovery = CodexDiscovery::new(project.path(), home.path());
        discovery.managed_dir = None;
        let config = load(&discovery).unwrap();
        config
            .entries()
            .iter()
            .map(|entry| {
                assert_eq!(entry.file(), hooks);
                let mut identity = entry.trust_identity();
                identity.file = GOLDEN_FILE.to_owned();
                identity
            })
            .collect()
    }

    /// A change here asks EVERY user to trust EVERY project hook again:
    /// these hashes are what `trust.json` files in the wild hold. Never
    /// update them to make the test pass; make the identity serialize as
    /// before instead.
    #[test]
    fn trust_hashes_match_the_ones_users_have_stored() {
        let hashes: Vec<(String, String)> = identities()
            .iter()
            .map(|identity| {
                (
                    identity.event.clone(),
                    dsh_trust::hash_identity(identity, &[]).0,
                )
            })
            .collect();
        let expected = [
            (
                "PreToolUse",
                "sha256:b9d31d2c5042c114a192054eac176f3eafbac384b79c219a78fdc3d3d445a532",
            ),
            (
                "Stop",
                "sha256:49e8afab445ad9cc92926ef8f1d26d1a6098acff87641c790df9c9ac6a3fb5e5",
            ),
        ];
        let expected: Vec<(String, String)> = expected
            .iter()
            .map(|(event, hash)| ((*event).to_owned(), (*hash).to_owned()))
            .collect();
        assert_eq!(hashes, expected);
    }

    #[test]
    fn the_identity_serializes_in_the_stored_key_order() {
        let text = serde_json::to_string(&identities()[0]).unwrap();
        assert_eq!(
            text,
            r#"{"dialect":"codex","file":"/tmp/dsh-golden/p/.codex/hooks.json","event":"PreToolUse","matcher":"^Bash$","handler":"command","command":"echo codex","timeout":20,"async":false,"statusMessage":"checking"}"#
        );
    }
}
