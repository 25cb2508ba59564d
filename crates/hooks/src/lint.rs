//! The linter both bridges share for `dsh hooks check`: the [`Finding`]
//! type, the walk over a hook file's event table (events, matcher groups,
//! handlers, timeouts) and the checks of a handler's shell command.
//!
//! What it is not: it knows no dialect. Which events exist, which handler
//! fields and types a dialect accepts, how its matchers compile, its other
//! settings and where its files are found are the bridges' (each
//! implements [`Rules`] and its own `lint`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value};

mod commands;
mod events;
mod handlers;
mod resolve;
mod subjects;

pub use resolve::{ShellVars, Word, plugin_root_of, resolve};

/// How bad a finding is: errors make `dsh hooks check` fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The tool refuses the file, or a hook can never work.
    Error,
    /// Something a user would be surprised by.
    Warning,
}

/// One finding of `dsh hooks check`, serialized as `--format json` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Error or warning.
    pub severity: Severity,
    /// A stable kebab-case code (`unknown-event`).
    pub code: &'static str,
    /// The file it is about.
    pub file: PathBuf,
    /// `line:column` when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// Where in the document (`hooks.PreToolUse[0].hooks[1]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// What is wrong, for people.
    pub message: String,
}

/// What the linter knows about an event, whatever the dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventInfo {
    /// Whether the event's matcher is honoured.
    pub honours_matcher: bool,
    /// Whether exit code 2 blocks on this event.
    pub exit2_blocks: bool,
}

/// A dialect's schema, as the shared walk asks about it.
pub trait Rules {
    /// The tool's name in messages (`Claude Code`, `Codex`).
    fn tool_name(&self) -> &'static str;

    /// Keys of the `hooks` object that are not events (skipped).
    fn skips_event(&self, _name: &str) -> bool {
        false
    }

    /// The event `name` at `at`: its facts, or `None` (with a finding
    /// pushed) when the dialect does not know it.
    fn event(&self, checker: &mut Checker<'_>, name: &str, at: &str) -> Option<EventInfo>;

    /// Why `pattern` does not compile as this dialect's matcher.
    fn matcher_error(&self, pattern: &str) -> Option<String>;

    /// What the tool does with a matcher that does not compile.
    fn invalid_matcher_consequence(&self) -> &'static str;

    /// Whether `pattern` (a valid matcher) matches `value`.
    fn matcher_matches(&self, pattern: &str, value: &str) -> bool;

    /// The values `event`'s matcher is tested against, when they are a
    /// closed set: (what they are, every value the tool documents).
    fn closed_subjects(&self, event: &str) -> Option<(&'static str, &'static [&'static str])>;

    /// Checks of a valid matcher beyond the shared ones.
    fn check_matcher(&self, _checker: &mut Checker<'_>, _pattern: &str, _at: &str) {}

    /// The fields a handler of type `kind` may have; `None` when the
    /// dialect cannot load such a handler.
    fn handler_fields(&self, kind: &str) -> Option<Vec<&'static str>>;

    /// Checks of a handler's own fields beyond the shared ones (after the
    /// unknown fields, before the timeout).
    fn check_handler(&self, _checker: &mut Checker<'_>, _object: &Map<String, Value>, _at: &str) {}

    /// Whether the handler runs its `command` without a shell (exec form).
    fn is_exec_form(&self, _object: &Map<String, Value>) -> bool {
        false
    }

    /// Whether commands that glob Claude Code's transcript directory are
    /// reported (the dialect passes `transcript_path`).
    fn checks_transcript_glob(&self) -> bool {
        false
    }
}

/// The state of one file's check: where findings go and what positions
/// are searched in.
#[derive(Debug)]
pub struct Checker<'a> {
    file: &'a Path,
    text: String,
    project: &'a Path,
    out: Vec<Finding>,
    scripts_seen: HashSet<PathBuf>,
    /// Where the event being checked starts in the text (positions are
    /// searched from there).
    event_offset: usize,
    /// What the shell will know when a hook runs.
    vars: ShellVars,
}

impl<'a> Checker<'a> {
    /// A check of `file` (whose contents are `text`) in `project`.
    pub fn new(file: &'a Path, text: String, project: &'a Path) -> Self {
        Checker {
            file,
            text,
            project,
            out: Vec::new(),
            scripts_seen: HashSet::new(),
            event_offset: 0,
            vars: ShellVars::default(),
        }
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The file being checked.
    pub fn file(&self) -> &Path {
        self.file
    }

    /// The project the hooks run in.
    pub fn project(&self) -> &Path {
        self.project
    }

    /// Sets what the shell will know when the hooks of `document` run.
    pub fn set_vars(&mut self, vars: ShellVars) {
        self.vars = vars;
    }

    /// Positions are searched from where the event `name` starts.
    pub fn enter_event(&mut self, name: &str) {
        self.event_offset = serde_json::to_string(name)
            .ok()
            .and_then(|quoted| self.text.find(&quoted))
            .or_else(|| self.text.find(&format!("hooks.{name}")))
            .unwrap_or(0);
    }

    /// Checks what the hook command `command` (at the field `at`) runs:
    /// its program (or, `exec_form`, the executable itself) and the script
    /// an interpreter is asked to run exist (`command-not-found`,
    /// `not-executable`, `script-not-found`), relative to the project.
    pub fn check_command(&mut self, command: &str, exec_form: bool, at: &str) {
        commands::check_command(self, command, exec_form, at);
    }

    /// Whether an error was found.
    pub fn has_errors(&self) -> bool {
        self.out.iter().any(|f| f.severity == Severity::Error)
    }

    /// The findings, in the order they were made.
    pub fn finish(self) -> Vec<Finding> {
        self.out
    }

    /// A finding whose `line:column` the caller computed.
    pub fn push_at(
        &mut self,
        severity: Severity,
        code: &'static str,
        at: Option<String>,
        position: Option<String>,
        message: String,
    ) {
        self.out.push(Finding {
            severity,
            code,
            file: self.file.to_owned(),
            position,
            at,
            message,
        });
    }

    /// A finding at the first occurrence of `needle` (as a JSON string) in
    /// the current event, else in the file.
    pub fn push(
        &mut self,
        severity: Severity,
        code: &'static str,
        at: Option<String>,
        needle: Option<&str>,
        message: String,
    ) {
        let position = needle.and_then(|n| {
            locate(&self.text, n, self.event_offset).or_else(|| locate(&self.text, n, 0))
        });
        self.push_at(severity, code, at, position, message);
    }
}

/// `line:column` of the first occurrence of `needle` (as a JSON string) in
/// `text` at or after byte `from`.
fn locate(text: &str, needle: &str, from: usize) -> Option<String> {
    let quoted = serde_json::to_string(needle).ok()?;
    let offset = from + text.get(from..)?.find(&quoted)?;
    let before = text.get(..offset)?;
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(1, |tail| tail.chars().count() + 1);
    Some(format!("{line}:{column}"))
}

/// Reads `file` for a check, or the `unreadable` finding.
pub fn read(file: &Path) -> Result<String, Finding> {
    // std: the finding names the file itself.
    #[allow(clippy::disallowed_methods)]
    std::fs::read_to_string(file).map_err(|error| Finding {
        severity: Severity::Error,
        code: "unreadable",
        file: file.to_owned(),
        position: None,
        at: None,
        message: format!("cannot read the file: {error}"),
    })
}

/// The files of `paths` that exist, each once, in order: what a check
/// of a session's configuration reads.
pub fn existing(paths: impl IntoIterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_file() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The names of `path`'s file, its folder and that folder's parent
/// (empty where there is none): a dialect tells its files by where they
/// lie.
pub fn path_tail(path: &Path) -> [String; 3] {
    let mut names = path
        .ancestors()
        .map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    std::array::from_fn(|_| names.next().flatten().unwrap_or_default())
}

/// `file` opened for a check: read, and parsed by `parse` (the dialect's
/// reading of JSON), or the one finding that ends the check: `unreadable`,
/// or `malformed-json` with `says` turning the error into the dialect's
/// message.
pub fn open_json<'a, T>(
    file: &'a Path,
    project: &'a Path,
    parse: impl FnOnce(&str) -> serde_json::Result<T>,
    says: impl FnOnce(String) -> String,
) -> Result<(Checker<'a>, T), Vec<Finding>> {
    let text = read(file).map_err(|finding| vec![finding])?;
    let document = parse(&text).map_err(|error| vec![malformed_json(file, &error, says)])?;
    Ok((Checker::new(file, text, project), document))
}

/// The `malformed-json` finding for `file`, which `serde_json` could not
/// parse: at the error's line and column, with `says` turning the error
/// (without its position) into the dialect's message.
pub fn malformed_json(
    file: &Path,
    error: &serde_json::Error,
    says: impl FnOnce(String) -> String,
) -> Finding {
    Finding {
        severity: Severity::Error,
        code: "malformed-json",
        file: file.to_owned(),
        position: Some(format!("{}:{}", error.line(), error.column())),
        at: None,
        message: says(crate::position::without_position(error)),
    }
}

/// The shared checks of a parsed hook file: the shell variables its hooks
/// will see, then its `hooks` event table under `rules`.
pub fn check_hooks(checker: &mut Checker<'_>, rules: &dyn Rules, document: &Value) {
    let mut vars = ShellVars::for_settings(checker.project.to_owned(), document);
    vars.plugin_root = plugin_root_of(checker.file);
    checker.vars = vars;
    events::walk(checker, rules, document);
}

/// The nearest of `candidates` to `name` by edit distance (case-insensitive),
/// when it is close enough to be a plausible typo.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|candidate| {
            (
                strsim::levenshtein(&lower, &candidate.to_ascii_lowercase()),
                candidate,
            )
        })
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// ` (did you mean `x`?)` for a suggestion, else nothing.
pub fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion
        .map(|s| format!(" (did you mean `{s}`?)"))
        .unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_path_tail_names_file_folder_and_parent() {
        assert_eq!(
            path_tail(Path::new("/p/.github/hooks/a.json")),
            ["a.json", "hooks", ".github"]
        );
        assert_eq!(path_tail(Path::new("a.json")), ["a.json", "", ""]);
    }

    #[test]
    fn existing_files_are_kept_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b] = ["a.json", "b.json"].map(|name| dir.path().join(name));
        fs_err::write(&a, "{}").unwrap();
        fs_err::write(&b, "{}").unwrap();
        let missing = dir.path().join("missing.json");
        assert_eq!(existing([b.clone(), missing, a.clone(), b.clone()]), [b, a]);
    }

    #[test]
    fn an_opened_file_is_parsed_or_its_one_finding() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("h.json");
        fs_err::write(&file, "{\n  \"hooks\": ,\n}").unwrap();
        let parse = |text: &str| serde_json::from_str::<Value>(text);
        let findings = open_json(&file, dir.path(), parse, |e| format!("bad: {e}"))
            .err()
            .unwrap();
        assert_eq!(
            (findings[0].code, findings[0].position.as_deref()),
            ("malformed-json", Some("2:12"))
        );
        assert!(findings[0].message.starts_with("bad: expected value"));
        fs_err::write(&file, r#"{"hooks": {}}"#).unwrap();
        let (checker, document) = open_json(&file, dir.path(), parse, |e| e).ok().unwrap();
        assert_eq!(
            (checker.finish().len(), document["hooks"].is_object()),
            (0, true)
        );
    }
}
