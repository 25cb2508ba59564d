//! The session log's one writer ([`LogSink`]) and the presentation
//! callbacks it and a streaming reply report to.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_model::StreamSink;
use dsh_protocol::{Event, EventBody};
use dsh_seams::{Plugin, SessionSink, UserNotice};
use dsh_session::{LogError, SessionLog};

/// Called with every event after it is appended.
pub type EventCallback = Arc<dyn Fn(&Event) + Send + Sync>;
/// Called with every user notice.
pub type NoticeCallback = Arc<dyn Fn(&UserNotice) + Send + Sync>;
/// Called with streamed assistant text.
pub type TextCallback = Arc<dyn Fn(&str) + Send + Sync>;

/// Callbacks for whoever presents the session (terminal, replay, tests).
#[derive(Clone, Default)]
pub struct Observers {
    /// Every event after it is durably appended.
    pub on_event: Option<EventCallback>,
    /// User-facing notices from plugins and hooks.
    pub on_notice: Option<NoticeCallback>,
    /// Assistant text as it streams.
    pub on_text: Option<TextCallback>,
}

/// The one writer of the session log; plugins reach it through [`SessionSink`].
pub(crate) struct LogSink {
    pub(super) ids: dsh_seams::IdSource,
    /// Where long hook output is spilled (`hook_output.rs`).
    pub(super) hook_output_dir: Option<std::path::PathBuf>,
    pub(super) log: Mutex<SessionLog>,
    pub(super) plugins: Vec<Arc<dyn Plugin>>,
    pub(crate) observers: Observers,
    pub(super) record_errors: Mutex<Vec<String>>,
}

impl LogSink {
    pub(super) fn append(&self, body: EventBody) -> Result<Event, LogError> {
        self.append_as(body, None)
    }

    /// Appends an event, tagged with a subagent's id when it belongs to a
    /// nested run (see `subagent.rs`).
    pub(crate) fn append_as(
        &self,
        body: EventBody,
        agent_id: Option<&str>,
    ) -> Result<Event, LogError> {
        let mut body = body;
        // Before the log keeps it (in memory, for the session's life).
        super::hook_output::bound(&mut body, self.hook_output_dir.as_deref());
        let event = {
            let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
            log.append_as(body, agent_id)?.clone()
        };
        for plugin in &self.plugins {
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| plugin.on_event(&event)));
        }
        if let Some(on_event) = &self.observers.on_event {
            on_event(&event);
        }
        Ok(event)
    }

    pub(crate) fn with_log<T>(&self, f: impl FnOnce(&SessionLog) -> T) -> T {
        f(&self.log.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// [`SessionSink::record`] for a plugin's record, tagged as `append_as`.
    pub(crate) fn record_as(&self, body: EventBody, agent_id: Option<&str>) {
        if let Err(err) = self.append_as(body, agent_id) {
            tracing::error!("a plugin's record was refused: {err}");
            self.record_errors
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(err.to_string());
        }
    }
}

impl SessionSink for LogSink {
    fn record(&self, body: EventBody) {
        if let Err(err) = self.append(body) {
            tracing::error!("a plugin's record was refused: {err}");
            self.record_errors
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(err.to_string());
        }
    }

    fn tell_user(&self, notice: UserNotice) {
        if let Some(on_notice) = &self.observers.on_notice {
            on_notice(&notice);
        }
    }

    fn new_id(&self) -> String {
        self.ids.next_id()
    }
}

/// Forwards a streaming reply to the presentation callbacks: text as it
/// arrives, and provider retries as user notices.
pub(crate) struct StreamForwarder {
    pub(crate) on_text: Option<TextCallback>,
    pub(crate) on_notice: Option<NoticeCallback>,
}

impl StreamSink for StreamForwarder {
    fn text_delta(&mut self, delta: &str) {
        if let Some(on_text) = &self.on_text {
            on_text(delta);
        }
    }

    fn retrying(&mut self, attempt: u32, reason: &str) {
        if let Some(on_notice) = &self.on_notice {
            on_notice(&UserNotice {
                source: "provider".to_owned(),
                text: format!("retrying the model request (attempt {attempt}): {reason}"),
                level: dsh_seams::NoticeLevel::Warning,
            });
        }
    }
}
