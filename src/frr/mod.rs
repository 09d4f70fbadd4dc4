//! The FRR clients: zebra's ZAPI stream and the daemons' vty sockets.
//! Built by issue 4.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct FrrArgs {
    /// Directory holding zserv.api, zebra.vty and bgpd.vty.
    #[arg(long)]
    pub frr_dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `ribbridge frr`: print what the clients see.
pub fn command(_args: FrrArgs) -> ExitCode {
    crate::cli::not_built("frr", 4)
}
