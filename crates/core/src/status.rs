//! `dsh status`: the resolved spec for people and for programs. The API
//! key is never shown, only whether one is set.

use serde_json::{Value, json};

use crate::{Result, SessionSpec};
use dsh_agent::AutoCompact;

/// The resolved spec as `dsh status --json` prints it.
#[derive(Debug, Clone)]
pub struct Status {
    /// The JSON object (keys `hooks`, `held_back`, `permissions`, `mcp_servers`,
    /// `plugins`, `instructions`, `compaction`, `provider`).
    pub json: Value,
}

fn compaction_json(compaction: &AutoCompact) -> Value {
    match compaction {
        AutoCompact::Off => json!({"auto": false}),
        AutoCompact::On {
            context_window,
            threshold,
        } => json!({
            "auto": true,
            "context_window": context_window,
            "threshold": threshold,
            "limit": compaction.limit(),
        }),
    }
}

/// The system prompt a session with these flags would start with (the
/// built-in tools `--tools` and `[tools]` keep; MCP tools are not started
/// here, so their guidance is not shown).
fn system_prompt_preview(spec: &SessionSpec) -> String {
    let selection = spec.flags.builtin_selection();
    let web_fetch = spec.config.web_fetch().unwrap_or(true);
    let tools: Vec<String> = dsh_tools::builtin::builtin_tools()
        .into_iter()
        .map(|tool| tool.spec().name)
        .filter(|name| selection.keeps(name))
        .filter(|name| web_fetch || name != dsh_tools::builtin::web_fetch::NAME)
        .collect();
    let model = spec
        .provider
        .as_ref()
        .map_or("scripted", |provider| provider.model.as_str());
    let environment = crate::system_prompt::Environment::detect(
        &spec.cwd,
        spec.permissions
            .permissions
            .working_dirs()
            .into_iter()
            .filter(|dir| *dir != spec.cwd)
            .collect(),
        model,
    );
    crate::system_prompt::render(&tools, &environment)
}

impl Status {
    /// Everything `spec` resolved.
    pub fn of(spec: &SessionSpec) -> Result<Status> {
        let store =
            dsh_trust::TrustStore::load_with(&spec.sources.reader(), &spec.sources.dsh_home)?;
        let parsed = &spec.hooks;
        let hooks: Vec<Value> = crate::trust::hooks_of(&spec.sources, parsed, &store)
            .into_iter()
            .map(|hook| {
                json!({
                    "dialect": hook.dialect.as_str(),
                    "event": hook.event,
                    "matcher": hook.matcher,
                    "command": hook.command,
                    "source": hook.origin,
                    "trust": hook.status.as_str(),
                    "active": hook.active,
                })
            })
            .collect();
        let held_back: Vec<Value> = parsed
            .held_back()
            .into_iter()
            .map(|(dialect, held)| {
                json!({
                    "dialect": dialect.as_str(),
                    "key": held.key,
                    "file": held.file,
                    "why": dsh_hooks::project_settings::HELD_BACK_WHY,
                })
            })
            .collect();
        let rule = |rule: &dsh_permissions::SourcedRule| {
            json!({
                "rule": rule.rule.raw,
                "behavior": rule.behavior.key(),
                "source": rule.source.name(),
                "origin": rule.origin,
            })
        };
        let permissions = json!({
            "mode": spec.mode.to_string(),
            "workspace_trusted_by": spec.workspace.by(),
            "rules": spec.permissions.permissions.rules().iter().map(rule).collect::<Vec<_>>(),
            "dropped_project_allow": spec.permissions.permissions.dropped_allow().iter().map(rule).collect::<Vec<_>>(),
        });
        let settings_layers: Vec<_> = spec
            .settings
            .layers()
            .iter()
            .map(|layer| {
                json!({
                    "source": layer.source.as_str(),
                    "path": layer.path,
                    "exists": layer.json.is_some(),
                    "disabled": layer.disabled.as_ref().map(ToString::to_string),
                })
            })
            .collect();
        let mcp_servers: Vec<Value> = spec
            .mcp
            .servers
            .iter()
            .map(|server| {
                let consent = if spec.consent.iter().any(|c| c.name == server.name) {
                    "needs consent"
                } else if spec.unconsented.iter().any(|c| c.name == server.name) {
                    "unapproved (headless)"
                } else {
                    "approved"
                };
                json!({
                    "name": server.name,
                    "source": server.source.as_str(),
                    "file": server.origin,
                    "consent": consent,
                })
            })
            .collect();
        let plugins: Vec<Value> = spec
            .flags
            .plugin_dirs
            .iter()
            .map(|dir| json!({"dir": dir, "from": "--plugin-dir"}))
            .collect();
        let instructions = dsh_agent::ProjectContext::discover(&spec.context_roots()).instructions;
        let instructions: Vec<Value> = instructions
            .files
            .iter()
            .map(|file| json!({"path": file.path, "truncated": file.truncated}))
            .collect();
        let provider = match &spec.provider {
            None => json!({"model": "scripted"}),
            Some(provider) => json!({
                "api": provider.api.as_str(),
                "base_url": provider.base_url,
                "url": provider.endpoint_url(),
                "model": provider.model,
                "api_key_env": provider.api_key_env,
                "api_key_set": provider.api_key.is_some(),
                "api_key_from": provider.origins.api_key,
                "api_key_looked_at": provider.looked_at_key_variables(),
                "why": {
                    "api": provider.origins.api.to_string(),
                    "base_url": provider.origins.base_url.to_string(),
                    "model": provider.origins.model.to_string(),
                },
            }),
        };
        Ok(Status {
            json: json!({
                "hooks": hooks,
                "held_back": held_back,
                "settings_layers": settings_layers,
                "permissions": permissions,
                "mcp_servers": mcp_servers,
                "plugins": plugins,
                "instructions": instructions,
                "compaction": compaction_json(&spec.compaction),
                "provider": provider,
                "system_prompt": {
                    "version": crate::system_prompt::SYSTEM_PROMPT_VERSION,
                    "text": system_prompt_preview(spec),
                },
            }),
        })
    }

    /// The same, for people.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let json = &self.json;
        let str_of = |value: &Value| {
            value
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| value.to_string())
        };
        out.push_str(&format!(
            "provider: {} at {}\n",
            str_of(&json["provider"]["model"]),
            str_of(&json["provider"]["base_url"])
        ));
        if let Some(api) = json["provider"]["api"].as_str() {
            let why = &json["provider"]["why"];
            out.push_str(&format!(
                "  api: {api} ({}); base URL: {}; model: {}\n",
                str_of(&why["api"]),
                str_of(&why["base_url"]),
                str_of(&why["model"])
            ));
            match json["provider"]["api_key_from"].as_str() {
                Some(from) => out.push_str(&format!("  key: set (from ${from})\n")),
                None => out.push_str(&format!(
                    "  key: none set ({} unset): sessions cannot start until one is\n",
                    str_of(&json["provider"]["api_key_looked_at"])
                )),
            }
        }
        match json["compaction"]["auto"].as_bool() {
            Some(true) => out.push_str(&format!(
                "compaction: at {} tokens (window {})\n",
                json["compaction"]["limit"], json["compaction"]["context_window"]
            )),
            _ => out.push_str("compaction: off\n"),
        }
        out.push_str(&format!(
            "permissions: mode {}, workspace {}\n",
            str_of(&json["permissions"]["mode"]),
            json["permissions"]["workspace_trusted_by"]
                .as_str()
                .map_or_else(|| "not trusted".to_owned(), |by| format!("trusted ({by})"))
        ));
        for rule in json["permissions"]["rules"]
            .as_array()
            .into_iter()
            .flatten()
        {
            out.push_str(&format!(
                "  {} {}  ({})\n",
                str_of(&rule["behavior"]),
                str_of(&rule["rule"]),
                str_of(&rule["origin"])
            ));
        }
        let list = |key: &str| json[key].as_array().cloned().unwrap_or_default();
        out.push_str(&format!("hooks: {}\n", list("hooks").len()));
        for hook in list("hooks") {
            out.push_str(&format!(
                "  [{}] {}: {}  ({}{})\n      from {}\n",
                str_of(&hook["dialect"]),
                str_of(&hook["event"]),
                str_of(&hook["command"]),
                str_of(&hook["trust"]),
                if hook["active"] == Value::Bool(true) {
                    ""
                } else {
                    ", inactive"
                },
                str_of(&hook["source"])
            ));
        }
        let held = list("held_back");
        if !held.is_empty() {
            out.push_str(&format!(
                "project settings held back: {} ({})\n",
                held.len(),
                dsh_hooks::project_settings::HELD_BACK_WHY
            ));
            for entry in held {
                out.push_str(&format!(
                    "  [{}] {}  from {}\n",
                    str_of(&entry["dialect"]),
                    str_of(&entry["key"]),
                    str_of(&entry["file"])
                ));
            }
        }
        // Layers switched off whole (held-back keys are listed above).
        for layer in list("settings_layers") {
            let Some(why) = layer["disabled"].as_str() else {
                continue;
            };
            if layer["exists"].as_bool() == Some(true) && !why.starts_with("held back") {
                out.push_str(&format!(
                    "settings layer {} ({}): {why}\n",
                    str_of(&layer["path"]),
                    str_of(&layer["source"])
                ));
            }
        }
        out.push_str(&format!("mcp servers: {}\n", list("mcp_servers").len()));
        for server in list("mcp_servers") {
            out.push_str(&format!(
                "  {} ({}, {})  from {}\n",
                str_of(&server["name"]),
                str_of(&server["source"]),
                str_of(&server["consent"]),
                str_of(&server["file"])
            ));
        }
        out.push_str(&format!("plugins: {}\n", list("plugins").len()));
        for plugin in list("plugins") {
            out.push_str(&format!("  {}\n", str_of(&plugin["dir"])));
        }
        out.push_str(&format!("instructions: {}\n", list("instructions").len()));
        for file in list("instructions") {
            out.push_str(&format!("  {}\n", str_of(&file["path"])));
        }
        out
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{DshConfig, Env, Inputs, SessionFlags, TrustPolicy};

    #[test]
    fn status_names_each_settings_layer_and_why_it_is_disabled() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join(".claude")).unwrap();
        fs_err::create_dir_all(home.join(".claude")).unwrap();
        fs_err::write(cwd.join(".claude/settings.json"), r#"{"env":{"A":"1"}}"#).unwrap();
        fs_err::write(
            home.join(".claude/settings.json"),
            r#"{"disableAllHooks":true}"#,
        )
        .unwrap();
        let env = Env::from_vars([("HOME".to_owned(), home.display().to_string())]);
        let config = DshConfig::empty(&env.dsh_home().unwrap());
        let spec = SessionSpec::resolve(Inputs {
            env: &env,
            config: &config,
            flags: &SessionFlags::default(),
            cwd: &cwd,
            policy: TrustPolicy::Ask,
        })
        .unwrap();
        let status = Status::of(&spec).unwrap();
        let layers = status.json["settings_layers"].as_array().unwrap();
        let sources: Vec<&str> = layers
            .iter()
            .filter_map(|layer| layer["source"].as_str())
            .collect();
        // Precedence order, highest first (no managed drop-ins here).
        assert_eq!(sources, ["managed", "local", "project", "user"]);
        let user_file = home.join(".claude/settings.json");
        let hooks_off = format!("hooks off: disableAllHooks in {}", user_file.display());
        for layer in &layers[1..] {
            let exists = layer["exists"].as_bool().unwrap();
            let source = layer["source"].as_str().unwrap();
            assert_eq!(exists, source != "local", "{layer}");
            // The user's switch turns every layer but managed policy off.
            assert_eq!(
                layer["disabled"].as_str(),
                Some(hooks_off.as_str()),
                "{layer}"
            );
        }
        let text = status.text();
        assert!(
            text.contains(&format!(
                "settings layer {} (user): {hooks_off}",
                user_file.display()
            )),
            "{text}"
        );
    }

    /// A project with one of everything `dsh status --json` lists.
    fn full_status(
        root: &std::path::Path,
        policy: TrustPolicy,
        autocompact: Option<crate::compact::AutocompactFlag>,
    ) -> (SessionSpec, Status) {
        let cwd = root.join("project");
        let home = root.join("home");
        let plugin = root.join("plugin");
        fs_err::create_dir_all(cwd.join(".claude")).unwrap();
        fs_err::create_dir_all(home.join(".claude")).unwrap();
        fs_err::create_dir_all(&plugin).unwrap();
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hi"}]}]},"env":{"A":"1"},"permissions":{"allow":["Bash(rm:*)"]}}"#,
        )
        .unwrap();
        fs_err::write(
            home.join(".claude/settings.json"),
            r#"{"permissions":{"allow":["Bash(ls:*)"],"deny":["Read(./secret)"]}}"#,
        )
        .unwrap();
        fs_err::write(
            cwd.join(".mcp.json"),
            r#"{"mcpServers":{"probe":{"command":"probe-server"}}}"#,
        )
        .unwrap();
        fs_err::write(cwd.join("CLAUDE.md"), "Be brief.\n").unwrap();
        let env = Env::from_vars([
            ("HOME".to_owned(), home.display().to_string()),
            ("DSH_API_KEY".to_owned(), "sk-never-shown".to_owned()),
        ]);
        let config = DshConfig::empty(&env.dsh_home().unwrap());
        let flags = SessionFlags {
            plugin_dirs: vec![plugin],
            autocompact,
            ..SessionFlags::default()
        };
        let spec = SessionSpec::resolve(Inputs {
            env: &env,
            config: &config,
            flags: &flags,
            cwd: &cwd,
            policy,
        })
        .unwrap();
        let status = Status::of(&spec).unwrap();
        (spec, status)
    }

    #[test]
    fn status_json_bytes_are_pinned() {
        let root = tempfile::tempdir().unwrap();
        let (spec, status) = full_status(root.path(), TrustPolicy::Ask, None);
        let prompt = serde_json::to_string(&system_prompt_preview(&spec)).unwrap();
        let printed = status
            .json
            .to_string()
            .replace(&prompt, r#""<prompt>""#)
            .replace(&root.path().display().to_string(), "<root>");
        assert!(!printed.contains("sk-never-shown"), "{printed}");
        insta::assert_snapshot!(printed);
        let text = status
            .text()
            .replace(&root.path().display().to_string(), "<root>");
        insta::assert_snapshot!("status_text", text);
        // Replay's scripted model, compaction off.
        let (_, status) = full_status(
            root.path(),
            TrustPolicy::RunAll,
            Some(crate::compact::AutocompactFlag::Off),
        );
        let printed = status.json.to_string();
        assert!(
            printed.contains(r#""compaction":{"auto":false},"provider":{"model":"scripted"},"#),
            "{printed}"
        );
    }
}
