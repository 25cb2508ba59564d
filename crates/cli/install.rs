//! What installing dsh like any other CLI needs: shell completion scripts
//! (`dsh completions SHELL`) and a manual page (`dsh man`), both generated
//! from the same clap definition that parses the command line, so they
//! cannot drift from it.

use std::io::Write as _;
use std::path::Path;

use clap::CommandFactory;

use crate::stdio;

/// The shells `dsh completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    /// Bash (`complete -F`).
    Bash,
    /// Zsh (`#compdef`).
    Zsh,
    /// Fish (`complete -c`).
    Fish,
    /// PowerShell (`Register-ArgumentCompleter`).
    Powershell,
}

impl Shell {
    fn generator(self) -> clap_complete::Shell {
        match self {
            Shell::Bash => clap_complete::Shell::Bash,
            Shell::Zsh => clap_complete::Shell::Zsh,
            Shell::Fish => clap_complete::Shell::Fish,
            Shell::Powershell => clap_complete::Shell::PowerShell,
        }
    }
}

/// Prints the completion script for `shell` on stdout.
pub fn completions<C: CommandFactory>(shell: Shell) -> anyhow::Result<stdio::ExitStatus> {
    let mut command = C::command();
    let name = command.get_name().to_owned();
    // Into memory first: the generators panic on a write error, and a closed
    // stdout (`dsh completions bash | head`) must stay a clean exit.
    let mut script = Vec::new();
    clap_complete::generate(shell.generator(), &mut command, name, &mut script);
    write_stdout(&script)
}

/// `dsh man [SUBCOMMAND…] [--out-dir DIR]`: the manual page of dsh or of
/// one of its subcommands (`dsh man hooks list` is `dsh-hooks-list(1)`) on
/// stdout, or every page into `DIR` (for packagers). Every page another
/// page names exists.
pub fn man<C: CommandFactory>(
    path: &[String],
    out_dir: Option<&Path>,
) -> anyhow::Result<stdio::ExitStatus> {
    let mut root = C::command().disable_help_subcommand(true);
    root.build();
    if let Some(dir) = out_dir {
        anyhow::ensure!(
            dir.is_dir(),
            "{} is not a directory (create it first)",
            dir.display()
        );
        let mut written = Vec::new();
        write_pages(&root, true, dir, &mut written)?;
        for file in written {
            crate::stdio::outln!("{}", file.display())?;
        }
        return Ok(stdio::ExitStatus::Success);
    }
    let mut command = &root;
    for name in path {
        command = command.find_subcommand(name).ok_or_else(|| {
            let known: Vec<&str> = command
                .get_subcommands()
                .filter(|sub| !sub.is_hide_set())
                .map(clap::Command::get_name)
                .collect();
            anyhow::anyhow!(
                "`{}` has no subcommand `{name}` (known: {})",
                command.get_display_name().unwrap_or(command.get_name()),
                known.join(", ")
            )
        })?;
    }
    write_stdout(&page(command, path.is_empty())?)
}

/// Every page under `command` into `dir`, named as the pages name each
/// other (`dsh-hooks-list.1`).
fn write_pages(
    command: &clap::Command,
    root: bool,
    dir: &Path,
    written: &mut Vec<std::path::PathBuf>,
) -> anyhow::Result<()> {
    let name = command.get_display_name().unwrap_or(command.get_name());
    let file = dir.join(format!("{name}.1"));
    fs_err::write(&file, page(command, root)?)?;
    written.push(file);
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub, false, dir, written)?;
    }
    Ok(())
}

/// One page: clap_mangen's sections, and for dsh itself ENVIRONMENT,
/// FILES and EXAMPLES.
fn page(command: &clap::Command, root: bool) -> anyhow::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(command.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    if command
        .get_arguments()
        .any(|arg| !arg.is_hide_set() && arg.get_id() != "help" && arg.get_id() != "version")
    {
        man.render_options_section(&mut page)?;
    }
    if command.get_subcommands().any(|sub| !sub.is_hide_set()) {
        man.render_subcommands_section(&mut page)?;
    }
    if root {
        page.extend_from_slice(ROOT_SECTIONS.as_bytes());
    }
    if command.get_version().is_some() {
        man.render_version_section(&mut page)?;
    }
    Ok(page)
}

/// ENVIRONMENT, FILES and EXAMPLES of `dsh(1)` (roff).
const ROOT_SECTIONS: &str = r#".SH ENVIRONMENT
.TP
\fBDSH_API_KEY\fR
The API key; wins over the variable \fBapi_key_env\fR names (by default the API's own:
\fBDEEPSEEK_API_KEY\fR, \fBANTHROPIC_API_KEY\fR or \fBOPENAI_API_KEY\fR). Never shown, never passed to hooks or tools.
.TP
\fBDSH_BASE_URL\fR, \fBDSH_MODEL\fR, \fBDSH_PROVIDER_API\fR
Override the provider's base URL, model and wire API (\fBchat\fR, \fBanthropic\fR, \fBresponses\fR).
.TP
\fBDSH_HOME\fR
dsh's directory (default \fI~/.dsh\fR).
.TP
\fBDSH_STRICT_HOOKS\fR
\fB1\fR: headless runs refuse untrusted project hooks instead of naming them on stderr.
.TP
\fBDSH_LOG\fR
Diagnostics filter for stderr (\fBDSH_LOG=dsh=debug\fR).
.TP
\fBCODEX_HOME\fR
Codex's configuration directory (default \fI~/.codex\fR).
.TP
\fBNO_COLOR\fR
Any non-empty value turns colour off.
.SH FILES
.TP
\fI$DSH_HOME/config.toml\fR
Provider, compaction, queue and system prompt settings.
.TP
\fI$DSH_HOME/sessions/\fR
Session logs, one \fI<id>.jsonl\fR per session (\fBdsh sessions\fR, \fBdsh log\fR).
.TP
\fI$DSH_HOME/trust.json\fR
Trusted project hooks and workspaces (\fBdsh hooks trust\fR).
.TP
\fI.claude/settings.json\fR, \fI.claude/settings.local.json\fR, \fI~/.claude/settings.json\fR
Claude Code hooks, permissions and settings.
.TP
\fI.codex/config.toml\fR, \fI.codex/hooks.json\fR, \fI$CODEX_HOME/config.toml\fR
Codex hooks and settings.
.TP
\fI.gemini/settings.json\fR, \fI~/.gemini/settings.json\fR, \fI~/.gemini/trustedFolders.json\fR
Gemini CLI hooks and folder trust.
.TP
\fI.mcp.json\fR
Project MCP servers, as Claude Code reads them.
.SH EXAMPLES
.TP
\fBdsh\fR
The interactive terminal in the current directory.
.TP
\fBdsh -p "explain this repository" --output-format json\fR
One headless turn, Claude Code's JSON result on stdout.
.TP
\fBdsh -r 77f2\fR
Resume the session whose id starts with 77f2.
.TP
\fBdsh hooks list\fR; \fBdsh hooks check\fR; \fBdsh hooks trust\fR
See the project's hooks, lint them, trust the project.
.TP
\fBdsh completions bash > ~/.local/share/bash-completion/completions/dsh\fR
Install bash completion.
.TP
\fBdsh man --out-dir /usr/local/share/man/man1\fR
Install every manual page.
"#;

fn write_stdout(bytes: &[u8]) -> anyhow::Result<stdio::ExitStatus> {
    let mut out = stdio::stdout();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(stdio::ExitStatus::Success)
}
