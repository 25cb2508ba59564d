//! What a pinned script pulls in when it runs: the files a shell script
//! sources or runs, the local modules a Python script imports (and the
//! modules beside it that shadow the standard library), the relative
//! modules a JavaScript or TypeScript file requires or imports and the
//! files a Ruby script requires relative to itself, followed from file to
//! file.
//!
//! A hook is often a small entry script over a helper library
//! (`source "$(dirname "$0")/lib.sh"`, `from helpers import check`,
//! `require('./lib')`). Pinning only the entry would let an edited helper
//! run under the entry's trust. This reads each script as its language
//! would look its local files up, as far as the text says so literally
//! (and through the idioms for a script's own directory); what a script
//! computes at run time is not chased, and never marks the hook computed:
//! the command line's own scan decides that.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::{Runs, Scan, add, scan_into};

/// How many files are followed for one hook at most.
const MAX_FOLLOWED: usize = 256;

/// Larger files are not read (a script is not this big).
const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// The language a file is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lang {
    Shell,
    Python,
    Script,
    Ruby,
}

/// A file to read, the language it was found as (its extension or `#!`
/// line decides first) and where its absolute Python imports resolve
/// (`sys.path[0]`: the directory of the script the chain started from).
struct Item {
    file: PathBuf,
    found_as: Option<Lang>,
    python_root: PathBuf,
}

/// Adds to `out.files` what the files already in it pull in, recursively.
pub(super) fn follow(out: &mut Scan, runs: Runs<'_>) {
    let mut queue: Vec<Item> = out
        .files
        .iter()
        .map(|file| Item {
            python_root: real_dir(file),
            file: file.clone(),
            found_as: None,
        })
        .collect();
    let mut read = 0;
    let mut listed: Vec<PathBuf> = Vec::new();
    while let Some(item) = queue.pop() {
        read += 1;
        if read > MAX_FOLLOWED {
            break;
        }
        // A package's own files are its manager's to keep: its entry is
        // pinned, what it loads is not read (it can be thousands of files).
        if item
            .file
            .components()
            .any(|part| part.as_os_str() == "node_modules")
        {
            continue;
        }
        let Some((text, lang)) = script_text(&item.file, item.found_as) else {
            continue;
        };
        let mut found = match lang {
            Lang::Shell => shell_pulls(&item.file, &text, runs),
            Lang::Python => python_pulls(&real_dir(&item.file), &text, &item.python_root),
            Lang::Script => script_pulls(&real_dir(&item.file), &text),
            Lang::Ruby => ruby_pulls(&real_dir(&item.file), &text),
        };
        if lang == Lang::Python && !listed.contains(&item.python_root) {
            found.extend(stdlib_shadows(&item.python_root));
            listed.push(item.python_root.clone());
        }
        for file in found {
            let before = out.files.len();
            add(out, runs.project, &file);
            if out.files.len() > before {
                // An imported module resolves its own absolute imports from
                // where its chain started; a script a shell runs from its own
                // directory.
                let python_root = match lang {
                    Lang::Python => item.python_root.clone(),
                    Lang::Shell | Lang::Script | Lang::Ruby => real_dir(&file),
                };
                queue.push(Item {
                    file,
                    found_as: Some(lang),
                    python_root,
                });
            }
        }
    }
}

/// `path` with `.ext` added to its name (`./lib` → `./lib.js`; unlike
/// `with_extension`, `x.config` stays `x.config.js`).
fn appended(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

/// `path` with its `.` and `name/..` steps taken by their text.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other @ (Component::Prefix(_)
            | Component::RootDir
            | Component::ParentDir
            | Component::Normal(_)) => out.push(other),
        }
    }
    out
}

/// The folder a file really is in: Node, Python and Ruby resolve a
/// linked script before they look its neighbours up (a shell's `$0`
/// stays as written).
fn real_dir(file: &Path) -> PathBuf {
    // Only a linked file is resolved: its neighbours keep the spelling
    // the command gave them otherwise.
    match fs_err::symlink_metadata(file) {
        Ok(meta) if meta.file_type().is_symlink() => {
            parent(&file.canonicalize().unwrap_or_else(|_| file.to_owned()))
        }
        Ok(_) | Err(_) => parent(file),
    }
}

fn parent(file: &Path) -> PathBuf {
    file.parent().map(Path::to_owned).unwrap_or_default()
}

/// The file's text and language, when it is a script dsh can read.
fn script_text(file: &Path, found_as: Option<Lang>) -> Option<(String, Lang)> {
    let metadata = fs_err::metadata(file).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_SCRIPT_BYTES {
        return None;
    }
    let text = String::from_utf8(fs_err::read(file).ok()?).ok()?;
    let by_name = match file.extension().and_then(|ext| ext.to_str()) {
        Some("sh" | "bash" | "zsh" | "ksh" | "dash") => Some(Lang::Shell),
        Some("py") => Some(Lang::Python),
        Some("js" | "mjs" | "cjs" | "ts" | "mts" | "cts" | "jsx" | "tsx") => Some(Lang::Script),
        Some("rb") => Some(Lang::Ruby),
        _ => None,
    };
    let lang = by_name.or_else(|| by_shebang(&text)).or(found_as)?;
    Some((text, lang))
}

fn by_shebang(text: &str) -> Option<Lang> {
    let line = text.lines().next()?.strip_prefix("#!")?;
    let words: Vec<&str> = line
        .split_whitespace()
        .map(|word| word.rsplit('/').next().unwrap_or(word))
        .collect();
    words.iter().find_map(|word| match *word {
        "sh" | "bash" | "zsh" | "dash" | "ksh" => Some(Lang::Shell),
        "node" | "nodejs" | "deno" | "bun" | "tsx" | "ts-node" => Some(Lang::Script),
        "ruby" => Some(Lang::Ruby),
        word if word.starts_with("python") => Some(Lang::Python),
        _ => None,
    })
}

/// The forms a shell script names its own directory by, which the shell
/// resolves when it runs: `${0%/*}` and `${BASH_SOURCE[0]%/*}`.
static DIR_OF_SELF: LazyLock<Regex> =
    LazyLock::new(|| regex(r"\$\{(?:0|BASH_SOURCE(?:\[0\])?)%/\*\}"));

/// The script's own path: `$0`, `${0}`, `$BASH_SOURCE`, `${BASH_SOURCE[0]}`.
static SELF: LazyLock<Regex> =
    LazyLock::new(|| regex(r"\$\{(?:0|BASH_SOURCE(?:\[0\])?)\}|\$0|\$BASH_SOURCE\b"));

/// `$(dirname P)`, `$(realpath P)`, `$(readlink -f P)` and `$(cd P && pwd)`
/// over a literal path `P` (quoted or not): what they print.
static PATH_OF: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r#"\$\(\s*(dirname|realpath|readlink\s+-[fe]|cd)\s+(?:-P\s+)?(?:--\s+)?"#,
        r#""?([^"$`()\s;&|]+)"?"#,
        r#"\s*(?:[0-9]?>\s*/dev/null\s*(?:2>&1\s*)?|&>\s*/dev/null\s*)?"#,
        r#"(?:(?:&&|;)\s*pwd(?:\s+-P)?\s*)?\)"#,
    ))
});

/// `NAME=VALUE` with `VALUE` literal (after the forms above), which later
/// lines name as `$NAME`.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?m)^\s*(?:export\s+|readonly\s+|local\s+|declare\s+(?:-\w+\s+)?)?([A-Za-z_][A-Za-z0-9_]*)=("?)([^"$`\s;]*(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?[^"$`\s;]*)*)"#,
    )
});

fn regex(pattern: &str) -> Regex {
    // The patterns are this file's own constants; a test compiles each.
    #[allow(clippy::expect_used)]
    Regex::new(pattern).expect("a valid pattern")
}

/// What a shell script sources and runs: its text scanned as a command
/// line in the hook's directory, with the script's own path and directory
/// written in where the script names them.
fn shell_pulls(file: &Path, text: &str, runs: Runs<'_>) -> Vec<PathBuf> {
    let own = std::path::absolute(file).unwrap_or_else(|_| file.to_owned());
    let Some(own_text) = own.to_str().filter(|path| plain(path)) else {
        return Vec::new();
    };
    let dir_text = parent(&own).display().to_string();
    let mut text = DIR_OF_SELF
        .replace_all(text, dir_text.as_str())
        .into_owned();
    text = SELF.replace_all(&text, own_text).into_owned();
    // Inner forms first: `$(cd "$(dirname "$0")" && pwd)` takes two rounds.
    for _ in 0..4 {
        let next = PATH_OF.replace_all(&text, |caps: &Captures<'_>| {
            let path = Path::new(&caps[2]);
            match &caps[1] {
                "dirname" => parent(path).display().to_string(),
                _ => caps[2].to_owned(),
            }
        });
        if next == text {
            break;
        }
        text = next.into_owned();
    }
    let mut env = runs.env.to_vec();
    for caps in ASSIGNMENT.captures_iter(&text) {
        if let Some(value) = crate::expand_vars_with(&caps[3], runs.project, &env) {
            env.push((caps[1].to_owned(), value));
        }
    }
    let mut inner = Scan::default();
    let runs = Runs { env: &env, ..runs };
    scan_into(&text, runs, &mut inner, 1);
    inner.files
}

/// A path that can stand in a script's text as it is.
fn plain(path: &str) -> bool {
    !path
        .chars()
        .any(|c| c.is_whitespace() || "\"'$`\\()".contains(c))
}

/// `import a.b`, `import a, b as c`, `from a.b import c`, `from . import c`.
static PY_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?m)^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([^#\n]*)|import[ \t]+([^#\n]+))",
    )
});

/// The local modules a Python file imports: absolute imports from the
/// directory its chain started in (and, as Python 2 did, its own), relative
/// ones from its package.
fn python_pulls(own_dir: &Path, text: &str, root: &Path) -> Vec<PathBuf> {
    let own_dir = own_dir.to_owned();
    let mut files = Vec::new();
    for caps in PY_IMPORT.captures_iter(text) {
        if let Some(names) = caps.get(4) {
            for name in names.as_str().split(',') {
                let module = name.split_whitespace().next().unwrap_or("");
                for base in [root, own_dir.as_path()] {
                    files.extend(super::programs::module_files(base, module));
                }
            }
            continue;
        }
        let dots = caps.get(1).map_or(0, |dots| dots.as_str().len());
        let module = caps.get(2).map_or("", |module| module.as_str());
        let bases: Vec<PathBuf> = match dots {
            0 => vec![root.to_owned(), own_dir.clone()],
            up => {
                let mut base = own_dir.clone();
                for _ in 1..up {
                    base = parent(&base);
                }
                vec![base]
            }
        };
        let names: Vec<&str> = caps
            .get(3)
            .map_or("", |names| names.as_str())
            .split(',')
            .filter_map(|name| name.split_whitespace().next())
            .map(|name| name.trim_matches(|c| c == '(' || c == ')'))
            .filter(|name| !name.is_empty() && *name != "*")
            .collect();
        for base in &bases {
            let package = match module {
                "" => base.clone(),
                module => {
                    files.extend(super::programs::module_files(base, module));
                    module
                        .split('.')
                        .fold(base.clone(), |dir, part| dir.join(part))
                }
            };
            // `from pkg import mod` may name a submodule.
            for name in &names {
                files.extend(super::programs::module_files(&package, name));
            }
        }
    }
    files
}

/// The standard library's modules Python finds on its path (its built-in
/// ones it never looks up there), from `sys.stdlib_module_names`.
const PYTHON_STDLIB: &str = include_str!("python_stdlib.txt");

/// How many entries of a directory are looked at for shadowing modules.
const MAX_LISTED: usize = 10_000;

/// The modules in `root` (the first directory on a Python script's path)
/// named as standard library ones: the library imports them from there
/// instead of its own (`json` → `root/json.py`), whatever the script's
/// text names.
fn stdlib_shadows(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs_err::read_dir(root) else {
        return Vec::new();
    };
    let is_stdlib = |name: &str| PYTHON_STDLIB.lines().any(|module| module == name);
    let mut files = Vec::new();
    for entry in entries.flatten().take(MAX_LISTED) {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        match name.strip_suffix(".py") {
            Some(module) if is_stdlib(module) => files.push(entry.path()),
            Some(_) => {}
            None if is_stdlib(name) => files.push(entry.path().join("__init__.py")),
            None => {}
        }
    }
    files.sort();
    files
}

/// `require('./x')`, `import … from './x'`, `import './x'`, `import('./x')`,
/// `export … from './x'`: relative specifiers only (packages come from
/// `node_modules`, which the hook's own command does not name).
static JS_IMPORT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)['"](\.{1,2}/[^'"\n]+)['"]"#,
    )
});

/// The local modules a JavaScript or TypeScript file loads, resolved the
/// way Node and the TypeScript runners look them up from its directory.
fn script_pulls(dir: &Path, text: &str) -> Vec<PathBuf> {
    const EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "ts", "mts", "cts", "tsx", "jsx", "json"];
    let mut files = Vec::new();
    for caps in JS_IMPORT.captures_iter(text) {
        // Node resolves a specifier by its text (`path.resolve`), `..`
        // included, not through the links on the way.
        let path = lexical(&dir.join(&caps[1]));
        files.push(path.clone());
        for ext in EXTENSIONS {
            files.push(appended(&path, ext));
            files.push(path.join(format!("index.{ext}")));
        }
        // TypeScript sources import their compiled names (`./x.js` is `x.ts`).
        let swapped = match path.extension().and_then(|ext| ext.to_str()) {
            Some("js") => ["ts", "tsx"].as_slice(),
            Some("mjs") => ["mts"].as_slice(),
            Some("cjs") => ["cts"].as_slice(),
            _ => [].as_slice(),
        };
        for ext in swapped {
            files.push(path.with_extension(ext));
        }
    }
    files
}

/// `require_relative 'x'`, and `require`/`load` of a path that starts
/// with `./` or `../`.
static RUBY_REQUIRE: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"\b(?:require_relative\s*\(?\s*['"]([^'"\n]+)['"]|(?:require|load)\s*\(?\s*['"](\.{1,2}/[^'"\n]+)['"])"#,
    )
});

/// The files a Ruby script loads by a path relative to itself
/// (`require './x'` resolves from the working directory; from the
/// script's own folder is the common case, and what is pinned).
fn ruby_pulls(dir: &Path, text: &str) -> Vec<PathBuf> {
    RUBY_REQUIRE
        .captures_iter(text)
        .filter_map(|caps| caps.get(1).or_else(|| caps.get(2)))
        .flat_map(|relative| {
            let path = lexical(&dir.join(relative.as_str()));
            let with_ext = appended(&path, "rb");
            [path, with_ext]
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (name, text) in files {
            let path = root.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }

    fn pinned(command: &str, project: &Path) -> Vec<String> {
        let mut names: Vec<String> = crate::exec_scan::scan(command, project)
            .files
            .iter()
            .map(|file| {
                let file = file.strip_prefix(project).unwrap_or(file);
                let file = std::path::absolute(project.join(file)).unwrap();
                file.strip_prefix(project.canonicalize().unwrap())
                    .or_else(|_| file.strip_prefix(project))
                    .unwrap()
                    .display()
                    .to_string()
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn the_patterns_compile() {
        for pattern in [
            &DIR_OF_SELF,
            &SELF,
            &PATH_OF,
            &ASSIGNMENT,
            &PY_IMPORT,
            &JS_IMPORT,
            &RUBY_REQUIRE,
        ] {
            LazyLock::force(pattern);
        }
    }

    #[test]
    fn a_shell_script_pins_what_it_sources_and_runs_through_its_own_directory() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(
            p,
            &[
                (
                    ".claude/hooks/guard.sh",
                    concat!(
                        "#!/bin/bash\n",
                        "set -euo pipefail\n",
                        "HERE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n",
                        "source \"$HERE/lib/common.sh\"\n",
                        ". \"$(dirname \"$0\")/lib/more.sh\"\n",
                        "check() {\n  if [ -n \"$1\" ]; then\n    python3 \"${0%/*}/check.py\"\n  fi\n}\n",
                        "cat <<EOF\nnot a command: source nothing.sh\nEOF\n",
                        "check \"$@\"\n",
                    ),
                ),
                (
                    ".claude/hooks/lib/common.sh",
                    "source \"$CLAUDE_PROJECT_DIR/.claude/hooks/lib/deep.sh\"\n",
                ),
                (".claude/hooks/lib/deep.sh", "true\n"),
                (".claude/hooks/lib/more.sh", "true\n"),
                (".claude/hooks/check.py", "import sys\n"),
                ("nothing.sh", "true\n"),
            ],
        );
        assert_eq!(
            pinned("bash .claude/hooks/guard.sh", p),
            [
                ".claude/hooks/check.py",
                ".claude/hooks/guard.sh",
                ".claude/hooks/lib/common.sh",
                ".claude/hooks/lib/deep.sh",
                ".claude/hooks/lib/more.sh",
            ]
        );
    }

    #[test]
    fn a_python_script_pins_the_local_modules_it_imports() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(
            p,
            &[
                (
                    "hooks/guard.py",
                    concat!(
                        "import json, sys\n",
                        "import helpers as h\n",
                        "from rules.bash import check  # the bash rules\n",
                        "from rules import (\n    files,\n)\n",
                        "def main():\n    import late\n",
                    ),
                ),
                ("hooks/helpers.py", "from . import nothing\n"),
                ("hooks/json.py", "# shadows the standard library: it runs\n"),
                ("hooks/late.py", ""),
                ("hooks/rules/__init__.py", ""),
                (
                    "hooks/rules/bash.py",
                    "from .shared import words\nfrom ..up import x\n",
                ),
                ("hooks/rules/shared.py", ""),
                ("hooks/rules/files.py", ""),
                ("hooks/up.py", ""),
                ("hooks/unused.py", ""),
                // Named as the standard library: imported from here by it.
                ("hooks/threading.py", ""),
                ("hooks/email/__init__.py", ""),
            ],
        );
        assert_eq!(
            pinned("python3 hooks/guard.py", p),
            [
                "hooks/email/__init__.py",
                "hooks/guard.py",
                "hooks/helpers.py",
                "hooks/json.py",
                "hooks/late.py",
                "hooks/rules/__init__.py",
                "hooks/rules/bash.py",
                "hooks/rules/shared.py",
                "hooks/threading.py",
                "hooks/up.py",
            ]
        );
    }

    #[test]
    fn a_script_pins_the_relative_modules_it_loads() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(
            p,
            &[
                (
                    "hooks/guard.ts",
                    concat!(
                        "import { check } from './lib/check.js';\n",
                        "import fs from 'node:fs';\n",
                        "const rules = require(\"../rules\");\n",
                        "export * from './reexport';\n",
                    ),
                ),
                ("hooks/lib/check.ts", "import './side-effect.mjs';\n"),
                ("hooks/lib/side-effect.mjs", ""),
                ("hooks/reexport.js", ""),
                (
                    "rules/index.js",
                    "module.exports = require('./list.json');\n",
                ),
                ("rules/list.json", "[]"),
            ],
        );
        assert_eq!(
            pinned("npx tsx hooks/guard.ts", p),
            [
                "hooks/guard.ts",
                "hooks/lib/check.ts",
                "hooks/lib/side-effect.mjs",
                "hooks/reexport.js",
                "rules/index.js",
                "rules/list.json",
            ]
        );
    }

    #[test]
    fn a_linked_script_loads_from_where_it_points_and_packages_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(
            p,
            &[
                ("tools/real/run.js", "require('./lib.js');\n"),
                ("tools/real/lib.js", ""),
                ("node_modules/pkg/bin/cli.js", "require('../index.js');\n"),
                ("node_modules/pkg/index.js", ""),
                ("hook.js", "require('./node_modules/pkg/bin/cli.js');\n"),
            ],
        );
        std::fs::create_dir_all(p.join("bin")).unwrap();
        std::os::unix::fs::symlink(p.join("tools/real/run.js"), p.join("bin/run.js")).unwrap();
        assert_eq!(
            pinned("node bin/run.js", p),
            ["bin/run.js", "tools/real/lib.js"]
        );
        // A package's entry is pinned; what it loads is its manager's.
        assert_eq!(
            pinned("node hook.js", p),
            ["hook.js", "node_modules/pkg/bin/cli.js"]
        );
    }

    #[test]
    fn a_ruby_script_pins_what_it_requires_relative_to_itself() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(
            p,
            &[
                (
                    "hooks/guard.rb",
                    "require 'json'\nrequire_relative 'lib/rules'\nload(\"../shared.rb\")\n",
                ),
                ("hooks/lib/rules.rb", "require_relative \"more.rb\"\n"),
                ("hooks/lib/more.rb", ""),
                ("shared.rb", ""),
            ],
        );
        assert_eq!(
            pinned("ruby hooks/guard.rb", p),
            [
                "hooks/guard.rb",
                "hooks/lib/more.rb",
                "hooks/lib/rules.rb",
                "shared.rb"
            ]
        );
    }

    #[test]
    fn a_loop_of_sources_ends_and_data_files_are_not_read_as_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        write(
            p,
            &[
                ("a.sh", "source ./b.sh\n"),
                ("b.sh", "source ./a.sh\n"),
                ("rules.txt", "source ./c.sh\n"),
                ("c.sh", "true\n"),
            ],
        );
        assert_eq!(pinned("bash a.sh", p), ["a.sh", "b.sh"]);
        // `rules.txt` is read by the hook, not run: nothing it says counts.
        assert_eq!(pinned("bash a.sh < rules.txt", p), ["a.sh", "b.sh"]);
    }
}
