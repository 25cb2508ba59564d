//! `dsh completions SHELL` and `dsh man`: what a packager or a user
//! installing dsh by hand runs once.

use crate::support::TestContext;

fn stdout_of(args: &[&str]) -> String {
    let ctx = TestContext::new();
    let output = ctx.dsh().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "dsh {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stderr.is_empty(), "dsh {args:?} wrote to stderr");
    String::from_utf8(output.stdout).unwrap()
}

/// The subcommands every completion script and the man page must know.
const SUBCOMMANDS: [&str; 6] = ["replay", "sessions", "hooks", "acp", "completions", "man"];

#[test]
fn each_shell_gets_a_completion_script_naming_the_subcommands() {
    for (shell, marker) in [
        ("bash", "complete -F _dsh"),
        ("zsh", "#compdef dsh"),
        ("fish", "complete -c dsh"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let script = stdout_of(&["completions", shell]);
        assert!(
            script.contains(marker),
            "{shell}: no `{marker}` in\n{script}"
        );
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell}: `{sub}` not completed");
        }
        // Flags of the top level and of a subcommand's own subcommands.
        assert!(script.contains("resume"), "{shell}: no --resume");
        assert!(script.contains("untrust"), "{shell}: no `hooks untrust`");
    }
}

#[test]
fn the_bash_script_is_valid_bash_and_completes_subcommands() {
    let script = stdout_of(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dsh.bash");
    fs_err::write(&path, &script).unwrap();
    // Source it and ask the completion function what `dsh com<TAB>` offers.
    let probe = format!(
        "source {}; COMP_WORDS=(dsh com); COMP_CWORD=1; _dsh dsh com dsh; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let output = std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let offered = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        offered.lines().collect::<Vec<_>>(),
        ["completions"],
        "{offered}"
    );
}

#[test]
fn an_unknown_shell_is_refused_with_the_known_ones() {
    let ctx = TestContext::new();
    let output = ctx.dsh().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bash") && stderr.contains("powershell"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn the_man_page_is_roff_that_renders_and_names_the_subcommands() {
    let page = stdout_of(&["man"]);
    assert!(page.contains(".TH dsh 1"), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    for sub in SUBCOMMANDS {
        assert!(
            page.contains(&format!("dsh\\-{sub}(1)")),
            "`{sub}` not named"
        );
    }
    // Rendered as `man` would show it, where groff is installed.
    let Ok(mut groff) = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-P-cbou"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        eprintln!("groff not installed: the man page was checked as roff only");
        return;
    };
    use std::io::Write as _;
    groff
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let rendered = groff.wait_with_output().unwrap();
    assert!(rendered.status.success());
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(text.contains("NAME"), "{text}");
    assert!(text.contains("SUBCOMMANDS"), "{text}");
    assert!(text.contains("dsh-replay(1)"), "{text}");
    // No roff request leaked through as text.
    assert!(!text.contains(".TH"), "{text}");
    assert!(
        String::from_utf8_lossy(&rendered.stderr).trim().is_empty(),
        "groff warned: {}",
        String::from_utf8_lossy(&rendered.stderr)
    );
}
