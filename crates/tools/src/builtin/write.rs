//! `write`: creates or overwrites a file, creating parent directories.

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{TypedTool, display_path, read_existing, spec};
use crate::{Rendered, ToolContext, ToolError};

const NAME: &str = "write";

/// The `write` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteTool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    file_path: String,
    pub(crate) content: String,
}

/// Whether a write made a new file or replaced an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// The file did not exist.
    Create,
    /// The file existed and was overwritten.
    Update,
}

/// The canonical value of a `write` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteOutput {
    /// `create` or `update`.
    #[serde(rename = "type")]
    pub kind: WriteKind,
    /// Absolute path of the file.
    pub file_path: String,
    /// What was written.
    pub content: String,
    /// The previous content (`null` for a new file; lossily decoded if it
    /// was not UTF-8).
    pub original_file: Option<String>,
}

#[async_trait]
impl TypedTool for WriteTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = WriteOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Writes a file, replacing it if it exists and creating missing parent directories.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file (absolute, or relative to the working directory)."},
                "content": {"type": "string", "description": "The complete new content of the file."}
            }),
            &["file_path", "content"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<WriteOutput, ToolError> {
        let path = ctx.resolve(&args.file_path);
        let shown = display_path(&path);

        let original_file = read_existing(NAME, &path, &shown)
            .await?
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|err| {
                ToolError(format!(
                    "{NAME}: cannot create directory {}: {err}",
                    parent.display()
                ))
            })?;
        }
        tokio::fs::write(&path, args.content.as_bytes())
            .await
            .map_err(|err| ToolError(format!("{NAME}: cannot write {shown}: {err}")))?;
        let output = WriteOutput {
            kind: if original_file.is_some() {
                WriteKind::Update
            } else {
                WriteKind::Create
            },
            file_path: shown,
            content: args.content,
            original_file,
        };
        Ok(output)
    }

    fn overlap(&self, args: &Self::Args, cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::writes(cwd, &args.file_path)
    }

    fn show(&self, output: WriteOutput) -> Result<Rendered, ToolError> {
        let content = match (output.kind, &output.original_file) {
            (WriteKind::Create, None) => {
                format!("File created successfully at: {}", output.file_path)
            }
            (WriteKind::Update, Some(_)) => {
                format!(
                    "The file {} has been updated successfully.",
                    output.file_path
                )
            }
            (WriteKind::Create, Some(_)) => {
                return Err(ToolError(format!(
                    "{NAME}: invalid result value: type create with an original_file"
                )));
            }
            (WriteKind::Update, None) => {
                return Err(ToolError(format!(
                    "{NAME}: invalid result value: type update without an original_file"
                )));
            }
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
    use pretty_assertions::assert_eq;
    use tokio_util::sync::CancellationToken;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(dir, CancellationToken::new())
    }

    #[tokio::test]
    async fn create_then_update() {
        let dir = tempfile::tempdir().unwrap();
        let context = ctx(dir.path());
        let abs = dir.path().join("a/b/notes.txt");
        let shown = abs.to_string_lossy().into_owned();

        let created = WriteTool
            .run(
                &context,
                &json!({"file_path": "a/b/notes.txt", "content": "alpha\nbeta\n"}),
            )
            .await
            .unwrap();
        assert_eq!(
            created,
            json!({"type": "create", "file_path": shown, "content": "alpha\nbeta\n", "original_file": null})
        );
        assert_eq!(std::fs::read_to_string(&abs).unwrap(), "alpha\nbeta\n");
        assert_eq!(
            WriteTool.render(&created).unwrap(),
            Rendered {
                content: format!("File created successfully at: {shown}"),
                is_error: false
            }
        );

        let updated = WriteTool
            .run(&context, &json!({"file_path": shown, "content": "gamma"}))
            .await
            .unwrap();
        assert_eq!(
            updated,
            json!({"type": "update", "file_path": shown, "content": "gamma", "original_file": "alpha\nbeta\n"})
        );
        assert_eq!(std::fs::read_to_string(&abs).unwrap(), "gamma");
        assert_eq!(
            WriteTool.render(&updated).unwrap().content,
            format!("The file {shown} has been updated successfully.")
        );
    }

    #[tokio::test]
    async fn writing_over_a_directory_fails_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        let err = WriteTool
            .run(&ctx(dir.path()), &json!({"file_path": "d", "content": "x"}))
            .await
            .unwrap_err();
        assert!(
            err.0.contains(dir.path().join("d").to_str().unwrap()),
            "{err}"
        );
    }

    #[tokio::test]
    async fn parent_that_is_a_file_fails_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        let err = WriteTool
            .run(
                &ctx(dir.path()),
                &json!({"file_path": "f/inner.txt", "content": "x"}),
            )
            .await
            .unwrap_err();
        assert!(
            err.0.contains(dir.path().join("f").to_str().unwrap()),
            "{err}"
        );
    }

    #[test]
    fn render_rejects_invalid_values() {
        for bad in [
            json!({"type": "create", "file_path": "/f", "content": "x", "original_file": "old"}),
            json!({"type": "update", "file_path": "/f", "content": "x", "original_file": null}),
            json!({"type": "replace", "file_path": "/f", "content": "x", "original_file": null}),
            json!({"type": "create", "file_path": "/f", "original_file": null}),
            json!({"type": "create", "filePath": "/f", "content": "x", "original_file": null}),
        ] {
            assert!(WriteTool.render(&bad).is_err(), "accepted {bad}");
        }
    }
}
