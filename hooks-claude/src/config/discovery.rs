//! Where Claude Code settings are looked for: the session's directories and
//! the settings files, in precedence order, that [`super::load`] reads.

use std::path::{Path, PathBuf};

use std::borrow::Cow;

use dsh_files::settings::SettingsStack;

use super::SettingsSource;

/// Where Claude Code settings are looked for, and where the bridge keeps its
/// own state. Build it with [`ClaudeDiscovery::new`] and adjust fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaudeDiscovery {
    /// The project directory (session cwd; `CLAUDE_PROJECT_DIR`).
    pub cwd: PathBuf,
    /// The user's home (`~/.claude/settings.json` lives below it).
    pub home: PathBuf,
    /// The managed-policy directory (`/etc/claude-code` on Linux).
    pub managed_dir: PathBuf,
    /// Extra `--settings FILE`s, in flag order. As with `claude --settings`,
    /// an argument that starts with `{` is the settings JSON itself.
    pub extra_settings: Vec<PathBuf>,
    /// `--plugin-dir DIR`s: plugins loaded for this session only (`<name>@inline`).
    pub plugin_dirs: Vec<PathBuf>,
    /// dsh's state directory for this bridge (`$DSH_HOME/claude`):
    /// `CLAUDE_ENV_FILE`s and spilled hook output go below it.
    pub state_dir: PathBuf,
    /// Where the Claude-format transcript is kept
    /// (`$DSH_HOME/claude/projects/<slug>/`).
    pub transcript_dir: PathBuf,
    /// Whether the project and local settings' `env` and `disableAllHooks`
    /// apply (a trusted workspace) or wait for trust.
    pub project_settings: dsh_hooks::project_settings::ProjectSettings,
    /// The session's reader: each settings file is read from disk once.
    pub files: dsh_files::ConfigFiles,
    /// The session's settings layer stack, when one was built of these
    /// candidates through `files`: the bridge takes its hook switches from
    /// it ([`ClaudeDiscovery::settings_stack`]).
    pub settings: Option<SettingsStack>,
}

impl ClaudeDiscovery {
    /// The standard layout: managed settings in `/etc/claude-code`, state in
    /// `<dsh_home>/claude`, transcripts in `<dsh_home>/claude/projects/<slug>`.
    pub fn new(cwd: impl Into<PathBuf>, home: impl Into<PathBuf>, dsh_home: &Path) -> Self {
        let cwd = cwd.into();
        let state_dir = dsh_home.join("claude");
        let transcript_dir = state_dir.join("projects").join(project_slug(&cwd));
        ClaudeDiscovery {
            cwd,
            home: home.into(),
            managed_dir: PathBuf::from("/etc/claude-code"),
            extra_settings: Vec::new(),
            plugin_dirs: Vec::new(),
            state_dir,
            transcript_dir,
            project_settings: dsh_hooks::project_settings::ProjectSettings::Apply,
            files: dsh_files::ConfigFiles::default(),
            settings: None,
        }
    }

    /// Every settings file this discovery looks at, in precedence order
    /// (managed, managed drop-ins in name order, `--settings`, local,
    /// project, user), whether or not it exists. [`load`](super::load) reads exactly
    /// these; `dsh hooks check` lists them.
    pub fn candidates(&self) -> Vec<(PathBuf, SettingsSource)> {
        let mut candidates: Vec<(PathBuf, SettingsSource)> = Vec::new();
        candidates.push((
            self.managed_dir.join("managed-settings.json"),
            SettingsSource::Managed,
        ));
        let dropin_dir = self.managed_dir.join("managed-settings.d");
        if let Ok(entries) = fs_err::read_dir(&dropin_dir) {
            let mut dropins: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
                .collect();
            dropins.sort();
            candidates.extend(dropins.into_iter().map(|p| (p, SettingsSource::Managed)));
        }
        for extra in &self.extra_settings {
            candidates.push((extra.clone(), SettingsSource::Flag));
        }
        let project = self.cwd.join(".claude");
        candidates.push((project.join("settings.local.json"), SettingsSource::Local));
        candidates.push((project.join("settings.json"), SettingsSource::Project));
        candidates.push((
            self.home.join(".claude").join("settings.json"),
            SettingsSource::User,
        ));
        candidates
    }
}

impl ClaudeDiscovery {
    /// The settings layer stack whose decisions (which files switch hooks
    /// off) the bridge applies: the one handed in, when it is of these
    /// candidates and this trust, else one loaded now through `files`
    /// (whose parse it shares).
    pub fn settings_stack(&self) -> Cow<'_, SettingsStack> {
        let candidates = self.candidates();
        let hold = self.project_settings == dsh_hooks::project_settings::ProjectSettings::HoldBack;
        match &self.settings {
            Some(stack) if stack.is_of(&candidates, hold) => Cow::Borrowed(stack),
            Some(_) | None => Cow::Owned(SettingsStack::load(&self.files, &candidates, hold)),
        }
    }
}

/// Claude Code's per-project folder name (docs/sources.md):
/// the path with every character that is not an ASCII letter or digit
/// replaced by `-`; paths longer than 200 characters are cut to 200 and
/// suffixed with `-` and a hash of the whole path (dsh uses FNV-1a; Claude
/// Code's hash function is not documented).
pub fn project_slug(path: &Path) -> String {
    let text = path.to_string_lossy();
    let slug: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if slug.chars().count() <= 200 {
        return slug;
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let cut: String = slug.chars().take(200).collect();
    format!("{cut}-{hash:x}")
}
