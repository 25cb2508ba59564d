//! What identifies a Gemini hook for dsh's hook trust: the definition that
//! is hashed (with the executed files' contents) into the `sha256:…` keys
//! of `$DSH_HOME/trust.json`.
//!
//! The serialized form is a compatibility contract: its keys, their order
//! and their values decide every stored hash. Changing any of them asks
//! every user to trust every Gemini project hook again (the golden test
//! below guards it). Hashing and the store are `dsh-trust`'s.

use dsh_hooks::names::Tabled;
use serde::Serialize;

use crate::config::Handler;

/// A Gemini hook's trust identity, serialized in this field order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrustIdentity {
    /// Always `"gemini"`.
    pub dialect: &'static str,
    /// The settings file it came from.
    pub file: String,
    /// Gemini event name.
    pub event: String,
    /// The group's matcher.
    pub matcher: Option<String>,
    /// The group's `sequential` (it changes what later hooks see).
    pub sequential: bool,
    /// `name`.
    pub name: Option<String>,
    /// The command as configured (before substitution).
    pub command: String,
    /// Timeout in milliseconds.
    pub timeout_ms: u64,
    /// The per-hook `env`, in file order.
    pub env: Vec<(String, String)>,
}

impl Handler {
    /// This hook's trust identity.
    pub fn trust_identity(&self) -> TrustIdentity {
        TrustIdentity {
            dialect: "gemini",
            file: self.file.display().to_string(),
            event: self.event.as_str().to_owned(),
            matcher: self.matcher.clone(),
            sequential: self.sequential,
            name: self.name.clone(),
            command: self.command.clone(),
            timeout_ms: self.timeout_ms,
            env: self.env.clone(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::config::{GeminiDiscovery, load};

    const SETTINGS: &str = r#"{"hooks":{"BeforeTool":[{"matcher":"run_shell_command","sequential":true,"hooks":[{"type":"command","command":"python3 $GEMINI_PROJECT_DIR/.gemini/hooks/guard.py","name":"guard","timeout":5000,"env":{"MODE":"strict"}}]}],
"AfterAgent":[{"hooks":[{"type":"command","command":"echo done"}]}]}}"#;
    const GOLDEN_FILE: &str = "/tmp/dsh-golden/p/.gemini/settings.json";

    fn identities() -> Vec<TrustIdentity> {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".gemini")).unwrap();
        std::fs::write(project.path().join(".gemini/settings.json"), SETTINGS).unwrap();
        let mut discovery = GeminiDiscovery::new(project.path(), home.path());
        discovery.trust_workspace = true;
        load(&discovery)
            .unwrap()
            .handlers
            .iter()
            .map(|handler| TrustIdentity {
                file: GOLDEN_FILE.to_owned(),
                ..handler.trust_identity()
            })
            .collect()
    }

    /// A change here asks EVERY user to trust EVERY Gemini project hook
    /// again: these hashes are what `trust.json` files hold. Never update
    /// them to make the test pass; make the identity serialize as before.
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
                "BeforeTool",
                "sha256:2c088934e0a5c5ded47c3a14e8a3285ee108d9e5d651fe218ea81e8c40eaed02",
            ),
            (
                "AfterAgent",
                "sha256:c6db845e2357a205e570482f0c97207d31a1a2e1c087a0e175b956a59b2fece9",
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
            r#"{"dialect":"gemini","file":"/tmp/dsh-golden/p/.gemini/settings.json","event":"BeforeTool","matcher":"run_shell_command","sequential":true,"name":"guard","command":"python3 $GEMINI_PROJECT_DIR/.gemini/hooks/guard.py","timeout_ms":5000,"env":[["MODE","strict"]]}"#
        );
    }
}
