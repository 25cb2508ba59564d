//! What a `sed` command does beyond editing its files: its options read
//! as GNU sed reads them, and its scripts read command by command for the
//! ones that run shell code (`e`, `s///e`) or write other files (`w`,
//! `W`, `s///w`, an `-i` backup suffix with a `/`).

use crate::getopt::{self, Takes};

/// GNU sed's options.
pub const OPTIONS: getopt::Spec = getopt::Spec {
    short: "bEe:f:i::l:nrsuz",
    long: &[
        ("binary", Takes::No),
        ("debug", Takes::No),
        ("expression", Takes::Required),
        ("file", Takes::Required),
        ("follow-symlinks", Takes::No),
        ("help", Takes::No),
        ("in-place", Takes::Optional),
        ("line-length", Takes::Required),
        ("null-data", Takes::No),
        ("zero-terminated", Takes::No),
        ("posix", Takes::No),
        ("quiet", Takes::No),
        ("silent", Takes::No),
        ("regexp-extended", Takes::No),
        ("sandbox", Takes::No),
        ("separate", Takes::No),
        ("unbuffered", Takes::No),
        ("version", Takes::No),
    ],
    permute: true,
    numeric: false,
};

/// What a `sed` command line does besides reading and editing its files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sed {
    /// Shell commands its scripts run (`e CMD`).
    pub runs: Vec<String>,
    /// It runs code dsh cannot see (`e` alone or `s///e` run the pattern
    /// space; a script read from a file).
    pub runs_unknown: bool,
    /// Files it writes besides the ones it edits (`w FILE`, `s///w FILE`,
    /// a backup suffix naming another directory).
    pub writes: Vec<String>,
    /// The files it reads or edits in place.
    pub files: Vec<String>,
    /// Why the command cannot be read (an unknown option, a script dsh
    /// cannot parse).
    pub unreadable: Option<String>,
}

/// Reads a `sed` command's arguments (static words; `None` for a word
/// computed at run time).
pub fn read(args: &[Option<&str>]) -> Sed {
    let mut out = Sed::default();
    let parsed = match getopt::parse(&OPTIONS, args) {
        Ok(parsed) => parsed,
        Err(error) => {
            out.unreadable = Some(format!("`sed` has {error}"));
            return out;
        }
    };
    let mut scripts = Vec::new();
    let mut sandbox = false;
    let mut backups = Vec::new();
    for o in &parsed.options {
        if o.is(&["-e", "--expression"]) {
            scripts.push(o.value.clone().unwrap_or_default());
        } else if o.is(&["-f", "--file"]) {
            out.runs_unknown = true;
            out.unreadable = Some("`sed` reads its script from a file".to_owned());
        } else if o.is(&["-i", "--in-place"]) {
            // `-i'bak/*'`: the backup goes where the suffix says.
            if let Some(suffix) = o.value.as_deref().filter(|s| s.contains('/')) {
                backups.push(suffix.to_owned());
            }
        } else if o.is(&["--sandbox"]) {
            sandbox = true;
        }
    }
    let mut operands = parsed.operands.into_iter();
    if scripts.is_empty() && out.unreadable.is_none() {
        match operands.next() {
            Some(script) => scripts.push(script),
            None => {
                out.unreadable = Some("`sed` has no script".to_owned());
                return out;
            }
        }
    }
    out.files = operands.collect();
    if out.files.iter().any(String::is_empty) || scripts.iter().any(String::is_empty) {
        out.unreadable = Some("`sed` has arguments computed at run time".to_owned());
    }
    // GNU sed joins `-e` scripts with newlines.
    let script = scripts.join("\n");
    if let Err(why) = scan(&script, &mut out) {
        out.unreadable = Some(format!("dsh cannot read the `sed` script: {why}"));
        out.runs_unknown = true;
    }
    if sandbox && out.unreadable.is_none() {
        // --sandbox refuses e, w and r.
        out.runs.clear();
        out.writes.clear();
        out.runs_unknown = false;
    }
    backups.append(&mut out.writes);
    out.writes = backups;
    out
}

/// Reads a script command by command.
fn scan(script: &str, out: &mut Sed) -> Result<(), String> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    let rest_of_line = |i: &mut usize| -> String {
        let start = *i;
        while *i < chars.len() && chars[*i] != '\n' {
            *i += 1;
        }
        chars[start..*i]
            .iter()
            .collect::<String>()
            .trim()
            .to_owned()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() || c == ';' || c == '}' {
            i += 1;
            continue;
        }
        // Addresses: numbers, `$`, `/re/`, `\cREc`, `first~step`, `+N`,
        // ranges with `,`, then `!`.
        loop {
            let Some(&c) = chars.get(i) else {
                return Ok(());
            };
            if c.is_ascii_digit() || matches!(c, '$' | '~' | ',' | '+' | '!' | ' ' | '\t') {
                i += 1;
            } else if c == '/' || c == '\\' {
                let delim = if c == '\\' {
                    i += 1;
                    *chars.get(i).ok_or("an address is not closed")?
                } else {
                    '/'
                };
                i += 1;
                i = skip_delimited(&chars, i, delim).ok_or("an address is not closed")?;
                while matches!(chars.get(i), Some('I' | 'M')) {
                    i += 1;
                }
            } else {
                break;
            }
        }
        let Some(&command) = chars.get(i) else {
            return Ok(());
        };
        i += 1;
        match command {
            '{' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
            | 'F' => {}
            // An optional number.
            'l' | 'L' | 'q' | 'Q' => {
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_digit() || *c == ' ')
                {
                    i += 1;
                }
            }
            // A label, to the end of the line or a `;`.
            ':' | 'b' | 't' | 'T' | 'v' => {
                while i < chars.len() && chars[i] != '\n' && chars[i] != ';' {
                    i += 1;
                }
            }
            '#' => {
                rest_of_line(&mut i);
            }
            // Text to the end of the line (continued by a backslash).
            'a' | 'i' | 'c' => {
                while i < chars.len() && chars[i] != '\n' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            // Reads a file: sed's own business.
            'r' | 'R' => {
                rest_of_line(&mut i);
            }
            'w' | 'W' => {
                let file = rest_of_line(&mut i);
                out.writes.push(file);
            }
            'e' => {
                let code = rest_of_line(&mut i);
                if code.is_empty() {
                    out.runs_unknown = true;
                } else {
                    out.runs.push(code);
                }
            }
            's' | 'y' => {
                let delim = *chars.get(i).ok_or("`s` has no delimiter")?;
                if delim == '\n' || delim == '\\' {
                    return Err("`s` has a newline or backslash delimiter".to_owned());
                }
                i += 1;
                i = skip_delimited(&chars, i, delim).ok_or("`s` is not closed")?;
                i = skip_delimited(&chars, i, delim).ok_or("`s` is not closed")?;
                if command == 's' {
                    // Flags: g p i I m M e, a number, then `w FILE`.
                    while let Some(&f) = chars.get(i) {
                        match f {
                            'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                            d if d.is_ascii_digit() => i += 1,
                            'e' => {
                                out.runs_unknown = true;
                                i += 1;
                            }
                            'w' => {
                                i += 1;
                                let file = rest_of_line(&mut i);
                                out.writes.push(file);
                            }
                            _ => break,
                        }
                    }
                }
            }
            other => return Err(format!("unknown command `{other}`")),
        }
    }
    Ok(())
}

/// The index after the next unescaped `delim` from `i`.
fn skip_delimited(chars: &[char], mut i: usize, delim: char) -> Option<usize> {
    while let Some(&c) = chars.get(i) {
        if c == '\\' {
            i += 2;
            continue;
        }
        if c == delim {
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sed(args: &[&str]) -> Sed {
        let args: Vec<Option<&str>> = args.iter().map(|a| Some(*a)).collect();
        read(&args)
    }

    #[test]
    fn scripts_that_run_or_write_are_found() {
        assert_eq!(sed(&["-i", "1e rm x", "a"]).runs, ["rm x"]);
        assert_eq!(sed(&["s/a/b/;e id", "a"]).runs, ["id"]);
        assert_eq!(sed(&["-n", "w /out", "a"]).writes, ["/out"]);
        assert_eq!(sed(&["-i", "s/a/b/w /out", "a"]).writes, ["/out"]);
        assert!(sed(&["-i", "s/a/b/e", "a"]).runs_unknown);
        assert_eq!(sed(&["-i/out/*", "s/a/b/", "a"]).writes, ["/out/*"]);
        assert_eq!(
            sed(&["--in-place=/out/*", "s/a/b/", "a"]).writes,
            ["/out/*"]
        );
        assert!(sed(&["-f", "x.sed", "a"]).unreadable.is_some());
        assert!(sed(&["--nope", "p", "a"]).unreadable.is_some());
    }

    #[test]
    fn ordinary_scripts_are_plain() {
        for args in [
            &["-i", "s/a/b/g", "a.txt"][..],
            &["-i.bak", "-e", "s|/usr|/opt|", "-e", "/x/d", "a.txt"],
            &["-n", "1,5p;$=", "a"],
            &["-E", "s/(a)/\\1w/2", "a"],
            &["/start/,/end/{s/x/y/;p}", "a"],
            &["1i\\\nheader", "a"],
            &["y/abc/xyz/", "a"],
        ] {
            let s = sed(args);
            assert!(
                s.runs.is_empty() && s.writes.is_empty() && !s.runs_unknown,
                "{args:?}: {s:?}"
            );
            assert!(s.unreadable.is_none(), "{args:?}: {s:?}");
        }
        assert_eq!(sed(&["-i", "s/a/b/", "x", "y"]).files, ["x", "y"]);
    }
}
