//! `$DSH_HOME/config.toml`, read once: `[provider]`, `[compaction]`,
//! `[queue]`. Each table is checked strictly where it is used, and errors
//! name the file and the table or key.

use std::path::{Path, PathBuf};

use dsh_agent::QueueMode;
use serde::Deserialize;
use serde::de::{DeserializeOwned, IgnoredAny};

use crate::compact::{AutocompactFlag, CompactionTable};
use crate::{Env, Error, Result};

/// `[queue]`. Strict, like `[compaction]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueueTable {
    /// `all` (default) or `one-at-a-time`.
    mode: Option<QueueModeName>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum QueueModeName {
    All,
    OneAtATime,
}

/// The file read for one table only (the file's other keys are not looked
/// at, so a mistake in one table spoils no other).
#[derive(Default, Deserialize)]
struct CompactionOnly {
    #[serde(default)]
    compaction: CompactionTable,
}

#[derive(Default, Deserialize)]
struct QueueOnly {
    #[serde(default)]
    queue: QueueTable,
}

#[derive(Default, Deserialize)]
struct ToolsOnly {
    #[serde(default)]
    tools: ToolsTable,
}

/// `[tools]`. Strict, like `[compaction]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsTable {
    /// Whether `web_fetch` is offered (default true; `false` where dsh has
    /// no network).
    web_fetch: Option<bool>,
}

/// The top-level prompt keys of `config.toml`: the terminal's (and every
/// session's) equivalent of `-p --system-prompt` / `--append-system-prompt`.
#[derive(Debug, Default, Deserialize)]
struct PromptKeys {
    /// Replaces dsh's built-in system prompt.
    #[serde(default)]
    system_prompt: Option<String>,
    /// Added at the end of the system prompt, after the project's instructions.
    #[serde(default)]
    append_system_prompt: Option<String>,
}

/// Every key `config.toml` accepts, as `table.key` (top-level keys bare),
/// read from the code's own tables: the docs test compares it with the
/// reference page.
pub fn config_keys() -> Vec<String> {
    /// The top level, strict for the probe only (other parts of dsh may
    /// read other tables).
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct TopLevel {
        provider: IgnoredAny,
        compaction: IgnoredAny,
        queue: IgnoredAny,
        tools: IgnoredAny,
        system_prompt: String,
        append_system_prompt: String,
    }
    let mut keys = Vec::new();
    for top in dsh_provider::accepted_keys::<TopLevel>() {
        let table = match top.as_str() {
            "provider" => dsh_provider::provider_table_keys(),
            "compaction" => dsh_provider::accepted_keys::<CompactionTable>(),
            "queue" => dsh_provider::accepted_keys::<QueueTable>(),
            "tools" => dsh_provider::accepted_keys::<ToolsTable>(),
            _ => {
                keys.push(top);
                continue;
            }
        };
        keys.extend(table.into_iter().map(|key| format!("{top}.{key}")));
    }
    keys
}

/// `$DSH_HOME/config.toml` (optional).
#[derive(Debug, Clone)]
pub struct DshConfig {
    path: PathBuf,
    text: Option<String>,
}

impl DshConfig {
    /// Reads `dsh_home/config.toml`; a missing file is an empty config.
    pub fn load(dsh_home: &Path) -> Result<Self> {
        let path = dsh_home.join(dsh_provider::CONFIG_FILE_NAME);
        let text = dsh_provider::read_config_text(&path)?;
        Ok(DshConfig { path, text })
    }

    /// A config with no file behind it.
    pub fn empty(dsh_home: &Path) -> Self {
        DshConfig {
            path: dsh_home.join(dsh_provider::CONFIG_FILE_NAME),
            text: None,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `[provider]` with the environment's overrides and `--model`.
    pub fn provider(
        &self,
        env: &Env,
        model: Option<&str>,
    ) -> Result<dsh_provider::ProviderSettings> {
        self.provider_for(env, model, None)
    }

    /// `[provider]` with the environment's overrides, `--model` and
    /// `--provider-api`.
    pub fn provider_for(
        &self,
        env: &Env,
        model: Option<&str>,
        api: Option<dsh_provider::ProviderApi>,
    ) -> Result<dsh_provider::ProviderSettings> {
        let mut settings = dsh_provider::ProviderSettings::resolve(
            &self.path,
            self.text.as_deref(),
            &env.lookup(),
            api,
        )?;
        if let Some(model) = model {
            model.clone_into(&mut settings.model);
            settings.origins.model = dsh_provider::SettingOrigin::Flag("--model".to_owned());
        }
        Ok(settings)
    }

    /// The model [`DshConfig::provider_for`] points at, its client built
    /// (a missing key is an error): what a front end checks before it
    /// offers sessions.
    pub fn model_for(
        &self,
        env: &Env,
        model: Option<&str>,
        api: Option<dsh_provider::ProviderApi>,
    ) -> Result<std::sync::Arc<dyn dsh_model::Model>> {
        let settings = self.provider_for(env, model, api)?;
        Ok(std::sync::Arc::new(dsh_provider::HttpProvider::new(
            settings,
        )?))
    }

    /// The keys `T` reads (each with its default when the file or key is
    /// missing); an error names the file and `what`.
    fn read<T: DeserializeOwned + Default>(&self, what: &str) -> Result<T> {
        match &self.text {
            None => Ok(T::default()),
            Some(text) => toml::from_str::<T>(text).map_err(|error| Error::Context {
                context: format!("{}: {what}", self.path.display()),
                source: Box::new(error),
            }),
        }
    }

    /// Applies the system prompt keys (`system_prompt`,
    /// `append_system_prompt`) to `agent`; a command-line flag given
    /// (`replace`, `append`) wins over its key.
    pub fn apply_system_prompt(
        &self,
        agent: &mut dsh_agent::Agent,
        replace: Option<&str>,
        append: Option<&str>,
    ) -> Result<()> {
        let keys: PromptKeys = self.read("system_prompt / append_system_prompt")?;
        if let Some(prompt) = replace.map(str::to_owned).or(keys.system_prompt) {
            agent.replace_system_prompt(prompt);
        }
        if let Some(text) = append.map(str::to_owned).or(keys.append_system_prompt) {
            agent.append_system_prompt(text);
        }
        Ok(())
    }

    /// `[tools] web_fetch`: whether the session offers `web_fetch`
    /// (default yes).
    pub fn web_fetch(&self) -> Result<bool> {
        let table = self.read::<ToolsOnly>("[tools]")?.tools;
        Ok(table.web_fetch.unwrap_or(true))
    }

    /// `[compaction]`.
    pub(crate) fn compaction_table(&self) -> Result<CompactionTable> {
        Ok(self.read::<CompactionOnly>("[compaction]")?.compaction)
    }

    /// The session's automatic compaction (see `compact::configured`).
    pub fn compaction(
        &self,
        flag: Option<AutocompactFlag>,
        model: &str,
    ) -> Result<dsh_agent::AutoCompact> {
        crate::compact::configured(flag, model, self)
    }

    /// The steering queue's mode: `flag` wins, then `[queue] mode`, then `all`.
    pub fn queue_mode(&self, flag: Option<QueueMode>) -> Result<QueueMode> {
        if let Some(flag) = flag {
            return Ok(flag);
        }
        let table = self.read::<QueueOnly>("[queue]")?.queue;
        Ok(match table.mode {
            None | Some(QueueModeName::All) => QueueMode::All,
            Some(QueueModeName::OneAtATime) => QueueMode::OneAtATime,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn config(text: &str) -> (tempfile::TempDir, DshConfig) {
        let home = tempfile::tempdir().unwrap();
        fs_err::write(home.path().join("config.toml"), text).unwrap();
        let config = DshConfig::load(home.path()).unwrap();
        (home, config)
    }

    #[test]
    fn one_read_serves_every_table() {
        let (home, config) = config(
            "[provider]\nmodel = \"m1\"\n[compaction]\nthreshold = 0.5\n[queue]\nmode = \"one-at-a-time\"\n",
        );
        // The file is gone: the tables come from the one read.
        fs_err::remove_file(home.path().join("config.toml")).unwrap();
        let env = Env::from_vars([("DSH_API_KEY".to_owned(), "k".to_owned())]);
        assert_eq!(config.provider(&env, None).unwrap().model, "m1");
        assert_eq!(config.provider(&env, Some("m2")).unwrap().model, "m2");
        assert_eq!(
            config
                .compaction(Some(AutocompactFlag::Window(10_000)), "m1")
                .unwrap()
                .limit(),
            Some(5_000)
        );
        assert_eq!(config.queue_mode(None).unwrap(), QueueMode::OneAtATime);
        assert_eq!(
            config.queue_mode(Some(QueueMode::All)).unwrap(),
            QueueMode::All
        );
    }

    #[test]
    fn errors_name_the_file_and_the_table() {
        let (_home, config) = config("[compaction]\nthreshold = 2.0\n[queue]\nmode = \"later\"\n");
        let error = config.compaction(None, "m").unwrap_err().to_string();
        assert!(
            error.contains("config.toml: [compaction] threshold"),
            "{error}"
        );
        let error = config.queue_mode(None).unwrap_err().to_string();
        assert!(error.contains("config.toml: [queue]"), "{error}");
        let missing = DshConfig::load(std::path::Path::new("/nonexistent-dsh-home")).unwrap();
        assert!(missing.web_fetch().unwrap());
        assert_eq!(missing.queue_mode(None).unwrap(), QueueMode::All);
    }

    /// The error and its causes, as `dsh` prints them.
    fn chain(error: &Error) -> String {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            text.push_str(&format!(": {cause}"));
            source = cause.source();
        }
        text
    }

    #[test]
    fn a_wrong_table_spoils_only_its_own_reads() {
        let (_home, wrong) = config(
            "[tools]\nweb_fetch = \"no\"\n[compaction]\nthreshold = 0.5\n[queue]\nmode = \"one-at-a-time\"\n",
        );
        let error = chain(&wrong.web_fetch().unwrap_err());
        assert!(error.contains("config.toml: [tools]"), "{error}");
        // The error points at the line.
        assert!(
            error.contains("line 2") && error.contains("web_fetch"),
            "{error}"
        );
        assert_eq!(wrong.queue_mode(None).unwrap(), QueueMode::OneAtATime);
        assert_eq!(
            wrong
                .compaction(Some(AutocompactFlag::Window(10_000)), "m1")
                .unwrap()
                .limit(),
            Some(5_000)
        );
        let (_home, extra) = config("[tools]\nweb_fetch = false\nsurprise = 1\n");
        let error = chain(&extra.web_fetch().unwrap_err());
        assert!(
            error.contains("line 3") && error.contains("surprise"),
            "{error}"
        );
        assert_eq!(extra.queue_mode(None).unwrap(), QueueMode::All);
    }
}
