//! `glob`: finds files whose path matches a glob pattern.
//!
//! The pattern is matched (with `globset`, `*` not crossing `/`, `**`
//! crossing directories, `{a,b}` alternatives) against each file's path
//! relative to the search root — `path`, default the session cwd. An
//! absolute pattern searches from its longest literal directory prefix
//! instead. Which files are seen is the rule shared with `grep` (see the
//! `walk` module): ignore files honoured, hidden files kept, version-control
//! directories skipped, symlinks not followed. Results are sorted by modification
//! time, newest first (ties by path), and capped at [`MAX_RESULTS`].

use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use super::walk::files_under;
use super::{TypedTool, blocking, display_path, resolve_root, spec};
use crate::{Rendered, ToolContext, ToolError};
use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use globset::GlobBuilder;
use serde::{Deserialize, Serialize};
use serde_json::json;

const NAME: &str = "glob";

/// Most paths returned by one call.
pub const MAX_RESULTS: usize = 100;

/// The `glob` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobTool;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

/// The canonical value of a `glob` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobOutput {
    /// Absolute paths, newest first.
    pub filenames: Vec<String>,
    /// How many paths `filenames` holds.
    pub num_files: u64,
    /// More files matched than were returned.
    pub truncated: bool,
}

#[async_trait]
impl TypedTool for GlobTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = GlobOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Finds files by glob pattern (e.g. `**/*.rs`, `src/*.{ts,tsx}`), matched against \
             paths relative to `path` (default: the working directory). Returns up to 100 \
             paths, most recently modified first.",
            json!({
                "pattern": {"type": "string", "description": "The glob pattern."},
                "path": {"type": "string", "description": "Directory to search in (default: the working directory)."}
            }),
            &["pattern"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<GlobOutput, ToolError> {
        let (root, pattern) = if Path::new(&args.pattern).is_absolute() {
            split_absolute_pattern(&args.pattern)
        } else {
            // globset matches `src/a.rs`, never `./src/a.rs`.
            let mut pattern = args.pattern.as_str();
            while let Some(rest) = pattern.strip_prefix("./") {
                pattern = rest;
            }
            (
                resolve_root(NAME, ctx, args.path.as_deref()).await?,
                pattern.to_owned(),
            )
        };
        let matcher = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|err| ToolError(format!("{NAME}: invalid pattern {:?}: {err}", args.pattern)))?
            .compile_matcher();
        let cancel = ctx.cancel.clone();
        let output = blocking(NAME, move || {
            if !root.is_dir() {
                return Err(ToolError(format!(
                    "{NAME}: {} is not a directory",
                    root.display()
                )));
            }
            let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
            for path in files_under(NAME, &root, &cancel)? {
                let Ok(relative) = path.strip_prefix(&root) else {
                    continue;
                };
                if !matcher.is_match(relative) {
                    continue;
                }
                let modified = fs_err::symlink_metadata(&path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                found.push((modified, path));
            }
            found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let truncated = found.len() > MAX_RESULTS;
            let filenames: Vec<String> = found
                .into_iter()
                .take(MAX_RESULTS)
                .map(|(_, path)| display_path(&path))
                .collect();
            Ok(GlobOutput {
                num_files: filenames.len() as u64,
                filenames,
                truncated,
            })
        })
        .await?;
        Ok(output)
    }

    fn overlap(&self, args: &Self::Args, cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::reads(
            cwd,
            args.path
                .as_deref()
                .filter(|path| !path.is_empty())
                .unwrap_or("."),
        )
    }

    fn show(&self, output: GlobOutput) -> Result<Rendered, ToolError> {
        if output.num_files != output.filenames.len() as u64 {
            return Err(ToolError(format!(
                "{NAME}: invalid result value: num_files is {} but filenames has {}",
                output.num_files,
                output.filenames.len()
            )));
        }
        let mut content = if output.filenames.is_empty() {
            "No files found".to_owned()
        } else {
            output.filenames.join("\n")
        };
        if output.truncated {
            content.push_str(
                "\n(Results are truncated. Consider using a more specific path or pattern.)",
            );
        }
        Ok(Rendered {
            content,
            is_error: false,
        })
    }
}

/// Splits `/a/b/**/*.rs` into the root `/a/b` and the pattern `**/*.rs`.
fn split_absolute_pattern(pattern: &str) -> (PathBuf, String) {
    let is_meta = |s: &str| s.contains(['*', '?', '[', ']', '{', '}']);
    let mut root = PathBuf::new();
    let mut rest: Vec<String> = Vec::new();
    for component in Path::new(pattern).components() {
        let text = component.as_os_str().to_string_lossy();
        if rest.is_empty() && !is_meta(&text) {
            root.push(component.as_os_str());
        } else if !matches!(component, Component::RootDir) {
            rest.push(text.into_owned());
        }
    }
    if rest.is_empty() {
        // A literal path: search its directory for exactly that name.
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = root.parent().map(Path::to_path_buf).unwrap_or_default();
        return (parent, globset_escape(&name));
    }
    (root, rest.join("/"))
}

fn globset_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}') {
            escaped.push('[');
            escaped.push(c);
            escaped.push(']');
        } else {
            escaped.push(c);
        }
    }
    escaped
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use pretty_assertions::assert_eq;
    use serde_json::Value;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    fn ctx(dir: &Path) -> ToolContext {
        ToolContext::new(dir, CancellationToken::new())
    }

    fn touch(path: &Path, age_secs: u64) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, "x").unwrap();
        let time = SystemTime::now() - Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    async fn glob(dir: &Path, args: Value) -> GlobOutput {
        serde_json::from_value(GlobTool.run(&ctx(dir), &args).await.unwrap()).unwrap()
    }

    #[tokio::test]
    async fn matches_relative_to_root_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        touch(&root.join("old.rs"), 300);
        touch(&root.join("src/new.rs"), 10);
        touch(&root.join("src/mid.rs"), 100);
        touch(&root.join("src/readme.md"), 5);
        touch(&root.join(".git/objects/x.rs"), 1);

        let all = glob(root, json!({"pattern": "**/*.rs"})).await;
        let abs = |p: &str| root.join(p).to_string_lossy().into_owned();
        assert_eq!(
            all,
            GlobOutput {
                filenames: vec![abs("src/new.rs"), abs("src/mid.rs"), abs("old.rs")],
                num_files: 3,
                truncated: false,
            }
        );
        let top = glob(root, json!({"pattern": "*.rs"})).await;
        assert_eq!(top.filenames, vec![abs("old.rs")]);
        let dotted = glob(root, json!({"pattern": "./src/*.rs"})).await;
        assert_eq!(dotted.filenames, vec![abs("src/new.rs"), abs("src/mid.rs")]);
        let in_src = glob(root, json!({"pattern": "*.{rs,md}", "path": "src"})).await;
        assert_eq!(
            in_src.filenames,
            vec![abs("src/readme.md"), abs("src/new.rs"), abs("src/mid.rs")]
        );
        let absolute = glob(
            root,
            json!({"pattern": format!("{}/src/*.rs", root.display())}),
        )
        .await;
        assert_eq!(
            absolute.filenames,
            vec![abs("src/new.rs"), abs("src/mid.rs")]
        );

        let rendered = GlobTool
            .render(&serde_json::to_value(&all).unwrap())
            .unwrap();
        assert_eq!(
            rendered.content,
            format!(
                "{}\n{}\n{}",
                abs("src/new.rs"),
                abs("src/mid.rs"),
                abs("old.rs")
            )
        );
    }

    #[tokio::test]
    async fn results_are_capped_at_100() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..130 {
            std::fs::write(dir.path().join(format!("f{i}.txt")), "x").unwrap();
        }
        let out = glob(dir.path(), json!({"pattern": "*.txt"})).await;
        assert_eq!(out.num_files, 100);
        assert_eq!(out.filenames.len(), 100);
        assert!(out.truncated);
        let rendered = GlobTool
            .render(&serde_json::to_value(&out).unwrap())
            .unwrap();
        assert!(
            rendered
                .content
                .ends_with("more specific path or pattern.)")
        );
    }

    #[tokio::test]
    async fn no_match_and_bad_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let none = GlobTool
            .run(&ctx(dir.path()), &json!({"pattern": "*.nothing"}))
            .await
            .unwrap();
        assert_eq!(GlobTool.render(&none).unwrap().content, "No files found");
        let err = GlobTool
            .run(&ctx(dir.path()), &json!({"pattern": "a[", "path": "."}))
            .await
            .unwrap_err();
        assert!(err.0.contains("invalid pattern"), "{err}");
        let err = GlobTool
            .run(
                &ctx(dir.path()),
                &json!({"pattern": "*", "path": "missing"}),
            )
            .await
            .unwrap_err();
        assert!(
            err.0.contains(dir.path().join("missing").to_str().unwrap()),
            "{err}"
        );
    }

    #[tokio::test]
    async fn cancelled_walk_stops() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "x").unwrap();
        let context = ctx(dir.path());
        context.cancel.cancel();
        assert!(
            GlobTool
                .run(&context, &json!({"pattern": "*"}))
                .await
                .is_err()
        );
    }

    #[test]
    fn absolute_patterns_split_at_the_first_wildcard() {
        assert_eq!(
            split_absolute_pattern("/a/b/**/*.rs"),
            (PathBuf::from("/a/b"), "**/*.rs".to_owned())
        );
        assert_eq!(
            split_absolute_pattern("/a/b/c.txt"),
            (PathBuf::from("/a/b"), "c.txt".to_owned())
        );
    }

    #[test]
    fn render_rejects_invalid_values() {
        for bad in [
            json!({"filenames": ["/a"], "num_files": 2, "truncated": false}),
            json!({"filenames": "/a", "num_files": 1, "truncated": false}),
            json!({"filenames": [], "num_files": 0}),
            json!({"filenames": [], "numFiles": 0, "truncated": false}),
        ] {
            assert!(GlobTool.render(&bad).is_err(), "accepted {bad}");
        }
    }
}
