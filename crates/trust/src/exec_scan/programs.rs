//! How programs a hook line names find what they run: launchers and the
//! folders they look programs up in, package manager scripts, `python -m`
//! modules and makefiles.

use std::path::{Path, PathBuf};

use super::Runs;
use crate::expand_vars_with;

/// Package and environment managers that launch the rest of the line (after
/// their subcommand, when they have one, and their options): `uv run x.py`,
/// `npx tsx x.ts`, `deno run -A x.ts`. Their options may take values the
/// scan cannot tell from the program, so every file the launched line
/// names is pinned besides.
pub(super) const LAUNCHERS: &[(&str, Option<&str>, Bins)] = &[
    ("npx", None, Bins::Node),
    ("bunx", None, Bins::Node),
    ("pnpx", None, Bins::Node),
    ("uvx", None, Bins::None),
    ("uv", Some("run"), Bins::Python),
    ("bun", Some("run"), Bins::Node),
    ("deno", Some("run"), Bins::None),
    ("poetry", Some("run"), Bins::Python),
    ("pipenv", Some("run"), Bins::Python),
    ("rye", Some("run"), Bins::Python),
    ("hatch", Some("run"), Bins::Python),
    ("pipx", Some("run"), Bins::None),
    ("pnpm", Some("exec"), Bins::Node),
    ("pnpm", Some("dlx"), Bins::Node),
    ("yarn", Some("exec"), Bins::Node),
    ("bundle", Some("exec"), Bins::Ruby),
];

/// The project a launcher runs in: where it looks a program name up before
/// `PATH`, in the folder it runs in and each one above it (a project can
/// ship the program it launches: `node_modules/.bin/tsx`,
/// `.venv/bin/ruff`), and the manifests it reads and may run code of
/// before the program starts (a Python project's build when `uv run`
/// syncs it, a `Gemfile`, which is Ruby).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bins {
    None,
    Node,
    Python,
    Ruby,
}

impl Bins {
    /// The folders, nearest first, that exist.
    pub(super) fn dirs(self, base: &Path) -> Vec<PathBuf> {
        let sub = match self {
            Bins::None | Bins::Ruby => return Vec::new(),
            Bins::Node => "node_modules/.bin",
            Bins::Python => ".venv/bin",
        };
        base.ancestors()
            .map(|dir| dir.join(sub))
            .filter(|dir| dir.is_dir())
            .collect()
    }

    /// The manifests of the nearest project above `base` (those that
    /// exist; `add` keeps only files).
    pub(super) fn manifests(self, base: &Path) -> Vec<PathBuf> {
        let (marks, files): (&[&str], &[&str]) = match self {
            Bins::None | Bins::Node => return Vec::new(),
            Bins::Python => (
                &["pyproject.toml", "setup.py"],
                &["pyproject.toml", "setup.py", "setup.cfg"],
            ),
            Bins::Ruby => (&["Gemfile", "gems.rb"], &["Gemfile", "gems.rb"]),
        };
        base.ancestors()
            .find(|dir| marks.iter().any(|mark| dir.join(mark).is_file()))
            .map(|dir| files.iter().map(|file| dir.join(file)).collect())
            .unwrap_or_default()
    }
}

/// The options of Node-style interpreters whose value is a file run before
/// the script (`node -r ./setup.js x.js`).
pub(super) const PRELOADS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
];

/// How many words after `program` a launcher takes before the line it
/// launches (its subcommand and options), and where it looks programs up;
/// `None` when it is not one.
pub(super) fn launched_from(program: &str, args: &[Option<String>]) -> Option<(usize, Bins)> {
    let name = program.rsplit('/').next().unwrap_or(program);
    let (_, subcommand, bins) = LAUNCHERS.iter().find(|(launcher, subcommand, _)| {
        *launcher == name
            && subcommand.is_none_or(|sub| args.first().and_then(Option::as_deref) == Some(sub))
    })?;
    let skipped = usize::from(subcommand.is_some());
    let options = args[skipped..]
        .iter()
        .take_while(|arg| arg.as_deref().is_some_and(|arg| arg.starts_with('-')))
        .count();
    Some((skipped + options, *bins))
}

/// The folders of the `PATH` the hook's dialect sets for it (an entry's
/// `env`), relative ones from `base`. dsh's own `PATH` is not read: a
/// program found there is the user's, not the project's.
pub(super) fn env_path(runs: Runs<'_>, base: &Path) -> Vec<PathBuf> {
    let Some((_, path)) = runs.env.iter().rev().find(|(name, _)| name == "PATH") else {
        return Vec::new();
    };
    let Some(path) = expand_vars_with(path, runs.project, runs.env) else {
        return Vec::new();
    };
    path.split(':')
        .filter(|dir| !dir.is_empty())
        .map(|dir| base.join(dir))
        .collect()
}

/// The `package.json` a package manager's line runs scripts of (`npm run
/// x`, `npm test`, `yarn x`, `pnpm x`, `bun run x`: the nearest one up
/// from `base`) and the commands it runs, `pre` and `post` scripts
/// included. `None` when the line runs no script (`npm ci`, `bun x.ts`).
pub(super) fn package_scripts(
    program: &str,
    args: &[Option<String>],
    base: &Path,
) -> Option<(PathBuf, Vec<String>)> {
    let name = program.rsplit('/').next().unwrap_or(program);
    let words: Vec<&str> = args
        .iter()
        .map(|arg| arg.as_deref().unwrap_or(""))
        .filter(|arg| !arg.starts_with('-'))
        .collect();
    let (first, second) = (words.first().copied()?, words.get(1).copied());
    let named = match (name, first) {
        ("npm" | "pnpm" | "yarn" | "bun", "run" | "run-script") => second?,
        ("npm" | "pnpm" | "yarn" | "bun", "test" | "start" | "stop" | "restart") => first,
        ("npm", "t" | "tst") => "test",
        // `pnpm x`, `yarn x` and `bun x` run the script `x` when there is one.
        ("pnpm" | "yarn" | "bun", first) => first,
        _ => return None,
    };
    let manifest = base
        .ancestors()
        .map(|dir| dir.join("package.json"))
        .find(|path| path.is_file())?;
    // A manifest npm cannot read runs no script; it is pinned all the same.
    let scripts = fs_err::read(&manifest)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<PackageJson>(&bytes).ok())
        .map(|package| package.scripts)
        .unwrap_or_default();
    let runs = [
        format!("pre{named}"),
        named.to_owned(),
        format!("post{named}"),
    ];
    let commands: Vec<String> = runs
        .iter()
        .filter_map(|script| scripts.get(script).cloned())
        .collect();
    // `bun x.ts` runs the file, not a script: the launcher reading pins it.
    if commands.is_empty() && base.join(named).is_file() {
        return None;
    }
    Some((manifest, commands))
}

/// The part of `package.json` a script run reads.
#[derive(serde::Deserialize)]
struct PackageJson {
    #[serde(default)]
    scripts: std::collections::HashMap<String, String>,
}

/// The files `python -m module` runs from `base`: the module (`a/b.py`,
/// or a package's `a/b/__main__.py`) and the `__init__.py` of each package
/// on the way.
pub(super) fn module_files(base: &Path, module: &str) -> Vec<PathBuf> {
    let parts: Vec<&str> = module.split('.').collect();
    let mut files = Vec::new();
    let mut dir = base.to_owned();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            files.push(dir.join(format!("{part}.py")));
            files.push(dir.join(part).join("__init__.py"));
            files.push(dir.join(part).join("__main__.py"));
        } else {
            dir = dir.join(part);
            files.push(dir.join("__init__.py"));
        }
    }
    files
}

/// The makefile `make` reads in `base`: `-f FILE` / `--file=FILE`, else
/// the first of GNU make's default names that exists.
pub(super) fn makefiles(base: &Path, args: &[Option<String>]) -> Vec<PathBuf> {
    let mut named = Vec::new();
    let mut words = args.iter().flatten();
    while let Some(arg) = words.next() {
        if let Some(file) = ["--file=", "--makefile="]
            .iter()
            .find_map(|prefix| arg.strip_prefix(prefix))
        {
            named.push(base.join(file));
        } else if arg == "-f" || arg == "--file" || arg == "--makefile" {
            named.extend(words.next().map(|file| base.join(file)));
        } else if let Some(file) = arg.strip_prefix("-f").filter(|file| !file.is_empty()) {
            named.push(base.join(file));
        }
    }
    if named.is_empty() {
        named.extend(
            ["GNUmakefile", "makefile", "Makefile"]
                .iter()
                .map(|name| base.join(name))
                .find(|path| path.is_file()),
        );
    }
    named
}
