//! The kernel view: a lossless mirror of the watched routing tables over
//! rtnetlink. Built by issue 3.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct KernelArgs {
    /// Routing table to print.
    #[arg(long, default_value_t = 198)]
    pub table: u32,
    /// JSON in the shape of `ip -json route show table N`.
    #[arg(long)]
    pub json: bool,
}

/// `ribbridge kernel`: print the mirror of one table.
pub fn command(_args: KernelArgs) -> ExitCode {
    crate::cli::not_built("kernel", 3)
}
