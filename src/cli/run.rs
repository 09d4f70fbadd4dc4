//! `ribbridge run`: the daemon.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use super::{DEFAULTS, Exit, NODE_DEFAULTS, STATION_DEFAULTS, defaulted, words};
use crate::config::{self, Layer, Settings};
use crate::model::{Mode, TableMode, Vantage};
use crate::model::{Prefix, TableId};
use crate::privilege::{self, Ids, Need};

/// `ribbridge run` flags. Each overrides the configuration file's key of
/// the same name (`--table` is `tables`, `--vip` is `vips`). A flag with a
/// default shows it from [`Settings::default`], the value `resolve` starts
/// from ([`defaulted`]).
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Exit status: 0 stopped by SIGTERM or SIGINT, 2 error (nothing started), 4 an essential task ended (restart it)."
)]
pub struct Args {
    /// TOML configuration file; flags override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[arg(long, value_name = "DIR", help = defaulted(
        "Directory holding zserv.api, zebra.vty and bgpd.vty",
        NODE_DEFAULTS.frr_dir.display(),
    ))]
    frr_dir: Option<PathBuf>,
    #[arg(long = "table", value_name = "ID", help = defaulted(
        "Kernel routing table to watch (repeatable)",
        words(&[NODE_DEFAULTS.table]),
    ))]
    tables: Vec<TableId>,
    /// A prefix to treat as a VIP even when no table holds it (repeatable).
    #[arg(long = "vip", value_name = "PREFIX")]
    vips: Vec<Prefix>,
    #[arg(long, value_name = "ADDR:PORT", help = defaulted(
        "Address of the HTTP endpoint (/metrics, /healthz, /readyz, /status)",
        DEFAULTS.listen,
    ))]
    listen: Option<SocketAddr>,
    #[arg(long, value_name = "observe|repair", help = defaulted(
        "What to do with a drift",
        NODE_DEFAULTS.mode,
    ))]
    mode: Option<Mode>,
    /// Write every event the core sees to FILE as JSON lines.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    #[arg(long, value_name = "MS", help = defaulted(
        "Grace before a difference counts as drift, in milliseconds",
        NODE_DEFAULTS.grace_ms,
    ))]
    grace_ms: Option<u64>,
    #[arg(long, value_name = "MS", help = defaulted(
        "Grace of the classes read from bgpd (not_redistributed, no_peer), in milliseconds",
        NODE_DEFAULTS.bgp_grace_ms,
    ))]
    bgp_grace_ms: Option<u64>,
    #[arg(long, value_name = "N", help = defaulted(
        "Heal attempts before the give-up is reported (1-100; healing goes on at the capped backoff)",
        NODE_DEFAULTS.max_attempts,
    ))]
    max_attempts: Option<u32>,
    /// How zebra feeds the table to bgpd, when not read from bgpd's
    /// configuration: table-direct (10.x) or import-table (8.4).
    #[arg(long, value_name = "table-direct|import-table")]
    table_mode: Option<TableMode>,
    #[arg(long, value_name = "SECS", help = defaulted(
        "bgpd's slow refresh, seconds (1-3600)",
        NODE_DEFAULTS.bgp_poll_secs,
    ))]
    bgp_poll_secs: Option<u64>,
    #[arg(long, value_name = "SECS", help = defaulted(
        "The kernel's slow re-dump, seconds (1-86400)",
        DEFAULTS.resync_secs,
    ))]
    resync_secs: Option<u64>,
    /// Allow heal actions that remove and re-add the VIP's local address.
    #[arg(long)]
    heal_addresses: bool,
    #[arg(long, value_name = "BOOL", help = defaulted(
        "A VIP needs its address on the node (any interface; on IPv6 not \
         tentative or dadfailed) to be served: advertised without it is \
         `blackhole`, and no heal re-advertises it",
        NODE_DEFAULTS.require_address,
    ))]
    require_address: Option<bool>,
    #[arg(long, value_name = "N", help = defaulted(
        "The writer (kube-vip) is `silent` after this many of its ticks \
         without re-asserting its route (1-100)",
        NODE_DEFAULTS.writer_silent_ticks,
    ))]
    writer_silent_ticks: Option<u32>,
    /// The writer's tick in milliseconds (100-600000); learned from its
    /// re-assertions when unset.
    #[arg(long, value_name = "MS")]
    writer_interval_ms: Option<u64>,
    #[arg(long, value_name = "N", help = defaulted(
        "A VIP whose writer withdrew it more than N times within \
         --flap-window-secs is `flapping` (1-7)",
        NODE_DEFAULTS.flap_pairs,
    ))]
    flap_pairs: Option<u32>,
    #[arg(long, value_name = "SECS", help = defaulted(
        "The window the writer's withdrawals are counted in, seconds (10-86400)",
        NODE_DEFAULTS.flap_window_secs,
    ))]
    flap_window_secs: Option<u64>,
    /// Probe the VIP's backend health at URL (http://, or https:// with a
    /// `[[vip]]` table's ca_file or insecure): down for `fall` probes, an
    /// advertised VIP is `blackhole` and no heal re-advertises it;
    /// repeatable (one per VIP); the VIP becomes configured.
    #[arg(long = "health", value_name = "PREFIX=URL")]
    health: Vec<String>,
    /// Probe the VIP's backend readiness at URL: failing while health
    /// passes, an advertised VIP is `unready`; repeatable.
    #[arg(long = "ready", value_name = "PREFIX=URL")]
    ready: Vec<String>,
    /// A VIP's probe settings, as its `[[vip]]` table's keys:
    /// PREFIX:KEY=VALUE[,KEY=VALUE]... with KEY one of withdraw, fall,
    /// rise, interval_ms, timeout_ms, expect_status, insecure, ca_file
    /// (e.g. 192.0.2.10/32:withdraw=true,fall=2); repeatable.
    #[arg(long = "probe", value_name = "PREFIX:KEY=VALUE,...")]
    probe: Vec<String>,
    #[arg(long, value_name = "N", help = defaulted(
        "The node-wide ceiling on heal actions, actions a second (1-1000)",
        NODE_DEFAULTS.heal_rate,
    ))]
    heal_rate: Option<u32>,
    #[arg(long, value_name = "N", help = defaulted(
        "The node-wide ceiling on heal actions, actions at once (1-100000)",
        NODE_DEFAULTS.heal_burst,
    ))]
    heal_burst: Option<u32>,
    #[arg(long, value_name = "SECS", help = defaulted(
        "Seconds a discovered VIP absent from every view stays in /status (1-604800)",
        NODE_DEFAULTS.forget_after_secs,
    ))]
    forget_after_secs: Option<u64>,
    /// Where ribbridge runs: `node` (beside FRR: the full join), `router`
    /// (only the kernel's ECMP legs of the configured VIPs; may watch the
    /// main table, 254) or `bmp` (a BMP station: the paths each router
    /// exporting BMP to it holds for the configured VIPs; needs
    /// --bmp-listen).
    #[arg(long, value_name = "node|router|bmp")]
    vantage: Option<Vantage>,
    /// Where the BMP station accepts routers' BMP sessions, e.g.
    /// 0.0.0.0:11019 (--vantage bmp only).
    #[arg(long, value_name = "ADDR:PORT")]
    bmp_listen: Option<SocketAddr>,
    #[arg(long, value_name = "SECS", help = defaulted(
        "Seconds a router whose BMP session ended stays (stale: its paths \
         unknown) before it is forgotten (--vantage bmp only)",
        STATION_DEFAULTS.stale_secs,
    ))]
    bmp_stale_secs: Option<u64>,
    /// A network routers may connect from (repeatable; required with
    /// --vantage bmp): anything else is refused at accept.
    #[arg(long = "bmp-allow", value_name = "CIDR")]
    bmp_allow: Vec<Prefix>,
    #[arg(long, value_name = "SECS", help = defaulted(
        "Seconds after a router's BMP session starts before its initial dump \
         is taken as complete, End-of-RIBs or not (--vantage bmp only)",
        STATION_DEFAULTS.limits.sync_secs,
    ))]
    bmp_sync_secs: Option<u64>,
    #[arg(long, value_name = "N", help = defaulted(
        "The most routers the station keeps (--vantage bmp only)",
        STATION_DEFAULTS.limits.max_routers,
    ))]
    bmp_max_routers: Option<usize>,
    #[arg(long, value_name = "N", help = defaulted(
        "The most BGP peers per router (--vantage bmp only)",
        STATION_DEFAULTS.limits.max_peers,
    ))]
    bmp_max_peers: Option<usize>,
    #[arg(long, value_name = "N", help = defaulted(
        "The most paths per VIP per router (--vantage bmp only)",
        STATION_DEFAULTS.limits.max_paths,
    ))]
    bmp_max_paths: Option<usize>,
    #[arg(long, value_name = "N", help = defaulted(
        "The most BMP sessions at once from one address (--vantage bmp only)",
        STATION_DEFAULTS.limits.sessions_per_address,
    ))]
    bmp_sessions_per_address: Option<usize>,
    #[arg(long, value_name = "N", help = defaulted(
        "The most BMP sessions at once in all; more are refused at accept \
         (--vantage bmp only)",
        STATION_DEFAULTS.limits.max_sessions,
    ))]
    bmp_max_sessions: Option<usize>,
    #[arg(long, value_name = "N", help = defaulted(
        "The most HTTP connections open at once; one more sheds the oldest \
         still sending its request",
        DEFAULTS.http_max_connections,
    ))]
    http_max_connections: Option<usize>,
    #[arg(long, value_name = "N", help = defaulted(
        "Discovered VIPs (every route of the watched table not configured \
         with --vip) tracked in detail: per-VIP series and a row in \
         /status; the others are counted by state",
        NODE_DEFAULTS.max_detailed_vips,
    ))]
    max_detailed_vips: Option<usize>,
    #[arg(long, value_name = "PATH", help = defaulted(
        "The drain's intent file, which `ribbridge drain` writes and \
         `ribbridge undrain` removes",
        NODE_DEFAULTS.drain_state.display(),
    ))]
    drain_state: Option<PathBuf>,
    /// Started as root: become UID:GID (FRR's user, the owner of
    /// zserv.api) before reading any input, keeping CAP_NET_ADMIN alone
    /// in repair mode and nothing otherwise (the container manifests'
    /// way: docs/DEPLOY.md, "Privileges").
    #[arg(long, value_name = "UID:GID")]
    user: Option<Ids>,
}

impl Args {
    /// The flags as a settings layer.
    fn layer(&self) -> Layer {
        Layer {
            frr_dir: self.frr_dir.clone(),
            tables: (!self.tables.is_empty()).then(|| self.tables.clone()),
            vips: (!self.vips.is_empty()).then(|| self.vips.clone()),
            listen: self.listen,
            mode: self.mode,
            record: self.record.clone(),
            grace_ms: self.grace_ms,
            bgp_grace_ms: self.bgp_grace_ms,
            max_attempts: self.max_attempts,
            table_mode: self.table_mode,
            bgp_poll_secs: self.bgp_poll_secs,
            resync_secs: self.resync_secs,
            heal_addresses: self.heal_addresses.then_some(true),
            require_address: self.require_address,
            writer_silent_ticks: self.writer_silent_ticks,
            writer_interval_ms: self.writer_interval_ms,
            flap_pairs: self.flap_pairs,
            flap_window_secs: self.flap_window_secs,
            health: self.health.clone(),
            ready: self.ready.clone(),
            probe: self.probe.clone(),
            heal_rate: self.heal_rate,
            heal_burst: self.heal_burst,
            forget_after_secs: self.forget_after_secs,
            vantage: self.vantage,
            bmp_listen: self.bmp_listen,
            bmp_stale_secs: self.bmp_stale_secs,
            bmp_allow: (!self.bmp_allow.is_empty()).then(|| self.bmp_allow.clone()),
            bmp_sync_secs: self.bmp_sync_secs,
            bmp_max_routers: self.bmp_max_routers,
            bmp_max_peers: self.bmp_max_peers,
            bmp_max_paths: self.bmp_max_paths,
            bmp_sessions_per_address: self.bmp_sessions_per_address,
            bmp_max_sessions: self.bmp_max_sessions,
            http_max_connections: self.http_max_connections,
            max_detailed_vips: self.max_detailed_vips,
            drain_state: self.drain_state.clone(),
            ..Layer::default()
        }
    }
}

/// The file (when given), then the flags, checked as a whole.
pub(super) fn settings(args: &Args) -> Result<Settings, config::ConfigError> {
    let file = match &args.config {
        Some(p) => Some((p.as_path(), config::load(p)?)),
        None => None,
    };
    Settings::resolve(file, args.layer())
}

/// The settings `ribbridge run ARGS...` would run with (the file, then the
/// flags, checked as a whole), without running: for tools and tests that
/// need to know what a daemon started with these flags does.
pub fn settings_of<I, T>(args: I) -> Result<Settings, Box<dyn std::error::Error>>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    #[derive(Debug, clap::Parser)]
    struct Run {
        #[command(flatten)]
        args: Args,
    }
    let parsed = <Run as clap::Parser>::try_parse_from(
        std::iter::once(std::ffi::OsString::from("run")).chain(args.into_iter().map(Into::into)),
    )?;
    Ok(settings(&parsed.args)?)
}

/// How long the runtime's threads may hold the exit once the daemon
/// returned: a wedged task (the fault the liveness probe exists for) is cut.
const RUNTIME_SHUTDOWN: std::time::Duration = std::time::Duration::from_secs(1);

/// `ribbridge run`.
pub fn run(args: Args) -> ExitCode {
    const CMD: &str = "ribbridge run";
    // Before any input and before the runtime's threads: capabilities
    // are per thread, and the threads inherit what this one holds.
    let entered = match privilege::enter(args.user) {
        Ok(h) => h,
        Err(e) => return super::fail_err(CMD, &e),
    };
    let settings = match settings(&args) {
        Ok(s) => s,
        Err(e) => return super::fail_err(CMD, &e),
    };
    let need = if matches!(&settings.role, crate::config::Role::Node(n) if n.mode == Mode::Repair) {
        Need::NetAdmin
    } else {
        Need::Nothing
    };
    match privilege::narrow(&entered, need) {
        Ok(held) => super::log_privileges(&held),
        Err(e) => return super::fail_err(CMD, &e),
    }
    // The tests' failpoints (a build with the `failpoints` feature only).
    let _faults = crate::fault::setup();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return super::fail(CMD, &format!("cannot start the runtime: {e}")),
    };
    let outcome = rt.block_on(crate::daemon::run(settings));
    // A wedged task (the fault the liveness probe exists for) must not
    // hold the exit: the runtime's threads get a second.
    rt.shutdown_timeout(RUNTIME_SHUTDOWN);
    match outcome {
        Ok(()) => ExitCode::from(Exit::Ok),
        Err(e @ crate::daemon::DaemonError::TaskEnded(_)) => {
            super::fail_err(CMD, &e);
            ExitCode::from(Exit::TaskEnded)
        }
        Err(e) => super::fail_err(CMD, &e),
    }
}
