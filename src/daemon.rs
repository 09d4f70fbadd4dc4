//! The daemon (`ribbridge run`): the one owner of state, fed by the kernel,
//! ZAPI and vty tasks through bounded channels. Built by issue 5.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::ValueEnum;

/// What `run` does when it finds drift.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Mode {
    /// Decide and report, never act.
    Observe,
    /// Heal with the proven action for the class and FRR release.
    Repair,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// TOML configuration file; flags override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Directory holding zserv.api, zebra.vty and bgpd.vty.
    #[arg(long)]
    pub frr_dir: Option<PathBuf>,
    /// Kernel routing table to watch (repeatable).
    #[arg(long = "table")]
    pub tables: Vec<u32>,
    /// A prefix to treat as a VIP even when no table holds it (repeatable).
    #[arg(long = "vip")]
    pub vips: Vec<String>,
    /// Address of the HTTP endpoint (/metrics, /healthz, /readyz, /status).
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// observe or repair.
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Write every event the core sees to FILE as JSON lines.
    #[arg(long)]
    pub record: Option<PathBuf>,
}

/// `ribbridge run`.
pub fn command(_args: RunArgs) -> ExitCode {
    crate::cli::not_built("run", 5)
}

/// Build the join once, without a daemon (`ribbridge status --oneshot`).
pub fn oneshot(
    _frr_dir: Option<PathBuf>,
    _tables: Vec<u32>,
) -> Result<crate::status::StatusDoc, String> {
    Err("--oneshot is not built yet (issue 5)".to_string())
}
