//! dsh's trust for project hooks: a project's `.claude/settings.json`,
//! `.claude/settings.local.json` and `.codex/…` can run arbitrary commands,
//! so dsh asks before running the ones the user has not seen.
//!
//! Unlike Claude Code's folder-level dialog, trust is per hook: each project
//! hook is keyed by a SHA-256 of its definition (dialect, file, event,
//! matcher, handler, timeout, `if`, an http hook's `headers` and
//! `allowedEnvVars`) and of the contents of the project files its command
//! executes or sources (see `crate::exec_scan`; data files it merely reads
//! or writes are left out, files over [`MAX_HASHED_FILE_BYTES`] are named
//! but not hashed). A changed definition or executed file is a new hash and
//! asks again; a command that computes what it runs is flagged, since no
//! hash can follow it. Trusted hashes live in `$DSH_HOME/trust.json`.
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
use dsh_hooks_claude::config::{HandlerKind, SettingsSource};
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
    /// Files inside the project the command executes or sources (their
    /// contents are in the hash).
    pub scripts: Vec<PathBuf>,
    /// The command computes what it runs (`$(…)`, `eval`, …): no hash can
    /// see changes there, and the user is told so.
    pub computed: bool,
    /// What the hash leaves out (a file over the size limit).
    pub notices: Vec<String>,
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
        let file = match read_regular(&path) {
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

    /// Writes the store atomically and privately: a fresh temp file (0600,
    /// `create_new`, so a planted file or symlink at the temp path is never
    /// written through) is filled, synced and renamed over the store, in a
    /// directory created 0700.
    pub fn save(&self) -> anyhow::Result<()> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        if let Some(dir) = self.path.parent() {
            dsh_session::create_private_dir(dir)?;
        }
        let text = serde_json::to_string_pretty(&self.file)?;
        let tmp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        let written = file
            .write_all(format!("{text}\n").as_bytes())
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&tmp, &self.path));
        if let Err(error) = written {
            // The temp file is ours (create_new made it): remove it.
            let _ = std::fs::remove_file(&tmp);
            return Err(error).with_context(|| format!("cannot write {}", self.path.display()));
        }
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

/// Reads a small state file without blocking: a FIFO or device planted
/// at the path is refused instead of hanging dsh.
fn read_regular(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
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
        let scan = crate::exec_scan::scan(&command, &sources.cwd);
        // An http hook's headers and the variables they may expand decide
        // what leaves the machine: a change there must ask again.
        let (headers, allowed_env_vars) = match &handler.kind {
            HandlerKind::Http {
                headers,
                allowed_env_vars,
                ..
            } => (json!(headers), json!(allowed_env_vars)),
            HandlerKind::Command { .. } | HandlerKind::Unsupported { .. } => {
                (Value::Null, Value::Null)
            }
        };
        let identity = json!({
            "dialect": "claude",
            "file": handler.file,
            "event": entry.event,
            "matcher": entry.matcher,
            "handler": entry.handler,
            "timeout": entry.timeout_secs,
            "if": handler.if_rule,
            "headers": headers,
            "allowedEnvVars": allowed_env_vars,
        });
        let (hash, notices) = hash_identity(identity, &scan.files);
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
            scripts: scan.files,
            computed: scan.computed,
            notices,
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
        let scan = crate::exec_scan::scan(&command, &sources.cwd);
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
        let (hash, notices) = hash_identity(identity, &scan.files);
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
            scripts: scan.files,
            computed: scan.computed,
            notices,
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

/// Files larger than this are not hashed (a notice says so): hashing a
/// large data file at every start costs more than it protects.
pub const MAX_HASHED_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The hook's trust hash: its definition plus the streamed SHA-256 of each
/// executed file. Returns notices for files left out.
fn hash_identity(mut identity: Value, scripts: &[PathBuf]) -> (String, Vec<String>) {
    let mut notices = Vec::new();
    let script_hashes: Vec<Value> = scripts
        .iter()
        .map(|path| match hash_file(path) {
            Ok(FileHash::Hashed(sha256)) => json!({"path": path, "sha256": sha256}),
            Ok(FileHash::TooLarge(len)) => {
                notices.push(format!(
                    "{} is {len} bytes, over the {MAX_HASHED_FILE_BYTES}-byte hashing limit: changes to it do not ask again",
                    path.display()
                ));
                json!({"path": path, "len": len, "not_hashed": "too large"})
            }
            Err(error) => json!({"path": path, "unreadable": error.to_string()}),
        })
        .collect();
    if let Value::Object(map) = &mut identity {
        map.insert("scripts".into(), Value::Array(script_hashes));
    }
    (sha256_hex(identity.to_string().as_bytes()), notices)
}

enum FileHash {
    Hashed(String),
    TooLarge(u64),
}

/// Streams `path` through SHA-256 without reading it whole; refuses
/// anything but a regular file without blocking on it.
fn hash_file(path: &Path) -> std::io::Result<FileHash> {
    use sha2::Digest as _;
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if metadata.len() > MAX_HASHED_FILE_BYTES {
        return Ok(FileHash::TooLarge(metadata.len()));
    }
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        total += read as u64;
        if total > MAX_HASHED_FILE_BYTES {
            return Ok(FileHash::TooLarge(total));
        }
        hasher.update(&buffer[..read]);
    }
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    Ok(FileHash::Hashed(format!("sha256:{hex}")))
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

/// The files inside the project a command executes or sources (see
/// [`crate::exec_scan`]).
pub(crate) fn named_scripts(command: &str, project: &Path) -> Vec<PathBuf> {
    crate::exec_scan::scan(command, project).files
}

/// What the trust prompt and `hooks check` say about a command that
/// computes what it runs.
pub const COMPUTED_NOTICE: &str = "dsh cannot see changes to what this command runs (it computes it at run time: `$(…)`, backquotes, `eval` or an unset variable); trusting it trusts whatever that becomes";

/// A path for people: relative to `project` when below it.
pub(crate) fn show_path(path: &str, project: &Path) -> String {
    let prefix = format!("{}/", project.display());
    match path.strip_prefix(&prefix) {
        Some(rest) => rest.to_owned(),
        None => path.to_owned(),
    }
}

/// Lists `hooks` for people: event, command, origin, what it runs, and
/// what trust cannot cover.
pub(crate) fn describe(
    out: &mut dyn Write,
    hooks: &[UntrustedHook],
    project: &Path,
) -> std::io::Result<()> {
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
                "      runs {}",
                show_path(&script.display().to_string(), project)
            )?;
        }
        for notice in &hook.notices {
            writeln!(out, "      note: {}", show_path(notice, project))?;
        }
        if hook.computed {
            writeln!(out, "      warning: {COMPUTED_NOTICE}")?;
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
            computed: false,
            notices: Vec::new(),
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
    fn save_is_private_and_never_writes_through_a_planted_temp_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("dsh-home");
        let victim = root.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::create_dir(&home).unwrap();
        std::os::unix::fs::symlink(&victim, home.join("trust.json.tmp")).unwrap();
        let store = TrustStore::load(&home).unwrap();
        store.save().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let mode = std::fs::metadata(home.join(TRUST_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);

        // Even at the exact temp path a planted symlink is refused, not followed.
        let tmp = home.join(format!("trust.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        assert!(store.save().is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

        // A home dsh creates is private.
        let fresh = root.path().join("new-home");
        TrustStore::load(&fresh).unwrap().save().unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    fn sources_for(project: &Path, home: &Path) -> HookSources {
        HookSources {
            cwd: project.to_owned(),
            home: home.to_owned(),
            dsh_home: home.join(".dsh"),
            claude_settings: Vec::new(),
            claude_plugin_dirs: Vec::new(),
            run_untrusted: false,
            excluded_hooks: Vec::new(),
            permission_mode: None,
        }
    }

    #[test]
    fn http_headers_and_allowed_variables_are_in_the_hash() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".claude")).unwrap();
        let write = |headers: Value, allowed: Value| {
            let settings = json!({"hooks": {"Stop": [{"hooks": [{"type": "http",
                "url": "http://127.0.0.1:9/hook", "headers": headers, "allowedEnvVars": allowed}]}]}});
            std::fs::write(
                project.path().join(".claude/settings.json"),
                settings.to_string(),
            )
            .unwrap();
        };
        let sources = sources_for(project.path(), home.path());
        let store = TrustStore::load(&sources.dsh_home).unwrap();
        let hash = || all_hooks(&sources, &store).unwrap()[0].hash.clone();
        write(json!({"X-Team": "a"}), json!([]));
        let first = hash();
        write(
            json!({"X-Team": "a", "Authorization": "Bearer $TOKEN"}),
            json!([]),
        );
        let with_header = hash();
        write(
            json!({"X-Team": "a", "Authorization": "Bearer $TOKEN"}),
            json!(["TOKEN"]),
        );
        let with_variable = hash();
        assert_ne!(first, with_header);
        assert_ne!(with_header, with_variable);
    }

    #[test]
    fn oversized_executed_files_are_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.sh");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_HASHED_FILE_BYTES + 1).unwrap();
        let (hash, notices) = hash_identity(json!({}), std::slice::from_ref(&big));
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("big.sh") && notices[0].contains("hashing limit"));
        // The size is in the hash: growing it asks again.
        file.set_len(MAX_HASHED_FILE_BYTES + 2).unwrap();
        assert_ne!(hash, hash_identity(json!({}), &[big]).0);
    }

    #[test]
    fn streamed_hash_matches_the_whole_file_hash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sh");
        let contents: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &contents).unwrap();
        let Ok(FileHash::Hashed(streamed)) = hash_file(&path) else {
            panic!("not hashed");
        };
        assert_eq!(streamed, sha256_hex(&contents));
    }

    #[test]
    fn a_fifo_at_trust_json_is_refused_without_blocking() {
        let home = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(home.path().join(TRUST_FILE))
            .status()
            .unwrap();
        assert!(made.success());
        let err = TrustStore::load(home.path()).unwrap_err();
        assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");
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
