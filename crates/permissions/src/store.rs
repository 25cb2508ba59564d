//! Where permissions live on disk: Claude Code's settings layers, the
//! workspace trust flag in `~/.claude.json`, and persisting an "always
//! allow" rule to `.claude/settings.local.json`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use dsh_files::settings::{SettingsLayer, SettingsSource, SettingsStack, inline_settings};

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

/// The permission layers of a session's settings layer stack (its one
/// parse of each file), lowest precedence first: user, project, local,
/// then the `--settings` layers in flag order (they rank with the command
/// line, as in Claude Code; inline `--settings '{…}'` JSON is named
/// `--settings`). A missing file is an empty layer. Managed policy layers
/// come in too (`policySettings`, the highest precedence): an
/// organisation's `deny` rules bite whatever the other files allow.
pub fn stack_layers(stack: &SettingsStack) -> Result<Vec<Layer>, StoreError> {
    let mut layers = Vec::new();
    let files = stack.layers().iter().rev();
    for layer in files.filter(|layer| layer.source != SettingsSource::Flag) {
        if let Some(layer) = stack_layer(layer)? {
            layers.push(layer);
        }
    }
    for layer in stack.layers() {
        if layer.source == SettingsSource::Flag
            && let Some(layer) = stack_layer(layer)?
        {
            layers.push(layer);
        }
    }
    Ok(layers)
}

/// One settings layer's permissions.
fn stack_layer(layer: &SettingsLayer) -> Result<Option<Layer>, StoreError> {
    let source = match layer.source {
        SettingsSource::Managed => Source::Policy,
        SettingsSource::Flag => Source::CliArg,
        SettingsSource::Local => Source::Local,
        SettingsSource::Project => Source::Project,
        SettingsSource::User => Source::User,
    };
    let origin = match layer.source {
        SettingsSource::Flag if inline_settings(&layer.path).is_some() => "--settings".to_owned(),
        SettingsSource::Flag
        | SettingsSource::Managed
        | SettingsSource::Local
        | SettingsSource::Project
        | SettingsSource::User => layer.path.display().to_string(),
    };
    if let Some(error) = layer.read_error() {
        return Err(StoreError::Io {
            path: layer.path.clone(),
            source: error,
        });
    }
    Ok(Some(match &layer.json {
        Some(json) => Layer::from_settings(source, origin, json)?,
        None => Layer::empty(source, origin),
    }))
}

/// Reads one layer from disk as it is now (a settings file that changed
/// during the session); a missing file is an empty layer.
pub fn read_layer(source: Source, path: &Path) -> Result<Layer, StoreError> {
    // StoreError::Io names the path itself (fs-err would name it twice).
    match dsh_files::ConfigFiles::default().json(path) {
        Ok(Some(json)) => Ok(Layer::from_settings(
            source,
            path.display().to_string(),
            &json,
        )?),
        Ok(None) => Ok(Layer::empty(source, path.display().to_string())),
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
    claude_json_trusts_with(&dsh_files::ConfigFiles::default(), claude_json, project)
}

/// [`claude_json_trusts`] through a session's reader.
pub fn claude_json_trusts_with(
    files: &dsh_files::ConfigFiles,
    claude_json: &Path,
    project: &Path,
) -> bool {
    // Any failure means "not trusted"; the error itself is not shown.
    let Ok(Some(json)) = files.json(claude_json) else {
        return false;
    };
    let Ok(doc) = json.document() else {
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
/// The file is replaced atomically with [`dsh_session::write_atomic`]
/// (0600, through a fresh temporary file beside it). A repository's
/// planted links do not carry the write elsewhere: a `settings.local.json`
/// that is a symbolic link, or a `.claude` that links out of the project,
/// is refused.
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
    // StoreError::Io names the path itself (fs-err would name it twice).
    #[allow(clippy::disallowed_methods)]
    let read = std::fs::read_to_string(&path);
    let mut doc = match read {
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
    refuse_link_out_of(project, &dir).map_err(io(&dir))?;
    fs_err::create_dir_all(&dir).map_err(io(&dir))?;
    let mut text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
    text.push('\n');
    // A fresh temp file beside it (never a planted link), 0600, renamed
    // over the file; a settings file that is itself a link is refused.
    dsh_session::write_atomic(&path, text.as_bytes(), 0o600).map_err(io(&path))?;
    Ok(path)
}

/// Refuses `dir` when it is a symbolic link that leads out of `project`.
fn refuse_link_out_of(project: &Path, dir: &Path) -> std::io::Result<()> {
    match fs_err::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {}
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    }
    let inside = match (fs_err::canonicalize(dir), fs_err::canonicalize(project)) {
        (Ok(real), Ok(project)) => real.starts_with(project),
        _ => false,
    };
    if inside {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a symbolic link that leads out of the project (or nowhere); dsh does not write through it",
        ))
    }
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
    fn persisting_never_writes_through_a_planted_temp_link() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().expect("tempdir");
        let project = root.path().join("proj");
        let claude = project.join(".claude");
        std::fs::create_dir_all(&claude).expect("mkdir");
        let victim = root.path().join("victim");
        std::fs::write(&victim, "precious").expect("seed");
        // The name dsh used to write with `File::create`.
        let planted = claude.join(format!(".settings.local.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).expect("plant");
        let path = persist_local_rule(&project, "Bash(ls:*)", Behavior::Allow).expect("persist");
        assert_eq!(
            std::fs::read_to_string(&victim).expect("victim"),
            "precious"
        );
        assert!(
            std::fs::symlink_metadata(&planted)
                .expect("still there")
                .file_type()
                .is_symlink()
        );
        let mode = std::fs::metadata(&path)
            .expect("written")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let layer = read_layer(Source::Local, &path).expect("reads back");
        assert_eq!(layer.rules.len(), 1);
        // Only the settings file and the planted link: no temp left.
        assert_eq!(std::fs::read_dir(&claude).expect("ls").count(), 2);
    }

    #[test]
    fn persisting_refuses_links_that_carry_the_write_elsewhere() {
        let root = tempfile::tempdir().expect("tempdir");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&outside).expect("mkdir");
        let victim = outside.join("settings.json");
        std::fs::write(&victim, "{}").expect("seed");

        // `.claude/settings.local.json` -> a JSON object elsewhere.
        let a = root.path().join("a");
        std::fs::create_dir_all(a.join(".claude")).expect("mkdir");
        std::os::unix::fs::symlink(&victim, a.join(".claude/settings.local.json")).expect("link");
        let error = persist_local_rule(&a, "Bash", Behavior::Allow).expect_err("refused");
        assert!(error.to_string().contains("symbolic link"), "{error}");
        assert_eq!(std::fs::read_to_string(&victim).expect("kept"), "{}");

        // `.claude` -> a directory outside the project.
        let b = root.path().join("b");
        std::fs::create_dir_all(&b).expect("mkdir");
        std::os::unix::fs::symlink(&outside, b.join(".claude")).expect("link");
        let error = persist_local_rule(&b, "Bash", Behavior::Allow).expect_err("refused");
        assert!(error.to_string().contains("out of the project"), "{error}");
        assert!(!outside.join("settings.local.json").exists());

        // A `.claude` linked within the project is the user's own layout.
        let c = root.path().join("c");
        std::fs::create_dir_all(c.join("config")).expect("mkdir");
        std::os::unix::fs::symlink(c.join("config"), c.join(".claude")).expect("link");
        persist_local_rule(&c, "Bash", Behavior::Allow).expect("inside is fine");
        assert!(c.join("config/settings.local.json").is_file());
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
    fn a_missing_settings_file_is_an_empty_layer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let layer = read_layer(Source::Project, &dir.path().join("nope.json")).expect("empty");
        assert!(layer.rules.is_empty());
    }
}
