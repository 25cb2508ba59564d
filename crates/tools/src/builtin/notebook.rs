//! `notebook_edit`: replaces, inserts or deletes one cell of a Jupyter
//! notebook (`.ipynb`), Claude Code's `NotebookEdit`.
//!
//! A cell is named by its `id` (nbformat 4.5) or by its position as
//! `cell-N` (0-based). `insert` puts the new cell after the named one, or
//! first when no cell is named. The notebook is written back with one-space
//! indentation and sorted keys (Jupyter's own way of writing nbformat); a
//! replaced code cell loses its outputs and execution count, as they no
//! longer match its source.
//!
//! The notebook is read as nbformat 4: the cells are typed in what is edited
//! (`cell_type`, `id`, `source`, `execution_count`, `outputs`); cell and
//! notebook metadata, outputs and anything else nbformat may carry are kept
//! as they were written. A cell of another shape is kept as it is, can be
//! found only as `cell-N`, and cannot be replaced.

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

/// A notebook as nbformat 4 writes it (sorted keys): the cells, then the
/// rest (`metadata`, `nbformat`, `nbformat_minor`) as it was written.
#[derive(Debug, Serialize, Deserialize)]
struct Notebook {
    /// `None` when the notebook has no `cells` list.
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    cells: Option<Vec<Cell>>,
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// One cell: nbformat's shape, or anything else (kept as written).
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Cell {
    Nb(Box<NbCell>),
    Other(Value),
}

/// An nbformat 4 cell; the keys in Jupyter's (sorted) order. (The
/// flattened rest also means only an object reads as a cell.)
#[derive(Debug, Default, Serialize, Deserialize)]
struct NbCell {
    /// A markdown or raw cell's attachments (not edited).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    attachments: Option<Map<String, Value>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    cell_type: Option<String>,
    /// A code cell's count: absent, `null` or a number.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_with_null"
    )]
    execution_count: Option<Option<u64>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    id: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    metadata: Option<Map<String, Value>>,
    /// A code cell's outputs (not edited, only cleared).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    outputs: Option<Vec<Value>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    source: Option<Source>,
    /// Keys nbformat does not define, kept as written.
    #[serde(flatten)]
    rest: Map<String, Value>,
}

/// `deserialize_with` for a key that is absent or a `T`: a `null` there
/// does not read (the cell is then kept as written, not rewritten without
/// the key).
fn given<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

/// A cell's source: one string, or a list of lines (nbformat allows both).
#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Source {
    Text(String),
    Lines(Vec<String>),
}

/// `Option<Option<T>>` for a key that may be absent (`None`), `null`
/// (`Some(None)`) or a value.
mod serde_with_null {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub(super) fn deserialize<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de>,
    {
        Option::<T>::deserialize(deserializer).map(Some)
    }

    pub(super) fn serialize<S, T>(
        value: &Option<Option<T>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error>
    where
        S: Serializer,
        T: Serialize,
    {
        match value {
            Some(inner) => inner.serialize(serializer),
            None => serializer.serialize_none(),
        }
    }
}

/// What is read about the notebook itself, each field leniently (a value of
/// another shape reads as absent).
#[derive(Debug, Default, Deserialize)]
struct About {
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    nbformat: Option<u64>,
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    nbformat_minor: Option<u64>,
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    metadata: Option<AboutMetadata>,
}

#[derive(Debug, Default, Deserialize)]
struct AboutMetadata {
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    language_info: Option<Named>,
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    kernelspec: Option<Named>,
}

/// `language_info.name` or `kernelspec.language`.
#[derive(Debug, Default, Deserialize)]
struct Named {
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    name: Option<String>,
    #[serde(default, deserialize_with = "crate::describe::lenient")]
    language: Option<String>,
}

impl About {
    /// The notebook's language (`python` when it does not say).
    fn language(&self) -> String {
        let metadata = self.metadata.as_ref();
        metadata
            .and_then(|m| m.language_info.as_ref())
            .and_then(|info| info.name.clone())
            .or_else(|| {
                metadata
                    .and_then(|m| m.kernelspec.as_ref())
                    .and_then(|spec| spec.language.clone())
            })
            .unwrap_or_else(|| "python".to_owned())
    }

    /// nbformat 4.5 and later give every cell an `id`.
    fn supports_ids(&self) -> bool {
        self.nbformat > Some(4) || (self.nbformat == Some(4) && self.nbformat_minor >= Some(5))
    }
}

impl Cell {
    fn nb(&self) -> Option<&NbCell> {
        match self {
            Cell::Nb(cell) => Some(cell.as_ref()),
            Cell::Other(_) => None,
        }
    }

    fn id(&self) -> Option<&str> {
        self.nb()?.id.as_deref()
    }

    /// The cell's source as one string.
    fn source_text(&self) -> String {
        match self.nb().and_then(|cell| cell.source.as_ref()) {
            Some(Source::Text(text)) => text.clone(),
            Some(Source::Lines(lines)) => lines.concat(),
            None => String::new(),
        }
    }

    fn cell_type(&self) -> &str {
        self.nb()
            .and_then(|cell| cell.cell_type.as_deref())
            .unwrap_or("code")
    }
}

/// The index of the cell named `cell_id`: its `id`, or `cell-N`.
fn find_cell(cells: &[Cell], cell_id: &str) -> Option<usize> {
    if let Some(index) = cells.iter().position(|cell| cell.id() == Some(cell_id)) {
        return Some(index);
    }
    let index: usize = cell_id.strip_prefix("cell-")?.parse().ok()?;
    (index < cells.len()).then_some(index)
}

/// A fresh cell id: 8 hex digits not used by another cell.
fn new_cell_id(cells: &[Cell]) -> String {
    let taken = |id: &str| cells.iter().any(|cell| cell.id() == Some(id));
    loop {
        let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_owned();
        if !taken(&id) {
            return id;
        }
    }
}

/// Gives `cell` its new type and source; a code cell's outputs and count
/// are cleared, another cell has none.
fn set_cell(cell: &mut NbCell, cell_type: &str, source: &str) {
    cell.cell_type = Some(cell_type.to_owned());
    cell.source = Some(Source::Text(source.to_owned()));
    if cell_type == "code" {
        cell.execution_count = Some(None);
        cell.outputs = Some(Vec::new());
    } else {
        cell.execution_count = None;
        cell.outputs = None;
    }
}

fn new_cell(cell_type: &str, id: Option<String>, source: &str) -> Cell {
    let mut cell = NbCell {
        id,
        metadata: Some(Map::new()),
        ..NbCell::default()
    };
    set_cell(&mut cell, cell_type, source);
    Cell::Nb(Box::new(cell))
}

/// Serializes a notebook as Jupyter writes it: one-space indent, final newline.
fn write_notebook(notebook: &Notebook) -> Result<String, ToolError> {
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
    let mut notebook: Notebook = match serde_json::from_str(original) {
        Ok(notebook) => notebook,
        Err(err) if err.is_data() => return Err(fail(format!("{shown} has no `cells` list"))),
        Err(err) => return Err(fail(format!("{shown} is not a valid notebook: {err}"))),
    };
    let about: About = serde_json::from_str(original).unwrap_or_default();
    let language = about.language();
    let supports_ids = about.supports_ids();
    let Some(cells) = notebook.cells.as_mut() else {
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
            let old = cells[index].source_text();
            let old_type = cells[index].cell_type().to_owned();
            if mode == EditMode::Delete {
                cells.remove(index);
                (args.cell_id.clone(), old_type, Some(old))
            } else {
                let cell_type = args.cell_type.clone().unwrap_or(old_type);
                let Cell::Nb(cell) = &mut cells[index] else {
                    return Err(fail(format!(
                        "cell `{}` of {shown} is not an nbformat cell",
                        args.cell_id.as_deref().unwrap_or_default()
                    )));
                };
                set_cell(cell, &cell_type, &args.new_source);
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

    /// A notebook as Jupyter writes it: sorted keys, one-space indent.
    const JUPYTER: &str = r##"{
 "cells": [
  {
   "attachments": {
    "a.png": {
     "image/png": "AAAA"
    }
   },
   "cell_type": "markdown",
   "id": "m1",
   "metadata": {
    "tags": [
     "x"
    ]
   },
   "source": [
    "# T\n",
    "![a](attachment:a.png)"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 7,
   "id": "c1",
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "1\n"
     ]
    }
   ],
   "source": "print(1)"
  },
  [
   "not a cell"
  ],
  {
   "cell_type": 3,
   "id": "odd"
  },
  {
   "id": null,
   "z": 1,
   "cell_type": "raw",
   "source": ""
  }
 ],
 "metadata": {
  "language_info": {
   "name": "julia"
  },
  "kernelspec": {
   "language": "python"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

    #[tokio::test]
    async fn only_the_edited_cell_changes_and_other_shapes_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n.ipynb"), JUPYTER).unwrap();
        let out = run(
            dir.path(),
            json!({"notebook_path": "n.ipynb", "cell_id": "c1", "new_source": "print(2)"}),
        )
        .await
        .unwrap();
        assert_eq!(out.language, "julia");
        let expected = JUPYTER
            .replace("\"execution_count\": 7", "\"execution_count\": null")
            .replace(
                "\"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"1\\n\"\n     ]\n    }\n   ],",
                "\"outputs\": [],",
            )
            .replace("\"source\": \"print(1)\"", "\"source\": \"print(2)\"");
        assert_ne!(expected, JUPYTER);
        assert_eq!(out.updated_file, expected);

        // A markdown cell keeps its attachments and gets no outputs; an
        // entry that is not a cell is counted, kept and not editable.
        let out = run(
            dir.path(),
            json!({"notebook_path": "n.ipynb", "cell_id": "m1", "new_source": "text"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out.old_source.as_deref(),
            Some("# T\n![a](attachment:a.png)")
        );
        let after = cells(dir.path());
        assert_eq!(after[0]["attachments"]["a.png"]["image/png"], "AAAA");
        assert_eq!(after[0].get("outputs"), None);
        assert_eq!(after[2], json!(["not a cell"]));
        assert_eq!(after[3], json!({"cell_type": 3, "id": "odd"}));
        assert!(
            out.updated_file
                .contains("\"id\": null,\n   \"z\": 1,\n   \"cell_type\": \"raw\"")
        );
        let err = run(
            dir.path(),
            json!({"notebook_path": "n.ipynb", "cell_id": "cell-2", "new_source": "x"}),
        )
        .await
        .unwrap_err();
        assert!(err.0.contains("is not an nbformat cell"), "{err}");
        // Found by position only; its type reads as code.
        let out = run(
            dir.path(),
            json!({"notebook_path": "n.ipynb", "cell_id": "cell-3", "new_source": "",
                   "edit_mode": "delete"}),
        )
        .await
        .unwrap();
        assert_eq!(out.cell_type, "code");
        assert_eq!(cells(dir.path()).len(), 4);
    }

    #[tokio::test]
    async fn a_notebook_that_is_not_an_object_has_no_cells() {
        let dir = tempfile::tempdir().unwrap();
        for (text, expected) in [
            ("[1, 2]", "has no `cells` list"),
            ("{\"cells\": 3}", "has no `cells` list"),
            ("{\"nbformat\": 4}", "has no `cells` list"),
        ] {
            std::fs::write(dir.path().join("n.ipynb"), text).unwrap();
            let err = run(
                dir.path(),
                json!({"notebook_path": "n.ipynb", "new_source": "x", "cell_type": "code",
                       "edit_mode": "insert"}),
            )
            .await
            .unwrap_err();
            assert!(err.0.contains(expected), "{text}: {err}");
        }
    }
}
