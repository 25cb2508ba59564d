//! Paths are judged where they point: a repository's symbolic links do
//! not carry a read or write past a deny rule, and an allow rule or the
//! inside-the-project shortcut covers only where a path really lands.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::*;

/// A project whose committed links point into the user's home and out of
/// the project, next to that home and an outside directory.
struct World {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl World {
    fn new() -> World {
        let tmp = tempfile::tempdir().expect("tempdir");
        // The tempdir itself may sit under a link (TMPDIR): judge from its
        // real path so the test's own expectations are exact.
        let root = tmp.path().canonicalize().expect("real tempdir");
        let w = World { _tmp: tmp, root };
        for dir in [
            "home/u/.ssh",
            "outside/dir",
            "outside/vault",
            "proj/src",
            "proj/docs",
        ] {
            std::fs::create_dir_all(w.at(dir)).expect("mkdir");
        }
        for (file, text) in [
            ("home/u/.ssh/id_rsa", "KEY"),
            ("home/u/.bashrc", "rc"),
            ("outside/file", "outside"),
            ("outside/vault/x", "vault"),
            ("proj/src/a.rs", "fn a() {}"),
        ] {
            std::fs::write(w.at(file), text).expect("write");
        }
        for (link, target) in [
            ("proj/notes", "home/u/.ssh"),
            ("proj/rc", "home/u/.bashrc"),
            ("proj/out", "outside/file"),
            ("proj/linkdir", "outside/dir"),
            ("proj/dangling", "outside/new.txt"),
            ("proj/secrets", "outside/vault"),
            ("proj/src/evil", "outside/file"),
            ("plink", "proj"),
            ("hlink", "home/u"),
        ] {
            symlink(w.at(target), w.at(link)).expect("symlink");
        }
        // A link inside the project to the project's own files, relative.
        symlink("src", w.at("proj/inner")).expect("symlink");
        w
    }

    fn at(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn perms_in(&self, cwd: &str, home: &str, mode: Mode, settings: Value) -> Permissions {
        let ctx = PathContext {
            cwd: self.at(cwd),
            home: Some(self.at(home)),
            base: None,
        };
        let layer = Layer::from_settings_text(Source::User, "settings.json", &settings.to_string())
            .expect("settings parse");
        let mut p = Permissions::new(mode, ctx);
        p.add_layer(layer, Trust::Trusted);
        p
    }

    fn perms(&self, mode: Mode, settings: Value) -> Permissions {
        self.perms_in("proj", "home/u", mode, settings)
    }
}

fn deny(rules: &[&str]) -> Value {
    json!({"permissions": {"deny": rules}})
}

fn allow(rules: &[&str]) -> Value {
    json!({"permissions": {"allow": rules}})
}

fn file(p: impl AsRef<Path>) -> Value {
    json!({"file_path": p.as_ref().to_string_lossy(), "content": "x", "old_string": "a", "new_string": "b"})
}

fn bash(cmd: &str) -> Value {
    json!({"command": cmd})
}

#[track_caller]
fn assert_denied(v: Verdict) {
    assert!(
        matches!(v, Verdict::Deny { .. }),
        "expected a deny, got {v:?}"
    );
}

#[track_caller]
fn assert_asks(v: Verdict) {
    assert!(
        matches!(v, Verdict::Ask { .. }),
        "expected an ask, got {v:?}"
    );
}

#[track_caller]
fn assert_allowed(v: Verdict) {
    assert!(
        matches!(v, Verdict::Allow(_)),
        "expected an allow, got {v:?}"
    );
}

#[test]
fn a_read_through_a_link_into_a_denied_dir_is_denied() {
    let w = World::new();
    let p = w.perms(Mode::Default, deny(&["Read(~/.ssh/**)"]));
    assert_denied(p.decide("Read", &file("notes/id_rsa")));
    assert_denied(p.decide("Grep", &json!({"pattern": "x", "path": "notes/id_rsa"})));
    // Absolute, through the link.
    assert_denied(p.decide("Read", &file(w.at("proj/notes/id_rsa"))));
    // The rest of the project still reads unasked.
    assert_allowed(p.decide("Read", &file("src/a.rs")));
    // Bypass does not skip it either.
    let p = w.perms(Mode::BypassPermissions, deny(&["Read(~/.ssh/**)"]));
    assert_denied(p.decide("Read", &file("notes/id_rsa")));
}

#[test]
fn without_a_rule_a_read_leaving_the_project_asks_instead_of_running() {
    let w = World::new();
    let p = w.perms(Mode::Default, json!({}));
    assert_asks(p.decide("Read", &file("notes/id_rsa")));
    assert_asks(p.decide("Read", &file("out")));
    assert_allowed(p.decide("Read", &file("inner/a.rs")));
}

#[test]
fn accept_edits_write_and_edit_through_a_link_to_a_denied_file_are_denied() {
    let w = World::new();
    let p = w.perms(Mode::AcceptEdits, deny(&["Edit(~/.bashrc)"]));
    assert_denied(p.decide("Write", &file("rc")));
    assert_denied(p.decide("Edit", &file("rc")));
    assert_denied(p.decide("MultiEdit", &file(w.at("proj/rc"))));
    assert_allowed(p.decide("Write", &file("src/a.rs")));
}

#[test]
fn accept_edits_does_not_auto_approve_a_write_through_a_link_leaving_the_project() {
    let w = World::new();
    let p = w.perms(Mode::AcceptEdits, json!({}));
    assert_asks(p.decide("Write", &file("out")));
    assert_asks(p.decide("Edit", &file("rc")));
    assert_asks(p.decide("Write", &file("src/evil")));
    // Links that stay inside, and plain files, still run.
    assert_allowed(p.decide("Write", &file("inner/a.rs")));
    assert_allowed(p.decide("Write", &file("src/new.rs")));
    assert_allowed(p.decide("Write", &file("docs/new/deep.md")));
}

#[test]
fn a_new_file_under_a_linked_directory_is_judged_where_it_will_land() {
    let w = World::new();
    let p = w.perms(Mode::AcceptEdits, json!({}));
    assert_asks(p.decide("Write", &file("linkdir/new.txt")));
    assert_asks(p.decide("Write", &file("linkdir/a/b/new.txt")));
    let rule = format!("Edit(/{}/**)", w.at("outside/dir").display());
    let p = w.perms(Mode::AcceptEdits, deny(&[&rule]));
    assert_denied(p.decide("Write", &file("linkdir/new.txt")));
    assert_denied(p.decide("Write", &file("linkdir/a/b/new.txt")));
}

#[test]
fn dot_dot_is_applied_where_the_link_really_is() {
    let w = World::new();
    let p = w.perms(Mode::AcceptEdits, json!({}));
    // Spelled out of the project: lexical already caught this.
    assert_asks(p.decide("Write", &file("src/../../outside/x")));
    // `linkdir/..` is `outside`, not the project: the kernel applies `..`
    // to the link's target.
    assert_asks(p.decide("Write", &file("linkdir/../escape.txt")));
    let rule = format!("Read(/{}/**)", w.at("outside").display());
    let p = w.perms(Mode::Default, deny(&[&rule]));
    assert_denied(p.decide("Read", &file("linkdir/../file")));
    // Inside the project `..` through a real directory stays inside.
    let p = w.perms(Mode::AcceptEdits, json!({}));
    assert_allowed(p.decide("Write", &file("src/../docs/x.md")));
    assert_allowed(p.decide("Write", &file("inner/../docs/x.md")));
}

#[test]
fn a_dangling_link_resolves_to_its_target() {
    let w = World::new();
    let p = w.perms(Mode::AcceptEdits, json!({}));
    assert_asks(p.decide("Write", &file("dangling")));
    let rule = format!("Edit(/{})", w.at("outside/new.txt").display());
    let p = w.perms(Mode::AcceptEdits, deny(&[&rule]));
    assert_denied(p.decide("Write", &file("dangling")));
}

#[test]
fn a_deny_matches_the_path_as_written_or_where_it_points() {
    let w = World::new();
    let p = w.perms(Mode::Default, deny(&["Read(./secrets/**)"]));
    // As written (the link lives in the project, the files elsewhere).
    assert_denied(p.decide("Read", &file("secrets/x")));
    // The linked directory named directly.
    assert_denied(p.decide("Read", &file(w.at("outside/vault/x"))));
    // Other outside files are not covered by it (they ask: outside).
    assert_asks(p.decide("Read", &file(w.at("outside/file"))));
}

#[test]
fn an_allow_rule_covers_only_where_the_path_points() {
    let w = World::new();
    let p = w.perms(Mode::Default, allow(&["Edit(./src/**)"]));
    assert_allowed(p.decide("Write", &file("src/a.rs")));
    assert_allowed(p.decide("Write", &file("inner/a.rs")));
    // `src/evil` is written under `./src` but lands outside.
    assert_asks(p.decide("Write", &file("src/evil")));
    // An allow on a link's name does not reach through it either.
    let p = w.perms(Mode::Default, allow(&["Edit(./linkdir/**)"]));
    assert_asks(p.decide("Write", &file("linkdir/new.txt")));
}

#[test]
fn bash_file_commands_are_judged_where_their_targets_point() {
    let w = World::new();
    let p = w.perms(Mode::AcceptEdits, json!({}));
    assert_allowed(p.decide("Bash", &bash("touch src/b.rs")));
    assert_asks(p.decide("Bash", &bash("touch out")));
    assert_asks(p.decide("Bash", &bash("rm rc")));
    assert_asks(p.decide("Bash", &bash("touch linkdir/new")));
    assert_asks(p.decide("Bash", &bash("cp src/a.rs linkdir/../stolen")));
    // Default mode: inside asks with the add-directory suggestion, a link
    // out asks without it.
    let p = w.perms(Mode::Default, json!({}));
    match p.decide("Bash", &bash("touch inner/x")) {
        Verdict::Ask {
            suggestions,
            reason,
            ..
        } => {
            assert!(suggestions.is_some_and(|s| s.len() == 2));
            assert!(
                reason.contains(&w.at("proj").display().to_string()),
                "{reason}"
            );
        }
        other => panic!("expected an ask, got {other:?}"),
    }
    match p.decide("Bash", &bash("touch out")) {
        Verdict::Ask { suggestions, .. } => assert_eq!(suggestions, None),
        other => panic!("expected an ask, got {other:?}"),
    }
}

#[test]
fn a_project_and_home_reached_through_links_keep_their_own_files() {
    let w = World::new();
    // cwd is `plink` (-> proj), home is `hlink` (-> home/u).
    let p = w.perms_in(
        "plink",
        "hlink",
        Mode::AcceptEdits,
        deny(&["Read(~/.ssh/**)"]),
    );
    assert_allowed(p.decide("Write", &file("src/a.rs")));
    assert_allowed(p.decide("Read", &file("src/a.rs")));
    assert_denied(p.decide("Read", &file("notes/id_rsa")));
    assert_denied(p.decide("Read", &file(w.at("home/u/.ssh/id_rsa"))));
    assert_asks(p.decide("Write", &file("out")));
    let p = w.perms_in("plink", "hlink", Mode::Default, allow(&["Edit(./src/**)"]));
    assert_allowed(p.decide("Write", &file("src/a.rs")));
    assert_asks(p.decide("Write", &file("src/evil")));
}
