//! The command line's documentation made from its own definitions, so that it cannot say
//! anything the parser does not: the book's command reference (`rsmc help-markdown`, which
//! `tests/book.rs` compares with docs/src/reference/cli.md) and shell completions
//! (`rsmc completions SHELL`).

use crate::Cli;
use clap::CommandFactory;

/// What the reference page says of itself before the commands.
const PREFACE: &str = "This page is generated from the definitions `rsmc --help` prints, by \
`rsmc help-markdown > docs/src/reference/cli.md`; the test suite (`tests/book.rs`) fails \
when it differs from the binary's. What the commands' results mean is explained in the \
tutorials and concepts; exit codes and report files are in [Reports and files](reports.md).";

/// The command reference as Markdown: every visible command and subcommand with its
/// arguments, defaults and possible values.
pub fn markdown() -> String {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Commands".to_string())
        .show_footer(false)
        .show_table_of_contents(true);
    let body = clap_markdown::help_markdown_custom::<Cli>(&options);
    // The generator's own one-line introduction gives way to ours.
    let body = body.replacen(
        "This document contains the help content for the `rsmc` command-line program.\n",
        &format!("{PREFACE}\n"),
        1,
    );
    // Its sixth-level headings ("Options:", "Arguments:" of each command) are labels, not
    // sections: as headings the book's sidebar would list dozens of them.
    let body: Vec<&str> = body
        .lines()
        .map(|line| line.strip_prefix("###### ").unwrap_or(line))
        .collect();
    format!("{}\n", body.join("\n").trim_end())
}

/// Print the completion script of `shell` for rsmc on stdout.
pub fn completions(shell: clap_complete::Shell) -> i32 {
    clap_complete::generate(shell, &mut Cli::command(), "rsmc", &mut std::io::stdout());
    crate::exit::OK
}
