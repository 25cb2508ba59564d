//! Permission modes as Claude Code names them.

use std::fmt;
use std::str::FromStr;

/// A session's permission mode.
///
/// `manual` is accepted on the command line and reaches hooks as `default`
/// (PROTOCOL-ADDENDUM §3), so it is not a separate variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mode {
    /// Reads and read-only commands run; file changes and other commands ask.
    #[default]
    Default,
    /// Edits and file-system commands inside the working directories run.
    AcceptEdits,
    /// Read-only: writes are refused after the approval hooks had their say.
    Plan,
    /// Whatever would ask is denied without asking.
    DontAsk,
    /// Everything runs except what a deny (or ask) rule names.
    BypassPermissions,
    /// Claude Code's classifier mode. The classifier runs on the vendor's
    /// servers, so dsh reports it unavailable exactly as captured.
    Auto,
}

impl Mode {
    /// Every name `--permission-mode` accepts, in Claude Code's order.
    pub const CLI_NAMES: [&'static str; 6] = [
        "acceptEdits",
        "auto",
        "bypassPermissions",
        "manual",
        "dontAsk",
        "plan",
    ];

    /// The name hooks see in the `permission_mode` payload field.
    pub fn hook_name(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "acceptEdits",
            Mode::Plan => "plan",
            Mode::DontAsk => "dontAsk",
            Mode::BypassPermissions => "bypassPermissions",
            Mode::Auto => "auto",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hook_name())
    }
}

/// A mode name that is not one of [`Mode::CLI_NAMES`] (or `default`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown permission mode `{0}` (expected one of: acceptEdits, auto, bypassPermissions, manual, default, dontAsk, plan)"
)]
pub struct UnknownMode(pub String);

impl FromStr for Mode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            // `default` is what settings' `defaultMode` and hooks use.
            "manual" | "default" => Ok(Mode::Default),
            "acceptEdits" => Ok(Mode::AcceptEdits),
            "plan" => Ok(Mode::Plan),
            "dontAsk" => Ok(Mode::DontAsk),
            "bypassPermissions" => Ok(Mode::BypassPermissions),
            "auto" => Ok(Mode::Auto),
            other => Err(UnknownMode(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_reaches_hooks_as_default() {
        assert_eq!("manual".parse::<Mode>().map(Mode::hook_name), Ok("default"));
    }

    #[test]
    fn every_cli_name_parses_and_round_trips_except_manual() {
        for name in Mode::CLI_NAMES {
            let mode: Mode = name.parse().expect("a CLI name parses");
            if name != "manual" {
                assert_eq!(mode.hook_name(), name);
            }
        }
        assert!("yolo".parse::<Mode>().is_err());
        assert!("Default".parse::<Mode>().is_err());
    }
}
