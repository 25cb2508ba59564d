//! The SDK at the other end of stdio: one writer for stdout lines, and the
//! CLI's own control requests waiting for their answers.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use dsh_sdk_control::{
    AnswerLine, CliRequest, ControlAnswer, ControlRequestLine, HookCallback, SessionState,
    SessionStateChanged,
};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::oneshot;

/// Where a request's answer goes: the answer's line, read by the asker.
type Waiting = oneshot::Sender<Result<AnswerLine, String>>;

/// The SDK side of the connection.
pub struct Peer {
    /// Requests sent and not answered yet, by request id.
    pending: Mutex<HashMap<String, Waiting>>,
    /// Set once the session exists.
    session_id: Mutex<String>,
    /// `CLAUDE_CODE_SDK_READS_SESSION_STATE=1`: emit `session_state_changed`.
    reads_state: bool,
    /// stdin is closed: nobody will answer a request any more.
    closed: Mutex<bool>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Peer {
    /// A peer; `reads_state` as the SDK's environment says.
    pub fn new(reads_state: bool) -> Arc<Self> {
        Arc::new(Peer {
            pending: Mutex::new(HashMap::new()),
            session_id: Mutex::new(String::new()),
            reads_state,
            closed: Mutex::new(false),
        })
    }

    /// Names the session in the messages from now on.
    pub fn set_session_id(&self, id: &str) {
        id.clone_into(&mut lock(&self.session_id));
    }

    /// The session id (empty before the session exists).
    pub fn session_id(&self) -> String {
        lock(&self.session_id).clone()
    }

    /// Writes one message as a JSON line and flushes it (stdout's own lock
    /// keeps concurrent lines whole).
    pub fn send<T: Serialize>(&self, message: &T) {
        let Ok(line) = serde_json::to_string(message) else {
            return;
        };
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{line}");
        let _ = stdout.flush();
    }

    /// `system/session_state_changed`, when the SDK reads session state.
    pub fn state(&self, state: SessionState) {
        if self.reads_state {
            self.send(&SessionStateChanged::new(
                state,
                uuid::Uuid::new_v4().to_string(),
                self.session_id(),
            ));
        }
    }

    /// Sends a control request and waits for the SDK's answer, which the
    /// caller reads as its request's type ([`AnswerLine::read`]).
    pub async fn request(&self, request: CliRequest) -> Result<AnswerLine, String> {
        let id = uuid::Uuid::new_v4().to_string();
        let (tx, rx) = oneshot::channel();
        {
            if *lock(&self.closed) {
                return Err("the SDK closed stdin; nobody can answer".to_owned());
            }
            lock(&self.pending).insert(id.clone(), tx);
        }
        self.send(&ControlRequestLine::new(id.clone(), request));
        let answer = rx
            .await
            .unwrap_or_else(|_| Err("the SDK closed stdin before answering".to_owned()));
        lock(&self.pending).remove(&id);
        answer
    }

    /// Routes the SDK's answer to the request waiting for it.
    pub fn answer(&self, answer: ControlAnswer) {
        match lock(&self.pending).remove(&answer.request_id) {
            Some(waiting) => {
                let _ = waiting.send(answer.result);
            }
            None => tracing::warn!(
                "the SDK answered request {}, which is not waiting",
                answer.request_id
            ),
        }
    }

    /// The SDK withdrew a request: it is answered with an error.
    pub fn cancel(&self, request_id: &str) {
        if let Some(waiting) = lock(&self.pending).remove(request_id) {
            let _ = waiting.send(Err("the SDK cancelled the request".to_owned()));
        }
    }

    /// stdin closed: every waiting request fails, and later ones too.
    pub fn close(&self) {
        *lock(&self.closed) = true;
        for (_, waiting) in lock(&self.pending).drain() {
            let _ = waiting.send(Err("the SDK closed stdin before answering".to_owned()));
        }
    }
}

/// SDK hooks fire as `hook_callback` requests.
pub struct Callbacks(pub Arc<Peer>);

#[async_trait]
impl dsh_hooks_claude::HookCallbacks for Callbacks {
    async fn call(
        &self,
        callback_id: &str,
        input: &dsh_protocol::ExactJson,
        tool_use_id: &str,
    ) -> Result<Value, String> {
        let answer = self
            .0
            .request(CliRequest::HookCallback(HookCallback {
                callback_id: callback_id.to_owned(),
                input: input.clone(),
                tool_use_id: tool_use_id.to_owned(),
            }))
            .await?;
        // Whatever the hook returned, for the Claude dialect to read.
        answer
            .read()
            .map_err(|error| format!("the SDK's hook callback answer: {error}"))
    }
}
