//! Discovery of Gemini CLI's hook configuration: `~/.gemini/settings.json`
//! then the project's `.gemini/settings.json`, concatenated (user first) and
//! deduplicated by `name:command`; `hooksConfig.enabled` / `disabled`;
//! Gemini's own trusted folders (`~/.gemini/trustedFolders.json`).

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::event::GeminiEvent;
use dsh_hooks::entries::{FileProblem, Layer, OffReason};
use dsh_hooks::json_file::{self, JsonFileError};
use dsh_hooks::project_settings::{HeldBack, ProjectSettings};

mod wire;

use wire::{SettingsWire, TrustedFoldersWire};

/// Gemini's default hook timeout, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// A discovery error: a settings file that exists but cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A settings file could not be read or parsed.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
}

/// Where the bridge looks.
#[derive(Debug, Clone)]
pub struct GeminiDiscovery {
    /// The project directory (session cwd).
    pub cwd: PathBuf,
    /// `$HOME` (the user settings are `~/.gemini/settings.json`).
    pub home: PathBuf,
    /// `GEMINI_CLI_TRUST_WORKSPACE=true`: Gemini trusts the folder whatever
    /// `trustedFolders.json` says.
    pub trust_workspace: bool,
    /// The shell hooks run under (Gemini: `bash`).
    pub shell: PathBuf,
    /// Whether the project's `hooksConfig` applies (a trusted workspace).
    pub project_settings: ProjectSettings,
    /// The session's reader: each settings file is read from disk once.
    pub files: dsh_files::ConfigFiles,
}

impl GeminiDiscovery {
    /// Discovery for a project and home.
    pub fn new(cwd: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        GeminiDiscovery {
            cwd: cwd.into(),
            home: home.into(),
            trust_workspace: false,
            shell: PathBuf::from("bash"),
            project_settings: ProjectSettings::Apply,
            files: dsh_files::ConfigFiles::default(),
        }
    }

    /// `~/.gemini/settings.json`.
    pub fn user_settings(&self) -> PathBuf {
        self.home.join(".gemini").join("settings.json")
    }

    /// `<project>/.gemini/settings.json`.
    pub fn project_settings(&self) -> PathBuf {
        self.cwd.join(".gemini").join("settings.json")
    }

    /// `~/.gemini/trustedFolders.json`.
    pub fn trusted_folders(&self) -> PathBuf {
        self.home.join(".gemini").join("trustedFolders.json")
    }
}

/// Whether a configured hook runs.
pub type EntryStatus = dsh_hooks::entries::EntryStatus<Off>;

/// Why Gemini CLI does not run a configured hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Off {
    /// `hooksConfig.disabled` names it.
    DisabledByName,
    /// `hooksConfig.enabled: false`.
    HooksDisabled,
    /// Gemini does not trust the project folder, so Gemini runs no hook.
    FolderUntrusted,
    /// Same `name:command` as an earlier hook: Gemini runs it once.
    Duplicate,
}

impl OffReason for Off {
    fn listing(&self) -> String {
        match self {
            Off::DisabledByName => "disabled (hooksConfig.disabled)",
            Off::HooksDisabled => "disabled (hooksConfig.enabled: false)",
            Off::FolderUntrusted => "not run (folder not trusted by Gemini CLI)",
            Off::Duplicate => "duplicate (runs once)",
        }
        .to_owned()
    }

    /// dsh's own trust: the reason alone.
    fn excluded(why: &str) -> String {
        why.to_owned()
    }
}

/// One configured Gemini hook.
#[derive(Debug, Clone, PartialEq)]
pub struct Handler {
    /// The event.
    pub event: GeminiEvent,
    /// The file's layer (`~/.gemini` or the project's `.gemini`).
    pub source: Layer,
    /// The settings file.
    pub file: PathBuf,
    /// `<file>#hooks.<Event>[i].hooks[j]`.
    pub origin: String,
    /// The group's matcher as written.
    pub matcher: Option<String>,
    /// The group's `sequential`.
    pub sequential: bool,
    /// `name` (Gemini names the hook by its command when absent).
    pub name: Option<String>,
    /// The command as configured.
    pub command: String,
    /// The timeout in milliseconds.
    pub timeout_ms: u64,
    /// The per-hook `env` object, in file order.
    pub env: Vec<(String, String)>,
    /// Whether it runs.
    pub status: EntryStatus,
    /// Position in configuration order (after concatenation).
    pub order: usize,
}

impl Handler {
    /// The name Gemini reports and `hooksConfig.disabled` matches.
    pub fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.command)
    }

    /// Gemini's deduplication key, `name:command`.
    pub fn dedup_key(&self) -> String {
        format!("{}:{}", self.display_name(), self.command)
    }
}

/// Gemini's verdict on the project folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderTrust {
    /// Trusted (`TRUST_FOLDER`, `TRUST_PARENT`, folder trust off, or
    /// `GEMINI_CLI_TRUST_WORKSPACE=true`).
    Trusted,
    /// Not trusted: Gemini would refuse to start, so no Gemini hook runs.
    Untrusted,
}

/// Gemini's discovered hook configuration.
#[derive(Debug, Clone)]
pub struct GeminiConfig {
    /// Where it was found.
    pub discovery: GeminiDiscovery,
    /// Every configured hook in Gemini's order (user file first).
    pub handlers: Vec<Handler>,
    /// Gemini's verdict on the project folder.
    pub folder: FolderTrust,
    /// Event names Gemini skips (`Invalid hook event name`).
    pub skipped: Vec<FileProblem>,
    /// Whether the project's `.gemini/settings.json` is the user's own (the
    /// project is `$HOME`): the file is then read once, as user settings.
    pub project_is_home: bool,
    /// Project settings not applied: the workspace is not trusted.
    pub held_back: Vec<HeldBack>,
    /// Notices about settings read and ignored.
    pub ignored: Vec<String>,
}

impl GeminiConfig {
    /// Every configured hook.
    pub fn handlers(&self) -> &[Handler] {
        &self.handlers
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.handlers.is_empty()
    }

    /// Gemini CLI does not trust the folder: what that means and the exact
    /// line that trusts it.
    pub fn untrusted_folder_notice(&self) -> String {
        format!(
            "{cwd} is not trusted by Gemini CLI, so its Gemini hooks do not run (Gemini CLI would not start there); to trust it, add `\"{cwd}\": \"TRUST_FOLDER\"` to {file} (or set GEMINI_CLI_TRUST_WORKSPACE=true)",
            cwd = self.discovery.cwd.display(),
            file = self.discovery.trusted_folders().display()
        )
    }

    /// Whether Gemini CLI trusts the project folder.
    pub fn folder_trusted(&self) -> bool {
        self.folder == FolderTrust::Trusted
    }

    /// What the user is told at start-up.
    pub fn notices(&self) -> Vec<String> {
        let mut notices = Vec::new();
        // Only where the project itself configures Gemini hooks: a user's
        // own hooks are no reason to name every other folder.
        if self.folder == FolderTrust::Untrusted
            && self
                .handlers
                .iter()
                .any(|handler| handler.source == Layer::Project)
        {
            notices.push(self.untrusted_folder_notice());
        }
        notices.extend(self.ignored.iter().cloned());
        notices.extend(self.skipped.iter().map(FileProblem::notice));
        notices
    }
}

/// A hint when `name` is a Claude Code event name.
pub fn claude_hint(name: &str) -> String {
    let gemini = match name {
        "PreToolUse" => "BeforeTool",
        "PostToolUse" => "AfterTool",
        "UserPromptSubmit" => "BeforeAgent",
        "Stop" => "AfterAgent",
        "PreCompact" => "PreCompress",
        _ => return String::new(),
    };
    format!(" (a Claude Code event name; Gemini's is `{gemini}`)")
}

/// Reads a settings file as `T`: `None` when it does not exist; JSON that
/// is not an object (or not a `T`) reads as `T::default()`.
pub fn read_document<T: DeserializeOwned + Default>(path: &Path) -> Result<Option<T>, ConfigError> {
    read_document_with(&dsh_files::ConfigFiles::default(), path)
}

/// [`read_document`] through the session's reader.
pub fn read_document_with<T: DeserializeOwned + Default>(
    files: &dsh_files::ConfigFiles,
    path: &Path,
) -> Result<Option<T>, ConfigError> {
    // Gemini CLI accepts comments in its settings files, and blank ones.
    let prepare = |text: String| Some(strip_comments(&text)).filter(|text| !text.trim().is_empty());
    json_file::read_as(files, path, prepare).map_err(|error| ConfigError::Invalid {
        path: path.to_owned(),
        message: match error {
            JsonFileError::Read(error) => error.to_string(),
            JsonFileError::Syntax(message) => message,
        },
    })
}

/// Loads the configuration.
pub fn load(discovery: &GeminiDiscovery) -> Result<GeminiConfig, ConfigError> {
    let user_path = discovery.user_settings();
    let project_path = discovery.project_settings();
    let project_is_home = same_file(&user_path, &project_path);
    let mut layers = Vec::new();
    if let Some(doc) = read_document_with::<SettingsWire>(&discovery.files, &user_path)? {
        layers.push((Layer::User, user_path.clone(), doc));
    }
    if !project_is_home && let Some(doc) = read_document_with(&discovery.files, &project_path)? {
        layers.push((Layer::Project, project_path.clone(), doc));
    }
    // hooksConfig: the project's `enabled` wins over the user's; the
    // `disabled` lists add up.
    let mut enabled = true;
    let mut disabled: Vec<String> = Vec::new();
    let mut folder_trust_enabled = true;
    let mut held_back = Vec::new();
    let mut ignored = Vec::new();
    for (source, file, doc) in &layers {
        let project = *source == Layer::Project;
        // A repository's own `hooksConfig` switches the user's hooks off
        // (or back on): it waits for a trusted workspace.
        let hold = project && discovery.project_settings == ProjectSettings::HoldBack;
        let hooks_config = doc.hooks_config.as_ref();
        if let Some(value) = hooks_config.and_then(|config| config.enabled.0) {
            if hold {
                held_back.push(HeldBack {
                    key: "hooksConfig.enabled".to_owned(),
                    file: file.clone(),
                });
            } else {
                enabled = value;
            }
        }
        if let Some(names) = hooks_config.and_then(|config| config.disabled.0.as_ref()) {
            if hold {
                held_back.push(HeldBack {
                    key: "hooksConfig.disabled".to_owned(),
                    file: file.clone(),
                });
            } else {
                disabled.extend(names.iter().filter_map(|name| name.0.clone()));
            }
        }
        if let Some(value) = doc
            .security
            .as_ref()
            .and_then(|security| security.folder_trust.as_ref())
            .and_then(|folder_trust| folder_trust.enabled.0)
        {
            // Folder trust protects the user from the folder: only the
            // user's own settings may switch it off.
            if project {
                ignored.push(format!(
                    "{}: security.folderTrust.enabled is ignored in a project's settings (only ~/.gemini/settings.json may switch folder trust off)",
                    file.display()
                ));
            } else {
                folder_trust_enabled = value;
            }
        }
    }
    let folder = if !folder_trust_enabled || discovery.trust_workspace {
        FolderTrust::Trusted
    } else {
        folder_trust(discovery)?
    };
    let mut handlers: Vec<Handler> = Vec::new();
    let mut skipped = Vec::new();
    for (source, file, doc) in &layers {
        let Some(events) = &doc.hooks else {
            continue;
        };
        for (name, groups) in &events.0 {
            let Some(event) = GeminiEvent::parse(name) else {
                let hint = claude_hint(name);
                let message =
                    format!("invalid hook event name {name:?}: Gemini CLI skips it{hint}");
                skipped.push(FileProblem::new(file, message));
                continue;
            };
            let Some(groups) = &groups.0 else {
                continue;
            };
            for (i, group) in groups.iter().enumerate() {
                let Some(group) = &group.0 else {
                    continue;
                };
                let matcher = group.matcher.0.clone();
                let sequential = group.sequential.0.unwrap_or(false);
                let Some(hooks) = &group.hooks.0 else {
                    continue;
                };
                for (j, hook) in hooks.iter().enumerate() {
                    // Only command hooks run from settings; Gemini drops an
                    // entry without `type` or `command` silently.
                    let Some(hook) = &hook.0 else {
                        continue;
                    };
                    if hook.kind.0.as_deref() != Some("command") {
                        continue;
                    }
                    let Some(command) = &hook.command.0 else {
                        continue;
                    };
                    let env = json_file::env_pairs(hook.env.as_ref().map(|env| &env.0));
                    let timeout_ms = hook
                        .timeout
                        .0
                        .filter(|t| *t > 0)
                        .unwrap_or(DEFAULT_TIMEOUT_MS);
                    handlers.push(Handler {
                        event,
                        source: *source,
                        file: file.clone(),
                        origin: format!("{}#hooks.{name}[{i}].hooks[{j}]", file.display()),
                        matcher: matcher.clone(),
                        sequential,
                        name: hook.name.0.clone(),
                        command: command.to_owned(),
                        timeout_ms,
                        env,
                        status: EntryStatus::Active,
                        order: 0,
                    });
                }
            }
        }
    }
    // Gemini concatenates per event, user first; our list is already in
    // file order, so order it by event keeping each event's file order.
    handlers.sort_by_key(|handler| handler.event);
    let mut seen = std::collections::HashSet::new();
    for (order, handler) in handlers.iter_mut().enumerate() {
        handler.order = order;
        let key = (handler.event, handler.dedup_key());
        handler.status = EntryStatus::Off(if folder == FolderTrust::Untrusted {
            Off::FolderUntrusted
        } else if !enabled {
            Off::HooksDisabled
        } else if disabled.iter().any(|name| name == handler.display_name()) {
            Off::DisabledByName
        } else if !seen.insert(key) {
            Off::Duplicate
        } else {
            continue;
        });
    }
    Ok(GeminiConfig {
        discovery: discovery.clone(),
        handlers,
        folder,
        skipped,
        project_is_home,
        held_back,
        ignored,
    })
}

/// `text` without JSON comments (`// …` and `/* … */` outside strings), as
/// Gemini CLI reads its settings files. Comments become spaces (newlines
/// kept), so positions in errors stay right.
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                out.push(' ');
                for next in chars.by_ref() {
                    if next == '\n' {
                        out.push('\n');
                        break;
                    }
                    out.push(' ');
                }
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
                let mut last = ' ';
                for next in chars.by_ref() {
                    out.push(if next == '\n' { '\n' } else { ' ' });
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (fs_err::canonicalize(a), fs_err::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Gemini's folder trust for the project, from `trustedFolders.json`:
/// `TRUST_FOLDER` trusts the folder and everything below it, `TRUST_PARENT`
/// the folder's parent and everything below that, `DO_NOT_TRUST` nothing;
/// the most specific rule wins. No rule (or no file): not trusted.
fn folder_trust(discovery: &GeminiDiscovery) -> Result<FolderTrust, ConfigError> {
    let trusted = discovery.trusted_folders();
    let Some(rules) = read_document_with::<TrustedFoldersWire>(&discovery.files, &trusted)? else {
        return Ok(FolderTrust::Untrusted);
    };
    let cwd = fs_err::canonicalize(&discovery.cwd).unwrap_or_else(|_| discovery.cwd.clone());
    let mut best: Option<(usize, bool)> = None;
    for (path, rule) in rules.0 {
        let path = PathBuf::from(path);
        let path = fs_err::canonicalize(&path).unwrap_or(path);
        let (root, trusts) = match rule.0.as_deref() {
            Some("TRUST_FOLDER") => (path, true),
            Some("TRUST_PARENT") => match path.parent() {
                Some(parent) => (parent.to_owned(), true),
                None => continue,
            },
            Some("DO_NOT_TRUST") => (path, false),
            _ => continue,
        };
        if cwd.starts_with(&root) {
            let depth = root.components().count();
            if best.is_none_or(|(d, _)| depth >= d) {
                best = Some((depth, trusts));
            }
        }
    }
    Ok(match best {
        Some((_, true)) => FolderTrust::Trusted,
        Some((_, false)) | None => FolderTrust::Untrusted,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn setup(user: &str, project: &str, trusted: bool) -> (tempfile::TempDir, GeminiDiscovery) {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let proj = root.path().join("proj");
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::create_dir_all(proj.join(".gemini")).unwrap();
        std::fs::write(home.join(".gemini/settings.json"), user).unwrap();
        std::fs::write(proj.join(".gemini/settings.json"), project).unwrap();
        if trusted {
            std::fs::write(
                home.join(".gemini/trustedFolders.json"),
                serde_json::json!({ proj.display().to_string(): "TRUST_FOLDER" }).to_string(),
            )
            .unwrap();
        }
        let discovery = GeminiDiscovery::new(proj, home);
        (root, discovery)
    }

    fn hook(command: &str, name: Option<&str>) -> Value {
        let mut hook = serde_json::json!({"type": "command", "command": command});
        if let Some(name) = name {
            hook["name"] = name.into();
        }
        hook
    }

    #[test]
    fn user_hooks_come_first_and_identical_ones_run_once() {
        let user = serde_json::json!({"hooks": {"BeforeTool": [{"hooks": [hook("u", None), hook("both", Some("b"))]}]}});
        let project = serde_json::json!({"hooks": {"BeforeTool": [{"sequential": true, "hooks": [hook("both", Some("b")), hook("p", Some("P")), hook("off", Some("off"))]}]},
            "hooksConfig": {"disabled": ["off"]}});
        let (_root, discovery) = setup(&user.to_string(), &project.to_string(), true);
        let config = load(&discovery).unwrap();
        let seen: Vec<(&str, String)> = config
            .handlers
            .iter()
            .map(|h| (h.command.as_str(), h.status.listing()))
            .collect();
        assert_eq!(
            seen,
            [
                ("u", "active".to_owned()),
                ("both", "active".to_owned()),
                ("both", "duplicate (runs once)".to_owned()),
                ("p", "active".to_owned()),
                ("off", "disabled (hooksConfig.disabled)".to_owned())
            ]
        );
        assert!(config.handlers[3].sequential);
        assert_eq!(config.handlers[0].timeout_ms, DEFAULT_TIMEOUT_MS);
    }

    #[test]
    fn comments_are_allowed_as_gemini_allows_them() {
        let text =
            "{\n  // a comment \"with quotes\"\n  \"hooks\": {/* x */}, \"a\": \"// kept\"\n}";
        let stripped = strip_comments(text);
        let value: Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(value["a"], "// kept");
        assert_eq!(stripped.lines().count(), text.lines().count());
        assert_eq!(stripped.chars().count(), text.chars().count());
    }

    #[test]
    fn project_enabled_false_disables_user_hooks_too() {
        let user = serde_json::json!({"hooks": {"AfterTool": [{"hooks": [hook("u", None)]}]}});
        let project = serde_json::json!({"hooksConfig": {"enabled": false}});
        let (_root, discovery) = setup(&user.to_string(), &project.to_string(), true);
        let config = load(&discovery).unwrap();
        assert_eq!(
            config.handlers[0].status,
            EntryStatus::Off(Off::HooksDisabled)
        );
    }

    #[test]
    fn an_untrusted_folder_runs_no_gemini_hook_and_claude_names_are_skipped() {
        let project = serde_json::json!({"hooks": {"PreToolUse": [{"hooks": [hook("x", None)]}],
            "SessionStart": [{"hooks": [hook("y", None)]}]}});
        let (_root, mut discovery) = setup("{}", &project.to_string(), false);
        let config = load(&discovery).unwrap();
        assert_eq!(config.folder, FolderTrust::Untrusted);
        assert_eq!(
            config.handlers[0].status,
            EntryStatus::Off(Off::FolderUntrusted)
        );
        assert!(config.skipped[0].message.contains(r#"name "PreToolUse": "#));
        assert!(config.notices().iter().any(|n| n.contains("BeforeTool")));
        discovery.trust_workspace = true;
        assert_eq!(
            load(&discovery).unwrap().handlers[0].status,
            EntryStatus::Active
        );
    }

    #[test]
    fn a_project_cannot_switch_folder_trust_off_for_itself() {
        let project = serde_json::json!({"security": {"folderTrust": {"enabled": false}},
            "hooks": {"BeforeTool": [{"hooks": [hook("x", None)]}]}});
        let (_root, discovery) = setup("{}", &project.to_string(), false);
        let config = load(&discovery).unwrap();
        assert_eq!(config.folder, FolderTrust::Untrusted);
        assert_eq!(
            config.handlers[0].status,
            EntryStatus::Off(Off::FolderUntrusted)
        );
        assert!(
            config
                .notices()
                .iter()
                .any(|n| n.contains("security.folderTrust.enabled is ignored")),
            "{:?}",
            config.notices()
        );
        // The user's own settings still may.
        let user = serde_json::json!({"security": {"folderTrust": {"enabled": false}}});
        let (_root, discovery) = setup(&user.to_string(), &project.to_string(), false);
        assert_eq!(load(&discovery).unwrap().folder, FolderTrust::Trusted);
    }

    #[test]
    fn an_untrusted_workspace_keeps_its_hooks_config_to_itself() {
        let user =
            serde_json::json!({"hooks": {"AfterTool": [{"hooks": [hook("u", Some("guard"))]}]}});
        let project = serde_json::json!({"hooksConfig": {"enabled": false, "disabled": ["guard"]}});
        let (_root, mut discovery) = setup(&user.to_string(), &project.to_string(), true);
        discovery.project_settings = ProjectSettings::HoldBack;
        let config = load(&discovery).unwrap();
        assert_eq!(config.handlers[0].status, EntryStatus::Active);
        let keys: Vec<&str> = config.held_back.iter().map(|h| h.key.as_str()).collect();
        assert_eq!(keys, ["hooksConfig.enabled", "hooksConfig.disabled"]);
    }

    #[test]
    fn timeouts_are_milliseconds_and_env_is_kept() {
        let project = serde_json::json!({"hooks": {"BeforeTool": [{"matcher": "shell", "hooks": [
            {"type": "command", "command": "c", "timeout": 1000, "env": {"A": "1", "B": 2}},
            {"command": "no type"}]}]}});
        let (_root, discovery) = setup("{}", &project.to_string(), true);
        let config = load(&discovery).unwrap();
        assert_eq!(config.handlers.len(), 1);
        let handler = &config.handlers[0];
        assert_eq!(handler.timeout_ms, 1000);
        assert_eq!(
            handler.env,
            [("A".into(), "1".into()), ("B".into(), "2".into())]
        );
        assert_eq!(handler.matcher.as_deref(), Some("shell"));
        assert!(handler.origin.ends_with("#hooks.BeforeTool[0].hooks[0]"));
    }

    /// Each key is read on its own: one of the wrong type counts as
    /// absent, an entry that is not an object is skipped but keeps its
    /// place in the numbering, and events keep their file order.
    #[test]
    fn keys_of_the_wrong_type_are_absent_and_entries_keep_their_places() {
        let project = serde_json::json!({
        "hooksConfig": {"enabled": "no", "disabled": ["gone", 3]},
        "hooks": {
            "AfterTool": [{"hooks": [hook("late", None)]}],
            "BeforeTool": [["m", true, [{"type": "command", "command": "positional"}]], {"matcher": 5, "sequential": "yes", "hooks": [3,
                {"type": "command", "command": "a", "timeout": "x", "name": 7},
                {"type": "command", "command": "b", "name": "gone", "timeout": 2.5},
                {"type": "command", "command": 4}]}],
            "SessionStart": {"hooks": [hook("not a list", None)]}
        }});
        let (_root, discovery) = setup("[1]", &project.to_string(), true);
        let config = load(&discovery).unwrap();
        let seen: Vec<_> = config
            .handlers
            .iter()
            .map(|h| {
                (
                    h.command.as_str(),
                    h.origin.rsplit('#').next().unwrap_or_default(),
                    h.matcher.as_deref(),
                    h.sequential,
                    h.timeout_ms,
                    h.status.listing(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "a",
                    "hooks.BeforeTool[1].hooks[1]",
                    None,
                    false,
                    DEFAULT_TIMEOUT_MS,
                    "active".to_owned()
                ),
                (
                    "b",
                    "hooks.BeforeTool[1].hooks[2]",
                    None,
                    false,
                    DEFAULT_TIMEOUT_MS,
                    "disabled (hooksConfig.disabled)".to_owned()
                ),
                (
                    "late",
                    "hooks.AfterTool[0].hooks[0]",
                    None,
                    false,
                    DEFAULT_TIMEOUT_MS,
                    "active".to_owned()
                ),
            ]
        );
        assert_eq!(config.handlers[0].name, None);
    }

    /// A trust file that is not an object trusts nothing (no error); a
    /// settings file that is not JSON is an error naming the file.
    #[test]
    fn a_trust_file_of_another_shape_trusts_nothing_and_bad_json_is_an_error() {
        let (root, discovery) = setup("{}", "{}", false);
        let home = root.path().join("home/.gemini");
        std::fs::write(home.join("trustedFolders.json"), r#"["TRUST_FOLDER"]"#).unwrap();
        assert!(!load(&discovery).unwrap().folder_trusted());
        std::fs::write(home.join("settings.json"), "{ nope").unwrap();
        let fresh = GeminiDiscovery::new(&discovery.cwd, &discovery.home);
        match load(&fresh) {
            Err(ConfigError::Invalid { path, .. }) => assert!(path.ends_with("settings.json")),
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }
}
