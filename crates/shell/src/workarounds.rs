//! Workarounds for brush-parser 0.3's gaps: a here-doc with a quoted
//! delimiter inside `$( … )` comes back with its closing line quoted,
//! `coproc` before a compound command (`coproc { …; }`, `coproc NAME ( … )`)
//! does not parse, and the parser panics on some input (caught here).

use brush_parser::ast;
use brush_parser::{Parser, ParserOptions, SourceInfo};

/// The parser options every parse here uses.
pub(crate) fn options() -> ParserOptions {
    ParserOptions::default()
}

/// Parses shell code; returns the text the program was parsed from.
pub(crate) fn parse_program(text: &str) -> Option<(String, ast::Program)> {
    let parse = |text: &str| {
        std::panic::catch_unwind(|| {
            Parser::new(text.as_bytes(), &options(), &SourceInfo::default()).parse_program()
        })
        .ok()
        .and_then(Result::ok)
    };
    // The here-doc repair goes first: a mangled closing line can still
    // parse, as something else (`echo $( echo $( sh <<'EOF' … ) )`). A
    // line that is only a quoted tag reads the same unquoted anyway.
    let here_docs = repair_here_docs(text);
    if let Some(repaired) = &here_docs
        && let Some(program) = parse(repaired)
    {
        return Some((repaired.clone(), program));
    }
    if let Some(program) = parse(text) {
        return Some((text.to_owned(), program));
    }
    let repaired = repair_coproc(here_docs.as_deref().unwrap_or(text))?;
    parse(&repaired).map(|program| (repaired, program))
}

/// `coproc [NAME] { …; }` and `coproc [NAME] ( … )` become
/// `coproc [NAME]; { …; }`: the group is walked as any other, and a
/// command named `coproc` stays in the line (never read-only, and a rule
/// must cover it).
fn repair_coproc(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("coproc") {
        let before_ok = rest
            .get(..at)
            .and_then(|b| b.chars().next_back())
            .is_none_or(|c| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | '{' | '!'));
        let after = rest.get(at + 6..).unwrap_or("");
        out.push_str(rest.get(..at + 6).unwrap_or(""));
        rest = after;
        if !before_ok || !after.starts_with(char::is_whitespace) {
            continue;
        }
        let trimmed = after.trim_start();
        let name_len = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(trimmed.len());
        let after_name = trimmed.get(name_len..).unwrap_or("").trim_start();
        if after_name.starts_with(['{', '(']) {
            let skip = after.len() - after_name.len();
            out.push_str(after.get(..skip).unwrap_or(""));
            out.push_str("; ");
            rest = after_name;
            changed = true;
        }
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// brush-parser 0.3 hands the code of a `$( … )` holding a here-doc with a
/// quoted delimiter (`<<'EOF'`) back with the closing line quoted too
/// (`'EOF'`), which then never closes. Unquotes such closing lines.
fn repair_here_docs(text: &str) -> Option<String> {
    let mut tags = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("<<") {
        let after = rest.get(at + 2..).unwrap_or("");
        let after = after.strip_prefix('-').unwrap_or(after).trim_start();
        for q in ['\'', '"'] {
            if let Some(tag) = after
                .strip_prefix(q)
                .and_then(|t| t.split_once(q))
                .map(|(tag, _)| tag)
                && !tag.is_empty()
            {
                tags.push((format!("{q}{tag}{q}"), tag.to_owned()));
            }
        }
        rest = after;
    }
    if tags.is_empty() {
        return None;
    }
    let mut changed = false;
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            let trimmed = line.trim_start_matches('\t');
            match tags.iter().find(|(quoted, _)| trimmed == quoted) {
                Some((_, tag)) => {
                    changed = true;
                    tag.clone()
                }
                None => line.to_owned(),
            }
        })
        .collect();
    changed.then(|| lines.join("\n"))
}
