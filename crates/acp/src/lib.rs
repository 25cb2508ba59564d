//! `dsh acp`: an Agent Client Protocol server on stdin/stdout, so editors
//! (Zed and others) run dsh sessions with the user's Claude Code and Codex
//! hooks.
//!
//! What this crate is for: the ACP front end, and only that. It turns ACP
//! requests into sessions that dsh-core resolves and assembles like every
//! other front end's, translates the session's events into
//! `session/update`s and asks the client the questions a session has
//! (approvals, untrusted hooks, project MCP servers).
//!
//! What it is not: it resolves no configuration, decides no permission and
//! runs no hook of its own; session assembly is dsh-core's, the rules are
//! dsh-permissions', the store of sessions is dsh-session's. The `dsh acp`
//! subcommand of the binary only calls [`run`].
//!
//! One connection serves any number of sessions. Each session has a task of
//! its own that owns the dsh agent and runs one prompt at a time through the
//! real loop; the connection's handlers only parse, route and answer, so they
//! never hold the dispatch loop while a turn runs (a turn sends requests of
//! its own — permission questions — whose answers come through that loop).
//!
//! - `initialize`: protocol v1; text prompts and resource links; `loadSession`.
//! - `session/new`: a session in the client's cwd, resolved and assembled
//!   by dsh-core like every other session: permission rules and modes,
//!   `--plugin-dir` plugins, `.mcp.json` and `--mcp-config` servers,
//!   compaction. MCP servers the client passes are accepted and named as
//!   not used (a message, not an error). Hooks are loaded, untrusted
//!   project hooks and unapproved project MCP servers asked about, when the
//!   first prompt arrives: the client knows the session by then.
//! - `session/load`: a stored dsh session (`$DSH_HOME/sessions/<id>.jsonl`);
//!   its history is replayed as `session/update`s before the answer.
//! - `session/prompt`: one turn. The stop reason follows the turn's end:
//!   `completed`, `rejected` (a prompt-submit hook blocked it: seed 003) and
//!   `stopped` settle `end_turn`; `interrupted` settles `cancelled`;
//!   `max_steps` settles `max_turn_requests`; a provider failure is a
//!   JSON-RPC error naming it (the turn is still durably closed `error`).
//! - `session/cancel`: cancels every prompt of the session received before
//!   it; the turn ends `interrupted`, tool and hook process groups are killed
//!   by their owners, and an open permission question is answered cancelled.
//!
//! Tool calls are announced `pending` when the model's call is sealed, turn
//! `in_progress` when the tool starts running (`progress.rs`: after every
//! hook, rule and approval let it through) and settle `completed` or
//! `failed`. The questions about untrusted hooks and unapproved MCP servers
//! are announced as tool calls of their own before they are asked.
//!
//! Approvals: a pre-execute `ask` becomes `session/request_permission` for
//! the exact tool call id with the terminal's choices: allow always (the
//! rule dsh-permissions derives for the call, kept for the session and
//! written to `.claude/settings.local.json`), allow once, reject. Anything
//! but an allow — a rejection, a cancelled outcome, an option id dsh did
//! not offer, an error reply, a closed connection — is a denial (see
//! `approval.rs`).
//!
//! When the connection closes, or dsh gets SIGTERM, SIGHUP or SIGINT, every
//! session ends: running turns are interrupted, the session-end seam runs,
//! detached hooks are killed, and dsh exits 0.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod approval;
mod permission;
mod progress;
mod questions;
mod translate;

use dsh_stdio::stdio::{ExitStatus, errln, error_chain};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ContentBlock, ContentChunk, ElicitationCapabilities,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest,
    PromptResponse, SessionId, SessionNotification, SessionUpdate, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error as RpcError};
use dsh_agent::{Observers, QueuedPrompt};
use dsh_protocol::TurnEndReason;
use dsh_seams::{CancellationToken, SessionEndReason};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use approval::{AcpApproval, ConsentQuestion};
use dsh_session::store as sessions;
use translate::{Mode, Translator};

/// The `dsh acp` options.
#[derive(Debug, Clone)]
pub struct AcpArgs {
    /// The session flags every session of the connection gets.
    pub session: dsh_core::SessionFlags,
}

/// JSON-RPC "invalid params".
const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC "internal error".
const INTERNAL_ERROR: i32 = -32603;
/// ACP's "resource not found" (an unknown session).
const NOT_FOUND: i32 = -32002;

fn rpc_error(code: i32, message: impl Into<String>) -> RpcError {
    RpcError::new(code, message)
}

/// A prompt on its way to its session's task.
struct PromptJob {
    text: String,
    cancel: CancellationToken,
    responder: Responder<PromptResponse>,
}

/// The connection's view of one session.
struct SessionHandle {
    jobs: mpsc::UnboundedSender<PromptJob>,
    /// Prompts received from now on descend from this token; `session/cancel`
    /// cancels it and puts a fresh one in its place.
    generation: Arc<Mutex<CancellationToken>>,
}

/// How a session's log comes to be.
enum Origin {
    /// `session/new`: the log is created with the first prompt.
    New,
    /// `session/load`: the stored log is reopened.
    Stored(PathBuf),
}

/// Everything a session task needs before its first prompt.
struct SessionSetup {
    id: String,
    cwd: PathBuf,
    origin: Origin,
}

/// Connection-wide state.
struct Server {
    home: PathBuf,
    env: dsh_core::Env,
    config: dsh_core::DshConfig,
    args: AcpArgs,
    sessions: Mutex<HashMap<String, SessionHandle>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// The elicitation modes the client declared at `initialize`.
    elicitation: Mutex<Option<ElicitationCapabilities>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Sends one update; a failure means the connection is gone, which the
/// connection itself reports.
fn send_update(cx: &ConnectionTo<Client>, session_id: &SessionId, update: SessionUpdate) {
    if let Err(error) = cx.send_notification(SessionNotification::new(session_id.clone(), update)) {
        tracing::debug!("cannot send a session/update: {error}");
    }
}

fn agent_text(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text.into())))
}

/// The prompt as text: text blocks as they are, resource links as `@uri`.
// The ACP crate's ContentBlock is non-exhaustive, so a wildcard is needed.
#[allow(clippy::wildcard_enum_match_arm)]
fn prompt_text(blocks: &[ContentBlock]) -> Result<String, RpcError> {
    let mut parts = Vec::with_capacity(blocks.len());
    for block in blocks {
        match block {
            ContentBlock::Text(text) => parts.push(text.text.clone()),
            ContentBlock::ResourceLink(link) => parts.push(format!("@{}", link.uri)),
            ContentBlock::Image(_) => {
                return Err(rpc_error(
                    INVALID_PARAMS,
                    "dsh takes text prompts; this prompt holds an image (promptCapabilities.image is false)",
                ));
            }
            ContentBlock::Audio(_) => {
                return Err(rpc_error(
                    INVALID_PARAMS,
                    "dsh takes text prompts; this prompt holds audio (promptCapabilities.audio is false)",
                ));
            }
            // Embedded resources and any kind the ACP crate adds later
            // (its ContentBlock is non-exhaustive) are refused alike.
            _ => {
                return Err(rpc_error(
                    INVALID_PARAMS,
                    "dsh takes text prompts and resource links; this prompt holds embedded content (promptCapabilities.embeddedContext is false)",
                ));
            }
        }
    }
    let text = parts.join("\n");
    if text.trim().is_empty() {
        return Err(rpc_error(INVALID_PARAMS, "the prompt is empty"));
    }
    Ok(text)
}

fn mcp_notice(servers: &[McpServer]) -> Option<String> {
    if servers.is_empty() {
        return None;
    }
    Some(format!(
        "> [dsh] {} MCP server(s) from the editor were accepted but are not used: dsh starts the servers its own configuration names (.mcp.json, --mcp-config).\n\n",
        servers.len()
    ))
}

/// The ACP stop reason of a turn that ended normally.
fn stop_reason(reason: TurnEndReason) -> Result<StopReason, ()> {
    match reason {
        TurnEndReason::Completed | TurnEndReason::Rejected | TurnEndReason::Stopped => {
            Ok(StopReason::EndTurn)
        }
        TurnEndReason::Interrupted => Ok(StopReason::Cancelled),
        TurnEndReason::MaxSteps => Ok(StopReason::MaxTurnRequests),
        TurnEndReason::Error => Err(()),
    }
}

/// A project directory the client named: absolute and an existing directory.
fn checked_cwd(cwd: &Path) -> Result<PathBuf, RpcError> {
    if !cwd.is_absolute() {
        return Err(rpc_error(
            INVALID_PARAMS,
            format!("cwd must be an absolute path: {}", cwd.display()),
        ));
    }
    if !cwd.is_dir() {
        return Err(rpc_error(
            INVALID_PARAMS,
            format!("cwd is not a directory: {}", cwd.display()),
        ));
    }
    Ok(cwd.canonicalize().unwrap_or_else(|_| cwd.to_owned()))
}

impl Server {
    /// The provider settings and key, checked.
    fn check_model(&self) -> Result<(), RpcError> {
        self.config
            .model_for(
                &self.env,
                self.args.session.model.as_deref(),
                self.args.session.provider_api,
            )
            .map(drop)
            .map_err(|error| rpc_error(INTERNAL_ERROR, error_chain(&error.into())))
    }

    /// Starts a session's task and registers it.
    fn spawn_session(self: &Arc<Self>, setup: SessionSetup, cx: ConnectionTo<Client>) {
        let (jobs, receiver) = mpsc::unbounded_channel();
        let handle = SessionHandle {
            jobs,
            generation: Arc::new(Mutex::new(CancellationToken::new())),
        };
        lock(&self.sessions).insert(setup.id.clone(), handle);
        let server = Arc::clone(self);
        let task = tokio::spawn(async move { server.session_task(setup, cx, receiver).await });
        lock(&self.tasks).push(task);
    }

    fn new_session(
        self: &Arc<Self>,
        request: NewSessionRequest,
        cx: ConnectionTo<Client>,
    ) -> Result<(NewSessionResponse, Option<String>), RpcError> {
        let cwd = checked_cwd(&request.cwd)?;
        // The model settings are checked now, so a missing key is an error
        // the editor shows at once rather than at the first prompt.
        self.check_model()?;
        let id = uuid::Uuid::new_v4().to_string();
        self.spawn_session(
            SessionSetup {
                id: id.clone(),
                cwd,
                origin: Origin::New,
            },
            cx,
        );
        Ok((
            NewSessionResponse::new(id),
            mcp_notice(&request.mcp_servers),
        ))
    }

    /// Finds a stored session and replays its history; the session task
    /// reopens the log at the first prompt.
    fn load_session(
        self: &Arc<Self>,
        request: &LoadSessionRequest,
        cx: &ConnectionTo<Client>,
    ) -> Result<SessionSetup, RpcError> {
        let id = request.session_id.0.to_string();
        if lock(&self.sessions).contains_key(&id) {
            return Err(rpc_error(
                INVALID_PARAMS,
                format!("session {id} is already open on this connection"),
            ));
        }
        // The store's warnings are whole lines ("dsh: warning: …").
        let stored = sessions::list(&self.home, &mut |message| {
            errln!("{message}");
        })
        .map_err(|error| rpc_error(INTERNAL_ERROR, error_chain(&error.into())))?
        .into_iter()
        .find(|session| session.id == id)
        .ok_or_else(|| {
            rpc_error(
                NOT_FOUND,
                format!(
                    "no stored dsh session {id} in {}",
                    sessions::sessions_dir(&self.home).display()
                ),
            )
        })?;
        let cwd = PathBuf::from(&stored.cwd);
        if !cwd.is_dir() {
            return Err(rpc_error(
                INVALID_PARAMS,
                format!(
                    "session {id} belongs to {}, which is no longer a directory",
                    cwd.display()
                ),
            ));
        }
        let loaded = dsh_session::load(&stored.path).map_err(|error| {
            rpc_error(
                INTERNAL_ERROR,
                format!("cannot read the session log: {error}"),
            )
        })?;
        let session_id = SessionId::new(id.clone());
        let mut translator = Translator::new(cwd.clone());
        for event in &loaded.events {
            for update in translator.event(event, Mode::Replay) {
                send_update(cx, &session_id, update);
            }
        }
        Ok(SessionSetup {
            id,
            cwd,
            origin: Origin::Stored(stored.path),
        })
    }

    fn prompt(&self, request: PromptRequest, responder: Responder<PromptResponse>) {
        let id = request.session_id.0.to_string();
        let text = match prompt_text(&request.prompt) {
            Ok(text) => text,
            Err(error) => {
                let _ = responder.respond_with_error(error);
                return;
            }
        };
        let sessions = lock(&self.sessions);
        let Some(handle) = sessions.get(&id) else {
            let _ = responder.respond_with_error(rpc_error(
                NOT_FOUND,
                format!("no session {id} on this connection (session/new or session/load first)"),
            ));
            return;
        };
        let cancel = lock(&handle.generation).child_token();
        if let Err(mpsc::error::SendError(job)) = handle.jobs.send(PromptJob {
            text,
            cancel,
            responder,
        }) {
            let _ = job
                .responder
                .respond_with_error(rpc_error(INTERNAL_ERROR, format!("session {id} has ended")));
        }
    }

    fn cancel(&self, notification: &CancelNotification) {
        let id = notification.session_id.0.to_string();
        let sessions = lock(&self.sessions);
        match sessions.get(&id) {
            Some(handle) => {
                let mut generation = lock(&handle.generation);
                generation.cancel();
                *generation = CancellationToken::new();
            }
            // A notification has no answer; an unknown session is only logged.
            None => tracing::warn!("session/cancel for unknown session {id}"),
        }
    }

    /// Ends every session: running turns are interrupted, queued prompts
    /// answered `cancelled`, and each task runs the session-end seam.
    async fn shut_down(&self) {
        let handles: Vec<SessionHandle> = lock(&self.sessions).drain().map(|(_, h)| h).collect();
        for handle in &handles {
            lock(&handle.generation).cancel();
        }
        drop(handles);
        let tasks: Vec<JoinHandle<()>> = lock(&self.tasks).drain(..).collect();
        for task in tasks {
            let _ = task.await;
        }
    }

    /// One session: builds the agent at the first prompt, then runs prompts
    /// in order until the connection drops the session.
    async fn session_task(
        self: Arc<Self>,
        setup: SessionSetup,
        cx: ConnectionTo<Client>,
        mut jobs: mpsc::UnboundedReceiver<PromptJob>,
    ) {
        let session_id = SessionId::new(setup.id.clone());
        let turn_slot: approval::TurnSlot = Arc::new(Mutex::new(None));
        let mut running: Option<dsh_core::Session> = None;
        while let Some(job) = jobs.recv().await {
            if job.cancel.is_cancelled() {
                let _ = job
                    .responder
                    .respond(PromptResponse::new(StopReason::Cancelled));
                continue;
            }
            if running.is_none() {
                match self
                    .build_agent(&setup, &cx, &session_id, &turn_slot, &job.cancel)
                    .await
                {
                    Ok(built) => running = Some(built),
                    Err(error) => {
                        let _ = job.responder.respond_with_error(error);
                        continue;
                    }
                }
            }
            let Some(session) = running.as_mut() else {
                continue;
            };
            let agent = session.agent();
            // Built-in commands (`/clear`, `/model`, `/compact`) and unknown
            // `/name`s are no turns: answered `end_turn`.
            if let Some(command) =
                dsh_agent::commands::parse(&job.text, &agent.project_context().commands)
            {
                match agent.run_builtin(command).await {
                    Ok(true) => {
                        let _ = job
                            .responder
                            .respond(PromptResponse::new(StopReason::EndTurn));
                        continue;
                    }
                    Ok(false) => {}
                    Err(error) => {
                        let _ = job.responder.respond_with_error(rpc_error(
                            INTERNAL_ERROR,
                            format!("the session log failed: {error}"),
                        ));
                        continue;
                    }
                }
            }
            *lock(&turn_slot) = Some(job.cancel.clone());
            let outcome = agent
                .run_turn(
                    QueuedPrompt {
                        text: job.text,
                        source: "user".to_owned(),
                    },
                    job.cancel,
                )
                .await;
            *lock(&turn_slot) = None;
            let answer = match outcome {
                Ok(outcome) => match stop_reason(outcome.reason) {
                    Ok(reason) => Ok(PromptResponse::new(reason)),
                    Err(()) => Err(rpc_error(
                        INTERNAL_ERROR,
                        format!(
                            "the model request failed: {}",
                            outcome.message.as_deref().unwrap_or("no detail")
                        ),
                    )),
                },
                Err(error) => Err(rpc_error(
                    INTERNAL_ERROR,
                    format!("the session log failed: {error}"),
                )),
            };
            let _ = match answer {
                Ok(response) => job.responder.respond(response),
                Err(error) => job.responder.respond_with_error(error),
            };
        }
        if let Some(mut session) = running {
            session.shutdown(SessionEndReason::Exit).await;
        }
    }

    /// Resolves the session through dsh-core (asking about untrusted
    /// project hooks and unapproved project MCP servers first), assembles
    /// it and starts the agent.
    async fn build_agent(
        &self,
        setup: &SessionSetup,
        cx: &ConnectionTo<Client>,
        session_id: &SessionId,
        turn_slot: &approval::TurnSlot,
        cancel: &CancellationToken,
    ) -> Result<dsh_core::Session, RpcError> {
        let internal = |error: anyhow::Error| rpc_error(INTERNAL_ERROR, error_chain(&error));
        let core = |error: dsh_core::Error| internal(error.into());
        let mut spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
            env: &self.env,
            config: &self.config,
            flags: &self.args.session,
            cwd: &setup.cwd,
            policy: dsh_core::TrustPolicy::Ask,
        })
        .map_err(core)?;
        let model = spec.model().map_err(core)?;
        // The one trust question: hooks, allow rules, env, MCP servers
        // and plugins, answered together.
        let offer = spec.project_offer();
        if !offer.is_empty() {
            let question = ConsentQuestion::project(&setup.id, &setup.cwd, &offer);
            let answer = question.ask(cx, session_id, cancel).await;
            let said = spec.answer_project(match answer {
                approval::TrustAnswer::Always => dsh_core::ProjectAnswer::Trust,
                approval::TrustAnswer::RunThisSession => dsh_core::ProjectAnswer::ThisSession,
                approval::TrustAnswer::Skip => dsh_core::ProjectAnswer::Decline,
            });
            question.settle(cx, session_id, answer, Some(said));
        }
        let target = match &setup.origin {
            Origin::New => dsh_core::LogTarget::New {
                id: setup.id.clone(),
                dir: sessions::sessions_dir(&self.home),
                wait: dsh_session::LockWait::Fail,
            },
            Origin::Stored(path) => dsh_core::LogTarget::Reopen {
                path: path.clone(),
                wait: dsh_session::LockWait::Fail,
            },
        };
        // MCP servers start on a runtime of their own: off this one.
        let mut assembled = tokio::task::spawn_blocking(move || dsh_core::assemble(spec, target))
            .await
            .map_err(|error| internal(anyhow::Error::new(error)))?
            .map_err(core)?;
        if let Some(torn) = assembled.torn() {
            tracing::warn!(
                "{}: dropped an incomplete last line ({} bytes)",
                torn.line,
                torn.bytes
            );
        }
        for notice in assembled.notices() {
            send_update(cx, session_id, agent_text(format!("> [dsh] {notice}\n\n")));
        }
        let translator = Arc::new(Mutex::new(Translator::new(setup.cwd.clone())));
        let observers = {
            let (events, texts, notices) = (
                Arc::clone(&translator),
                Arc::clone(&translator),
                Arc::clone(&translator),
            );
            let (cx_e, cx_t, cx_n) = (cx.clone(), cx.clone(), cx.clone());
            let (id_e, id_t, id_n) = (session_id.clone(), session_id.clone(), session_id.clone());
            Observers {
                on_event: Some(Arc::new(move |event| {
                    for update in lock(&events).event(event, Mode::Live) {
                        send_update(&cx_e, &id_e, update);
                    }
                })),
                on_text: Some(Arc::new(move |delta| {
                    for update in lock(&texts).text(delta) {
                        send_update(&cx_t, &id_t, update);
                    }
                })),
                on_notice: Some(Arc::new(move |notice| {
                    for update in lock(&notices).notice(notice) {
                        send_update(&cx_n, &id_n, update);
                    }
                })),
            }
        };
        // Last in the chain: it runs only for calls every check let through.
        assembled.push_plugin(Arc::new(progress::ExecutionStarts::new(
            cx.clone(),
            session_id.clone(),
        )));
        let approval = AcpApproval::new(
            cx.clone(),
            session_id.clone(),
            setup.cwd.clone(),
            Arc::clone(turn_slot),
            Arc::clone(assembled.permissions()),
        )
        .with_elicitation(lock(&self.elicitation).clone());
        let mut session = dsh_core::Session::from_assembled(
            assembled,
            dsh_core::AgentOptions {
                model,
                interactive: true,
                max_steps: self
                    .args
                    .session
                    .max_steps
                    .unwrap_or(dsh_agent::DEFAULT_MAX_STEPS),
                observers,
                approval: Some(Arc::new(approval)),
            },
        )
        .map_err(core)?;
        // config.toml's `system_prompt` / `append_system_prompt`.
        self.config
            .apply_system_prompt(session.agent(), None, None)
            .map_err(core)?;
        session.begin().await;
        Ok(session)
    }
}

/// Runs `dsh acp` until the client closes stdin.
pub fn run(args: AcpArgs) -> anyhow::Result<ExitStatus> {
    args.session.refuse_worktree("dsh acp")?;
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let server = Arc::new(Server {
        home,
        env,
        config,
        args,
        sessions: Mutex::new(HashMap::new()),
        tasks: Mutex::new(Vec::new()),
        elicitation: Mutex::new(None),
    });
    // A blocking stdin read may still be parked; it ends with the process.
    let result = dsh_core::block_on(async {
        // Editors stop agents with a signal as often as by closing stdin;
        // either way sessions end properly (session-end hooks, process
        // groups killed) instead of leaving tool processes behind.
        let mut terminate = signal(SignalKind::terminate())?;
        let mut hangup = signal(SignalKind::hangup())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let on_init = Arc::clone(&server);
        let (on_new, on_load, on_prompt, on_cancel) = (
            Arc::clone(&server),
            Arc::clone(&server),
            Arc::clone(&server),
            Arc::clone(&server),
        );
        let served = agent_client_protocol::Agent
            .v1()
            .name("dsh")
            .on_receive_request(
                async move |request: InitializeRequest, responder, _cx| {
                    lock(&on_init.elicitation).clone_from(&request.client_capabilities.elicitation);
                    // dsh speaks protocol v1 only; a client asking for
                    // another version gets v1 and decides whether to go on.
                    responder.respond(
                        InitializeResponse::new(ProtocolVersion::V1)
                            .agent_capabilities(
                                AgentCapabilities::new()
                                    .load_session(true)
                                    .prompt_capabilities(PromptCapabilities::new()),
                            )
                            .agent_info(Implementation::new("dsh", env!("CARGO_PKG_VERSION"))),
                    )
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: NewSessionRequest, responder, cx| match on_new
                    .new_session(request, cx.clone())
                {
                    Ok((response, notice)) => {
                        let id = response.session_id.clone();
                        responder.respond(response)?;
                        if let Some(notice) = notice {
                            send_update(&cx, &id, agent_text(notice));
                        }
                        Ok(())
                    }
                    Err(error) => responder.respond_with_error(error),
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: LoadSessionRequest, responder, cx| match on_load
                    .load_session(&request, &cx)
                {
                    Ok(setup) => {
                        let notice = mcp_notice(&request.mcp_servers);
                        on_load.spawn_session(setup, cx.clone());
                        responder.respond(LoadSessionResponse::new())?;
                        if let Some(notice) = notice {
                            send_update(&cx, &request.session_id, agent_text(notice));
                        }
                        Ok(())
                    }
                    Err(error) => responder.respond_with_error(error),
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: PromptRequest, responder, _cx| {
                    on_prompt.prompt(request, responder);
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |notification: CancelNotification, _cx| {
                    on_cancel.cancel(&notification);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_to(agent_client_protocol::Stdio::new());
        let served = tokio::select! {
            served = served => served.map_err(|error| anyhow::anyhow!("the ACP connection failed: {error}")),
            _ = terminate.recv() => Ok(()),
            _ = hangup.recv() => Ok(()),
            _ = interrupt.recv() => Ok(()),
        };
        server.shut_down().await;
        served
    })?;
    result?;
    Ok(ExitStatus::Success)
}
