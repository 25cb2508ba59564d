//! Options read the way GNU `getopt_long` reads them: short clusters
//! (`-uo FILE`, `-oFILE`), long options with `=VALUE` or a separate value,
//! any unambiguous prefix of a long option (`--o=FILE` is `--output`),
//! `--` ending the options, and (for most programs) options after
//! operands. An option the table does not know is an error: a caller
//! judging what a command does must not guess.

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// A flag.
    No,
    /// A value, attached or in the next word.
    Required,
    /// A value only when attached (`-xVALUE`, `--opt=VALUE`).
    Optional,
}

/// The options a program takes.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Short options as a getopt string: a letter, `:` after it when it
    /// takes a value, `::` when the value is optional.
    pub short: &'static str,
    /// Long options, without the leading `--`.
    pub long: &'static [(&'static str, Takes)],
    /// Options may follow operands (GNU permutation); `false` stops at the
    /// first operand, as wrappers do (`+` in the getopt string).
    pub permute: bool,
    /// `-N` (a number) is an option of its own (`nice -5`, `head -5`).
    pub numeric: bool,
}

/// One option as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    /// `-x` for a short option, `--name` (the full name, after
    /// abbreviation) for a long one.
    pub name: String,
    /// Its value, if it has one.
    pub value: Option<String>,
}

impl Opt {
    /// True when this is one of `names` (`-o`, `--output`, …).
    pub fn is(&self, names: &[&str]) -> bool {
        names.contains(&self.name.as_str())
    }
}

/// What [`parse`] read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The options, in order.
    pub options: Vec<Opt>,
    /// The operands, in order.
    pub operands: Vec<String>,
    /// Index in the arguments of the first word after the options, when
    /// the spec does not permute (the operand or command that follows).
    pub end: usize,
}

/// Why the arguments cannot be read with confidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// An option the table does not know (or an ambiguous abbreviation).
    Unknown(String),
    /// An option needing a value came last.
    MissingValue(String),
    /// A word in the options is computed at run time.
    Dynamic,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unknown(o) => write!(f, "an option dsh does not know (`{o}`)"),
            Error::MissingValue(o) => write!(f, "`{o}` without its value"),
            Error::Dynamic => write!(f, "options computed at run time"),
        }
    }
}

fn short_takes(spec: &Spec, c: char) -> Option<Takes> {
    for (i, letter) in spec.short.char_indices() {
        if letter == ':' {
            continue;
        }
        let rest = spec.short.get(i + letter.len_utf8()..).unwrap_or("");
        if letter == c {
            return Some(if rest.starts_with("::") {
                Takes::Optional
            } else if rest.starts_with(':') {
                Takes::Required
            } else {
                Takes::No
            });
        }
    }
    None
}

/// The long option `name` names: itself, or the one long option it is an
/// unambiguous prefix of.
pub fn long_match(spec: &Spec, name: &str) -> Option<(&'static str, Takes)> {
    if let Some(exact) = spec.long.iter().find(|(n, _)| *n == name) {
        return Some(*exact);
    }
    let mut candidates = spec.long.iter().filter(|(n, _)| n.starts_with(name));
    let first = candidates.next()?;
    if name.is_empty() || candidates.next().is_some() {
        return None;
    }
    Some(*first)
}

/// Reads `args` (`None` for a word computed at run time) as getopt would.
pub fn parse(spec: &Spec, args: &[Option<&str>]) -> Result<Parsed, Error> {
    let mut out = Parsed::default();
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(arg) = *arg else {
            // A computed word: the command after a wrapper's options, an
            // operand after `--`, or (where options may still come) unknown.
            if !spec.permute {
                out.end = i - 1;
                return Ok(out);
            }
            if options_done {
                out.operands.push(String::new());
                continue;
            }
            return Err(Error::Dynamic);
        };
        if options_done || arg == "-" || !arg.starts_with('-') {
            if !spec.permute && !options_done {
                out.end = i - 1;
                return Ok(out);
            }
            out.operands.push(arg.to_owned());
            continue;
        }
        if arg == "--" {
            options_done = true;
            if !spec.permute {
                out.end = i;
                return Ok(out);
            }
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (long, None),
            };
            let Some((full, takes)) = long_match(spec, name) else {
                return Err(Error::Unknown(arg.to_owned()));
            };
            let value = match (takes, attached) {
                (Takes::No, Some(_)) => return Err(Error::Unknown(arg.to_owned())),
                (Takes::No, None) => None,
                (Takes::Optional, v) => v,
                (Takes::Required, Some(v)) => Some(v),
                (Takes::Required, None) => match args.get(i) {
                    Some(Some(v)) => {
                        i += 1;
                        Some((*v).to_owned())
                    }
                    Some(None) => return Err(Error::Dynamic),
                    None => return Err(Error::MissingValue(arg.to_owned())),
                },
            };
            out.options.push(Opt {
                name: format!("--{full}"),
                value,
            });
            continue;
        }
        let letters = arg.get(1..).unwrap_or("");
        if spec.numeric && letters.chars().all(|c| c.is_ascii_digit()) {
            out.options.push(Opt {
                name: arg.to_owned(),
                value: None,
            });
            continue;
        }
        for (n, c) in letters.char_indices() {
            let Some(takes) = short_takes(spec, c) else {
                return Err(Error::Unknown(format!("-{c}")));
            };
            let rest = letters.get(n + c.len_utf8()..).unwrap_or("");
            match takes {
                Takes::No => out.options.push(Opt {
                    name: format!("-{c}"),
                    value: None,
                }),
                Takes::Optional | Takes::Required => {
                    let value = if !rest.is_empty() {
                        Some(rest.to_owned())
                    } else if takes == Takes::Optional {
                        None
                    } else {
                        match args.get(i) {
                            Some(Some(v)) => {
                                i += 1;
                                Some((*v).to_owned())
                            }
                            Some(None) => return Err(Error::Dynamic),
                            None => return Err(Error::MissingValue(format!("-{c}"))),
                        }
                    };
                    out.options.push(Opt {
                        name: format!("-{c}"),
                        value,
                    });
                    break;
                }
            }
        }
    }
    out.end = args.len();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Spec = Spec {
        short: "bo:T:k:",
        long: &[
            ("output", Takes::Required),
            ("reverse", Takes::No),
            ("random-sort", Takes::No),
            ("compress-program", Takes::Required),
        ],
        permute: true,
        numeric: false,
    };

    fn read(args: &[&str]) -> Result<Parsed, Error> {
        let args: Vec<Option<&str>> = args.iter().map(|a| Some(*a)).collect();
        parse(&SORT, &args)
    }

    #[test]
    fn long_options_match_by_unambiguous_prefix() {
        let p = read(&["--o=x", "data"]).unwrap();
        assert_eq!(p.options[0].name, "--output");
        assert_eq!(p.options[0].value.as_deref(), Some("x"));
        assert_eq!(p.operands, ["data"]);
        let p = read(&["data", "--outp", "x"]).unwrap();
        assert_eq!(p.options[0].name, "--output");
        assert_eq!(
            read(&["--comp=sh"]).unwrap().options[0].name,
            "--compress-program"
        );
        // `--r` could be --reverse or --random-sort.
        assert!(matches!(read(&["--r"]), Err(Error::Unknown(_))));
        assert!(matches!(read(&["--nope"]), Err(Error::Unknown(_))));
        assert!(matches!(read(&["-q"]), Err(Error::Unknown(_))));
    }

    #[test]
    fn short_clusters_take_the_rest_or_the_next_word() {
        let p = read(&["-bofile"]).unwrap();
        assert_eq!(p.options[1].value.as_deref(), Some("file"));
        let p = read(&["-bo", "file", "--", "-x"]).unwrap();
        assert_eq!(p.options[1].value.as_deref(), Some("file"));
        assert_eq!(p.operands, ["-x"]);
        assert!(matches!(read(&["-o"]), Err(Error::MissingValue(_))));
    }
}
