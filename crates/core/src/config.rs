//! `$DSH_HOME/config.toml`, read once: `[provider]`, `[compaction]`,
//! `[queue]`. Each table is checked strictly where it is used, and errors
//! name the file and the table or key.

use std::path::{Path, PathBuf};

use dsh_agent::QueueMode;
use serde::Deserialize;

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

/// The tables dsh reads; other keys belong to later parts of dsh.
#[derive(Debug, Default, Deserialize)]
struct Tables {
    #[serde(default)]
    compaction: Option<toml::Value>,
    #[serde(default)]
    queue: Option<toml::Value>,
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
        let mut settings = dsh_provider::ProviderSettings::from_config_text(
            &self.path,
            self.text.as_deref(),
            &env.lookup(),
        )?;
        if let Some(model) = model {
            model.clone_into(&mut settings.model);
        }
        Ok(settings)
    }

    fn tables(&self, table: &str) -> Result<Tables> {
        match &self.text {
            None => Ok(Tables::default()),
            Some(text) => toml::from_str::<Tables>(text).map_err(|error| Error::Context {
                context: format!("{}: [{table}]", self.path.display()),
                source: Box::new(error),
            }),
        }
    }

    /// `[compaction]`.
    pub(crate) fn compaction_table(&self) -> Result<CompactionTable> {
        let context = || format!("{}: [compaction]", self.path.display());
        match self.tables("compaction")?.compaction {
            None => Ok(CompactionTable::default()),
            Some(value) => value.try_into().map_err(|error| Error::Context {
                context: context(),
                source: Box::new(error),
            }),
        }
    }

    /// The session's automatic compaction (see [`crate::compact::configured`]).
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
        let table: QueueTable = match self.tables("queue")?.queue {
            None => QueueTable::default(),
            Some(value) => value.try_into().map_err(|error| Error::Context {
                context: format!("{}: [queue]", self.path.display()),
                source: Box::new(error),
            })?,
        };
        Ok(match table.mode {
            None | Some(QueueModeName::All) => QueueMode::All,
            Some(QueueModeName::OneAtATime) => QueueMode::OneAtATime,
        })
    }
}
