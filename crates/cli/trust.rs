//! dsh's trust for project hooks: a project's `.claude/settings.json`,
//! `.claude/settings.local.json` and `.codex/…` can run arbitrary commands,
//! so dsh asks before running the ones the user has not seen.
//!
//! Unlike Claude Code's folder-level dialog, trust is per hook: each project
//! hook is keyed by a SHA-256 of its definition (dialect, file, event,
//! matcher, handler, timeout, `if`) and of the contents of the script files
//! its command names. A changed definition or script is a new hash and asks
//! again. Trusted hashes live in `$DSH_HOME/trust.json`.
//!
//! User-level, managed and `--settings` hooks are trusted (the user put them
//! there). Codex's own `trusted_hash` entries count as trust. Interactive
//! sessions ask once ([`ask`]); headless runs keep Claude Code's behaviour
//! (the folder counts as trusted) but name the untrusted hooks on stderr, or
//! refuse them when strict ([`headless`]). `dsh replay` runs everything.
//!
//! Not here: the bridges' own loading (they only learn which origins to skip,
//! through [`HookSources::excluded_hooks`]).

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use dsh_hooks_claude::config::SettingsSource;
use dsh_hooks_claude::{ClaudeConfig, ClaudeDiscovery};
use dsh_hooks_codex::config::sha256_hex;
use dsh_hooks_codex::{CodexConfig, CodexDiscovery, EntryStatus, LayerSource, TrustState};
use dsh_protocol::Dialect;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::wiring::HookSources;

/// The status reason of a hook dsh skips because it is not trusted.
pub const NOT_TRUSTED: &str = "project hook not trusted (`dsh hooks trust` trusts it)";

/// The file under `$DSH_HOME` that holds trusted hashes.
pub const TRUST_FILE: &str = "trust.json";

/// Whether a hook may run without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrustStatus {
    /// User-level, managed or `--settings`: the user configured it.
    UserLevel,
    /// A project hook whose current hash is in `trust.json`.
    Trusted,
    /// A project hook Codex itself trusts (`trusted_hash` matches).
    TrustedByCodex,
    /// A project hook never trusted.
    Untrusted,
    /// A project hook trusted before whose definition or script changed since.
    Changed,
}

impl TrustStatus {
    /// Whether it may run without asking.
    pub fn is_trusted(self) -> bool {
        matches!(
            self,
            TrustStatus::UserLevel | TrustStatus::Trusted | TrustStatus::TrustedByCodex
        )
    }

    /// A short label.
    pub fn as_str(self) -> &'static str {
        match self {
            TrustStatus::UserLevel => "user-level",
            TrustStatus::Trusted => "trusted",
            TrustStatus::TrustedByCodex => "trusted by codex",
            TrustStatus::Untrusted => "untrusted",
            TrustStatus::Changed => "changed since trusted",
        }
    }
}

/// One configured hook, with its trust identity.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectHook {
    /// Which bridge runs it.
    pub dialect: Dialect,
    /// The event name as configured.
    pub event: String,
    /// The matcher as configured.
    pub matcher: Option<String>,
    /// The command (or handler description) as recorded in the log.
    pub command: String,
    /// The configuration file.
    pub file: PathBuf,
    /// `<file>#hooks.<Event>[i].hooks[j]`.
    pub origin: String,
    /// `sha256:` of the definition and the scripts it names.
    pub hash: String,
    /// Script files the command names (their contents are in the hash).
    pub scripts: Vec<PathBuf>,
    /// Whether it may run.
    pub status: TrustStatus,
    /// Whether the bridge would run it at all (active, not disabled or unsupported).
    pub active: bool,
}

/// A project hook that needs the user's trust before it runs.
pub type UntrustedHook = ProjectHook;

/// One trusted hash in `trust.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The dialect (`claude`, `codex`).
    pub dialect: String,
    /// The configuration file.
    pub file: PathBuf,
    /// The origin when it was trusted.
    pub origin: String,
    /// The event.
    pub event: String,
    /// The command.
    pub command: String,
    /// When (RFC 3339).
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    #[serde(default)]
    hooks: BTreeMap<String, TrustRecord>,
}

/// `$DSH_HOME/trust.json`: the hashes the user trusted.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    file: TrustFile,
}

impl TrustStore {
    /// Reads the store under `dsh_home` (empty when the file does not exist).
    pub fn load(dsh_home: &Path) -> anyhow::Result<TrustStore> {
        let path = dsh_home.join(TRUST_FILE);
        let file = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).with_context(|| {
                format!(
                    "{} is not a dsh trust file (fix or delete it)",
                    path.display()
                )
            })?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => TrustFile {
                version: 1,
                hooks: BTreeMap::new(),
            },
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        Ok(TrustStore { path, file })
    }

    /// Writes the store (atomically: a temp file renamed over it).
    pub fn save(&self) -> anyhow::Result<()> {
        if let Some(dir) = self.path.parent() {
            fs_err::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(&self.file)?;
        let tmp = self.path.with_extension("json.tmp");
        fs_err::write(&tmp, format!("{text}\n"))?;
        fs_err::rename(&tmp, &self.path)?;
        Ok(())
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `hash` is trusted.
    pub fn contains(&self, hash: &str) -> bool {
        self.file.hooks.contains_key(hash)
    }

    /// Whether some other hash was trusted for this origin (it changed since).
    pub fn trusted_before(&self, origin: &str) -> bool {
        self.file
            .hooks
            .values()
            .any(|record| record.origin == origin)
    }

    /// Trusts `hook`'s current hash, replacing what was trusted for its origin.
    pub fn trust(&mut self, hook: &ProjectHook) {
        self.file
            .hooks
            .retain(|_, record| record.origin != hook.origin);
        self.file.hooks.insert(
            hook.hash.clone(),
            TrustRecord {
                dialect: hook.dialect.as_str().to_owned(),
                file: hook.file.clone(),
                origin: hook.origin.clone(),
                event: hook.event.clone(),
                command: hook.command.clone(),
                trusted_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            },
        );
    }

    /// Forgets `hook` (its hash and anything trusted for its origin);
    /// whether something was removed.
    pub fn untrust(&mut self, hook: &ProjectHook) -> bool {
        let before = self.file.hooks.len();
        self.file
            .hooks
            .retain(|hash, record| *hash != hook.hash && record.origin != hook.origin);
        before != self.file.hooks.len()
    }

    /// Forgets every hash trusted for files in `project` (files below it);
    /// how many were removed.
    pub fn untrust_project(&mut self, project: &Path) -> usize {
        let before = self.file.hooks.len();
        self.file
            .hooks
            .retain(|_, record| !record.file.starts_with(project));
        before - self.file.hooks.len()
    }
}

/// Both dialects' configurations for `sources`, as the session would load them.
pub(crate) fn load_configs(sources: &HookSources) -> anyhow::Result<(ClaudeConfig, CodexConfig)> {
    let mut discovery =
        ClaudeDiscovery::new(sources.cwd.clone(), sources.home.clone(), &sources.dsh_home);
    discovery.extra_settings = sources.claude_settings.clone();
    discovery.plugin_dirs = sources.claude_plugin_dirs.clone();
    let claude = dsh_hooks_claude::load(&discovery)
        .context("cannot load the Claude Code hook configuration")?;
    let codex = dsh_hooks_codex::load(&CodexDiscovery::from_env(
        sources.cwd.clone(),
        sources.home.clone(),
    ))
    .context("cannot load the Codex hook configuration")?;
    Ok((claude, codex))
}

/// Every configured hook of both dialects with its trust status, in
/// configuration order (Claude Code, then Codex).
pub fn all_hooks(sources: &HookSources, store: &TrustStore) -> anyhow::Result<Vec<ProjectHook>> {
    let (claude, codex) = load_configs(sources)?;
    Ok(hooks_of(sources, &claude, &codex, store))
}

/// [`all_hooks`] over configurations already loaded.
pub(crate) fn hooks_of(
    sources: &HookSources,
    claude: &ClaudeConfig,
    codex: &CodexConfig,
    store: &TrustStore,
) -> Vec<ProjectHook> {
    let mut hooks = Vec::new();
    let entries = claude.entries();
    for (handler, entry) in claude.handlers().iter().zip(entries) {
        let project = matches!(
            handler.source,
            SettingsSource::Project | SettingsSource::Local
        );
        let command = handler.command_text();
        let scripts = named_scripts(&command, &sources.cwd);
        let identity = json!({
            "dialect": "claude",
            "file": handler.file,
            "event": entry.event,
            "matcher": entry.matcher,
            "handler": entry.handler,
            "timeout": entry.timeout_secs,
            "if": handler.if_rule,
        });
        let hash = hash_identity(identity, &scripts);
        let status = if !project {
            TrustStatus::UserLevel
        } else {
            store_status(store, &hash, &entry.origin)
        };
        hooks.push(ProjectHook {
            dialect: Dialect::Claude,
            event: entry.event,
            matcher: entry.matcher,
            command,
            file: handler.file.clone(),
            origin: entry.origin,
            hash,
            scripts,
            status,
            active: entry.status == "active",
        });
    }
    for entry in codex.entries() {
        let file = entry
            .origin
            .split_once('#')
            .map(|(file, _)| PathBuf::from(file))
            .unwrap_or_default();
        let command = entry
            .command
            .clone()
            .unwrap_or_else(|| format!("<{} hook>", entry.handler));
        let scripts = named_scripts(&command, &sources.cwd);
        let identity = json!({
            "dialect": "codex",
            "file": file,
            "event": entry.event,
            "matcher": entry.matcher,
            "handler": entry.handler,
            "command": entry.command,
            "timeout": entry.timeout_secs,
            "async": entry.is_async,
            "statusMessage": entry.status_message,
        });
        let hash = hash_identity(identity, &scripts);
        let status = if entry.source != LayerSource::Project {
            TrustStatus::UserLevel
        } else if entry.trust == TrustState::Trusted {
            TrustStatus::TrustedByCodex
        } else {
            store_status(store, &hash, &entry.origin)
        };
        hooks.push(ProjectHook {
            dialect: Dialect::Codex,
            event: entry.event.clone(),
            matcher: entry.matcher.clone(),
            command,
            file,
            origin: entry.origin.clone(),
            hash,
            scripts,
            status,
            active: entry.status == EntryStatus::Active,
        });
    }
    hooks
}

fn store_status(store: &TrustStore, hash: &str, origin: &str) -> TrustStatus {
    if store.contains(hash) {
        TrustStatus::Trusted
    } else if store.trusted_before(origin) {
        TrustStatus::Changed
    } else {
        TrustStatus::Untrusted
    }
}

fn hash_identity(mut identity: Value, scripts: &[PathBuf]) -> String {
    let script_hashes: Vec<Value> = scripts
        .iter()
        .map(|path| {
            let contents = std::fs::read(path).unwrap_or_default();
            json!({"path": path, "sha256": sha256_hex(&contents)})
        })
        .collect();
    if let Value::Object(map) = &mut identity {
        map.insert("scripts".into(), Value::Array(script_hashes));
    }
    sha256_hex(identity.to_string().as_bytes())
}

/// The project hooks that need trust before they run: active, from a
/// project-level file, and neither in `trust.json` (current hash) nor
/// trusted by Codex.
pub fn untrusted_project_hooks(sources: &HookSources) -> anyhow::Result<Vec<UntrustedHook>> {
    let store = TrustStore::load(&sources.dsh_home)?;
    Ok(all_hooks(sources, &store)?
        .into_iter()
        .filter(|hook| hook.active && !hook.status.is_trusted())
        .collect())
}

/// Splits a command line into words the way a reader would (quotes kept
/// together, quote characters removed). Not a shell parser.
pub(crate) fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in command.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            None => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(current);
    }
    words
}

/// Expands `$VAR` and `${VAR}` from the environment (`CLAUDE_PROJECT_DIR` is
/// the project); `None` when a variable is not set.
pub(crate) fn expand_vars(word: &str, project: &Path) -> Option<String> {
    let lookup = |name: &str| -> Option<String> {
        if name == "CLAUDE_PROJECT_DIR" {
            return Some(project.display().to_string());
        }
        std::env::var(name).ok()
    };
    let mut out = String::new();
    let mut rest = word;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, tail) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        if name.is_empty() {
            out.push('$');
            rest = after;
            continue;
        }
        out.push_str(&lookup(name)?);
        rest = tail;
    }
    out.push_str(rest);
    Some(out)
}

/// The script files a command names: words that, once `$VAR`s are expanded,
/// are paths (containing `/`, or existing in the project) to text files.
/// Binaries (ELF) are left out so a system update does not ask again.
pub(crate) fn named_scripts(command: &str, project: &Path) -> Vec<PathBuf> {
    let mut scripts = Vec::new();
    for word in words(command) {
        let Some(expanded) = expand_vars(&word, project) else {
            continue;
        };
        if expanded.is_empty() || expanded.starts_with('-') {
            continue;
        }
        let path = project.join(&expanded);
        if !expanded.contains('/') && !path.is_file() {
            continue;
        }
        if !path.is_file() {
            continue;
        }
        let is_binary = std::fs::File::open(&path)
            .and_then(|mut file| {
                let mut magic = [0u8; 4];
                std::io::Read::read(&mut file, &mut magic).map(|n| n == 4 && magic == *b"\x7fELF")
            })
            .unwrap_or(true);
        if !is_binary && !scripts.contains(&path) {
            scripts.push(path);
        }
    }
    scripts
}

/// A path for people: relative to `project` when below it.
pub(crate) fn show_path(path: &str, project: &Path) -> String {
    let prefix = format!("{}/", project.display());
    match path.strip_prefix(&prefix) {
        Some(rest) => rest.to_owned(),
        None => path.to_owned(),
    }
}

fn describe(out: &mut dyn Write, hooks: &[UntrustedHook], project: &Path) -> std::io::Result<()> {
    for hook in hooks {
        let matcher = hook
            .matcher
            .as_deref()
            .map(|m| format!(" matcher {m:?}"))
            .unwrap_or_default();
        let changed = if hook.status == TrustStatus::Changed {
            " (changed since you trusted it)"
        } else {
            ""
        };
        writeln!(
            out,
            "  [{}] {}{matcher}{changed}\n      {}\n      from {}",
            hook.dialect.as_str(),
            hook.event,
            hook.command,
            show_path(&hook.origin, project)
        )?;
        for script in &hook.scripts {
            writeln!(
                out,
                "      script {}",
                show_path(&script.display().to_string(), project)
            )?;
        }
    }
    Ok(())
}

/// What the user answered at the trust prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Nothing to ask: every project hook is trusted.
    NothingToAsk,
    /// Trusted (stored); they run.
    Trusted,
    /// Declined (or no answer): these origins do not run this session.
    Skipped(Vec<String>),
}

/// The interactive trust prompt: shows the exact commands of the untrusted
/// project hooks, asks once, stores the answer when it is yes. A `no`, an
/// empty answer or end of input skips them for this session (asked again
/// next time). Testable without a tty: pass any reader and writer.
pub fn ask(
    untrusted: &[UntrustedHook],
    store: &mut TrustStore,
    project: &Path,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> anyhow::Result<TrustAnswer> {
    if untrusted.is_empty() {
        return Ok(TrustAnswer::NothingToAsk);
    }
    writeln!(
        output,
        "This project has {} hook(s) you have not trusted yet. They run these commands on your machine:",
        untrusted.len()
    )?;
    describe(output, untrusted, project)?;
    loop {
        write!(
            output,
            "Trust and run them? [y]es / [n]o, skip them this session: "
        )?;
        output.flush()?;
        let mut line = String::new();
        let read = input.read_line(&mut line)?;
        let answer = line.trim().to_ascii_lowercase();
        match answer.as_str() {
            "y" | "yes" => {
                for hook in untrusted {
                    store.trust(hook);
                }
                store.save()?;
                writeln!(output, "Trusted (stored in {}).", store.path().display())?;
                return Ok(TrustAnswer::Trusted);
            }
            _ if read == 0 || matches!(answer.as_str(), "" | "n" | "no") => {
                writeln!(
                    output,
                    "Skipped: these hooks do not run in this session. `dsh hooks trust` trusts them later."
                )?;
                return Ok(TrustAnswer::Skipped(
                    untrusted.iter().map(|hook| hook.origin.clone()).collect(),
                ));
            }
            _ => writeln!(output, "Please answer y or n.")?,
        }
    }
}

/// Whether `DSH_STRICT_HOOKS` asks headless runs to refuse untrusted project hooks.
pub fn strict_from_env() -> bool {
    std::env::var("DSH_STRICT_HOOKS").is_ok_and(|value| {
        matches!(
            value.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

/// Headless trust: Claude Code's behaviour (the folder counts as trusted, so
/// CI keeps working) with the untrusted hooks named on `err`; `strict`
/// refuses to run them instead (an error naming `dsh hooks trust`).
pub fn headless(
    untrusted: &[UntrustedHook],
    strict: bool,
    project: &Path,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    if untrusted.is_empty() {
        return Ok(());
    }
    if strict {
        let mut text = Vec::new();
        describe(&mut text, untrusted, project)?;
        anyhow::bail!(
            "refusing to run {} untrusted project hook(s) (strict hooks: --strict-hooks / DSH_STRICT_HOOKS):\n{}run `dsh hooks trust` in {} to trust them",
            untrusted.len(),
            String::from_utf8_lossy(&text),
            project.display()
        );
    }
    writeln!(
        err,
        "dsh: running {} untrusted project hook(s) (headless runs trust the folder, as Claude Code does; `dsh hooks trust` trusts them, DSH_STRICT_HOOKS=1 refuses them):",
        untrusted.len()
    )?;
    describe(err, untrusted, project)?;
    Ok(())
}

/// Interactive sessions: asks about untrusted project hooks and sets
/// `sources` so that declined ones do not run. Call before `load_hooks`.
pub fn apply_interactive(
    sources: &mut HookSources,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> anyhow::Result<TrustAnswer> {
    let untrusted = untrusted_project_hooks(sources)?;
    let mut store = TrustStore::load(&sources.dsh_home)?;
    let answer = ask(&untrusted, &mut store, &sources.cwd, input, output)?;
    sources.run_untrusted = true;
    if let TrustAnswer::Skipped(origins) = &answer {
        sources.excluded_hooks = origins.clone();
    }
    Ok(answer)
}

/// Headless runs: names (or, strict, refuses) untrusted project hooks and
/// sets `sources` so that the hooks dsh's rules allow run (Codex hooks
/// trusted only by dsh included). Call before `load_hooks`.
pub fn apply_headless(
    sources: &mut HookSources,
    strict: bool,
    err: &mut dyn Write,
) -> anyhow::Result<()> {
    let untrusted = untrusted_project_hooks(sources)?;
    headless(&untrusted, strict, &sources.cwd, err)?;
    sources.run_untrusted = true;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn hook(origin: &str, hash: &str) -> ProjectHook {
        ProjectHook {
            dialect: Dialect::Claude,
            event: "PreToolUse".into(),
            matcher: Some("Bash".into()),
            command: "sh guard.sh".into(),
            file: PathBuf::from("/p/.claude/settings.json"),
            origin: origin.into(),
            hash: hash.into(),
            scripts: Vec::new(),
            status: TrustStatus::Untrusted,
            active: true,
        }
    }

    #[test]
    fn ask_yes_stores_the_hash_and_a_changed_hash_asks_again() {
        let home = tempfile::tempdir().unwrap();
        let mut store = TrustStore::load(home.path()).unwrap();
        let first = hook(
            "/p/.claude/settings.json#hooks.PreToolUse[0].hooks[0]",
            "sha256:aa",
        );
        let mut out = Vec::new();
        let answer = ask(
            std::slice::from_ref(&first),
            &mut store,
            Path::new("/p"),
            &mut std::io::Cursor::new("maybe\ny\n"),
            &mut out,
        )
        .unwrap();
        assert_eq!(answer, TrustAnswer::Trusted);
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("sh guard.sh"), "{shown}");
        assert!(shown.contains("from .claude/settings.json#hooks.PreToolUse[0].hooks[0]"));
        assert!(shown.contains("Please answer y or n."));

        let reloaded = TrustStore::load(home.path()).unwrap();
        assert!(reloaded.contains("sha256:aa"));
        // The same origin with another hash: changed, not trusted.
        assert_eq!(
            store_status(&reloaded, "sha256:bb", &first.origin),
            TrustStatus::Changed
        );
        assert_eq!(
            store_status(&reloaded, "sha256:aa", &first.origin),
            TrustStatus::Trusted
        );
    }

    #[test]
    fn ask_no_or_end_of_input_skips_without_storing() {
        let home = tempfile::tempdir().unwrap();
        let mut store = TrustStore::load(home.path()).unwrap();
        let untrusted = [hook("o#1", "sha256:cc")];
        for input in ["n\n", ""] {
            let answer = ask(
                &untrusted,
                &mut store,
                Path::new("/p"),
                &mut std::io::Cursor::new(input),
                &mut Vec::new(),
            )
            .unwrap();
            assert_eq!(answer, TrustAnswer::Skipped(vec!["o#1".to_owned()]));
        }
        assert!(!home.path().join(TRUST_FILE).exists());
        let answer = ask(
            &[],
            &mut store,
            Path::new("/p"),
            &mut std::io::Cursor::new(""),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(answer, TrustAnswer::NothingToAsk);
    }

    #[test]
    fn headless_names_untrusted_hooks_and_strict_refuses_them() {
        let untrusted = [hook("o#1", "sha256:dd")];
        let mut err = Vec::new();
        headless(&untrusted, false, Path::new("/p"), &mut err).unwrap();
        let text = String::from_utf8(err).unwrap();
        assert!(
            text.contains("running 1 untrusted project hook(s)"),
            "{text}"
        );
        assert!(text.contains("sh guard.sh"));

        let refused = headless(&untrusted, true, Path::new("/p"), &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("refusing to run 1 untrusted project hook(s)"),
            "{refused}"
        );
        assert!(refused.contains("dsh hooks trust"));
        headless(&[], true, Path::new("/p"), &mut Vec::new()).unwrap();
    }

    #[test]
    fn words_keep_quoted_paths_together() {
        assert_eq!(
            words(r#"bash "$HOOKS/a b.sh" --flag 'x y'"#),
            vec!["bash", "$HOOKS/a b.sh", "--flag", "x y"]
        );
    }

    #[test]
    fn expand_vars_uses_the_project_dir_and_refuses_unknown_names() {
        let project = Path::new("/p");
        assert_eq!(
            expand_vars("${CLAUDE_PROJECT_DIR}/x.sh", project).as_deref(),
            Some("/p/x.sh")
        );
        assert_eq!(
            expand_vars("$CLAUDE_PROJECT_DIR/x", project).as_deref(),
            Some("/p/x")
        );
        assert_eq!(expand_vars("$DSH_SURELY_UNSET_VAR_42/x", project), None);
        assert_eq!(expand_vars("a$", project).as_deref(), Some("a$"));
    }
}
