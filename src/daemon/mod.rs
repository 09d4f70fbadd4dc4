//! The daemon (`ribbridge run`): wires the I/O tasks to the one owner of
//! state and serves HTTP.
//!
//! Contract: the owner loop ([`owner`]) is the only code that holds the
//! core's state; the kernel watcher, the ZAPI client, the vty poller and the
//! heal executor talk to it only through the bounded channels listed in
//! ARCHITECTURE.md. SIGTERM and SIGINT stop everything within a second.

mod frr_tasks;
mod heal;
mod owner;
pub mod translate;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::ValueEnum;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::config::{self, Settings};
use crate::kernel::{Watcher, WatcherConfig};
use crate::reconcile;

/// What `run` does when it finds drift.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Mode {
    /// Decide and report, never act.
    Observe,
    /// Heal with the proven action for the class and FRR release.
    Repair,
}

#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// TOML configuration file; flags override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Directory holding zserv.api, zebra.vty and bgpd.vty [default: /var/run/frr].
    #[arg(long)]
    pub frr_dir: Option<PathBuf>,
    /// Kernel routing table to watch (repeatable) [default: 198].
    #[arg(long = "table")]
    pub tables: Vec<u32>,
    /// A prefix to treat as a VIP even when no table holds it (repeatable).
    #[arg(long = "vip")]
    pub vips: Vec<String>,
    /// Address of the HTTP endpoint (/metrics, /healthz, /readyz, /status) [default: 127.0.0.1:9774].
    #[arg(long)]
    pub listen: Option<SocketAddr>,
    /// observe or repair [default: repair].
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Write every event the core sees to FILE as JSON lines.
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Grace before a difference counts as drift, in milliseconds [default: 500].
    #[arg(long)]
    pub grace_ms: Option<u64>,
    /// Allow heal actions that remove and re-add the VIP's local address.
    #[arg(long)]
    pub heal_addresses: bool,
    /// `node` (beside FRR: the full join) or `router` (only the kernel's
    /// ECMP legs of the configured VIPs; may watch the main table, 254).
    #[arg(long, value_parser = ["node", "router"])]
    pub vantage: Option<String>,
}

/// Capacities of the channels into the owner (ARCHITECTURE.md lists them).
pub const KERNEL_CHANNEL: usize = 4096;
/// ZAPI adapter to owner.
pub const FRR_CHANNEL: usize = 1024;
/// Heal results and vty views to owner.
pub const RESULT_CHANNEL: usize = 64;
/// HTTP status requests to owner.
pub const STATUS_CHANNEL: usize = 16;

/// Flags over the file over the defaults.
pub fn settings(args: &RunArgs) -> Result<Settings, String> {
    let mut s = match &args.config {
        Some(p) => config::resolve(config::load(p)?, p)?,
        None => Settings::default(),
    };
    let flag = |key: &str, m: String| format!("--{key}: {m}");
    if let Some(d) = &args.frr_dir {
        s.frr_dir = d.clone();
    }
    if let Some(v) = &args.vantage {
        s.vantage = config::parse_vantage(v).map_err(|m| flag("vantage", m))?;
    }
    if !args.tables.is_empty() {
        s.tables =
            config::check_tables(args.tables.clone(), s.vantage).map_err(|m| flag("table", m))?;
    }
    if !args.vips.is_empty() {
        s.vips = config::parse_vips(&args.vips).map_err(|m| flag("vip", m))?;
    }
    if let Some(l) = args.listen {
        s.listen = l;
    }
    if let Some(m) = args.mode {
        s.mode = match m {
            Mode::Observe => reconcile::Mode::Observe,
            Mode::Repair => reconcile::Mode::Repair,
        };
    }
    if let Some(r) = &args.record {
        s.record = Some(r.clone());
    }
    if let Some(g) = args.grace_ms {
        s.grace_ms = config::in_range(g, config::GRACE_MS).map_err(|m| flag("grace-ms", m))?;
    }
    if args.heal_addresses {
        s.heal_addresses = true;
    }
    if s.vantage == reconcile::Vantage::Router && s.vips.is_empty() {
        return Err("the router vantage needs the VIPs to count: give --vip PREFIX".to_string());
    }
    for t in &s.tables {
        if *t > u32::from(u16::MAX) {
            return Err(format!(
                "table {t}: zebra's redistribution names tables with 16 bits; watch a table up to 65535"
            ));
        }
    }
    Ok(s)
}

/// `ribbridge run`.
pub fn command(args: RunArgs) -> ExitCode {
    let settings = match settings(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("ribbridge run: {e}");
            return ExitCode::from(crate::cli::EXIT_ERROR);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ribbridge run: cannot start the runtime: {e}");
            return ExitCode::from(crate::cli::EXIT_ERROR);
        }
    };
    match rt.block_on(run(settings)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ribbridge run: {e}");
            ExitCode::from(crate::cli::EXIT_ERROR)
        }
    }
}

/// The core's configuration from the settings.
pub fn core_config(s: &Settings) -> reconcile::Config {
    reconcile::Config {
        mode: s.mode,
        grace_ms: s.grace_ms,
        bgp_grace_ms: s.bgp_grace_ms,
        max_attempts: s.max_attempts,
        heal_addresses: s.heal_addresses,
        vips: s.vips.clone(),
        tables: s.tables.clone(),
        vantage: s.vantage,
        ..reconcile::Config::default()
    }
}

/// Run until SIGTERM or SIGINT.
pub async fn run(s: Settings) -> Result<(), String> {
    let metrics = crate::telemetry::install()?;
    crate::telemetry::build_info("unknown");
    let stop = CancellationToken::new();
    let listener = crate::http::bind(s.listen).await?;
    tracing::info!(listen = %s.listen, frr_dir = %s.frr_dir.display(), tables = ?s.tables, mode = ?s.mode, "ribbridge starting");

    // The kernel watcher opens its socket here, before anything else: a
    // missing capability fails the start with the watcher's own message.
    let watcher = Watcher::new(WatcherConfig {
        tables: s.tables.clone(),
        resync_period: Duration::from_secs(s.resync_secs),
        ..WatcherConfig::default()
    })
    .map_err(|e| e.to_string())?;
    let (kernel_tx, kernel_rx) = mpsc::channel(KERNEL_CHANNEL);
    let (frr_tx, frr_rx) = mpsc::channel(FRR_CHANNEL);
    let (result_tx, result_rx) = mpsc::channel(RESULT_CHANNEL);
    let (status_tx, status_rx) = mpsc::channel(STATUS_CHANNEL);
    let (ready_tx, ready_rx) = watch::channel((false, "starting".to_string()));
    let poll = frr_tasks::PollTrigger::default();

    let mut tasks = tokio::task::JoinSet::new();
    {
        let stop = stop.clone();
        tasks.spawn(async move {
            if let Err(e) = watcher.run(kernel_tx, stop.cancelled_owned()).await {
                tracing::error!(error = %e, "kernel watcher stopped");
            }
        });
    }
    // The router vantage reads only its kernel: no ZAPI, no vty.
    if s.vantage == reconcile::Vantage::Node {
        let (r, p, st) = (result_tx.clone(), poll.clone(), stop.clone());
        frr_tasks::spawn(&mut tasks, &s, frr_tx, r, p, st);
    }
    {
        let stop = stop.clone();
        let http = crate::http::Endpoint {
            status: status_tx,
            ready: ready_rx,
        };
        tasks.spawn(crate::http::serve(listener, http, metrics, stop));
    }
    let owner = owner::Owner::new(&s, result_tx, poll, ready_tx)?;
    let owner_task = tokio::spawn(owner.run(
        owner::Inputs {
            kernel: kernel_rx,
            frr: frr_rx,
            results: result_rx,
            status: status_rx,
        },
        stop.clone(),
    ));
    shutdown_signal().await?;
    tracing::info!("stopping");
    stop.cancel();
    // Everything honours the token; a task still busy after a second is cut.
    let drain = async {
        let _ = owner_task.await;
        while tasks.join_next().await.is_some() {}
    };
    if tokio::time::timeout(Duration::from_millis(900), drain)
        .await
        .is_err()
    {
        tracing::warn!("tasks did not stop within 0.9 s; aborting them");
    }
    Ok(())
}

async fn shutdown_signal() -> Result<(), String> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).map_err(|e| format!("SIGTERM handler: {e}"))?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| format!("SIGINT handler: {e}"))?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

/// Build the join once, without a daemon (`ribbridge status --oneshot`).
pub fn oneshot(
    frr_dir: Option<PathBuf>,
    tables: Vec<u32>,
) -> Result<crate::status::StatusDoc, String> {
    let mut s = Settings {
        frr_dir: frr_dir.unwrap_or_else(|| PathBuf::from(config::DEFAULT_FRR_DIR)),
        ..Settings::default()
    };
    if !tables.is_empty() {
        s.tables = config::check_tables(tables, s.vantage).map_err(|m| format!("--table: {m}"))?;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(owner::oneshot(&s))
}
