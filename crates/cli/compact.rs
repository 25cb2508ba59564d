//! `--autocompact`: when dsh compacts a session's history on its own.

use dsh_agent::{AutoCompact, default_context_window};

/// The flag's value: a context window in tokens, or `off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutocompactFlag {
    /// Compact against this context window (tokens).
    Window(u64),
    /// Never compact automatically (`/compact` still works).
    Off,
}

/// Parses `--autocompact N|off` (N ≥ 1000 tokens).
pub fn parse(value: &str) -> Result<AutocompactFlag, String> {
    match value.trim() {
        "off" | "false" | "never" => Ok(AutocompactFlag::Off),
        number => match number.replace('_', "").parse::<u64>() {
            Ok(tokens) if tokens >= 1000 => Ok(AutocompactFlag::Window(tokens)),
            Ok(_) => Err("the context window must be at least 1000 tokens".to_owned()),
            Err(_) => Err(format!(
                "{value:?} is neither a context window in tokens nor `off`"
            )),
        },
    }
}

/// The session's automatic compaction: the flag's window, else the model's
/// known window (DeepSeek's for DeepSeek and unknown models), at the
/// default threshold.
pub fn auto_compact(flag: Option<AutocompactFlag>, model: &str) -> AutoCompact {
    match flag {
        Some(AutocompactFlag::Off) => AutoCompact::Off,
        Some(AutocompactFlag::Window(tokens)) => AutoCompact::window(tokens),
        None => AutoCompact::window(default_context_window(model)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_off() {
        assert_eq!(parse("100000"), Ok(AutocompactFlag::Window(100_000)));
        assert_eq!(parse("off"), Ok(AutocompactFlag::Off));
        assert!(parse("12").is_err());
        assert!(parse("lots").is_err());
        assert_eq!(
            auto_compact(Some(AutocompactFlag::Window(100_000)), "x").limit(),
            Some(85_000)
        );
        assert_eq!(auto_compact(Some(AutocompactFlag::Off), "x").limit(), None);
        assert_eq!(auto_compact(None, "deepseek-chat").limit(), Some(108_800));
    }
}
