//! One configured hook handler: how it starts, whether it runs, and the
//! keys dedup and matching use.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::SettingsSource;
use crate::events::HookEvent;
use crate::matcher::Matcher;
use crate::plugins::{PluginOrigin, PluginScope};

/// How a command handler is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandForm {
    /// `/bin/sh -c COMMAND` (or `bash -c` with `"shell": "bash"`).
    Shell {
        /// The shell binary.
        shell: PathBuf,
        /// The command string.
        command: String,
    },
    /// Exec form (`args` present): no shell.
    Exec {
        /// The program (looked up on `PATH`).
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// What a handler does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandlerKind {
    /// `type: "command"`.
    Command {
        /// How it is started.
        form: CommandForm,
        /// `async: true` (or `asyncRewake`): not awaited.
        is_async: bool,
    },
    /// `type: "http"`: the payload is POSTed to `url`.
    Http {
        /// The endpoint.
        url: String,
        /// Extra headers (values may reference `$VAR` for allowed names).
        headers: Vec<(String, String)>,
        /// Variables that may be interpolated into header values.
        allowed_env_vars: Vec<String>,
    },
    /// A callback the application registered through the Claude Agent
    /// SDK (`initialize.hooks`): fired as a `hook_callback` request.
    Callback {
        /// The SDK's id for it (`hook_0`).
        callback_id: String,
    },
    /// A handler type dsh cannot honour (`prompt`, `agent`, `mcp_tool`, …).
    Unsupported {
        /// The configured `type`.
        kind: String,
    },
}

/// Whether a handler will run: off when switched off (`disableAllHooks`,
/// `allowManagedHooksOnly`, URL policy) or when dsh cannot run it (handler
/// type, unfired event, unknown event).
pub type HandlerStatus = dsh_hooks::entries::EntryStatus<dsh_hooks::entries::Off>;

/// One configured handler.
#[derive(Debug, Clone)]
pub struct HookHandler {
    /// The event name as configured.
    pub event_name: String,
    /// The event, when Claude Code knows the name.
    pub event: Option<HookEvent>,
    /// The matcher as configured.
    pub matcher: Option<String>,
    pub(crate) compiled: Matcher,
    /// What it does.
    pub kind: HandlerKind,
    /// The configured `timeout` (seconds), if any.
    pub timeout: Option<Duration>,
    /// The `if` permission-rule filter, if any.
    pub if_rule: Option<String>,
    /// The layer it came from.
    pub source: SettingsSource,
    /// The file it came from.
    pub file: PathBuf,
    /// `<file>#hooks.<Event>[i].hooks[j]`.
    pub origin: String,
    /// Whether it runs.
    pub status: HandlerStatus,
    /// The plugin it came from (`hooks/hooks.json` of an enabled plugin);
    /// `None` for a settings-file hook.
    pub plugin: Option<PluginOrigin>,
    /// The custom agent whose frontmatter declared it: it fires only
    /// inside that agent. `None` for settings and plugin hooks.
    pub agent: Option<String>,
}

impl HookHandler {
    /// The command as recorded and as shown in Claude Code's texts (`CMD`).
    pub fn command_text(&self) -> String {
        match &self.kind {
            HandlerKind::Command {
                form: CommandForm::Shell { command, .. },
                ..
            } => command.clone(),
            HandlerKind::Command {
                form: CommandForm::Exec { program, args },
                ..
            } => {
                let mut text = program.clone();
                for arg in args {
                    text.push(' ');
                    text.push_str(arg);
                }
                text
            }
            HandlerKind::Http { url, .. } => url.clone(),
            HandlerKind::Callback { callback_id } => format!("sdk:{callback_id}"),
            HandlerKind::Unsupported { kind } => format!("<{kind} hook>"),
        }
    }

    /// Whether dsh's hook trust treats this handler as the user's own
    /// (user, managed or `--settings` file, or a plugin the user enabled)
    /// rather than as a project hook that needs the user's trust. A plugin
    /// enabled only by a project file is a project hook.
    pub fn is_user_installed(&self) -> bool {
        match &self.plugin {
            Some(plugin) => plugin.scope == PluginScope::User,
            None => match self.source {
                SettingsSource::Managed | SettingsSource::Flag | SettingsSource::User => true,
                SettingsSource::Local | SettingsSource::Project => false,
            },
        }
    }

    /// The key identical handlers share (Claude Code dedups on the command,
    /// but never across a plugin and settings or another plugin: `pl_basic`).
    pub(crate) fn dedup_key(&self) -> String {
        let key = self.command_dedup_key();
        match &self.plugin {
            Some(plugin) => format!("plugin:{}\u{0}{key}", plugin.id),
            None => key,
        }
    }

    fn command_dedup_key(&self) -> String {
        match &self.kind {
            HandlerKind::Command { form, .. } => match form {
                CommandForm::Shell { command, .. } => format!("command:{command}"),
                CommandForm::Exec { program, args } => {
                    format!("exec:{program}\u{0}{}", args.join("\u{0}"))
                }
            },
            HandlerKind::Http { url, .. } => format!("http:{url}"),
            HandlerKind::Callback { callback_id } => format!("sdk:{callback_id}"),
            HandlerKind::Unsupported { kind } => format!("unsupported:{kind}:{}", self.origin),
        }
    }

    /// Its row for `dsh hooks list`.
    pub fn entry(&self) -> HookEntry {
        let handler_text = match &self.kind {
            HandlerKind::Command { is_async, form } => {
                let form_text = match form {
                    CommandForm::Shell { .. } => "command",
                    CommandForm::Exec { .. } => "exec",
                };
                format!(
                    "{form_text}{}: {}",
                    if *is_async { " (async)" } else { "" },
                    self.command_text()
                )
            }
            HandlerKind::Http { url, .. } => format!("http: {url}"),
            HandlerKind::Callback { callback_id } => format!("sdk callback: {callback_id}"),
            HandlerKind::Unsupported { kind } => kind.clone(),
        };
        let timeout = match self.event {
            Some(event) => self.effective_timeout(event),
            None => self.timeout.unwrap_or(Duration::from_secs(600)),
        };
        HookEntry {
            event: self.event_name.clone(),
            matcher: self.matcher.clone(),
            handler: handler_text,
            timeout_secs: timeout.as_secs_f64(),
            origin: self.origin.clone(),
            status: self.status.listing(),
            plugin: self.plugin.as_ref().map(|p| p.id.clone()),
        }
    }

    /// The timeout this handler runs with on `event`.
    pub fn effective_timeout(&self, event: HookEvent) -> Duration {
        self.timeout.unwrap_or_else(|| event.default_timeout())
    }

    pub(crate) fn matches(&self, subject: Option<&str>) -> bool {
        match subject {
            Some(subject) => self.compiled.matches(subject),
            None => true,
        }
    }
}

/// One row of `dsh hooks list`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HookEntry {
    /// The event name as configured.
    pub event: String,
    /// The matcher as configured.
    pub matcher: Option<String>,
    /// The handler (`command: …`, `http: …`, `prompt`).
    pub handler: String,
    /// The timeout in seconds it would run with.
    pub timeout_secs: f64,
    /// `<file>#hooks.<Event>[i].hooks[j]`.
    pub origin: String,
    /// `active`, `disabled: why` or `unsupported: why`.
    pub status: String,
    /// `<plugin>@<marketplace>` for a plugin hook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
}

/// Where an SDK hook's firing goes: the front end that speaks the control
/// protocol.
#[async_trait::async_trait]
pub trait HookCallbacks: Send + Sync {
    /// Sends `hook_callback` for `callback_id` with the hook's stdin JSON
    /// and returns the application's answer (the hook output JSON), or why
    /// there is none.
    async fn call(
        &self,
        callback_id: &str,
        input: &dsh_protocol::ExactJson,
        tool_use_id: &str,
    ) -> Result<serde_json::Value, String>;
}

/// The transport of a configuration's SDK hooks.
#[derive(Clone)]
pub struct SdkCallbacks(pub(crate) Arc<dyn HookCallbacks>);

impl std::fmt::Debug for SdkCallbacks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SdkCallbacks")
    }
}
