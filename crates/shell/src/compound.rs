//! The quote-aware splitter that Bash rules used before the shell parse
//! ([`crate::parse`]).
//!
//! It splits a line at its unquoted control operators and reports anything
//! it cannot split with confidence (command substitution, process
//! substitution, an unterminated quote) as [`Split::Opaque`]. The policy no
//! longer decides on it: [`crate::parse`] uses it only to salvage commands
//! from text the parser rejects (for deny rules), and the decision
//! benchmark runs it next to the parser. It is not a shell parser.

/// The simple commands of one shell line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Split {
    /// The commands between the line's operators (`;`, `&&`, `||`, `|`,
    /// `&`, newlines), trimmed, empty ones dropped, in order.
    Commands(Vec<String>),
    /// Something runs that the line's text does not show as a command
    /// (`$(…)`, backticks, `<(…)`/`>(…)`), or the quoting does not close.
    Opaque,
}

/// Splits `line` at its unquoted control operators.
pub fn split(line: &str) -> Split {
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut commands = Vec::new();
    let mut current = String::new();
    let mut quote = Quote::None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Quote::Single => {
                current.push(c);
                if c == '\'' {
                    quote = Quote::None;
                }
            }
            Quote::Double => {
                current.push(c);
                match c {
                    '"' => quote = Quote::None,
                    '\\' => {
                        if let Some(next) = chars.next() {
                            current.push(next);
                        }
                    }
                    // Substitutions still run inside double quotes.
                    '`' => return Split::Opaque,
                    '$' if chars.peek() == Some(&'(') => return Split::Opaque,
                    _ => {}
                }
            }
            Quote::None => match c {
                '\'' => {
                    quote = Quote::Single;
                    current.push(c);
                }
                '"' => {
                    quote = Quote::Double;
                    current.push(c);
                }
                '\\' => {
                    current.push(c);
                    if let Some(next) = chars.next() {
                        current.push(next);
                    }
                }
                '`' => return Split::Opaque,
                '$' | '<' | '>' if chars.peek() == Some(&'(') => return Split::Opaque,
                ';' | '\n' | '|' | '&' => {
                    // `&&`, `||`, `|&`, `;;` are one operator; `>&`/`<&`
                    // (fd duplication) are part of a redirection.
                    if c == '&' && (current.ends_with('>') || current.ends_with('<')) {
                        current.push(c);
                        continue;
                    }
                    if matches!(chars.peek(), Some('&' | '|' | ';')) {
                        chars.next();
                    }
                    push_command(&mut commands, &mut current);
                }
                _ => current.push(c),
            },
        }
    }
    if quote != Quote::None {
        return Split::Opaque;
    }
    push_command(&mut commands, &mut current);
    Split::Commands(commands)
}

fn push_command(commands: &mut Vec<String>, current: &mut String) {
    let trimmed = current.trim();
    if !trimmed.is_empty() {
        commands.push(trimmed.to_owned());
    }
    current.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commands(line: &str) -> Vec<String> {
        match split(line) {
            Split::Commands(c) => c,
            Split::Opaque => panic!("opaque: {line}"),
        }
    }

    #[test]
    fn splits_at_every_control_operator() {
        assert_eq!(commands("npm test"), ["npm test"]);
        assert_eq!(
            commands("touch a; rm -rf b && ls || cat x | wc -l & echo done\nid"),
            [
                "touch a",
                "rm -rf b",
                "ls",
                "cat x",
                "wc -l",
                "echo done",
                "id"
            ]
        );
        assert_eq!(commands("a |& b ;; c"), ["a", "b", "c"]);
    }

    #[test]
    fn quotes_and_escapes_keep_operators_inside_one_command() {
        assert_eq!(
            commands("echo 'a; b' \"c && d\""),
            ["echo 'a; b' \"c && d\""]
        );
        assert_eq!(commands("echo a\\;b"), ["echo a\\;b"]);
        assert_eq!(commands("make 2>&1 | tee log"), ["make 2>&1", "tee log"]);
    }

    #[test]
    fn substitutions_and_open_quotes_are_opaque() {
        for line in [
            "touch $(rm -rf x)",
            "touch `rm x`",
            "echo \"$(id)\"",
            "diff <(ls a) <(ls b)",
            "echo 'open",
        ] {
            assert_eq!(split(line), Split::Opaque, "{line}");
        }
        // Single quotes make `$(` literal.
        assert_eq!(commands("echo '$(id)'"), ["echo '$(id)'"]);
    }
}
