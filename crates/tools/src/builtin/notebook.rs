//! `notebook_edit`: replaces, inserts or deletes one cell of a Jupyter
//! notebook (`.ipynb`), Claude Code's `NotebookEdit`.
//!
//! A cell is named by its `id` (nbformat 4.5) or by its position as
//! `cell-N` (0-based). `insert` puts the new cell after the named one, or
//! first when no cell is named. The notebook is written back with one-space
//! indentation (Jupyter's own) and its key order kept; a replaced code cell
//! loses its outputs and execution count, as they no longer match its source.

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{TypedTool, display_path, read_existing, spec};
use crate::{Rendered, ToolContext, ToolError};

/// The tool's name.
pub const NAME: &str = "notebook_edit";

/// The `notebook_edit` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotebookEditTool;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
enum EditMode {
    #[default]
    Replace,
    Insert,
    Delete,
}

impl EditMode {
    fn as_str(self) -> &'static str {
        match self {
            EditMode::Replace => "replace",
            EditMode::Insert => "insert",
            EditMode::Delete => "delete",
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    notebook_path: String,
    #[serde(default)]
    cell_id: Option<String>,
    new_source: String,
    #[serde(default)]
    cell_type: Option<String>,
    #[serde(default)]
    edit_mode: Option<EditMode>,
}

/// The canonical value of a `notebook_edit` call: Claude Code's
/// `NotebookEdit` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditOutput {
    /// The source written (empty for a delete).
    pub new_source: String,
    /// The cell's source before the edit (replace and delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_source: Option<String>,
    /// The cell edited, inserted or deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell_id: Option<String>,
    /// `code` or `markdown`.
    pub cell_type: String,
    /// The notebook's language (`python` when it does not say).
    pub language: String,
    /// `replace`, `insert` or `delete`.
    pub edit_mode: String,
    /// Why the edit failed, in a value a hook supplied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The notebook's absolute path.
    pub notebook_path: String,
    /// The notebook file before the edit.
    pub original_file: String,
    /// The notebook file after the edit.
    pub updated_file: String,
}

fn fail(message: impl std::fmt::Display) -> ToolError {
    ToolError(format!("{NAME}: {message}"))
}

/// The cell's source as one string (nbformat allows a list of lines).
fn source_text(cell: &Value) -> String {
    match cell.get("source") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(lines)) => lines.iter().filter_map(Value::as_str).collect(),
        _ => String::new(),
    }
}

/// The index of the cell named `cell_id`: its `id`, or `cell-N`.
fn find_cell(cells: &[Value], cell_id: &str) -> Option<usize> {
    if let Some(index) = cells
        .iter()
        .position(|cell| cell.get("id").and_then(Value::as_str) == Some(cell_id))
    {
        return Some(index);
    }
    let index: usize = cell_id.strip_prefix("cell-")?.parse().ok()?;
    (index < cells.len()).then_some(index)
}

fn language(notebook: &Value) -> String {
    notebook
        .pointer("/metadata/language_info/name")
        .or_else(|| notebook.pointer("/metadata/kernelspec/language"))
        .and_then(Value::as_str)
        .unwrap_or("python")
        .to_owned()
}

/// A fresh cell id: 8 hex digits not used by another cell.
fn new_cell_id(cells: &[Value]) -> String {
    let taken = |id: &str| {
        cells
            .iter()
            .any(|cell| cell.get("id").and_then(Value::as_str) == Some(id))
    };
    loop {
        let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        if !taken(&id) {
            return id;
        }
    }
}

fn new_cell(cell_type: &str, id: Option<String>, source: &str) -> Value {
    let mut cell = Map::new();
    cell.insert("cell_type".into(), json!(cell_type));
    if let Some(id) = id {
        cell.insert("id".into(), json!(id));
    }
    cell.insert("metadata".into(), json!({}));
    if cell_type == "code" {
        cell.insert("execution_count".into(), Value::Null);
        cell.insert("outputs".into(), json!([]));
    }
    cell.insert("source".into(), json!(source));
    Value::Object(cell)
}

/// Serializes a notebook as Jupyter writes it: one-space indent, final newline.
fn write_notebook(notebook: &Value) -> Result<String, ToolError> {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    notebook
        .serialize(&mut serializer)
        .map_err(|err| fail(format!("could not encode the notebook: {err}")))?;
    let mut text = String::from_utf8(out).map_err(fail)?;
    text.push('\n');
    Ok(text)
}

/// Applies the edit to the notebook text; returns the value (without the
/// path) and the new text.
fn edit(original: &str, args: &Args, shown: &str) -> Result<NotebookEditOutput, ToolError> {
    let mut notebook: Value = serde_json::from_str(original)
        .map_err(|err| fail(format!("{shown} is not a valid notebook: {err}")))?;
    let language = language(&notebook);
    let supports_ids = notebook.get("nbformat").and_then(Value::as_u64) > Some(4)
        || (notebook.get("nbformat").and_then(Value::as_u64) == Some(4)
            && notebook.get("nbformat_minor").and_then(Value::as_u64) >= Some(5));
    let Some(cells) = notebook.get_mut("cells").and_then(Value::as_array_mut) else {
        return Err(fail(format!("{shown} has no `cells` list")));
    };
    let mode = args.edit_mode.unwrap_or_default();
    let located = match &args.cell_id {
        Some(id) => Some(
            find_cell(cells, id)
                .ok_or_else(|| fail(format!("no cell with id `{id}` in {shown}")))?,
        ),
        None => None,
    };
    if let Some(cell_type) = &args.cell_type
        && cell_type != "code"
        && cell_type != "markdown"
    {
        return Err(fail(format!(
            "cell_type must be `code` or `markdown`, not `{cell_type}`"
        )));
    }
    let (cell_id, cell_type, old_source) = match mode {
        EditMode::Insert => {
            let cell_type = args
                .cell_type
                .clone()
                .ok_or_else(|| fail("cell_type is required to insert a cell"))?;
            let id = supports_ids.then(|| new_cell_id(cells));
            let at = located.map_or(0, |index| index + 1);
            cells.insert(at, new_cell(&cell_type, id.clone(), &args.new_source));
            (id.or_else(|| Some(format!("cell-{at}"))), cell_type, None)
        }
        EditMode::Replace | EditMode::Delete => {
            let index = located
                .ok_or_else(|| fail(format!("cell_id is required to {} a cell", mode.as_str())))?;
            let old = source_text(&cells[index]);
            let old_type = cells[index]
                .get("cell_type")
                .and_then(Value::as_str)
                .unwrap_or("code")
                .to_owned();
            if mode == EditMode::Delete {
                cells.remove(index);
                (args.cell_id.clone(), old_type, Some(old))
            } else {
                let cell_type = args.cell_type.clone().unwrap_or(old_type);
                let cell = &mut cells[index];
                if let Some(map) = cell.as_object_mut() {
                    map.insert("cell_type".into(), json!(cell_type));
                    map.insert("source".into(), json!(args.new_source));
                    if cell_type == "code" {
                        map.insert("execution_count".into(), Value::Null);
                        map.insert("outputs".into(), json!([]));
                    } else {
                        map.remove("execution_count");
                        map.remove("outputs");
                    }
                }
                (args.cell_id.clone(), cell_type, Some(old))
            }
        }
    };
    let updated_file = write_notebook(&notebook)?;
    Ok(NotebookEditOutput {
        new_source: if mode == EditMode::Delete {
            String::new()
        } else {
            args.new_source.clone()
        },
        old_source,
        cell_id,
        cell_type,
        language,
        edit_mode: mode.as_str().to_owned(),
        error: None,
        notebook_path: String::new(),
        original_file: original.to_owned(),
        updated_file,
    })
}

#[async_trait]
impl TypedTool for NotebookEditTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = NotebookEditOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Edits one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new \
             cell after it (or first, without cell_id), or deletes it. Cells are named by \
             their id or as cell-N (0-based). Read the notebook first.",
            json!({
                "notebook_path": {"type": "string", "description": "Absolute path of the notebook."},
                "cell_id": {"type": "string", "description": "The cell to edit, or to insert after."},
                "new_source": {"type": "string", "description": "The cell's new source."},
                "cell_type": {"type": "string", "enum": ["code", "markdown"], "description": "The cell's type; required to insert."},
                "edit_mode": {"type": "string", "enum": ["replace", "insert", "delete"], "description": "What to do (default replace)."}
            }),
            &["notebook_path", "new_source"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<NotebookEditOutput, ToolError> {
        let path = ctx.resolve(&args.notebook_path);
        let shown = display_path(&path);
        if path.extension().and_then(|e| e.to_str()) != Some("ipynb") {
            return Err(fail(format!("{shown} is not a .ipynb notebook")));
        }
        let bytes = read_existing(NAME, &path, &shown)
            .await?
            .ok_or_else(|| fail(format!("{shown} does not exist")))?;
        let original =
            String::from_utf8(bytes).map_err(|_| fail(format!("{shown} is not UTF-8 text")))?;
        let mut output = edit(&original, &args, &shown)?;
        output.notebook_path = shown.clone();
        tokio::fs::write(&path, &output.updated_file)
            .await
            .map_err(|err| fail(format!("cannot write {shown}: {err}")))?;
        Ok(output)
    }

    fn overlap(&self, args: &Self::Args, cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::writes(cwd, &args.notebook_path)
    }

    fn show(&self, output: NotebookEditOutput) -> Result<Rendered, ToolError> {
        if let Some(error) = output.error {
            return Ok(Rendered {
                content: error,
                is_error: true,
            });
        }
        let cell = output.cell_id.as_deref().unwrap_or("the cell");
        let content = match output.edit_mode.as_str() {
            "insert" => format!("Inserted cell {cell} in {}", output.notebook_path),
            "delete" => format!("Deleted cell {cell} from {}", output.notebook_path),
            _ => format!("Updated cell {cell} of {}", output.notebook_path),
        };
        Ok(Rendered {
            content,
            is_error: false,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use serde_json::Value;
    use tokio_util::sync::CancellationToken;

    const NOTEBOOK: &str = r##"{
 "cells": [
  {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "text"]},
  {"cell_type": "code", "execution_count": 3, "id": "calc", "metadata": {}, "outputs": [{"output_type": "stream", "name": "stdout", "text": "2\n"}], "source": "print(1 + 1)"}
 ],
 "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    async fn run(dir: &std::path::Path, args: Value) -> Result<NotebookEditOutput, ToolError> {
        let ctx = ToolContext::new(dir, CancellationToken::new());
        let value = NotebookEditTool.run(&ctx, &args).await?;
        NotebookEditTool.render(&value).unwrap();
        Ok(serde_json::from_value(value).unwrap())
    }

    fn cells(dir: &std::path::Path) -> Vec<Value> {
        let text = std::fs::read_to_string(dir.join("n.ipynb")).unwrap();
        let notebook: Value = serde_json::from_str(&text).unwrap();
        notebook["cells"].as_array().unwrap().clone()
    }

    #[tokio::test]
    async fn replace_insert_and_delete_cells() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n.ipynb"), NOTEBOOK).unwrap();

        let out = run(
            dir.path(),
            json!({"notebook_path": "n.ipynb", "cell_id": "calc", "new_source": "print(2)"}),
        )
        .await
        .unwrap();
        assert_eq!(out.old_source.as_deref(), Some("print(1 + 1)"));
        assert_eq!(out.cell_type, "code");
        assert_eq!(out.language, "python");
        assert_eq!(out.original_file, NOTEBOOK);
        let after = cells(dir.path());
        assert_eq!(after[1]["source"], "print(2)");
        assert_eq!(after[1]["outputs"], json!([]));
        assert_eq!(after[1]["execution_count"], Value::Null);
        // Key order is kept and the indent is Jupyter's.
        assert!(
            out.updated_file
                .starts_with("{\n \"cells\": [\n  {\n   \"cell_type\"")
        );

        let out = run(
            dir.path(),
            json!({"notebook_path": "n.ipynb", "cell_id": "cell-0", "new_source": "x = 1",
                   "cell_type": "code", "edit_mode": "insert"}),
        )
        .await
        .unwrap();
        let after = cells(dir.path());
        assert_eq!(after.len(), 3);
        assert_eq!(after[1]["source"], "x = 1");
        assert_eq!(after[1]["id"], json!(out.cell_id.unwrap()));

        let out = run(
            dir.path(),
            json!({"notebook_path": "n.ipynb", "cell_id": "intro", "new_source": "",
                   "edit_mode": "delete"}),
        )
        .await
        .unwrap();
        assert_eq!(out.old_source.as_deref(), Some("# Title\ntext"));
        assert_eq!(cells(dir.path()).len(), 2);
    }

    #[tokio::test]
    async fn bad_requests_name_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n.ipynb"), NOTEBOOK).unwrap();
        std::fs::write(dir.path().join("bad.ipynb"), "{not json").unwrap();
        let cases = [
            (
                json!({"notebook_path": "n.ipynb", "cell_id": "nope", "new_source": "x"}),
                "no cell with id `nope`",
            ),
            (
                json!({"notebook_path": "n.ipynb", "new_source": "x", "edit_mode": "insert"}),
                "cell_type is required",
            ),
            (
                json!({"notebook_path": "n.ipynb", "new_source": "x"}),
                "cell_id is required to replace",
            ),
            (
                json!({"notebook_path": "bad.ipynb", "cell_id": "a", "new_source": "x"}),
                "is not a valid notebook",
            ),
            (
                json!({"notebook_path": "n.txt", "new_source": "x"}),
                "is not a .ipynb notebook",
            ),
            (
                json!({"notebook_path": "missing.ipynb", "new_source": "x"}),
                "does not exist",
            ),
        ];
        for (args, expected) in cases {
            let err = run(dir.path(), args.clone()).await.unwrap_err();
            assert!(err.0.contains(expected), "{args}: {err}");
        }
        // Nothing was written by a failed edit.
        assert_eq!(
            std::fs::read_to_string(dir.path().join("n.ipynb")).unwrap(),
            NOTEBOOK
        );
    }
}
