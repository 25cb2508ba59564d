//! A handler's command: what the shell will run, and what it says about
//! blocking.

use std::path::Path;

use super::resolve::{Word, reads_claude_projects, resolve};
use super::{Checker, Severity};
use dsh_trust::{named_scripts, words};

const BUILTINS: &[&str] = &[
    ".", ":", "[", "[[", "alias", "cd", "command", "echo", "eval", "exec", "exit", "export",
    "false", "printf", "read", "set", "source", "test", "true", "type", "if", "for", "while",
    "case", "{", "(", "!", "time", "env",
];
const INTERPRETERS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "python", "python3", "node", "ruby", "perl", "deno", "bun", "uv",
];

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    fs_err::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(name)))
    })
}

pub(super) fn check_command(c: &mut Checker<'_>, command: &str, exec_form: bool, at: &str) {
    let at = at.to_owned();
    let all = if exec_form {
        vec![command.to_owned()]
    } else {
        words(command)
    };
    let mut rest = all
        .iter()
        .skip_while(|w| {
            w.split_once('=').is_some_and(|(name, _)| {
                !name.is_empty()
                    && name
                        .chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
            })
        })
        .peekable();
    let Some(first) = rest.next() else {
        c.push(
            Severity::Error,
            "empty-command",
            Some(at),
            None,
            "the command is empty".into(),
        );
        return;
    };
    if BUILTINS.contains(&first.as_str()) {
        return;
    }
    // `$VAR` forms are checked only when the variable is known here.
    let Some(program) = checkable(c, first, command, &at) else {
        return;
    };
    if program.contains('/') {
        let path = c.project.join(program.trim_start_matches("./"));
        if !path.exists() {
            c.push(
                Severity::Error,
                "command-not-found",
                Some(at),
                Some(command),
                format!("`{first}` does not exist ({})", path.display()),
            );
        } else if !is_executable(&path) {
            c.push(
                Severity::Error,
                "not-executable",
                Some(at),
                Some(command),
                format!(
                    "`{first}` is not executable ({}): `chmod +x` it or run it through its interpreter",
                    path.display()
                ),
            );
        }
        return;
    }
    if !on_path(&program) {
        c.push(
            Severity::Error,
            "command-not-found",
            Some(at),
            Some(command),
            format!("`{program}` is not a shell builtin and is not on PATH"),
        );
        return;
    }
    if INTERPRETERS.contains(&program.as_str()) {
        let Some(script) = rest.find(|w| !w.starts_with('-')) else {
            return;
        };
        if all.iter().any(|w| w == "-c" || w == "-e") {
            return;
        }
        let Some(expanded) = checkable(c, script, command, &at) else {
            return;
        };
        let path = c.project.join(expanded.trim_start_matches("./"));
        if (expanded.contains('/') || expanded.contains('.')) && !path.exists() {
            c.push(
                Severity::Error,
                "script-not-found",
                Some(at),
                Some(command),
                format!(
                    "`{program}` is asked to run `{script}`, which does not exist ({})",
                    path.display()
                ),
            );
        }
    }
}

/// The word as the shell will read it, or `None` (with a note when the path
/// is computed at run time) when it cannot be checked now.
fn checkable(c: &mut Checker<'_>, word: &str, command: &str, at: &str) -> Option<String> {
    match resolve(word, &c.vars) {
        Word::Known(text) => Some(text),
        Word::RunTime => {
            c.push(
                Severity::Warning,
                "not-checkable",
                Some(at.to_owned()),
                Some(command),
                format!(
                    "`{word}` is computed when the hook runs (command substitution): not checkable statically"
                ),
            );
            None
        }
        // The shell may have it at run time: nothing to say.
        Word::UnknownVariable(_) => None,
    }
}

/// A hook that finds its transcript by globbing `~/.claude/projects` will not
/// find dsh's: dsh writes its Claude-format transcript under `$DSH_HOME`
/// (hooks-claude README, "Transcripts") and passes it as `transcript_path`.
pub(super) fn check_transcript_glob(c: &mut Checker<'_>, command: &str, at: &str) {
    let scripts = named_scripts(command, c.project);
    if let Some(place) = reads_claude_projects(command, &words(command), &scripts, &c.vars) {
        c.push(
            Severity::Warning,
            "transcript-glob",
            Some(format!("{at}.command")),
            Some(command),
            format!(
                "{place} reads Claude Code's transcripts under ~/.claude/projects; dsh does not write there (its transcript is $DSH_HOME/claude/projects/<slug>/<session>.jsonl): read `transcript_path` from the hook's input instead"
            ),
        );
    }
}

const BLOCK_WORDS: &[&str] = &[
    "deny",
    "denied",
    "block",
    "forbid",
    "forbidden",
    "reject",
    "refuse",
    "not allowed",
    "dangerous",
    "prohibit",
    "disallow",
];

/// Heuristic: `exit 1` near words that say "block" in a script a
/// blocking-capable hook runs.
pub(super) fn check_exit_one(c: &mut Checker<'_>, command: &str, at: &str) {
    for script in named_scripts(command, c.project) {
        if !c.scripts_seen.insert(script.clone()) {
            continue;
        }
        let Ok(text) = fs_err::read_to_string(&script) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let Some(at_exit) = line.find("exit 1") else {
                continue;
            };
            let after = line[at_exit + 6..].chars().next();
            if after.is_some_and(|ch| ch.is_ascii_digit()) || line.trim_start().starts_with('#') {
                continue;
            }
            let window = lines[index.saturating_sub(3)..(index + 2).min(lines.len())]
                .join("\n")
                .to_ascii_lowercase();
            if let Some(word) = BLOCK_WORDS.iter().find(|w| window.contains(*w)) {
                c.push(
                    Severity::Warning,
                    "exit-1-not-blocking",
                    Some(at.to_owned()),
                    Some(command),
                    format!(
                        "heuristic: {}:{}: `exit 1` next to \"{word}\" — exit 1 is a non-blocking error (the action goes ahead); exit 2 blocks",
                        script.display(),
                        index + 1
                    ),
                );
                break;
            }
        }
    }
}
