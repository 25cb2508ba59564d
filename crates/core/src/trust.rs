//! dsh's trust for project hooks: a project's `.claude/settings.json`,
//! `.claude/settings.local.json`, `.codex/…` and `.gemini/settings.json` can
//! run arbitrary commands,
//! so dsh asks before running the ones the user has not seen.
//!
//! Unlike Claude Code's folder-level dialog, trust is per hook: each project
//! hook is keyed by a SHA-256 of its definition (dialect, file, event,
//! matcher, handler, timeout, `if`, an http hook's `headers` and
//! `allowedEnvVars`) and of the contents of the project files its command
//! executes or sources (see `dsh_trust::exec_scan`; data files it merely reads
//! or writes are left out, files over [`dsh_trust::MAX_HASHED_FILE_BYTES`] are named
//! but not hashed). A changed definition or executed file is a new hash and
//! asks again; a command that computes what it runs is flagged, since no
//! hash can follow it. Trusted hashes live in `$DSH_HOME/trust.json`.
//!
//! User-level, managed and `--settings` hooks are trusted (the user put them
//! there). Codex's own `trusted_hash` entries count as trust. Interactive
//! sessions ask once ([`ask`]); headless runs keep Claude Code's behaviour
//! (the folder counts as trusted) but name the untrusted hooks on stderr, or
//! refuse them when strict ([`headless`]). A hook changed since it was
//! trusted is untrusted everywhere: no front end runs it until it is trusted
//! again. `dsh replay` runs everything.
//!
//! Trust is decided on the session's one parse of the configuration
//! ([`HookConfigs`], [`untrusted_of`]); the same parsed hooks run.
//!
//! Not here: the bridges' own loading (they only learn which origins to skip,
//! through [`HookSources::excluded_hooks`]).

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use crate::{Error, Result};
use dsh_hooks::registry::{ConfiguredHook, HookScope};
use dsh_trust::exec_scan::Scan;

use crate::hooks::{HookConfigs, HookSources};

// The store, the hashes and the executed-file scan are dsh-trust's; this
// module finds a project's hooks and asks the user.
pub use dsh_trust::{
    COMPUTED_NOTICE, NOT_TRUSTED, ProjectHook, TrustStatus, TrustStore, UntrustedHook,
    hash_identity, store_status,
};

/// Every configured hook of every dialect with its trust status, in
/// configuration order (registration order of the dialects).
pub fn all_hooks(sources: &HookSources, store: &TrustStore) -> Result<Vec<ProjectHook>> {
    Ok(hooks_of(sources, &HookConfigs::load(sources)?, store))
}

/// The files `hook`'s command executes or sources when it runs in `dir`
/// (its dialect's directory for it: Copilot runs an entry at the
/// repository root, or its `cwd`; the session directory otherwise), and
/// the trust hash of its definition with them.
fn scan_hook(
    hook: &ConfiguredHook,
    sources: &HookSources,
    dir: Option<&Path>,
) -> (Scan, String, Vec<String>, Vec<Option<String>>) {
    let runs = dsh_trust::exec_scan::Runs {
        dir: dir.or(hook.runs_in.dir.as_deref()).unwrap_or(&sources.cwd),
        project: hook.runs_in.project.as_deref().unwrap_or(&sources.cwd),
        env: &hook.runs_in.env,
    };
    let scan = dsh_trust::exec_scan::scan_in(&hook.command, runs);
    let (hash, notices, file_hashes) =
        dsh_trust::hash_identity_and_files(&hook.identity, &scan.files);
    (scan, hash, notices, file_hashes)
}

/// [`all_hooks`] over configurations already loaded.
pub fn hooks_of(
    sources: &HookSources,
    configs: &HookConfigs,
    store: &TrustStore,
) -> Vec<ProjectHook> {
    let mut hooks = Vec::new();
    for config in configs.iter() {
        let dialect = config.dialect();
        for hook in config.hooks() {
            let (scan, hash, notices, _) = scan_hook(&hook, sources, None);
            let status = match hook.scope {
                HookScope::User => TrustStatus::UserLevel,
                HookScope::TrustedByDialect => TrustStatus::TrustedByCodex,
                HookScope::Project => store_status(store, &hash, &hook.origin),
            };
            hooks.push(ProjectHook {
                dialect,
                event: hook.event,
                matcher: hook.matcher,
                command: hook.command,
                file: hook.file,
                origin: hook.origin,
                hash,
                scripts: scan.files,
                computed: scan.computed,
                notices,
                status,
                active: hook.active,
            });
        }
    }
    hooks
}

/// The project hooks that need trust before they run: active, from a
/// project-level file, and neither in `trust.json` (current hash) nor
/// trusted by the dialect's own mechanism.
pub fn untrusted_project_hooks(sources: &HookSources) -> Result<Vec<UntrustedHook>> {
    untrusted_of(sources, &HookConfigs::load(sources)?)
}

/// [`untrusted_project_hooks`] of configurations already parsed: the
/// session decides trust on the parse it runs.
pub fn untrusted_of(sources: &HookSources, configs: &HookConfigs) -> Result<Vec<UntrustedHook>> {
    let store = TrustStore::load_with(&sources.reader(), &sources.dsh_home)?;
    Ok(hooks_of(sources, configs, &store)
        .into_iter()
        .filter(|hook| hook.active && !hook.status.is_trusted())
        .collect())
}

/// What each project hook of a session runs, pinned as the session
/// starts: the session's runner asks before every start
/// ([`dsh_hook_runner::LaunchCheck`]), and a hook that would now run other
/// files (the bash tool's `cd` moved where a relative script resolves) or
/// changed ones (edited during the session) does not start.
pub struct LaunchPins {
    sources: HookSources,
    pins: HashMap<String, Pin>,
}

/// One project hook as its session started with it.
struct Pin {
    hook: ConfiguredHook,
    hash: String,
    files: Vec<PathBuf>,
    /// Each file's own hash, to name the ones that changed.
    file_hashes: Vec<Option<String>>,
}

impl LaunchPins {
    /// Nothing pinned: every hook starts.
    pub fn none(sources: &HookSources) -> Self {
        LaunchPins {
            sources: sources.clone(),
            pins: HashMap::new(),
        }
    }
}

/// The pins of `configs`' project hooks (user hooks and hooks their own
/// dialect trusts are the user's to change).
pub fn launch_pins(configs: &HookConfigs, sources: &HookSources) -> LaunchPins {
    let mut pins = HashMap::new();
    for config in configs.iter() {
        for hook in config.hooks() {
            if hook.scope != HookScope::Project {
                continue;
            }
            let (scan, hash, _, file_hashes) = scan_hook(&hook, sources, None);
            let pin = Pin {
                hook,
                hash,
                files: scan.files,
                file_hashes,
            };
            pins.insert(pin.hook.origin.clone(), pin);
        }
    }
    LaunchPins {
        sources: sources.clone(),
        pins,
    }
}

impl dsh_hook_runner::LaunchCheck for LaunchPins {
    fn admit(&self, origin: &str, cwd: &Path) -> std::result::Result<(), String> {
        let Some(pin) = self.pins.get(origin) else {
            return Ok(());
        };
        let (scan, hash, _, now) = scan_hook(&pin.hook, &self.sources, Some(cwd));
        if hash == pin.hash {
            return Ok(());
        }
        let shown = |files: &[PathBuf]| {
            let names: Vec<String> = files
                .iter()
                .map(|file| show_path(&file.display().to_string(), &self.sources.cwd))
                .collect();
            match names.is_empty() {
                true => "nothing dsh can see".to_owned(),
                false => names.join(", "),
            }
        };
        Err(if scan.files == pin.files {
            let changed: Vec<PathBuf> = (scan.files.iter().zip(now.iter()))
                .zip(&pin.file_hashes)
                .filter(|((_, now), then)| now != then)
                .map(|((file, _), _)| file.clone())
                .collect();
            // Nothing to name: the definition itself changed.
            let changed = if changed.is_empty() {
                &scan.files
            } else {
                &changed
            };
            format!(
                "not started: {} changed since the session started (a changed project hook runs once trusted again: `dsh hooks trust`)",
                shown(changed)
            )
        } else if cwd == pin.hook.runs_in.dir.as_deref().unwrap_or(&self.sources.cwd) {
            // Where it started, what it runs changed: a helper added or
            // gone, a program its repository's git configuration gained.
            format!(
                "not started: what it runs changed since the session started: {} (was {}); a changed project hook runs once trusted again: `dsh hooks trust`",
                shown(&scan.files),
                shown(&pin.files)
            )
        } else {
            format!(
                "not started: from {} it would run {}, not the {} the session started with (a script named through the project directory variable stays in place)",
                show_path(&cwd.display().to_string(), &self.sources.cwd),
                shown(&scan.files),
                shown(&pin.files)
            )
        })
    }
}

/// A path for people: relative to `project` when below it.
pub fn show_path(path: &str, project: &Path) -> String {
    let prefix = format!("{}/", project.display());
    match path.strip_prefix(&prefix) {
        Some(rest) => rest.to_owned(),
        None => path.to_owned(),
    }
}

/// Lists `hooks` for people: event, command, origin, what it runs, and
/// what trust cannot cover.
pub fn describe(
    out: &mut dyn Write,
    hooks: &[UntrustedHook],
    project: &Path,
) -> std::io::Result<()> {
    for hook in hooks {
        let matcher = hook
            .matcher
            .as_deref()
            .map(|m| format!(" matcher {m:?}"))
            .unwrap_or_default();
        let changed = if hook.status == TrustStatus::Changed {
            " (changed since you trusted it)"
        } else {
            ""
        };
        writeln!(
            out,
            "  [{}] {}{matcher}{changed}\n      {}\n      from {}",
            hook.dialect.as_str(),
            hook.event,
            hook.command,
            show_path(&hook.origin, project)
        )?;
        for script in &hook.scripts {
            writeln!(
                out,
                "      runs {}",
                show_path(&script.display().to_string(), project)
            )?;
        }
        for notice in &hook.notices {
            writeln!(out, "      note: {}", show_path(notice, project))?;
        }
        if hook.computed {
            writeln!(out, "      warning: {COMPUTED_NOTICE}")?;
        }
    }
    Ok(())
}

/// What the user answered at the trust prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustAnswer {
    /// Nothing to ask: every project hook is trusted.
    NothingToAsk,
    /// Trusted (stored); they run.
    Trusted,
    /// Declined (or no answer): these origins do not run this session.
    Skipped(Vec<String>),
}

/// The interactive trust prompt: shows the exact commands of the untrusted
/// project hooks, asks once, stores the answer when it is yes. A `no`, an
/// empty answer or end of input skips them for this session (asked again
/// next time). Testable without a tty: pass any reader and writer.
pub fn ask(
    untrusted: &[UntrustedHook],
    store: &mut TrustStore,
    project: &Path,
    input: &mut dyn BufRead,
    output: &mut dyn Write,
) -> Result<TrustAnswer> {
    if untrusted.is_empty() {
        return Ok(TrustAnswer::NothingToAsk);
    }
    writeln!(
        output,
        "This project has {} hook(s) you have not trusted yet. They run these commands on your machine:",
        untrusted.len()
    )?;
    describe(output, untrusted, project)?;
    loop {
        write!(
            output,
            "Trust and run them? [y]es / [n]o, skip them this session: "
        )?;
        output.flush()?;
        let mut line = String::new();
        let read = input.read_line(&mut line)?;
        let answer = line.trim().to_ascii_lowercase();
        match answer.as_str() {
            "y" | "yes" => {
                for hook in untrusted {
                    store.trust(hook);
                }
                store.save()?;
                writeln!(output, "Trusted (stored in {}).", store.path().display())?;
                return Ok(TrustAnswer::Trusted);
            }
            _ if read == 0 || matches!(answer.as_str(), "" | "n" | "no") => {
                writeln!(
                    output,
                    "Skipped: these hooks do not run in this session. `dsh hooks trust` trusts them later."
                )?;
                return Ok(TrustAnswer::Skipped(
                    untrusted.iter().map(|hook| hook.origin.clone()).collect(),
                ));
            }
            _ => writeln!(output, "Please answer y or n.")?,
        }
    }
}

/// Headless trust: Claude Code's behaviour (the folder counts as trusted, so
/// CI keeps working) with the untrusted hooks named on `err`; `strict`
/// refuses to run them instead (an error naming `dsh hooks trust`). A hook
/// changed since it was trusted is not run either way: its origin is
/// returned, for the caller to leave out.
pub fn headless(
    untrusted: &[UntrustedHook],
    strict: bool,
    project: &Path,
    err: &mut dyn Write,
) -> Result<Vec<String>> {
    if untrusted.is_empty() {
        return Ok(Vec::new());
    }
    let (changed, new): (Vec<UntrustedHook>, Vec<UntrustedHook>) = untrusted
        .iter()
        .cloned()
        .partition(|hook| hook.status == TrustStatus::Changed);
    if !strict && !changed.is_empty() {
        // A changed hook is an untrusted hook: it is not run, even where
        // headless runs trust the folder (only hooks never seen do).
        writeln!(
            err,
            "dsh: not running {} project hook(s) changed since you trusted them (`dsh hooks trust` in {} trusts them again):",
            changed.len(),
            project.display()
        )?;
        describe(err, &changed, project)?;
    }
    let skipped: Vec<String> = changed.iter().map(|hook| hook.origin.clone()).collect();
    let untrusted = if strict { untrusted } else { &new[..] };
    if untrusted.is_empty() {
        return Ok(skipped);
    }
    if strict {
        let mut text = Vec::new();
        describe(&mut text, untrusted, project)?;
        return Err(Error::msg(format!(
            "refusing to run {} untrusted project hook(s) (strict hooks: --strict-hooks / DSH_STRICT_HOOKS):\n{}run `dsh hooks trust` in {} to trust them",
            untrusted.len(),
            String::from_utf8_lossy(&text),
            project.display()
        )));
    }
    writeln!(
        err,
        "dsh: running {} untrusted project hook(s) (headless runs trust the folder, as Claude Code does; `dsh hooks trust` trusts them, DSH_STRICT_HOOKS=1 refuses them):",
        untrusted.len()
    )?;
    describe(err, untrusted, project)?;
    Ok(skipped)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_protocol::Dialect;
    use dsh_trust::TRUST_FILE;
    use serde_json::{Value, json};
    use std::path::PathBuf;

    fn hook(origin: &str, hash: &str) -> ProjectHook {
        ProjectHook {
            dialect: Dialect::Claude,
            event: "PreToolUse".into(),
            matcher: Some("Bash".into()),
            command: "sh guard.sh".into(),
            file: PathBuf::from("/p/.claude/settings.json"),
            origin: origin.into(),
            hash: hash.into(),
            scripts: Vec::new(),
            computed: false,
            notices: Vec::new(),
            status: TrustStatus::Untrusted,
            active: true,
        }
    }

    #[test]
    fn ask_yes_stores_the_hash_and_a_changed_hash_asks_again() {
        let home = tempfile::tempdir().unwrap();
        let mut store = TrustStore::load(home.path()).unwrap();
        let first = hook(
            "/p/.claude/settings.json#hooks.PreToolUse[0].hooks[0]",
            "sha256:aa",
        );
        let mut out = Vec::new();
        let answer = ask(
            std::slice::from_ref(&first),
            &mut store,
            Path::new("/p"),
            &mut std::io::Cursor::new("maybe\ny\n"),
            &mut out,
        )
        .unwrap();
        assert_eq!(answer, TrustAnswer::Trusted);
        let shown = String::from_utf8(out).unwrap();
        assert!(shown.contains("sh guard.sh"), "{shown}");
        assert!(shown.contains("from .claude/settings.json#hooks.PreToolUse[0].hooks[0]"));
        assert!(shown.contains("Please answer y or n."));

        let reloaded = TrustStore::load(home.path()).unwrap();
        assert!(reloaded.contains("sha256:aa"));
        // The same origin with another hash: changed, not trusted.
        assert_eq!(
            store_status(&reloaded, "sha256:bb", &first.origin),
            TrustStatus::Changed
        );
        assert_eq!(
            store_status(&reloaded, "sha256:aa", &first.origin),
            TrustStatus::Trusted
        );
    }

    #[test]
    fn save_is_private_and_never_writes_through_a_planted_temp_file() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("dsh-home");
        let victim = root.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::create_dir(&home).unwrap();
        std::os::unix::fs::symlink(&victim, home.join("trust.json.tmp")).unwrap();
        let store = TrustStore::load(&home).unwrap();
        store.save().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let mode = std::fs::metadata(home.join(TRUST_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);

        // A link planted at the old predictable temp name is neither
        // followed nor removed: the store goes through a fresh name.
        let tmp = home.join(format!("trust.json.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        store.save().unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            std::fs::symlink_metadata(&tmp)
                .unwrap()
                .file_type()
                .is_symlink()
        );

        // A home dsh creates is private.
        let fresh = root.path().join("new-home");
        TrustStore::load(&fresh).unwrap().save().unwrap();
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    fn sources_for(project: &Path, home: &Path) -> HookSources {
        let env = crate::Env::from_vars([
            ("HOME".to_owned(), home.display().to_string()),
            (
                "DSH_HOME".to_owned(),
                home.join(".dsh").display().to_string(),
            ),
        ]);
        let mut sources = HookSources::new(&env, project.to_owned(), Vec::new());
        sources.run_untrusted = false;
        sources
    }

    #[test]
    fn http_headers_and_allowed_variables_are_in_the_hash() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".claude")).unwrap();
        let write = |headers: Value, allowed: Value| {
            let settings = json!({"hooks": {"Stop": [{"hooks": [{"type": "http",
                "url": "http://127.0.0.1:9/hook", "headers": headers, "allowedEnvVars": allowed}]}]}});
            std::fs::write(
                project.path().join(".claude/settings.json"),
                settings.to_string(),
            )
            .unwrap();
        };
        let sources = sources_for(project.path(), home.path());
        let store = TrustStore::load(&sources.dsh_home).unwrap();
        let hash = || all_hooks(&sources, &store).unwrap()[0].hash.clone();
        write(json!({"X-Team": "a"}), json!([]));
        let first = hash();
        write(
            json!({"X-Team": "a", "Authorization": "Bearer $TOKEN"}),
            json!([]),
        );
        let with_header = hash();
        write(
            json!({"X-Team": "a", "Authorization": "Bearer $TOKEN"}),
            json!(["TOKEN"]),
        );
        let with_variable = hash();
        assert_ne!(first, with_header);
        assert_ne!(with_header, with_variable);
    }

    #[test]
    fn a_fifo_at_trust_json_is_refused_without_blocking() {
        let home = tempfile::tempdir().unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(home.path().join(TRUST_FILE))
            .status()
            .unwrap();
        assert!(made.success());
        let err = TrustStore::load(home.path()).unwrap_err();
        assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");
    }

    #[test]
    fn ask_no_or_end_of_input_skips_without_storing() {
        let home = tempfile::tempdir().unwrap();
        let mut store = TrustStore::load(home.path()).unwrap();
        let untrusted = [hook("o#1", "sha256:cc")];
        for input in ["n\n", ""] {
            let answer = ask(
                &untrusted,
                &mut store,
                Path::new("/p"),
                &mut std::io::Cursor::new(input),
                &mut Vec::new(),
            )
            .unwrap();
            assert_eq!(answer, TrustAnswer::Skipped(vec!["o#1".to_owned()]));
        }
        assert!(!home.path().join(TRUST_FILE).exists());
        let answer = ask(
            &[],
            &mut store,
            Path::new("/p"),
            &mut std::io::Cursor::new(""),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(answer, TrustAnswer::NothingToAsk);
    }

    #[test]
    fn headless_names_untrusted_hooks_and_strict_refuses_them() {
        let untrusted = [hook("o#1", "sha256:dd")];
        let mut err = Vec::new();
        assert!(
            headless(&untrusted, false, Path::new("/p"), &mut err)
                .unwrap()
                .is_empty()
        );
        let text = String::from_utf8(err).unwrap();
        assert!(
            text.contains("running 1 untrusted project hook(s)"),
            "{text}"
        );
        assert!(text.contains("sh guard.sh"));

        let refused = headless(&untrusted, true, Path::new("/p"), &mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("refusing to run 1 untrusted project hook(s)"),
            "{refused}"
        );
        assert!(refused.contains("dsh hooks trust"));
        headless(&[], true, Path::new("/p"), &mut Vec::new()).unwrap();

        // A changed hook is not run, and the notice says how to trust it.
        let mut changed = hook("o#2", "sha256:ee");
        changed.status = TrustStatus::Changed;
        let mut err = Vec::new();
        let skipped = headless(
            &[untrusted[0].clone(), changed],
            false,
            Path::new("/p"),
            &mut err,
        )
        .unwrap();
        assert_eq!(skipped, ["o#2"]);
        let text = String::from_utf8(err).unwrap();
        assert!(
            text.contains("not running 1 project hook(s) changed"),
            "{text}"
        );
        assert!(text.contains("dsh hooks trust"), "{text}");
        assert!(
            text.contains("running 1 untrusted project hook(s)"),
            "{text}"
        );
    }
}
