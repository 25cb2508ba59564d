//! The tool trait.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use dsh_seams::{
    ContextEntry, Plugin, RequestMeta, SeamContext, TaskEvent, TaskVerdict, ToolExecution,
    ToolOrigin, ToolOutcome,
};
use dsh_seams::{ElicitationAnswer, ElicitationRequest, Notification, NotificationKind};

use crate::builtin::interaction::Question;
use crate::{ApprovalService, Concurrency};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What a tool body is handed.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session's working directory; relative paths resolve against it.
    pub cwd: PathBuf,
    /// Variables added to dsh's environment for processes the tool starts.
    pub env: Vec<(String, String)>,
    /// Cancelled when the call is interrupted; tools must stop promptly and
    /// kill what they started.
    pub cancel: CancellationToken,
    /// The execution id of this call (the parent of any nested dispatch).
    pub execution_id: String,
    /// The seam context of the call, when it runs inside a session (the
    /// `agent` tool reaches the subagent runner through it).
    pub seam: Option<SeamContext>,
    /// The request metadata pre-execute set for this call (an MCP tool
    /// sends it as its request's `_meta`; other tools ignore it).
    pub request_meta: Option<RequestMeta>,
    deferred: Arc<Mutex<Vec<ContextEntry>>>,
    plugins: PluginList,
    asker: AskerSlot,
}

/// Who can put a question to the person (the session's approval surface);
/// empty in a headless session.
#[derive(Clone, Default)]
struct AskerSlot(Option<Arc<dyn ApprovalService>>);

impl std::fmt::Debug for AskerSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "asker"
        } else {
            "no asker"
        })
    }
}

/// The session's plugins, as a tool sees them (task tools ask them about
/// task events).
#[derive(Clone, Default)]
struct PluginList(Vec<Arc<dyn Plugin>>);

impl std::fmt::Debug for PluginList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|plugin| plugin.name().to_owned()))
            .finish()
    }
}

impl ToolContext {
    /// A context for `cwd` with no extra environment.
    pub fn new(cwd: impl Into<PathBuf>, cancel: CancellationToken) -> Self {
        ToolContext {
            cwd: cwd.into(),
            env: Vec::new(),
            cancel,
            execution_id: String::new(),
            seam: None,
            request_meta: None,
            deferred: Arc::default(),
            plugins: PluginList::default(),
            asker: AskerSlot::default(),
        }
    }

    /// Hands the session's plugins to the tool (the registry does this for
    /// every dispatched call).
    pub fn set_plugins(&mut self, plugins: Vec<Arc<dyn Plugin>>) {
        self.plugins = PluginList(plugins);
    }

    /// Asks every plugin about a task event, in order; the first `Block`
    /// wins. Without a seam context (a bare tool run) every event stands.
    pub async fn task_event(&self, event: &TaskEvent) -> TaskVerdict {
        let Some(seam) = &self.seam else {
            return TaskVerdict::Allow;
        };
        for plugin in &self.plugins.0 {
            if let verdict @ TaskVerdict::Block { .. } = plugin.task_event(seam, event).await {
                return verdict;
            }
        }
        TaskVerdict::Allow
    }

    /// Sets who can put questions to the person (the registry hands over
    /// its approval surface).
    pub fn set_asker(&mut self, asker: Option<Arc<dyn ApprovalService>>) {
        self.asker = AskerSlot(asker);
    }

    /// An MCP server's question during this call (MCP elicitation): the
    /// elicitation seam may answer it (nobody is asked then); else the
    /// person is asked (`cancel` when nobody can be), the result seam may
    /// change the answer, and an `elicitation_response` notification says
    /// what went back.
    pub async fn elicit(&self, request: &ElicitationRequest) -> ElicitationAnswer {
        if let Some(seam) = &self.seam {
            for plugin in &self.plugins.0 {
                if let Some(answer) = plugin.elicitation(seam, request).await {
                    return answer;
                }
            }
        }
        let mut answer = match &self.asker.0 {
            Some(asker) => asker.elicit(request).await,
            None => ElicitationAnswer::bare(dsh_seams::ElicitationAction::Cancel),
        };
        let Some(seam) = &self.seam else {
            return answer;
        };
        for plugin in &self.plugins.0 {
            if let Some(changed) = plugin.elicitation_result(seam, request, &answer).await {
                answer = changed;
                break;
            }
        }
        let notification = Notification {
            kind: NotificationKind::ElicitationResponse,
            message: format!(
                "Elicitation response for server \"{}\": {}",
                request.server,
                answer.action.as_str()
            ),
        };
        for plugin in &self.plugins.0 {
            plugin.notification(seam, &notification).await;
        }
        answer
    }

    /// Puts `ask_user_question`'s questions to the person, when the
    /// session has someone to ask.
    pub async fn ask_questions(
        &self,
        questions: &[Question],
    ) -> Option<std::collections::BTreeMap<String, String>> {
        self.asker.0.as_ref()?.ask_questions(questions).await
    }

    /// Defers model-facing context to the end of the batch (seed decision 2):
    /// it surfaces, in order, on the execution result even if the call fails.
    pub fn defer_context(&self, entry: ContextEntry) {
        self.deferred
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(entry);
    }

    /// Takes the deferred contexts, in order.
    pub fn take_deferred(&self) -> Vec<ContextEntry> {
        std::mem::take(&mut self.deferred.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Resolves a possibly relative path against the session cwd.
    pub fn resolve(&self, path: &str) -> PathBuf {
        let path = PathBuf::from(path);
        if path.is_absolute() {
            path
        } else {
            self.cwd.join(path)
        }
    }
}

/// A tool failure before it produced a canonical value (bad path, I/O error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

/// Model-facing rendering of a canonical value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The text the model sees.
    pub content: String,
    /// Whether the model is told the call failed (e.g. bash exit code ≠ 0).
    pub is_error: bool,
}

/// A tool. Its body produces a canonical JSON value; `render` turns a value
/// into what the model sees, so a post-execute value replacement is
/// re-validated and re-rendered through the same path.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and JSON Schema of the arguments.
    fn spec(&self) -> ToolSpec;

    /// Runs the tool with validated, frozen arguments.
    async fn run(&self, ctx: &ToolContext, arguments: &Value) -> Result<Value, ToolError>;

    /// Renders a canonical value; an error means the value is not valid for
    /// this tool.
    fn render(&self, value: &Value) -> Result<Rendered, ToolError>;

    /// Where the tool comes from, when it is not dsh's own (an MCP
    /// server's tool, under its real names): every call of it carries
    /// this. Default: `None`.
    fn origin(&self) -> Option<ToolOrigin> {
        None
    }

    /// Last-mile content invariant: runs exactly once on every normalized
    /// outcome. `None` keeps the content.
    fn finalize_content(&self, _outcome: &ToolOutcome) -> Option<String> {
        None
    }

    /// How `call` may overlap the other calls of its batch (its arguments
    /// are valid for this tool; relative paths resolve against `cwd`). A
    /// tool that does not say runs alone.
    fn concurrency(&self, _call: &ToolExecution, _cwd: &Path) -> Concurrency {
        Concurrency::Exclusive
    }
}
