//! What every seam listener is handed: the session, the turn, the log sink.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use dsh_protocol::EventBody;
use tokio_util::sync::CancellationToken;

use crate::{AgentIdentity, ContextEntry, SubagentRunner};

/// Environment variables that later tool calls run with (e.g. from Claude
/// Code's `CLAUDE_ENV_FILE`), and the working directory they start in once
/// the bash tool has moved it. Shared by the session; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct SessionEnv {
    vars: Arc<RwLock<Vec<(String, String)>>>,
    work_dir: Arc<RwLock<Option<PathBuf>>>,
    watch: Arc<RwLock<WatchRequests>>,
}

/// Files listeners asked the session to watch (Claude Code's FileChanged
/// matcher and `watchPaths`); the session's watcher reads them each time it
/// looks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchRequests {
    /// Basenames, looked for in the current working directory.
    pub names: Vec<String>,
    /// Paths kept for the whole session (SessionStart `watchPaths`).
    pub fixed: Vec<PathBuf>,
    /// Paths each new request replaces (CwdChanged / FileChanged
    /// `watchPaths`).
    pub dynamic: Vec<PathBuf>,
}

impl WatchRequests {
    /// Every requested path, names (and relative paths) resolved in `dir`,
    /// each once, in request order.
    pub fn paths(&self, dir: &std::path::Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let named = self.names.iter().map(|name| dir.join(name));
        let given = self
            .fixed
            .iter()
            .chain(&self.dynamic)
            .map(|path| dir.join(path));
        for path in named.chain(given) {
            if !out.contains(&path) {
                out.push(path);
            }
        }
        out
    }
}

impl SessionEnv {
    /// Sets (or replaces) a variable.
    pub fn set(&self, key: impl Into<String>, value: impl Into<String>) {
        let (key, value) = (key.into(), value.into());
        let mut vars = self.vars.write().unwrap_or_else(PoisonError::into_inner);
        match vars.iter_mut().find(|(existing, _)| *existing == key) {
            Some(slot) => slot.1 = value,
            None => vars.push((key, value)),
        }
    }

    /// All variables, in the order first set.
    pub fn snapshot(&self) -> Vec<(String, String)> {
        self.vars
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Moves the working directory later tool calls and hooks start in
    /// (the bash tool's `cd`, kept from one call to the next).
    pub fn set_work_dir(&self, dir: PathBuf) {
        *self
            .work_dir
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(dir);
    }

    /// Watches these basenames in the current working directory (added to
    /// what is watched already).
    pub fn watch_names(&self, names: impl IntoIterator<Item = String>) {
        let mut watch = self.watch.write().unwrap_or_else(PoisonError::into_inner);
        for name in names {
            if !watch.names.contains(&name) {
                watch.names.push(name);
            }
        }
    }

    /// Watches these paths for the rest of the session.
    pub fn watch_paths(&self, paths: impl IntoIterator<Item = PathBuf>) {
        let mut watch = self.watch.write().unwrap_or_else(PoisonError::into_inner);
        for path in paths {
            if !watch.fixed.contains(&path) {
                watch.fixed.push(path);
            }
        }
    }

    /// Replaces the paths an earlier call of this method asked for.
    pub fn set_dynamic_watch(&self, paths: Vec<PathBuf>) {
        self.watch
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .dynamic = paths;
    }

    /// What listeners asked to watch.
    pub fn watch_requests(&self) -> WatchRequests {
        self.watch
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The working directory a tool call moved to, if one did.
    pub fn work_dir(&self) -> Option<PathBuf> {
        self.work_dir
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Facts about the session every listener may read.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// The session id.
    pub session_id: String,
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    /// The model's name.
    pub model: String,
    /// Where the session log lives, when it is a file.
    pub log_path: Option<PathBuf>,
    /// Variables later `bash` calls see.
    pub env: SessionEnv,
    /// Whether a person can answer prompts (approvals, trust).
    pub interactive: bool,
}

impl SessionInfo {
    /// The directory tools and hooks run in now: where the bash tool's last
    /// `cd` left it, else the session's directory. (`cwd` stays the project:
    /// Claude Code's `CLAUDE_PROJECT_DIR`.)
    pub fn current_dir(&self) -> PathBuf {
        self.env.work_dir().unwrap_or_else(|| self.cwd.clone())
    }
}

/// How loud a user notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeLevel {
    /// Informational (`systemMessage`).
    Info,
    /// Something the user should look at (a hook failed, a cap fired).
    Warning,
}

/// A message for the person at the terminal; never model-facing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserNotice {
    /// Who says it.
    pub source: String,
    /// What it says.
    pub text: String,
    /// How loud.
    pub level: NoticeLevel,
}

/// Where listeners send durable records and user notices. The agent owns
/// the only implementation that writes the session log.
pub trait SessionSink: Send + Sync {
    /// Appends an event (e.g. `hook/invoked`) to the session log.
    fn record(&self, body: EventBody);
    /// Shows a notice to the user.
    fn tell_user(&self, notice: UserNotice);
    /// A fresh, UUID-shaped id for a record (a tool execution, a hook run, a
    /// subagent). The session's own sink derives them from the session (see
    /// [`crate::IdSource`]) so that replays repeat them; elsewhere, random.
    fn new_id(&self) -> String {
        crate::random_id()
    }
}

/// A sink that drops everything (tests, tools run outside a session).
#[derive(Debug, Default, Clone, Copy)]
pub struct NullSink;

impl SessionSink for NullSink {
    fn record(&self, _body: EventBody) {}
    fn tell_user(&self, _notice: UserNotice) {}
}

/// A request to stop the turn after the current phase (`continue: false`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopRequest {
    /// Why (user-facing).
    pub reason: String,
    /// Who asked.
    pub source: String,
}

#[derive(Debug, Default)]
struct TurnControlState {
    stop: Option<StopRequest>,
    injected: Vec<ContextEntry>,
    clear_history: bool,
}

/// Per-turn channel from listeners to the loop: stop requests and context
/// injections made during execution (they join the active batch FIFO).
#[derive(Debug, Clone, Default)]
pub struct TurnControl {
    state: Arc<Mutex<TurnControlState>>,
}

impl TurnControl {
    /// Asks the loop to end the turn `stopped` after the current phase. The
    /// first request wins.
    pub fn request_stop(&self, reason: impl Into<String>, source: impl Into<String>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.stop.is_none() {
            state.stop = Some(StopRequest {
                reason: reason.into(),
                source: source.into(),
            });
        }
    }

    /// The pending stop request, if any.
    pub fn stop_requested(&self) -> Option<StopRequest> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop
            .clone()
    }

    /// Asks the loop to start the conversation again before a forced
    /// continuation it is about to make (Gemini CLI's AfterAgent
    /// `clearContext`): the loop records `session/cleared` inside the turn,
    /// so the next request holds only what follows it.
    pub fn request_clear_history(&self) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear_history = true;
    }

    /// Whether a listener asked to clear the history; the request is taken.
    pub fn take_clear_history(&self) -> bool {
        std::mem::take(
            &mut self
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear_history,
        )
    }

    /// Queues model-facing context; the loop appends it when the batch settles.
    pub fn inject(&self, entry: ContextEntry) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .injected
            .push(entry);
    }

    /// Takes the queued injections, in order.
    pub fn take_injected(&self) -> Vec<ContextEntry> {
        std::mem::take(
            &mut self
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .injected,
        )
    }
}

/// What every seam listener is handed.
#[derive(Clone)]
pub struct SeamContext {
    /// The session.
    pub session: Arc<SessionInfo>,
    /// The open turn, or `None` outside turns (session start/end).
    pub turn: Option<u64>,
    /// Cancelled when the turn (or session) is interrupted.
    pub cancel: CancellationToken,
    /// Durable records and user notices.
    pub sink: Arc<dyn SessionSink>,
    /// Stop requests and injections.
    pub control: TurnControl,
    /// The subagent this seam fires inside, `None` for the session's own
    /// loop.
    pub agent: Option<AgentIdentity>,
    /// Runs nested agents for the `agent` tool (`None` where no loop runs).
    pub subagents: Option<Arc<dyn SubagentRunner>>,
}

impl std::fmt::Debug for SeamContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeamContext")
            .field("session", &self.session)
            .field("turn", &self.turn)
            .field("agent", &self.agent)
            .finish_non_exhaustive()
    }
}

impl SeamContext {
    /// A context for tests and offline tools: a fresh session in `cwd`, no log.
    pub fn detached(cwd: impl Into<PathBuf>) -> Self {
        SeamContext {
            session: Arc::new(SessionInfo {
                session_id: "detached".to_owned(),
                cwd: cwd.into(),
                model: "none".to_owned(),
                log_path: None,
                env: SessionEnv::default(),
                interactive: false,
            }),
            turn: None,
            cancel: CancellationToken::new(),
            sink: Arc::new(NullSink),
            control: TurnControl::default(),
            agent: None,
            subagents: None,
        }
    }
}
