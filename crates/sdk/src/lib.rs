//! dsh under the Claude Agent SDK: `--input-format stream-json
//! --output-format stream-json`, the way the official SDKs (TypeScript
//! `@anthropic-ai/claude-agent-sdk`, Python `claude-agent-sdk`) drive the
//! CLI they spawn (`pathToClaudeCodeExecutable`, `cli_path`).
//!
//! What this crate is for: the driver. It reads the SDK's stdin lines
//! (user messages and control requests, `dsh-sdk-control`'s types), runs
//! each user message as a turn of one dsh session resolved and assembled by
//! dsh-core like every other front end's, writes the conversation as Claude
//! Code's stream-json messages, and speaks the control protocol both ways:
//! - `initialize` registers the application's SDK hooks on the Claude Code
//!   bridge (hooks-claude), so they run on the same seams as the settings
//!   hooks and are recorded as `hook/*` events with `dialect: "sdk"`;
//! - an `ask` no PermissionRequest hook settled becomes `can_use_tool` when
//!   the SDK passed `--permission-prompt-tool stdio` (the application's
//!   `canUseTool`), an allow with `updatedInput` running the input given;
//! - `interrupt` cancels the running turn (it ends
//!   `error_during_execution`; the session stays open), `set_permission_mode`
//!   switches the permission stage's mode, `set_model` the model of the
//!   following requests.
//!
//! Settings hooks, permission rules, trust (as in `-p`: untrusted project
//! hooks are named on stderr, or refused with `--strict-hooks`) and the
//! session log all apply as in any dsh session; `--resume` reopens one.
//!
//! What it is not: no configuration, permission or hook logic of its own —
//! those stay in dsh-core, dsh-permissions and the bridges.
//!
//! Lifetime: the process ends as Claude Code's does. After stdin closes,
//! the queued messages still run (Python closes stdin right after its only
//! message), then the session ends (session-end seam, MCP servers closed,
//! hook processes killed) and dsh exits 0, or 1 when the last result was an
//! error. SIGINT, SIGTERM and SIGHUP end the session the same way.

// File system calls go through fs-err (clippy.toml `disallowed-methods`).
#![cfg_attr(not(test), warn(clippy::disallowed_methods))]
// A new variant of our own enums must be handled where it is matched.
#![cfg_attr(not(test), warn(clippy::wildcard_enum_match_arm))]

mod approval;
mod mcp;
mod peer;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use dsh_agent::{Observers, QueuedPrompt};
use dsh_core::sessions::Pick;
use dsh_permissions::{Mode, PermissionsPlugin};
use dsh_sdk_control::{
    Account, Capabilities, ControlResponseLine, Inbound, InitializeRequest, InitializeResponse,
    LocalCommandLine, ModeStatus, ModelInfo, NothingPending, SdkRequest, SessionState,
    SuccessPayload,
};
use dsh_seams::{CancellationToken, SessionEndReason};
use dsh_stdio::stdio::{ExitStatus, errln};
use tokio::io::AsyncBufReadExt as _;
use tokio::sync::mpsc;

pub use approval::CanUseToolPlugin;
pub use peer::{Callbacks, Peer};

/// What `--input-format` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum InputFormat {
    /// The prompt is an argument, or stdin as text.
    #[default]
    Text,
    /// stdin carries JSON lines: user messages and control requests.
    StreamJson,
}

/// The flags the Claude Agent SDKs pass that only this driver reads.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SdkFlags {
    /// `stream-json`: read user messages and control requests as JSON lines
    /// on stdin (the Claude Agent SDK's protocol; needs `--output-format stream-json`).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,
    /// `stdio`: permission questions go to the SDK application (`canUseTool`)
    /// as `can_use_tool` control requests.
    #[arg(long, value_name = "TOOL")]
    pub permission_prompt_tool: Option<String>,
    /// `allowDangerouslySkipPermissions`: accepted; `--permission-mode
    /// bypassPermissions` is what dsh acts on.
    #[arg(long)]
    pub allow_dangerously_skip_permissions: bool,
}

impl SdkFlags {
    /// Whether stdin is the SDK's stream.
    pub fn streaming(&self) -> bool {
        self.input_format == Some(InputFormat::StreamJson)
    }
}

/// What the driver is started with.
#[derive(Debug, Clone)]
pub struct SdkArgs {
    /// Which session: new, or `--resume ID` / `--continue`.
    pub pick: Pick,
    /// `--permission-prompt-tool`: `stdio` sends asks to the application.
    pub permission_prompt_tool: Option<String>,
    /// Refuse untrusted project hooks instead of naming them on stderr.
    pub strict_hooks: bool,
    /// Claude Code's print-mode flags (`--system-prompt`, `--append-system-prompt`, …).
    pub print: dsh_print::PrintFlags,
    /// The session flags.
    pub session: dsh_core::SessionFlags,
}

/// What the stdin reader hands the session task, in arrival order.
enum Input {
    /// A user message: the next turn.
    Prompt(String),
    /// `initialize` (answered once the session exists).
    Initialize(String, Box<InitializeRequest>),
    /// `set_model`, applied between turns.
    SetModel(String, Option<String>),
}

/// What the reader and the session task share.
#[derive(Default)]
struct Shared {
    /// The running turn's token (interrupt cancels it).
    turn: Mutex<Option<CancellationToken>>,
    /// The permission stage, once the session exists.
    permissions: Mutex<Option<Arc<PermissionsPlugin>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The `user` line a `set_model` answer is preceded by, as Claude Code's.
fn model_set(session_id: &str, model: &str) -> LocalCommandLine {
    LocalCommandLine::new(
        session_id,
        &format!("Set model to `{model}`"),
        uuid::Uuid::new_v4().to_string(),
        chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string(),
    )
}

/// Reads stdin until it closes: answers to the CLI's requests and the
/// requests that cannot wait for a turn (interrupt, permission mode) are
/// served here; the rest is queued for the session task.
async fn read_stdin(peer: Arc<Peer>, shared: Arc<Shared>, queue: mpsc::UnboundedSender<Input>) {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(error) => {
                errln!("dsh: cannot read stdin: {error}");
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let inbound = match dsh_sdk_control::parse_line(&line) {
            Ok(inbound) => inbound,
            Err(error) => {
                errln!("dsh: stream-json input: {error}");
                continue;
            }
        };
        match inbound {
            Inbound::User(user) => match user.message.content.text() {
                Ok(text) => {
                    let _ = queue.send(Input::Prompt(text));
                }
                Err(why) => errln!("dsh: stream-json input: {why}"),
            },
            Inbound::ControlResponse(answer) => peer.answer(answer),
            Inbound::ControlCancel { request_id } => peer.cancel(&request_id),
            Inbound::KeepAlive => {}
            Inbound::ControlRequest {
                request_id,
                request,
            } => match request {
                SdkRequest::Initialize(init) => {
                    let _ = queue.send(Input::Initialize(request_id, Box::new(init)));
                }
                SdkRequest::SetModel { model } => {
                    let _ = queue.send(Input::SetModel(request_id, model));
                }
                SdkRequest::Interrupt => {
                    if let Some(turn) = lock(&shared.turn).as_ref() {
                        turn.cancel();
                    }
                    peer.send(&ControlResponseLine::success(
                        &request_id,
                        SuccessPayload::Interrupted {
                            still_queued: NothingPending,
                        },
                    ));
                }
                SdkRequest::SetPermissionMode { mode } => {
                    let answer = set_mode(&shared, &mode);
                    match answer {
                        Ok(mode) => {
                            peer.send(&ControlResponseLine::success(
                                &request_id,
                                SuccessPayload::Mode {
                                    mode: mode.to_owned(),
                                },
                            ));
                            peer.send(&ModeStatus::new(
                                mode.to_owned(),
                                uuid::Uuid::new_v4().to_string(),
                                peer.session_id(),
                            ));
                        }
                        Err(error) => {
                            peer.send(&ControlResponseLine::error(&request_id, error));
                        }
                    }
                }
                SdkRequest::Other { subtype } => peer.send(&ControlResponseLine::error(
                    &request_id,
                    format!("dsh does not serve the control request `{subtype}`"),
                )),
            },
        }
    }
    peer.close();
}

fn set_mode(shared: &Shared, mode: &str) -> Result<&'static str, String> {
    let parsed: Mode = mode.parse().map_err(|error| format!("{error}"))?;
    match lock(&shared.permissions).as_ref() {
        Some(permissions) => {
            permissions.set_mode(parsed);
            Ok(parsed.hook_name())
        }
        None => Err("no session yet: send a user message first".to_owned()),
    }
}

/// The SDK hooks `initialize` registered, flattened in registration order.
fn sdk_hooks(init: &InitializeRequest) -> Vec<dsh_hooks_claude::SdkHook> {
    let Some(hooks) = &init.hooks else {
        return Vec::new();
    };
    let mut flat = Vec::new();
    for (event, matchers) in &hooks.0 {
        for matcher in matchers {
            for id in &matcher.hook_callback_ids {
                flat.push(dsh_hooks_claude::SdkHook {
                    event: event.clone(),
                    matcher: matcher.matcher.clone(),
                    callback_id: id.clone(),
                    timeout: matcher
                        .timeout
                        .filter(|seconds| seconds.is_finite() && *seconds > 0.0)
                        .map(Duration::from_secs_f64),
                });
            }
        }
    }
    flat
}

/// Runs the driver until stdin closes and the queued turns are done.
pub fn run(args: SdkArgs) -> anyhow::Result<ExitStatus> {
    // A blocking stdin read may still be parked; it ends with the process.
    dsh_core::block_on(drive(args))?
}

/// The `initialize` request and its id, when the SDK sent one.
type Init = Option<(String, Box<InitializeRequest>)>;

async fn drive(args: SdkArgs) -> anyhow::Result<ExitStatus> {
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let (cwd, existing) = dsh_core::sessions::pick(&home, &args.pick, &dsh_core::current_dir()?)?;
    let peer = Peer::new(env.var("CLAUDE_CODE_SDK_READS_SESSION_STATE").as_deref() == Some("1"));
    let shared = Arc::new(Shared::default());
    let (queue, mut inputs) = mpsc::unbounded_channel();
    tokio::spawn(read_stdin(Arc::clone(&peer), Arc::clone(&shared), queue));

    // The first line decides: `initialize` (an SDK), or a user message
    // (`-p --input-format stream-json` without one).
    let mut pending: Vec<Input> = Vec::new();
    let init: Init = match inputs.recv().await {
        None => return Ok(ExitStatus::Success),
        Some(Input::Initialize(id, init)) => Some((id, init)),
        Some(other) => {
            pending.push(other);
            None
        }
    };

    let mut spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags: &args.session,
        cwd: &cwd,
        policy: dsh_core::TrustPolicy::Headless {
            strict: args.strict_hooks || env.strict_hooks(),
        },
    })?;
    let registered = init
        .as_ref()
        .map(|(_, init)| sdk_hooks(init))
        .unwrap_or_default();
    if !registered.is_empty() {
        // The SDK's callbacks join the Claude Code dialect's hooks.
        spec.sources.attachments.insert(
            dsh_protocol::Dialect::Claude,
            dsh_hooks_claude::SdkHookSet {
                hooks: registered.clone(),
                transport: Arc::new(Callbacks(Arc::clone(&peer))),
            },
        );
    }
    // The model sees Claude Code's tool names; usage and cost go to the meter.
    let meter = dsh_print::Meter::new();
    let model = dsh_print::PrintModel::wrap(
        spec.model()?,
        dsh_print::ToolNaming::ClaudeCode,
        meter.clone(),
        None,
    );
    spec.decide_headless(&mut std::io::stderr())?;
    let target = dsh_core::sessions::log_target(&home, existing.as_ref(), dsh_core::LockWait::Fail);
    // MCP servers start on a runtime of their own: off this one.
    let mut assembled = tokio::task::spawn_blocking(move || dsh_core::assemble(spec, target))
        .await
        .context("session assembly stopped")??;
    dsh_core::sessions::report_torn(&assembled);
    for notice in assembled.notices() {
        errln!("dsh: {notice}");
    }
    peer.set_session_id(assembled.session_id());
    let session_id = assembled.session_id().to_owned();
    if args.permission_prompt_tool.as_deref() == Some("stdio") {
        // After the permission stage and the bridges' PermissionRequest hooks.
        assembled.push_plugin(Arc::new(CanUseToolPlugin::new(Arc::clone(&peer))));
    } else if let Some(tool) = &args.permission_prompt_tool {
        anyhow::bail!(
            "--permission-prompt-tool {tool}: dsh asks only through the SDK's control protocol (`stdio`)"
        );
    }
    let permissions = Arc::clone(assembled.permissions());
    *lock(&shared.permissions) = Some(Arc::clone(&permissions));

    let max_steps = args
        .session
        .max_steps
        .unwrap_or(dsh_agent::DEFAULT_MAX_STEPS);
    let sdk_tools = sdk_tools(&peer, &init, &args.session).await;
    let translator = Arc::new(Mutex::new(dsh_print::Translator::new(
        session_id.clone(),
        dsh_print::InitInfo {
            cwd: assembled.cwd().to_owned(),
            model: model.name(),
            permission_mode: permissions.mode().hook_name().to_owned(),
            ..dsh_print::InitInfo::default()
        },
        dsh_print::Options {
            partial_messages: args.print.include_partial_messages,
            naming: dsh_print::ToolNaming::ClaudeCode,
        },
        meter,
        Some(max_steps),
    )));
    // Whether the last result was an error (the exit status).
    let last_error = Arc::new(Mutex::new(false));
    let observers = observers(&translator, &peer, &last_error, &args.print);
    let mut session = dsh_core::Session::from_assembled(
        assembled,
        dsh_core::AgentOptions {
            model,
            interactive: false,
            max_steps,
            observers,
            approval: None,
        },
    )?;
    let agent = session.agent();
    for tool in sdk_tools {
        agent.register_tool(tool);
    }
    lock(&translator).set_tools(agent.tool_names());
    apply_system_prompt(agent, &args.print, &init);
    if let Some((id, init)) = &init {
        let answer = InitializeResponse {
            commands: Vec::new(),
            agents: Vec::new(),
            output_style: "default",
            available_output_styles: vec!["default"],
            models: vec![ModelInfo {
                value: agent.current_model(),
                display_name: agent.current_model(),
                description: "the model dsh is configured with".to_owned(),
            }],
            account: Account::default(),
            pid: std::process::id(),
            claude_code_version: dsh_sdk_control::CLAUDE_CODE_PROTOCOL_VERSION,
            current_permission_mode: permissions.mode().hook_name().to_owned(),
            hooks_applied: (!registered.is_empty())
                .then(|| registered.iter().map(|h| h.callback_id.clone()).collect()),
            sdk_mcp_manifests_parked: init.sdk_mcp_servers.clone(),
            session_state: "idle",
            capabilities: Capabilities {
                dsh_version: env!("CARGO_PKG_VERSION").to_owned(),
            },
        };
        peer.send(&ControlResponseLine::initialized(id, &answer));
    }

    // Signals end the session in order, as stdin closing does.
    session.watch_signals()?;
    session.begin().await;
    let served = serve(
        &mut session,
        pending,
        &mut inputs,
        Served {
            peer: &peer,
            shared: &shared,
            translator: &translator,
            permissions: &permissions,
            session_id: &session_id,
        },
    )
    .await;
    session.shutdown(SessionEndReason::Other).await;
    served?;
    Ok(if *lock(&last_error) {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}

/// The application's in-process MCP servers: their tools join the list.
/// TypeScript lists them in `initialize` with their tools; Python names
/// them in `--mcp-config` (`"type": "sdk"`) and is asked for the tools.
async fn sdk_tools(
    peer: &Arc<Peer>,
    init: &Init,
    session: &dsh_core::SessionFlags,
) -> Vec<Arc<dyn dsh_tools::Tool>> {
    let Some((_, init)) = init.as_ref() else {
        return Vec::new();
    };
    let mut servers = init.sdk_mcp_servers.clone().unwrap_or_default();
    let mut manifests = init.sdk_mcp_server_manifests.clone().unwrap_or_default();
    let mut unlisted: Vec<String> = Vec::new();
    for name in session.mcp_config.iter().flat_map(|c| c.sdk_servers()) {
        if !manifests.contains_key(&name) && !unlisted.contains(&name) {
            unlisted.push(name);
        }
    }
    let (asked, notices) = mcp::list_tools(peer, &unlisted).await;
    for notice in notices {
        errln!("dsh: {notice}");
    }
    manifests.extend(asked);
    for name in unlisted {
        if !servers.contains(&name) {
            servers.push(name);
        }
    }
    mcp::tools_of(peer, &servers, &manifests)
}

/// The agent's observers: events become stream-json messages to the SDK
/// (noting whether the last result was an error), notices go to stderr.
fn observers(
    translator: &Arc<Mutex<dsh_print::Translator>>,
    peer: &Arc<Peer>,
    last_error: &Arc<Mutex<bool>>,
    print: &dsh_print::PrintFlags,
) -> Observers {
    let events = Arc::clone(translator);
    let events_peer = Arc::clone(peer);
    let last_error = Arc::clone(last_error);
    Observers {
        on_event: Some(Arc::new(move |event| {
            let out = lock(&events).event(event);
            for message in out {
                if let dsh_print::Message::Result(result) = &message {
                    *lock(&last_error) = result.is_error;
                }
                events_peer.send(&message);
            }
        })),
        on_notice: Some(Arc::new(|notice: &dsh_seams::UserNotice| {
            errln!("dsh: [{}] {}", notice.source, notice.text);
        })),
        on_text: print.include_partial_messages.then(|| {
            let translator = Arc::clone(translator);
            let peer = Arc::clone(peer);
            Arc::new(move |delta: &str| {
                let out = lock(&translator).text_delta(delta);
                for message in out {
                    peer.send(&message);
                }
            }) as dsh_agent::TextCallback
        }),
    }
}

/// The system prompt: `--system-prompt` (Python) or `initialize.systemPrompt`
/// (TypeScript) replaces dsh's base prompt when it says something; the
/// SDKs' default (an empty prompt) keeps dsh's.
fn apply_system_prompt(agent: &mut dsh_agent::Agent, print: &dsh_print::PrintFlags, init: &Init) {
    let init_prompt = init
        .as_ref()
        .and_then(|(_, init)| init.system_prompt.as_ref())
        .map(|parts| parts.join("\n"));
    if let Some(prompt) = print
        .system_prompt
        .clone()
        .or(init_prompt)
        .filter(|prompt| !prompt.trim().is_empty())
    {
        agent.replace_system_prompt(prompt);
    }
    if let Some(text) = print.append_system_prompt.clone().or_else(|| {
        init.as_ref()
            .and_then(|(_, init)| init.append_system_prompt.clone())
    }) {
        agent.append_system_prompt(text);
    }
}

/// What the input loop answers with.
struct Served<'a> {
    peer: &'a Arc<Peer>,
    shared: &'a Arc<Shared>,
    translator: &'a Arc<Mutex<dsh_print::Translator>>,
    permissions: &'a Arc<PermissionsPlugin>,
    session_id: &'a str,
}

/// Runs the inputs (the pending ones, then stdin's) until stdin closes or
/// a signal ends the session.
async fn serve(
    session: &mut dsh_core::Session,
    pending: Vec<Input>,
    inputs: &mut mpsc::UnboundedReceiver<Input>,
    to: Served<'_>,
) -> anyhow::Result<()> {
    let Served {
        peer,
        shared,
        translator,
        permissions,
        session_id,
    } = to;
    let session_cancel = session.agent().session_cancel();
    let agent = session.agent();
    let mut pending = pending.into_iter();
    loop {
        let input = match pending.next() {
            Some(input) => input,
            None => {
                tokio::select! {
                    input = inputs.recv() => match input {
                        Some(input) => input,
                        None => break,
                    },
                    () = session_cancel.cancelled() => break,
                }
            }
        };
        match input {
            Input::Prompt(text) => {
                peer.state(SessionState::Running);
                lock(translator).set_permission_mode(permissions.mode().hook_name());
                let cancel = session_cancel.child_token();
                *lock(&shared.turn) = Some(cancel.clone());
                // system/init, the messages and the result come from the
                // turn's events (the translator).
                agent
                    .run_turn(
                        QueuedPrompt {
                            text,
                            source: "user".to_owned(),
                        },
                        cancel,
                    )
                    .await?;
                *lock(&shared.turn) = None;
                peer.state(SessionState::Idle);
            }
            Input::SetModel(id, model) => {
                let name = model.unwrap_or_else(|| agent.current_model());
                match agent
                    .switch_model(&name, dsh_seams::ModelSwitchSource::Sdk)
                    .await
                {
                    Ok(Ok(())) => {
                        peer.send(&model_set(session_id, &name));
                        peer.send(&ControlResponseLine::success(
                            &id,
                            SuccessPayload::Model { model: name },
                        ));
                    }
                    // A PreModelSwitch hook refused it (Claude Code's text).
                    Ok(Err(reason)) => peer.send(&ControlResponseLine::error(
                        &id,
                        format!("Model switch blocked by a PreModelSwitch hook: {reason}"),
                    )),
                    Err(error) => peer.send(&ControlResponseLine::error(&id, error.to_string())),
                }
            }
            Input::Initialize(id, _) => peer.send(&ControlResponseLine::error(
                &id,
                "already initialized: initialize comes once, first",
            )),
        }
    }
    Ok(())
}
