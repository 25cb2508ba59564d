//! What installing dsh like any other CLI needs: shell completion scripts
//! (`dsh completions SHELL`) and a manual page (`dsh man`), both generated
//! from the same clap definition that parses the command line, so they
//! cannot drift from it.

use std::io::Write as _;

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

/// Prints dsh's manual page (roff) on stdout.
pub fn man<C: CommandFactory>() -> anyhow::Result<stdio::ExitStatus> {
    let mut page = Vec::new();
    clap_mangen::Man::new(C::command()).render(&mut page)?;
    write_stdout(&page)
}

fn write_stdout(bytes: &[u8]) -> anyhow::Result<stdio::ExitStatus> {
    let mut out = stdio::stdout();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(stdio::ExitStatus::Success)
}
