//! The fields of the lifecycle events `dsh hooks test` fires (subagents,
//! compaction, a failed request, slash-command expansion, instruction
//! files, an automatic denial), read from the payload.

use anyhow::bail;
use dsh_model::{ModelError, ProviderFailure};
use dsh_seams::{AgentIdentity, CompactionTrigger, LoadReason, MemoryType};

use super::event::TestEvent;
use super::payload::TestPayload;

/// The agent id a synthetic subagent gets when the payload names none
/// (Claude Code's shape: `a` and 16 lowercase hex digits).
const DEFAULT_AGENT_ID: &str = "a0123456789abcdef";

/// The fields of the events this module fires, from the payload (or the
/// `dsh hooks test` flags, which write into the payload).
#[derive(Debug, Clone)]
pub(crate) struct LifecycleFields {
    pub trigger: CompactionTrigger,
    pub custom_instructions: Option<String>,
    pub compact_summary: String,
    pub agent_id: String,
    pub agent_type: String,
    /// StopFailure's `error` category.
    pub failure: FailureKind,
    pub command_name: String,
    pub command_args: String,
    pub file_path: String,
    pub memory_type: MemoryType,
    pub load_reason: LoadReason,
    /// PermissionDenied's `reason` (the automatic check's words).
    pub denied_reason: String,
}

/// The StopFailure categories dsh itself sends, with the provider answer
/// that produces each (so the bridge derives the category as in a session).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FailureKind {
    RateLimit,
    AuthenticationFailed,
    BillingError,
    ServerError,
    Unknown,
}

impl FailureKind {
    const NAMES: [(&'static str, FailureKind); 5] = [
        ("rate_limit", FailureKind::RateLimit),
        ("authentication_failed", FailureKind::AuthenticationFailed),
        ("billing_error", FailureKind::BillingError),
        ("server_error", FailureKind::ServerError),
        ("unknown", FailureKind::Unknown),
    ];

    fn parse(name: &str) -> anyhow::Result<FailureKind> {
        if let Some((_, kind)) = Self::NAMES.iter().find(|(n, _)| *n == name) {
            return Ok(*kind);
        }
        let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
        bail!(
            "StopFailure error `{name}` is not one dsh sends ({})",
            names.join(", ")
        )
    }

    /// A model error the bridge maps back to this category.
    pub(crate) fn model_error(self) -> ModelError {
        let status = match self {
            FailureKind::RateLimit => Some(429),
            FailureKind::AuthenticationFailed => Some(401),
            FailureKind::BillingError => Some(402),
            FailureKind::ServerError => Some(529),
            // No provider answer at all (a stalled stream): `unknown`.
            FailureKind::Unknown => None,
        };
        let error = ModelError::new("synthetic failure from dsh hooks test");
        match status {
            Some(status) => error.with_failure(ProviderFailure::from_status(
                status,
                "synthetic failure from dsh hooks test",
            )),
            None => error,
        }
    }
}

impl LifecycleFields {
    pub(crate) fn from_payload(
        event: TestEvent,
        payload: &TestPayload,
    ) -> anyhow::Result<LifecycleFields> {
        let trigger = match payload.trigger.as_deref() {
            None | Some("manual") => CompactionTrigger::Manual,
            Some("auto") => CompactionTrigger::Auto,
            Some(other) => bail!("unknown compaction trigger `{other}` (manual, auto)"),
        };
        let agent_id = payload
            .agent_id
            .clone()
            .unwrap_or_else(|| DEFAULT_AGENT_ID.to_owned());
        // Bridges build the subagent's transcript path from its id.
        if !AgentIdentity::is_valid_id(&agent_id) {
            bail!("agent_id `{agent_id}` is not `a` followed by 16 lowercase hex digits");
        }
        // `error` is StopFailure's category; elsewhere it is a tool's error text.
        let failure = match (event, payload.error.clone()) {
            (TestEvent::StopFailure, Some(name)) => FailureKind::parse(&name)?,
            _ => FailureKind::Unknown,
        };
        let memory_type = match payload.memory_type.as_deref() {
            None | Some("Project") => MemoryType::Project,
            Some("User") => MemoryType::User,
            Some("Local") => MemoryType::Local,
            Some(other) => bail!("unknown memory_type `{other}` (User, Project, Local)"),
        };
        let load_reason = match payload.load_reason.as_deref() {
            None | Some("session_start") => LoadReason::SessionStart,
            Some("path_glob_match") => LoadReason::PathGlobMatch,
            Some(other) => {
                bail!("unknown load_reason `{other}` (session_start, path_glob_match)")
            }
        };
        Ok(LifecycleFields {
            trigger,
            custom_instructions: payload.custom_instructions.clone(),
            compact_summary: payload
                .compact_summary
                .clone()
                .unwrap_or_else(|| "(synthetic summary of the conversation)".to_owned()),
            agent_id,
            agent_type: payload
                .agent_type
                .clone()
                .unwrap_or_else(|| dsh_seams::DEFAULT_AGENT_TYPE.to_owned()),
            failure,
            command_name: payload
                .command_name
                .clone()
                .unwrap_or_else(|| "example".to_owned()),
            command_args: payload.command_args.clone().unwrap_or_default(),
            file_path: payload
                .file_path
                .clone()
                .unwrap_or_else(|| "CLAUDE.md".to_owned()),
            memory_type,
            load_reason,
            denied_reason: payload
                .reason
                .clone()
                .unwrap_or_else(|| "denied by an automatic check".to_owned()),
        })
    }

    /// The identity of the synthetic subagent.
    pub(crate) fn identity(&self) -> AgentIdentity {
        AgentIdentity {
            agent_id: self.agent_id.clone(),
            agent_type: self.agent_type.clone(),
        }
    }
}
