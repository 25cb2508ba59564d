//! `--autocompact` and `config.toml`'s `[compaction]` table: when dsh
//! compacts a session's history on its own.

use std::collections::BTreeMap;

use dsh_agent::{AutoCompact, DEFAULT_THRESHOLD, default_context_window};
use serde::Deserialize;

use crate::{DshConfig, Error, Result};

/// `[compaction]` in `$DSH_HOME/config.toml`. Strict, like `[provider]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompactionTable {
    /// `false` turns automatic compaction off (`/compact` still works).
    auto: Option<bool>,
    /// The share of the window (0 < share ≤ 1) that triggers compaction.
    threshold: Option<f64>,
    /// Context windows in tokens, per model name.
    #[serde(default)]
    context_windows: BTreeMap<String, u64>,
}

/// The session's automatic compaction from `--autocompact` and the
/// `[compaction]` table of `config.toml` (optional): the flag wins,
/// then the table's window for `model`, then the built-in window.
pub fn configured(
    flag: Option<AutocompactFlag>,
    model: &str,
    config: &DshConfig,
) -> Result<AutoCompact> {
    let path = config.path();
    let table = config.compaction_table()?;
    if let Some(threshold) = table.threshold
        && !(threshold > 0.0 && threshold <= 1.0)
    {
        return Err(Error::msg(format!(
            "{}: [compaction] threshold: must be above 0 and at most 1, not {threshold}",
            path.display()
        )));
    }
    if let Some((name, _)) = table
        .context_windows
        .iter()
        .find(|(_, tokens)| **tokens < 1000)
    {
        return Err(Error::msg(format!(
            "{}: [compaction] context_windows.{name}: must be at least 1000 tokens",
            path.display()
        )));
    }
    let threshold = table.threshold.unwrap_or(DEFAULT_THRESHOLD);
    let window = |tokens: u64| AutoCompact::On {
        context_window: tokens,
        threshold,
    };
    Ok(match flag {
        Some(AutocompactFlag::Off) => AutoCompact::Off,
        Some(AutocompactFlag::Window(tokens)) => window(tokens),
        None if table.auto == Some(false) => AutoCompact::Off,
        None => window(
            table
                .context_windows
                .get(model)
                .copied()
                .unwrap_or_else(|| default_context_window(model)),
        ),
    })
}

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
