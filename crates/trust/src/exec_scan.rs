//! What a hook command executes: the files whose contents belong in its
//! trust hash, and whether dsh can see them at all.
//!
//! The command is read with `dsh-shell`, the shell parse the permission
//! model uses: every simple command it can run, in lists, pipelines,
//! groups, subshells, control structures and `bash -c` strings; `cd DIR`
//! moves the base for later relative paths, and in each simple command
//! these count as executed:
//!
//! - the program itself when it is a path (`./x`, `$CLAUDE_PROJECT_DIR/x`),
//!   binaries included;
//! - the script an interpreter is given (`bash x`, `python3 x`, `node x`,
//!   `source x`, `. x`, past options and their values), what `bash -c '…'`
//!   runs, scanned the same way, Node's preloads (`-r x`), `python -m`'s
//!   module with its packages, and a makefile `make` reads;
//! - every file named on the line a launcher runs (`uv run x`, `npx tsx x`,
//!   `deno run -A x`): its options may take values the scan cannot tell
//!   from the program;
//! - any other path argument that is a file with a `#!` line or an
//!   execute bit (`xargs ./x`, `env ./x`);
//! - a package manager's script (`npm run x`, `pnpm x`): its `package.json`
//!   and what the script's command runs;
//! - a bare program name the project ships where a launcher looks first
//!   (`node_modules/.bin`, `.venv/bin`) or on a `PATH` the hook's `env` sets;
//! - what each of those files pulls in itself, file to file (`pulls`).
//!
//! Files the command only reads or writes as data are not executed and are
//! not hashed. Binaries count only inside the project (a system binary
//! changing is not a reason to ask again); scripts count wherever they are. Where the command computes what
//! it runs — `$(…)`, backquotes, `eval`, `<(…)`, an unset variable in a
//! path, `bash -c "$(cat x)"` — [`Scan::computed`] says so: no hash can
//! cover that.

use std::path::{Path, PathBuf};

use crate::expand_vars_with;

mod programs;
mod pulls;

use programs::{Bins, PRELOADS, env_path, launched_from, makefiles, module_files, package_scripts};

/// What [`scan`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Files inside the project the command executes or sources, in order.
    pub files: Vec<PathBuf>,
    /// The command computes what it runs; changes there are invisible.
    pub computed: bool,
}

/// Programs that run the file they are given as their first operand.
const INTERPRETERS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python2", "python3", "node", "nodejs",
    "deno", "bun", "ruby", "perl", "php", "lua", "Rscript", "tsx", "ts-node", "pwsh", "source",
    ".",
];

/// Words that run the rest of the line as a command.
const WRAPPERS: &[&str] = &["exec", "env", "nohup", "time", "command", "nice", "builtin"];

/// Where a command runs, as far as the files it names are concerned.
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    /// Its working directory: relative paths resolve here.
    pub dir: &'a Path,
    /// The project: what the project-directory variables stand for, and
    /// where a binary counts as one of the project's files.
    pub project: &'a Path,
    /// Variables its dialect sets for it (over the environment's).
    pub env: &'a [(String, String)],
}

/// Scans `command` run with `project` as its working directory.
pub fn scan(command: &str, project: &Path) -> Scan {
    scan_in(
        command,
        Runs {
            dir: project,
            project,
            env: &[],
        },
    )
}

/// Scans `command` run where `runs` says.
pub fn scan_in(command: &str, runs: Runs<'_>) -> Scan {
    let mut out = Scan::default();
    // A shell the hook starts sources these before the command runs.
    for (name, file) in runs.env {
        if name == "BASH_ENV" || name == "ENV" {
            add(&mut out, runs.project, &runs.dir.join(file));
        }
    }
    scan_into(command, runs, &mut out, 0);
    pulls::follow(&mut out, runs);
    out
}

fn scan_into(command: &str, runs: Runs<'_>, out: &mut Scan, depth: u32) {
    let project = runs.project;
    if command.contains("$(")
        || command.contains('`')
        || command.contains("<(")
        || command.contains(">(")
    {
        out.computed = true;
    }
    let mut base = runs.dir.to_owned();
    for words in simple_commands(command, &mut out.computed) {
        // An unset variable leaves a word unknown (`None`): harmless as a
        // plain argument, but as the program or a script operand what runs
        // is decided at run time.
        let expanded: Vec<Option<String>> = words
            .iter()
            .map(|word| {
                word.as_deref()
                    .and_then(|w| expand_vars_with(w, project, runs.env))
            })
            .collect();
        // Leading assignments, wrappers and launchers do not name the
        // program.
        let mut rest = expanded.as_slice();
        // Where a bare program name is found, as far as the project goes.
        let mut path_dirs = env_path(runs, &base);
        while let Some((Some(first), tail)) = rest.split_first() {
            let is_assignment = first
                .split_once('=')
                .is_some_and(|(name, _)| !name.is_empty() && !name.contains('/'));
            if is_assignment || WRAPPERS.contains(&first.as_str()) {
                rest = tail;
            } else if let Some((manifest, scripts)) = package_scripts(first, tail, &base) {
                scan_package_scripts(&manifest, &scripts, &base, runs, out, depth);
                rest = &[];
                break;
            } else if let Some((taken, bins)) = launched_from(first, tail) {
                // `add` keeps only the words that are files.
                for arg in tail.iter().flatten() {
                    add(out, project, &base.join(arg));
                }
                for manifest in bins.manifests(&base) {
                    add(out, project, &manifest);
                }
                let mut dirs = bins.dirs(&base);
                dirs.append(&mut path_dirs);
                path_dirs = dirs;
                rest = &tail[taken..];
            } else {
                break;
            }
        }
        let Some((program, args)) = rest.split_first() else {
            continue;
        };
        let Some(program) = program else {
            out.computed = true;
            continue;
        };
        if program == "eval" {
            out.computed = true;
            continue;
        }
        if program == "cd" {
            match args
                .iter()
                .find(|arg| arg.as_deref().is_none_or(|arg| !arg.starts_with('-')))
            {
                Some(Some(dir)) => base = base.join(dir),
                // `cd $UNSET`: later relative paths are unknowable.
                Some(None) => out.computed = true,
                None => {}
            }
            continue;
        }
        if program.contains('/') {
            add(out, project, &base.join(program));
        } else if let Some(found) = (path_dirs.iter())
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
        {
            add(out, project, &found);
        }
        let name = program.rsplit('/').next().unwrap_or(program);
        // git runs what its repository configures (`core.fsmonitor`, a
        // textconv driver, the index hook): that file is pinned, so such a
        // program added after trust does not run under the hook's.
        if name == "git"
            && let Some(found) = crate::gitconfig::configured_program(&base)
        {
            add(out, project, &found.file);
        }
        if name == "make" || name == "gmake" {
            for makefile in makefiles(&base, args) {
                add(out, project, &makefile);
            }
            continue;
        }
        let interpreter = INTERPRETERS.contains(&name)
            || name.strip_prefix("python").is_some_and(|v| {
                !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.')
            });
        let python = name.starts_with("python");
        let mut operand_taken = !interpreter;
        // The option before this word, when it may take it as its value.
        let mut after_option = false;
        let mut args_iter = args.iter();
        while let Some(arg) = args_iter.next() {
            let Some(arg) = arg else {
                if !operand_taken {
                    out.computed = true;
                    operand_taken = true;
                }
                continue;
            };
            let option_value = std::mem::replace(
                &mut after_option,
                arg.starts_with('-') && !arg.contains('='),
            );
            if !operand_taken {
                match arg.as_str() {
                    // `python -m pkg.mod` runs the module's file.
                    "-m" if python => {
                        if let Some(Some(module)) = args_iter.next() {
                            for file in module_files(&base, module) {
                                add(out, project, &file);
                            }
                        }
                        operand_taken = true;
                        continue;
                    }
                    preload if PRELOADS.contains(&preload) => {
                        if let Some(Some(file)) = args_iter.next() {
                            add(out, project, &base.join(file));
                        }
                        after_option = false;
                        continue;
                    }
                    // An option's value (`python3 -W ignore x.py`), not
                    // the script.
                    value
                        if option_value
                            && !value.starts_with('-')
                            && !base.join(value).is_file() =>
                    {
                        continue;
                    }
                    // Inline code: a shell's is scanned as a command; other
                    // languages' is in the hashed command text itself.
                    "-c" => {
                        if let Some(Some(code)) = args_iter.next()
                            && matches!(name, "sh" | "bash" | "zsh" | "dash" | "ksh")
                            && depth < 4
                        {
                            scan_into(code, runs, out, depth + 1);
                        }
                        operand_taken = true;
                        continue;
                    }
                    // A module or an evaluated string names no file.
                    "-m" | "-e" | "--eval" | "-p" => {
                        operand_taken = true;
                        continue;
                    }
                    other if other.starts_with('-') => continue,
                    _ => {
                        operand_taken = true;
                        add(out, project, &base.join(arg));
                        continue;
                    }
                }
            }
            if arg.starts_with('-') {
                continue;
            }
            let path = base.join(arg);
            if (arg.contains('/') || path.is_file()) && looks_executable(&path) {
                add(out, project, &path);
            }
        }
    }
}

/// A line that runs `package.json` scripts: the manifest, and what each
/// script runs from its folder, with each `node_modules/.bin` above it
/// first on `PATH`.
fn scan_package_scripts(
    manifest: &Path,
    scripts: &[String],
    base: &Path,
    runs: Runs<'_>,
    out: &mut Scan,
    depth: u32,
) {
    add(out, runs.project, manifest);
    let folder = manifest.parent().unwrap_or(base);
    let path: Vec<String> = (Bins::Node.dirs(folder).into_iter())
        .chain(env_path(runs, base))
        .map(|dir| dir.display().to_string())
        .collect();
    let mut env = runs.env.to_vec();
    env.push(("PATH".to_owned(), path.join(":")));
    if depth >= 4 {
        return;
    }
    for script in scripts {
        let runs = Runs {
            dir: folder,
            env: &env,
            ..runs
        };
        scan_into(script, runs, out, depth + 1);
    }
}

/// Adds `path` when it is a regular file inside the project, or a
/// non-binary file elsewhere (a script in `$HOME`; not `/usr/bin/python3`,
/// whose updates are no reason to ask again).
fn add(out: &mut Scan, project: &Path, path: &Path) {
    let Ok(metadata) = fs_err::metadata(path) else {
        return;
    };
    if !metadata.is_file() {
        return;
    }
    let resolved = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let project = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_owned());
    if !resolved.starts_with(&project) && is_binary(path) {
        return;
    }
    let path = path.to_owned();
    if !out.files.contains(&path) {
        out.files.push(path);
    }
}

/// An ELF executable (or a file that cannot be read to tell).
fn is_binary(path: &Path) -> bool {
    first_bytes::<4>(path).is_none_or(|magic| magic == *b"\x7fELF")
}

// custom_flags (O_NONBLOCK: a FIFO never blocks the scan) needs std's
// OpenOptionsExt.
#[allow(clippy::disallowed_methods)]
fn first_bytes<const N: usize>(path: &Path) -> Option<[u8; N]> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut bytes = [0u8; N];
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .and_then(|mut file| file.read_exact(&mut bytes))
        .ok()
        .map(|()| bytes)
}

/// A regular file with an execute bit or a `#!` first line.
fn looks_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(metadata) = fs_err::metadata(path) else {
        return false;
    };
    if !metadata.is_file() {
        return false;
    }
    if metadata.permissions().mode() & 0o111 != 0 {
        return true;
    }
    first_bytes::<2>(path).is_some_and(|magic| magic == *b"#!")
}

/// The simple commands of `command`, as `dsh-shell` (the parse the
/// permission model uses) finds them: in lists, pipelines, groups,
/// subshells, control structures and `bash -c` strings, each with its
/// words after quote removal and `$VAR` kept for [`expand_vars`] (`None`
/// for a word holding a substitution). What the parse cannot see through
/// sets `computed`.
fn simple_commands(command: &str, computed: &mut bool) -> Vec<Vec<Option<String>>> {
    let line = dsh_shell::parse(command);
    // A line (or word) the parser rejects is computed. Other opaque
    // reasons are the permission model's (`source FILE`, `$VAR/x` as the
    // program): here the file is hashed and known variables expanded, and
    // substitutions, `eval` and unset variables are caught by the scan.
    if line
        .opaque
        .iter()
        .any(|why| why.contains("cannot be parsed") || why.contains("too deeply"))
    {
        *computed = true;
    }
    line.commands
        .iter()
        .filter(|c| !c.words.is_empty())
        .map(|c| {
            let assignments = c
                .assignments
                .iter()
                .take(c.shell_assignments)
                .map(|a| Some(format!("{}={}", a.name, a.value.text())));
            assignments
                .chain(c.words.iter().map(|w| match &w.value {
                    Some(v) => Some(v.clone()),
                    None => dsh_shell::template(&w.raw),
                }))
                .collect()
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("d")).unwrap();
        std::fs::write(p.join("guard.sh"), "echo guard\n").unwrap();
        std::fs::write(p.join("d/inner.sh"), "echo inner\n").unwrap();
        std::fs::write(p.join("lib.sh"), "helper() { :; }\n").unwrap();
        std::fs::write(p.join("check.py"), "print(1)\n").unwrap();
        std::fs::write(p.join("data.json"), "{}\n").unwrap();
        std::fs::write(p.join("out.log"), "").unwrap();
        std::fs::write(p.join("tool"), b"\x7fELF\x02\x01\x01\0").unwrap();
        std::fs::set_permissions(p.join("tool"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(p.join("shebang"), "#!/bin/sh\necho hi\n").unwrap();
        dir
    }

    fn names(scan: &Scan, project: &Path) -> Vec<String> {
        scan.files
            .iter()
            .map(|f| f.strip_prefix(project).unwrap().display().to_string())
            .collect()
    }

    #[test]
    fn launchers_modules_preloads_option_values_and_makefiles_pin_what_runs() {
        let dir = project();
        let p = dir.path();
        for file in [
            "hooks/guard.py",
            "hooks/guard.ts",
            "hooks/pre.js",
            "hooks/g.js",
            "tools/__init__.py",
            "tools/guard.py",
            "hooks.mk",
            "Makefile",
        ] {
            std::fs::create_dir_all(p.join(file).parent().unwrap()).unwrap();
            // Neither executable nor `#!`: only where they stand says they run.
            std::fs::write(p.join(file), "x\n").unwrap();
        }
        for (command, expected) in [
            ("uv run hooks/guard.py", vec!["hooks/guard.py"]),
            (
                "uv run --with requests hooks/guard.py",
                vec!["hooks/guard.py"],
            ),
            ("npx tsx hooks/guard.ts", vec!["hooks/guard.ts"]),
            ("npx --yes tsx hooks/guard.ts", vec!["hooks/guard.ts"]),
            ("bun run hooks/guard.ts", vec!["hooks/guard.ts"]),
            ("deno run -A hooks/guard.ts", vec!["hooks/guard.ts"]),
            ("poetry run python hooks/guard.py", vec!["hooks/guard.py"]),
            (
                "python3 -m tools.guard",
                vec!["tools/__init__.py", "tools/guard.py"],
            ),
            ("python3 -W ignore hooks/guard.py", vec!["hooks/guard.py"]),
            ("bash -o pipefail guard.sh", vec!["guard.sh"]),
            ("bash -e -c 'bash guard.sh'", vec!["guard.sh"]),
            (
                "node --require ./hooks/pre.js hooks/g.js",
                vec!["hooks/pre.js", "hooks/g.js"],
            ),
            (
                "node -r hooks/pre.js hooks/g.js",
                vec!["hooks/pre.js", "hooks/g.js"],
            ),
            ("make -f hooks.mk check", vec!["hooks.mk"]),
            ("make --file=hooks.mk", vec!["hooks.mk"]),
            ("make check", vec!["Makefile"]),
            // A plain data argument still is not what runs.
            ("uv pip list data.json", vec![]),
        ] {
            let scan = scan(command, p);
            let found: Vec<String> = names(&scan, p)
                .into_iter()
                .map(|name| name.trim_start_matches("./").to_owned())
                .collect();
            assert_eq!(found, expected, "{command}");
        }
    }

    #[test]
    fn a_package_script_pins_the_manifest_and_what_the_script_runs() {
        let dir = project();
        let p = dir.path();
        std::fs::create_dir_all(p.join("hooks/src")).unwrap();
        std::fs::write(
            p.join("hooks/package.json"),
            r#"{"scripts": {"prelint": "bash ../guard.sh", "lint": "node src/lint.js", "test": "python3 ../check.py"}}"#,
        )
        .unwrap();
        std::fs::write(p.join("hooks/src/lint.js"), "x\n").unwrap();
        std::fs::write(p.join("hooks/src/run.ts"), "x\n").unwrap();
        let runs = Runs {
            dir: &p.join("hooks/src"),
            project: p,
            env: &[],
        };
        let lint = [
            "hooks/package.json",
            "hooks/../guard.sh",
            "hooks/src/lint.js",
        ];
        for (command, expected) in [
            ("npm run lint", lint.as_slice()),
            ("npm run --silent lint -- --fix", lint.as_slice()),
            ("pnpm lint", lint.as_slice()),
            ("yarn run lint", lint.as_slice()),
            ("bun run lint", lint.as_slice()),
            (
                "npm test",
                ["hooks/package.json", "hooks/../check.py"].as_slice(),
            ),
            // No such script: what npm reads is still pinned.
            ("npm run missing", ["hooks/package.json"].as_slice()),
            // A file, not a script.
            ("bun run run.ts", ["hooks/src/run.ts"].as_slice()),
            ("npm ci", [].as_slice()),
        ] {
            assert_eq!(names(&scan_in(command, runs), p), expected, "{command}");
        }
    }

    #[test]
    fn a_program_the_project_ships_where_its_launcher_or_path_finds_it_is_pinned() {
        let dir = project();
        let p = dir.path();
        for file in [
            "node_modules/.bin/tsx",
            "node_modules/.bin/eslint",
            ".venv/bin/ruff",
            "bin/mytool",
            "hooks/g.ts",
        ] {
            std::fs::create_dir_all(p.join(file).parent().unwrap()).unwrap();
            std::fs::write(p.join(file), "#!/bin/sh\n").unwrap();
        }
        std::fs::write(
            p.join("package.json"),
            r#"{"scripts": {"lint": "eslint ."}}"#,
        )
        .unwrap();
        // What `uv run` syncs (and may build) and `bundle exec` evaluates.
        std::fs::write(p.join("pyproject.toml"), "[project]\nname = \"x\"\n").unwrap();
        std::fs::write(p.join("Gemfile"), "source 'https://example.invalid'\n").unwrap();
        let in_hooks = Runs {
            dir: &p.join("hooks"),
            project: p,
            env: &[],
        };
        let on_path = [("PATH".to_owned(), "./bin:/usr/bin".to_owned())];
        for (command, runs, expected) in [
            (
                "npx tsx g.ts",
                in_hooks,
                vec!["hooks/g.ts", "node_modules/.bin/tsx"],
            ),
            (
                "npm run lint",
                in_hooks,
                vec!["package.json", "node_modules/.bin/eslint"],
            ),
            (
                "uv run ruff check",
                in_hooks,
                vec!["pyproject.toml", ".venv/bin/ruff"],
            ),
            ("bundle exec rake", in_hooks, vec!["Gemfile"]),
            // dsh's own PATH is not the project's: a bare name is not looked up.
            ("tsx g.ts", in_hooks, vec!["hooks/g.ts"]),
            // A PATH the entry sets is.
            (
                "mytool",
                Runs {
                    dir: p,
                    env: &on_path,
                    ..in_hooks
                },
                vec!["bin/mytool"],
            ),
        ] {
            let found: Vec<String> = names(&scan_in(command, runs), p)
                .into_iter()
                .map(|name| name.replace("hooks/../", "").replace("./", ""))
                .collect();
            assert_eq!(found, expected, "{command}");
        }
    }

    #[test]
    fn git_pins_the_configuration_that_makes_it_run_a_program() {
        let dir = project();
        let p = dir.path();
        std::fs::create_dir_all(p.join(".git/hooks")).unwrap();
        let config = "[core]\n\trepositoryformatversion = 0\n";
        std::fs::write(p.join(".git/config"), config).unwrap();
        let command = "git diff --name-only && bash guard.sh";
        // Nothing git would run: the configuration is git's own business.
        assert_eq!(names(&scan(command, p), p), ["guard.sh"]);
        std::fs::write(
            p.join(".git/config"),
            format!("{config}\tfsmonitor = ./w\n"),
        )
        .unwrap();
        assert_eq!(names(&scan(command, p), p), [".git/config", "guard.sh"]);
        std::fs::write(p.join(".git/config"), config).unwrap();
        std::fs::write(p.join(".git/hooks/post-index-change"), "#!/bin/sh\n").unwrap();
        assert_eq!(
            names(&scan(command, p), p),
            [".git/hooks/post-index-change", "guard.sh"]
        );
    }

    #[test]
    fn a_command_run_elsewhere_resolves_its_files_there_and_through_its_variables() {
        let dir = project();
        let p = dir.path();
        let env = [("TOOL_DIR".to_owned(), p.join("d").display().to_string())];
        let runs = Runs {
            dir: &p.join("d"),
            project: p,
            env: &env,
        };
        // `d/inner.sh`, not a missing `inner.sh` in the project.
        assert_eq!(names(&scan_in("bash inner.sh", runs), p), ["d/inner.sh"]);
        assert_eq!(
            names(&scan_in("sh \"$TOOL_DIR/inner.sh\"", runs), p),
            ["d/inner.sh"]
        );
        // The project-directory variables still name the project.
        assert_eq!(
            names(&scan_in("bash $CLAUDE_PROJECT_DIR/guard.sh", runs), p),
            ["guard.sh"]
        );
        // A startup file the hook's shell sources is pinned too.
        let sourced = [("BASH_ENV".to_owned(), "../lib.sh".to_owned())];
        let with_startup = Runs {
            env: &sourced,
            ..runs
        };
        assert_eq!(
            names(&scan_in("bash inner.sh", with_startup), p),
            ["d/../lib.sh", "d/inner.sh"]
        );
        // The variable set for the hook wins over the project's name.
        let shadowed = [(
            "CLAUDE_PROJECT_DIR".to_owned(),
            p.join("d").display().to_string(),
        )];
        let runs = Runs {
            env: &shadowed,
            ..runs
        };
        assert_eq!(
            names(&scan_in("bash $CLAUDE_PROJECT_DIR/inner.sh", runs), p),
            ["d/inner.sh"]
        );
    }

    #[test]
    fn interpreters_sourcing_cd_and_binaries_are_executed_files() {
        let dir = project();
        let p = dir.path();
        for (command, expected) in [
            ("bash guard.sh", vec!["guard.sh"]),
            ("python3 -u check.py --flag", vec!["check.py"]),
            ("source lib.sh && helper", vec!["lib.sh"]),
            (". ./lib.sh; helper", vec!["lib.sh"]),
            ("cd d && bash inner.sh", vec!["d/inner.sh"]),
            ("./tool --check", vec!["tool"]),
            ("$CLAUDE_PROJECT_DIR/tool", vec!["tool"]),
            ("bash -c 'bash guard.sh'", vec!["guard.sh"]),
            ("FOO=1 env ./shebang", vec!["shebang"]),
            ("xargs ./shebang < data.json", vec!["shebang"]),
        ] {
            let scan = scan(command, p);
            assert_eq!(names(&scan, p), expected, "{command}");
            assert!(!scan.computed, "{command}");
        }
    }

    /// The shell parse finds scripts inside groups, subshells and control
    /// structures, where cutting the text at operators saw `then` or `(`
    /// as the program.
    #[test]
    fn scripts_inside_compound_commands_are_found() {
        let dir = project();
        let p = dir.path();
        for (command, expected) in [
            ("if true; then bash guard.sh; fi", vec!["guard.sh"]),
            ("( cd d && bash inner.sh )", vec!["d/inner.sh"]),
            ("{ source lib.sh; helper; }", vec!["lib.sh"]),
            ("for i in 1; do python3 check.py; done", vec!["check.py"]),
            ("bash guard.sh # ; bash d/inner.sh", vec!["guard.sh"]),
        ] {
            let scan = scan(command, p);
            assert_eq!(names(&scan, p), expected, "{command}");
            assert!(!scan.computed, "{command}");
        }
    }

    #[test]
    fn every_dialects_project_dir_spelling_pins_the_script() {
        let dir = project();
        let p = dir.path();
        for command in [
            r#""${GEMINI_PROJECT_DIR}"/shebang"#,
            r#""$GEMINI_PROJECT_DIR"/shebang"#,
            "$GEMINI_PROJECT_DIR/shebang",
            r#""$GEMINI_PROJECT_DIR/shebang" --flag"#,
            "${GEMINI_CWD}/shebang",
            r#""${CLAUDE_PROJECT_DIR}"/shebang"#,
            "${CLAUDE_PROJECT_DIR}/shebang",
            r#"bash "$GEMINI_PROJECT_DIR/shebang""#,
        ] {
            let scan = scan(command, p);
            assert_eq!(names(&scan, p), ["shebang"], "{command}");
            assert!(!scan.computed, "{command}");
        }
    }

    #[test]
    fn data_files_are_not_executed() {
        let dir = project();
        let p = dir.path();
        for command in [
            "jq . data.json",
            "echo hi >> out.log",
            "tee out.log",
            "cat ./data.json",
        ] {
            assert_eq!(scan(command, p), Scan::default(), "{command}");
        }
    }

    #[test]
    fn computed_commands_are_flagged() {
        let dir = project();
        let p = dir.path();
        for command in [
            "bash -c \"$(cat guard.sh)\"",
            "`cat cmd.txt`",
            "eval \"$HOOK\"",
            "bash <(cat guard.sh)",
            "$DSH_SURELY_UNSET_VARIABLE_X/run",
            "bash $DSH_SURELY_UNSET_VARIABLE_X",
        ] {
            assert!(scan(command, p).computed, "{command}");
        }
        // An unset variable as a plain argument decides nothing that runs.
        assert!(!scan("bash guard.sh $DSH_SURELY_UNSET_VARIABLE_X", p).computed);
    }

    #[test]
    fn binaries_outside_the_project_are_not_hashed_scripts_are() {
        let dir = project();
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        assert!(
            scan(&format!("{} -c true", sh.display()), dir.path())
                .files
                .is_empty()
        );
        let elsewhere = tempfile::tempdir().unwrap();
        let script = elsewhere.path().join("hook.sh");
        std::fs::write(&script, "echo hi\n").unwrap();
        assert_eq!(
            scan(&format!("bash {}", script.display()), dir.path()).files,
            [script]
        );
    }
}
