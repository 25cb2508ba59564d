//! Workarounds for brush-parser 0.3's gaps: a here-doc with a quoted
//! delimiter inside `$( … )` comes back with its closing line quoted, and
//! the parser panics on some input (caught here).

use brush_parser::ast;
use brush_parser::{Parser, SourceInfo};

use crate::walk::options;

/// Parses shell code; returns the text the program was parsed from.
pub(crate) fn parse_program(text: &str) -> Option<(String, ast::Program)> {
    let parse = |text: &str| {
        std::panic::catch_unwind(|| {
            Parser::new(text.as_bytes(), &options(), &SourceInfo::default()).parse_program()
        })
        .ok()
        .and_then(Result::ok)
    };
    if let Some(program) = parse(text) {
        return Some((text.to_owned(), program));
    }
    let repaired = repair_here_docs(text)?;
    parse(&repaired).map(|program| (repaired, program))
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
