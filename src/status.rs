//! `ribbridge status`: the per-VIP join table for a person, from a running
//! daemon or built once without one. Built by issue 5.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// URL of a running daemon's HTTP endpoint.
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Build the join once, without a daemon.
    #[arg(long)]
    pub oneshot: bool,
    /// Directory holding zserv.api, zebra.vty and bgpd.vty (with --oneshot).
    #[arg(long)]
    pub frr_dir: Option<PathBuf>,
    /// Kernel routing table (with --oneshot).
    #[arg(long = "table")]
    pub tables: Vec<u32>,
    /// Print the /status JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `ribbridge status`.
pub fn command(_args: StatusArgs) -> ExitCode {
    crate::cli::not_built("status", 5)
}
