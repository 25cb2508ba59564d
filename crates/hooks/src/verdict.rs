//! The typed decisions dialects record for a run (`hook/result`), in the
//! shapes every dialect builds: an effect with the hook's reason, and a
//! rewrite of the tool input.
//!
//! What it is not: which effect a hook's output means is the dialect's.

use dsh_protocol::{HookDecision, HookEffect};
use serde_json::Value;

/// `effect`, for `reason`.
pub fn decided(effect: HookEffect, reason: Option<String>) -> HookDecision {
    HookDecision {
        reason,
        ..HookDecision::of(effect)
    }
}

/// A rewrite of the call's input to `input`.
pub fn rewrite(input: Value) -> HookDecision {
    HookDecision {
        updated_input: Some(input),
        ..HookDecision::of(HookEffect::Rewrite)
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
