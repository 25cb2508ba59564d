//! The wrapper table: programs that run another command (`env`, `nice`,
//! `timeout`, `xargs`, `sudo`, …), the options each takes, and how one is
//! stripped so a rule sees the program that really runs.

use crate::{Assignment, Redirect, RedirectKind, Word};

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

/// Options a wrapper takes: which take a separate value, and which make it
/// run nothing else.
struct Spec {
    /// Short options taking a value (`-n` of `nice`), as letters.
    short_value: &'static str,
    /// Long options taking a value when not written `--opt=value`.
    long_value: &'static [&'static str],
    /// Letters or long options after which nothing else runs.
    stop: &'static [&'static str],
    /// Positional words between the options and the command (`timeout`'s
    /// duration, `chrt`'s priority, `taskset`'s mask).
    positional: usize,
}

const NO_SPEC: Spec = Spec {
    short_value: "",
    long_value: &[],
    stop: &[],
    positional: 0,
};

fn spec(base: &str) -> Option<Spec> {
    Some(match base {
        "command" => Spec {
            stop: &["-v", "-V"],
            ..NO_SPEC
        },
        // `busybox APPLET …` runs the applet.
        "builtin" | "nohup" | "setsid" | "exec" | "busybox" => Spec {
            short_value: if base == "exec" { "a" } else { "" },
            ..NO_SPEC
        },
        "nice" => Spec {
            short_value: "n",
            long_value: &["--adjustment"],
            ..NO_SPEC
        },
        "time" => Spec {
            short_value: "fo",
            long_value: &["--format", "--output"],
            ..NO_SPEC
        },
        "timeout" => Spec {
            short_value: "sk",
            long_value: &["--signal", "--kill-after"],
            positional: 1,
            ..NO_SPEC
        },
        "xargs" => Spec {
            short_value: "adEILnPs",
            long_value: &[
                "--arg-file",
                "--delimiter",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            stop: &["--help", "--version"],
            ..NO_SPEC
        },
        "sudo" => Spec {
            short_value: "ughpCDrtTUR",
            long_value: &[
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--close-from",
                "--chdir",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--chroot",
            ],
            stop: &[
                "-l", "-v", "-k", "-K", "-V", "-e", "--list", "--edit", "--help",
            ],
            ..NO_SPEC
        },
        "doas" => Spec {
            short_value: "uC",
            ..NO_SPEC
        },
        "stdbuf" => Spec {
            short_value: "ioe",
            long_value: &["--input", "--output", "--error"],
            ..NO_SPEC
        },
        "ionice" => Spec {
            short_value: "cnP",
            long_value: &["--class", "--classdata"],
            stop: &["-p", "--pid", "-P", "--pgid", "-u", "--uid"],
            ..NO_SPEC
        },
        "chrt" => Spec {
            short_value: "TPD",
            long_value: &["--sched-runtime", "--sched-period", "--sched-deadline"],
            stop: &["-p", "--pid", "-m", "--max"],
            positional: 1,
        },
        "taskset" => Spec {
            stop: &["-p", "--pid"],
            positional: 1,
            ..NO_SPEC
        },
        _ => return None,
    })
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
    let Some(spec) = spec(base) else {
        return Unwrap::NotWrapper;
    };
    let mut i = at + 1;
    let mut writes = Vec::new();
    while let Some(w) = words.get(i) {
        let Some(v) = w.value.as_deref() else {
            return Unwrap::Opaque(format!("`{base}` has computed options"));
        };
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        // `nice -5`: a numeric adjustment.
        if base == "nice"
            && v.get(1..)
                .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
        {
            i += 1;
            continue;
        }
        if spec.stop.contains(&v) {
            return Unwrap::Stop;
        }
        let value_follows = if let Some(long) = v.strip_prefix("--") {
            !long.contains('=') && spec.long_value.contains(&v)
        } else {
            // A cluster like `-pn5`: the first letter taking a value ends it.
            let letters = v.get(1..).unwrap_or("");
            let mut follows = false;
            for (n, c) in letters.char_indices() {
                if spec.stop.iter().any(|s| s.len() == 2 && s.ends_with(c)) {
                    return Unwrap::Stop;
                }
                if spec.short_value.contains(c) {
                    follows = n + c.len_utf8() == letters.len();
                    break;
                }
            }
            follows
        };
        // GNU time's `-o FILE` writes the timing to FILE.
        let writes_to = base == "time" && (v == "-o" || v.starts_with("--output"));
        if writes_to {
            let target = if value_follows {
                words.get(i + 1).cloned()
            } else {
                v.split_once('=').map(|(_, f)| Word {
                    raw: f.to_owned(),
                    value: Some(f.to_owned()),
                })
            };
            writes.push(Redirect {
                kind: RedirectKind::Output,
                target,
            });
        }
        i += if value_follows { 2 } else { 1 };
    }
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

/// `env [-i] [-u NAME] [-C DIR] [NAME=VALUE]… [COMMAND …]`.
fn unwrap_env(words: &[Word], at: usize) -> Unwrap {
    let mut i = at + 1;
    let mut env = Vec::new();
    while let Some(w) = words.get(i) {
        let Some(v) = w.value.as_deref() else {
            return Unwrap::Opaque("`env` has computed arguments".to_owned());
        };
        if v == "--" {
            i += 1;
            continue;
        }
        let split = if let Some(s) = v.strip_prefix("-S").filter(|s| !s.is_empty()) {
            Some(Some(s.to_owned()))
        } else if let Some(s) = v.strip_prefix("--split-string=") {
            Some(Some(s.to_owned()))
        } else if v == "-S" || v == "--split-string" {
            Some(words.get(i + 1).and_then(|w| w.value.clone()))
        } else {
            None
        };
        if let Some(split) = split {
            let consumed = if v == "-S" || v == "--split-string" {
                2
            } else {
                1
            };
            let Some(split) = split else {
                return Unwrap::Opaque("it runs `env -S` with a computed string".to_owned());
            };
            // `env -S 'CMD ARGS' MORE…` runs CMD ARGS MORE…; env's own
            // escapes differ from the shell's, so the line stays opaque.
            let rest = words.get(i + consumed..).unwrap_or_default();
            let mut code = split;
            for w in rest {
                code.push(' ');
                code.push_str(&w.raw);
            }
            return Unwrap::Code {
                code,
                exact: false,
                why: "it runs `env -S` with a command string".to_owned(),
            };
        }
        if matches!(v, "-u" | "-C" | "--unset" | "--chdir") {
            i += 2;
            continue;
        }
        if v.starts_with('-') {
            i += 1;
            continue;
        }
        if let Some((name, value)) = v.split_once('=')
            && !name.is_empty()
        {
            env.push(Assignment {
                name: name.to_owned(),
                value: Word {
                    raw: value.to_owned(),
                    value: Some(value.to_owned()),
                },
            });
            i += 1;
            continue;
        }
        break;
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
    let mut i = at + 1;
    while let Some(w) = words.get(i) {
        let Some(v) = w.value.as_deref() else {
            return Unwrap::Opaque("`flock` has computed arguments".to_owned());
        };
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        let takes_value = matches!(
            v,
            "-w" | "-E" | "--wait" | "--timeout" | "--conflict-exit-code"
        ) || (v.starts_with('-')
            && !v.starts_with("--")
            && v.len() > 2
            && v.ends_with(['w', 'E']));
        i += if takes_value { 2 } else { 1 };
    }
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
