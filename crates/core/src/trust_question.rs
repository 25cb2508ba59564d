//! The one trust question: everything a project brings that waits for the
//! person's trust (hooks of every dialect, permission `allow` rules,
//! settings `env`, MCP servers, plugins), named together and answered once
//! per project. Every front end asks it ([`SessionSpec::project_offer`]):
//! the terminal in [`SessionSpec::ask_in_terminal`], ACP through
//! `session/request_permission`; headless runs keep their policy
//! ([`SessionSpec::decide_headless`]).
//!
//! The three answers:
//! - trust: what `dsh hooks trust` does, the hooks and the workspace,
//!   stored in `$DSH_HOME/trust.json` ([`SessionSpec::trust_project`]);
//! - this session only: the same, stored nowhere
//!   ([`SessionSpec::trust_project_this_session`]);
//! - no: nothing of it runs or applies ([`SessionSpec::decline_project`]).
//!
//! After a yes the session is resolved again, so the project's `allow`
//! rules and settings apply at once. A hook changed between the question
//! and the answer was not asked about: it does not run.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use dsh_hooks::lenient::Lenient;
use dsh_hooks::wire::Entries;
use dsh_trust::{TrustStatus, TrustStore, UntrustedHook};
use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::perms::WorkspaceTrust;
use crate::spec::McpConsent;
use crate::{Inputs, Result, SessionSpec};

/// What a project brings that waits for the person's trust.
#[derive(Debug, Clone, Default)]
pub struct ProjectOffer {
    /// Project hooks nobody trusted yet (every dialect).
    pub hooks: Vec<UntrustedHook>,
    /// Project `permissions.allow` rules, with the file (dropped until the
    /// workspace is trusted).
    pub allow_rules: Vec<(String, PathBuf)>,
    /// Project settings `env` variable names, with the file (held back
    /// until the workspace is trusted).
    pub env: Vec<(String, PathBuf)>,
    /// Project MCP servers nobody approved.
    pub servers: Vec<McpConsent>,
    /// Plugins the project's settings enable, with the file.
    pub plugins: Vec<(String, PathBuf)>,
}

impl ProjectOffer {
    /// Nothing waits: no question.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
            && self.allow_rules.is_empty()
            && self.env.is_empty()
            && self.servers.is_empty()
            && self.plugins.is_empty()
    }

    /// The question's text: every item, where it comes from, what a hook
    /// runs. Ends with a newline.
    pub fn describe(&self, project: &Path) -> String {
        let show = |path: &Path| crate::trust::show_path(&path.display().to_string(), project);
        let mut out = format!(
            "This project ({}) brings configuration you have not trusted yet:\n",
            project.display()
        );
        if !self.hooks.is_empty() {
            let mut per_dialect: Vec<(&str, usize)> = Vec::new();
            for hook in &self.hooks {
                let name = hook.dialect.as_str();
                match per_dialect.iter_mut().find(|(d, _)| *d == name) {
                    Some((_, n)) => *n += 1,
                    None => per_dialect.push((name, 1)),
                }
            }
            let counts: Vec<String> = per_dialect
                .iter()
                .map(|(dialect, n)| format!("{n} {dialect}"))
                .collect();
            out.push_str(&format!(
                "- hooks ({}): they run these commands on your machine:\n",
                counts.join(", ")
            ));
            let mut text = Vec::new();
            // Writing to a Vec cannot fail.
            let _ = crate::trust::describe(&mut text, &self.hooks, project);
            out.push_str(&String::from_utf8_lossy(&text));
        }
        if !self.allow_rules.is_empty() {
            out.push_str("- permission rules that allow tool calls without asking:\n");
            for (rule, file) in &self.allow_rules {
                out.push_str(&format!("    allow {rule}  (from {})\n", show(file)));
            }
        }
        if !self.env.is_empty() {
            out.push_str("- environment variables for hooks and tools (settings `env`):\n");
            for (name, file) in &self.env {
                out.push_str(&format!("    {name}  (from {})\n", show(file)));
            }
        }
        if !self.servers.is_empty() {
            out.push_str("- MCP servers (starting one runs its command):\n");
            for server in &self.servers {
                out.push_str(&format!(
                    "    `{}`: {}  (from {})\n",
                    server.name,
                    server.command,
                    show(&server.origin)
                ));
            }
        }
        if !self.plugins.is_empty() {
            out.push_str("- plugins the project enables:\n");
            for (plugin, file) in &self.plugins {
                out.push_str(&format!("    {plugin}  (from {})\n", show(file)));
            }
        }
        out
    }
}

/// The project's Claude Code settings files (shared, then local).
/// Allow rules, env names and enabled plugins of the project's settings
/// layers, from the session's settings layer stack (the parse that runs).
/// A file that does not parse offers nothing here: loading the session
/// reports it.
fn settings_items(settings: &dsh_files::settings::SettingsStack, offer: &mut ProjectOffer) {
    // The project layer first, then the local one, as they were offered.
    let mut project: Vec<&dsh_files::settings::SettingsLayer> = settings
        .layers()
        .iter()
        .filter(|layer| layer.source.is_project())
        .collect();
    project.reverse();
    for layer in project {
        let file = layer.path.clone();
        let Some(Ok(doc)) = layer.json.as_ref().map(dsh_files::Json::document) else {
            continue;
        };
        let keys = OfferedKeys::deserialize(doc).unwrap_or_default();
        let allow = keys
            .permissions
            .0
            .and_then(|permissions| permissions.allow.0);
        for rule in allow.into_iter().flatten().filter_map(|rule| rule.0) {
            offer.allow_rules.push((rule, file.clone()));
        }
        for name in keys.env.0.unwrap_or_default().keys() {
            offer.env.push((name.clone(), file.clone()));
        }
        for (plugin, on) in keys.enabled_plugins.0.unwrap_or_default().iter() {
            if on.0 == Some(true) {
                offer.plugins.push((plugin.clone(), file.clone()));
            }
        }
    }
}

/// The keys of a project settings file the question lists; a key of
/// another type offers nothing.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct OfferedKeys {
    permissions: Lenient<AllowRules>,
    env: Lenient<Entries<IgnoredAny>>,
    enabled_plugins: Lenient<Entries<Lenient<bool>>>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct AllowRules {
    allow: Lenient<Vec<Lenient<String>>>,
}

/// What the person answered the trust question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectAnswer {
    /// Trust it, stored as `dsh hooks trust` stores it.
    Trust,
    /// Trust it for this session only.
    ThisSession,
    /// Nothing of it runs or applies.
    Decline,
}

impl SessionSpec {
    /// What this project brings that waits for trust: the untrusted hooks,
    /// and (in a workspace nobody trusted) its allow rules, settings `env`,
    /// unapproved MCP servers and plugins. Empty: nothing to ask.
    pub fn project_offer(&self) -> ProjectOffer {
        let mut offer = ProjectOffer {
            hooks: self.untrusted_hooks.clone(),
            servers: self.consent.clone(),
            ..ProjectOffer::default()
        };
        if self.workspace == WorkspaceTrust::Untrusted {
            settings_items(&self.settings, &mut offer);
        }
        offer
    }

    /// Resolves the session again after trust changed, so the project's
    /// rules, settings and servers apply now. `asked`: the hashes of the
    /// hooks the question named; `runs`: those allowed to run. When the
    /// configuration changed while the question was open (a hook not asked
    /// about appeared), the parse that was asked about runs instead, and a
    /// hook not asked about never runs. Returns the origins left out.
    fn resolve_again(&mut self, asked: &[String], runs: &[String]) -> Result<Vec<String>> {
        let mut fresh = SessionSpec::resolve(Inputs {
            env: &self.env,
            config: &self.config,
            flags: &self.flags,
            cwd: &self.cwd,
            policy: self.policy,
        })?;
        fresh.sources.attachments = self.sources.attachments.clone();
        fresh
            .sources
            .excluded_hooks
            .extend(self.sources.excluded_hooks.iter().cloned());
        let unchanged = fresh
            .untrusted_hooks
            .iter()
            .all(|hook| asked.contains(&hook.hash));
        let left_out: Vec<String> = if unchanged {
            fresh
                .untrusted_hooks
                .iter()
                .filter(|hook| !runs.contains(&hook.hash))
                .map(|hook| hook.origin.clone())
                .collect()
        } else {
            // The files changed under the question: run what was asked about.
            let left_out: Vec<String> = self
                .untrusted_hooks
                .iter()
                .filter(|hook| !runs.contains(&hook.hash))
                .map(|hook| hook.origin.clone())
                .collect();
            let servers = std::mem::take(&mut fresh.sources.mcp_servers);
            fresh.hooks = self.hooks.clone();
            fresh.sources = self.sources.clone();
            fresh.sources.mcp_servers = servers;
            left_out
        };
        fresh.skip_hooks(&left_out);
        *self = fresh;
        Ok(left_out)
    }

    /// Trust: stores the waiting hooks and the workspace in `trust.json`,
    /// as `dsh hooks trust` does, and resolves the session again so the
    /// project's rules and settings apply now. Returns the file written.
    pub fn trust_project(&mut self) -> Result<PathBuf> {
        let mut store = TrustStore::load(&self.sources.dsh_home)?;
        for hook in &self.untrusted_hooks {
            store.trust(hook);
        }
        store.trust_project(&self.cwd);
        store.save()?;
        let hashes: Vec<String> = self
            .untrusted_hooks
            .iter()
            .map(|hook| hook.hash.clone())
            .collect();
        self.resolve_again(&hashes, &hashes)?;
        Ok(store.path().to_owned())
    }

    /// This session only: the waiting hooks run (a hook changed since it
    /// was trusted does not) and the workspace counts as trusted until the
    /// session ends; nothing is stored. Returns the origins left out.
    pub fn trust_project_this_session(&mut self) -> Result<Vec<String>> {
        let asked: Vec<String> = self
            .untrusted_hooks
            .iter()
            .map(|hook| hook.hash.clone())
            .collect();
        let runs: Vec<String> = self
            .untrusted_hooks
            .iter()
            .filter(|hook| hook.status != TrustStatus::Changed)
            .map(|hook| hook.hash.clone())
            .collect();
        self.flags.workspace_trusted_this_session = true;
        self.resolve_again(&asked, &runs)
    }

    /// Headless runs ask nothing: they name on `err` what an untrusted
    /// workspace brings that does not apply (its allow rules and settings
    /// `env`), with the command that trusts it.
    pub fn name_held_back(&self, err: &mut dyn Write) -> Result<()> {
        if self.workspace != WorkspaceTrust::Untrusted {
            return Ok(());
        }
        let mut offer = ProjectOffer::default();
        settings_items(&self.settings, &mut offer);
        if offer.allow_rules.is_empty() && offer.env.is_empty() {
            return Ok(());
        }
        let rules: Vec<&str> = offer.allow_rules.iter().map(|(r, _)| r.as_str()).collect();
        let env: Vec<&str> = offer.env.iter().map(|(n, _)| n.as_str()).collect();
        let mut parts = Vec::new();
        if !rules.is_empty() {
            parts.push(format!("allow rule(s) {}", rules.join(", ")));
        }
        if !env.is_empty() {
            parts.push(format!("settings env {}", env.join(", ")));
        }
        writeln!(
            err,
            "dsh: not applying the project's {}: the workspace is not trusted (`dsh hooks trust` in {} trusts it)",
            parts.join(" and "),
            self.cwd.display()
        )?;
        Ok(())
    }

    /// No: the waiting hooks do not run and the waiting servers do not
    /// start; the workspace stays untrusted (its allow rules and `env`
    /// stay held back).
    pub fn decline_project(&mut self) {
        let origins: Vec<String> = self
            .untrusted_hooks
            .iter()
            .map(|hook| hook.origin.clone())
            .collect();
        self.skip_hooks(&origins);
        self.skip_servers();
    }

    /// Acts on `answer`; returns one line saying what happened.
    pub fn answer_project(&mut self, answer: ProjectAnswer) -> String {
        match answer {
            ProjectAnswer::Trust => match self.trust_project() {
                Ok(file) => format!(
                    "Trusted: the project's hooks and workspace (stored in {}, as `dsh hooks trust` does).",
                    file.display()
                ),
                Err(error) => {
                    // It could not be stored: this session still runs it.
                    match self.trust_project_this_session() {
                        Ok(_) => format!(
                            "Trusted for this session only: it could not be stored ({error})."
                        ),
                        Err(again) => {
                            self.decline_project();
                            format!("Not trusted: {error}; {again}")
                        }
                    }
                }
            },
            ProjectAnswer::ThisSession => match self.trust_project_this_session() {
                Ok(left) if left.is_empty() => {
                    "Trusted for this session only (asked again next time; `dsh hooks trust` stores it)."
                        .to_owned()
                }
                Ok(left) => format!(
                    "Trusted for this session only; {} hook(s) changed since you trusted them do not run (`dsh hooks trust` trusts them again).",
                    left.len()
                ),
                Err(error) => {
                    self.decline_project();
                    format!("Not trusted: {error}")
                }
            },
            ProjectAnswer::Decline => {
                self.decline_project();
                "Not trusted: its hooks do not run, its servers do not start and its allow rules and env do not apply in this session. `dsh hooks trust` trusts it later."
                    .to_owned()
            }
        }
    }

    /// The terminal's trust question: one question about everything the
    /// project brings. `y` trusts (stored), `s` this session only, `n`,
    /// an empty answer or end of input declines.
    pub fn ask_in_terminal(
        &mut self,
        input: &mut dyn BufRead,
        output: &mut dyn Write,
    ) -> Result<()> {
        let offer = self.project_offer();
        if offer.is_empty() {
            return Ok(());
        }
        write!(output, "{}", offer.describe(&self.cwd))?;
        let answer = loop {
            write!(
                output,
                "Trust this project? [y]es, trust it (as `dsh hooks trust`) / [s]ession only / [n]o: "
            )?;
            output.flush()?;
            let mut line = String::new();
            let read = input.read_line(&mut line)?;
            let answer = line.trim().to_ascii_lowercase();
            match answer.as_str() {
                "y" | "yes" | "t" | "trust" => break ProjectAnswer::Trust,
                "s" | "session" => break ProjectAnswer::ThisSession,
                _ if read == 0 || matches!(answer.as_str(), "" | "n" | "no") => {
                    break ProjectAnswer::Decline;
                }
                _ => writeln!(output, "Please answer y, s or n.")?,
            }
        };
        let said = self.answer_project(answer);
        writeln!(output, "{said}")?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::{DshConfig, Env, SessionFlags, TrustPolicy};

    #[test]
    fn the_offer_lists_each_project_layers_keys_in_file_order() {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join(".claude")).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        // Keys of another type offer nothing; the rest keep their order.
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"permissions":{"allow":["Read(z)","Bash(ls:*)"]},"env":{"Z":"1","A":2},
                "enabledPlugins":{"p@m":true,"q@m":false,"r@m":"yes","a@m":true}}"#,
        )
        .unwrap();
        fs_err::write(
            cwd.join(".claude/settings.local.json"),
            r#"{"env":"X=1","enabledPlugins":{"l@m":true}}"#,
        )
        .unwrap();
        let env = Env::from_vars([("HOME".to_owned(), home.display().to_string())]);
        let config = DshConfig::empty(&env.dsh_home().unwrap());
        let spec = SessionSpec::resolve(Inputs {
            env: &env,
            config: &config,
            flags: &SessionFlags::default(),
            cwd: &cwd,
            policy: TrustPolicy::Ask,
        })
        .unwrap();
        let offer = spec.project_offer();
        let shared = cwd.join(".claude/settings.json");
        let local = cwd.join(".claude/settings.local.json");
        let named = |items: &[(String, PathBuf)]| -> Vec<(String, PathBuf)> { items.to_vec() };
        assert_eq!(
            named(&offer.allow_rules),
            [
                ("Read(z)".to_owned(), shared.clone()),
                ("Bash(ls:*)".to_owned(), shared.clone())
            ]
        );
        assert_eq!(
            named(&offer.env),
            [
                ("Z".to_owned(), shared.clone()),
                ("A".to_owned(), shared.clone())
            ]
        );
        assert_eq!(
            named(&offer.plugins),
            [
                ("p@m".to_owned(), shared.clone()),
                ("a@m".to_owned(), shared),
                ("l@m".to_owned(), local)
            ]
        );
    }
}
