//! The task-list seam: a task was created or completed through the task
//! tools (`task_create`, `task_update`), and a listener may veto it.

/// What happened to a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskEventKind {
    /// `task_create` added the task.
    Created,
    /// `task_update` set the task's status to `completed`.
    Completed,
}

/// A task event, as the task tools report it to the plugins.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskEvent {
    /// Created or completed.
    pub kind: TaskEventKind,
    /// The task's id (`"1"`, `"2"`, … in creation order within a session).
    pub task_id: String,
    /// The task's one-line subject.
    pub subject: String,
    /// The task's description.
    pub description: String,
    /// The task's owner, when one was set.
    pub owner: Option<String>,
}

/// A listener's answer to a [`TaskEvent`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TaskVerdict {
    /// Let it stand.
    #[default]
    Allow,
    /// Roll it back: a created task is removed, a completed task keeps its
    /// previous status. `feedback` is what the model is told.
    Block {
        /// The model-facing reason.
        feedback: String,
    },
}
