//! The documentation checks CI runs with the rest of the suite: every
//! internal link and anchor resolves, every shell example marked runnable
//! runs, and the project's prose speaks only of itself.
//!
//! (The command-line reference is checked against clap in the binary crate,
//! `crates/cli/cli_reference.rs`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::repo_root;

/// Every Markdown file that is documentation: the README, the book under
/// `docs/`, and the READMEs beside the code.
fn markdown_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    for top in [
        "docs",
        "crates",
        "hooks-claude",
        "hooks-codex",
        "hooks-gemini",
        "fixtures",
    ] {
        collect(&root.join(top), &mut files, &|path| {
            path.extension().is_some_and(|ext| ext == "md")
        });
    }
    files.sort();
    files
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>, keep: &dyn Fn(&Path) -> bool) {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == "target" || name == "node_modules" || name == "book" || name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            collect(&path, out, keep);
        } else if keep(&path) {
            out.push(path);
        }
    }
}

/// The lines of a Markdown file outside fenced code blocks, with their
/// numbers, and with inline code spans blanked out.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut prose = String::new();
        let mut in_code = false;
        for character in line.chars() {
            if character == '`' {
                in_code = !in_code;
                continue;
            }
            if !in_code {
                prose.push(character);
            }
        }
        lines.push((index + 1, prose));
    }
    lines
}

/// The targets of `[text](target)` links on a line.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find("](") {
        let after = &rest[start + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        targets.push(target.to_owned());
        rest = &after[end..];
    }
    targets
}

/// The anchor ids mdbook (and GitHub) give a file's headings.
fn heading_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let mut id = String::new();
        for character in title.chars() {
            if character.is_alphanumeric() || character == '_' || character == '-' {
                id.extend(character.to_lowercase());
            } else if character.is_whitespace() {
                id.push('-');
            }
        }
        let mut unique = id.clone();
        let mut n = 1;
        while ids.contains(&unique) {
            unique = format!("{id}-{n}");
            n += 1;
        }
        ids.insert(unique);
    }
    ids
}

#[test]
fn every_internal_link_and_anchor_resolves() {
    let root = repo_root();
    let mut broken = Vec::new();
    let mut checked = 0usize;
    for file in markdown_files() {
        let text = fs_err::read_to_string(&file).unwrap();
        for (number, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = match target.split_once('#') {
                    Some((path, anchor)) => (path, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let resolved = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                let shown = file
                    .strip_prefix(&root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                if !resolved.exists() {
                    broken.push(format!("{shown}:{number}: {target}: no such file"));
                    continue;
                }
                if let Some(anchor) = anchor
                    && resolved.extension().is_some_and(|ext| ext == "md")
                {
                    let ids = heading_ids(&fs_err::read_to_string(&resolved).unwrap());
                    if !ids.contains(anchor) {
                        broken.push(format!(
                            "{shown}:{number}: {target}: no heading with id `{anchor}`"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser broken?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// Every page of the book is in its table of contents: mdBook renders
/// only the pages `docs/SUMMARY.md` links, so any other page is one no
/// reader can reach.
#[test]
fn every_page_is_reachable_from_the_summary() {
    let docs = repo_root().join("docs");
    let summary = fs_err::read_to_string(docs.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = prose_lines(&summary)
        .iter()
        .flat_map(|(_, line)| link_targets(line))
        .map(|target| docs.join(target.split('#').next().unwrap_or_default()))
        .collect();
    let mut pages = Vec::new();
    collect(&docs, &mut pages, &|path| {
        path.extension().is_some_and(|ext| ext == "md")
    });
    let unreachable: Vec<String> = pages
        .iter()
        .filter(|page| page.file_name().is_some_and(|name| name != "SUMMARY.md"))
        .filter(|page| !listed.contains(*page))
        .map(|page| page.strip_prefix(&docs).unwrap().display().to_string())
        .collect();
    assert!(
        pages.len() > 20,
        "only {} pages found: is the walk broken?",
        pages.len()
    );
    assert!(
        unreachable.is_empty(),
        "pages not in docs/SUMMARY.md: {unreachable:?}"
    );
}

/// The keys `docs/reference/config.md` documents: the first cell of each
/// table row, under `## \`[table]\`` headings (`table.key`) or `## Top-level
/// keys` (bare).
fn documented_config_keys(text: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut table: Option<String> = None;
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        if let Some(heading) = line.strip_prefix("## ") {
            table = if heading.trim() == "Top-level keys" {
                Some(String::new())
            } else {
                heading
                    .trim()
                    .strip_prefix("`[")
                    .and_then(|rest| rest.strip_suffix("]`"))
                    .map(|name| format!("{name}."))
            };
            continue;
        }
        let Some(prefix) = &table else {
            continue;
        };
        let Some(cell) = line
            .strip_prefix("| `")
            .and_then(|rest| rest.split_once('`'))
        else {
            continue;
        };
        let key = cell.0.trim_start_matches('[').trim_end_matches(']');
        let key = key.strip_prefix(prefix.as_str()).unwrap_or(key);
        // A header row, and the per-API table's first column (API values).
        if matches!(
            key,
            "config.toml" | "key" | "chat" | "anthropic" | "responses"
        ) {
            continue;
        }
        keys.insert(format!("{prefix}{key}"));
    }
    keys
}

/// The config reference and the code agree on the keys of `config.toml`:
/// a key the code reads and the page does not name fails, and so does a
/// key the page names that the code does not read.
#[test]
fn the_config_reference_names_exactly_the_keys_the_code_reads() {
    let page = fs_err::read_to_string(repo_root().join("docs/reference/config.md")).unwrap();
    let documented = documented_config_keys(&page);
    let code: BTreeSet<String> = dsh_core::config_keys().into_iter().collect();
    assert!(
        code.contains("provider.base_url") && code.contains("system_prompt"),
        "the key probe found {code:?}"
    );
    let undocumented: Vec<&String> = code.difference(&documented).collect();
    let unknown: Vec<&String> = documented.difference(&code).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "docs/reference/config.md and the code disagree:\n  read by the code, not documented: {undocumented:?}\n  documented, not read: {unknown:?}"
    );
}

/// Fenced blocks marked ```` ```sh,runnable ```` run, file by file, in one
/// `bash` each (so a block may use what an earlier block of the same page
/// made), in a scratch directory with its own HOME, the built `dsh` first on
/// PATH and `DSH_REPO` naming the repository.
#[test]
fn runnable_shell_examples_run() {
    let dsh = PathBuf::from(env!("CARGO_BIN_EXE_dsh"));
    let mut ran = 0usize;
    for file in markdown_files() {
        let text = fs_err::read_to_string(&file).unwrap();
        let mut script = String::new();
        let mut inside = false;
        for line in text.lines() {
            let trimmed = line.trim_start();
            if !inside && trimmed.starts_with("```sh,runnable") {
                inside = true;
                continue;
            }
            if inside && trimmed.starts_with("```") {
                inside = false;
                script.push('\n');
                ran += 1;
                continue;
            }
            if inside {
                script.push_str(line);
                script.push('\n');
            }
        }
        if script.is_empty() {
            continue;
        }
        let scratch = tempfile::tempdir().unwrap();
        let home = scratch.path().join("home");
        let work = scratch.path().join("work");
        fs_err::create_dir_all(&home).unwrap();
        fs_err::create_dir_all(&work).unwrap();
        let path = format!(
            "{}:{}",
            dsh.parent().unwrap().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let output = Command::new("bash")
            .arg("-c")
            .arg(format!("set -euo pipefail\n{script}"))
            .current_dir(&work)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &home)
            .env("DSH_REPO", repo_root())
            .env("NO_COLOR", "1")
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the runnable examples of {} failed ({}):\n--- script\n{script}--- stdout\n{}--- stderr\n{}",
            file.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(ran >= 3, "only {ran} runnable examples found");
}

/// No issue numbers or "until it lands" in the documentation or in code
/// comments: the project speaks of what it is, not of how it was planned.
#[test]
fn the_project_speaks_only_of_itself() {
    let root = repo_root();
    let mut files = markdown_files();
    for top in [
        "crates",
        "hooks-claude",
        "hooks-codex",
        "hooks-gemini",
        "tests",
        "scripts",
        ".ci",
    ] {
        collect(&root.join(top), &mut files, &|path| {
            path.extension()
                .is_some_and(|ext| ext == "rs" || ext == "sh" || ext == "toml" || ext == "py")
        });
    }
    files.push(root.join("Cargo.toml"));
    files.push(root.join(".ci/run"));
    let pattern = regex::Regex::new(r"(?i)\bissues? #?[0-9]+|until it lands|\(issue\b").unwrap();
    let mut found = Vec::new();
    for file in files {
        // This file names the pattern it looks for.
        if file.ends_with("tests/docs.rs") {
            continue;
        }
        let Ok(text) = fs_err::read_to_string(&file) else {
            continue;
        };
        for (index, line) in text.lines().enumerate() {
            if pattern.is_match(line) {
                let shown = file
                    .strip_prefix(&root)
                    .unwrap_or(&file)
                    .display()
                    .to_string();
                found.push(format!("{shown}:{}: {}", index + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "planning references left in the project:\n{}",
        found.join("\n")
    );
}
