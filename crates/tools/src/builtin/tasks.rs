//! The task tools: `task_create`, `task_get`, `task_update`, `task_list`
//! (Claude Code's `TaskCreate`, `TaskGet`, `TaskUpdate`, `TaskList`).
//!
//! The tasks live in a [`TaskStore`] shared by the four tools of one
//! registry, so the list is scoped to the session. Arguments and values use
//! Claude Code's shapes (camelCase keys: `taskId`, `activeForm`,
//! `addBlockedBy`; values `{task:{id,subject}}`, `{task}`, `{success,
//! taskId, updatedFields, statusChange?}`, `{tasks}`), so hook bridges pass
//! them through unchanged.
//!
//! Ids are `"1"`, `"2"`, … in creation order, so re-applying the calls a
//! session log records rebuilds the same list ([`TaskStore::restore`]):
//! that is how a resumed session keeps its tasks.
//!
//! A created task, and a task whose status becomes `completed`, is reported
//! to the session's plugins ([`ToolContext::task_event`]); a plugin's
//! `Block` rolls the change back and the call fails with its feedback.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use dsh_protocol::{Event, EventBody, ToolCallEvent, ToolResultEvent, ToolSpec};
use dsh_seams::{TaskEvent, TaskEventKind, TaskVerdict};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{TypedTool, spec};
use crate::{Rendered, Tool, ToolContext, ToolError};

/// `task_create`'s name.
pub const CREATE: &str = "task_create";
/// `task_get`'s name.
pub const GET: &str = "task_get";
/// `task_update`'s name.
pub const UPDATE: &str = "task_update";
/// `task_list`'s name.
pub const LIST: &str = "task_list";

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

impl TaskStatus {
    fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
        }
    }
}

/// One task, as `task_get` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Task {
    /// `"1"`, `"2"`, … in creation order.
    pub id: String,
    /// One line saying what the task is.
    pub subject: String,
    /// What doing it involves.
    pub description: String,
    /// The present-continuous form shown while it is in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// Its status.
    pub status: TaskStatus,
    /// Who works on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Tasks that cannot start before this one is done.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// Tasks this one waits for.
    #[serde(default)]
    pub blocked_by: Vec<String>,
    /// Free-form data the model attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Default)]
struct TaskState {
    /// Whether the session log was read (on the first task call).
    loaded: bool,
    next_id: u64,
    tasks: BTreeMap<u64, Task>,
}

/// The session's task list, shared by the four task tools. Cheap to clone;
/// clones share the list.
#[derive(Debug, Clone, Default)]
pub struct TaskStore {
    state: Arc<Mutex<TaskState>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct CreateArgs {
    subject: String,
    description: String,
    #[serde(default)]
    active_form: Option<String>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct GetArgs {
    task_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateArgs {
    task_id: String,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    active_form: Option<String>,
    #[serde(default)]
    status: Option<TaskStatus>,
    #[serde(default)]
    add_blocks: Vec<String>,
    #[serde(default)]
    add_blocked_by: Vec<String>,
    #[serde(default)]
    owner: Option<String>,
    #[serde(default)]
    metadata: Option<Map<String, Value>>,
}

/// What an update changed, before the plugins were asked.
struct Applied {
    before: Task,
    after: Task,
    updated_fields: Vec<&'static str>,
}

impl TaskStore {
    /// An empty list.
    pub fn new() -> Self {
        TaskStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TaskState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every task, in creation order.
    pub fn tasks(&self) -> Vec<Task> {
        self.lock().tasks.values().cloned().collect()
    }

    /// One task by id.
    pub fn get(&self, id: &str) -> Option<Task> {
        let key = id.parse::<u64>().ok()?;
        self.lock().tasks.get(&key).cloned()
    }

    fn create(&self, args: CreateArgs) -> Task {
        let mut state = self.lock();
        state.next_id += 1;
        let id = state.next_id;
        let task = Task {
            id: id.to_string(),
            subject: args.subject,
            description: args.description,
            active_form: args.active_form,
            status: TaskStatus::Pending,
            owner: None,
            blocks: Vec::new(),
            blocked_by: Vec::new(),
            metadata: args.metadata,
        };
        state.tasks.insert(id, task.clone());
        task
    }

    /// Removes a task a plugin vetoed; its id is given back when it was
    /// the newest, so the ids stay the ones a restore re-derives.
    fn remove(&self, id: &str) {
        if let Ok(key) = id.parse::<u64>() {
            let mut state = self.lock();
            state.tasks.remove(&key);
            if state.next_id == key {
                state.next_id -= 1;
            }
        }
    }

    fn put(&self, task: Task) {
        if let Ok(key) = task.id.parse::<u64>() {
            self.lock().tasks.insert(key, task);
        }
    }

    fn update(&self, args: UpdateArgs) -> Result<Applied, ToolError> {
        let mut state = self.lock();
        let key = args.task_id.parse::<u64>().ok();
        let known: BTreeSet<String> = state.tasks.values().map(|t| t.id.clone()).collect();
        for other in args.add_blocks.iter().chain(&args.add_blocked_by) {
            if !known.contains(other) {
                return Err(ToolError(format!("{UPDATE}: no task with id {other}")));
            }
            if *other == args.task_id {
                return Err(ToolError(format!(
                    "{UPDATE}: task {other} cannot block itself"
                )));
            }
        }
        let Some(task) = key.and_then(|key| state.tasks.get_mut(&key)) else {
            return Err(ToolError(format!(
                "{UPDATE}: no task with id {}",
                args.task_id
            )));
        };
        let before = task.clone();
        let mut updated_fields = Vec::new();
        if let Some(subject) = args.subject
            && subject != task.subject
        {
            task.subject = subject;
            updated_fields.push("subject");
        }
        if let Some(description) = args.description
            && description != task.description
        {
            task.description = description;
            updated_fields.push("description");
        }
        if let Some(active_form) = args.active_form
            && task.active_form.as_deref() != Some(active_form.as_str())
        {
            task.active_form = Some(active_form);
            updated_fields.push("activeForm");
        }
        if let Some(status) = args.status
            && status != task.status
        {
            task.status = status;
            updated_fields.push("status");
        }
        if let Some(owner) = args.owner
            && task.owner.as_deref() != Some(owner.as_str())
        {
            task.owner = Some(owner);
            updated_fields.push("owner");
        }
        if let Some(metadata) = args.metadata {
            let merged = task.metadata.get_or_insert_with(Map::new);
            for (key, value) in metadata {
                // A null removes the key.
                if value.is_null() {
                    merged.remove(&key);
                } else {
                    merged.insert(key, value);
                }
            }
            updated_fields.push("metadata");
        }
        let mut added_blocks = Vec::new();
        for other in args.add_blocks {
            if !task.blocks.contains(&other) {
                task.blocks.push(other.clone());
                added_blocks.push(other);
            }
        }
        let mut added_blocked_by = Vec::new();
        for other in args.add_blocked_by {
            if !task.blocked_by.contains(&other) {
                task.blocked_by.push(other.clone());
                added_blocked_by.push(other);
            }
        }
        if !added_blocks.is_empty() {
            updated_fields.push("blocks");
        }
        if !added_blocked_by.is_empty() {
            updated_fields.push("blockedBy");
        }
        let after = task.clone();
        let id = after.id.clone();
        // The other side of each dependency.
        for other in added_blocks {
            if let Some(task) = other
                .parse::<u64>()
                .ok()
                .and_then(|key| state.tasks.get_mut(&key))
                && !task.blocked_by.contains(&id)
            {
                task.blocked_by.push(id.clone());
            }
        }
        for other in added_blocked_by {
            if let Some(task) = other
                .parse::<u64>()
                .ok()
                .and_then(|key| state.tasks.get_mut(&key))
                && !task.blocks.contains(&id)
            {
                task.blocks.push(id.clone());
            }
        }
        Ok(Applied {
            before,
            after,
            updated_fields,
        })
    }

    /// On the first task call of a session, rebuilds the list from the
    /// session's log (a resumed session keeps its tasks). A log that cannot
    /// be read leaves the list empty; a line that does not parse is skipped.
    async fn ensure_loaded(&self, ctx: &ToolContext) {
        {
            let mut state = self.lock();
            if state.loaded {
                return;
            }
            state.loaded = true;
        }
        let Some(path) = ctx
            .seam
            .as_ref()
            .and_then(|seam| seam.session.log_path.clone())
        else {
            return;
        };
        let Ok(text) = tokio::fs::read_to_string(&path).await else {
            return;
        };
        let events: Vec<Event> = text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        self.restore(&events);
    }

    /// Rebuilds the list from a session log: every task call that succeeded
    /// is applied again, in order, with the arguments it ran with. Ids are
    /// sequential, so the result is the list the session had.
    pub fn restore(&self, events: &[Event]) {
        let mut calls: BTreeMap<&str, &ToolCallEvent> = BTreeMap::new();
        for event in events {
            // A subagent's task calls share the session's list too.
            if let EventBody::ToolCall(call) = &event.body {
                calls.insert(&call.call_id, call);
            } else if let EventBody::ToolResult(ToolResultEvent {
                call_id,
                is_error: false,
                rewrite,
                ..
            }) = &event.body
                && let Some(call) = calls.remove(call_id.as_str())
            {
                let arguments = rewrite.as_ref().map_or(&call.arguments, |r| &r.arguments);
                self.reapply(&call.tool, arguments);
            }
        }
    }

    fn reapply(&self, tool: &str, arguments: &Value) {
        match tool {
            CREATE => {
                if let Ok(args) = CreateArgs::deserialize(arguments) {
                    self.create(args);
                }
            }
            UPDATE => {
                if let Ok(args) = UpdateArgs::deserialize(arguments) {
                    let _ = self.update(args);
                }
            }
            _ => {}
        }
    }
}

fn event(kind: TaskEventKind, task: &Task) -> TaskEvent {
    TaskEvent {
        kind,
        task_id: task.id.clone(),
        subject: task.subject.clone(),
        description: task.description.clone(),
        owner: task.owner.clone(),
    }
}

/// The four task tools sharing `store`, in the order they are offered.
pub fn task_tools(store: &TaskStore) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TaskCreateTool(store.clone())),
        Arc::new(TaskGetTool(store.clone())),
        Arc::new(TaskUpdateTool(store.clone())),
        Arc::new(TaskListTool(store.clone())),
    ]
}

/// `task_create`.
#[derive(Debug, Clone, Default)]
pub struct TaskCreateTool(pub TaskStore);
/// `task_get`.
#[derive(Debug, Clone, Default)]
pub struct TaskGetTool(pub TaskStore);
/// `task_update`.
#[derive(Debug, Clone, Default)]
pub struct TaskUpdateTool(pub TaskStore);
/// `task_list`.
#[derive(Debug, Clone, Default)]
pub struct TaskListTool(pub TaskStore);

/// `task_create`'s value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateOutput {
    /// The new task's id and subject.
    pub task: TaskRef,
}

/// A task's id and subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRef {
    /// The id.
    pub id: String,
    /// The subject.
    pub subject: String,
}

/// `task_list`'s arguments: none (its schema admits no field).
#[derive(Debug, Deserialize)]
pub(crate) struct NoArgs {}

/// `task_get`'s value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetOutput {
    /// The task, `null` when there is none with that id (the key must be
    /// there, even as `null`).
    #[serde(deserialize_with = "Option::deserialize")]
    pub task: Option<Task>,
}

/// A status change an update made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusChange {
    /// The old status.
    pub from: TaskStatus,
    /// The new status.
    pub to: TaskStatus,
}

/// `task_update`'s value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateOutput {
    /// Always true in a value the tool made (a failure is an error).
    pub success: bool,
    /// The task updated.
    pub task_id: String,
    /// The fields that changed, Claude Code's names.
    pub updated_fields: Vec<String>,
    /// The status change, when the status changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_change: Option<StatusChange>,
}

/// One row of `task_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListedTask {
    /// The id.
    pub id: String,
    /// The subject.
    pub subject: String,
    /// The status.
    pub status: TaskStatus,
    /// The owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Open tasks this one waits for.
    #[serde(default)]
    pub blocked_by: Vec<String>,
}

/// `task_list`'s value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListOutput {
    /// Every task, in creation order.
    pub tasks: Vec<ListedTask>,
}

#[async_trait]
impl TypedTool for TaskCreateTool {
    const NAME: &'static str = CREATE;
    type Args = CreateArgs;
    type Output = CreateOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            CREATE,
            "Adds a task to this session's task list and returns its id. Use it to plan \
             work with several steps and to keep track of it; mark progress with task_update.",
            json!({
                "subject": {"type": "string", "description": "One imperative line: what the task is."},
                "description": {"type": "string", "description": "What doing the task involves and how to tell it is done."},
                "activeForm": {"type": "string", "description": "The present-continuous form shown while it is worked on (\"Running the tests\")."},
                "metadata": {"type": "object", "description": "Free-form data to keep with the task."}
            }),
            &["subject", "description"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: CreateArgs) -> Result<CreateOutput, ToolError> {
        self.0.ensure_loaded(ctx).await;
        let task = self.0.create(args);
        if let TaskVerdict::Block { feedback } =
            ctx.task_event(&event(TaskEventKind::Created, &task)).await
        {
            self.0.remove(&task.id);
            return Err(ToolError(feedback));
        }
        Ok(CreateOutput {
            task: TaskRef {
                id: task.id,
                subject: task.subject,
            },
        })
    }

    fn show(&self, output: CreateOutput) -> Result<Rendered, ToolError> {
        Ok(Rendered {
            content: format!("Task #{} created: {}", output.task.id, output.task.subject),
            is_error: false,
        })
    }
}

#[async_trait]
impl TypedTool for TaskGetTool {
    const NAME: &'static str = GET;
    type Args = GetArgs;
    type Output = GetOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            GET,
            "Shows one task of this session's task list in full: subject, description, \
             status, owner and dependencies.",
            json!({"taskId": {"type": "string", "description": "The task's id."}}),
            &["taskId"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: GetArgs) -> Result<GetOutput, ToolError> {
        self.0.ensure_loaded(ctx).await;
        Ok(GetOutput {
            task: self.0.get(&args.task_id),
        })
    }

    fn show(&self, output: GetOutput) -> Result<Rendered, ToolError> {
        let Some(task) = output.task else {
            return Ok(Rendered {
                content: "Task not found".to_owned(),
                is_error: false,
            });
        };
        let mut lines = vec![
            format!("Task #{}: {}", task.id, task.subject),
            format!("Status: {}", task.status.as_str()),
            format!("Description: {}", task.description),
        ];
        if let Some(owner) = &task.owner {
            lines.push(format!("Owner: {owner}"));
        }
        if !task.blocked_by.is_empty() {
            lines.push(format!("Blocked by: #{}", task.blocked_by.join(", #")));
        }
        if !task.blocks.is_empty() {
            lines.push(format!("Blocks: #{}", task.blocks.join(", #")));
        }
        Ok(Rendered {
            content: lines.join("\n"),
            is_error: false,
        })
    }
}

#[async_trait]
impl TypedTool for TaskUpdateTool {
    const NAME: &'static str = UPDATE;
    type Args = UpdateArgs;
    type Output = UpdateOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            UPDATE,
            "Changes a task of this session's task list: its status (pending, in_progress, \
             completed), subject, description, owner, metadata or dependencies. Set \
             in_progress before starting a task and completed as soon as it is done.",
            json!({
                "taskId": {"type": "string", "description": "The task's id."},
                "subject": {"type": "string", "description": "A new subject."},
                "description": {"type": "string", "description": "A new description."},
                "activeForm": {"type": "string", "description": "A new present-continuous form."},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"], "description": "The new status."},
                "addBlocks": {"type": "array", "items": {"type": "string"}, "description": "Ids of tasks that cannot start before this one is done."},
                "addBlockedBy": {"type": "array", "items": {"type": "string"}, "description": "Ids of tasks this one waits for."},
                "owner": {"type": "string", "description": "Who works on the task."},
                "metadata": {"type": "object", "description": "Keys to merge into the task's metadata (null removes a key)."}
            }),
            &["taskId"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: UpdateArgs) -> Result<UpdateOutput, ToolError> {
        self.0.ensure_loaded(ctx).await;
        let applied = self.0.update(args)?;
        let status_change =
            (applied.before.status != applied.after.status).then_some(StatusChange {
                from: applied.before.status,
                to: applied.after.status,
            });
        if applied.after.status == TaskStatus::Completed
            && applied.before.status != TaskStatus::Completed
            && let TaskVerdict::Block { feedback } = ctx
                .task_event(&event(TaskEventKind::Completed, &applied.after))
                .await
        {
            // Roll back the whole update (dependencies added to other
            // tasks by this call stay: they are harmless and rare).
            self.0.put(applied.before);
            return Err(ToolError(feedback));
        }
        Ok(UpdateOutput {
            success: true,
            task_id: applied.after.id,
            updated_fields: applied
                .updated_fields
                .into_iter()
                .map(str::to_owned)
                .collect(),
            status_change,
        })
    }

    fn show(&self, output: UpdateOutput) -> Result<Rendered, ToolError> {
        let content = if output.updated_fields.is_empty() {
            format!("Task #{}: nothing changed", output.task_id)
        } else {
            format!(
                "Updated task #{}: {}",
                output.task_id,
                output.updated_fields.join(", ")
            )
        };
        Ok(Rendered {
            content,
            is_error: !output.success,
        })
    }
}

#[async_trait]
impl TypedTool for TaskListTool {
    const NAME: &'static str = LIST;
    type Args = NoArgs;
    type Output = ListOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            LIST,
            "Lists this session's tasks with their ids, status, owner and what blocks them.",
            json!({}),
            &[],
        )
    }

    async fn call(&self, ctx: &ToolContext, _args: NoArgs) -> Result<ListOutput, ToolError> {
        self.0.ensure_loaded(ctx).await;
        let tasks = self.0.tasks();
        let open: BTreeSet<&str> = tasks
            .iter()
            .filter(|t| t.status != TaskStatus::Completed)
            .map(|t| t.id.as_str())
            .collect();
        let listed = tasks
            .iter()
            .map(|task| ListedTask {
                id: task.id.clone(),
                subject: task.subject.clone(),
                status: task.status,
                owner: task.owner.clone(),
                blocked_by: task
                    .blocked_by
                    .iter()
                    .filter(|id| open.contains(id.as_str()))
                    .cloned()
                    .collect(),
            })
            .collect();
        Ok(ListOutput { tasks: listed })
    }

    fn show(&self, output: ListOutput) -> Result<Rendered, ToolError> {
        if output.tasks.is_empty() {
            return Ok(Rendered {
                content: "No tasks".to_owned(),
                is_error: false,
            });
        }
        let lines: Vec<String> = output
            .tasks
            .iter()
            .map(|task| {
                let mut line = format!("#{} [{}] {}", task.id, task.status.as_str(), task.subject);
                if let Some(owner) = &task.owner {
                    line.push_str(&format!(" ({owner})"));
                }
                if !task.blocked_by.is_empty() {
                    line.push_str(&format!(" [blocked by #{}]", task.blocked_by.join(", #")));
                }
                line
            })
            .collect();
        Ok(Rendered {
            content: lines.join("\n"),
            is_error: false,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use tokio_util::sync::CancellationToken;

    fn ctx() -> ToolContext {
        ToolContext::new("/", CancellationToken::new())
    }

    #[tokio::test]
    async fn create_update_get_and_list_share_one_store() {
        let store = TaskStore::new();
        let tools = task_tools(&store);
        let ctx = ctx();
        let a = tools[0]
            .run(
                &ctx,
                &json!({"subject": "Write tests", "description": "unit tests"}),
            )
            .await
            .unwrap();
        assert_eq!(a, json!({"task": {"id": "1", "subject": "Write tests"}}));
        tools[0]
            .run(&ctx, &json!({"subject": "Ship", "description": "release"}))
            .await
            .unwrap();
        let update = tools[2]
            .run(
                &ctx,
                &json!({"taskId": "2", "addBlockedBy": ["1"], "status": "in_progress"}),
            )
            .await
            .unwrap();
        assert_eq!(
            update,
            json!({"success": true, "taskId": "2", "updatedFields": ["status", "blockedBy"],
                   "statusChange": {"from": "pending", "to": "in_progress"}})
        );
        let got = tools[1].run(&ctx, &json!({"taskId": "1"})).await.unwrap();
        assert_eq!(got["task"]["blocks"], json!(["2"]));
        let list = tools[3].run(&ctx, &json!({})).await.unwrap();
        let rendered = tools[3].render(&list).unwrap().content;
        assert_eq!(
            rendered,
            "#1 [pending] Write tests\n#2 [in_progress] Ship [blocked by #1]"
        );
        let missing = tools[1].run(&ctx, &json!({"taskId": "9"})).await.unwrap();
        assert_eq!(missing, json!({"task": null}));
        assert_eq!(tools[1].render(&missing).unwrap().content, "Task not found");
        // A value a hook supplied must still say `task`, even as null.
        let err = tools[1].render(&json!({})).unwrap_err();
        assert!(err.0.contains("missing field `task`"), "{err}");
        let err = tools[2]
            .run(&ctx, &json!({"taskId": "9", "status": "completed"}))
            .await
            .unwrap_err();
        assert!(err.0.contains("no task with id 9"), "{err}");
    }

    /// Vetoes every task event of one kind, recording what it saw.
    struct Veto(TaskEventKind, std::sync::Mutex<Vec<TaskEvent>>);

    #[async_trait]
    impl dsh_seams::Plugin for Veto {
        fn name(&self) -> &str {
            "veto"
        }
        async fn task_event(
            &self,
            _ctx: &dsh_seams::SeamContext,
            event: &TaskEvent,
        ) -> TaskVerdict {
            self.1.lock().unwrap().push(event.clone());
            if event.kind == self.0 {
                TaskVerdict::Block {
                    feedback: format!("no: {}", event.subject),
                }
            } else {
                TaskVerdict::Allow
            }
        }
    }

    async fn call(
        registry: &crate::ToolRegistry,
        id: &str,
        tool: &str,
        arguments: Value,
    ) -> dsh_seams::ToolOutcome {
        let ctx = dsh_seams::SeamContext::detached("/");
        let sealed = registry
            .seal(
                &ctx,
                dsh_seams::ProposedCall {
                    call_id: id.to_owned(),
                    tool: tool.to_owned(),
                    arguments,
                    parent_execution_id: None,
                    origin: None,
                },
            )
            .await;
        registry.execute(&ctx, sealed).await.outcome
    }

    #[tokio::test]
    async fn a_plugin_block_rolls_the_task_back_through_the_registry() {
        for kind in [TaskEventKind::Created, TaskEventKind::Completed] {
            let store = TaskStore::new();
            let mut registry = crate::ToolRegistry::new();
            for tool in task_tools(&store) {
                registry.register_tool(tool);
            }
            let veto = Arc::new(Veto(kind, std::sync::Mutex::default()));
            registry.register_plugin(veto.clone());
            let created = call(
                &registry,
                "c1",
                CREATE,
                json!({"subject": "Ship", "description": "release"}),
            )
            .await;
            if kind == TaskEventKind::Created {
                assert!(created.is_error);
                assert_eq!(created.content, "no: Ship");
                assert!(store.tasks().is_empty(), "the vetoed task was removed");
                // Its id is given back.
                let again = call(
                    &registry,
                    "c2",
                    CREATE,
                    json!({"subject": "B", "description": "x"}),
                )
                .await;
                assert!(again.is_error);
                continue;
            }
            assert!(!created.is_error, "{}", created.content);
            let done = call(
                &registry,
                "c2",
                UPDATE,
                json!({"taskId": "1", "status": "completed", "owner": "me"}),
            )
            .await;
            assert!(done.is_error);
            assert_eq!(done.content, "no: Ship");
            let task = store.get("1").unwrap();
            assert_eq!(
                task.status,
                TaskStatus::Pending,
                "the completion was rolled back"
            );
            assert_eq!(task.owner, None);
            let seen = veto.1.lock().unwrap();
            assert_eq!(
                seen.iter().map(|e| e.kind).collect::<Vec<_>>(),
                [TaskEventKind::Created, TaskEventKind::Completed]
            );
            assert_eq!(seen[1].owner.as_deref(), Some("me"));
        }
    }

    #[test]
    fn restore_rebuilds_the_list_from_a_log() {
        let body = |body: EventBody| Event {
            seq: 0,
            ts: String::new(),
            body,
            agent_id: None,
        };
        let call = |id: &str, tool: &str, arguments: Value| {
            serde_json::from_value::<EventBody>(json!({
                "type": "tool/call", "turn": 1, "call_id": id, "execution_id": format!("e{id}"),
                "tool": tool, "arguments": arguments
            }))
            .unwrap()
        };
        let result = |id: &str, is_error: bool| {
            serde_json::from_value::<EventBody>(json!({
                "type": "tool/result", "turn": 1, "call_id": id, "is_error": is_error, "content": ""
            }))
            .unwrap()
        };
        let events = vec![
            body(call(
                "c1",
                CREATE,
                json!({"subject": "a", "description": "x"}),
            )),
            body(result("c1", false)),
            body(call(
                "c2",
                CREATE,
                json!({"subject": "vetoed", "description": "x"}),
            )),
            body(result("c2", true)),
            body(call(
                "c3",
                CREATE,
                json!({"subject": "b", "description": "y"}),
            )),
            body(result("c3", false)),
            body(call(
                "c4",
                UPDATE,
                json!({"taskId": "1", "status": "completed"}),
            )),
            body(result("c4", false)),
            // A hook rewrote this call: the list has what ran.
            body(call(
                "c5",
                CREATE,
                json!({"subject": "asked", "description": "z"}),
            )),
            body(
                serde_json::from_value(json!({
                    "type": "tool/result", "turn": 1, "call_id": "c5", "is_error": false,
                    "content": "", "rewrite": {"arguments": {"subject": "ran", "description": "z"}, "by": "h"}
                }))
                .unwrap(),
            ),
        ];
        let store = TaskStore::new();
        store.restore(&events);
        let tasks = store.tasks();
        assert_eq!(tasks.len(), 3);
        assert_eq!(tasks[0].status, TaskStatus::Completed);
        assert_eq!(tasks[1].subject, "b");
        assert_eq!(tasks[1].id, "2");
        assert_eq!(tasks[2].subject, "ran");
    }
}
