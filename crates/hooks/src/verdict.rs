//! What dialects make of a run in the shapes every dialect builds: the
//! typed decision recorded for it (`hook/result`: an effect with the
//! hook's reason, a rewrite of the tool input) and the notices shown to
//! the user.
//!
//! What it is not: which effect a hook's output means, and every text,
//! are the dialect's.

use dsh_protocol::{HookDecision, HookEffect};
use dsh_seams::{NoticeLevel, UserNotice};

/// `effect`, for `reason`.
pub fn decided(effect: HookEffect, reason: Option<String>) -> HookDecision {
    HookDecision {
        reason,
        ..HookDecision::of(effect)
    }
}

/// A rewrite of the call's input to `input`.
pub fn rewrite(input: serde_json::Value) -> HookDecision {
    HookDecision {
        updated_input: Some(input),
        ..HookDecision::of(HookEffect::Rewrite)
    }
}

/// A warning from `source` (`copilot:preToolUse`) to the user.
pub fn warning(source: impl Into<String>, text: impl Into<String>) -> UserNotice {
    notice(source, text, NoticeLevel::Warning)
}

/// A notice from `source` to the user, at `level`.
pub fn notice(
    source: impl Into<String>,
    text: impl Into<String>,
    level: NoticeLevel,
) -> UserNotice {
    UserNotice {
        source: source.into(),
        text: text.into(),
        level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_carry_their_reason_or_input() {
        let deny = decided(HookEffect::Deny, Some("no".to_owned()));
        assert_eq!(
            (deny.effect, deny.reason.as_deref()),
            (HookEffect::Deny, Some("no"))
        );
        let input = serde_json::json!({"command": "ls"});
        let rewrite = rewrite(input.clone());
        assert_eq!(
            (rewrite.effect, rewrite.updated_input),
            (HookEffect::Rewrite, Some(input))
        );
    }
}
