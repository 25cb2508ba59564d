//! Which parsed commands only read: the shortcut that runs them in every
//! mode without a rule.
//!
//! A program's name is not enough — `sort -o FILE` writes, `find -exec`
//! runs, `GIT_EXTERNAL_DIFF=… git diff` runs a program the variable names.
//! Each program here is checked against its options that write, execute or
//! change what it does; anything not known to be harmless is not read-only.
//! This module judges one [`Command`]; it does not see rules or modes.

use crate::shell::getopt::{self, Takes};
use crate::shell::{Assignment, Command, RedirectKind};

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
    if cmd.redirects.iter().any(|r| r.writes() || r.network()) || cmd.duplicates_unopened() {
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

/// The options of the checked programs that getopt reads (every option
/// each takes: one the table does not know makes the command not
/// read-only).
fn options_of(program: &str) -> Option<getopt::Spec> {
    use Takes::{No, Optional, Required};
    let (short, long): (&'static str, &'static [(&'static str, Takes)]) = match program {
        "sort" => (
            "bcCdfghik:Mmno:RrS:st:T:uVz",
            &[
                ("ignore-leading-blanks", No),
                ("check", Optional),
                ("dictionary-order", No),
                ("debug", No),
                ("files0-from", Required),
                ("ignore-case", No),
                ("general-numeric-sort", No),
                ("human-numeric-sort", No),
                ("ignore-nonprinting", No),
                ("key", Required),
                ("merge", No),
                ("month-sort", No),
                ("numeric-sort", No),
                ("output", Required),
                ("random-sort", No),
                ("random-source", Required),
                ("reverse", No),
                ("sort", Required),
                ("stable", No),
                ("buffer-size", Required),
                ("field-separator", Required),
                ("temporary-directory", Required),
                ("unique", No),
                ("version-sort", No),
                ("zero-terminated", No),
                ("batch-size", Required),
                ("compress-program", Required),
                ("parallel", Required),
                ("help", No),
                ("version", No),
            ],
        ),
        "uniq" => (
            "cdDf:is:uw:z",
            &[
                ("count", No),
                ("repeated", No),
                ("all-repeated", Optional),
                ("skip-fields", Required),
                ("group", Optional),
                ("ignore-case", No),
                ("skip-chars", Required),
                ("unique", No),
                ("zero-terminated", No),
                ("check-chars", Required),
                ("help", No),
                ("version", No),
            ],
        ),
        "date" => (
            "d:f:I::r:Rs:u",
            &[
                ("date", Required),
                ("file", Required),
                ("iso-8601", Optional),
                ("resolution", No),
                ("reference", Required),
                ("rfc-email", No),
                ("rfc-822", No),
                ("rfc-2822", No),
                ("rfc-3339", Required),
                ("set", Required),
                ("debug", No),
                ("utc", No),
                ("universal", No),
                ("help", No),
                ("version", No),
            ],
        ),
        "file" => (
            "0bcCdEe:F:f:hiklLm:NnpP:rsSvzZ",
            &[
                ("apple", No),
                ("brief", No),
                ("checking-printout", No),
                ("compile", No),
                ("debug", No),
                ("exclude", Required),
                ("exclude-quiet", Required),
                ("extension", No),
                ("files-from", Required),
                ("separator", Required),
                ("help", No),
                ("keep-going", No),
                ("list", No),
                ("dereference", No),
                ("magic-file", Required),
                ("mime", No),
                ("mime-type", No),
                ("mime-encoding", No),
                ("no-buffer", No),
                ("no-dereference", No),
                ("no-pad", No),
                ("no-sandbox", No),
                ("parameter", Required),
                ("preserve-date", No),
                ("print0", No),
                ("raw", No),
                ("special-files", No),
                ("uncompress", No),
                ("uncompress-noreport", No),
                ("version", No),
            ],
        ),
        _ => return None,
    };
    Some(getopt::Spec {
        short,
        long,
        permute: true,
        numeric: false,
    })
}

/// Options of the checked programs that write, run or change something.
const WRITES_OR_RUNS: &[&str] = &[
    // sort: an output file, temporary files, a compressor it runs.
    "-o",
    "-T",
    "--output",
    "--temporary-directory",
    "--compress-program",
    // date: sets the clock.
    "-s",
    "--set",
    // file: compiles a magic file (writes).
    "-C",
    "--compile",
];

fn checked_args(program: &str, args: &[&str]) -> bool {
    if let Some(spec) = options_of(program) {
        let words: Vec<Option<&str>> = args.iter().map(|a| Some(*a)).collect();
        let Ok(parsed) = getopt::parse(&spec, &words) else {
            // An option the table does not know, or one missing its value.
            return false;
        };
        if parsed.options.iter().any(|o| o.is(WRITES_OR_RUNS)) {
            return false;
        }
        return match program {
            // `uniq IN OUT` writes OUT.
            "uniq" => parsed.operands.len() <= 1,
            // `date MMDDhhmm` sets the clock; `+FORMAT` prints.
            "date" => parsed.operands.iter().all(|o| o.starts_with('+')),
            _ => true,
        };
    }
    match program {
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
            .any(|a| prefix_of_any(a, &["--pre", "--hostname-bin"])),
        // `command -v NAME` looks a name up.
        "command" => matches!(args.first(), Some(&("-v" | "-V"))),
        "git" => git_read_only(args),
        _ => false,
    }
}

/// A long option that is a prefix of one of `dangerous` (or extends it,
/// `--output-indicator-new`): with abbreviations (git's parse-options),
/// `--outp` is `--output`. Used where the whole option table is too large
/// to list (git's, ripgrep's).
fn prefix_of_any(arg: &str, dangerous: &[&str]) -> bool {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    name.len() > 2
        && name.starts_with("--")
        && dangerous
            .iter()
            .any(|d| d.starts_with(name) || name.starts_with(d))
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
        && !rest.any(|a| prefix_of_any(a, &["--output", "--ext-diff", "--open-files-in-pager"]))
}

/// What a read-only command reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reads<'a> {
    /// These paths (as written: `~` and relative paths are for the caller
    /// to resolve), and nothing else.
    Paths(Vec<&'a str>),
    /// Files dsh cannot name: a computed path, or arguments added at run
    /// time (`xargs cat`). The text says which.
    Unknown(String),
}

/// Read-only programs that read no file named by an argument.
const NO_FILE_ARGS: &[&str] = &[
    "echo", "printf", "pwd", "true", "false", "whoami", "id", "uname", "basename", "dirname",
    "date", "which", "command", "tr", "test", "[", "realpath",
];

/// The files a read-only command reads (its input redirections and the
/// arguments that name files), for the caller to check against the
/// working directories. Over-approximate: an option's value may be taken
/// for a path (`sort -t /`), which only ever makes a line ask.
pub fn read_paths(cmd: &Command) -> Reads<'_> {
    let mut paths = Vec::new();
    for r in &cmd.redirects {
        if r.dup.is_some() || matches!(r.kind, RedirectKind::Duplicate) {
            continue;
        }
        if let (RedirectKind::Input | RedirectKind::ReadWrite, Some(target)) = (r.kind, &r.target) {
            match path_of_word(target) {
                Some(p) => paths.push(p),
                None => {
                    return Reads::Unknown(format!(
                        "it reads `{}`, a path computed at run time",
                        target.raw
                    ));
                }
            }
        }
    }
    let argv = cmd.argv();
    let Some(name) = argv.first().and_then(|w| w.value.as_deref()) else {
        return Reads::Paths(paths);
    };
    if NO_FILE_ARGS.contains(&name) {
        return Reads::Paths(paths);
    }
    if cmd.open_args {
        return Reads::Unknown(format!("`{name}` reads files named at run time"));
    }
    let args = argv.get(1..).unwrap_or_default();
    if name == "git" {
        // Only `--no-index` compares files outside the repository.
        let no_index = args
            .iter()
            .any(|a| a.value.as_deref().is_some_and(|v| v.starts_with("--no-i")));
        if !no_index {
            return Reads::Paths(paths);
        }
    }
    // grep and rg take a pattern first, unless -e/-f give it.
    let mut pattern_pending = matches!(name, "grep" | "egrep" | "fgrep" | "rg")
        && !args.iter().any(|a| {
            a.value.as_deref().is_some_and(|v| {
                v.starts_with("-e")
                    || v.starts_with("-f")
                    || v.starts_with("--regexp")
                    || v.starts_with("--file")
            })
        });
    let mut options_done = false;
    for (i, w) in args.iter().enumerate() {
        let text = w.value.as_deref();
        if !options_done && text == Some("--") {
            options_done = true;
            continue;
        }
        if !options_done && let Some(v) = text.filter(|v| v.starts_with('-') && v.len() > 1) {
            // `--file=PATH`: a value that looks like a path is one.
            if let Some((_, value)) = v.split_once('=')
                && (value.starts_with(['/', '~']) || value.contains(".."))
            {
                paths.push(value);
            }
            continue;
        }
        // find's expression starts at its first `-`, `(` or `!` word.
        if name == "find"
            && i > 0
            && text.is_some_and(|v| v.starts_with(['-', '(', '!']) || v == ")")
        {
            break;
        }
        if pattern_pending {
            pattern_pending = false;
            continue;
        }
        match path_of_word(w) {
            Some(p) => paths.push(p),
            None => {
                return Reads::Unknown(format!(
                    "it reads `{}`, a path computed at run time",
                    w.raw
                ));
            }
        }
    }
    Reads::Paths(paths)
}

/// The path a word names: its static value, or for a glob the directory
/// part before the first pattern character; `None` when a parameter or
/// substitution computes it.
fn path_of_word(w: &crate::shell::Word) -> Option<&str> {
    if let Some(v) = w.value.as_deref() {
        return Some(v);
    }
    if w.raw.contains(['$', '`', '\'', '"', '\\']) {
        return None;
    }
    let literal = w.raw.split(['*', '?', '[', '{']).next().unwrap_or("");
    Some(
        literal
            .rsplit_once('/')
            .map_or(".", |(dir, _)| if dir.is_empty() { "/" } else { dir }),
    )
}
