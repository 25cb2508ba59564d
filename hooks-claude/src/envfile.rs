//! `CLAUDE_ENV_FILE`: SessionStart hooks append `export NAME=VALUE` lines;
//! Claude Code sources the file before every later Bash call. dsh reads the
//! file once the SessionStart hooks finish and sets the variables on the
//! session environment, which later `bash` calls inherit.
//!
//! Supported syntax: blank lines and `#` comments, an optional `export `,
//! `NAME=VALUE` where VALUE is unquoted (backslash escapes a character,
//! whitespace ends it), `'single quoted'` (literal) or `"double quoted"`
//! (`\"`, `\\`, `\$`, `` \` `` escapes), pieces concatenated. Anything else —
//! command substitution, `$VAR` expansion, other shell commands — is not
//! evaluated and is reported as skipped.

/// How the `CLAUDE_ENV_FILE` of each hook of one firing is named:
/// `<dir>/<prefix>-hook-<i>.sh` for the i-th selected hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EnvFileNames {
    /// The session's `session-env` directory.
    pub dir: std::path::PathBuf,
    /// `sessionstart`, `setup`, `cwdchanged`, `filechanged`.
    pub prefix: &'static str,
}

impl EnvFileNames {
    /// The i-th hook's file.
    pub(crate) fn path(&self, i: usize) -> std::path::PathBuf {
        self.dir.join(format!("{}-hook-{i}.sh", self.prefix))
    }

    /// The variable for the i-th hook.
    pub(crate) fn env(&self, i: usize) -> Vec<(String, String)> {
        vec![(
            "CLAUDE_ENV_FILE".to_owned(),
            self.path(i).to_string_lossy().into_owned(),
        )]
    }
}

/// The outcome of reading an env file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvFile {
    /// Variables in file order (a later assignment of the same name wins when applied).
    pub vars: Vec<(String, String)>,
    /// Lines that were not simple assignments (1-based line number, text).
    pub skipped: Vec<(usize, String)>,
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_value(raw: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                match chars.next() {
                    Some('\'') => break,
                    Some(c) => out.push(c),
                    None => return None,
                }
            },
            '"' => loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(c @ ('"' | '\\' | '$' | '`')) => out.push(c),
                        Some('\n') => {}
                        Some(c) => {
                            out.push('\\');
                            out.push(c);
                        }
                        None => return None,
                    },
                    Some('$' | '`') => return None,
                    Some(c) => out.push(c),
                    None => return None,
                }
            },
            '\\' => match chars.next() {
                Some(c) => out.push(c),
                None => return None,
            },
            '$' | '`' | '(' | ')' | '|' | '&' | '<' | '>' => return None,
            ';' => {
                // `export A=1;` — allow only trailing whitespace after it.
                return chars.all(char::is_whitespace).then_some(out);
            }
            c if c.is_whitespace() => {
                // Whitespace ends the word; a trailing comment is fine.
                let rest: String = chars.collect();
                let rest = rest.trim();
                return (rest.is_empty() || rest.starts_with('#')).then_some(out);
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// Parses the text of a `CLAUDE_ENV_FILE`.
pub fn parse_env_file(text: &str) -> EnvFile {
    let mut parsed = EnvFile::default();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let body = trimmed
            .strip_prefix("export")
            .filter(|rest| rest.starts_with(char::is_whitespace))
            .map_or(trimmed, str::trim_start);
        let assignment = body
            .split_once('=')
            .filter(|(name, _)| valid_name(name))
            .and_then(|(name, value)| parse_value(value).map(|v| (name.to_owned(), v)));
        match assignment {
            Some(pair) => parsed.vars.push(pair),
            None => parsed.skipped.push((index + 1, line.to_owned())),
        }
    }
    parsed
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parses_exports_and_quoting() {
        let parsed = parse_env_file(
            "export FOO=from_env_file\nBAR='a b'\n# c\n\nexport BAZ=\"x \\\"y\\\" z\"\nQ=a\\ b;\nexport P=$(id)\nrm -rf /\n",
        );
        assert_eq!(
            parsed.vars,
            vec![
                ("FOO".into(), "from_env_file".into()),
                ("BAR".into(), "a b".into()),
                ("BAZ".into(), "x \"y\" z".into()),
                ("Q".into(), "a b".into()),
            ]
        );
        assert_eq!(parsed.skipped.len(), 2);
        assert_eq!(parsed.skipped[0].0, 7);
    }
}
