//! `edit`: replaces an exact string in a file.
//!
//! `old_string` must occur, and exactly once unless `replace_all` is set;
//! `old_string` and `new_string` must differ. An empty `old_string` creates a
//! missing file (or fills an empty one) with `new_string`, as Claude Code's
//! Edit does. The value carries a unified-diff `structured_patch` of the
//! change.

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::diff::{Hunk, structured_patch};
use super::{TypedTool, decode_text, display_path, read_existing, spec};
use crate::{Rendered, ToolContext, ToolError};

const NAME: &str = "edit";

/// The `edit` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditTool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    file_path: String,
    pub(crate) old_string: String,
    pub(crate) new_string: String,
    #[serde(default)]
    pub(crate) replace_all: bool,
}

/// The canonical value of an `edit` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditOutput {
    /// Absolute path of the file.
    pub file_path: String,
    /// The replaced text.
    pub old_string: String,
    /// The replacement.
    pub new_string: String,
    /// The file's content before the edit (empty for a file the edit created).
    pub original_file: String,
    /// Whether every occurrence was replaced.
    pub replace_all: bool,
    /// The change as unified-diff hunks.
    pub structured_patch: Vec<Hunk>,
}

#[async_trait]
impl TypedTool for EditTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = EditOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Replaces old_string with new_string in a file. old_string must match the file \
             exactly (including whitespace) and occur exactly once, unless replace_all is true.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file (absolute, or relative to the working directory)."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to replace it with (must differ from old_string)."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
            }),
            &["file_path", "old_string", "new_string"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<EditOutput, ToolError> {
        if args.old_string == args.new_string {
            return Err(ToolError(format!(
                "{NAME}: no changes to make: old_string and new_string are exactly the same"
            )));
        }
        let path = ctx.resolve(&args.file_path);
        let shown = display_path(&path);

        let original = match read_existing(NAME, &path, &shown).await? {
            Some(bytes) => Some(decode_text(bytes).ok_or_else(|| {
                ToolError(format!("{NAME}: {shown} appears to be a binary file"))
            })?),
            None => None,
        };

        let updated = match (&original, args.old_string.is_empty()) {
            (None, true) => args.new_string.clone(),
            (None, false) => {
                return Err(ToolError(format!("{NAME}: file does not exist: {shown}")));
            }
            (Some(text), true) if text.is_empty() => args.new_string.clone(),
            (Some(_), true) => {
                return Err(ToolError(format!(
                    "{NAME}: old_string is empty but {shown} is not; give the text to replace \
                     (or use write to replace the whole file)"
                )));
            }
            (Some(text), false) => replace(text, &args, &shown)?,
        };

        if original.is_none()
            && let Some(parent) = path.parent()
        {
            tokio::fs::create_dir_all(parent).await.map_err(|err| {
                ToolError(format!(
                    "{NAME}: cannot create directory {}: {err}",
                    parent.display()
                ))
            })?;
        }
        tokio::fs::write(&path, updated.as_bytes())
            .await
            .map_err(|err| ToolError(format!("{NAME}: cannot write {shown}: {err}")))?;

        let original_file = original.unwrap_or_default();
        let output = EditOutput {
            structured_patch: structured_patch(&original_file, &updated),
            file_path: shown,
            old_string: args.old_string,
            new_string: args.new_string,
            original_file,
            replace_all: args.replace_all,
        };
        Ok(output)
    }

    fn overlap(&self, args: &Self::Args, cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::writes(cwd, &args.file_path)
    }

    fn show(&self, output: EditOutput) -> Result<Rendered, ToolError> {
        if output.old_string == output.new_string {
            return Err(ToolError(format!(
                "{NAME}: invalid result value: old_string equals new_string"
            )));
        }
        for hunk in &output.structured_patch {
            hunk.validate()
                .map_err(|why| ToolError(format!("{NAME}: invalid result value: {why}")))?;
        }
        Ok(Rendered {
            content: format!(
                "The file {} has been updated successfully.",
                output.file_path
            ),
            is_error: false,
        })
    }
}

fn replace(text: &str, args: &Args, shown: &str) -> Result<String, ToolError> {
    let count = text.matches(args.old_string.as_str()).count();
    match count {
        0 => Err(ToolError(format!(
            "{NAME}: string to replace not found in {shown}.\nString: {}",
            args.old_string
        ))),
        1 => Ok(text.replacen(&args.old_string, &args.new_string, 1)),
        _ if args.replace_all => Ok(text.replace(&args.old_string, &args.new_string)),
        _ => Err(ToolError(format!(
            "{NAME}: found {count} matches of the string to replace in {shown}, but \
             replace_all is false. To replace all occurrences, set replace_all to true. To \
             replace only one occurrence, give more context to identify it uniquely.\nString: {}",
            args.old_string
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use pretty_assertions::assert_eq;
    use serde_json::Value;
    use tokio_util::sync::CancellationToken;

    fn ctx(dir: &std::path::Path) -> ToolContext {
        ToolContext::new(dir, CancellationToken::new())
    }

    async fn edit(dir: &std::path::Path, args: Value) -> Result<Value, ToolError> {
        EditTool.run(&ctx(dir), &args).await
    }

    #[tokio::test]
    async fn single_replacement_matches_claude_codes_capture() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        std::fs::write(&file, "alpha\nbeta\n").unwrap();
        let value = edit(
            dir.path(),
            json!({"file_path": "notes.txt", "old_string": "beta", "new_string": "gamma"}),
        )
        .await
        .unwrap();
        let shown = file.to_string_lossy().into_owned();
        assert_eq!(
            value,
            json!({
                "file_path": shown,
                "old_string": "beta",
                "new_string": "gamma",
                "original_file": "alpha\nbeta\n",
                "replace_all": false,
                "structured_patch": [
                    {"old_start": 1, "old_lines": 2, "new_start": 1, "new_lines": 2,
                     "lines": [" alpha", "-beta", "+gamma"]}
                ]
            })
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "alpha\ngamma\n");
        assert_eq!(
            EditTool.render(&value).unwrap(),
            Rendered {
                content: format!("The file {shown} has been updated successfully."),
                is_error: false
            }
        );
    }

    #[tokio::test]
    async fn multiple_matches_need_replace_all() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x = 1\ny = 2\nx = 3\n").unwrap();
        let err = edit(
            dir.path(),
            json!({"file_path": "f.txt", "old_string": "x =", "new_string": "z ="}),
        )
        .await
        .unwrap_err();
        assert!(err.0.contains("found 2 matches"), "{err}");
        assert!(err.0.contains(file.to_str().unwrap()), "{err}");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "x = 1\ny = 2\nx = 3\n"
        );

        let value = edit(
            dir.path(),
            json!({"file_path": "f.txt", "old_string": "x =", "new_string": "z =", "replace_all": true}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "z = 1\ny = 2\nz = 3\n"
        );
        assert_eq!(value["replace_all"], true);
        assert_eq!(
            value["structured_patch"],
            json!([{"old_start": 1, "old_lines": 3, "new_start": 1, "new_lines": 3,
                    "lines": ["-x = 1", "+z = 1", " y = 2", "-x = 3", "+z = 3"]}])
        );
        EditTool.render(&value).unwrap();
    }

    #[tokio::test]
    async fn missing_string_and_missing_file_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "hello\n").unwrap();
        let err = edit(
            dir.path(),
            json!({"file_path": "f.txt", "old_string": "absent", "new_string": "x"}),
        )
        .await
        .unwrap_err();
        assert!(err.0.contains("not found"), "{err}");
        let err = edit(
            dir.path(),
            json!({"file_path": "nope.txt", "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap_err();
        assert!(err.0.contains("does not exist"), "{err}");
        assert!(
            err.0
                .contains(dir.path().join("nope.txt").to_str().unwrap())
        );
    }

    #[tokio::test]
    async fn identical_strings_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "same\n").unwrap();
        let err = edit(
            dir.path(),
            json!({"file_path": "f.txt", "old_string": "same", "new_string": "same"}),
        )
        .await
        .unwrap_err();
        assert!(err.0.contains("exactly the same"), "{err}");
    }

    #[tokio::test]
    async fn empty_old_string_creates_a_missing_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let value = edit(
            dir.path(),
            json!({"file_path": "new/f.txt", "old_string": "", "new_string": "hi\n"}),
        )
        .await
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("new/f.txt")).unwrap(),
            "hi\n"
        );
        assert_eq!(value["original_file"], "");
        assert_eq!(
            value["structured_patch"],
            json!([{"old_start": 0, "old_lines": 0, "new_start": 1, "new_lines": 1, "lines": ["+hi"]}])
        );
        let err = edit(
            dir.path(),
            json!({"file_path": "new/f.txt", "old_string": "", "new_string": "again"}),
        )
        .await
        .unwrap_err();
        assert!(err.0.contains("old_string is empty"), "{err}");
    }

    #[test]
    fn render_rejects_invalid_values() {
        let valid = json!({
            "file_path": "/f", "old_string": "a", "new_string": "b", "original_file": "a\n",
            "replace_all": false,
            "structured_patch": [{"old_start": 1, "old_lines": 1, "new_start": 1, "new_lines": 1, "lines": ["-a", "+b"]}]
        });
        EditTool.render(&valid).unwrap();
        let mut same = valid.clone();
        same["new_string"] = json!("a");
        let mut bad_counts = valid.clone();
        bad_counts["structured_patch"][0]["old_lines"] = json!(5);
        let mut bad_prefix = valid.clone();
        bad_prefix["structured_patch"][0]["lines"] = json!(["*a", "+b"]);
        let mut missing = valid.clone();
        missing.as_object_mut().unwrap().remove("replace_all");
        let mut camel = valid.clone();
        camel["structuredPatch"] = json!([]);
        for bad in [same, bad_counts, bad_prefix, missing, camel] {
            assert!(EditTool.render(&bad).is_err(), "accepted {bad}");
        }
    }
}
