//! The tones dsh's own lines are painted in, and the small text helpers
//! the terminal's renderers share.

/// A text style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Unstyled.
    Plain,
    /// Secondary information.
    Dim,
    /// Something the user should notice.
    Warn,
    /// A denial, a block, a failure.
    Bad,
    /// Success.
    Good,
    /// Tool calls and headers.
    Accent,
}

impl Tone {
    pub(crate) fn style(self) -> anstyle::Style {
        match self {
            Tone::Plain => anstyle::Style::new(),
            Tone::Dim => anstyle::Style::new().dimmed(),
            Tone::Warn => anstyle::AnsiColor::Yellow.on_default(),
            Tone::Bad => anstyle::AnsiColor::Red.on_default(),
            Tone::Good => anstyle::AnsiColor::Green.on_default(),
            Tone::Accent => anstyle::AnsiColor::Cyan.on_default(),
        }
    }
}

/// The widest a rendered argument or result line gets.
pub(crate) const LINE_CHARS: usize = 160;

/// `<Event>:<Tool> hook error: [<command>]: why` → `why`; other text as is.
pub(crate) fn strip_hook_wrapper(content: &str) -> &str {
    let Some(start) = content.find(" hook error: [") else {
        return content;
    };
    let after = &content[start + " hook error: [".len()..];
    match after.find("]: ") {
        Some(end) => after[end + 3..].trim_start_matches('\n'),
        None => content,
    }
}

/// At most `max` characters of `text`, with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}
