//! Whether the repository a `git` command runs in can make even its
//! read-only subcommands run a program.
//!
//! `git status`, `git diff` and `git log` only read, but git runs what the
//! repository's own configuration names: `core.fsmonitor` on every status,
//! `diff.external` and textconv drivers on a diff, clean filters on a
//! changed file, `gpg.program` for a signature, and the
//! `post-index-change` hook when status refreshes the index. A repository
//! that arrives with its `.git` (an archive, a shared folder, a checkout the
//! agent itself edited) decides all of that. The read-only shortcut holds
//! only when none of it is set; otherwise the command is asked about like
//! any command dsh cannot see through.
//!
//! The user's own git configuration (`~/.gitconfig`, system files) is the
//! user's: it is not read here.
//!
//! The executed-file scan reads it too: a trusted hook that runs `git`
//! pins the file that makes git run a program, so one added later does
//! not run under the hook's trust.

use std::path::{Path, PathBuf};

/// Configuration keys (lower case; `*` one subsection) under which git's
/// read-only commands may run a program.
const RUNS_PROGRAMS: &[&str] = &[
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.sshcommand",
    "core.gitproxy",
    "core.hookspath",
    "core.alternaterefscommand",
    "pager.*",
    "diff.external",
    "diff.*.command",
    "diff.*.textconv",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "gpg.program",
    "gpg.*.program",
    "gpg.ssh.defaultkeycommand",
    "credential.helper",
    "credential.*.helper",
    "merge.*.driver",
    "uploadpack.packobjectshook",
    "include.path",
    "includeif.*.path",
];

/// How deep submodule repositories (`modules/…`) are looked into.
const MAX_MODULE_DEPTH: usize = 4;

/// A program a repository's git configuration makes git run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredProgram {
    /// The configuration file that names it, or the hook that is it.
    pub file: PathBuf,
    /// Said for people: the key and the file.
    pub why: String,
}

/// The program git run in `dir` could run because its repository
/// configures one; `None` when it cannot (or `dir` is in no repository).
pub fn configured_program(dir: &Path) -> Option<ConfiguredProgram> {
    let git_dir = find_git_dir(dir)?;
    let common = common_dir(&git_dir);
    let mut dirs = vec![git_dir.clone()];
    if common != git_dir {
        dirs.push(common.clone());
    }
    dirs.extend(module_dirs(&common.join("modules"), 0));
    dirs.iter().find_map(|dir| {
        ["config", "config.worktree"]
            .iter()
            .find_map(|name| program_key(&dir.join(name)))
            .or_else(|| index_hook(dir))
    })
}

/// The repository's git directory, found as git finds it from `dir`: the
/// nearest `.git` (a folder, or a file `gitdir: …`), or a folder that is
/// itself a bare repository.
fn find_git_dir(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find_map(|dir| {
        let dot_git = dir.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git);
        }
        if dot_git.is_file() {
            let text = fs_err::read_to_string(&dot_git).ok()?;
            let target = text.trim().strip_prefix("gitdir:")?.trim();
            return Some(dir.join(target));
        }
        let bare =
            dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir();
        bare.then(|| dir.to_owned())
    })
}

/// The folder a linked worktree shares its configuration and hooks with.
fn common_dir(git_dir: &Path) -> PathBuf {
    fs_err::read_to_string(git_dir.join("commondir"))
        .map(|text| git_dir.join(text.trim()))
        .unwrap_or_else(|_| git_dir.to_owned())
}

/// The git directories of submodules (`status` looks into each).
fn module_dirs(modules: &Path, depth: usize) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(modules) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() || depth >= MAX_MODULE_DEPTH {
            continue;
        }
        if path.join("config").is_file() {
            dirs.extend(module_dirs(&path.join("modules"), depth + 1));
            dirs.push(path);
        } else {
            // A submodule named with a slash (`libs/x`) nests folders.
            dirs.extend(module_dirs(&path, depth + 1));
        }
    }
    dirs
}

/// A `post-index-change` hook, which `git status` runs when it refreshes
/// the index (no other hook runs for a read-only command).
fn index_hook(git_dir: &Path) -> Option<ConfiguredProgram> {
    let hook = git_dir.join("hooks/post-index-change");
    hook.is_file().then(|| ConfiguredProgram {
        why: format!(
            "the repository has a `post-index-change` hook ({}) that git runs when it refreshes the index",
            hook.display()
        ),
        file: hook,
    })
}

/// The first key of `file` that may run a program.
fn program_key(file: &Path) -> Option<ConfiguredProgram> {
    let text = fs_err::read_to_string(file).ok()?;
    let key = keys(&text).find(|(key, value)| runs_program(key, value.as_deref()))?;
    Some(ConfiguredProgram {
        why: format!(
            "the repository's git configuration sets `{}` ({}), which can make git run a program",
            key.0,
            file.display()
        ),
        file: file.to_owned(),
    })
}

fn runs_program(key: &str, value: Option<&str>) -> bool {
    // `core.fsmonitor=true` is git's own daemon, not a program.
    if key == "core.fsmonitor" {
        return value.is_some_and(|value| {
            !matches!(
                value.trim().to_ascii_lowercase().as_str(),
                "false" | "no" | "off" | "0" | "" | "true" | "yes" | "on" | "1"
            )
        });
    }
    RUNS_PROGRAMS
        .iter()
        .any(|pattern| matches_key(pattern, key))
}

/// `pattern`'s `*` stands for one subsection, which may hold dots.
fn matches_key(pattern: &str, key: &str) -> bool {
    match pattern.split_once(".*.") {
        Some((section, name)) => key
            .strip_prefix(section)
            .and_then(|rest| rest.strip_prefix('.'))
            .and_then(|rest| rest.strip_suffix(name))
            .and_then(|rest| rest.strip_suffix('.'))
            .is_some_and(|sub| !sub.is_empty()),
        None => match pattern.strip_suffix(".*") {
            Some(section) => key
                .strip_prefix(section)
                .is_some_and(|rest| rest.starts_with('.') && rest.len() > 1),
            None => key == pattern,
        },
    }
}

/// The keys a git configuration file sets, as `section[.subsection].name`
/// with the section and name in lower case (as git compares them), each
/// with its value (`None`: a bare boolean key).
fn keys(text: &str) -> impl Iterator<Item = (String, Option<String>)> + '_ {
    let mut section = String::new();
    let mut lines = text.lines();
    std::iter::from_fn(move || {
        loop {
            let line = lines.next()?;
            let mut line = line.trim_start();
            if let Some(rest) = line.strip_prefix('[') {
                let Some((header, after)) = rest.split_once(']') else {
                    continue;
                };
                section = section_name(header);
                line = after.trim_start();
            }
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            let (name, value) = match line.split_once('=') {
                Some((name, value)) => (name.trim(), Some(value.trim().to_owned())),
                None => (line.split(['#', ';']).next().unwrap_or("").trim(), None),
            };
            if name.is_empty() || section.is_empty() {
                continue;
            }
            // A value continued over lines only matters for its start.
            return Some((format!("{section}.{}", name.to_ascii_lowercase()), value));
        }
    })
}

/// `core`, `diff "word"` → `diff.word`, the old `branch.Main` form.
fn section_name(header: &str) -> String {
    match header.split_once('"') {
        Some((name, sub)) => {
            let sub = sub.strip_suffix('"').unwrap_or(sub).replace("\\\"", "\"");
            format!("{}.{sub}", name.trim().to_ascii_lowercase())
        }
        None => match header.trim().split_once('.') {
            Some((name, sub)) => format!("{}.{sub}", name.to_ascii_lowercase()),
            None => header.trim().to_ascii_lowercase(),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn repo(config: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/hooks")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join(".git/config"), config).unwrap();
        dir
    }

    #[test]
    fn a_fresh_clones_configuration_runs_nothing() {
        let dir = repo(concat!(
            "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
            "\tlogallrefupdates = true\n\tfsmonitor = false\n",
            "[remote \"origin\"]\n\turl = https://example.invalid/x.git\n",
            "\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
            "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
            "[diff]\n\talgorithm = histogram\n",
        ));
        std::fs::write(dir.path().join(".git/hooks/pre-commit.sample"), "").unwrap();
        std::fs::write(dir.path().join(".git/hooks/pre-commit"), "").unwrap();
        assert_eq!(configured_program(&dir.path().join("src")), None);
    }

    #[test]
    fn every_way_a_repository_names_a_program_is_found() {
        for (config, key) in [
            ("[core]\n\tfsmonitor = ./watch.sh\n", "core.fsmonitor"),
            ("[Core]\nFSMonitor=x\n", "core.fsmonitor"),
            ("[core] pager = less-evil\n", "core.pager"),
            ("[pager]\n\tlog = x\n", "pager.log"),
            ("[diff]\n\texternal = x\n", "diff.external"),
            ("[diff \"bin\"]\n\ttextconv = x\n", "diff.bin.textconv"),
            ("[diff \"a.b\"]\n\tcommand = x\n", "diff.a.b.command"),
            ("[filter \"lfs\"]\n\tclean = x %f\n", "filter.lfs.clean"),
            ("[gpg]\n\tprogram = x\n", "gpg.program"),
            ("[gpg \"ssh\"]\n\tprogram = x\n", "gpg.ssh.program"),
            ("[include]\n\tpath = ../evil.cfg\n", "include.path"),
            (
                "[includeIf \"gitdir:/\"]\n\tpath = x\n",
                "includeif.gitdir:/.path",
            ),
            ("[core]\n\thooksPath = .githooks\n", "core.hookspath"),
        ] {
            let dir = repo(config);
            let found = configured_program(dir.path()).unwrap_or_else(|| panic!("{config}"));
            assert!(
                found.why.contains(&format!("`{key}`")),
                "{config}: {found:?}"
            );
            assert_eq!(found.file, dir.path().join(".git/config"));
        }
    }

    #[test]
    fn worktrees_submodules_bare_repositories_and_the_index_hook_are_looked_into() {
        // The index hook.
        let dir = repo("");
        std::fs::write(dir.path().join(".git/hooks/post-index-change"), "").unwrap();
        let found = configured_program(dir.path()).unwrap();
        assert!(found.why.contains("post-index-change"), "{found:?}");
        // A linked worktree's shared configuration.
        let main = repo("[core]\n\tfsmonitor = x\n");
        let wt = main.path().join(".git/worktrees/w");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join("commondir"), "../..\n").unwrap();
        let checkout = tempfile::tempdir().unwrap();
        std::fs::write(
            checkout.path().join(".git"),
            format!("gitdir: {}\n", wt.display()),
        )
        .unwrap();
        assert!(configured_program(checkout.path()).is_some());
        // A submodule's configuration.
        let dir = repo("");
        let module = dir.path().join(".git/modules/libs/x");
        std::fs::create_dir_all(&module).unwrap();
        std::fs::write(module.join("config"), "[diff]\nexternal = x\n").unwrap();
        assert!(configured_program(dir.path()).is_some());
        // A folder that is itself a bare repository.
        let bare = tempfile::tempdir().unwrap();
        for sub in ["objects", "refs"] {
            std::fs::create_dir_all(bare.path().join(sub)).unwrap();
        }
        std::fs::write(bare.path().join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(bare.path().join("config"), "[core]\nfsmonitor = x\n").unwrap();
        assert!(configured_program(bare.path()).is_some());
        // Outside any repository.
        let plain = tempfile::tempdir().unwrap();
        assert_eq!(configured_program(plain.path()), None);
    }
}
