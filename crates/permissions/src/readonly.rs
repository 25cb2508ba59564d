//! Which parsed commands only read: the shortcut that runs them in every
//! mode without a rule.
//!
//! A program's name is not enough — `sort -o FILE` writes, `find -exec`
//! runs, `GIT_EXTERNAL_DIFF=… git diff` runs a program the variable names.
//! Each program here is checked against its options that write, execute or
//! change what it does; anything not known to be harmless is not read-only.
//! This module judges one [`Command`]; it does not see rules or modes.

use crate::shell::{Assignment, Command};

/// Programs that only read or print whatever their arguments are, so
/// arguments computed at run time cannot make them write.
const ANY_ARGS: &[&str] = &[
    "echo", "cat", "ls", "pwd", "head", "tail", "wc", "grep", "which", "true", "false", "whoami",
    "id", "uname", "basename", "dirname", "realpath", "cut", "tr", "diff", "cmp", "test", "[",
    "stat", "du", "df", "printf",
];

/// Read-only programs that have options which write or run something:
/// their arguments must be static and pass [`checked_args`].
const CHECKED: &[&str] = &[
    "sort", "uniq", "find", "git", "rg", "date", "file", "command",
];

/// Read-only git subcommands.
const READ_ONLY_GIT: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "blame",
];

/// Git options before the subcommand that change nothing dangerous. Every
/// other global option (`-c`, `-C`, `--exec-path`, `--git-dir`,
/// `--work-tree`, `--config-env`, …) can make git run a program.
const GIT_GLOBAL_OK: &[&str] = &[
    "--no-pager",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
];

/// Wrappers that change nothing about what a read-only command may do.
const NEUTRAL_WRAPPERS: &[&str] = &[
    "command", "builtin", "env", "nice", "time", "timeout", "stdbuf", "ionice", "setsid", "chrt",
    "taskset", "exec", "xargs",
];

/// Variables that may precede a read-only command: locale, colours and
/// terminal size. Everything else (`GIT_*`, `PAGER`, `EDITOR`, `LD_*`,
/// `PATH`, `BASH_ENV`, …) may name a program or change what runs.
pub fn harmless_variable(a: &Assignment) -> bool {
    let name = a.name.as_str();
    let known = matches!(
        name,
        "LANG"
            | "LANGUAGE"
            | "TZ"
            | "NO_COLOR"
            | "FORCE_COLOR"
            | "CLICOLOR"
            | "CLICOLOR_FORCE"
            | "TERM"
            | "COLUMNS"
            | "LINES"
            | "GREP_COLOR"
            | "GREP_COLORS"
            | "LS_COLORS"
    ) || name.starts_with("LC_");
    // A pager that is `cat` runs nothing new.
    let pager_cat = (name == "PAGER" || name.ends_with("_PAGER"))
        && matches!(a.value.value.as_deref(), Some("cat" | ""));
    (known && !a.value.is_dynamic()) || pager_cat
}

/// True when `cmd` only reads: a known program, harmless options, no
/// writing redirection, no variable that names a program.
pub fn is_read_only(cmd: &Command) -> bool {
    // Code bash evaluates in its words (subscripts, arithmetic, prompt
    // expansion), or a builtin that assigns variables.
    if !cmd.evaluates.is_empty() {
        return false;
    }
    if cmd.redirects.iter().any(|r| r.writes()) {
        return false;
    }
    if !cmd.assignments.iter().all(harmless_variable) {
        return false;
    }
    if !cmd
        .wrappers
        .iter()
        .all(|w| NEUTRAL_WRAPPERS.contains(&w.as_str()))
    {
        return false;
    }
    let argv = cmd.argv();
    let Some(program) = argv.first() else {
        // Only assignments and redirections (or `xargs` alone: `echo`).
        return true;
    };
    let Some(name) = program.value.as_deref() else {
        return false;
    };
    if ANY_ARGS.contains(&name) {
        return true;
    }
    if !CHECKED.contains(&name) || cmd.open_args || cmd.is_dynamic() {
        return false;
    }
    let args: Vec<&str> = argv
        .get(1..)
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.value.as_deref())
        .collect();
    checked_args(name, &args)
}

/// A short-option cluster (`-uo`) containing one of `letters`.
fn short_has(arg: &str, letters: &str) -> bool {
    arg.strip_prefix('-')
        .is_some_and(|rest| !rest.starts_with('-') && rest.chars().any(|c| letters.contains(c)))
}

fn long_is(arg: &str, names: &[&str]) -> bool {
    names
        .iter()
        .any(|n| arg == *n || arg.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
}

fn checked_args(program: &str, args: &[&str]) -> bool {
    match program {
        // `-o FILE` writes; `--compress-program` runs; `-T` writes temps.
        "sort" => !args.iter().any(|a| {
            short_has(a, "oT")
                || long_is(
                    a,
                    &["--output", "--compress-program", "--temporary-directory"],
                )
        }),
        // `uniq IN OUT` writes OUT.
        "uniq" => {
            let mut operands = 0;
            let mut i = 0;
            let mut options_done = false;
            while let Some(a) = args.get(i) {
                i += 1;
                if !options_done && *a == "--" {
                    options_done = true;
                } else if !options_done && a.starts_with('-') && a.len() > 1 {
                    if matches!(*a, "-f" | "-s" | "-w")
                        || long_is(a, &["--skip-fields", "--skip-chars", "--check-chars"])
                            && !a.contains('=')
                    {
                        i += 1;
                    }
                } else {
                    operands += 1;
                }
            }
            operands <= 1
        }
        "find" => !args.iter().any(|a| {
            matches!(
                *a,
                "-exec"
                    | "-execdir"
                    | "-ok"
                    | "-okdir"
                    | "-delete"
                    | "-fprint"
                    | "-fprint0"
                    | "-fprintf"
                    | "-fls"
            )
        }),
        // `--pre` runs a preprocessor; `--hostname-bin` runs a program.
        "rg" => !args
            .iter()
            .any(|a| long_is(a, &["--pre", "--pre-glob", "--hostname-bin"])),
        // `-s`/`--set` changes the clock.
        "date" => !args
            .iter()
            .any(|a| short_has(a, "s") || long_is(a, &["--set"])),
        // `-C` compiles a magic file (writes).
        "file" => !args
            .iter()
            .any(|a| short_has(a, "C") || long_is(a, &["--compile"])),
        // `command -v NAME` looks a name up.
        "command" => matches!(args.first(), Some(&("-v" | "-V"))),
        "git" => git_read_only(args),
        _ => false,
    }
}

fn git_read_only(args: &[&str]) -> bool {
    let mut rest = args.iter();
    let sub = loop {
        match rest.next() {
            Some(a) if a.starts_with('-') => {
                if !GIT_GLOBAL_OK.contains(a) {
                    return false;
                }
            }
            Some(a) => break *a,
            None => return false,
        }
    };
    READ_ONLY_GIT.contains(&sub)
        && !rest.any(|a| {
            long_is(a, &["--output", "--ext-diff", "--open-files-in-pager"])
                || a.starts_with("--output")
        })
}
