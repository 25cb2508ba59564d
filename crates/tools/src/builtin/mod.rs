//! The built-in tools: `bash` (with background shells, `bash_output` and
//! `kill_shell`), `read`, `write`, `edit`, `notebook_edit`, `glob`, `grep`,
//! `web_fetch`, the task tools (`task_create`, `task_get`, `task_update`,
//! `task_list`), `ask_user_question`, `exit_plan_mode` and `agent` (a
//! subagent through the loop's runner). [`names`] gives each one's name in
//! each dialect.
//!
//! Each tool's arguments follow Claude Code's tool inputs (so hook bridges
//! pass them through unchanged) and each produces a canonical JSON value whose
//! shape is a public `*Output` struct in its module. `render` parses a value
//! back into that struct — unknown fields and wrong types are rejected — and
//! produces the model-facing text, so a value replaced by a post-execute hook
//! goes through exactly the same checks and formatting as one the tool made.
//!
//! Relative paths resolve against the session cwd ([`ToolContext::resolve`]);
//! every I/O error names its path. Directory walks (`glob`, `grep`) run on
//! tokio's blocking pool and stop when the call is cancelled.

use std::path::Path;
use std::sync::Arc;

pub use dsh_hook_runner::ProcessLayer;
use dsh_protocol::ToolSpec;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use async_trait::async_trait;

use crate::{Concurrency, Rendered, Tool, ToolContext, ToolError};
use dsh_seams::ToolExecution;

pub mod agent;
pub mod bash;
pub(crate) mod diff;
pub mod edit;
pub mod glob;
pub mod grep;
pub mod interaction;
pub mod names;
pub mod notebook;
pub mod read;
mod selection;
pub mod shells;
pub mod tasks;
mod walk;
pub mod web_fetch;
pub mod write;

pub use agent::{AgentOutput, AgentTool};
pub use bash::{BashOutput, BashTool, bound_output};
pub use diff::{Hunk, structured_patch};
pub use edit::{EditOutput, EditTool};
pub use glob::{GlobOutput, GlobTool};
pub use grep::{GrepMode, GrepOutput, GrepTool};
pub use interaction::{AskUserQuestionTool, ExitPlanModeTool};
pub use notebook::{NotebookEditOutput, NotebookEditTool};
pub use read::{ReadOutput, ReadTool};
pub use selection::BuiltinSelection;
pub use shells::{BashOutputTool, KillShellTool, ShellStore};
pub use tasks::{TaskStore, task_tools};
pub use web_fetch::{FetchLimits, WebFetchOutput, WebFetchTool};
pub use write::{WriteKind, WriteOutput, WriteTool};

/// All built-in tools, in the order they are offered to the model. The
/// `bash` tool gets a process layer of its own; prefer
/// [`builtin_tools_with`] and the hook runner's layer in a session.
pub fn builtin_tools() -> Vec<Arc<dyn Tool>> {
    builtin_tools_with(&ProcessLayer::default())
}

/// All built-in tools, the `bash` tool running its commands through
/// `processes` (pass `HookRunner::processes()`, so that `kill_all` reaches
/// tool commands and hooks alike and both have the same variables scrubbed).
pub fn builtin_tools_with(processes: &ProcessLayer) -> Vec<Arc<dyn Tool>> {
    let shells = ShellStore::new();
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(BashTool::with_shells(processes.clone(), shells.clone())),
        Arc::new(BashOutputTool(shells.clone())),
        Arc::new(KillShellTool(shells)),
        Arc::new(ReadTool),
        Arc::new(WriteTool),
        Arc::new(EditTool),
        Arc::new(NotebookEditTool),
        Arc::new(GlobTool),
        Arc::new(GrepTool),
        Arc::new(WebFetchTool::default()),
    ];
    tools.extend(task_tools(&TaskStore::new()));
    tools.push(Arc::new(AskUserQuestionTool));
    tools.push(Arc::new(ExitPlanModeTool));
    tools.push(Arc::new(AgentTool));
    tools
}

/// The built-in tools `selection` keeps, in [`builtin_tools_with`]'s order.
pub fn selected_tools(
    processes: &ProcessLayer,
    selection: &BuiltinSelection,
) -> Vec<Arc<dyn Tool>> {
    builtin_tools_with(processes)
        .into_iter()
        .filter(|tool| selection.keeps(&tool.spec().name))
        .collect()
}

/// Builds a tool spec whose schema is an object with `properties`, `required`
/// and `additionalProperties: false` (the subset the registry validates).
fn spec(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}

/// A built-in tool over typed arguments and a typed canonical value. The
/// [`Tool`] it is comes from this once, for every built-in tool: the
/// arguments are parsed into [`TypedTool::Args`], the value is encoded from
/// [`TypedTool::Output`], and `render` parses a value back into it (so a
/// value a hook supplied gets the same checks) before [`TypedTool::show`].
#[async_trait]
pub(crate) trait TypedTool: Send + Sync {
    /// The tool's name, as its errors give it.
    const NAME: &'static str;
    /// The arguments, as the tool's schema describes them.
    type Args: DeserializeOwned + Send;
    /// The canonical value of a call.
    type Output: Serialize + DeserializeOwned + Send;

    /// Name, description and JSON Schema of the arguments.
    fn describe(&self) -> ToolSpec;

    /// Runs the tool with validated, frozen arguments.
    async fn call(&self, ctx: &ToolContext, args: Self::Args) -> Result<Self::Output, ToolError>;

    /// The model-facing text of a value.
    fn show(&self, output: Self::Output) -> Result<Rendered, ToolError>;

    /// How a call may overlap the other calls of its batch
    /// ([`Tool::concurrency`]): alone, unless the tool says otherwise.
    fn overlap(&self, _args: &Self::Args, _cwd: &Path) -> Concurrency {
        Concurrency::Exclusive
    }
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn spec(&self) -> ToolSpec {
        self.describe()
    }

    async fn run(&self, ctx: &ToolContext, arguments: &Value) -> Result<Value, ToolError> {
        let args = parse_args(T::NAME, arguments)?;
        let output = self.call(ctx, args).await?;
        to_value(T::NAME, &output)
    }

    fn render(&self, value: &Value) -> Result<Rendered, ToolError> {
        self.show(parse_value(T::NAME, value)?)
    }

    fn concurrency(&self, call: &ToolExecution, cwd: &Path) -> Concurrency {
        // Arguments the tool cannot read fail the call anyway: alone.
        parse_args(T::NAME, &call.arguments)
            .map_or(Concurrency::Exclusive, |args| self.overlap(&args, cwd))
    }
}

/// Parses a tool's arguments. The registry validated them against the
/// schema already; this is the second line of defence and never panics.
fn parse_args<T: DeserializeOwned>(tool: &str, arguments: &Value) -> Result<T, ToolError> {
    T::deserialize(arguments).map_err(|err| ToolError(format!("{tool}: invalid arguments: {err}")))
}

/// Parses a canonical value for `render`, rejecting anything that is not a
/// valid value for the tool.
fn parse_value<T: DeserializeOwned>(tool: &str, value: &Value) -> Result<T, ToolError> {
    T::deserialize(value).map_err(|err| ToolError(format!("{tool}: invalid result value: {err}")))
}

/// Serializes a canonical value produced by `run`.
fn to_value<T: Serialize>(tool: &str, output: &T) -> Result<Value, ToolError> {
    serde_json::to_value(output)
        .map_err(|err| ToolError(format!("{tool}: could not encode result: {err}")))
}

/// The absolute, display form of a path.
fn display_path(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Bytes sniffed for a NUL when deciding whether a file is binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Decodes file bytes as text; `None` for binary content (a NUL byte near the
/// start, or invalid UTF-8).
/// The bytes of an existing file, `None` when it does not exist; a
/// directory or an unreadable path is an error naming the path.
async fn read_existing(tool: &str, path: &Path, shown: &str) -> Result<Option<Vec<u8>>, ToolError> {
    match tokio::fs::metadata(path).await {
        Ok(metadata) if metadata.is_dir() => Err(ToolError(format!(
            "{tool}: {shown} is a directory, not a file"
        ))),
        Ok(_) => tokio::fs::read(path)
            .await
            .map(Some)
            .map_err(|err| ToolError(format!("{tool}: cannot read {shown}: {err}"))),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(ToolError(format!("{tool}: cannot access {shown}: {err}"))),
    }
}

fn decode_text(bytes: Vec<u8>) -> Option<String> {
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    if sniff.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Whether the call was cancelled, as an error for walks that stop early.
fn check_cancelled(
    tool: &str,
    ctx_cancel: &tokio_util::sync::CancellationToken,
) -> Result<(), ToolError> {
    if ctx_cancel.is_cancelled() {
        Err(ToolError(format!("{tool}: interrupted")))
    } else {
        Ok(())
    }
}

/// Runs blocking work (directory walks) off the async runtime.
async fn blocking<T, F>(tool: &str, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ToolError(format!("{tool}: worker failed: {err}")))?
}

/// Resolves an optional search root (`path` argument) to an existing path.
async fn resolve_root(
    tool: &str,
    ctx: &ToolContext,
    path: Option<&str>,
) -> Result<std::path::PathBuf, ToolError> {
    let root = match path {
        Some(path) if !path.is_empty() => ctx.resolve(path),
        _ => ctx.cwd.clone(),
    };
    match tokio::fs::metadata(&root).await {
        Ok(_) => Ok(root),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(ToolError(format!(
            "{tool}: path does not exist: {}",
            root.display()
        ))),
        Err(err) => Err(ToolError(format!(
            "{tool}: cannot access {}: {err}",
            root.display()
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;

    #[test]
    fn every_builtin_has_a_closed_object_schema() {
        let tools = builtin_tools();
        let names: Vec<String> = tools.iter().map(|t| t.spec().name).collect();
        assert_eq!(
            names,
            [
                "bash",
                "bash_output",
                "kill_shell",
                "read",
                "write",
                "edit",
                "notebook_edit",
                "glob",
                "grep",
                "web_fetch",
                "task_create",
                "task_get",
                "task_update",
                "task_list",
                "ask_user_question",
                "exit_plan_mode",
                "agent"
            ]
        );
        for tool in &tools {
            let spec = tool.spec();
            let schema = &spec.input_schema;
            assert_eq!(schema["type"], "object", "{}", spec.name);
            assert_eq!(schema["additionalProperties"], false, "{}", spec.name);
            let properties = schema["properties"].as_object().unwrap();
            for required in schema["required"].as_array().unwrap() {
                assert!(
                    properties.contains_key(required.as_str().unwrap()),
                    "{}: required {required} is not a property",
                    spec.name
                );
            }
            for (name, property) in properties {
                let ty = property["type"].as_str().unwrap();
                assert!(
                    ["string", "integer", "number", "boolean", "array", "object"].contains(&ty),
                    "{}.{name}: type {ty}",
                    spec.name
                );
            }
            assert!(!spec.description.is_empty());
        }
    }

    #[test]
    fn render_rejects_non_objects_for_every_tool() {
        for tool in builtin_tools() {
            for bad in [json!(null), json!("text"), json!(3), json!([]), json!({})] {
                assert!(
                    tool.render(&bad).is_err(),
                    "{} accepted {bad}",
                    tool.spec().name
                );
            }
        }
    }

    #[test]
    fn decode_text_rejects_nul_and_invalid_utf8() {
        assert_eq!(decode_text(b"abc\n".to_vec()).as_deref(), Some("abc\n"));
        assert_eq!(decode_text(b"a\0b".to_vec()), None);
        assert_eq!(decode_text(vec![0xff, 0xfe, 0x41]), None);
    }
}
