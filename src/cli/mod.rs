//! The command line: one subcommand per job, each returning an exit code.
//!
//! Contract: nothing here decides anything about routes; it parses flags,
//! sets up logging and calls the module that does the work. A subcommand
//! that is not built yet says so, names the issue that builds it, and exits 2
//! so that no script mistakes it for success.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod render;

/// Exit code: `status` found a VIP in drift.
pub const EXIT_DRIFT: u8 = 1;
/// Exit code for a failure (bad input, unreachable FRR, a view it cannot see).
pub const EXIT_ERROR: u8 = 2;
/// Exit code: `render --out` found the file already holding the text.
pub const EXIT_UNCHANGED: u8 = 3;

#[derive(Debug, Parser)]
#[command(
    name = "ribbridge",
    version,
    about = "Joins kernel routing tables, zebra and bgpd per VIP; heals silent drift; exports it",
    long_about = "ribbridge runs beside FRR on a node that advertises VIPs over BGP. It watches the \
kernel's VIP table (198 by default) over rtnetlink, zebra over its ZAPI socket and bgpd over its vty \
socket, joins the three views for every VIP, names each difference, heals the ones with a proven \
safe action, counts ECMP paths, and exports everything to Prometheus and a status command."
)]
struct Cli {
    /// Log filter, in tracing's EnvFilter syntax (RUST_LOG overrides it).
    #[arg(long, global = true, default_value = "info")]
    log: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon: watch, join, classify, heal, export.
    Run(crate::daemon::RunArgs),
    /// Print the per-VIP join table, from a running daemon or in one shot.
    Status(crate::status::StatusArgs),
    /// Render this node's frr.conf from the cluster's BGP peer mapping.
    Render(render::Args),
    /// Debug: print the kernel mirror of a watched table.
    Kernel(crate::kernel::KernelArgs),
    /// Debug: print what the ZAPI and vty clients see of FRR.
    Frr(crate::frr::FrrArgs),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(&cli.log);
    match cli.command {
        Command::Run(a) => crate::daemon::command(a),
        Command::Status(a) => crate::status::command(a),
        Command::Render(a) => render::run(a),
        Command::Kernel(a) => crate::kernel::command(a),
        Command::Frr(a) => crate::frr::command(a),
    }
}

/// What a subcommand that is not built yet answers: it says so, names the
/// issue that builds it, and fails so no script mistakes it for success.
pub fn not_built(name: &str, issue: u32) -> ExitCode {
    eprintln!("ribbridge {name}: not built yet (issue {issue} builds it); nothing was done");
    ExitCode::from(EXIT_ERROR)
}

fn init_tracing(default: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(default))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    // try_init: a second initialisation (in tests) is not an error worth dying for.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}
