//! Compaction: when the conversation would outgrow the model's context
//! window (or the user types `/compact [instructions]`), the history is
//! summarized by the model and replaced by the summary.
//!
//! The flow, as Claude Code runs it (PROTOCOL-ADDENDUM §7): the
//! before-compaction seam (PreCompact hooks: cancel, extra instructions, or
//! a native plugin's own summary) → one summary request (the conversation
//! up to the latest assistant message, then a user message with the summary
//! instructions) → the after-compaction seam (SessionStart `compact`,
//! PostCompact) → `compaction/completed`. From then on the model sees the
//! summary, the after-compaction contexts, the latest assistant message and
//! what followed it (kept verbatim, as Claude Code keeps its preserved
//! segment), then everything newer (`dsh_session::derive_messages`).

use std::panic::AssertUnwindSafe;

use dsh_protocol::{
    AssistantMessageEvent, CompactionCompletedEvent, CompactionContext, CompactionFailedEvent,
    CompactionStartedEvent, CompactionTrigger, Event, EventBody, Message, ModelRequest,
    TurnEndReason,
};
use dsh_seams::{
    CompactionDecision, CompactionInput, CompactionOutcome, NoticeLevel, SeamContext, UserNotice,
};
use dsh_session::{derive_messages, derive_plain};
use futures::FutureExt;

use crate::agent::{Agent, AgentError};

/// The context window dsh assumes for a model it has no figure for, and
/// DeepSeek's (`deepseek-chat`, `deepseek-reasoner`: 128K tokens).
pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// The share of the context window a request may fill before dsh compacts
/// automatically.
pub const DEFAULT_THRESHOLD: f64 = 0.85;

/// Roughly how many characters make one token (for text no provider has
/// counted yet).
const CHARS_PER_TOKEN: u64 = 4;

/// The context window of `model` when the configuration names none.
pub fn default_context_window(model: &str) -> u64 {
    dsh_model::context_window(model).unwrap_or(DEFAULT_CONTEXT_WINDOW)
}

/// Whether (and against what) dsh compacts on its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AutoCompact {
    /// Compact when the next request's estimate exceeds `threshold` of
    /// `context_window` tokens.
    On {
        /// The model's context window in tokens.
        context_window: u64,
        /// The share of it (0 < share ≤ 1) that triggers compaction.
        threshold: f64,
    },
    /// Never compact automatically (`--autocompact off`); `/compact` still works.
    Off,
}

impl AutoCompact {
    /// Automatic compaction against `context_window` at the default threshold.
    pub fn window(context_window: u64) -> Self {
        AutoCompact::On {
            context_window,
            threshold: DEFAULT_THRESHOLD,
        }
    }

    /// The token count above which the next request compacts first.
    pub fn limit(self) -> Option<u64> {
        match self {
            AutoCompact::On {
                context_window,
                threshold,
            } => {
                let share = if threshold.is_finite() && threshold > 0.0 {
                    threshold.min(1.0)
                } else {
                    DEFAULT_THRESHOLD
                };
                // Token counts are far below 2^52, so the float round trip is exact enough.
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss
                )]
                Some((context_window as f64 * share) as u64)
            }
            AutoCompact::Off => None,
        }
    }
}

impl Default for AutoCompact {
    fn default() -> Self {
        AutoCompact::window(DEFAULT_CONTEXT_WINDOW)
    }
}

/// A prompt that is the `/compact` command: `Some(instructions)` (none when
/// the command has no text), or `None` for any other prompt.
pub fn parse_compact_command(prompt: &str) -> Option<Option<String>> {
    let rest = prompt.trim_start().strip_prefix("/compact")?;
    if !(rest.is_empty() || rest.starts_with(char::is_whitespace)) {
        // `/compaction`, `/compact-notes`: another command.
        return None;
    }
    let text = rest.trim();
    Some((!text.is_empty()).then(|| text.to_owned()))
}

/// How a compaction ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactionResult {
    /// The history was replaced by the summary.
    Completed,
    /// Nothing changed; the reason is in `compaction/failed`.
    Failed(String),
}

fn text_tokens(messages: &[Message]) -> u64 {
    let chars: usize = messages
        .iter()
        .map(|message| match message {
            Message::System { content } | Message::User { content } => content.len(),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                content.len()
                    + tool_calls
                        .iter()
                        .map(|call| call.name.len() + call.arguments.to_string().len())
                        .sum::<usize>()
            }
            Message::Tool { content, .. } => content.len(),
        })
        .sum();
    (chars as u64).div_ceil(CHARS_PER_TOKEN)
}

/// The estimated size of the next request: the provider's count for the
/// latest reply since the last compaction (its input plus its output), plus
/// a character estimate of everything after it; without a reported count,
/// the character estimate of the whole model-facing conversation.
pub fn estimate_tokens(events: &[Event], system_prompt: &str) -> u64 {
    // The session's own conversation: a subagent's nested run (tagged
    // events) has its own context and its own usage reports.
    let own: Vec<&Event> = events
        .iter()
        .filter(|event| event.agent_id.is_none())
        .collect();
    let since = own
        .iter()
        .rposition(|event| matches!(event.body, EventBody::CompactionCompleted(_)))
        .map_or(0, |index| index + 1);
    let counted = own[since..]
        .iter()
        .enumerate()
        .rev()
        .find_map(|(offset, event)| {
            if let EventBody::AssistantMessage(AssistantMessageEvent {
                usage: Some(usage), ..
            }) = &event.body
            {
                Some((since + offset, usage.input_tokens + usage.output_tokens))
            } else {
                None
            }
        });
    match counted {
        Some((index, tokens)) => {
            // Derived from the counted reply on, so its tool results are
            // recognized as answers to it; the reply itself is in `tokens`.
            let after = derive_plain(own[index..].iter().copied());
            tokens + text_tokens(after.get(1..).unwrap_or_default())
        }
        None => {
            let system = Message::System {
                content: system_prompt.to_owned(),
            };
            text_tokens(&derive_messages(events)) + text_tokens(std::slice::from_ref(&system))
        }
    }
}

/// The seq of the first event kept verbatim: the latest assistant message
/// since the last compaction (none when there is none).
fn kept_from_seq(events: &[Event]) -> Option<u64> {
    let since = events
        .iter()
        .rposition(|event| matches!(event.body, EventBody::CompactionCompleted(_)))
        .map_or(0, |index| index + 1);
    events[since..]
        .iter()
        .rev()
        .find(|event| matches!(event.body, EventBody::AssistantMessage(_)))
        .map(|event| event.seq)
}

/// dsh's summary instructions (its own wording), the user's `/compact` text
/// and the hooks' additions, as the summary request's last user message.
fn summary_instructions(custom: Option<&str>, extra: &[String]) -> String {
    let mut text = String::from(
        "Stop the task for a moment: the conversation above is about to be replaced by a summary, \
         and you are writing that summary. Answer with text only; do not call any tool.\n\n\
         First think it through inside <analysis>…</analysis>, going over the conversation in order. \
         Then write the summary inside <summary>…</summary>, with these parts:\n\
         1. What the user asked for, in their own words where it matters, and every change of direction.\n\
         2. What has been done: files read, created or changed (with paths), commands run and what they showed.\n\
         3. Facts the work depends on: names, values, error messages, decisions and their reasons.\n\
         4. What is unfinished, and the very next step.\n\
         Keep code and error text that later steps need verbatim; leave out everything else.",
    );
    let additions: Vec<&str> = custom
        .into_iter()
        .chain(extra.iter().map(String::as_str))
        .filter(|part| !part.trim().is_empty())
        .collect();
    if !additions.is_empty() {
        text.push_str("\n\nAdditional instructions:\n");
        text.push_str(&additions.join("\n\n"));
    }
    text.push_str(
        "\n\nRemember: plain text only, an <analysis> block and then a <summary> block; tool calls will not run.",
    );
    text
}

impl Agent {
    /// The `/compact [instructions]` turn: how it ends (`completed`, with
    /// the reason when nothing was compacted; `stopped` when a listener
    /// stopped the turn).
    pub(crate) async fn manual_compact(
        &self,
        ctx: &SeamContext,
        turn: u64,
        instructions: Option<String>,
    ) -> Result<(TurnEndReason, Option<String>), AgentError> {
        let result = self
            .compact(ctx, turn, &mut 0, CompactionTrigger::Manual, instructions)
            .await?;
        if let Some(stop) = ctx.control.stop_requested() {
            return Ok((TurnEndReason::Stopped, Some(stop.reason)));
        }
        Ok(match result {
            CompactionResult::Completed => (TurnEndReason::Completed, None),
            CompactionResult::Failed(reason) => (TurnEndReason::Completed, Some(reason)),
        })
    }

    /// Before a model request: compacts when the request would cross the
    /// automatic limit. `gave_up` is set once compacting cannot help this
    /// turn (it failed, or the summary still leaves the request over the
    /// limit), so it is not retried before every request. Returns how the
    /// turn ends when it must end here (interrupted, stopped by a listener,
    /// or out of steps after the summary request).
    pub(crate) async fn auto_compact_before_request(
        &self,
        ctx: &SeamContext,
        turn: u64,
        step: &mut u64,
        gave_up: &mut bool,
    ) -> Result<Option<(TurnEndReason, Option<String>)>, AgentError> {
        let estimate = || self.estimated_tokens();
        let Some(limit) = self.auto_compact_limit() else {
            return Ok(None);
        };
        if *gave_up || estimate() <= limit {
            return Ok(None);
        }
        let result = self
            .compact(ctx, turn, step, CompactionTrigger::Auto, None)
            .await?;
        if ctx.cancel.is_cancelled() {
            return Ok(Some((TurnEndReason::Interrupted, None)));
        }
        // A compaction listener may end the turn (Codex PreCompact `continue: false`).
        if let Some(stop) = ctx.control.stop_requested() {
            return Ok(Some((TurnEndReason::Stopped, Some(stop.reason))));
        }
        *gave_up = result != CompactionResult::Completed || estimate() > limit;
        if *step >= self.max_steps() {
            return Ok(Some((
                TurnEndReason::MaxSteps,
                Some(format!(
                    "the turn reached its bound of {} model requests",
                    self.max_steps()
                )),
            )));
        }
        Ok(None)
    }

    /// Compacts the history inside the open `turn`. `step` counts the turn's
    /// model requests: the summary request, when one is made, takes the next
    /// number. Never fails the turn: a cancelled,
    /// blocked or failed compaction is a `compaction/failed` and the history
    /// stays as it was.
    pub(crate) async fn compact(
        &self,
        ctx: &SeamContext,
        turn: u64,
        step: &mut u64,
        trigger: CompactionTrigger,
        custom_instructions: Option<String>,
    ) -> Result<CompactionResult, AgentError> {
        let events = self.events();
        let estimated_tokens = estimate_tokens(&events, &self.request_system_prompt());
        self.append(EventBody::CompactionStarted(CompactionStartedEvent {
            turn,
            trigger,
            custom_instructions: custom_instructions.clone(),
            estimated_tokens,
        }))?;
        let kept_from = kept_from_seq(&events);
        let summarized: Vec<Event> = events
            .iter()
            .filter(|event| kept_from.is_none_or(|from| event.seq < from))
            .cloned()
            .collect();
        let to_summarize = derive_messages(&summarized);

        let input = CompactionInput {
            trigger,
            custom_instructions: custom_instructions.clone(),
            estimated_tokens,
            messages_to_summarize: to_summarize.len(),
        };
        let mut instructions = Vec::new();
        let mut supplied: Option<(String, String)> = None;
        for plugin in self.plugins() {
            let decision = AssertUnwindSafe(plugin.session_before_compact(ctx, &input))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| CompactionDecision::Cancel {
                    reason: format!("compaction listener `{}` failed", plugin.name()),
                });
            match decision {
                CompactionDecision::Proceed { instructions: more } => instructions.extend(more),
                CompactionDecision::Cancel { reason } => {
                    return self.compaction_failed(ctx, turn, trigger, reason);
                }
                CompactionDecision::Summary { summary } => {
                    if supplied.is_none() {
                        supplied = Some((summary, plugin.name().to_owned()));
                    }
                }
            }
        }

        let (summary, summarized_by) = match supplied {
            Some(supplied) => supplied,
            None => {
                if to_summarize.is_empty() {
                    return self.compaction_failed(
                        ctx,
                        turn,
                        trigger,
                        "Not enough messages to compact.".to_owned(),
                    );
                }
                let mut messages = vec![Message::System {
                    content: self.request_system_prompt(),
                }];
                messages.extend(to_summarize);
                messages.push(Message::User {
                    content: summary_instructions(custom_instructions.as_deref(), &instructions),
                });
                *step += 1;
                let request = ModelRequest {
                    turn,
                    step: *step,
                    messages,
                    tools: self.tool_specs(),
                    model: self.request_model(),
                };
                let mut sink = dsh_model::NoStream;
                let result = tokio::select! {
                    result = self.model().complete(&request, &mut sink) => result,
                    _ = ctx.cancel.cancelled() => {
                        return self.compaction_failed(ctx, turn, trigger, "interrupted".to_owned());
                    }
                };
                match result {
                    Ok(reply) if !reply.text.trim().is_empty() => (reply.text, "model".to_owned()),
                    Ok(_) => {
                        return self.compaction_failed(
                            ctx,
                            turn,
                            trigger,
                            "the model's summary was empty".to_owned(),
                        );
                    }
                    Err(error) => {
                        return self.compaction_failed(
                            ctx,
                            turn,
                            trigger,
                            format!("the summary request failed: {}", error.message),
                        );
                    }
                }
            }
        };

        let outcome = CompactionOutcome {
            trigger,
            summary: summary.clone(),
            summarized_by: summarized_by.clone(),
        };
        let mut contexts = Vec::new();
        for plugin in self.plugins() {
            match AssertUnwindSafe(plugin.session_compacted(ctx, &outcome))
                .catch_unwind()
                .await
            {
                Ok(more) => contexts.extend(more.into_iter().map(|entry| CompactionContext {
                    content: entry.content,
                    source: entry.source,
                })),
                Err(_) => tracing::error!(
                    "after-compaction listener `{}` panicked; compaction goes on",
                    plugin.name()
                ),
            }
        }
        ctx.sink.tell_user(UserNotice {
            source: "dsh".to_owned(),
            text: format!(
                "conversation compacted ({}): ~{estimated_tokens} tokens replaced by a summary from {summarized_by}",
                trigger.as_str()
            ),
            level: NoticeLevel::Info,
        });
        self.append(EventBody::CompactionCompleted(CompactionCompletedEvent {
            turn,
            trigger,
            summary,
            summarized_by,
            kept_from_seq: kept_from,
            contexts,
            tokens_before: estimated_tokens,
        }))?;
        Ok(CompactionResult::Completed)
    }

    fn compaction_failed(
        &self,
        ctx: &SeamContext,
        turn: u64,
        trigger: CompactionTrigger,
        reason: String,
    ) -> Result<CompactionResult, AgentError> {
        ctx.sink.tell_user(UserNotice {
            source: "dsh".to_owned(),
            text: format!("compaction did not happen: {reason}"),
            level: NoticeLevel::Warning,
        });
        self.append(EventBody::CompactionFailed(CompactionFailedEvent {
            turn,
            trigger,
            reason: reason.clone(),
        }))?;
        Ok(CompactionResult::Failed(reason))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_command_and_its_instructions() {
        assert_eq!(parse_compact_command("/compact"), Some(None));
        assert_eq!(parse_compact_command("/compact   "), Some(None));
        assert_eq!(
            parse_compact_command("/compact focus on the echo output"),
            Some(Some("focus on the echo output".to_owned()))
        );
        assert_eq!(parse_compact_command("/compaction"), None);
        assert_eq!(parse_compact_command("please /compact"), None);
        assert_eq!(parse_compact_command("hello"), None);
    }

    #[test]
    fn the_limit_is_a_share_of_the_window() {
        assert_eq!(AutoCompact::window(100_000).limit(), Some(85_000));
        assert_eq!(AutoCompact::Off.limit(), None);
        let odd = AutoCompact::On {
            context_window: 1000,
            threshold: f64::NAN,
        };
        assert_eq!(odd.limit(), Some(850));
    }

    #[test]
    fn instructions_carry_the_user_text_and_hook_additions_in_order() {
        let text = summary_instructions(Some("focus on tests"), &["HOOK-EXTRA".to_owned()]);
        let custom = text.find("focus on tests").unwrap();
        let extra = text.find("HOOK-EXTRA").unwrap();
        assert!(custom < extra);
        assert!(!summary_instructions(None, &[]).contains("Additional instructions"));
    }

    /// A subagent's nested run reports its own usage: the session's
    /// estimate counts the session's latest reply, not the subagent's.
    #[test]
    fn the_estimate_ignores_a_subagents_usage() {
        let reply = |tokens: u64| {
            EventBody::AssistantMessage(AssistantMessageEvent {
                turn: 1,
                step: 1,
                content: String::new(),
                tool_calls: Vec::new(),
                usage: Some(dsh_protocol::TokenUsage {
                    input_tokens: tokens,
                    output_tokens: 0,
                    ..Default::default()
                }),
                thinking: None,
            })
        };
        let event = |seq: u64, body: EventBody, agent_id: Option<&str>| Event {
            seq,
            ts: String::new(),
            body,
            agent_id: agent_id.map(str::to_owned),
        };
        let events = vec![
            event(0, reply(1_000), None),
            event(1, reply(90_000), Some("a0123456789abcdef")),
        ];
        assert_eq!(estimate_tokens(&events, "system"), 1_000);
    }
}
