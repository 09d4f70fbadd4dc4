//! The command line: one subcommand per job, each returning an exit code.
//!
//! Contract: nothing here decides anything about routes; it parses flags,
//! sets up logging and calls the module that does the work. A subcommand
//! that is not built yet says so, names the issue that builds it, and exits 2
//! so that no script mistakes it for success.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Exit code for a failure (bad input, unreachable FRR, not built yet).
pub const EXIT_ERROR: u8 = 2;

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
    Run(RunArgs),
    /// Print the per-VIP join table, from a running daemon or in one shot.
    Status(StatusArgs),
    /// Render this node's frr.conf from the cluster's BGP peer mapping.
    Render(RenderArgs),
    /// Debug: print the kernel mirror of a watched table.
    Kernel(KernelArgs),
    /// Debug: print what the ZAPI and vty clients see of FRR.
    Frr(FrrArgs),
}

/// What `run` does when it finds drift.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    /// Decide and report, never act.
    Observe,
    /// Heal with the proven action for the class and FRR release.
    Repair,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// TOML configuration file; flags override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory holding zserv.api, zebra.vty and bgpd.vty.
    #[arg(long)]
    frr_dir: Option<PathBuf>,
    /// Kernel routing table to watch (repeatable).
    #[arg(long = "table")]
    tables: Vec<u32>,
    /// A prefix to treat as a VIP even when no table holds it (repeatable).
    #[arg(long = "vip")]
    vips: Vec<String>,
    /// Address of the HTTP endpoint (/metrics, /healthz, /readyz, /status).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// observe or repair.
    #[arg(long, value_enum)]
    mode: Option<Mode>,
    /// Write every event the core sees to FILE as JSON lines.
    #[arg(long)]
    record: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct StatusArgs {
    /// URL of a running daemon's HTTP endpoint.
    #[arg(long)]
    endpoint: Option<String>,
    /// Build the join once, without a daemon.
    #[arg(long)]
    oneshot: bool,
    /// Directory holding zserv.api, zebra.vty and bgpd.vty (with --oneshot).
    #[arg(long)]
    frr_dir: Option<PathBuf>,
    /// Kernel routing table (with --oneshot).
    #[arg(long = "table")]
    tables: Vec<u32>,
    /// Print the /status JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct RenderArgs {
    /// The FRRPeerMapping JSON (or the installer's ConfigMap form).
    #[arg(long)]
    peers: PathBuf,
    /// Write the configuration here instead of standard output.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct KernelArgs {
    /// Routing table to print.
    #[arg(long, default_value_t = 198)]
    table: u32,
    /// JSON in the shape of `ip -json route show table N`.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
struct FrrArgs {
    /// Directory holding zserv.api, zebra.vty and bgpd.vty.
    #[arg(long)]
    frr_dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(&cli.log);
    let (name, issue) = match cli.command {
        Command::Run(_) => ("run", 5),
        Command::Status(_) => ("status", 5),
        Command::Render(_) => ("render", 6),
        Command::Kernel(_) => ("kernel", 3),
        Command::Frr(_) => ("frr", 4),
    };
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
        .try_init();
}
