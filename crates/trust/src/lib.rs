//! dsh's trust for project hooks, below the CLI: the trust store
//! (`$DSH_HOME/trust.json`), the hash that identifies a hook (its
//! definition plus the contents of the files it executes), and the scan
//! that finds those files ([`exec_scan`]).
//!
//! A project's `.claude/settings.json`, `.claude/settings.local.json` and
//! `.codex/…` can run arbitrary commands, so dsh asks before running the
//! ones the user has not seen. Trust is per hook: a changed definition or
//! executed file is a new hash and asks again; a command that computes what
//! it runs is flagged, since no hash can follow it. Which hooks a project
//! has, and how the user is asked, is the CLI's business.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

pub mod exec_scan;
pub mod gitconfig;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dsh_protocol::Dialect;
use serde::{Deserialize, Serialize};

/// Why the trust store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The store exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The store's path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The store is not a trust file.
    #[error("{} is not a dsh trust file (fix or delete it): {source}", path.display())]
    NotATrustFile {
        /// The store's path.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The store (or its directory, or its temp file) cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The path that failed.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

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

/// A workspace the user trusted as a whole with `dsh hooks trust` (no
/// selector): like Claude Code's trust dialog, it is what lets the
/// project's own `permissions.allow` rules apply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectTrustRecord {
    /// When (RFC 3339).
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    version: u32,
    #[serde(default)]
    hooks: BTreeMap<String, TrustRecord>,
    /// Trusted workspaces, by directory. Absent in files written before it
    /// existed (and older dsh versions ignore it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    projects: BTreeMap<PathBuf, ProjectTrustRecord>,
}

/// `$DSH_HOME/trust.json`: the hashes the user trusted.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    file: TrustFile,
}

impl TrustStore {
    /// Reads the store under `dsh_home` (empty when the file does not exist).
    pub fn load(dsh_home: &Path) -> Result<TrustStore, TrustError> {
        TrustStore::load_with(&dsh_files::ConfigFiles::default(), dsh_home)
    }

    /// [`TrustStore::load`] through a session's reader: `trust.json` is
    /// read from disk once per session (whoever writes it next reads it
    /// again through a fresh reader, or after [`dsh_files::ConfigFiles::forget`]).
    pub fn load_with(
        files: &dsh_files::ConfigFiles,
        dsh_home: &Path,
    ) -> Result<TrustStore, TrustError> {
        let path = dsh_home.join(TRUST_FILE);
        // The session's one parse of it (`files.json`).
        let file = match files.json_with(&path, read_regular) {
            Ok(Some(json)) => json
                .deserialize()
                .map_err(|source| TrustError::NotATrustFile {
                    path: path.clone(),
                    source,
                })?,
            Ok(None) => TrustFile {
                version: 1,
                hooks: BTreeMap::new(),
                projects: BTreeMap::new(),
            },
            Err(error) => {
                return Err(TrustError::Read {
                    path,
                    source: error,
                });
            }
        };
        Ok(TrustStore { path, file })
    }

    /// Writes the store atomically and privately with
    /// [`dsh_session::write_atomic`] (a fresh 0600 temp file that is never
    /// a planted link, synced and renamed over the store), in a directory
    /// created 0700. A store that is a symbolic link is refused.
    pub fn save(&self) -> Result<(), TrustError> {
        if let Some(dir) = self.path.parent() {
            dsh_session::create_private_dir(dir).map_err(|source| TrustError::Write {
                path: dir.to_owned(),
                source,
            })?;
        }
        let text =
            serde_json::to_string_pretty(&self.file).map_err(|source| TrustError::Write {
                path: self.path.clone(),
                source: source.into(),
            })?;
        dsh_session::write_atomic(&self.path, format!("{text}\n").as_bytes(), 0o600).map_err(
            |source| TrustError::Write {
                path: self.path.clone(),
                source,
            },
        )
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

    /// Forgets every hash trusted for files in `project` (files below it)
    /// and the workspace trust of `project` and the directories below it;
    /// how many records were removed.
    pub fn untrust_project(&mut self, project: &Path) -> usize {
        let before = self.file.hooks.len() + self.file.projects.len();
        self.file
            .hooks
            .retain(|_, record| !record.file.starts_with(project));
        self.file
            .projects
            .retain(|dir, _| !dir.starts_with(project));
        before - self.file.hooks.len() - self.file.projects.len()
    }

    /// Records that the user trusts the workspace `project` as a whole.
    pub fn trust_project(&mut self, project: &Path) {
        self.file.projects.insert(
            project.to_owned(),
            ProjectTrustRecord {
                trusted_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            },
        );
    }

    /// Whether the user trusted exactly this workspace (as `~/.claude.json`
    /// trust, it is per directory: a parent's trust does not extend to it).
    pub fn trusts_project(&self, project: &Path) -> bool {
        self.file.projects.contains_key(project)
    }
}

/// Reads a small state file without blocking: a FIFO or device planted
/// at the path is refused instead of hanging dsh.
fn read_regular(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
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

/// The status of a project hook with `hash` at `origin` under `store`.
pub fn store_status(store: &TrustStore, hash: &str, origin: &str) -> TrustStatus {
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

/// The hook's trust hash: its definition (a bridge's `TrustIdentity`,
/// serialized in its field order) plus the streamed SHA-256 of each
/// executed file, under a trailing `scripts` key (when the definition is
/// an object, as the bridges' are). Returns notices for files left out.
///
/// An identity that cannot be serialized (never the bridges' own) hashes
/// its error text instead: a hash no store holds, so the hook asks.
pub fn hash_identity(identity: &impl Serialize, scripts: &[PathBuf]) -> (String, Vec<String>) {
    let (hash, notices, _) = hash_identity_and_files(identity, scripts);
    (hash, notices)
}

/// [`hash_identity`], with each file's own hash besides (`None`:
/// unreadable, or over the hashing limit), to tell which of a hook's files
/// changed.
pub fn hash_identity_and_files(
    identity: &impl Serialize,
    scripts: &[PathBuf],
) -> (String, Vec<String>, Vec<Option<String>>) {
    let mut notices = Vec::new();
    let script_hashes: Vec<ScriptHash<'_>> = scripts
        .iter()
        .map(|path| match hash_file(path) {
            Ok(FileHash::Hashed(sha256)) => ScriptHash::Hashed { path, sha256 },
            Ok(FileHash::TooLarge(len)) => {
                notices.push(format!(
                    "{} is {len} bytes, over the {MAX_HASHED_FILE_BYTES}-byte hashing limit: changes to it do not ask again",
                    path.display()
                ));
                ScriptHash::TooLarge {
                    path,
                    len,
                    not_hashed: "too large",
                }
            }
            Err(error) => ScriptHash::Unreadable {
                path,
                unreadable: error.to_string(),
            },
        })
        .collect();
    let hashed = serde_json::to_string(identity)
        .and_then(|identity| with_scripts(identity, &script_hashes))
        .unwrap_or_else(|error| {
            let text = format!("unserializable identity: {error}");
            serde_json::to_string(&text).unwrap_or(text)
        });
    let file_hashes = script_hashes
        .iter()
        .map(|script| match script {
            ScriptHash::Hashed { sha256, .. } => Some(sha256.clone()),
            ScriptHash::TooLarge { .. } | ScriptHash::Unreadable { .. } => None,
        })
        .collect();
    (sha256_hex(hashed.as_bytes()), notices, file_hashes)
}

/// `identity` (compact JSON text) with `"scripts":[…]` as its last key
/// when it is an object; anything else as it is.
fn with_scripts(mut identity: String, scripts: &[ScriptHash<'_>]) -> serde_json::Result<String> {
    if !identity.starts_with('{') {
        return Ok(identity);
    }
    identity.pop();
    if identity.len() > 1 {
        identity.push(',');
    }
    identity.push_str("\"scripts\":");
    identity.push_str(&serde_json::to_string(scripts)?);
    identity.push('}');
    Ok(identity)
}

/// What the hash records of one executed file (keys in this order).
#[derive(Serialize)]
#[serde(untagged)]
enum ScriptHash<'a> {
    Hashed {
        path: &'a Path,
        sha256: String,
    },
    TooLarge {
        path: &'a Path,
        len: u64,
        not_hashed: &'static str,
    },
    Unreadable {
        path: &'a Path,
        unreadable: String,
    },
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
    #[allow(clippy::disallowed_methods)] // custom_flags/mode: std's OpenOptionsExt
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

/// `sha256:` and the lowercase hex digest of `bytes` (the same form as
/// Codex's `trusted_hash`).
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(bytes);
    let mut hex = String::with_capacity(71);
    hex.push_str("sha256:");
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// Splits a command line into words as the shell would for a simple
/// command (quotes group, quote characters and escapes removed; `$VAR`
/// stays for [`expand_vars`]). A line with an unbalanced quote is not a
/// command the shell would run either; it is split at whitespace so the
/// scan still sees its words.
pub fn words(command: &str) -> Vec<String> {
    shlex::split(command).unwrap_or_else(|| command.split_whitespace().map(str::to_owned).collect())
}

/// The variables every dialect sets to the project directory for its hooks
/// (Claude Code's, and Gemini CLI's own names beside its Claude alias), so
/// a script named through any of them is pinned wherever it is spelled.
pub const PROJECT_DIR_VARS: &[&str] = &["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "GEMINI_CWD"];

/// Expands `$VAR` and `${VAR}` from the environment (the variables of
/// [`PROJECT_DIR_VARS`] are the project); `None` when a variable is not
/// set, or when the word holds a form the shell decides at run time
/// (`${VAR:-x}`, an unclosed `${`).
pub fn expand_vars(word: &str, project: &Path) -> Option<String> {
    expand_vars_with(word, project, &[])
}

/// [`expand_vars`] for a hook its dialect sets `env` for: the last of
/// those wins over the project-directory variables and the environment.
pub fn expand_vars_with(word: &str, project: &Path, env: &[(String, String)]) -> Option<String> {
    let forms = dsh_hook_runner::vars::Forms {
        bare: true,
        defaults: false,
        tilde: false,
    };
    dsh_hook_runner::vars::expand(word, forms, |name| {
        if let Some((_, value)) = env.iter().rev().find(|(set, _)| set == name) {
            return Some(value.clone());
        }
        if PROJECT_DIR_VARS.contains(&name) {
            return Some(project.display().to_string());
        }
        std::env::var(name).ok()
    })
    .complete()
}

/// The files inside the project a command executes or sources (see
/// [`crate::exec_scan`]).
pub fn named_scripts(command: &str, project: &Path) -> Vec<PathBuf> {
    crate::exec_scan::scan(command, project).files
}

/// What the trust prompt and `hooks check` say about a command that
/// computes what it runs.
pub const COMPUTED_NOTICE: &str = "dsh cannot see changes to what this command runs (it computes it at run time: `$(…)`, backquotes, `eval` or an unset variable); trusting it trusts whatever that becomes";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_store_that_is_a_symlink_is_refused_and_its_target_kept() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let victim = root.path().join("victim.json");
        std::fs::write(&victim, r#"{"version":1,"hooks":{}}"#).unwrap();
        std::os::unix::fs::symlink(&victim, home.join(TRUST_FILE)).unwrap();
        let mut store = TrustStore::load(&home).unwrap();
        store.trust_project(Path::new("/p"));
        let error = store.save().unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            r#"{"version":1,"hooks":{}}"#
        );
        let link = std::fs::symlink_metadata(home.join(TRUST_FILE)).unwrap();
        assert!(link.file_type().is_symlink());
    }

    #[test]
    fn workspace_trust_is_per_directory_and_survives_a_reload() {
        let home = tempfile::tempdir().unwrap();
        let mut store = TrustStore::load(home.path()).unwrap();
        let project = Path::new("/work/p");
        assert!(!store.trusts_project(project));
        store.trust_project(project);
        store.save().unwrap();
        let mut store = TrustStore::load(home.path()).unwrap();
        assert!(store.trusts_project(project));
        assert!(!store.trusts_project(Path::new("/work/p/sub")));
        assert!(!store.trusts_project(Path::new("/work")));
        assert_eq!(store.untrust_project(project), 1);
        assert!(!store.trusts_project(project));
    }

    #[test]
    fn words_keep_quoted_paths_together() {
        assert_eq!(
            words(r#"bash "$HOOKS/a b.sh" --flag 'x y'"#),
            vec!["bash", "$HOOKS/a b.sh", "--flag", "x y"]
        );
        assert_eq!(words(r#"sh a\ b.sh"#), vec!["sh", "a b.sh"]);
        assert_eq!(words(r#"sh "open"#), vec!["sh", "\"open"]);
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
        // Gemini CLI's names for the project, in every spelling.
        for word in [
            "${GEMINI_PROJECT_DIR}/x",
            "$GEMINI_PROJECT_DIR/x",
            "$GEMINI_CWD/x",
        ] {
            assert_eq!(
                expand_vars(word, project).as_deref(),
                Some("/p/x"),
                "{word}"
            );
        }
        assert_eq!(expand_vars("$DSH_SURELY_UNSET_VAR_42/x", project), None);
        assert_eq!(expand_vars("${DSH_SURELY_UNSET_VAR_42}", project), None);
        assert_eq!(expand_vars("a$", project).as_deref(), Some("a$"));
        assert_eq!(expand_vars("a$$", project).as_deref(), Some("a$$"));
        assert_eq!(expand_vars("${}", project).as_deref(), Some("${}"));
        // What the shell decides at run time is refused too.
        assert_eq!(expand_vars("${CLAUDE_PROJECT_DIR:-/q}/x", project), None);
        assert_eq!(expand_vars("${CLAUDE_PROJECT_DIR/x", project), None);
        assert_eq!(expand_vars("${a b}", project), None);
    }

    /// The hash as it was first computed (through a JSON value): stores
    /// written then must still match.
    fn hash_through_a_value(identity: &serde_json::Value, scripts: &[PathBuf]) -> String {
        let mut identity = identity.clone();
        let script_hashes: Vec<serde_json::Value> = scripts
            .iter()
            .map(|path| match hash_file(path) {
                Ok(FileHash::Hashed(sha256)) => json!({"path": path, "sha256": sha256}),
                Ok(FileHash::TooLarge(len)) => {
                    json!({"path": path, "len": len, "not_hashed": "too large"})
                }
                Err(error) => json!({"path": path, "unreadable": error.to_string()}),
            })
            .collect();
        if let serde_json::Value::Object(map) = &mut identity {
            map.insert("scripts".into(), serde_json::Value::Array(script_hashes));
        }
        sha256_hex(identity.to_string().as_bytes())
    }

    #[test]
    fn hashes_are_those_stores_already_hold() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("s.sh");
        std::fs::write(&script, "echo \"hi\"\n").unwrap();
        let big = dir.path().join("big.sh");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_HASHED_FILE_BYTES + 1)
            .unwrap();
        let missing = dir.path().join("missing.sh");
        let identities = [
            json!({"dialect": "claude", "event": "PreToolUse", "matcher": "Bash|Edit",
                   "command": "python3 \"$CLAUDE_PROJECT_DIR\"/h.py", "timeout": 2.5,
                   "env": {"Z": "1", "A": "2"}, "async": false}),
            json!({}),
            json!(null),
            json!("text"),
        ];
        let script_sets = [vec![], vec![script.clone()], vec![script, big, missing]];
        for identity in &identities {
            for scripts in &script_sets {
                assert_eq!(
                    hash_identity(identity, scripts).0,
                    hash_through_a_value(identity, scripts),
                    "{identity} {scripts:?}"
                );
            }
        }
    }

    #[test]
    fn oversized_executed_files_are_named_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.sh");
        let file = std::fs::File::create(&big).unwrap();
        file.set_len(MAX_HASHED_FILE_BYTES + 1).unwrap();
        let (hash, notices) = hash_identity(&json!({}), std::slice::from_ref(&big));
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("big.sh") && notices[0].contains("hashing limit"));
        // The size is in the hash: growing it asks again.
        file.set_len(MAX_HASHED_FILE_BYTES + 2).unwrap();
        assert_ne!(hash, hash_identity(&json!({}), &[big]).0);
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
}
