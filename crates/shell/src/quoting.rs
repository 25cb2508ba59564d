//! Quoting and word helpers: ANSI-C (`$'…'`) decoding as bash does it,
//! the loose reading of a word the parser could not read, and the tests
//! for assignments and expanding text.

use std::ops::Range;

/// `NAME=…` (a shell assignment word).
/// What bash makes of the body of `$'…'` (ANSI-C quoting): its escapes
/// decoded, cut at a NUL as bash cuts it. `None` when the result is not
/// text: a `\\x`/octal byte above 0x7f, or a `\\u`/`\\U` that is not a
/// character.
pub(crate) fn ansi_c(body: &str) -> Option<String> {
    // A byte escape is a character only in the ASCII range.
    let byte = |value: u32| (value < 0x80).then(|| char::from_u32(value)).flatten();
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    // Up to `max` digits of `radix`, as one number.
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
        let mut value: Option<u32> = None;
        for _ in 0..max {
            let Some(digit) = chars.peek().and_then(|c| c.to_digit(radix)) else {
                break;
            };
            chars.next();
            value = Some(value.unwrap_or(0) * radix + digit);
        }
        value
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let decoded = match escape {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' | '\'' | '"' | '?' => escape,
            '0'..='7' => {
                let mut value = escape.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let Some(digit) = chars.peek().and_then(|c| c.to_digit(8)) else {
                        break;
                    };
                    chars.next();
                    value = value * 8 + digit;
                }
                byte(value)?
            }
            'x' => match digits(&mut chars, 16, 2) {
                Some(value) => byte(value)?,
                None => {
                    out.push_str("\\x");
                    continue;
                }
            },
            'u' | 'U' => {
                let max = if escape == 'u' { 4 } else { 8 };
                match digits(&mut chars, 16, max) {
                    Some(value) => char::from_u32(value)?,
                    None => {
                        out.push('\\');
                        out.push(escape);
                        continue;
                    }
                }
            }
            'c' => match chars.next() {
                Some(control) => char::from_u32(u32::from(control) & 0x1f).unwrap_or('\0'),
                None => {
                    out.push_str("\\c");
                    continue;
                }
            },
            other => {
                out.push('\\');
                other
            }
        };
        if decoded == '\0' {
            break;
        }
        out.push(decoded);
    }
    Some(out)
}

/// A word of text the parse could not read, as a command name would run:
/// `$'…'` decoded, other quotes and backslashes dropped, a trailing `$`
/// gone.
pub(crate) fn loose_word(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word.trim_start_matches('\\');
    while !rest.is_empty() {
        if let Some(body) = rest.strip_prefix("$'") {
            let end = ansi_c_end(body);
            out.push_str(&ansi_c(&body[..end]).unwrap_or_default());
            rest = body.get(end + 1..).unwrap_or("");
            continue;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else { break };
        // `$"…"` is a (translatable) double-quoted string.
        let gettext = c == '$' && chars.as_str().starts_with('"');
        if !(gettext || matches!(c, '\'' | '"' | '\\')) {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out.trim_end_matches('$').to_owned()
}

/// Where the `'` that closes a `$'…'` body is (a `\\'` does not close it);
/// the body's length when it is not closed.
fn ansi_c_end(body: &str) -> usize {
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '\'') => return i,
            (false, _) => {}
        }
    }
    body.len()
}

pub(crate) fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

pub(crate) fn slice(s: &str, r: Range<usize>) -> &str {
    s.get(r).unwrap_or("")
}

/// Unquoted text the shell expands: globs (`*`, `?`, `[…]`) and brace
/// expansion (`{a,b}`, `{1..3}`).
pub(crate) fn expands(t: &str) -> bool {
    if t.contains(['*', '?']) {
        return true;
    }
    if let Some(open) = t.find('[')
        && t.get(open + 1..).is_some_and(|rest| rest.contains(']'))
    {
        return true;
    }
    if let Some(open) = t.find('{') {
        let rest = t.get(open..).unwrap_or("");
        if let Some(close) = rest.find('}') {
            let inner = rest.get(1..close).unwrap_or("");
            return inner.contains(',') || inner.contains("..");
        }
    }
    false
}
