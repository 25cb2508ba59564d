//! Reading Codex's configuration folders one layer at a time, collecting
//! what the layers add up to before any hook is built from them.

use super::*;

/// What the layers read so far add up to.
pub(super) struct Layers<'d> {
    pub(super) discovery: &'d CodexDiscovery,
    pub(super) notices: Vec<String>,
    pub(super) states: BTreeMap<String, HookStateWire>,
    pub(super) trusted_projects: Vec<PathBuf>,
    pub(super) notify: Option<NotifyConfig>,
    /// The project directory of the layer `notify` came from, if a project's.
    pub(super) notify_project: Option<PathBuf>,
    pub(super) allow_managed_only: bool,
    pub(super) requirement_hooks: Option<(PathBuf, EventsWire)>,
    pub(super) layers: Vec<LayerFiles>,
    /// `[plugins."<name>@<mkt>"] enabled` of every config.toml, lowest layer first.
    pub(super) plugin_layers: Vec<(PathBuf, Vec<(String, bool)>)>,
    /// `[features] plugins`, the last layer that sets it wins (default on).
    pub(super) plugins_feature: Option<(bool, PathBuf)>,
    /// `approval_policy` / `sandbox_mode`: the last layer that sets one wins.
    pub(super) approval: ApprovalSettings,
    pub(super) held_back: Vec<HeldBack>,
}

impl<'d> Layers<'d> {
    pub(super) fn new(discovery: &'d CodexDiscovery) -> Self {
        Layers {
            discovery,
            notices: Vec::new(),
            states: BTreeMap::new(),
            trusted_projects: Vec::new(),
            notify: None,
            notify_project: None,
            allow_managed_only: false,
            requirement_hooks: None,
            layers: Vec::new(),
            plugin_layers: Vec::new(),
            plugins_feature: None,
            approval: ApprovalSettings::default(),
            held_back: Vec::new(),
        }
    }

    /// Reads one layer's `hooks.json` and `config.toml` in `dir`.
    pub(super) fn read_layer(
        &mut self,
        dir: &Path,
        layer: LayerSource,
        project_dir: Option<PathBuf>,
    ) -> Result<(), ConfigError> {
        let json_path = dir.join("hooks.json");
        let toml_path = dir.join("config.toml");
        let mut files = LayerFiles {
            layer,
            json: None,
            toml: None,
            project_dir,
        };
        if let Some(json) = read_json_if_exists(&self.discovery.files, &json_path)? {
            let (events, unknown) = parse_hooks_json(&json_path, &json)?;
            for key in unknown {
                self.notices.push(format!(
                    "ignoring unknown hook event `{key}` in {} (Codex 0.169 ignores it too)",
                    json_path.display()
                ));
            }
            if !events.is_empty() {
                files.json = Some((json_path.clone(), events));
            }
        }
        if let Some(toml) = read_toml_if_exists(&self.discovery.files, &toml_path)? {
            let (config, unknown) = parse_config_toml(&toml_path, &toml)?;
            // A project layer's settings that change how the user's hooks
            // run wait for trust: dsh's workspace trust or Codex's own
            // (user-level `trust_level`, read before any project layer).
            let hold = layer == LayerSource::Project
                && self.discovery.project_settings == ProjectSettings::HoldBack
                && !files.project_dir.as_deref().is_some_and(|dir| {
                    self.trusted_projects.iter().any(|path| {
                        dir == path || self.discovery.cwd.starts_with(path) && dir.starts_with(path)
                    })
                });
            let mut hold_key = |key: &str| {
                self.held_back.push(HeldBack {
                    key: key.to_owned(),
                    file: toml_path.clone(),
                });
            };
            if let Ok(switches) = toml.deserialize::<plugins::PluginSwitches>() {
                let feature = switches.feature();
                let enabled = switches.enabled();
                if hold {
                    if !enabled.is_empty() {
                        hold_key("plugins");
                    }
                    if feature.is_some() {
                        hold_key("features.plugins");
                    }
                } else {
                    self.plugin_layers.push((toml_path.clone(), enabled));
                    if let Some(on) = feature {
                        self.plugins_feature = Some((on, toml_path.clone()));
                    }
                }
            }
            let (policy, sandbox) = if hold {
                if config.approval_policy.is_some() {
                    hold_key("approval_policy");
                }
                if config.sandbox_mode.is_some() {
                    hold_key("sandbox_mode");
                }
                (None, None)
            } else {
                (
                    config.approval_policy.as_deref(),
                    config.sandbox_mode.as_deref(),
                )
            };
            for key in unknown {
                self.notices.push(format!(
                    "ignoring unknown hook event `{key}` in {} (Codex 0.169 ignores it too)",
                    toml_path.display()
                ));
            }
            if let Some(argv) = config.notify
                && !argv.is_empty()
            {
                self.notify = Some(NotifyConfig {
                    argv,
                    origin: toml_path.clone(),
                    layer,
                    // Settled once every layer's trust state is read.
                    trust: TrustState::Untrusted,
                });
                self.notify_project = files.project_dir.clone();
            }
            self.approval
                .apply_layer(&toml_path, policy, sandbox, &mut self.notices);
            if config.allow_managed_hooks_only == Some(true) && layer.managed() {
                self.allow_managed_only = true;
            }
            // Trust state counts only from user-level and managed
            // configuration: a project that could mark itself trusted (or
            // its hooks' hashes) would consent on the user's behalf.
            let counts_trust = match layer {
                LayerSource::Requirements | LayerSource::System | LayerSource::User => true,
                LayerSource::Project => false,
            };
            let own_trust = config
                .projects
                .values()
                .any(|project| project.trust_level.is_some());
            if !counts_trust && own_trust {
                self.notices.push(format!(
                    "ignoring [projects] trust_level in {}: trust counts only from user and managed configuration",
                    toml_path.display()
                ));
            }
            for (path, project) in config.projects {
                if counts_trust && project.trust_level.as_deref() == Some("trusted") {
                    self.trusted_projects.push(PathBuf::from(path));
                }
            }
            if let Some(mut hooks) = config.hooks {
                let state = std::mem::take(&mut hooks.state);
                if counts_trust {
                    self.states.extend(state);
                } else if !state.is_empty() {
                    self.notices.push(format!(
                        "ignoring [hooks.state] in {}: trust and enablement count only from user and managed configuration",
                        toml_path.display()
                    ));
                }
                if !hooks.is_empty() {
                    files.toml = Some((toml_path.clone(), hooks));
                }
            }
        }
        self.layers.push(files);
        Ok(())
    }
}
