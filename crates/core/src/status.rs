//! `dsh status`: the resolved spec for people and for programs. The API
//! key is never shown, only whether one is set.

use std::path::PathBuf;

use serde::Serialize;

use crate::{Result, SessionSpec};
use dsh_agent::AutoCompact;

/// The resolved spec; `dsh status --json` prints it serialized (keys in
/// field order: `hooks`, `held_back`, `settings_layers`, `permissions`,
/// `mcp_servers`, `plugins`, `instructions`, `compaction`, `provider`,
/// `system_prompt`).
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    hooks: Vec<HookRow>,
    held_back: Vec<HeldBackRow>,
    settings_layers: Vec<LayerRow>,
    permissions: PermissionsRow,
    mcp_servers: Vec<ServerRow>,
    plugins: Vec<PluginRow>,
    instructions: Vec<InstructionRow>,
    compaction: CompactionRow,
    provider: ProviderRow,
    system_prompt: PromptRow,
}

#[derive(Debug, Clone, Serialize)]
struct HookRow {
    dialect: &'static str,
    event: String,
    matcher: Option<String>,
    command: String,
    source: String,
    trust: &'static str,
    active: bool,
}

#[derive(Debug, Clone, Serialize)]
struct HeldBackRow {
    dialect: &'static str,
    key: String,
    file: PathBuf,
    why: &'static str,
}

#[derive(Debug, Clone, Serialize)]
struct LayerRow {
    source: &'static str,
    path: PathBuf,
    exists: bool,
    disabled: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct PermissionsRow {
    mode: String,
    workspace_trusted_by: Option<&'static str>,
    rules: Vec<RuleRow>,
    dropped_project_allow: Vec<RuleRow>,
}

#[derive(Debug, Clone, Serialize)]
struct RuleRow {
    rule: String,
    behavior: &'static str,
    source: &'static str,
    origin: String,
}

impl RuleRow {
    fn of(rule: &dsh_permissions::SourcedRule) -> Self {
        RuleRow {
            rule: rule.rule.raw.clone(),
            behavior: rule.behavior.key(),
            source: rule.source.name(),
            origin: rule.origin.clone(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct ServerRow {
    name: String,
    source: &'static str,
    file: PathBuf,
    consent: &'static str,
}

#[derive(Debug, Clone, Serialize)]
struct PluginRow {
    dir: PathBuf,
    from: &'static str,
}

#[derive(Debug, Clone, Serialize)]
struct InstructionRow {
    path: PathBuf,
    truncated: bool,
}

/// `{"auto": false}`, or `auto: true` with the window, share and limit.
#[derive(Debug, Clone, Serialize)]
struct CompactionRow {
    auto: bool,
    #[serde(flatten)]
    on: Option<CompactionOn>,
}

#[derive(Debug, Clone, Serialize)]
struct CompactionOn {
    context_window: u64,
    threshold: f64,
    limit: u64,
}

impl CompactionRow {
    fn of(compaction: AutoCompact) -> Self {
        let on = match compaction {
            AutoCompact::Off => None,
            AutoCompact::On {
                context_window,
                threshold,
            } => compaction.limit().map(|limit| CompactionOn {
                context_window,
                threshold,
                limit,
            }),
        };
        CompactionRow {
            auto: on.is_some(),
            on,
        }
    }
}

/// `{"model": "scripted"}` (replay), or the HTTP provider's settings.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
enum ProviderRow {
    Scripted { model: &'static str },
    Http(Box<HttpProviderRow>),
}

#[derive(Debug, Clone, Serialize)]
struct HttpProviderRow {
    api: &'static str,
    base_url: String,
    url: String,
    model: String,
    api_key_env: String,
    api_key_set: bool,
    api_key_from: Option<String>,
    api_key_looked_at: String,
    why: ProviderWhy,
}

/// Where each provider setting came from.
#[derive(Debug, Clone, Serialize)]
struct ProviderWhy {
    api: String,
    base_url: String,
    model: String,
}

impl ProviderRow {
    fn of(provider: Option<&dsh_provider::ProviderSettings>) -> Self {
        let Some(provider) = provider else {
            return ProviderRow::Scripted { model: "scripted" };
        };
        ProviderRow::Http(Box::new(HttpProviderRow {
            api: provider.api.as_str(),
            base_url: provider.base_url.clone(),
            url: provider.endpoint_url(),
            model: provider.model.clone(),
            api_key_env: provider.api_key_env.clone(),
            api_key_set: provider.api_key.is_some(),
            api_key_from: provider.origins.api_key.clone(),
            api_key_looked_at: provider.looked_at_key_variables(),
            why: ProviderWhy {
                api: provider.origins.api.to_string(),
                base_url: provider.origins.base_url.to_string(),
                model: provider.origins.model.to_string(),
            },
        }))
    }
}

#[derive(Debug, Clone, Serialize)]
struct PromptRow {
    version: &'static str,
    text: String,
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
        let hooks = crate::trust::hooks_of(&spec.sources, parsed, &store)
            .into_iter()
            .map(|hook| HookRow {
                dialect: hook.dialect.as_str(),
                event: hook.event,
                matcher: hook.matcher,
                command: hook.command,
                source: hook.origin,
                trust: hook.status.as_str(),
                active: hook.active,
            })
            .collect();
        let held_back = parsed
            .held_back()
            .into_iter()
            .map(|(dialect, held)| HeldBackRow {
                dialect: dialect.as_str(),
                key: held.key.clone(),
                file: held.file.clone(),
                why: dsh_hooks::project_settings::HELD_BACK_WHY,
            })
            .collect();
        let permissions = &spec.permissions.permissions;
        let permissions = PermissionsRow {
            mode: spec.mode.to_string(),
            workspace_trusted_by: spec.workspace.by(),
            rules: permissions.rules().iter().map(RuleRow::of).collect(),
            dropped_project_allow: permissions
                .dropped_allow()
                .iter()
                .map(RuleRow::of)
                .collect(),
        };
        let settings_layers = spec
            .settings
            .layers()
            .iter()
            .map(|layer| LayerRow {
                source: layer.source.as_str(),
                path: layer.path.clone(),
                exists: layer.json.is_some(),
                disabled: layer.disabled.as_ref().map(ToString::to_string),
            })
            .collect();
        let mcp_servers = spec
            .mcp
            .servers
            .iter()
            .map(|server| ServerRow {
                name: server.name.clone(),
                source: server.source.as_str(),
                file: server.origin.clone(),
                consent: if spec.consent.iter().any(|c| c.name == server.name) {
                    "needs consent"
                } else if spec.unconsented.iter().any(|c| c.name == server.name) {
                    "unapproved (headless)"
                } else {
                    "approved"
                },
            })
            .collect();
        let plugins = spec
            .flags
            .plugin_dirs
            .iter()
            .map(|dir| PluginRow {
                dir: dir.clone(),
                from: "--plugin-dir",
            })
            .collect();
        let instructions = dsh_agent::ProjectContext::discover(&spec.context_roots())
            .instructions
            .files
            .into_iter()
            .map(|file| InstructionRow {
                path: file.path,
                truncated: file.truncated,
            })
            .collect();
        Ok(Status {
            hooks,
            held_back,
            settings_layers,
            permissions,
            mcp_servers,
            plugins,
            instructions,
            compaction: CompactionRow::of(spec.compaction),
            provider: ProviderRow::of(spec.provider.as_ref()),
            system_prompt: PromptRow {
                version: crate::system_prompt::SYSTEM_PROMPT_VERSION,
                text: system_prompt_preview(spec),
            },
        })
    }

    /// The same, for people.
    pub fn text(&self) -> String {
        let mut out = String::new();
        match &self.provider {
            ProviderRow::Scripted { model } => out.push_str(&format!("provider: {model}\n")),
            ProviderRow::Http(provider) => {
                let why = &provider.why;
                out.push_str(&format!(
                    "provider: {} at {}\n  api: {} ({}); base URL: {}; model: {}\n",
                    provider.model,
                    provider.base_url,
                    provider.api,
                    why.api,
                    why.base_url,
                    why.model
                ));
                match &provider.api_key_from {
                    Some(from) => out.push_str(&format!("  key: set (from ${from})\n")),
                    None => out.push_str(&format!(
                        "  key: none set ({} unset): sessions cannot start until one is\n",
                        provider.api_key_looked_at
                    )),
                }
            }
        }
        match &self.compaction.on {
            Some(on) => out.push_str(&format!(
                "compaction: at {} tokens (window {})\n",
                on.limit, on.context_window
            )),
            None => out.push_str("compaction: off\n"),
        }
        out.push_str(&format!(
            "permissions: mode {}, workspace {}\n",
            self.permissions.mode,
            self.permissions
                .workspace_trusted_by
                .map_or_else(|| "not trusted".to_owned(), |by| format!("trusted ({by})"))
        ));
        for rule in &self.permissions.rules {
            out.push_str(&format!(
                "  {} {}  ({})\n",
                rule.behavior, rule.rule, rule.origin
            ));
        }
        out.push_str(&format!("hooks: {}\n", self.hooks.len()));
        for hook in &self.hooks {
            out.push_str(&format!(
                "  [{}] {}: {}  ({}{})\n      from {}\n",
                hook.dialect,
                hook.event,
                hook.command,
                hook.trust,
                if hook.active { "" } else { ", inactive" },
                hook.source
            ));
        }
        if !self.held_back.is_empty() {
            out.push_str(&format!(
                "project settings held back: {} ({})\n",
                self.held_back.len(),
                dsh_hooks::project_settings::HELD_BACK_WHY
            ));
            for entry in &self.held_back {
                out.push_str(&format!(
                    "  [{}] {}  from {}\n",
                    entry.dialect,
                    entry.key,
                    entry.file.display()
                ));
            }
        }
        // Layers switched off whole (held-back keys are listed above).
        for layer in &self.settings_layers {
            let Some(why) = &layer.disabled else {
                continue;
            };
            if layer.exists && !why.starts_with("held back") {
                out.push_str(&format!(
                    "settings layer {} ({}): {why}\n",
                    layer.path.display(),
                    layer.source
                ));
            }
        }
        out.push_str(&format!("mcp servers: {}\n", self.mcp_servers.len()));
        for server in &self.mcp_servers {
            out.push_str(&format!(
                "  {} ({}, {})  from {}\n",
                server.name,
                server.source,
                server.consent,
                server.file.display()
            ));
        }
        out.push_str(&format!("plugins: {}\n", self.plugins.len()));
        for plugin in &self.plugins {
            out.push_str(&format!("  {}\n", plugin.dir.display()));
        }
        out.push_str(&format!("instructions: {}\n", self.instructions.len()));
        for file in &self.instructions {
            out.push_str(&format!("  {}\n", file.path.display()));
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
        let json = serde_json::to_value(&status).unwrap();
        let layers = json["settings_layers"].as_array().unwrap();
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
        let printed = serde_json::to_string(&status)
            .unwrap()
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
        let printed = serde_json::to_string(&status).unwrap();
        assert!(
            printed.contains(r#""compaction":{"auto":false},"provider":{"model":"scripted"},"#),
            "{printed}"
        );
        assert!(
            status
                .text()
                .starts_with("provider: scripted\ncompaction: off\n"),
            "{}",
            status.text()
        );
    }
}
