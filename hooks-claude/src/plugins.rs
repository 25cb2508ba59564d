//! Claude Code plugin discovery, as Claude Code 2.1.328 lays plugins out on
//! disk (captures `pl_*`).
//!
//! A plugin is active when `enabledPlugins["<plugin>@<marketplace>"]` is
//! `true` after the per-key settings merge (managed > `--settings` > local >
//! project > user; a `false` in a higher layer switches off a plugin a lower
//! layer enables). Its files are found through
//! `~/.claude/plugins/installed_plugins.json` (the install record and cache
//! path) and the marketplace it came from (`known_marketplaces.json` plus
//! settings `extraKnownMarketplaces`): for a `directory` marketplace the
//! plugin runs from the marketplace's source directory, otherwise from the
//! installed cache copy. `--plugin-dir DIR` loads one plugin for the session
//! as `<name>@inline`.
//!
//! Nothing here is fatal: a plugin that is enabled but cannot be loaded
//! (not installed, no `hooks/hooks.json`, invalid JSON) becomes a start-up
//! notice naming the file, so a broken plugin never goes silent and never
//! stops a session Claude Code would run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use dsh_hook_runner::{Captured, HookExit, HookRun};
use serde::Deserialize;

use dsh_files::settings::SettingsSource;

use crate::config::{ClaudeDiscovery, HookHandler};
use crate::output::wire::{Entries, Field, WireType};
use crate::settings_wire::{MarketWire, SettingsWire};

/// Whose decision made a plugin active: this is what dsh's hook trust keys on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginScope {
    /// Enabled by a layer the user controls (user settings, `--settings`,
    /// managed policy) or loaded with `--plugin-dir`: its hooks count as
    /// user-installed, trusted like user settings.
    User,
    /// Enabled only by the project's own settings (`.claude/settings.json`,
    /// `.claude/settings.local.json`): its hooks are project hooks for trust.
    Project,
}

/// Which plugin a hook came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginOrigin {
    /// `<plugin>@<marketplace>` (`<plugin>@inline` for `--plugin-dir`).
    pub id: String,
    /// The plugin's name.
    pub name: String,
    /// The marketplace's name (`inline` for `--plugin-dir`).
    pub marketplace: String,
    /// `CLAUDE_PLUGIN_ROOT`: where the plugin's files are.
    pub root: PathBuf,
    /// `CLAUDE_PLUGIN_DATA`: `~/.claude/plugins/data/<plugin>-<marketplace>`.
    pub data_dir: PathBuf,
    /// The settings file whose `enabledPlugins` switched it on (`None` for `--plugin-dir`).
    pub enabled_in: Option<PathBuf>,
    /// Whose decision it was.
    pub scope: PluginScope,
    /// The settings layer its hooks are listed under: the layer of
    /// `enabled_in` (`--settings` for `--plugin-dir`).
    pub layer: SettingsSource,
}

impl PluginOrigin {
    /// The `hooks/hooks.json` of the plugin.
    pub fn hooks_file(&self) -> PathBuf {
        self.root.join("hooks").join("hooks.json")
    }
}

/// One settings layer as discovery sees it.
pub(crate) struct Layer<'a> {
    pub path: &'a Path,
    pub source: SettingsSource,
    pub settings: &'a SettingsWire,
}

/// A plugin whose hooks file was read.
pub(crate) struct LoadedPlugin {
    pub origin: PluginOrigin,
    pub hooks_file: PathBuf,
    /// The file, read as settings (only its `hooks` count).
    pub settings: SettingsWire,
}

/// What discovery found: loadable plugins and notices about the others.
#[derive(Default)]
pub(crate) struct Discovered {
    pub plugins: Vec<LoadedPlugin>,
    pub notices: Vec<String>,
}

/// Precedence rank of a layer: lower wins.
fn rank(source: SettingsSource) -> u8 {
    match source {
        SettingsSource::Managed => 0,
        SettingsSource::Flag => 1,
        SettingsSource::Local => 2,
        SettingsSource::Project => 3,
        SettingsSource::User => 4,
    }
}

fn is_project_layer(source: SettingsSource) -> bool {
    match source {
        SettingsSource::Local | SettingsSource::Project => true,
        SettingsSource::Managed | SettingsSource::Flag | SettingsSource::User => false,
    }
}

/// The merged `enabledPlugins` entry of one plugin.
struct Enabled {
    on: bool,
    /// The file whose value won.
    winner: PathBuf,
    winner_source: SettingsSource,
    /// The highest-precedence non-project file that set it `true`, if any.
    user_file: Option<(PathBuf, SettingsSource)>,
}

/// Per-key merge of `enabledPlugins`. `layers` are in configuration order
/// (managed first, then `--settings`, local, project, user); among managed
/// files a later drop-in overrides an earlier one.
fn merged_enabled(layers: &[Layer<'_>], notices: &mut Vec<String>) -> BTreeMap<String, Enabled> {
    let mut out: BTreeMap<String, Enabled> = BTreeMap::new();
    for layer in layers {
        let map = match &layer.settings.enabled_plugins {
            Field::Absent => continue,
            Field::Valid(map) => map,
            Field::Invalid { .. } => {
                notices.push(format!(
                    "`enabledPlugins` in {} is not an object; ignored",
                    layer.path.display()
                ));
                continue;
            }
        };
        for (id, value) in map.iter() {
            // Claude Code also accepts a list of versions for a plugin; any
            // non-false value enables it.
            let Some(on) = value.on() else {
                continue;
            };
            let entry = out.entry(id.clone()).or_insert_with(|| Enabled {
                on,
                winner: layer.path.to_owned(),
                winner_source: layer.source,
                user_file: None,
            });
            let replaces = rank(layer.source) < rank(entry.winner_source)
                || (layer.source == SettingsSource::Managed
                    && entry.winner_source == SettingsSource::Managed);
            if replaces {
                entry.on = on;
                entry.winner = layer.path.to_owned();
                entry.winner_source = layer.source;
            }
            if on && !is_project_layer(layer.source) && entry.user_file.is_none() {
                entry.user_file = Some((layer.path.to_owned(), layer.source));
            }
        }
    }
    out
}

/// A marketplace's source, as far as dsh needs it.
#[derive(Debug, Clone)]
enum MarketSource {
    /// A local directory: plugins run from it, not from the cache.
    Directory(PathBuf),
    /// Anything else (GitHub, git URL): plugins run from the cache.
    Fetched,
}

fn market_source(market: &Field<MarketWire>, home: &Path) -> Option<MarketSource> {
    let source = market.valid()?.source.valid()?;
    match source.source.as_str() {
        Some("directory") => source
            .path
            .as_str()
            .map(|p| MarketSource::Directory(expand_home(p, home))),
        Some(_) => Some(MarketSource::Fetched),
        None => None,
    }
}

fn expand_home(path: &str, home: &Path) -> PathBuf {
    PathBuf::from(&*dsh_hook_runner::vars::tilde(path, || {
        home.to_str().map(Into::into)
    }))
}

enum JsonFile<T> {
    Missing,
    Unreadable(String),
    /// Valid JSON, read as a `T` (`Invalid` when it is not one).
    Parsed(Field<T>),
}

fn read_json<T: WireType>(files: &dsh_files::ConfigFiles, path: &Path) -> JsonFile<T> {
    // Through the session's reader, parsed once; the `Unreadable` message
    // below names the path itself.
    let parsed = match files.json(path) {
        Ok(Some(parsed)) => parsed,
        Ok(None) => return JsonFile::Missing,
        Err(error) => {
            return JsonFile::Unreadable(format!("cannot read {}: {error}", path.display()));
        }
    };
    match parsed.document() {
        Ok(json) => JsonFile::Parsed(Field::read(json)),
        Err(error) => JsonFile::Unreadable(format!(
            "invalid JSON in {}:{}:{}: {}",
            path.display(),
            error.line,
            error.column,
            error.message
        )),
    }
}

/// Reads a JSON file that may be absent as a `T`; an unreadable one
/// becomes a notice that says what follows from it (`consequence`), one of
/// another shape reads as nothing.
fn optional_json<T: WireType>(
    files: &dsh_files::ConfigFiles,
    path: &Path,
    consequence: &str,
    notices: &mut Vec<String>,
) -> Option<T> {
    match read_json(files, path) {
        JsonFile::Missing => None,
        JsonFile::Unreadable(why) => {
            notices.push(format!("{why}; {consequence}"));
            None
        }
        JsonFile::Parsed(json) => json.into_valid(),
    }
}

/// The plugin directory a `directory` marketplace lists for `name`
/// (`<dir>/.claude-plugin/marketplace.json`, `plugins[].source`).
fn directory_plugin_root(
    files: &dsh_files::ConfigFiles,
    market_dir: &Path,
    name: &str,
    notices: &mut Vec<String>,
) -> Option<PathBuf> {
    let manifest = market_dir.join(".claude-plugin").join("marketplace.json");
    let manifest: ManifestWire = optional_json(
        files,
        &manifest,
        "its plugins run from their installed copies",
        notices,
    )?;
    let entry = manifest
        .plugins
        .valid()?
        .iter()
        .find(|p| p.valid().and_then(|p| p.name.as_str()) == Some(name))?;
    let source = entry.valid()?.source.as_str()?;
    Some(market_dir.join(source.trim_start_matches("./")))
}

/// A directory marketplace's `marketplace.json`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ManifestWire {
    plugins: Field<Vec<Field<ManifestPluginWire>>>,
}

/// One plugin it lists.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ManifestPluginWire {
    name: Field<String>,
    /// Its directory, relative to the marketplace's.
    source: Field<String>,
}

impl WireType for ManifestWire {
    const JSON: Option<&'static str> = Some("object");
}

impl WireType for ManifestPluginWire {
    const JSON: Option<&'static str> = Some("object");
}

/// `installed_plugins.json`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct InstalledWire {
    /// Per plugin id: one install record or a list of them.
    plugins: Field<Entries<InstallRecords>>,
}

/// A plugin's install records: a list, or one record on its own. An entry
/// that is not an object is a record with no project and no path.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum InstallRecords {
    /// `[record, …]`.
    List(Vec<Field<InstallRecordWire>>),
    /// `record`.
    One(Field<InstallRecordWire>),
}

/// `.claude-plugin/plugin.json` of a `--plugin-dir` plugin.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PluginManifestWire {
    name: Field<String>,
}

impl WireType for PluginManifestWire {
    const JSON: Option<&'static str> = Some("object");
}

/// One install record.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct InstallRecordWire {
    /// The project it was installed for (none: every project).
    project_path: Field<String>,
    install_path: Field<String>,
}

impl WireType for InstalledWire {
    const JSON: Option<&'static str> = Some("object");
}

impl WireType for InstallRecordWire {
    const JSON: Option<&'static str> = Some("object");
}

/// The install path `installed_plugins.json` records for `id` in this project.
fn install_path(
    installed: Option<&InstalledWire>,
    id: &str,
    cwd: &Path,
    home: &Path,
) -> Option<PathBuf> {
    let records = installed?.plugins.valid()?.get(id)?;
    let records: &[Field<InstallRecordWire>] = match records {
        InstallRecords::List(list) => list,
        InstallRecords::One(record) => std::slice::from_ref(record),
    };
    // A record that is not an object has no project and no path.
    let none = InstallRecordWire::default();
    records
        .iter()
        .map(|record| record.valid().unwrap_or(&none))
        .find(|record| match record.project_path.as_str() {
            Some(project) => Path::new(project) == cwd,
            None => true,
        })
        .and_then(|record| record.install_path.as_str())
        .map(|path| expand_home(path, home))
}

fn data_dir(home: &Path, name: &str, marketplace: &str) -> PathBuf {
    home.join(".claude")
        .join("plugins")
        .join("data")
        .join(format!("{name}-{marketplace}"))
}

/// Reads a plugin's `hooks/hooks.json`; a plugin without one (it ships
/// only commands or skills) or with a broken one becomes a notice.
fn load_hooks(files: &dsh_files::ConfigFiles, origin: PluginOrigin, out: &mut Discovered) {
    let hooks_file = origin.hooks_file();
    match read_json::<SettingsWire>(files, &hooks_file) {
        JsonFile::Parsed(settings) => out.plugins.push(LoadedPlugin {
            origin,
            hooks_file,
            settings: settings.into_valid().unwrap_or_default(),
        }),
        JsonFile::Missing => out.notices.push(format!(
            "plugin {} has no hooks file {}; none of its hooks run",
            origin.id,
            hooks_file.display()
        )),
        JsonFile::Unreadable(why) => out
            .notices
            .push(format!("plugin {} not loaded: {why}", origin.id)),
    }
}

/// Discovers the active plugins for `discovery` given its settings `layers`.
pub(crate) fn discover(discovery: &ClaudeDiscovery, layers: &[Layer<'_>]) -> Discovered {
    let mut out = Discovered::default();
    let home = &discovery.home;
    let plugins_dir = home.join(".claude").join("plugins");

    let enabled = merged_enabled(layers, &mut out.notices);
    // Where a marketplace is, for a plugin the project's settings enable
    // (`markets`: every layer) and for one the user enabled
    // (`user_markets`: the project's own layers left out, so a repository
    // that names a marketplace like the user's cannot swap in its own
    // directory under a plugin that runs as the user's).
    let mut markets: BTreeMap<String, MarketSource> = BTreeMap::new();
    let mut user_markets: BTreeMap<String, MarketSource> = BTreeMap::new();
    // Settings `extraKnownMarketplaces` first, so the registry written by
    // `claude plugin marketplace add` (with the resolved location) wins.
    for layer in layers.iter().rev() {
        let Some(extra) = layer.settings.extra_known_marketplaces.valid() else {
            continue;
        };
        for (name, value) in extra.iter() {
            if let Some(source) = market_source(value, home) {
                if !is_project_layer(layer.source) {
                    user_markets.insert(name.clone(), source.clone());
                }
                markets.insert(name.clone(), source);
            }
        }
    }
    let known_file = plugins_dir.join("known_marketplaces.json");
    if let Some(known) = optional_json::<Entries<Field<MarketWire>>>(
        &discovery.files,
        &known_file,
        "plugins of the marketplaces it lists run from their installed copies",
        &mut out.notices,
    ) {
        for (name, value) in known.iter() {
            if let Some(source) = market_source(value, home) {
                user_markets.insert(name.clone(), source.clone());
                markets.insert(name.clone(), source);
            }
        }
    }
    let installed_file = plugins_dir.join("installed_plugins.json");
    let installed: Option<InstalledWire> = optional_json(
        &discovery.files,
        &installed_file,
        "no installed plugin is loaded",
        &mut out.notices,
    );

    for (id, entry) in &enabled {
        if !entry.on {
            continue;
        }
        let Some((name, marketplace)) = id.rsplit_once('@') else {
            out.notices.push(format!(
                "enabledPlugins key `{id}` in {} is not `<plugin>@<marketplace>`; ignored",
                entry.winner.display()
            ));
            continue;
        };
        let Some(cache) = install_path(installed.as_ref(), id, &discovery.cwd, home) else {
            out.notices.push(format!(
                "plugin {id} is enabled in {} but not installed (no entry in {}); its hooks do not run",
                entry.winner.display(),
                installed_file.display()
            ));
            continue;
        };
        let (scope, enabled_in, layer) = match &entry.user_file {
            Some((file, source)) => (PluginScope::User, file.clone(), *source),
            None => (
                PluginScope::Project,
                entry.winner.clone(),
                entry.winner_source,
            ),
        };
        let source = match scope {
            PluginScope::User => {
                if let (Some(MarketSource::Directory(theirs)), mine) =
                    (markets.get(marketplace), user_markets.get(marketplace))
                    && !matches!(mine, Some(MarketSource::Directory(dir)) if dir == theirs)
                {
                    out.notices.push(format!(
                        "the project's settings name marketplace `{marketplace}` at {}; plugin {id}, which you enabled, does not run from there",
                        theirs.display()
                    ));
                }
                user_markets.get(marketplace)
            }
            PluginScope::Project => markets.get(marketplace),
        };
        let root = match source {
            Some(MarketSource::Directory(dir)) => {
                directory_plugin_root(&discovery.files, dir, name, &mut out.notices)
                    .unwrap_or(cache)
            }
            Some(MarketSource::Fetched) | None => cache,
        };
        load_hooks(
            &discovery.files,
            PluginOrigin {
                id: id.clone(),
                name: name.to_owned(),
                marketplace: marketplace.to_owned(),
                data_dir: data_dir(home, name, marketplace),
                root,
                enabled_in: Some(enabled_in),
                scope,
                layer,
            },
            &mut out,
        );
    }

    for dir in &discovery.plugin_dirs {
        let manifest = dir.join(".claude-plugin").join("plugin.json");
        let name = optional_json::<PluginManifestWire>(
            &discovery.files,
            &manifest,
            "the directory name is used",
            &mut out.notices,
        )
        .and_then(|json| json.name.into_valid())
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "plugin".to_owned());
        load_hooks(
            &discovery.files,
            PluginOrigin {
                id: format!("{name}@inline"),
                data_dir: data_dir(home, &name, "inline"),
                name,
                marketplace: "inline".to_owned(),
                root: dir.clone(),
                enabled_in: None,
                scope: PluginScope::User,
                layer: SettingsSource::Flag,
            },
            &mut out,
        );
    }
    out
}

/// The braced variable Claude Code rewrites in display texts and refuses in
/// settings-file hooks.
const ROOT_VAR: &str = "${CLAUDE_PLUGIN_ROOT}";

/// The variables a plugin hook runs with (only plugin hooks get them; the
/// shell expands `${CLAUDE_PLUGIN_ROOT}` itself, the command text is not
/// rewritten: `pl_root_probe`). The data directory is created first so a
/// hook can write to it on its first run.
pub(crate) fn hook_env(plugin: &PluginOrigin) -> Vec<(String, String)> {
    if let Err(error) = fs_err::create_dir_all(&plugin.data_dir) {
        tracing::warn!(%error, plugin = %plugin.id, "cannot create CLAUDE_PLUGIN_DATA");
    }
    vec![
        (
            "CLAUDE_PLUGIN_ROOT".to_owned(),
            plugin.root.to_string_lossy().into_owned(),
        ),
        (
            "CLAUDE_PLUGIN_DATA".to_owned(),
            plugin.data_dir.to_string_lossy().into_owned(),
        ),
    ]
}

/// A settings-file hook whose command mentions `${CLAUDE_PLUGIN_ROOT}` is
/// not run: it fails open with exit code 1 and Claude Code's exact stderr
/// (`pl_root_probe`). Returns that run, or `None` for a hook that runs.
pub(crate) fn refuse_unassociated_root(handler: &HookHandler) -> Option<HookRun> {
    if handler.plugin.is_some() {
        return None;
    }
    let command = handler.command_text();
    if !command.contains(ROOT_VAR) {
        return None;
    }
    let stderr = format!(
        "Failed to run: Hook command references {ROOT_VAR} but the hook is not associated with a plugin. This variable is only available in hooks defined in a plugin's hooks/hooks.json file, not in settings.json. Command: {command}"
    )
    .into_bytes();
    Some(HookRun {
        exit: HookExit::Exited(1),
        stdout: Captured::default(),
        stderr: Captured {
            total_bytes: stderr.len() as u64,
            bytes: stderr,
        },
        duration: Duration::ZERO,
        pid: None,
        timeout: Duration::ZERO,
        record_limit: dsh_hook_runner::RunnerConfig::DEFAULT_CAPTURE_LIMIT,
    })
}

/// The `CMD` shown in an exit-2 text: for a plugin hook the braced
/// `${CLAUDE_PLUGIN_ROOT}` reads as the root path (other variables as
/// written); everywhere else the command exactly as configured.
pub(crate) fn display_command(handler: &HookHandler, exit2: bool) -> String {
    let command = handler.command_text();
    match (&handler.plugin, exit2) {
        (Some(plugin), true) => command.replace(ROOT_VAR, &plugin.root.to_string_lossy()),
        _ => command,
    }
}

/// The sentence Claude Code appends to a plugin hook's exit-2 block.
pub(crate) fn attribution(plugin: &PluginOrigin) -> String {
    format!("\nThis hook comes from the {} plugin.", plugin.id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn layer<'a>(path: &'a Path, source: SettingsSource, settings: &'a SettingsWire) -> Layer<'a> {
        Layer {
            path,
            source,
            settings,
        }
    }

    fn settings(json: Value) -> SettingsWire {
        serde_json::from_value(json).unwrap()
    }

    fn installed(json: Value) -> Option<InstalledWire> {
        serde_json::from_value::<Field<InstalledWire>>(json)
            .unwrap()
            .into_valid()
    }

    /// `installed_plugins.json` is read leniently: one record or a list,
    /// the first record for this project (or for every project) wins, and a
    /// record that is not an object names no path.
    #[test]
    fn install_records_are_read_leniently() {
        let home = Path::new("/h");
        let cwd = Path::new("/p");
        let installed = installed(json!({"plugins": {
            "a@m": [{"projectPath": "/other", "installPath": "/x"}, {"projectPath": "/p", "installPath": "~/a"}],
            "b@m": {"installPath": "/b"},
            "c@m": ["junk", {"installPath": "/c"}],
            "d@m": [{"projectPath": 5, "installPath": "/d"}],
        }}));
        let installed = installed.as_ref();
        assert_eq!(
            install_path(installed, "a@m", cwd, home),
            Some(PathBuf::from("/h/a"))
        );
        assert_eq!(
            install_path(installed, "b@m", cwd, home),
            Some(PathBuf::from("/b"))
        );
        assert_eq!(install_path(installed, "c@m", cwd, home), None);
        assert_eq!(
            install_path(installed, "d@m", cwd, home),
            Some(PathBuf::from("/d"))
        );
        assert_eq!(install_path(installed, "e@m", cwd, home), None);
        assert_eq!(
            install_path(
                super::tests::installed(json!({"plugins": []})).as_ref(),
                "a@m",
                cwd,
                home
            ),
            None
        );
        assert!(super::tests::installed(Value::Null).is_none());
        assert_eq!(install_path(None, "a@m", cwd, home), None);
    }

    #[test]
    fn marketplace_sources_are_directories_or_fetched() {
        let home = Path::new("/h");
        let read = |value: Value| match market_source(&serde_json::from_value(value).unwrap(), home)
        {
            Some(MarketSource::Directory(dir)) => Some(Some(dir)),
            Some(MarketSource::Fetched) => Some(None),
            None => None,
        };
        assert_eq!(
            read(json!({"source": {"source": "directory", "path": "~/m"}})),
            Some(Some(PathBuf::from("/h/m")))
        );
        assert_eq!(
            read(json!({"source": {"source": "github", "repo": "o/r"}})),
            Some(None)
        );
        assert_eq!(read(json!({"source": {"source": "directory"}})), None);
        assert_eq!(read(json!({"source": "directory"})), None);
        assert_eq!(read(json!({"source": {"source": 1}})), None);
        assert_eq!(read(json!(["source"])), None);
    }

    #[test]
    fn project_false_switches_off_a_user_enabled_plugin() {
        let user = settings(json!({"enabledPlugins": {"a@m": true, "b@m": true}}));
        let project = settings(json!({"enabledPlugins": {"b@m": false}}));
        let layers = [
            layer(
                Path::new("/p/.claude/settings.json"),
                SettingsSource::Project,
                &project,
            ),
            layer(
                Path::new("/h/.claude/settings.json"),
                SettingsSource::User,
                &user,
            ),
        ];
        let mut notices = Vec::new();
        let merged = merged_enabled(&layers, &mut notices);
        assert!(merged["a@m"].on);
        assert!(!merged["b@m"].on);
        assert_eq!(merged["b@m"].winner, Path::new("/p/.claude/settings.json"));
    }

    #[test]
    fn a_plugin_enabled_only_by_the_project_is_project_scoped() {
        let project = settings(json!({"enabledPlugins": {"a@m": true}}));
        let user = settings(json!({"enabledPlugins": {"b@m": true}}));
        let local = settings(json!({"enabledPlugins": {"b@m": true}}));
        let layers = [
            layer(Path::new("/p/l.json"), SettingsSource::Local, &local),
            layer(Path::new("/p/s.json"), SettingsSource::Project, &project),
            layer(Path::new("/h/s.json"), SettingsSource::User, &user),
        ];
        let merged = merged_enabled(&layers, &mut Vec::new());
        assert_eq!(merged["a@m"].user_file, None);
        assert_eq!(
            merged["b@m"].user_file,
            Some((PathBuf::from("/h/s.json"), SettingsSource::User))
        );
    }

    /// A settings hook and a plugin hook with the same `${CLAUDE_PLUGIN_ROOT}`
    /// command: the settings one is refused as captured (`pl_root_probe`), the
    /// plugin one runs, shows its root in exit-2 texts and names its plugin.
    #[test]
    fn root_variable_in_settings_and_plugin_hooks() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = tmp.path().join("proj");
        let command = "sh ${CLAUDE_PLUGIN_ROOT}/x.sh '${CLAUDE_PLUGIN_DATA}'";
        let hooks =
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}});
        let write = |path: &Path, value: &Value| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, value.to_string()).unwrap();
        };
        write(&project.join(".claude/settings.json"), &hooks);
        let plugin_dir = tmp.path().join("p");
        write(&plugin_dir.join("hooks/hooks.json"), &hooks);
        write(
            &plugin_dir.join(".claude-plugin/plugin.json"),
            &json!({"name": "p"}),
        );
        let mut discovery = ClaudeDiscovery::new(&project, &home, &tmp.path().join("dsh"));
        discovery.managed_dir = tmp.path().join("managed");
        discovery.plugin_dirs = vec![plugin_dir.clone()];
        let config = crate::load_with_options(&discovery, crate::ClaudeOptions::default()).unwrap();
        let selected = config.select(crate::HookEvent::Stop, None);
        assert_eq!(selected.len(), 2, "no dedup across settings and plugin");
        let (settings, plugin) = (selected[0], selected[1]);
        assert!(settings.plugin.is_none());

        let refused = refuse_unassociated_root(settings).expect("refused");
        assert_eq!(refused.exit, HookExit::Exited(1));
        assert_eq!(
            refused.stderr.text(),
            format!(
                "Failed to run: Hook command references ${{CLAUDE_PLUGIN_ROOT}} but the hook is not associated with a plugin. This variable is only available in hooks defined in a plugin's hooks/hooks.json file, not in settings.json. Command: {command}"
            )
        );
        assert!(refuse_unassociated_root(plugin).is_none());

        assert_eq!(display_command(settings, true), command);
        assert_eq!(display_command(plugin, false), command);
        assert_eq!(
            display_command(plugin, true),
            format!("sh {}/x.sh '${{CLAUDE_PLUGIN_DATA}}'", plugin_dir.display())
        );
        let origin = plugin.plugin.as_ref().unwrap();
        assert_eq!(
            attribution(origin),
            "\nThis hook comes from the p@inline plugin."
        );
        let env = hook_env(origin);
        assert_eq!(
            env[0],
            (
                "CLAUDE_PLUGIN_ROOT".to_owned(),
                plugin_dir.display().to_string()
            )
        );
        assert!(origin.data_dir.is_dir(), "data dir created");
    }

    #[test]
    fn the_last_managed_drop_in_wins() {
        let base = settings(json!({"enabledPlugins": {"a@m": true}}));
        let dropin = settings(json!({"enabledPlugins": {"a@m": false}}));
        let user = settings(json!({"enabledPlugins": {"a@m": true}}));
        let layers = [
            layer(Path::new("/etc/m.json"), SettingsSource::Managed, &base),
            layer(
                Path::new("/etc/m.d/1.json"),
                SettingsSource::Managed,
                &dropin,
            ),
            layer(Path::new("/h/s.json"), SettingsSource::User, &user),
        ];
        assert!(!merged_enabled(&layers, &mut Vec::new())["a@m"].on);
    }
}
