//! Where permissions live on disk: Claude Code's settings layers, the
//! workspace trust flag in `~/.claude.json`, and persisting an "always
//! allow" rule to `.claude/settings.local.json`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::layer::{Behavior, Layer, LayerError, Source};

/// A problem reading or writing a settings file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file's `permissions` block is invalid.
    #[error(transparent)]
    Layer(#[from] LayerError),
    /// The file exists but is not a JSON object, so dsh will not rewrite it.
    #[error("{0}: not a JSON object; refusing to rewrite it")]
    NotAnObject(PathBuf),
}

/// The settings files Claude Code reads permissions from, lowest
/// precedence first: user, project, local.
pub fn settings_paths(home: Option<&Path>, project: &Path) -> Vec<(Source, PathBuf)> {
    let mut out = Vec::new();
    if let Some(h) = home {
        out.push((Source::User, h.join(".claude/settings.json")));
    }
    out.push((Source::Project, project.join(".claude/settings.json")));
    out.push((Source::Local, project.join(".claude/settings.local.json")));
    out
}

/// Reads one layer; a missing file is an empty layer.
pub fn read_layer(source: Source, path: &Path) -> Result<Layer, StoreError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Layer::from_settings_text(
            source,
            path.display().to_string(),
            &text,
        )?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Ok(Layer::empty(source, path.display().to_string()))
        }
        Err(source) => Err(StoreError::Io {
            path: path.to_owned(),
            source,
        }),
    }
}

/// Whether `~/.claude.json` says the user accepted the trust dialog for
/// `project` (`projects.<path>.hasTrustDialogAccepted`). Unreadable or
/// malformed files mean "not trusted": trust is never assumed.
pub fn claude_json_trusts(claude_json: &Path, project: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(claude_json) else {
        return false;
    };
    let Ok(doc) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    let key = project.to_string_lossy();
    doc.get("projects")
        .and_then(|p| p.get(key.as_ref()))
        .and_then(|p| p.get("hasTrustDialogAccepted"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Appends `rule` to `permissions.<behavior>` of the project's
/// `.claude/settings.local.json` (creating it), as Claude Code does for a
/// PermissionRequest answer with `destination: localSettings` or "always
/// allow". Other keys are kept; a rule already there is not duplicated.
/// The file is replaced atomically through a temporary file beside it.
pub fn persist_local_rule(
    project: &Path,
    rule: &str,
    behavior: Behavior,
) -> Result<PathBuf, StoreError> {
    let dir = project.join(".claude");
    let path = dir.join("settings.local.json");
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| StoreError::Io { path, source }
    };
    let mut doc = match std::fs::read_to_string(&path) {
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            _ => return Err(StoreError::NotAnObject(path)),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => return Err(io(&path)(e)),
    };
    let perms = doc
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(perms) = perms else {
        return Err(StoreError::NotAnObject(path));
    };
    let list = perms
        .entry(behavior.key())
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(list) = list else {
        return Err(StoreError::NotAnObject(path));
    };
    if !list.iter().any(|v| v.as_str() == Some(rule)) {
        list.push(Value::String(rule.to_owned()));
    }
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    let mut text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
    text.push('\n');
    let tmp = dir.join(format!(".settings.local.json.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    if let Err(e) = write() {
        // Only our own temporary file is removed, never the user's.
        let _ = std::fs::remove_file(&tmp);
        return Err(io(&path)(e));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persisting_keeps_other_keys_and_does_not_duplicate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let claude = dir.path().join(".claude");
        std::fs::create_dir_all(&claude).expect("mkdir");
        std::fs::write(
            claude.join("settings.local.json"),
            r#"{"hooks":{},"permissions":{"deny":["Read(./secret)"]}}"#,
        )
        .expect("seed");
        let path =
            persist_local_rule(dir.path(), "Bash(touch:*)", Behavior::Allow).expect("persist");
        persist_local_rule(dir.path(), "Bash(touch:*)", Behavior::Allow).expect("persist again");
        let layer = read_layer(Source::Local, &path).expect("reads back");
        let raws: Vec<(&str, Behavior)> = layer
            .rules
            .iter()
            .map(|r| (r.rule.raw.as_str(), r.behavior))
            .collect();
        assert_eq!(
            raws,
            vec![
                ("Read(./secret)", Behavior::Deny),
                ("Bash(touch:*)", Behavior::Allow)
            ]
        );
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert!(doc.get("hooks").is_some());
        // No temporary file left behind.
        assert_eq!(std::fs::read_dir(&claude).expect("ls").count(), 1);
    }

    #[test]
    fn persisting_refuses_a_non_object_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".claude")).expect("mkdir");
        std::fs::write(dir.path().join(".claude/settings.local.json"), "[1]").expect("seed");
        assert!(matches!(
            persist_local_rule(dir.path(), "Bash", Behavior::Allow),
            Err(StoreError::NotAnObject(_))
        ));
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".claude/settings.local.json")).expect("kept"),
            "[1]"
        );
    }

    #[test]
    fn trust_comes_from_has_trust_dialog_accepted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cj = dir.path().join(".claude.json");
        assert!(!claude_json_trusts(&cj, Path::new("/p")));
        std::fs::write(
            &cj,
            r#"{"projects":{"/p":{"hasTrustDialogAccepted":true},"/q":{}}}"#,
        )
        .expect("seed");
        assert!(claude_json_trusts(&cj, Path::new("/p")));
        assert!(!claude_json_trusts(&cj, Path::new("/q")));
        assert!(!claude_json_trusts(&cj, Path::new("/r")));
    }

    #[test]
    fn missing_settings_are_empty_layers_and_paths_are_ordered() {
        let dir = tempfile::tempdir().expect("tempdir");
        let paths = settings_paths(Some(Path::new("/h")), dir.path());
        let sources: Vec<Source> = paths.iter().map(|(s, _)| *s).collect();
        assert_eq!(sources, vec![Source::User, Source::Project, Source::Local]);
        let layer = read_layer(Source::Project, &dir.path().join("nope.json")).expect("empty");
        assert!(layer.rules.is_empty());
    }
}
