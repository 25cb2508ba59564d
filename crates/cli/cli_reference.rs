//! The command-line reference page, `docs/reference/cli.md`, rendered from
//! the clap definitions so that it cannot drift from `dsh --help`.
//!
//! A test compares the rendered page with the file in the repository and
//! fails when they differ; `DSH_UPDATE_DOCS=1 cargo test -p dsh
//! cli_reference` writes the file instead.

use clap::Command;

/// The whole page: an introduction, then every visible command's long help,
/// depth first, in the order `dsh help` lists them.
pub(crate) fn render(root: &Command) -> String {
    let mut page = String::from(
        "# Command-line reference\n\n\
         Generated from dsh's argument definitions: every section is exactly what \
         `dsh … --help` prints. A test fails when this page and the binary disagree; \
         regenerate it with `DSH_UPDATE_DOCS=1 cargo test -p dsh cli_reference`.\n",
    );
    let mut root = root.clone();
    root.build();
    section(&root, &mut Vec::new(), &mut page);
    page
}

fn section(command: &Command, path: &mut Vec<String>, page: &mut String) {
    path.push(command.get_name().to_owned());
    let title = path.join(" ");
    page.push_str(&format!("\n## `{title}`\n\n```text\n"));
    let help = command.clone().render_long_help().to_string();
    for line in help.lines() {
        page.push_str(line.trim_end());
        page.push('\n');
    }
    page.push_str("```\n");
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        section(sub, path, page);
    }
    path.pop();
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use crate::Cli;

    /// `docs/reference/cli.md` is the rendered help of every command.
    #[test]
    fn cli_reference_matches_the_binary() {
        let page = super::render(&Cli::command());
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference/cli.md");
        if std::env::var_os("DSH_UPDATE_DOCS").is_some_and(|value| !value.is_empty()) {
            fs_err::write(&path, &page).unwrap();
            return;
        }
        let on_disk = fs_err::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == page,
            "{} is out of date with the command-line definitions; regenerate it with \
             `DSH_UPDATE_DOCS=1 cargo test -p dsh cli_reference` and review the diff",
            path.display()
        );
    }
}
