//! `ribbridge render`: the node's frr.conf from the cluster's BGP peer
//! mapping. Built by issue 6.

use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The FRRPeerMapping JSON (or the installer's ConfigMap form).
    #[arg(long)]
    pub peers: PathBuf,
    /// Write the configuration here instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `ribbridge render`.
pub fn command(_args: RenderArgs) -> ExitCode {
    crate::cli::not_built("render", 6)
}
