//! Without `--json`: what `codex exec` shows people, on stderr (the final
//! message alone goes to stdout, for scripts).

use crate::events::{ItemDetails, ItemStatus, ThreadEvent};

/// The stderr text of `event`, if it shows any.
pub fn render(event: &ThreadEvent, cwd: &str) -> Option<String> {
    match event {
        ThreadEvent::ThreadStarted { thread_id } => Some(format!("session id: {thread_id}")),
        ThreadEvent::TurnStarted {} => None,
        ThreadEvent::TurnCompleted { usage } => Some(format!(
            "tokens used\n{}",
            usage.input_tokens + usage.output_tokens
        )),
        ThreadEvent::TurnFailed { .. } => None,
        ThreadEvent::Error { message } => Some(format!("ERROR: {message}")),
        ThreadEvent::ItemUpdated { .. } => None,
        ThreadEvent::ItemStarted { item } => match &item.details {
            ItemDetails::CommandExecution { command, .. } => {
                Some(format!("exec\n{command} in {cwd}"))
            }
            ItemDetails::McpToolCall {
                server,
                tool,
                arguments,
                ..
            } => Some(format!("tool {server}.{tool}({arguments})")),
            ItemDetails::FileChange { .. }
            | ItemDetails::AgentMessage { .. }
            | ItemDetails::Reasoning { .. }
            | ItemDetails::TodoList { .. }
            | ItemDetails::Error { .. } => None,
        },
        ThreadEvent::ItemCompleted { item } => match &item.details {
            ItemDetails::AgentMessage { text } => Some(format!("codex\n{text}")),
            ItemDetails::Reasoning { text } => Some(format!("thinking\n{text}")),
            ItemDetails::Error { message } => Some(format!("warning: {message}")),
            ItemDetails::CommandExecution {
                aggregated_output,
                exit_code,
                status,
                ..
            } => {
                let head = match (status, exit_code) {
                    (ItemStatus::Declined, _) => "declined".to_owned(),
                    (_, Some(0)) => "succeeded:".to_owned(),
                    (_, Some(code)) => format!("exited {code}:"),
                    (_, None) => "failed:".to_owned(),
                };
                Some(format!(" {head}\n{}", aggregated_output.trim_end()))
            }
            ItemDetails::FileChange { changes, status } => {
                let lines: Vec<String> = changes
                    .iter()
                    .map(|change| {
                        let mark = match change.kind.as_str() {
                            "add" => "A",
                            "delete" => "D",
                            _ => "M",
                        };
                        format!("{mark} {}", change.path)
                    })
                    .collect();
                let head = match status {
                    ItemStatus::Completed => "file update",
                    ItemStatus::Declined => "file update declined",
                    ItemStatus::Failed | ItemStatus::InProgress => "file update failed",
                };
                Some(format!("{head}\n{}", lines.join("\n")))
            }
            ItemDetails::McpToolCall {
                server,
                tool,
                status,
                ..
            } => {
                let how = match status {
                    ItemStatus::Completed => "succeeded",
                    ItemStatus::Declined => "declined",
                    ItemStatus::Failed | ItemStatus::InProgress => "failed",
                };
                Some(format!("{server}.{tool} {how}"))
            }
            ItemDetails::TodoList { items } => Some(
                items
                    .iter()
                    .map(|item| {
                        format!("[{}] {}", if item.completed { "x" } else { " " }, item.text)
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
        },
    }
}
