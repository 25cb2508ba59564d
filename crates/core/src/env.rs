//! The process environment a session reads, taken once.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::{Error, Result};

/// HOME, DSH_HOME, CODEX_HOME and every other variable dsh consults (the
/// provider's, `DSH_STRICT_HOOKS`, the `${VAR}`s of MCP configurations),
/// snapshotted once. An empty value is unset, everywhere: `DSH_HOME=` means
/// `~/.dsh` for sessions and `dsh hooks trust` alike.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

impl Env {
    /// The current process's environment (variables that are not UTF-8
    /// are left out, as `std::env::var` would refuse them).
    pub fn from_process() -> Self {
        Env::from_vars(std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        }))
    }

    /// An environment of exactly these variables (tests, embedders).
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Env {
            vars: vars
                .into_iter()
                .filter(|(_, value)| !value.is_empty())
                .collect(),
        }
    }

    /// A variable's value; `None` when unset or empty.
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }

    /// Every variable of the snapshot.
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// A lookup function over this snapshot, for the crates that take one.
    pub fn lookup(&self) -> impl Fn(&str) -> Option<String> + '_ {
        |name| self.var(name)
    }

    /// `$HOME`, if set.
    pub fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }

    /// `$HOME`, or `/` when it is unset (where configuration is looked up).
    pub fn home_or_root(&self) -> PathBuf {
        self.home().unwrap_or_else(|| PathBuf::from("/"))
    }

    /// dsh's home: `$DSH_HOME`, else `~/.dsh`.
    pub fn dsh_home(&self) -> Result<PathBuf> {
        dsh_provider::resolve_dsh_home(&self.lookup())
            .ok_or_else(|| Error::msg("cannot find dsh's home: set DSH_HOME or HOME"))
    }

    /// dsh's home, or `/.dsh` without HOME (for read-only lookups).
    pub fn dsh_home_or_default(&self) -> PathBuf {
        self.dsh_home()
            .unwrap_or_else(|_| self.home_or_root().join(".dsh"))
    }

    /// Codex's home: `$CODEX_HOME`, else `~/.codex`.
    pub fn codex_home(&self) -> PathBuf {
        self.var("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| self.home_or_root().join(".codex"))
    }

    /// Whether `DSH_STRICT_HOOKS` asks headless runs to refuse untrusted
    /// project hooks and servers.
    pub fn strict_hooks(&self) -> bool {
        self.var("DSH_STRICT_HOOKS").is_some_and(|value| {
            matches!(
                value.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    }
}

/// The current directory, canonicalized (as it is when the link cannot be
/// resolved).
pub fn current_dir() -> crate::Result<std::path::PathBuf> {
    use crate::ResultExt as _;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        Env::from_vars(
            vars.iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned())),
        )
    }

    #[test]
    fn an_empty_value_is_unset_everywhere() {
        let empty = env(&[("HOME", "/h"), ("DSH_HOME", ""), ("CODEX_HOME", "")]);
        assert_eq!(empty.dsh_home().unwrap(), PathBuf::from("/h/.dsh"));
        assert_eq!(empty.codex_home(), PathBuf::from("/h/.codex"));
        assert_eq!(empty.var("DSH_HOME"), None);
        let set = env(&[("HOME", "/h"), ("DSH_HOME", "/d"), ("CODEX_HOME", "/c")]);
        assert_eq!(set.dsh_home().unwrap(), PathBuf::from("/d"));
        assert_eq!(set.codex_home(), PathBuf::from("/c"));
        assert!(env(&[]).dsh_home().is_err());
        assert!(env(&[("DSH_STRICT_HOOKS", "yes")]).strict_hooks());
        assert!(!env(&[("DSH_STRICT_HOOKS", "0")]).strict_hooks());
    }
}
