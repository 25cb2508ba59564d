//! The wrapper table: programs that run another command (`env`, `nice`,
//! `timeout`, `xargs`, `sudo`, …), the options each takes, and how one is
//! stripped so a rule sees the program that really runs.

use crate::getopt::{self, Takes};
use crate::{Assignment, Redirect, RedirectKind, Word};
use Takes::{No, Optional, Required};

/// What one wrapper word does.
pub(crate) enum Unwrap {
    /// Not a wrapper: this is the program.
    NotWrapper,
    /// A wrapper used in a way that runs no other command (`command -v`,
    /// `sudo -l`): it is the program.
    Stop,
    /// The command it runs cannot be seen.
    Opaque(String),
    /// It runs code given as a string (`env -S`, `flock … -c`); `exact`
    /// when the string is shell code as written, `why` says otherwise.
    Code {
        code: String,
        exact: bool,
        why: String,
    },
    /// It runs the command starting at `next`.
    Inner {
        next: usize,
        env: Vec<Assignment>,
        writes: Vec<Redirect>,
        open_args: bool,
    },
}

/// Options a wrapper takes, read with [`getopt`] (stopping at the first
/// operand), which make it run nothing else, and which write a file.
struct Spec {
    options: getopt::Spec,
    /// Options (`-l`, `--list`) after which nothing else runs.
    stop: &'static [&'static str],
    /// Options whose value is a file the wrapper writes (`time -o`).
    writes: &'static [&'static str],
    /// Positional words between the options and the command (`timeout`'s
    /// duration, `chrt`'s priority, `taskset`'s mask).
    positional: usize,
}

const fn wrapper(short: &'static str, long: &'static [(&'static str, Takes)]) -> Spec {
    Spec {
        options: getopt::Spec {
            short,
            long,
            permute: false,
            numeric: false,
        },
        stop: &[],
        writes: &[],
        positional: 0,
    }
}

const HELP: &[(&str, Takes)] = &[("help", Takes::No), ("version", Takes::No)];

const COMMAND: Spec = Spec {
    stop: &["-v", "-V"],
    ..wrapper("pvV", &[])
};

const SETSID: Spec = wrapper(
    "cfw",
    &[
        ("ctty", No),
        ("fork", No),
        ("wait", No),
        ("help", No),
        ("version", No),
    ],
);

const NICE: Spec = Spec {
    options: getopt::Spec {
        short: "n:",
        long: &[("adjustment", Required), ("help", No), ("version", No)],
        permute: false,
        numeric: true,
    },
    ..wrapper("", &[])
};

const TIME: Spec = Spec {
    writes: &["-o", "--output"],
    ..wrapper(
        "af:o:pqv",
        &[
            ("append", No),
            ("format", Required),
            ("output", Required),
            ("portability", No),
            ("quiet", No),
            ("verbose", No),
            ("help", No),
            ("version", No),
        ],
    )
};

const TIMEOUT: Spec = Spec {
    positional: 1,
    ..wrapper(
        "fk:ps:v",
        &[
            ("foreground", No),
            ("kill-after", Required),
            ("preserve-status", No),
            ("signal", Required),
            ("verbose", No),
            ("help", No),
            ("version", No),
        ],
    )
};

const XARGS: Spec = Spec {
    stop: &["--help", "--version", "--show-limits"],
    ..wrapper(
        "0a:d:E:e::I:i::L:l::n:opP:rs:tx",
        &[
            ("null", No),
            ("arg-file", Required),
            ("delimiter", Required),
            ("eof", Optional),
            ("replace", Optional),
            ("max-lines", Optional),
            ("max-args", Required),
            ("open-tty", No),
            ("interactive", No),
            ("max-procs", Required),
            ("process-slot-var", Required),
            ("no-run-if-empty", No),
            ("max-chars", Required),
            ("show-limits", No),
            ("verbose", No),
            ("exit", No),
            ("help", No),
            ("version", No),
        ],
    )
};

const SUDO: Spec = Spec {
    stop: &[
        "-l",
        "-v",
        "-k",
        "-K",
        "-V",
        "-e",
        "-h",
        "--list",
        "--edit",
        "--help",
        "--validate",
        "--version",
        "--remove-timestamp",
        "--reset-timestamp",
    ],
    ..wrapper(
        "Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:U:u:Vv",
        &[
            ("askpass", No),
            ("auth-type", Required),
            ("background", No),
            ("bell", No),
            ("close-from", Required),
            ("login-class", Required),
            ("chdir", Required),
            ("preserve-env", Optional),
            ("edit", No),
            ("group", Required),
            ("set-home", No),
            ("help", No),
            ("host", Required),
            ("login", No),
            ("remove-timestamp", No),
            ("reset-timestamp", No),
            ("list", No),
            ("no-update", No),
            ("non-interactive", No),
            ("preserve-groups", No),
            ("prompt", Required),
            ("chroot", Required),
            ("role", Required),
            ("stdin", No),
            ("shell", No),
            ("command-timeout", Required),
            ("type", Required),
            ("other-user", Required),
            ("user", Required),
            ("version", No),
            ("validate", No),
        ],
    )
};

const DOAS: Spec = Spec {
    stop: &["-L"],
    ..wrapper("a:C:Lnsu:", &[])
};

const STDBUF: Spec = wrapper(
    "i:o:e:",
    &[
        ("input", Required),
        ("output", Required),
        ("error", Required),
        ("help", No),
        ("version", No),
    ],
);

const IONICE: Spec = Spec {
    stop: &["-p", "--pid", "-P", "--pgid", "-u", "--uid"],
    ..wrapper(
        "c:n:p:P:tu:hV",
        &[
            ("class", Required),
            ("classdata", Required),
            ("pid", Required),
            ("pgid", Required),
            ("ignore", No),
            ("uid", Required),
            ("help", No),
            ("version", No),
        ],
    )
};

const CHRT: Spec = Spec {
    stop: &["-p", "--pid", "-m", "--max"],
    positional: 1,
    ..wrapper(
        "abdD:efhimoP:prRT:vV",
        &[
            ("all-tasks", No),
            ("batch", No),
            ("deadline", No),
            ("ext", No),
            ("fifo", No),
            ("help", No),
            ("idle", No),
            ("max", No),
            ("other", No),
            ("pid", No),
            ("rr", No),
            ("reset-on-fork", No),
            ("sched-runtime", Required),
            ("sched-period", Required),
            ("sched-deadline", Required),
            ("verbose", No),
            ("version", No),
        ],
    )
};

const TASKSET: Spec = Spec {
    stop: &["-p", "--pid"],
    positional: 1,
    ..wrapper(
        "acphV",
        &[
            ("all-tasks", No),
            ("cpu-list", No),
            ("pid", No),
            ("help", No),
            ("version", No),
        ],
    )
};

fn spec(base: &str) -> Option<Spec> {
    Some(match base {
        "command" => COMMAND,
        // `busybox APPLET …` runs the applet.
        "builtin" | "busybox" => wrapper("", &[]),
        "exec" => wrapper("cla:", &[]),
        "nohup" => wrapper("", HELP),
        "setsid" => SETSID,
        "nice" => NICE,
        "time" => TIME,
        "timeout" => TIMEOUT,
        "xargs" => XARGS,
        "sudo" => SUDO,
        "doas" => DOAS,
        "stdbuf" => STDBUF,
        "ionice" => IONICE,
        "chrt" => CHRT,
        "taskset" => TASKSET,
        _ => return None,
    })
}

/// Strips the wrapper `base` at `words[at]`, read with its [`Spec`].
fn unwrap_one_spec(base: &str, spec: &Spec, words: &[Word], at: usize) -> Unwrap {
    let rest = words.get(at + 1..).unwrap_or_default();
    let args: Vec<Option<&str>> = rest.iter().map(|w| w.value.as_deref()).collect();
    let parsed = match getopt::parse(&spec.options, &args) {
        Ok(parsed) => parsed,
        Err(error) => return Unwrap::Opaque(format!("`{base}` has {error}")),
    };
    if parsed.options.iter().any(|o| o.is(spec.stop)) {
        return Unwrap::Stop;
    }
    let writes = parsed
        .options
        .iter()
        .filter(|o| o.is(spec.writes))
        .map(|o| Redirect {
            kind: RedirectKind::Output,
            target: o.value.as_ref().map(|f| Word {
                raw: f.clone(),
                value: Some(f.clone()),
            }),
            fd: None,
            dup: None,
        })
        .collect();
    let mut i = at + 1 + parsed.end;
    for _ in 0..spec.positional {
        match words.get(i) {
            Some(w) if w.is_dynamic() => {
                return Unwrap::Opaque(format!("`{base}` has computed arguments"));
            }
            Some(_) => i += 1,
            None => return Unwrap::Stop,
        }
    }
    if i >= words.len() && base != "xargs" {
        // `sudo -i`, `nohup` alone, `command` alone: nothing wrapped.
        return Unwrap::Stop;
    }
    Unwrap::Inner {
        next: i,
        env: Vec::new(),
        writes,
        open_args: base == "xargs",
    }
}

/// Strips one wrapper at `words[at]`.
pub(crate) fn unwrap_one(base: &str, words: &[Word], at: usize) -> Unwrap {
    match base {
        "env" => return unwrap_env(words, at),
        "flock" => return unwrap_flock(words, at),
        // `coproc CMD …`: bash runs CMD as a coprocess.
        "coproc" if at + 1 < words.len() => {
            return Unwrap::Inner {
                next: at + 1,
                env: Vec::new(),
                writes: Vec::new(),
                open_args: false,
            };
        }
        _ => {}
    }
    match spec(base) {
        Some(spec) => unwrap_one_spec(base, &spec, words, at),
        None => Unwrap::NotWrapper,
    }
}

/// `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… [COMMAND …]`.
fn unwrap_env(words: &[Word], at: usize) -> Unwrap {
    const ENV: getopt::Spec = getopt::Spec {
        short: "0C:iu:vS:",
        long: &[
            ("null", No),
            ("chdir", Required),
            ("ignore-environment", No),
            ("unset", Required),
            ("debug", No),
            ("split-string", Required),
            ("block-signal", Optional),
            ("default-signal", Optional),
            ("ignore-signal", Optional),
            ("list-signal-handling", No),
            ("help", No),
            ("version", No),
        ],
        permute: false,
        numeric: false,
    };
    let rest = words.get(at + 1..).unwrap_or_default();
    let args: Vec<Option<&str>> = rest.iter().map(|w| w.value.as_deref()).collect();
    let parsed = match getopt::parse(&ENV, &args) {
        Ok(parsed) => parsed,
        Err(error) => return Unwrap::Opaque(format!("`env` has {error}")),
    };
    let mut i = at + 1 + parsed.end;
    if let Some(split) = parsed
        .options
        .iter()
        .find(|o| o.is(&["-S", "--split-string"]))
    {
        // `env -S 'CMD ARGS' MORE…` runs CMD ARGS MORE…; env's own
        // escapes differ from the shell's, so the line stays opaque.
        let mut code = split.value.clone().unwrap_or_default();
        for w in words.get(i..).unwrap_or_default() {
            code.push(' ');
            code.push_str(&w.raw);
        }
        return Unwrap::Code {
            code,
            exact: false,
            why: "it runs `env -S` with a command string".to_owned(),
        };
    }
    if parsed
        .options
        .iter()
        .any(|o| o.is(&["--help", "--version"]))
    {
        return Unwrap::Stop;
    }
    let mut env = Vec::new();
    while let Some(w) = words.get(i) {
        let Some(v) = w.value.as_deref() else {
            return Unwrap::Opaque("`env` has computed arguments".to_owned());
        };
        match v.split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                env.push(Assignment {
                    name: name.to_owned(),
                    value: Word {
                        raw: value.to_owned(),
                        value: Some(value.to_owned()),
                    },
                });
                i += 1;
            }
            _ => break,
        }
    }
    if i >= words.len() {
        return Unwrap::Stop;
    }
    Unwrap::Inner {
        next: i,
        env,
        writes: Vec::new(),
        open_args: false,
    }
}

/// `flock [OPTIONS] FILE COMMAND …`, `flock [OPTIONS] FILE -c CODE`,
/// `flock [OPTIONS] FD` (no command).
fn unwrap_flock(words: &[Word], at: usize) -> Unwrap {
    const FLOCK: getopt::Spec = getopt::Spec {
        short: "sexnoFuw:E:hV",
        long: &[
            ("shared", No),
            ("exclusive", No),
            ("unlock", No),
            ("nonblocking", No),
            ("nb", No),
            ("timeout", Required),
            ("wait", Required),
            ("conflict-exit-code", Required),
            ("close", No),
            ("no-fork", No),
            ("verbose", No),
            ("help", No),
            ("version", No),
        ],
        permute: false,
        numeric: false,
    };
    let rest = words.get(at + 1..).unwrap_or_default();
    let args: Vec<Option<&str>> = rest.iter().map(|w| w.value.as_deref()).collect();
    let mut i = match getopt::parse(&FLOCK, &args) {
        Ok(parsed) => at + 1 + parsed.end,
        Err(error) => return Unwrap::Opaque(format!("`flock` has {error}")),
    };
    // The lock file or descriptor.
    i += 1;
    match words.get(i).map(|w| w.value.as_deref()) {
        None => Unwrap::Stop,
        Some(Some("-c" | "--command")) => match words.get(i + 1).map(|w| w.value.clone()) {
            Some(Some(code)) => Unwrap::Code {
                code,
                exact: true,
                why: String::new(),
            },
            Some(None) => Unwrap::Opaque("it runs `flock -c` with a computed string".to_owned()),
            None => Unwrap::Stop,
        },
        Some(_) => Unwrap::Inner {
            next: i,
            env: Vec::new(),
            writes: Vec::new(),
            open_args: false,
        },
    }
}
