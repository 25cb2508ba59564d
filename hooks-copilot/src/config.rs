//! Discovery of Copilot CLI's hook configuration, in Copilot's run order:
//! user hook files (`$COPILOT_HOME/hooks/*.json`, default
//! `~/.copilot/hooks/`), inline `hooks` in the user's `settings.json`, the
//! repository's `.github/hooks/*.json` (reverse lexicographic by file
//! name), then inline `hooks` in `.github/copilot/settings.json` and
//! `settings.local.json`. The repository is the git root above the session
//! directory (the directory itself outside a repository).
//!
//! A repository's `.claude/settings*.json` is *not* read here: it stays the
//! Claude Code dialect's, so each hook fires once (issue 35).
//!
//! Like Copilot, a file that cannot be used (invalid JSON, `version` other
//! than 1) is left out and the other files still load; dsh says so in a
//! notice (Copilot only writes it to its log).

use std::path::{Path, PathBuf};

use dsh_hooks::entries::{EntryStatus, FileProblem, Layer};
use dsh_hooks::json_file;
use dsh_hooks::lenient::Lenient;
use dsh_hooks::wire::Present;
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::event::{CopilotEvent, Mode};

/// Copilot's default hook timeout, in seconds.
pub const DEFAULT_TIMEOUT_SEC: u64 = 30;

/// Where the bridge looks.
#[derive(Debug, Clone)]
pub struct CopilotDiscovery {
    /// The session directory.
    pub cwd: PathBuf,
    /// `$HOME`.
    pub home: PathBuf,
    /// `$COPILOT_HOME` when set (replaces `~/.copilot`).
    pub copilot_home: Option<PathBuf>,
    /// The shell `bash` entries run under.
    pub shell: PathBuf,
    /// The session's file reader (each file read once).
    pub files: dsh_files::ConfigFiles,
}

impl CopilotDiscovery {
    /// Discovery for a session directory and home.
    pub fn new(cwd: impl Into<PathBuf>, home: impl Into<PathBuf>) -> Self {
        CopilotDiscovery {
            cwd: cwd.into(),
            home: home.into(),
            copilot_home: None,
            shell: PathBuf::from("/bin/bash"),
            files: dsh_files::ConfigFiles::new(),
        }
    }

    /// `$COPILOT_HOME`, default `~/.copilot`.
    pub fn user_dir(&self) -> PathBuf {
        self.copilot_home
            .clone()
            .unwrap_or_else(|| self.home.join(".copilot"))
    }

    /// The repository root: the nearest ancestor of the session directory
    /// holding `.git`, else the session directory.
    pub fn repo_root(&self) -> PathBuf {
        self.cwd
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&self.cwd)
            .to_path_buf()
    }

    /// Every file that may hold hooks, in run order, with its kind.
    pub fn files(&self) -> Vec<(PathBuf, FileKind, Layer)> {
        let user = self.user_dir();
        let repo = self.repo_root();
        let mut files = Vec::new();
        for path in hook_files(&user.join("hooks")) {
            files.push((path, FileKind::HookFile, Layer::User));
        }
        files.push((user.join("settings.json"), FileKind::Settings, Layer::User));
        for path in hook_files(&repo.join(".github/hooks")) {
            files.push((path, FileKind::HookFile, Layer::Project));
        }
        for name in ["settings.json", "settings.local.json"] {
            files.push((
                repo.join(".github/copilot").join(name),
                FileKind::Settings,
                Layer::Project,
            ));
        }
        files
    }
}

/// The `*.json` files of a hooks folder, reverse lexicographic by name
/// (pre_two_files_deny_deny: `b.json` runs before `a.json`).
pub fn hook_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json") && path.is_file())
        .collect();
    files.sort();
    files.reverse();
    files
}

/// What a configuration file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A hook file (`{"version": 1, "hooks": {…}}`); its hooks get
    /// `COPILOT_HOOK_DIR`.
    HookFile,
    /// A settings file with inline `hooks`.
    Settings,
}

/// How an entry runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Program {
    /// `bash` (or `command`): run by `/bin/bash -c`.
    Bash(String),
    /// `exec` + `args`: no shell.
    Exec {
        /// The executable.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// Only `powershell`: Copilot spawns `pwsh` (x_powershell_only_entry).
    Powershell(String),
}

impl Program {
    /// The command as shown to people.
    pub fn text(&self) -> String {
        match self {
            Program::Bash(command) => command.clone(),
            Program::Exec { program, args } => std::iter::once(program.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Program::Powershell(command) => format!("pwsh: {command}"),
        }
    }
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    /// The event.
    pub event: CopilotEvent,
    /// The payload mode its event name selects.
    pub mode: Mode,
    /// Whose file.
    pub source: Layer,
    /// The file.
    pub file: PathBuf,
    /// `<file>#hooks.<Event>[i]` (`[i].hooks[j]` in the nested form).
    pub origin: String,
    /// The matcher, if any.
    pub matcher: Option<String>,
    /// What runs.
    pub program: Program,
    /// `cwd`, relative to the repository root.
    pub cwd: Option<String>,
    /// The repository root: where it runs unless `cwd` names a folder
    /// below it, and `COPILOT_PROJECT_DIR`.
    pub repo: PathBuf,
    /// `env`, applied last.
    pub env: Vec<(String, String)>,
    /// `timeoutSec` (or `timeout`), seconds.
    pub timeout_sec: u64,
    /// `COPILOT_HOOK_DIR` (hook files only).
    pub hook_dir: Option<PathBuf>,
    /// The file as shown in Copilot's deny texts (`.github/hooks/h.json`).
    pub display_file: String,
    /// Whether it runs (off: `disableAllHooks` is set).
    pub status: EntryStatus<&'static str>,
}

impl Handler {
    /// The event name it is configured under.
    pub fn event_name(&self) -> &'static str {
        self.event.name(self.mode)
    }

    /// Its working directory: the repository root, or `cwd` below it
    /// (`.` is the root itself, not `<root>/.`).
    pub fn working_dir(&self) -> PathBuf {
        let dir = self.cwd.as_ref().map(|dir| self.repo.join(dir));
        dir.map_or_else(|| self.repo.clone(), |dir| dir.components().collect())
    }

    /// The variables it runs with besides the environment: Copilot's, then
    /// the entry's `env`.
    pub fn vars(&self) -> Vec<(String, String)> {
        let mut vars = copilot_vars(&self.repo, self.hook_dir.as_deref());
        vars.extend(self.env.iter().cloned());
        vars
    }
}

/// The variables Copilot adds for one entry (a_baseline_all_events,
/// cl_settings_recorders: `COPILOT_HOOK_DIR` only for hook files).
pub fn copilot_vars(
    repo: &std::path::Path,
    hook_dir: Option<&std::path::Path>,
) -> Vec<(String, String)> {
    let project = repo.display().to_string();
    let mut vars = vec![
        ("COPILOT_PROJECT_DIR".to_owned(), project.clone()),
        ("CLAUDE_PROJECT_DIR".to_owned(), project),
        ("COPILOT_CLI".to_owned(), "1".to_owned()),
    ];
    if let Some(dir) = hook_dir {
        vars.push(("COPILOT_HOOK_DIR".to_owned(), dir.display().to_string()));
    }
    vars
}

/// What a notice adds to a file Copilot leaves out whole.
pub const SKIPPED: &str = " (the file is not loaded, as Copilot CLI skips it)";

/// The parsed configuration.
#[derive(Debug, Clone)]
pub struct CopilotConfig {
    /// Where it came from.
    pub discovery: CopilotDiscovery,
    /// Every entry, in run order.
    pub handlers: Vec<Handler>,
    /// Files (ending [`SKIPPED`]) and entries left out (Copilot logs them).
    pub problems: Vec<FileProblem>,
    /// The file that set `disableAllHooks`, if any.
    pub disabled_by: Option<PathBuf>,
}

/// A hook file or settings file as far as hooks go, read from its JSON
/// the way Copilot's JavaScript reads it: a key of the wrong type, or an
/// entry that is not an object, reads as absent and spoils nothing else.
/// (Each `#[serde(flatten)]` keeps serde from reading an array as the
/// struct, element by element: only an object is one.)
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct HooksDoc {
    /// `version` as written, `null` too (Copilot reads only `1`).
    pub version: Lenient<Present>,
    pub disable_all_hooks: Lenient<bool>,
    pub hooks: Lenient<Events>,
    #[serde(flatten)]
    _other: IgnoredAny,
}

/// The `hooks` object's event keys in file order,
/// each an array of entries (`None`: not an array).
pub(crate) type Events = dsh_hooks::wire::Entries<Entries>;

/// An event's entries, each `None` when it is not an object.
pub(crate) type Entries = Lenient<Vec<Lenient<EntryWire>>>;

/// One entry: a command, or Claude Code's nested group `{matcher, hooks}`.
/// `matcher`, `bash`, `cwd` (`null` reads as absent) and `timeoutSec`
/// (present, `null` too, so it hides `timeout`) are kept as written:
/// Copilot skips an entry where they have the wrong type (x_wrong_types).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct EntryWire {
    matcher: Option<Present>,
    hooks: Entries,
    bash: Option<Present>,
    command: Lenient<String>,
    exec: Lenient<String>,
    powershell: Lenient<String>,
    args: Lenient<Vec<Present>>,
    cwd: Option<Present>,
    timeout_sec: Lenient<Present>,
    timeout: Lenient<Lenient<f64>>,
    env: Lenient<Present>,
    #[serde(flatten)]
    _other: IgnoredAny,
}

impl HooksDoc {
    /// Parses a file's text: only a syntax error is an error (not an
    /// object: no keys).
    pub fn parse(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text).map(|doc: Lenient<Self>| doc.0.unwrap_or_default())
    }

    /// `version` when it is not the 1 Copilot reads (Copilot then skips
    /// the whole hook file).
    pub fn unread_version(&self) -> Option<&Present> {
        self.version.0.as_ref().filter(|v| v.0.as_u64() != Some(1))
    }

    /// An event whose value is not an array: Copilot then skips the whole
    /// hook file ([`UNREAD_EVENT`], x_wrong_types).
    pub fn unread_event(&self) -> Option<&str> {
        let mut events = self.hooks.0.iter().flat_map(|events| events.iter());
        let (name, _) = events
            .find(|(name, entries)| entries.0.is_none() && CopilotEvent::parse(name).is_some())?;
        Some(name)
    }
}

impl EntryWire {
    /// The matcher, when it is a string.
    pub fn matcher(&self) -> Option<&str> {
        self.matcher.as_ref().and_then(|matcher| matcher.0.as_str())
    }
}

/// Copilot's reason for skipping a file with an event that is not an array.
pub const UNREAD_EVENT: &str = "hook event value must be an array";

/// What Copilot adds to an entry it skips.
const SKIPS: &str = " — hook will be skipped";

/// A key Copilot reads as a string (`name` of the entry at `at`): absent,
/// the string, or why the entry is skipped (x_wrong_types).
fn text(key: &Option<Present>, at: &str, name: &str) -> Result<Option<String>, String> {
    match key.as_ref().map(|key| key.0.as_str()) {
        None => Ok(None),
        Some(Some(text)) => Ok(Some(text.to_owned())),
        Some(None) => Err(format!("{at}.{name}: Expected string{SKIPS}")),
    }
}

/// Loads the configuration. Never fails: unusable files are reported in
/// [`CopilotConfig::problems`] and left out, as Copilot leaves them out.
pub fn load(discovery: &CopilotDiscovery) -> CopilotConfig {
    let repo = discovery.repo_root();
    let mut handlers = Vec::new();
    let mut problems = Vec::new();
    let mut disabled_by = None;
    for (path, kind, source) in discovery.files() {
        let doc: HooksDoc = match json_file::read_as(&discovery.files, &path, Some) {
            Ok(Some(doc)) => doc,
            Ok(None) => continue,
            Err(error) => {
                problems.push(FileProblem::new(&path, format!("{error}{SKIPPED}")));
                continue;
            }
        };
        if kind == FileKind::HookFile && doc.unread_version().is_some() {
            let message = "version: Invalid hook config version (only 1 is read)";
            problems.push(FileProblem::new(&path, format!("{message}{SKIPPED}")));
            continue;
        }
        if let Some(name) = doc.unread_event().filter(|_| kind == FileKind::HookFile) {
            let message = format!("hooks.{name}: {UNREAD_EVENT}{SKIPPED}");
            problems.push(FileProblem::new(&path, message));
            continue;
        }
        if doc.disable_all_hooks.0 == Some(true) && disabled_by.is_none() {
            disabled_by = Some(path.clone());
        }
        let display_file = match path.strip_prefix(&repo) {
            Ok(rel) if source == Layer::Project => rel.display().to_string(),
            Ok(_) | Err(_) => path.display().to_string(),
        };
        let context = FileContext {
            path: &path,
            repo: &repo,
            source,
            hook_dir: (kind == FileKind::HookFile)
                .then(|| path.parent().map(Path::to_path_buf))
                .flatten(),
            display_file: &display_file,
        };
        parse_hooks(&doc, &context, &mut handlers, &mut problems);
    }
    if disabled_by.is_some() {
        for handler in &mut handlers {
            handler.status = EntryStatus::Off("disableAllHooks");
        }
    }
    CopilotConfig {
        discovery: discovery.clone(),
        handlers,
        problems,
        disabled_by,
    }
}

pub(crate) struct FileContext<'a> {
    pub path: &'a Path,
    /// The repository root its entries run under.
    pub repo: &'a Path,
    pub source: Layer,
    pub hook_dir: Option<PathBuf>,
    pub display_file: &'a str,
}

/// Parses one document's `hooks` object into `handlers` (pure).
pub(crate) fn parse_hooks(
    doc: &HooksDoc,
    file: &FileContext<'_>,
    handlers: &mut Vec<Handler>,
    problems: &mut Vec<FileProblem>,
) {
    // Unknown event names are ignored silently (x_invalid_configs); a
    // file's camelCase events run before its PascalCase ones, whatever
    // the key order (cc_pascal_before_camel).
    let mut events: Vec<_> = (doc.hooks.0.iter().flat_map(|events| &events.0))
        .filter_map(|(name, entries)| Some((name, entries, CopilotEvent::parse(name)?)))
        .collect();
    events.sort_by_key(|(.., (_, mode))| *mode);
    for (name, entries, (event, mode)) in events {
        let Some(entries) = &entries.0 else {
            let message = format!("hooks.{name}: expected an array of hook entries");
            problems.push(FileProblem::new(file.path, message));
            continue;
        };
        for (i, entry) in entries.iter().enumerate() {
            let at = format!("hooks.{name}[{i}]");
            let base = format!("{}#{at}", file.path.display());
            let matcher = entry.0.as_ref().map(|e| text(&e.matcher, &at, "matcher"));
            let matcher = match matcher.transpose() {
                Ok(matcher) => matcher.flatten(),
                Err(message) => {
                    problems.push(FileProblem::new(file.path, message));
                    continue;
                }
            };
            // Claude Code's nested group: `{matcher, hooks: [...]}`.
            let hooks: Vec<_> = match (entry.0.as_ref()).and_then(|e| e.hooks.0.as_ref()) {
                Some(inner) => (inner.iter().enumerate())
                    .map(|(j, hook)| (format!("{base}.hooks[{j}]"), hook))
                    .collect(),
                None => vec![(base, entry)],
            };
            for (origin, hook) in hooks {
                let entry = (event, mode, matcher.as_deref());
                match parse_entry(hook.0.as_ref(), entry, origin, file) {
                    Ok(handler) => handlers.push(handler),
                    Err(message) => problems.push(FileProblem::new(file.path, message)),
                }
            }
        }
    }
}

/// One entry (`None`: not an object), configured under `event` in `mode`,
/// or why it is skipped (in Copilot's words).
fn parse_entry(
    entry: Option<&EntryWire>,
    (event, mode, matcher): (CopilotEvent, Mode, Option<&str>),
    origin: String,
    file: &FileContext<'_>,
) -> Result<Handler, String> {
    let at = origin.rsplit('#').next().unwrap_or(&origin);
    let entry = entry.ok_or_else(|| format!("{at}: Expected object{SKIPS}"))?;
    let shell = text(&entry.bash, at, "bash")?.or_else(|| entry.command.0.clone());
    let program = match (shell, entry.exec.0.clone(), entry.powershell.0.clone()) {
        (None, Some(program), _) => Program::Exec {
            program,
            args: (entry.args.0.iter().flatten())
                .map(|arg| json_file::text(&arg.0))
                .collect(),
        },
        (Some(command), None, _) => Program::Bash(command),
        (None, None, Some(command)) => Program::Powershell(command),
        (None, None, None) | (Some(_), Some(_), _) => {
            return Err(format!(
                "{at}: Specify either 'exec' (native executable) or 'bash'/'powershell'/'command' (shell), but not both{SKIPS}"
            ));
        }
    };
    let secs = match (&entry.timeout_sec.0, &entry.timeout.0) {
        (Some(secs), _) if !secs.0.is_null() && !secs.0.is_number() => {
            return Err(format!(
                "{at}.timeoutSec: timeoutSec must be a number{SKIPS}"
            ));
        }
        (Some(secs), _) => secs.0.as_f64(),
        (None, timeout) => timeout.as_ref().and_then(|secs| secs.0),
    };
    let timeout_sec = (secs.filter(|secs| *secs > 0.0))
        .map(|secs| secs.ceil() as u64)
        .unwrap_or(DEFAULT_TIMEOUT_SEC);
    let env = entry.env.0.as_ref().map(|env| &env.0);
    let mut values = env.and_then(|env| env.as_object()).into_iter().flatten();
    if let Some((name, _)) = values.find(|(_, value)| !value.is_string()) {
        return Err(format!(
            "{at}.env[{name:?}]: env values must be strings{SKIPS}"
        ));
    }
    let cwd = text(&entry.cwd, at, "cwd")?;
    let env = json_file::env_pairs(env);
    Ok(Handler {
        event,
        mode,
        source: file.source,
        file: file.path.to_path_buf(),
        origin,
        matcher: matcher.map(str::to_owned),
        program,
        cwd,
        repo: file.repo.to_path_buf(),
        env,
        timeout_sec,
        hook_dir: file.hook_dir.clone(),
        display_file: file.display_file.to_owned(),
        status: EntryStatus::Active,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn write(path: &Path, text: &str) {
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }

    /// x_invalid_configs, pre_two_files_deny_deny, x_subdir_cwd: bad files
    /// are left out, the rest load in reverse name order from the git root.
    #[test]
    fn discovery_follows_copilots_order_and_skips_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        let home = dir.path().join("h");
        fs_err::create_dir_all(project.join(".git")).unwrap();
        let hooks = project.join(".github/hooks");
        write(&hooks.join("a_broken.json"), "{ this is not json");
        write(
            &hooks.join("b_v2.json"),
            r#"{"version":2,"hooks":{"preToolUse":[{"bash":"v2"}]}}"#,
        );
        write(
            &hooks.join("c_unknown.json"),
            r#"{"version":1,"hooks":{"beforeToolUse":[{"bash":"x"}],"preToolUse":[{"type":"command","bash":"c"}]}}"#,
        );
        write(
            &hooks.join("d_nobash.json"),
            r#"{"version":1,"hooks":{"preToolUse":[{"type":"command","timeoutSec":5}]}}"#,
        );
        write(
            &hooks.join("e_ok.json"),
            r#"{"version":1,"hooks":{"preToolUse":[{"bash":"e","timeoutSec":2}]}}"#,
        );
        write(
            &hooks.join("notjson.txt"),
            r#"{"hooks":{"preToolUse":[{"bash":"t"}]}}"#,
        );
        write(
            &home.join(".copilot/hooks/u.json"),
            r#"{"version":1,"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"u","timeout":1}]}]}}"#,
        );
        write(
            &project.join(".github/copilot/settings.json"),
            r#"{"hooks":{"agentStop":[{"bash":"s","cwd":"sub","env":{"A":"1"}}]}}"#,
        );
        write(
            &project.join(".claude/settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"claude"}]}]}}"#,
        );
        let sub = project.join("sub/deeper");
        fs_err::create_dir_all(&sub).unwrap();
        let config = load(&CopilotDiscovery::new(&sub, &home));
        let commands: Vec<String> = config.handlers.iter().map(|h| h.program.text()).collect();
        assert_eq!(commands, ["u", "e", "c", "s"]);
        let user = &config.handlers[0];
        assert_eq!((user.mode, user.timeout_sec), (Mode::Pascal, 1));
        assert_eq!(user.matcher.as_deref(), Some("Bash"));
        assert!(user.origin.ends_with("u.json#hooks.PreToolUse[0].hooks[0]"));
        assert_eq!(config.handlers[1].display_file, ".github/hooks/e_ok.json");
        assert_eq!(
            config.handlers[1].hook_dir.as_deref(),
            Some(hooks.as_path())
        );
        let inline = &config.handlers[3];
        assert_eq!(inline.hook_dir, None);
        assert_eq!(inline.cwd.as_deref(), Some("sub"));
        assert_eq!(inline.env, [("A".to_owned(), "1".to_owned())]);
        let problems: Vec<(bool, String)> = config
            .problems
            .iter()
            .map(|p| {
                (
                    p.message.ends_with(SKIPPED),
                    p.file.file_name().unwrap().to_string_lossy().into_owned(),
                )
            })
            .collect();
        assert_eq!(
            problems,
            [
                (false, "d_nobash.json".to_owned()),
                (true, "b_v2.json".to_owned()),
                (true, "a_broken.json".to_owned()),
            ]
        );
    }

    /// x_disable_all_hooks, x_exec_form, x_copilot_home.
    #[test]
    fn disable_all_exec_form_and_copilot_home() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        let home = dir.path().join("h");
        write(
            &home.join(".copilot/hooks/ignored.json"),
            r#"{"version":1,"hooks":{"sessionEnd":[{"bash":"old"}]}}"#,
        );
        write(
            &dir.path().join("ch/hooks/x.json"),
            r#"{"version":1,"hooks":{"preToolUse":[{"exec":"/bin/x","args":["a","b"]},{"powershell":"Get-Item"}]}}"#,
        );
        fs_err::create_dir_all(&project).unwrap();
        let mut discovery = CopilotDiscovery::new(&project, &home);
        discovery.copilot_home = Some(dir.path().join("ch"));
        let config = load(&discovery);
        assert_eq!(
            config
                .handlers
                .iter()
                .map(|h| h.program.clone())
                .collect::<Vec<_>>(),
            [
                Program::Exec {
                    program: "/bin/x".into(),
                    args: vec!["a".into(), "b".into()]
                },
                Program::Powershell("Get-Item".into())
            ]
        );
        write(
            &project.join(".github/copilot/settings.json"),
            r#"{"disableAllHooks":true}"#,
        );
        // A new session reads the files afresh.
        discovery.files = dsh_files::ConfigFiles::new();
        let config = load(&discovery);
        assert!(!config.handlers.iter().any(|h| h.status.is_active()));
        assert!(config.disabled_by.is_some());
    }

    /// x_wrong_types: an entry with `bash`, `matcher`, `cwd`, `timeoutSec`
    /// or an `env` value of the wrong type is skipped in Copilot's words,
    /// and so is one that is not an object (an array too); `null` reads as
    /// absent; other keys of the wrong type read as absent.
    #[test]
    fn wrong_typed_keys_and_entries_skip_the_entry_alone() {
        let text = r#"{"version":null,"disableAllHooks":"yes","hooks":{
            "preToolUse":[{"bash":3,"command":"c"},{"bash":"b","matcher":7},
                {"bash":"t","timeoutSec":"5","timeout":9},{"bash":"v","env":{"B":"b","A":1}},
                {"bash":"w","cwd":5},"junk",["m",null,"cmd"],
                {"matcher":"M","hooks":[{"exec":"e","args":["a",2,null],"timeout":2.5},5]},
                {"bash":null,"command":"n","matcher":null,"cwd":null}],
            "agentStop":{"bash":"x"},
            "sessionEnd":[{"bash":"s","timeoutSec":null,"timeout":4}]}}"#;
        let doc = HooksDoc::parse(text).unwrap();
        assert!(doc.unread_version().is_some());
        assert_eq!(doc.unread_event(), Some("agentStop"));
        assert_eq!(doc.disable_all_hooks.0, None);
        let file = FileContext {
            path: Path::new("h.json"),
            repo: Path::new("/repo"),
            source: Layer::Project,
            hook_dir: None,
            display_file: "",
        };
        let (mut handlers, mut problems) = (Vec::new(), Vec::new());
        parse_hooks(&doc, &file, &mut handlers, &mut problems);
        let got: Vec<_> = (handlers.iter())
            .map(|h| (h.program.text(), h.matcher.clone(), h.timeout_sec))
            .collect();
        assert_eq!(
            got,
            [
                ("e a 2 null".to_owned(), Some("M".to_owned()), 3),
                ("n".to_owned(), None, 30),
                ("s".to_owned(), None, 30)
            ]
        );
        let problems: Vec<_> = problems.iter().map(|p| p.message.as_str()).collect();
        let skipped = |what: &str| format!("hooks.preToolUse[{what} — hook will be skipped");
        assert_eq!(
            problems,
            [
                skipped("0].bash: Expected string"),
                skipped("1].matcher: Expected string"),
                skipped("2].timeoutSec: timeoutSec must be a number"),
                skipped(r#"3].env["A"]: env values must be strings"#),
                skipped("4].cwd: Expected string"),
                skipped("5]: Expected object"),
                skipped("6]: Expected object"),
                skipped("7].hooks[1]: Expected object"),
                "hooks.agentStop: expected an array of hook entries".to_owned(),
            ]
        );
    }

    /// `cwd: "."` is the repository root (its scripts are shown and
    /// pinned as `<root>/x.sh`, not `<root>/./x.sh`).
    #[test]
    fn a_dot_cwd_is_the_repository_root() {
        let doc = HooksDoc::parse(
            r#"{"hooks":{"preToolUse":[{"bash":"./x.sh","cwd":"."},{"bash":"y","cwd":"./s/"}]}}"#,
        );
        let file = FileContext {
            path: Path::new("/repo/h.json"),
            repo: Path::new("/repo"),
            source: Layer::Project,
            hook_dir: None,
            display_file: "",
        };
        let (mut handlers, mut problems) = (Vec::new(), Vec::new());
        parse_hooks(&doc.unwrap(), &file, &mut handlers, &mut problems);
        // As text: `Path`'s own comparison skips a `.` component.
        let dirs: Vec<_> = (handlers.iter())
            .map(|h| h.working_dir().display().to_string())
            .collect();
        assert_eq!(dirs, ["/repo", "/repo/s"]);
    }

    /// cc_pascal_before_camel: a file's camelCase events run first.
    #[test]
    fn camel_case_entries_run_before_pascal_case_ones() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir_all(dir.path().join(".git")).unwrap();
        write(
            &dir.path().join(".github/hooks/h.json"),
            r#"{"version":1,"hooks":{"PreToolUse":[{"bash":"P"}],"preToolUse":[{"bash":"c"}],
               "Stop":[{"bash":"S"}],"agentStop":[{"bash":"a"}]}}"#,
        );
        let config = load(&CopilotDiscovery::new(dir.path(), dir.path().join("h")));
        let commands: Vec<String> = config.handlers.iter().map(|h| h.program.text()).collect();
        assert_eq!(commands, ["c", "a", "P", "S"]);
    }
}
