//! Subagents: the nested agent loop behind the `agent` tool.
//!
//! A nested run is a conversation of its own inside the parent's open turn
//! and inside the parent's `agent` call: its events go to the same session
//! log, tagged with the run's `agent_id` (so the parent's projection leaves
//! them out and `dsh log` can show them indented), and its model requests go
//! to the same model in the order they are made — a fixture's steps serve
//! the parent's and the subagent's requests interleaved.
//!
//! Seams fired inside carry the run's [`AgentIdentity`] on the context. The
//! subagent-start seam adds contexts to its first request; at a natural stop
//! the subagent-stop seam may give it another turn (the reason becomes a
//! steering message). Contexts its tools produce stay in its own
//! conversation (its own batch FIFO); only its final text comes back to the
//! parent, as the `agent` call's result.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use async_trait::async_trait;
use dsh_model::Model;
use dsh_protocol::{
    AssistantMessageEvent, EventBody, Message, ModelRequest, SteeringMessageEvent, UserMessageEvent,
};
use dsh_seams::{
    AgentDefinition, AgentIdentity, CancellationToken, ContextEntry, ContinuationDecision,
    DEFAULT_AGENT_TYPE, SeamContext, SessionSink, SubagentReport, SubagentRequest, SubagentRunner,
    SubagentStartInput, SubagentStopInput, TurnControl, UserNotice,
};
use dsh_session::derive_messages_of;
use dsh_tools::ToolRegistry;
use futures::FutureExt;

use crate::agent::sink::{LogSink, StreamForwarder};

/// The `agent` tool's name: never offered inside a subagent (no nesting).
const AGENT_TOOL: &str = "agent";

/// The system prompt of the built-in `general-purpose` agent type.
pub const GENERAL_PURPOSE_PROMPT: &str = "You are a subagent: another agent delegated the task \
     in the next message to you. Work on it with the tools you have, then answer with a concise \
     final report of what you found or did. Only that last message goes back to the agent that \
     delegated the task, so put everything it needs in it.";

/// Appends a nested run's events, tagged with its agent id.
struct TaggedSink {
    inner: Arc<LogSink>,
    agent_id: String,
}

impl SessionSink for TaggedSink {
    fn record(&self, body: EventBody) {
        self.inner.record_as(body, Some(&self.agent_id));
    }

    fn tell_user(&self, notice: UserNotice) {
        self.inner.tell_user(notice);
    }

    fn new_id(&self) -> String {
        self.inner.new_id()
    }
}

/// The agent loop's [`SubagentRunner`]: shares the session's log, model,
/// tools and plugins.
struct NestedRunner {
    sink: Arc<LogSink>,
    model: Arc<dyn Model>,
    /// The session's registry without the `agent` tool.
    registry: ToolRegistry,
    max_steps: u64,
}

/// The runner for an agent built from `registry`: the nested registry is
/// the same tools and plugins without the `agent` tool.
pub(crate) fn runner(
    sink: Arc<LogSink>,
    model: Arc<dyn Model>,
    registry: &ToolRegistry,
    max_steps: u64,
) -> Arc<dyn SubagentRunner> {
    let mut registry = registry.clone();
    registry.retain_tools(|name| name != AGENT_TOOL);
    Arc::new(NestedRunner {
        sink,
        model,
        registry,
        max_steps,
    })
}

/// An agent id with the captured shape (`a` and 16 lowercase hex digits),
/// made from a fresh id of the session's (derived, so replays repeat it).
fn new_agent_id(fresh: &str) -> String {
    let hex: String = fresh
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .chain(std::iter::repeat('0'))
        .take(16)
        .collect();
    format!("a{hex}")
}

/// What one nested run is, once its type is resolved.
struct Plan {
    system_prompt: String,
    registry: ToolRegistry,
    /// The model the run uses (a custom agent's, or the session's).
    model: Arc<dyn Model>,
}

/// Claude Code's model aliases name its own model family, not the
/// provider's: an agent file saying `sonnet` runs on the session's model.
const CLAUDE_MODEL_ALIASES: &[&str] = &["inherit", "sonnet", "opus", "haiku"];

impl NestedRunner {
    fn definitions(&self) -> Vec<AgentDefinition> {
        let mut out: Vec<AgentDefinition> = Vec::new();
        for plugin in self.registry.plugins() {
            let offered = std::panic::catch_unwind(AssertUnwindSafe(|| plugin.agent_definitions()))
                .unwrap_or_default();
            for definition in offered {
                // The first definition of a name wins (project before user
                // is the bridge's ordering).
                if !out.iter().any(|known| known.name == definition.name) {
                    out.push(definition);
                }
            }
        }
        out
    }

    fn plan(&self, agent_type: &str) -> Result<Plan, String> {
        let definitions = self.definitions();
        if let Some(definition) = definitions.iter().find(|d| d.name == agent_type) {
            let mut registry = self.registry.clone();
            match &definition.tools {
                Some(allowed) => {
                    registry.retain_tools(|name| {
                        name != AGENT_TOOL && allowed.iter().any(|tool| tool == name)
                    });
                }
                None => registry.retain_tools(|name| name != AGENT_TOOL),
            }
            let model = definition
                .model
                .as_deref()
                .filter(|name| !CLAUDE_MODEL_ALIASES.contains(name))
                .and_then(|name| self.model.with_model(name))
                .unwrap_or_else(|| Arc::clone(&self.model));
            return Ok(Plan {
                system_prompt: definition.system_prompt.clone(),
                registry,
                model,
            });
        }
        if agent_type == DEFAULT_AGENT_TYPE {
            return Ok(Plan {
                system_prompt: GENERAL_PURPOSE_PROMPT.to_owned(),
                registry: self.registry.clone(),
                model: Arc::clone(&self.model),
            });
        }
        let mut known = vec![DEFAULT_AGENT_TYPE.to_owned()];
        known.extend(definitions.into_iter().map(|d| d.name));
        Err(format!(
            "unknown agent type `{agent_type}`; available: {}",
            known.join(", ")
        ))
    }
}

/// The state of one nested run.
struct Run<'a> {
    runner: &'a NestedRunner,
    plan: Plan,
    ctx: SeamContext,
    identity: AgentIdentity,
    turn: u64,
    tools_used: Vec<String>,
    tool_uses: u64,
}

impl Run<'_> {
    fn append(&self, body: EventBody) -> Result<(), String> {
        self.runner
            .sink
            .append_as(body, Some(&self.identity.agent_id))
            .map(|_| ())
            .map_err(|error| format!("the session log failed: {error}"))
    }

    fn append_contexts(
        &self,
        contexts: impl IntoIterator<Item = ContextEntry>,
    ) -> Result<(), String> {
        crate::step::append_contexts(&|body| self.append(body), self.turn, contexts)
    }

    fn request(&self, step: u64) -> ModelRequest {
        let mut messages = vec![Message::System {
            content: self.plan.system_prompt.clone(),
        }];
        let agent_id = self.identity.agent_id.as_str();
        messages.extend(
            self.runner
                .sink
                .with_log(|log| derive_messages_of(log.events(), Some(agent_id))),
        );
        ModelRequest {
            turn: self.turn,
            step,
            messages,
            tools: self.plan.registry.specs(),
            // The subagent's own model object names its model (a custom
            // agent's `model`, else the session's).
            model: None,
        }
    }

    async fn stop_decision(&self, input: &SubagentStopInput) -> ContinuationDecision {
        // As the turn-continuation seam (see `step::decide_continuation`).
        crate::step::decide_continuation(self.plan.registry.plugins(), |plugin| {
            plugin.subagent_stop(&self.ctx, input)
        })
        .await
    }

    /// Runs the nested loop; returns the last assistant text and, when the
    /// run did not reach its natural end, why.
    async fn run(
        &mut self,
        request: &SubagentRequest,
        cancel: &CancellationToken,
    ) -> Result<(String, Option<String>), String> {
        self.append(EventBody::UserMessage(UserMessageEvent {
            turn: self.turn,
            content: request.prompt.clone(),
            source: "agent".to_owned(),
            original_content: None,
        }))?;
        let start = SubagentStartInput {
            identity: self.identity.clone(),
            prompt: request.prompt.clone(),
            description: request.description.clone(),
        };
        let mut contexts = Vec::new();
        for plugin in self.plan.registry.plugins() {
            match AssertUnwindSafe(plugin.subagent_start(&self.ctx, &start))
                .catch_unwind()
                .await
            {
                Ok(added) => contexts.extend(added),
                Err(_) => tracing::error!(
                    "subagent-start listener `{}` panicked; the subagent runs",
                    plugin.name()
                ),
            }
        }
        self.append_contexts(contexts)?;

        let mut last_text = String::new();
        let mut forced = 0u32;
        let mut step = 0u64;
        loop {
            if cancel.is_cancelled() {
                return Ok((last_text, Some("interrupted".to_owned())));
            }
            if step >= self.runner.max_steps {
                return Ok((
                    last_text,
                    Some(format!(
                        "the subagent reached its bound of {} model requests",
                        self.runner.max_steps
                    )),
                ));
            }
            step += 1;
            let model_request = self.request(step);
            let forwarder = StreamForwarder {
                on_text: None,
                on_notice: self.runner.sink.observers.on_notice.clone(),
            };
            let Some(result) = crate::step::complete(
                &self.plan.registry,
                &self.ctx,
                self.plan.model.as_ref(),
                &model_request,
                forwarder,
            )
            .await
            else {
                return Ok((last_text, Some("interrupted".to_owned())));
            };
            let reply = match result {
                Ok(reply) => reply,
                Err(error) => return Ok((last_text, Some(error.message))),
            };
            self.append(EventBody::AssistantMessage(AssistantMessageEvent {
                turn: self.turn,
                step,
                content: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
                usage: reply.usage,
                thinking: reply.thinking.clone(),
            }))?;
            last_text = reply.text.clone();
            if reply.tool_calls.is_empty() {
                if let Some(stop) = self.ctx.control.stop_requested() {
                    return Ok((last_text, Some(stop.reason)));
                }
                let input = SubagentStopInput {
                    identity: self.identity.clone(),
                    last_assistant_message: reply.text.clone(),
                    stop_hook_active: forced > 0,
                    forced_continuations: forced,
                };
                match self.stop_decision(&input).await {
                    ContinuationDecision::Stop => return Ok((last_text, None)),
                    ContinuationDecision::Halt { reason } => return Ok((last_text, Some(reason))),
                    ContinuationDecision::Continue {
                        reason,
                        source,
                        contexts,
                    } => {
                        forced += 1;
                        if let Some(reason) = reason {
                            self.append(EventBody::SteeringMessage(SteeringMessageEvent {
                                turn: self.turn,
                                content: reason,
                                source,
                            }))?;
                        }
                        self.append_contexts(contexts)?;
                        continue;
                    }
                }
            }
            self.run_batch(&reply.tool_calls).await?;
            if let Some(stop) = self.ctx.control.stop_requested() {
                return Ok((last_text, Some(stop.reason)));
            }
        }
    }

    /// The step's tool batch (see [`crate::step::run_batch`]), its events
    /// tagged with the run's agent id and its contexts kept in the run.
    async fn run_batch(&mut self, calls: &[dsh_protocol::ToolCall]) -> Result<(), String> {
        for call in calls {
            if !self.tools_used.contains(&call.name) {
                self.tools_used.push(call.name.clone());
            }
            self.tool_uses += 1;
        }
        let registry = &self.plan.registry;
        let ctx = &self.ctx;
        let append = |body| self.append(body);
        let ran =
            crate::step::run_batch(registry, ctx, self.turn, calls, &BTreeMap::new(), &append)
                .await?;
        let fifo = crate::step::settle_batch(registry, ctx, &ran.settled, ran.fifo).await;
        self.append_contexts(fifo)
    }
}

#[async_trait]
impl SubagentRunner for NestedRunner {
    async fn run(
        &self,
        parent: &SeamContext,
        request: SubagentRequest,
        _execution_id: &str,
        cancel: CancellationToken,
    ) -> Result<SubagentReport, String> {
        if parent.agent.is_some() {
            return Err("a subagent cannot start another subagent".to_owned());
        }
        let Some(turn) = parent.turn else {
            return Err("subagents run only inside a turn".to_owned());
        };
        let plan = self.plan(&request.subagent_type)?;
        let identity = AgentIdentity {
            agent_id: new_agent_id(&self.sink.new_id()),
            agent_type: request.subagent_type.clone(),
        };
        let ctx = SeamContext {
            session: Arc::clone(&parent.session),
            turn: Some(turn),
            cancel: cancel.clone(),
            sink: Arc::new(TaggedSink {
                inner: Arc::clone(&self.sink),
                agent_id: identity.agent_id.clone(),
            }),
            control: TurnControl::default(),
            agent: Some(identity.clone()),
            subagents: None,
        };
        let mut run = Run {
            runner: self,
            plan,
            ctx,
            identity: identity.clone(),
            turn,
            tools_used: Vec::new(),
            tool_uses: 0,
        };
        let (final_text, message) = run.run(&request, &cancel).await?;
        Ok(SubagentReport {
            identity,
            final_text,
            tools_used: run.tools_used,
            tool_uses: run.tool_uses,
            model: run.plan.model.name(),
            completed: message.is_none(),
            message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_ids_have_the_captured_shape() {
        for _ in 0..20 {
            assert!(AgentIdentity::is_valid_id(&new_agent_id(
                &dsh_seams::random_id()
            )));
        }
    }
}
