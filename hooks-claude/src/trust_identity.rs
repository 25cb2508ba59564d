//! What identifies a Claude Code hook for dsh's hook trust: the definition
//! that is hashed (with the executed files' contents) into the `sha256:…`
//! keys of `$DSH_HOME/trust.json`.
//!
//! The serialized form is a compatibility contract: its keys, their order
//! and their values decide every stored hash. Changing any of them asks
//! every user to trust every project hook again (the golden test below
//! guards it). Hashing and the store are `dsh-trust`'s.

use serde::Serialize;

use crate::config::{HandlerKind, HookHandler};

/// A Claude Code hook's trust identity, serialized in this field order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrustIdentity {
    /// Always `"claude"`.
    pub dialect: &'static str,
    /// The settings file it came from.
    pub file: String,
    /// The event name as configured.
    pub event: String,
    /// The matcher as configured.
    pub matcher: Option<String>,
    /// The handler as `dsh hooks list` shows it (`command: …`, `http: …`).
    pub handler: String,
    /// The timeout in seconds it runs with.
    pub timeout: f64,
    /// The `if` permission-rule filter.
    #[serde(rename = "if")]
    pub if_rule: Option<String>,
    /// An http hook's headers (`null` for other handlers): they decide what
    /// leaves the machine, so a change asks again.
    pub headers: Option<Vec<(String, String)>>,
    /// The variables an http hook's headers may expand (`null` for others).
    #[serde(rename = "allowedEnvVars")]
    pub allowed_env_vars: Option<Vec<String>>,
}

impl HookHandler {
    /// This handler's trust identity.
    pub fn trust_identity(&self) -> TrustIdentity {
        let entry = self.entry();
        let (headers, allowed_env_vars) = match &self.kind {
            HandlerKind::Http {
                headers,
                allowed_env_vars,
                ..
            } => (Some(headers.clone()), Some(allowed_env_vars.clone())),
            HandlerKind::Command { .. }
            | HandlerKind::Callback { .. }
            | HandlerKind::Unsupported { .. } => (None, None),
        };
        TrustIdentity {
            dialect: "claude",
            file: self.file.to_string_lossy().into_owned(),
            event: entry.event,
            matcher: entry.matcher,
            handler: entry.handler,
            timeout: entry.timeout_secs,
            if_rule: self.if_rule.clone(),
            headers,
            allowed_env_vars,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{ClaudeDiscovery, load};

    /// The settings the golden hashes were computed from (on the code before
    /// the identity became a struct, with the file at `GOLDEN_FILE`).
    const SETTINGS: &str = r#"{"hooks": {
 "PreToolUse": [{"matcher": "Bash", "hooks": [{"type":"command","command":"echo guard","timeout":30,"if":"Bash(git *)"}]}],
 "Stop": [{"hooks": [{"type":"http","url":"http://127.0.0.1:9/hook","headers":{"X-Team":"a","Authorization":"Bearer $TOKEN"},"allowedEnvVars":["TOKEN"]}]}],
 "PostToolUse": [{"matcher":"Write|Edit","hooks":[{"type":"command","command":"echo post","async":true}]}]
}}"#;
    const GOLDEN_FILE: &str = "/tmp/dsh-golden/p/.claude/settings.json";

    fn identities() -> Vec<TrustIdentity> {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let settings = project.path().join(".claude/settings.json");
        std::fs::create_dir(project.path().join(".claude")).unwrap();
        std::fs::write(&settings, SETTINGS).unwrap();
        let discovery = ClaudeDiscovery::new(
            project.path().to_owned(),
            home.path().to_owned(),
            &home.path().join(".dsh"),
        );
        let config = load(&discovery).unwrap();
        config
            .handlers()
            .iter()
            .map(|handler| {
                let mut identity = handler.trust_identity();
                assert_eq!(identity.file, settings.to_string_lossy());
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
                "sha256:4bcc4d7528982e4afe6aa2f6317e30f6b935fa04fcd0baea4debd25d50988ba9",
            ),
            (
                "Stop",
                "sha256:2b71b69393ff7fcca9769b47a3b331190627fd56be5086ddf868fff2a6367cde",
            ),
            (
                "PostToolUse",
                "sha256:1feb2a81f0748b64c6970e7e65203b7d538ac3d54915540f38293e12a5aebdfb",
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
        let text = serde_json::to_string(&identities()[1]).unwrap();
        assert_eq!(
            text,
            r#"{"dialect":"claude","file":"/tmp/dsh-golden/p/.claude/settings.json","event":"Stop","matcher":null,"handler":"http: http://127.0.0.1:9/hook","timeout":600.0,"if":null,"headers":[["X-Team","a"],["Authorization","Bearer $TOKEN"]],"allowedEnvVars":["TOKEN"]}"#
        );
    }
}
