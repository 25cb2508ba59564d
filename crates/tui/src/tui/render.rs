//! Rendering for people: Markdown of assistant text as it streams (line by
//! line, as Codex commits lines), syntax-highlighted code blocks, word
//! wrapping to the terminal's width, and commands shortened in the middle.
//!
//! Without colour (`NO_COLOR`, `--color never`, not a terminal) the text is
//! left as the model wrote it — Markdown reads fine as plain text — and only
//! wrapped; with colour, headings, emphasis, inline code, lists, quotes and
//! rules are styled and the markers dropped, and fenced code is highlighted
//! by `syntect` (pure-Rust regexes, bundled grammars).

use std::sync::OnceLock;

use anstyle::{AnsiColor, Effects, Style};
use pulldown_cmark::{Event, Parser, Tag, TagEnd};
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// The terminal's width in columns: the tty's size, else `COLUMNS`, else 80.
pub fn terminal_width() -> usize {
    match crossterm::terminal::size() {
        Ok((columns, _)) if columns > 0 => usize::from(columns),
        _ => std::env::var("COLUMNS")
            .ok()
            .and_then(|value| value.trim().parse().ok())
            .filter(|columns: &usize| *columns > 0)
            .unwrap_or(80),
    }
}

/// `text` in at most `max` characters, cut in the middle (`head…tail`), so
/// both the program and its last argument stay visible.
pub fn shorten_middle(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max || max < 5 {
        return text.to_owned();
    }
    let keep = max - 1;
    let head = keep.div_ceil(2);
    let tail = keep - head;
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(count - tail).collect();
    format!("{start}…{end}")
}

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The text (no newlines).
    pub text: String,
    /// Its style (ignored without colour).
    pub style: Style,
}

impl Span {
    /// A span.
    pub fn new(text: impl Into<String>, style: Style) -> Self {
        Span {
            text: text.into(),
            style,
        }
    }
}

/// Word-wraps `spans` to `width` columns: lines break at spaces, never
/// inside a word (a word longer than a line gets a line of its own).
/// `first` prefixes the first line and `rest` the others (hanging indent).
pub fn wrap(spans: &[Span], width: usize, first: &Span, rest: &str, color: bool) -> String {
    let indent = rest.chars().count();
    let mut out = paint(first, color);
    let mut column = first.text.chars().count();
    let mut at_line_start = true;
    let mut pending_space: Option<(String, Style)> = None;
    for span in spans {
        for token in split_words(&span.text) {
            if token.chars().all(char::is_whitespace) {
                if !at_line_start {
                    pending_space = Some((token.to_owned(), span.style));
                }
                continue;
            }
            let word_len = token.chars().count();
            let space_len = pending_space
                .as_ref()
                .map_or(0, |(space, _)| space.chars().count());
            if !at_line_start && column + space_len + word_len > width {
                out.push('\n');
                out.push_str(rest);
                column = indent;
                pending_space = None;
            } else if let Some((space, style)) = pending_space.take() {
                out.push_str(&paint(&Span::new(space, style), color));
                column += space_len;
            }
            out.push_str(&paint(&Span::new(token, span.style), color));
            column += word_len;
            at_line_start = false;
        }
    }
    out
}

fn split_words(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut start = 0;
    let mut in_space: Option<bool> = None;
    for (index, ch) in text.char_indices() {
        let space = ch.is_whitespace();
        if in_space.is_some_and(|was| was != space) {
            tokens.push(&text[start..index]);
            start = index;
        }
        in_space = Some(space);
    }
    if start < text.len() {
        tokens.push(&text[start..]);
    }
    tokens
}

fn paint(span: &Span, color: bool) -> String {
    if color && span.style != Style::new() && !span.text.is_empty() {
        format!("{}{}{:#}", span.style, span.text, span.style)
    } else {
        span.text.clone()
    }
}

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme() -> Option<&'static Theme> {
    static THEMES: OnceLock<ThemeSet> = OnceLock::new();
    THEMES
        .get_or_init(ThemeSet::load_defaults)
        .themes
        .get("base16-ocean.dark")
}

/// Inside a fenced code block.
struct CodeBlock {
    fence: String,
    highlighter: Option<HighlightLines<'static>>,
}

/// The kind of Markdown block a line belongs to, for the blank line that
/// separates blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Block {
    /// Nothing rendered yet in this message.
    Start,
    /// An empty line.
    Blank,
    Heading,
    Paragraph,
    List,
    Quote,
    Rule,
    /// A line of a fenced code block, its fences included.
    Code,
    /// The line after a code block's closing fence is a new block.
    CodeEnd,
}

impl Block {
    /// Whether a blank line goes between a line of `self` and one of
    /// `next` when the text has none: between blocks, never inside a
    /// paragraph, a list or a quote.
    fn needs_gap_before(self, next: Block) -> bool {
        !matches!(
            (self, next),
            (Block::Start | Block::Blank, _)
                | (_, Block::Blank)
                | (Block::Paragraph, Block::Paragraph)
                | (Block::List, Block::List)
                | (Block::Quote, Block::Quote)
                | (Block::Code, Block::Code)
        )
    }
}

/// Renders streamed Markdown line by line: each complete line is rendered
/// when its newline arrives, the unfinished tail when the message ends.
/// With colour (where the markers are dropped) blocks are kept apart by a
/// blank line even where the text has none, as the model's Markdown reads
/// in Claude Code.
pub struct MarkdownStream {
    color: bool,
    width: usize,
    pending: String,
    code: Option<CodeBlock>,
    /// The block of the last line rendered.
    last: Block,
}

impl MarkdownStream {
    /// A renderer for `width` columns.
    pub fn new(color: bool, width: usize) -> Self {
        MarkdownStream {
            color,
            width: width.max(20),
            pending: String::new(),
            code: None,
            last: Block::Start,
        }
    }

    /// Adopts a new terminal width (from the next line on).
    pub fn set_width(&mut self, width: usize) {
        self.width = width.max(20);
    }

    /// Feeds streamed text; returns what is ready to print (whole lines).
    pub fn push(&mut self, delta: &str) -> String {
        self.pending.push_str(delta);
        let mut out = String::new();
        while let Some(end) = self.pending.find('\n') {
            let line: String = self.pending.drain(..=end).collect();
            if let Some(rendered) = self.line(line.trim_end_matches(['\n', '\r'])) {
                out.push_str(&rendered);
                out.push('\n');
            }
        }
        out
    }

    /// Whether text is held back waiting for its newline.
    #[cfg(test)]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Ends the message: renders the unfinished line and closes any code
    /// block. The result ends with a newline unless it is empty.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        let mut out = String::new();
        if !rest.is_empty()
            && let Some(rendered) = self.line(&rest)
        {
            out.push_str(&rendered);
            out.push('\n');
        }
        self.code = None;
        out
    }

    /// Renders a whole message at once.
    pub fn render(&mut self, text: &str) -> String {
        let mut out = self.push(text);
        out.push_str(&self.finish());
        out
    }

    /// One rendered line (with the blank line before it that starts a new
    /// block, in colour); `None` for a fence line that colour hides.
    fn line(&mut self, line: &str) -> Option<String> {
        let block = self.block_of(line);
        let gap = self.color && self.last.needs_gap_before(block);
        let rendered = self.render_line(line);
        self.last = if block == Block::Code && self.code.is_none() {
            Block::CodeEnd
        } else {
            block
        };
        if !gap {
            return rendered;
        }
        Some(match rendered {
            Some(text) => format!("\n{text}"),
            None => String::new(),
        })
    }

    /// Which block `line` belongs to, given the lines before it.
    fn block_of(&self, line: &str) -> Block {
        let trimmed = line.trim_start();
        if self.code.is_some() || trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            return Block::Code;
        }
        if trimmed.is_empty() {
            return Block::Blank;
        }
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            return Block::Heading;
        }
        if is_rule(trimmed) {
            return Block::Rule;
        }
        if trimmed.starts_with('>') {
            return Block::Quote;
        }
        // An indented line under a list item continues it.
        if list_hang(trimmed) > 0 || (self.last == Block::List && trimmed.len() < line.len()) {
            return Block::List;
        }
        Block::Paragraph
    }

    /// One line as shown; `None` for a fence line that colour hides.
    fn render_line(&mut self, line: &str) -> Option<String> {
        let trimmed = line.trim_start();
        if let Some(code) = &mut self.code {
            if trimmed.starts_with(code.fence.as_str()) && trimmed.trim_end() == code.fence {
                self.code = None;
                return (!self.color).then(|| line.to_owned());
            }
            if !self.color {
                return Some(line.to_owned());
            }
            return Some(match &mut code.highlighter {
                Some(highlighter) => {
                    let with_newline = format!("{line}\n");
                    match highlighter.highlight_line(&with_newline, syntaxes()) {
                        Ok(ranges) => {
                            let text = syntect::util::as_24_bit_terminal_escaped(&ranges, false);
                            format!("  {}\x1b[0m", text.trim_end_matches('\n'))
                        }
                        Err(_) => format!("  {line}"),
                    }
                }
                None => paint(
                    &Span::new(format!("  {line}"), AnsiColor::Cyan.on_default()),
                    true,
                ),
            });
        }
        for fence in ["```", "~~~"] {
            if let Some(info) = trimmed.strip_prefix(fence) {
                let marker: String = trimmed
                    .chars()
                    .take_while(|c| *c == '`' || *c == '~')
                    .collect();
                let lang = info.trim_start_matches(['`', '~']).trim();
                let highlighter = if self.color && !lang.is_empty() {
                    let syntax = syntaxes().find_syntax_by_token(lang);
                    syntax
                        .zip(theme())
                        .map(|(syntax, theme)| HighlightLines::new(syntax, theme))
                } else {
                    None
                };
                self.code = Some(CodeBlock {
                    fence: marker,
                    highlighter,
                });
                return (!self.color).then(|| line.to_owned());
            }
        }
        if !self.color {
            let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
            let spans = [Span::new(trimmed, Style::new())];
            let hang = list_hang(trimmed);
            let rest = format!("{indent}{}", " ".repeat(hang));
            return Some(wrap(
                &spans,
                self.width,
                &Span::new(indent, Style::new()),
                &rest,
                false,
            ));
        }
        Some(self.styled_line(line))
    }

    fn styled_line(&self, line: &str) -> String {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let pad = " ".repeat(indent);
        if trimmed.is_empty() {
            return String::new();
        }
        // Headings.
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
            let mut style = Style::new().effects(Effects::BOLD);
            if hashes == 1 {
                style = style.effects(Effects::BOLD | Effects::UNDERLINE);
            }
            let spans = inline(trimmed[hashes..].trim(), style);
            return wrap(&spans, self.width, &Span::new("", Style::new()), "", true);
        }
        // Rules.
        if is_rule(trimmed) {
            let rule = "─".repeat(self.width.min(40));
            return paint(
                &Span::new(rule, Style::new().effects(Effects::DIMMED)),
                true,
            );
        }
        // Quotes.
        if let Some(quote) = trimmed.strip_prefix('>') {
            let dim = Style::new().effects(Effects::DIMMED);
            let spans = inline(quote.trim_start(), dim);
            let bar = format!("{pad}│ ");
            return wrap(&spans, self.width, &Span::new(bar.clone(), dim), &bar, true);
        }
        // Lists.
        let hang = list_hang(trimmed);
        if hang > 0 {
            let marker = &trimmed[..hang];
            let bullet = if matches!(marker.trim(), "-" | "*" | "+") {
                "• ".to_owned()
            } else {
                marker.to_owned()
            };
            let spans = inline(&trimmed[hang..], Style::new());
            let first = Span::new(format!("{pad}{bullet}"), AnsiColor::Cyan.on_default());
            let rest = " ".repeat(indent + bullet.chars().count());
            return wrap(&spans, self.width, &first, &rest, true);
        }
        let spans = inline(trimmed, Style::new());
        wrap(
            &spans,
            self.width,
            &Span::new(pad.clone(), Style::new()),
            &pad,
            true,
        )
    }
}

/// Whether `line` is a thematic break (`---`, `***`, `___`, spaced or not).
fn is_rule(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    compact.len() >= 3
        && (compact.chars().all(|c| c == '-')
            || compact.chars().all(|c| c == '*')
            || compact.chars().all(|c| c == '_'))
}

/// The width of a list marker at the start of `line` (`- `, `* `, `12. `), or 0.
fn list_hang(line: &str) -> usize {
    for bullet in ["- ", "* ", "+ "] {
        if line.starts_with(bullet) {
            return 2;
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if (1..=3).contains(&digits) {
        let rest = &line[digits..];
        if rest.starts_with(". ") || rest.starts_with(") ") {
            return digits + 2;
        }
    }
    0
}

/// Inline Markdown (emphasis, strong, code, links) of one line as spans.
// pulldown-cmark's events are a foreign, growing enum: block-level events
// cannot occur in one stripped line's inline content and are skipped.
#[allow(clippy::wildcard_enum_match_arm)]
fn inline(text: &str, base: Style) -> Vec<Span> {
    let mut spans = Vec::new();
    let mut bold = 0usize;
    let mut italic = 0usize;
    let mut strike = 0usize;
    let mut links: Vec<String> = Vec::new();
    let style_now = |bold: usize, italic: usize, strike: usize, link: bool| {
        let mut effects = base.get_effects();
        if bold > 0 {
            effects |= Effects::BOLD;
        }
        if italic > 0 {
            effects |= Effects::ITALIC;
        }
        if strike > 0 {
            effects |= Effects::STRIKETHROUGH;
        }
        if link {
            effects |= Effects::UNDERLINE;
        }
        let style = base.effects(effects);
        if link {
            style.fg_color(Some(AnsiColor::Blue.into()))
        } else {
            style
        }
    };
    for event in Parser::new_ext(text, pulldown_cmark::Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Start(Tag::Strong) => bold += 1,
            Event::End(TagEnd::Strong) => bold = bold.saturating_sub(1),
            Event::Start(Tag::Emphasis) => italic += 1,
            Event::End(TagEnd::Emphasis) => italic = italic.saturating_sub(1),
            Event::Start(Tag::Strikethrough) => strike += 1,
            Event::End(TagEnd::Strikethrough) => strike = strike.saturating_sub(1),
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.to_string()),
            Event::End(TagEnd::Link) => {
                if let Some(url) = links.pop() {
                    spans.push(Span::new(
                        format!(" ({url})"),
                        Style::new().effects(Effects::DIMMED),
                    ));
                }
            }
            Event::Code(code) => spans.push(Span::new(
                code.to_string(),
                base.fg_color(Some(AnsiColor::Cyan.into())),
            )),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => {
                spans.push(Span::new(
                    text.to_string(),
                    style_now(bold, italic, strike, !links.is_empty()),
                ))
            }
            Event::SoftBreak | Event::HardBreak => spans.push(Span::new(" ", base)),
            _ => {}
        }
    }
    if spans.is_empty() && !text.is_empty() {
        spans.push(Span::new(text, base));
    }
    spans
}

/// Removes ANSI escape sequences.
#[cfg(test)]
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for next in chars.by_ref() {
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_shortened_in_the_middle() {
        let command =
            "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/very/long/path/to/the/bash_validator.sh";
        let short = shorten_middle(command, 30);
        assert_eq!(short.chars().count(), 30);
        assert!(short.starts_with("\"$CLAUDE_PROJEC"), "{short}");
        assert!(short.ends_with("validator.sh"), "{short}");
        assert_eq!(shorten_middle("short", 30), "short");
    }

    #[test]
    fn wrapping_breaks_between_words_only() {
        let spans = [Span::new("alpha beta gamma delta epsilon", Style::new())];
        let text = wrap(&spans, 13, &Span::new("", Style::new()), "  ", false);
        assert_eq!(text, "alpha beta\n  gamma delta\n  epsilon");
        let long = [Span::new("a supercalifragilistic word", Style::new())];
        let text = wrap(&long, 10, &Span::new("", Style::new()), "", false);
        assert_eq!(text, "a\nsupercalifragilistic\nword");
    }

    #[test]
    fn plain_markdown_is_left_as_written() {
        let mut md = MarkdownStream::new(false, 80);
        let text = "# Title\n\n- one **two**\n```rust\nfn main() {}\n```\n";
        assert_eq!(md.render(text), text);
    }

    #[test]
    fn coloured_markdown_drops_the_markers() {
        let mut md = MarkdownStream::new(true, 80);
        let out =
            md.render("# Title\n- one **two** `x`\n1. first\n> quoted\nsee [docs](https://x.y)\n");
        let plain = strip_ansi(&out);
        // Blocks the text ran together are kept apart by a blank line.
        assert_eq!(
            plain,
            "Title\n\n• one two x\n1. first\n\n│ quoted\n\nsee docs (https://x.y)\n"
        );
        assert!(out.contains("\x1b[1m"), "bold: {out:?}");
    }

    #[test]
    fn code_blocks_are_highlighted_and_lose_their_fences() {
        let mut md = MarkdownStream::new(true, 80);
        let out = md.render("```rust\nfn main() {}\n```\nafter\n");
        let plain = strip_ansi(&out);
        assert_eq!(plain, "  fn main() {}\n\nafter\n");
        // 24-bit colour from the theme.
        assert!(out.contains("\x1b[38;2;"), "{out:?}");
    }

    #[test]
    fn blocks_keep_one_blank_line_between_them() {
        let mut md = MarkdownStream::new(true, 80);
        // As written, with its blank lines: they stay, none is added.
        let spaced = "# Plan\n\nFirst a paragraph\nthat goes on.\n\n- one\n- two\n  more of two\n\n```sh\nls\n```\n\nDone.\n";
        let out = strip_ansi(&md.render(spaced));
        assert_eq!(
            out,
            "Plan\n\nFirst a paragraph\nthat goes on.\n\n• one\n• two\n  more of two\n\n  ls\n\nDone.\n"
        );
        // Run together: the same blocks, the same blank lines.
        let mut md = MarkdownStream::new(true, 80);
        let tight = "# Plan\nFirst a paragraph\nthat goes on.\n- one\n- two\n  more of two\n```sh\nls\n```\nDone.\n";
        assert_eq!(strip_ansi(&md.render(tight)), out);
        // Streamed in pieces, the result is the same.
        let mut md = MarkdownStream::new(true, 80);
        let mut streamed = String::new();
        for piece in tight.as_bytes().chunks(5) {
            streamed.push_str(&md.push(std::str::from_utf8(piece).unwrap()));
        }
        streamed.push_str(&md.finish());
        assert_eq!(strip_ansi(&streamed), out);
    }

    #[test]
    fn streaming_holds_the_unfinished_line() {
        let mut md = MarkdownStream::new(false, 80);
        assert_eq!(md.push("Hello "), "");
        assert!(md.has_pending());
        assert_eq!(md.push("world\nand"), "Hello world\n");
        assert_eq!(md.finish(), "and\n");
        assert_eq!(md.finish(), "");
    }
}
