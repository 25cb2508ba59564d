//! The task seam: TaskCreated and TaskCompleted, fired by dsh's task tools
//! (`task_create`, `task_update` to `completed`). A blocking answer (exit 2,
//! or TaskCreated's `decision: "block"`) rolls the task back and its text
//! is the tool's error for the model.

use dsh_hooks::{Cx, Flow};
use dsh_seams::{TaskEvent, TaskEventKind, TaskVerdict};

use super::{Firing, answer};
use crate::dialect::Claude;
use crate::events::HookEvent;
use crate::output::Effect;
use crate::payload;

/// TaskCreated/TaskCompleted: a block rolls the task back with the
/// hooks' texts.
pub(super) fn task_event<'a>(
    cx: Cx<'_, Claude>,
    task: &'a TaskEvent,
) -> Flow<'a, Claude, TaskVerdict> {
    let event = match task.kind {
        TaskEventKind::Created => HookEvent::TaskCreated,
        TaskEventKind::Completed => HookEvent::TaskCompleted,
    };
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let firing = Firing::new(
        event,
        &payload::task_event(
            &common,
            event.as_str(),
            &task.task_id,
            &task.subject,
            &task.description,
        ),
    );
    answer(&cx, &firing, |fired| {
        // Every blocking hook's text, in configuration order.
        let texts: Vec<&str> = fired
            .iter()
            .filter_map(|f| match &f.reading.effect {
                Effect::Block { text } => Some(text.as_str()),
                Effect::None
                | Effect::Allow { .. }
                | Effect::Ask { .. }
                | Effect::Defer { .. }
                | Effect::Deny { .. } => None,
            })
            .collect();
        if texts.is_empty() {
            TaskVerdict::Allow
        } else {
            TaskVerdict::Block {
                feedback: texts.join("\n"),
            }
        }
    })
}
