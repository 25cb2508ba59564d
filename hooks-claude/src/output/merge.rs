//! How several hooks' answers to one event combine: PreToolUse and
//! PermissionRequest decisions by rank, Stop answers with the consecutive
//! block cap; and the texts those merges show.

use super::{Effect, Interpretation};

/// `PreToolUse:Bash hook stopped continuation: R` (k1r, k2).
pub fn stopped_text(label: &str, stop_reason: &str) -> String {
    format!("{label} hook stopped continuation: {stop_reason}")
}

/// The text Claude Code shows when the consecutive Stop-block cap fires.
pub fn stop_cap_message(cap: u32) -> String {
    format!(
        "A hook blocked the turn from ending {cap} consecutive times\u{2014}overriding and ending turn. For Stop/SubagentStop hooks, check stop_hook_active in the input and return success while it's true. Set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to raise this limit."
    )
}

/// How several PreToolUse decisions combine: deny > defer > ask > allow.
pub fn permission_rank(effect: &Effect) -> u8 {
    match effect {
        Effect::Deny { .. } => 4,
        Effect::Defer { .. } => 3,
        Effect::Ask { .. } => 2,
        Effect::Allow { .. } => 1,
        Effect::None | Effect::Block { .. } => 0,
    }
}

/// Index of the winning PreToolUse/PermissionRequest decision among
/// `effects` (configuration order breaks ties: the first wins).
pub fn winning_permission(effects: &[&Effect]) -> Option<usize> {
    let mut best: Option<(usize, u8)> = None;
    for (index, effect) in effects.iter().enumerate() {
        let rank = permission_rank(effect);
        if rank == 0 {
            continue;
        }
        if best.is_none_or(|(_, r)| rank > r) {
            best = Some((index, rank));
        }
    }
    best.map(|(index, _)| index)
}

/// What the Stop hooks of one natural stop decided, merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopMerge {
    /// Let the turn end.
    Stop,
    /// `continue: false` (beats any block): end the turn `stopped`.
    Halt {
        /// User-facing reason.
        reason: String,
    },
    /// Hooks wanted to continue but the consecutive-block cap fired.
    CapFired {
        /// Claude Code's cap message (user-facing).
        message: String,
    },
    /// Continue the turn.
    Continue {
        /// The user-role steering text (`Stop hook feedback:\n…`).
        reason: String,
        /// Indices of the hooks whose answers forced the continuation.
        by: Vec<usize>,
        /// System-role texts, already joined (`Stop hook blocking error from command: …`).
        context: Option<String>,
    },
}

/// Merges Stop hook answers in configuration order. `forced` is how many
/// consecutive times this turn was already forced to continue; `cap` is the
/// consecutive-block cap (0 = none): when this answer would be the
/// `cap`-th consecutive block, Claude Code overrides it and ends the turn.
pub fn merge_stop(answers: &[&Interpretation], forced: u32, cap: u32) -> StopMerge {
    if let Some(reason) = answers.iter().find_map(|a| a.stop.clone()) {
        return StopMerge::Halt {
            reason: format!("Stop hook stopped continuation: {reason}"),
        };
    }
    let mut reasons = Vec::new();
    let mut steering = Vec::new();
    let mut contexts = Vec::new();
    let mut by = Vec::new();
    for (index, answer) in answers.iter().enumerate() {
        let mut forcing = false;
        if let Effect::Block { text } = &answer.effect {
            reasons.push(text.clone());
            forcing = true;
        }
        if !answer.steering.is_empty() {
            steering.extend(answer.steering.iter().cloned());
            forcing = true;
        }
        contexts.extend(answer.contexts.iter().cloned());
        if forcing {
            by.push(index);
        }
    }
    if by.is_empty() {
        return StopMerge::Stop;
    }
    if cap > 0 && forced.saturating_add(1) >= cap {
        return StopMerge::CapFired {
            message: stop_cap_message(cap),
        };
    }
    let mut parts = Vec::new();
    if !reasons.is_empty() {
        parts.push(format!("Stop hook feedback:\n{}", reasons.join("\n\n")));
    }
    parts.extend(steering);
    StopMerge::Continue {
        reason: parts.join("\n\n"),
        by,
        context: (!contexts.is_empty()).then(|| contexts.join("\n\n")),
    }
}
