//! The daemon's settings: a TOML file and the command line's flags, layered
//! over safe defaults.
//!
//! Contract: the file and the flags have the same shape ([`Layer`]); a flag
//! overrides the file key of the same name, and the merged result is
//! validated as a whole ([`Settings::resolve`]), so a combination is judged
//! once (a file's `tables = [254]` is fine when `--vantage router` is given).
//! Unknown keys are rejected; every error names where the value came from
//! (the file and key, or the flag), what is wrong and what is allowed.
//! Defaults are safe: observe mode (report, never act; no capability),
//! loopback listener, table 198, no address-touching actions.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{Mode, TableMode, Vantage};
use crate::model::{Prefix, TableId, VIP_TABLE};

mod budget;
mod role;

pub use budget::{DescriptorBudget, DescriptorError};
pub use role::{BmpLimits, NodeRole, Role, RouterRole, StationRole};

/// Where FRR's sockets are when nothing says otherwise.
pub const DEFAULT_FRR_DIR: &str = "/var/run/frr";

/// Where the drain's intent is kept when nothing says otherwise
/// (`crate::drain::state`): under /run, a tmpfs, so a reboot ends the drain
/// as it ends FRR's running configuration.
pub const DEFAULT_DRAIN_STATE: &str = "/run/ribbridge/drain";

/// How long a router whose BMP session ended is kept (stale) by default:
/// long enough for a router or station restart to reconnect without its
/// series going away, short enough that a decommissioned router does not
/// linger for hours.
pub const DEFAULT_BMP_STALE_SECS: u64 = 300;

/// The most BMP sessions at once when nothing says otherwise
/// (`bmp_max_sessions`): a router has one (two while it reconnects); more
/// are refused at accept, logged and counted. Each holds a descriptor.
pub const DEFAULT_BMP_MAX_SESSIONS: usize = 64;

/// Discovered VIPs (every route of a node's watched table is one) tracked
/// in detail when nothing says otherwise (`max_detailed_vips`): per-VIP
/// series, a `/status` row, the route kept for its next hops. The metrics
/// recorder keeps every label set it was ever given, ~320 bytes a series
/// and `telemetry::SERIES_PER_VIP` per VIP (benches/mirror_memory.rs):
/// unbounded, a table of 100 000 routes held ~320 MB of series, and a
/// `/status` of every VIP was tens of MB at each request. 1 024 VIPs are
/// ~3 MB.
pub const DEFAULT_MAX_DETAILED_VIPS: usize = 1024;

/// `max_detailed_vips`' allowed range: 0 (only the configured VIPs) to
/// 65 536 (~200 MB of series).
pub const DETAILED_VIPS: RangeInclusive<usize> = 0..=65_536;

/// The connection caps' allowed range (`http_max_connections`,
/// `bmp_max_sessions`).
pub const CONNECTION_CAPS: RangeInclusive<usize> = 1..=65_536;

/// Descriptors kept for the daemon's own files and sockets beside the
/// connection caps: netlink (watcher, heal writer), ZAPI, the vty sockets
/// (the poller's and one per heal under way), the listeners, `--record`,
/// the drain state's inotify, the runtime's epoll and wakers, stdio. The
/// daemon uses about 30 at rest; the rest is headroom for heals.
pub const DESCRIPTOR_RESERVE: u64 = 128;

/// Whether a VIP needs its address on the node to be served when nothing
/// says otherwise (`require_address`): on, since kube-vip always adds the
/// address. The core's own default (`reconcile::Config::default`) is off:
/// the recorded runs and the core's tests predate the rule; the daemon
/// always sets it from here.
pub const DEFAULT_REQUIRE_ADDRESS: bool = true;

/// bgpd's slow refresh when nothing says otherwise (`bgp_poll_secs`), seconds.
pub const DEFAULT_BGP_POLL_SECS: u64 = 30;

/// The kernel's slow re-dump when nothing says otherwise (`resync_secs`), seconds.
pub const DEFAULT_RESYNC_SECS: u64 = 60;

/// Allowed graces, milliseconds.
pub const GRACE_MS: RangeInclusive<u64> = 10..=600_000;

/// One layer of settings: the file, or the flags. Every key optional; the
/// file spells the keys as here, the flags as `--kebab-case`. Written back
/// (`Settings::layer`, `ribbridge check-config`) as the same TOML, unset
/// keys left out.
#[derive(Debug, Default, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    /// Directory with zserv.api, zebra.vty, bgpd.vty.
    pub frr_dir: Option<PathBuf>,
    /// Watched kernel tables.
    pub tables: Option<Vec<TableId>>,
    /// Prefixes that are VIPs even when no table holds them.
    pub vips: Option<Vec<Prefix>>,
    /// HTTP listen address.
    pub listen: Option<SocketAddr>,
    /// `observe` or `repair`.
    pub mode: Option<Mode>,
    /// JSON-lines event log.
    pub record: Option<PathBuf>,
    /// Grace before a difference is a drift, milliseconds.
    pub grace_ms: Option<u64>,
    /// Grace for classes read from bgpd, milliseconds.
    pub bgp_grace_ms: Option<u64>,
    /// Heal attempts before giving up.
    pub max_attempts: Option<u32>,
    /// The node-wide ceiling on heal actions: actions a second.
    pub heal_rate: Option<u32>,
    /// The node-wide ceiling on heal actions: actions at once.
    pub heal_burst: Option<u32>,
    /// Seconds a discovered VIP absent from every view stays in `/status`.
    pub forget_after_secs: Option<u64>,
    /// Allow address-touching heal actions.
    pub heal_addresses: Option<bool>,
    /// A VIP needs its address on the node to be served.
    pub require_address: Option<bool>,
    /// Ticks without a re-assertion before the writer is silent.
    pub writer_silent_ticks: Option<u32>,
    /// The writer's tick, milliseconds (learned when unset).
    pub writer_interval_ms: Option<u64>,
    /// Withdrawals by the writer within the window that make a VIP flapping.
    pub flap_pairs: Option<u32>,
    /// The flap window, seconds.
    pub flap_window_secs: Option<u64>,
    /// The VIPs' backend probes (the file's `[[vip]]` tables).
    pub vip: Option<Vec<crate::probe::VipProbes>>,
    /// `--health PREFIX=URL` (flags only).
    #[serde(skip)]
    pub health: Vec<String>,
    /// `--ready PREFIX=URL` (flags only).
    #[serde(skip)]
    pub ready: Vec<String>,
    /// The flags' `--probe PREFIX:KEY=VALUE,...`: a VIP's `[[vip]]` keys
    /// (not a file key: the file has the table).
    #[serde(skip)]
    pub probe: Vec<String>,
    /// Force the table mode instead of reading bgpd's configuration.
    pub table_mode: Option<TableMode>,
    /// Slow refresh of bgpd's per-peer view, seconds.
    pub bgp_poll_secs: Option<u64>,
    /// Slow periodic kernel re-dump, seconds.
    pub resync_secs: Option<u64>,
    /// `node` (beside FRR), `router` (ECMP only) or `bmp` (a BMP station).
    pub vantage: Option<Vantage>,
    /// Where the BMP station listens for routers (bmp vantage only).
    pub bmp_listen: Option<SocketAddr>,
    /// How long a router whose BMP session ended stays (stale, unknown)
    /// before it is forgotten, seconds (bmp vantage only).
    pub bmp_stale_secs: Option<u64>,
    /// The addresses routers may connect from (bmp vantage only; required).
    pub bmp_allow: Option<Vec<Prefix>>,
    /// How long after a router's session starts its peers may owe their
    /// End-of-RIB, seconds.
    pub bmp_sync_secs: Option<u64>,
    /// The most routers the station keeps.
    pub bmp_max_routers: Option<usize>,
    /// The most BGP peers per router.
    pub bmp_max_peers: Option<usize>,
    /// The most paths per VIP per router.
    pub bmp_max_paths: Option<usize>,
    /// The most BMP sessions at once from one address.
    pub bmp_sessions_per_address: Option<usize>,
    /// The most BMP sessions at once in all.
    pub bmp_max_sessions: Option<usize>,
    /// The most HTTP connections open at once.
    pub http_max_connections: Option<usize>,
    /// Discovered VIPs tracked in detail (series, `/status` rows).
    pub max_detailed_vips: Option<usize>,
    /// The drain's intent file (`crate::drain::state`).
    pub drain_state: Option<PathBuf>,
}

/// The resolved settings: what every role reads (the kernel-reading roles
/// `record` and `resync_secs`), and the role with its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Configured VIPs.
    pub vips: BTreeSet<Prefix>,
    /// HTTP listen address.
    pub listen: SocketAddr,
    /// The most HTTP connections open at once.
    pub http_max_connections: usize,
    /// JSON-lines event log.
    pub record: Option<PathBuf>,
    /// Kernel slow re-dump, seconds.
    pub resync_secs: u64,
    /// The role, resolved once, with the settings only it reads.
    pub role: Role,
}

impl Settings {
    /// The resolved settings as the file spells them, every key the role
    /// reads set (`ribbridge check-config` prints it; read back, it
    /// resolves to the same settings).
    pub fn layer(&self) -> Layer {
        let mut l = Layer {
            vips: Some(self.vips.iter().copied().collect()),
            listen: Some(self.listen),
            record: self.record.clone(),
            resync_secs: Some(self.resync_secs),
            vantage: Some(self.vantage()),
            http_max_connections: Some(self.http_max_connections),
            ..Layer::default()
        };
        match &self.role {
            Role::Node(n) => {
                l.tables = Some(vec![n.table]);
                l.max_detailed_vips = Some(n.max_detailed_vips);
                l.mode = Some(n.mode);
                l.grace_ms = Some(n.grace_ms);
                l.bgp_grace_ms = Some(n.bgp_grace_ms);
                l.max_attempts = Some(n.max_attempts);
                l.heal_rate = Some(n.heal_rate);
                l.heal_burst = Some(n.heal_burst);
                l.forget_after_secs = Some(n.forget_after_secs);
                l.heal_addresses = Some(n.heal_addresses);
                l.require_address = Some(n.require_address);
                l.writer_silent_ticks = Some(n.writer_silent_ticks);
                l.writer_interval_ms = n.writer_interval_ms;
                l.flap_pairs = Some(n.flap_pairs);
                l.flap_window_secs = Some(n.flap_window_secs);
                l.frr_dir = Some(n.frr_dir.clone());
                l.table_mode = n.table_mode;
                l.bgp_poll_secs = Some(n.bgp_poll_secs);
                l.vip = (!n.probes.is_empty()).then(|| n.probes.clone());
                l.drain_state = Some(n.drain_state.clone());
            }
            Role::Router(r) => l.tables = Some(r.tables.clone()),
            Role::Station(st) => {
                l.bmp_listen = Some(st.listen);
                l.bmp_stale_secs = Some(st.stale_secs);
                l.bmp_allow = Some(st.limits.allow.clone());
                l.bmp_sync_secs = Some(st.limits.sync_secs);
                l.bmp_max_routers = Some(st.limits.max_routers);
                l.bmp_max_peers = Some(st.limits.max_peers);
                l.bmp_max_paths = Some(st.limits.max_paths);
                l.bmp_sessions_per_address = Some(st.limits.sessions_per_address);
                l.bmp_max_sessions = Some(st.limits.max_sessions);
            }
        }
        l
    }

    /// The descriptors the daemon may hold at once: the HTTP cap, the BMP
    /// cap (a station only) and [`DESCRIPTOR_RESERVE`].
    pub fn descriptors_needed(&self) -> DescriptorBudget {
        DescriptorBudget {
            http: self.http_max_connections as u64,
            bmp: match &self.role {
                Role::Station(st) => st.limits.max_sessions as u64,
                Role::Node(_) | Role::Router(_) => 0,
            },
            reserve: DESCRIPTOR_RESERVE,
        }
    }

    /// The role's word (`node`, `router`, `bmp`).
    pub fn vantage(&self) -> Vantage {
        self.role.vantage()
    }
}

impl Default for Settings {
    /// The defaults, each written once: the daemon's in the constants
    /// above, a role's with the role (`NodeRole::default`). `run --help`
    /// shows these values (`cli`).
    fn default() -> Settings {
        Settings {
            vips: BTreeSet::new(),
            listen: crate::http::DEFAULT_LISTEN,
            http_max_connections: crate::http::DEFAULT_MAX_CONNECTIONS,
            record: None,
            resync_secs: DEFAULT_RESYNC_SECS,
            role: Role::Node(NodeRole::default()),
        }
    }
}

/// Why the settings cannot be used. Each names where the value came from.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{}: cannot read the configuration: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML of this shape (unknown key, wrong type).
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, when the parser knows it.
        line: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// A value is out of range or a combination is refused.
    #[error("{at}: {reason}")]
    Value {
        /// Where: `FILE: key 'name'` or `--flag`.
        at: String,
        /// What is wrong and what is allowed.
        reason: String,
    },
}

/// Where a key's value came from, for error messages.
#[derive(Debug, Clone, Copy)]
enum Origin<'a> {
    Default,
    File(&'a Path),
    Flag,
}

impl Origin<'_> {
    fn at(self, key: &str) -> String {
        match self {
            Origin::Default => format!("default '{key}'"),
            Origin::File(p) => format!("{}: key '{key}'", p.display()),
            Origin::Flag => format!("--{}", flag_name(key)),
        }
    }
}

/// The flag that sets a key (`tables` is `--table`, `vips` `--vip`).
fn flag_name(key: &str) -> String {
    match key {
        "tables" => "table".to_string(),
        "vips" => "vip".to_string(),
        k => k.replace('_', "-"),
    }
}

/// Read and parse a file.
pub fn load(path: &Path) -> Result<Layer, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// Parse file text; `path` only names the file in errors.
pub fn parse(text: &str, path: &Path) -> Result<Layer, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        line: e.span().map(|span| {
            text.as_bytes()[..span.start.min(text.len())]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1
        }),
        message: e.message().to_string(),
    })
}

impl Settings {
    /// The defaults, then the file (`file`: its path and layer), then the
    /// flags; then the whole is checked.
    pub fn resolve(file: Option<(&Path, Layer)>, flags: Layer) -> Result<Settings, ConfigError> {
        let (path, file) = match file {
            Some((p, l)) => (Some(p), l),
            None => (None, Layer::default()),
        };
        // For each key: the flag's value, else the file's, with its origin.
        macro_rules! pick {
            ($key:ident) => {
                match (flags.$key, file.$key) {
                    (Some(v), _) => Some((v, Origin::Flag)),
                    (None, Some(v)) => Some((v, path.map_or(Origin::Default, Origin::File))),
                    (None, None) => None,
                }
            };
        }
        let mut s = Settings::default();
        // The role's own settings, gathered here and given to the role it
        // resolves into at the end.
        let mut node = NodeRole::default();
        let (mut station, mut bmp_listen) = (StationRole::default(), None);
        let probes = probes(&flags, &file, path)?;
        let vantage = pick!(vantage).map_or(Vantage::default(), |(v, _)| v);
        if let Some((v, _)) = pick!(frr_dir) {
            node.frr_dir = v;
        }
        let tables = match pick!(tables) {
            Some((t, o)) => Some((check_tables(t, vantage, o)?, o)),
            None => None,
        };
        if let Some((v, _)) = pick!(vips) {
            s.vips = v.into_iter().collect();
        }
        if let Some((v, _)) = pick!(listen) {
            s.listen = v;
        }
        if let Some((n, o)) = pick!(http_max_connections) {
            s.http_max_connections = in_range(n, CONNECTION_CAPS, o, "http_max_connections")?;
        }
        if let Some((n, o)) = pick!(max_detailed_vips) {
            node.max_detailed_vips = in_range(n, DETAILED_VIPS, o, "max_detailed_vips")?;
        }
        if let Some((v, _)) = pick!(mode) {
            node.mode = v;
        }
        s.record = pick!(record).map(|(v, _)| v);
        if let Some((g, o)) = pick!(grace_ms) {
            node.grace_ms = in_range(g, GRACE_MS, o, "grace_ms")?;
        }
        if let Some((g, o)) = pick!(bgp_grace_ms) {
            node.bgp_grace_ms = in_range(g, GRACE_MS, o, "bgp_grace_ms")?;
        }
        if let Some((n, o)) = pick!(max_attempts) {
            node.max_attempts = in_range(n, 1..=100, o, "max_attempts")?;
        }
        if let Some((n, o)) = pick!(heal_rate) {
            node.heal_rate = in_range(n, 1..=1_000, o, "heal_rate")?;
        }
        if let Some((n, o)) = pick!(heal_burst) {
            node.heal_burst = in_range(n, 1..=100_000, o, "heal_burst")?;
        }
        if let Some((n, o)) = pick!(forget_after_secs) {
            node.forget_after_secs = in_range(n, 1..=604_800, o, "forget_after_secs")?;
        }
        if let Some((v, _)) = pick!(heal_addresses) {
            node.heal_addresses = v;
        }
        if let Some((v, _)) = pick!(require_address) {
            node.require_address = v;
        }
        if let Some((n, o)) = pick!(writer_silent_ticks) {
            node.writer_silent_ticks = in_range(n, 1..=100, o, "writer_silent_ticks")?;
        }
        if let Some((n, o)) = pick!(writer_interval_ms) {
            node.writer_interval_ms = Some(in_range(n, 100..=600_000, o, "writer_interval_ms")?);
        }
        if let Some((n, o)) = pick!(flap_pairs) {
            let max = crate::reconcile::MAX_FLAP_PAIRS;
            node.flap_pairs = in_range(n, 1..=max, o, "flap_pairs")?;
        }
        if let Some((n, o)) = pick!(flap_window_secs) {
            node.flap_window_secs = in_range(n, 10..=86_400, o, "flap_window_secs")?;
        }
        if let Some((v, _)) = pick!(table_mode) {
            node.table_mode = Some(v);
        }
        if let Some((p, o)) = pick!(bgp_poll_secs) {
            node.bgp_poll_secs = in_range(p, 1..=3600, o, "bgp_poll_secs")?;
        }
        if let Some((r, o)) = pick!(resync_secs) {
            s.resync_secs = in_range(r, 1..=86_400, o, "resync_secs")?;
        }
        if let Some((v, _)) = pick!(bmp_listen) {
            bmp_listen = Some(v);
        }
        if let Some((n, o)) = pick!(bmp_stale_secs) {
            station.stale_secs = in_range(n, 1..=86_400, o, "bmp_stale_secs")?;
        }
        let (bmp_allow_flag, bmp_allow_file) =
            (flags.bmp_allow.is_some(), file.bmp_allow.is_some());
        let bmp_allow_given = bmp_allow_flag || bmp_allow_file;
        if let Some((v, _)) = pick!(bmp_allow) {
            station.limits.allow = v;
        }
        if let Some((n, o)) = pick!(bmp_sync_secs) {
            station.limits.sync_secs = in_range(n, 1..=3_600, o, "bmp_sync_secs")?;
        }
        if let Some((n, o)) = pick!(bmp_max_routers) {
            station.limits.max_routers = in_range(n, 1..=100_000, o, "bmp_max_routers")?;
        }
        if let Some((n, o)) = pick!(bmp_max_peers) {
            station.limits.max_peers = in_range(n, 1..=1_000_000, o, "bmp_max_peers")?;
        }
        if let Some((n, o)) = pick!(bmp_max_paths) {
            station.limits.max_paths = in_range(n, 1..=1_000_000, o, "bmp_max_paths")?;
        }
        if let Some((n, o)) = pick!(bmp_sessions_per_address) {
            station.limits.sessions_per_address =
                in_range(n, 1..=64, o, "bmp_sessions_per_address")?;
        }
        if let Some((n, o)) = pick!(bmp_max_sessions) {
            station.limits.max_sessions = in_range(n, CONNECTION_CAPS, o, "bmp_max_sessions")?;
        }
        if let Some((p, o)) = pick!(drain_state) {
            node.drain_state = check_drain_state(p, o)?;
        }
        if vantage != Vantage::Bmp {
            // A station's key on a node or router would silently do nothing.
            let bmp_only = [
                (
                    "bmp_listen",
                    flags.bmp_listen.is_some(),
                    file.bmp_listen.is_some(),
                ),
                (
                    "bmp_stale_secs",
                    flags.bmp_stale_secs.is_some(),
                    file.bmp_stale_secs.is_some(),
                ),
                ("bmp_allow", bmp_allow_flag, bmp_allow_file),
                (
                    "bmp_sync_secs",
                    flags.bmp_sync_secs.is_some(),
                    file.bmp_sync_secs.is_some(),
                ),
                (
                    "bmp_max_routers",
                    flags.bmp_max_routers.is_some(),
                    file.bmp_max_routers.is_some(),
                ),
                (
                    "bmp_max_peers",
                    flags.bmp_max_peers.is_some(),
                    file.bmp_max_peers.is_some(),
                ),
                (
                    "bmp_max_paths",
                    flags.bmp_max_paths.is_some(),
                    file.bmp_max_paths.is_some(),
                ),
                (
                    "bmp_sessions_per_address",
                    flags.bmp_sessions_per_address.is_some(),
                    file.bmp_sessions_per_address.is_some(),
                ),
                (
                    "bmp_max_sessions",
                    flags.bmp_max_sessions.is_some(),
                    file.bmp_max_sessions.is_some(),
                ),
            ];
            if let Some((key, flag, _)) = bmp_only.iter().find(|(_, f, k)| *f || *k) {
                let o = if *flag {
                    Origin::Flag
                } else {
                    path.map_or(Origin::Default, Origin::File)
                };
                return Err(value(
                    o,
                    key,
                    format!(
                        "only the BMP station reads it, and the vantage is {vantage}: add --vantage bmp (or `vantage = \"bmp\"`), or drop it"
                    ),
                ));
            }
        }
        if !probes.is_empty() && vantage != Vantage::Node {
            return Err(ConfigError::Value {
                at: "probes (--health, --ready, [[vip]])".to_string(),
                reason: format!(
                    "only the node vantage probes backends, and the vantage is {vantage}: drop them or run at the node"
                ),
            });
        }
        s.vips.extend(probes.iter().map(|p| p.prefix));
        if vantage != Vantage::Node && s.vips.is_empty() {
            return Err(ConfigError::Value {
                at: format!("vantage {vantage}"),
                reason: format!(
                    "the {vantage} vantage needs the VIPs to count: give --vip PREFIX (or `vips` in the file)"
                ),
            });
        }
        s.role = match vantage {
            Vantage::Node => {
                node.probes = probes;
                if let Some((t, o)) = tables {
                    node.table = one_table(&t, o)?;
                }
                Role::Node(node)
            }
            Vantage::Router => Role::Router(RouterRole {
                tables: tables.map_or_else(|| vec![VIP_TABLE], |(t, _)| t),
            }),
            Vantage::Bmp => {
                let Some(listen) = bmp_listen else {
                    return Err(ConfigError::Value {
                        at: "vantage bmp".to_string(),
                        reason: "the BMP station needs the address routers connect to: give --bmp-listen ADDR:PORT (e.g. 0.0.0.0:11019; or `bmp_listen` in the file)"
                            .to_string(),
                    });
                };
                if !bmp_allow_given || station.limits.allow.is_empty() {
                    return Err(ConfigError::Value {
                        at: "vantage bmp".to_string(),
                        reason: "the BMP station accepts routers only from the addresses it is given: name the routers' networks with --bmp-allow CIDR (repeatable, e.g. --bmp-allow 198.51.100.0/24; or `bmp_allow = [...]` in the file); --bmp-allow 0.0.0.0/0 --bmp-allow ::/0 accepts anyone"
                            .to_string(),
                    });
                }
                Role::Station(StationRole { listen, ..station })
            }
        };
        Ok(s)
    }
}

/// The intent file must name a file (its directory is the deployment's).
fn check_drain_state(p: PathBuf, o: Origin<'_>) -> Result<PathBuf, ConfigError> {
    if p.file_name().is_none() || p.as_os_str().to_string_lossy().ends_with('/') {
        return Err(value(
            o,
            "drain_state",
            format!(
                "'{}' names no file; give a file in a writable directory, e.g. {DEFAULT_DRAIN_STATE}",
                p.display()
            ),
        ));
    }
    Ok(p)
}

/// The probes of the file's `[[vip]]` tables, then the flags' `--health`
/// and `--ready` (a flag's URL replaces the table's for that probe; a VIP
/// without a table gets the defaults), each VIP's whole table validated.
fn probes(
    flags: &Layer,
    file: &Layer,
    path: Option<&Path>,
) -> Result<Vec<crate::probe::VipProbes>, ConfigError> {
    use crate::probe::{Kind, VipProbes, parse_flag};
    let at_file = |prefix: &Prefix| match path {
        Some(p) => format!("{}: [[vip]] {prefix}", p.display()),
        None => format!("[[vip]] {prefix}"),
    };
    let mut out: Vec<VipProbes> = Vec::new();
    for v in file.vip.iter().flatten() {
        if out.iter().any(|o| o.prefix == v.prefix) {
            return Err(ConfigError::Value {
                at: at_file(&v.prefix),
                reason: "a second [[vip]] table for the same prefix: merge them into one"
                    .to_string(),
            });
        }
        out.push(v.clone());
    }
    for (kind, texts) in [(Kind::Health, &flags.health), (Kind::Ready, &flags.ready)] {
        let flag = format!("--{}", kind.name());
        for text in texts {
            let (prefix, url) = parse_flag(text).map_err(|e| ConfigError::Value {
                at: flag.clone(),
                reason: e.to_string(),
            })?;
            let i = match out.iter().position(|o| o.prefix == prefix) {
                Some(i) => i,
                None => {
                    out.push(VipProbes::new(prefix));
                    out.len() - 1
                }
            };
            let slot = match kind {
                Kind::Health => &mut out[i].health,
                Kind::Ready => &mut out[i].ready,
            };
            *slot = Some(url.to_string());
        }
    }
    for text in &flags.probe {
        let bad = |reason: String| ConfigError::Value {
            at: "--probe".to_string(),
            reason: format!("'{text}': {reason}"),
        };
        // The prefix ends at the first colon after its length (an IPv6
        // prefix holds colons of its own).
        let colon = text
            .find('/')
            .and_then(|slash| text[slash..].find(':').map(|c| slash + c))
            .ok_or_else(|| {
                bad("give PREFIX:KEY=VALUE,... (e.g. 192.0.2.10/32:withdraw=true)".to_string())
            })?;
        let (prefix, pairs) = (&text[..colon], &text[colon + 1..]);
        let prefix: Prefix = prefix.trim().parse().map_err(|e| bad(format!("{e}")))?;
        let i = match out.iter().position(|o| o.prefix == prefix) {
            Some(i) => i,
            None => {
                out.push(VipProbes::new(prefix));
                out.len() - 1
            }
        };
        for pair in pairs.split(',') {
            let (key, val) = pair
                .split_once('=')
                .ok_or_else(|| bad(format!("'{pair}' is not KEY=VALUE")))?;
            set_probe_key(&mut out[i], key.trim(), val.trim()).map_err(|e| bad(e.to_string()))?;
        }
    }
    for v in &out {
        if v.health.is_none() && v.ready.is_none() {
            return Err(ConfigError::Value {
                at: at_file(&v.prefix),
                reason:
                    "neither `health` nor `ready`: give at least one probe URL, or drop the table"
                        .to_string(),
            });
        }
        if v.withdraw && v.health.is_none() {
            return Err(ConfigError::Value {
                at: at_file(&v.prefix),
                reason: "`withdraw = true` without `health`: ribbridge withdraws a VIP only \
                         when its health probe fails; give the backend's health URL, or drop \
                         `withdraw`"
                    .to_string(),
            });
        }
        v.specs().map_err(|e| ConfigError::Value {
            at: at_file(&v.prefix),
            reason: e.to_string(),
        })?;
    }
    Ok(out)
}

/// Why a `--probe` key cannot be set.
#[derive(Debug, thiserror::Error)]
enum ProbeKeyError {
    /// A count or a time that is not a whole number.
    #[error("{key}={val}: {key} takes a whole number")]
    Number { key: String, val: String },
    /// A switch that is not true or false.
    #[error("{key}={val}: {key} takes true or false")]
    Switch { key: String, val: String },
    /// No such key in a `[[vip]]` table.
    #[error(
        "unknown key '{key}': one of withdraw, fall, rise, interval_ms, timeout_ms, \
         expect_status, insecure, ca_file (the URLs are --health and --ready)"
    )]
    Unknown { key: String },
}

/// One `[[vip]]` key of `--probe`, typed as in the file.
fn set_probe_key(
    v: &mut crate::probe::VipProbes,
    key: &str,
    val: &str,
) -> Result<(), ProbeKeyError> {
    let owned = || (key.to_string(), val.to_string());
    let num = |v: &str| -> Result<u64, ProbeKeyError> {
        v.parse().map_err(|_| {
            let (key, val) = owned();
            ProbeKeyError::Number { key, val }
        })
    };
    let switch = |v: &str| -> Result<bool, ProbeKeyError> {
        v.parse().map_err(|_| {
            let (key, val) = owned();
            ProbeKeyError::Switch { key, val }
        })
    };
    let small = |n: u64| -> Result<u32, ProbeKeyError> {
        u32::try_from(n).map_err(|_| {
            let (key, val) = owned();
            ProbeKeyError::Number { key, val }
        })
    };
    match key {
        "withdraw" => v.withdraw = switch(val)?,
        "insecure" => v.insecure = switch(val)?,
        "fall" => v.fall = small(num(val)?)?,
        "rise" => v.rise = small(num(val)?)?,
        "interval_ms" => v.interval_ms = num(val)?,
        "timeout_ms" => v.timeout_ms = num(val)?,
        "expect_status" => {
            v.expect_status = u16::try_from(num(val)?).map_err(|_| {
                let (key, val) = owned();
                ProbeKeyError::Number { key, val }
            })?;
        }
        "ca_file" => v.ca_file = Some(PathBuf::from(val)),
        _ => {
            return Err(ProbeKeyError::Unknown {
                key: key.to_string(),
            });
        }
    }
    Ok(())
}

fn value(o: Origin<'_>, key: &str, reason: String) -> ConfigError {
    ConfigError::Value {
        at: o.at(key),
        reason,
    }
}

/// `v` when inside `range`, else an error that names the range.
fn in_range<T: PartialOrd + std::fmt::Display>(
    v: T,
    range: RangeInclusive<T>,
    o: Origin<'_>,
    key: &str,
) -> Result<T, ConfigError> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(value(
            o,
            key,
            format!("{v} is outside {}..={}", range.start(), range.end()),
        ))
    }
}

/// Tables must be real kernel tables: not 0 (unspec) nor 253-255 (default,
/// main, local), which a node's ribbridge may heal and so must never touch.
/// The router vantage only reads: it may watch main (254). zebra names
/// redistributed tables with 16 bits, so a table must fit them.
fn check_tables(
    t: Vec<TableId>,
    vantage: Vantage,
    o: Origin<'_>,
) -> Result<Vec<TableId>, ConfigError> {
    if t.is_empty() {
        return Err(value(
            o,
            "tables",
            "at least one table is needed".to_string(),
        ));
    }
    for id in &t {
        if vantage == Vantage::Router && *id == 254 {
            continue;
        }
        if *id == 0 || (253..=255).contains(id) {
            return Err(value(
                o,
                "tables",
                format!(
                    "table {id} is reserved (0 unspec, 253 default, 254 main, 255 local); watch the VIP table, e.g. 198 (a router vantage may watch 254)"
                ),
            ));
        }
        if *id > u32::from(u16::MAX) {
            return Err(value(
                o,
                "tables",
                format!(
                    "table {id}: zebra's redistribution names tables with 16 bits; watch a table up to 65535"
                ),
            ));
        }
    }
    let mut t = t;
    t.sort_unstable();
    t.dedup();
    Ok(t)
}

/// A node subscribes to one redistribution over ZAPI, and its heals (8.4's
/// re-import among them) know one table: several are refused rather than
/// half watched. A router only reads its kernel: any number.
fn one_table(t: &[TableId], o: Origin<'_>) -> Result<TableId, ConfigError> {
    match t {
        [one] => Ok(*one),
        _ => Err(value(
            o,
            "tables",
            format!(
                "a node watches one table, not {t:?} (zebra is subscribed to one table's redistribution and the heals act on one): give the table kube-vip writes (198 by default); several tables are for --vantage router"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(s: &Settings) -> &NodeRole {
        match &s.role {
            Role::Node(n) => n,
            other => panic!("not a node: {other:?}"),
        }
    }

    fn station(s: &Settings) -> &StationRole {
        match &s.role {
            Role::Station(st) => st,
            other => panic!("not a station: {other:?}"),
        }
    }

    fn p() -> &'static Path {
        Path::new("/etc/ribbridge.toml")
    }

    fn file(text: &str) -> Result<Settings, ConfigError> {
        Settings::resolve(Some((p(), parse(text, p())?)), Layer::default())
    }

    #[test]
    fn probe_flags_set_a_vip_s_table_keys_or_name_the_key_that_is_wrong() {
        let flags = |probe: &[&str]| Layer {
            health: vec!["2001:db8::10/128=http://[::1]:8080/".to_string()],
            probe: probe.iter().map(ToString::to_string).collect(),
            ..Layer::default()
        };
        let s = Settings::resolve(None, flags(&["2001:db8::10/128:withdraw=true,fall=2"]))
            .expect("resolve");
        let v = &node(&s).probes[0];
        assert_eq!(
            (v.withdraw, v.fall, v.rise),
            (
                true,
                2,
                crate::probe::VipProbes::new("192.0.2.1/32".parse().expect("prefix")).rise
            )
        );
        for (bad, says) in [
            ("2001:db8::10/128:withdrw=true", "unknown key 'withdrw'"),
            ("2001:db8::10/128:fall=two", "fall takes a whole number"),
            ("2001:db8::10/128", "give PREFIX:KEY=VALUE"),
            ("2001:db8::10/128:withdraw", "is not KEY=VALUE"),
        ] {
            let e = Settings::resolve(None, flags(&[bad]))
                .expect_err(bad)
                .to_string();
            assert!(e.starts_with("--probe: ") && e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn resolved_settings_written_as_toml_read_back_to_the_same() {
        let files = [
            // A node with a probe that withdraws, and every default.
            "vips = [\"192.0.2.10/32\"]\ntable_mode = \"import-table\"\n[[vip]]\nprefix = \"192.0.2.11/32\"\nhealth = \"http://127.0.0.1:8080/healthz\"\nwithdraw = true\nfall = 2\n",
            "vantage = \"router\"\ntables = [254, 200]\nvips = [\"192.0.2.10/32\"]\nmode = \"observe\"\n",
            "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\nvips = [\"192.0.2.10/32\"]\nbmp_allow = [\"198.18.0.0/16\"]\nbmp_max_routers = 8\n",
        ];
        for text in files {
            let s = file(text).expect("resolve");
            let written = toml::to_string(&s.layer()).expect("toml");
            let again = file(&written).unwrap_or_else(|e| panic!("{written}: {e}"));
            assert_eq!(again, s, "{written}");
        }
    }

    #[test]
    fn full_file_resolves() {
        let s = file(
            "frr_dir = \"/run/frr\"\ntables = [199]\nvips = [\"192.0.2.10/32\"]\nlisten = \"127.0.0.1:7999\"\nmode = \"observe\"\ngrace_ms = 300\ntable_mode = \"import-table\"\nvantage = \"node\"\n",
        )
        .expect("resolve");
        assert_eq!(node(&s).table, 199);
        assert_eq!(node(&s).mode, Mode::Observe);
        assert_eq!(node(&s).grace_ms, 300);
        assert_eq!(s.listen.port(), 7999);
        assert_eq!(s.vips.len(), 1);
        assert_eq!(node(&s).table_mode, Some(TableMode::ImportTable));
    }

    #[test]
    fn unknown_key_names_key_file_and_line() {
        let e = parse("mode = \"repair\"\nmaximum_paths = 3\n", p())
            .expect_err("unknown")
            .to_string();
        assert!(
            e.starts_with("/etc/ribbridge.toml:2: unknown field `maximum_paths`"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_the_file_key_and_line() {
        let cases = [
            ("mode = \"fix\"", ":1: 'fix' is not a mode: use observe"),
            ("tables = [254]", ": key 'tables': table 254 is reserved"),
            (
                "tables = [198, 199]",
                ": key 'tables': a node watches one table, not [198, 199]",
            ),
            (
                "tables = [70000]",
                ": key 'tables': table 70000: zebra's redistribution",
            ),
            (
                "vips = [\"192.0.2.10/24\"]",
                ":1: '192.0.2.10/24' has bits set beyond its length",
            ),
            (
                "listen = \"localhost\"",
                ":1: invalid socket address syntax",
            ),
            ("grace_ms = 1", ": key 'grace_ms': 1 is outside 10..=600000"),
            (
                "table_mode = \"kernel\"",
                ":1: 'kernel' is not a table mode",
            ),
            (
                "\n\ngrace_ms = \"fast\"\n",
                ":3: invalid type: string \"fast\"",
            ),
        ];
        for (text, want) in cases {
            let e = file(text).expect_err(text).to_string();
            assert!(e.starts_with("/etc/ribbridge.toml"), "{e}");
            assert!(e.contains(want), "{text}: {e}");
        }
    }

    #[test]
    fn flags_override_the_file_and_the_whole_is_checked() {
        // The file's router table is fine once the flag makes it a router.
        let f = parse("tables = [254]\nvips = [\"192.0.2.10/32\"]\n", p()).expect("parse");
        let flags = Layer {
            vantage: Some(Vantage::Router),
            ..Layer::default()
        };
        let s = Settings::resolve(Some((p(), f)), flags).expect("router may watch 254");
        assert_eq!(s.role, Role::Router(RouterRole { tables: vec![254] }));
        // A flag's bad value names the flag, not the file.
        let f = parse("grace_ms = 300\n", p()).expect("parse");
        let flags = Layer {
            grace_ms: Some(5),
            ..Layer::default()
        };
        let e = Settings::resolve(Some((p(), f)), flags)
            .expect_err("range")
            .to_string();
        assert_eq!(e, "--grace-ms: 5 is outside 10..=600000");
        let e = Settings::resolve(
            None,
            Layer {
                vantage: Some(Vantage::Router),
                ..Layer::default()
            },
        )
        .expect_err("router without vips")
        .to_string();
        assert!(e.contains("give --vip PREFIX"), "{e}");
    }

    #[test]
    fn bmp_station_needs_its_address_and_vips_and_its_keys_need_it() {
        let s = file(
            "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\nvips = [\"192.0.2.10/32\"]\nbmp_stale_secs = 60\nbmp_allow = [\"198.18.0.0/16\"]\nbmp_max_routers = 8\n",
        )
        .expect("a station");
        let st = station(&s);
        assert_eq!(
            st.limits.allow,
            ["198.18.0.0/16".parse::<Prefix>().expect("cidr")]
        );
        assert_eq!(st.limits.max_routers, 8);
        assert_eq!(s.vantage(), Vantage::Bmp);
        assert_eq!(st.listen.port(), 11019);
        assert_eq!(st.stale_secs, 60);
        let s =
            file("vantage = \"bmp\"\nbmp_listen = \"[::]:11019\"\nvips = [\"192.0.2.10/32\"]\nbmp_allow = [\"198.18.0.0/16\"]\n")
                .expect("default stale time");
        assert_eq!(station(&s).stale_secs, DEFAULT_BMP_STALE_SECS);
        let cases = [
            (
                "vantage = \"bmp\"\nvips = [\"192.0.2.10/32\"]\n",
                "vantage bmp: the BMP station needs the address routers connect to: give --bmp-listen",
            ),
            (
                "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\n",
                "vantage bmp: the bmp vantage needs the VIPs to count",
            ),
            (
                "bmp_listen = \"0.0.0.0:11019\"\n",
                "/etc/ribbridge.toml: key 'bmp_listen': only the BMP station reads it, and the vantage is node: add --vantage bmp",
            ),
            (
                "vantage = \"router\"\ntables = [254]\nvips = [\"192.0.2.10/32\"]\nbmp_stale_secs = 10\n",
                "key 'bmp_stale_secs': only the BMP station reads it, and the vantage is router",
            ),
            (
                "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\nvips = [\"192.0.2.10/32\"]\nbmp_stale_secs = 0\n",
                "key 'bmp_stale_secs': 0 is outside 1..=86400",
            ),
            (
                "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\nvips = [\"192.0.2.10/32\"]\n",
                "vantage bmp: the BMP station accepts routers only from the addresses it is given: name the routers' networks with --bmp-allow CIDR",
            ),
            (
                "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\nvips = [\"192.0.2.10/32\"]\nbmp_allow = []\n",
                "--bmp-allow CIDR",
            ),
            (
                "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\nvips = [\"192.0.2.10/32\"]\nbmp_allow = [\"198.18.0.0/16\"]\nbmp_sessions_per_address = 0\n",
                "key 'bmp_sessions_per_address': 0 is outside 1..=64",
            ),
            (
                "vantage = \"node\"\nbmp_allow = [\"198.18.0.0/16\"]\n",
                "key 'bmp_allow': only the BMP station reads it",
            ),
        ];
        for (text, want) in cases {
            let e = file(text).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        // The flag is named as a flag.
        let e = Settings::resolve(
            None,
            Layer {
                bmp_listen: Some("127.0.0.1:11019".parse().expect("addr")),
                ..Layer::default()
            },
        )
        .expect_err("bmp flag on a node")
        .to_string();
        assert!(e.starts_with("--bmp-listen: only the BMP station"), "{e}");
    }

    #[test]
    fn connection_caps_default_below_the_limit_and_are_checked_against_it() {
        let d = file("").expect("defaults");
        assert_eq!(d.http_max_connections, 64);
        assert_eq!(node(&d).max_detailed_vips, 1024);
        // A node has no BMP listener: its cap does not count.
        assert_eq!(d.descriptors_needed().total(), 64 + DESCRIPTOR_RESERVE);
        // systemd's default soft limit holds the defaults, a station's too.
        d.descriptors_needed()
            .check(1_024, 524_288)
            .expect("node fits");
        let st = file(
            "vantage = \"bmp\"\nbmp_listen = \"0.0.0.0:11019\"\nvips = [\"192.0.2.10/32\"]\nbmp_allow = [\"198.18.0.0/16\"]\nbmp_max_sessions = 500\nhttp_max_connections = 600\n",
        )
        .expect("station");
        assert_eq!(
            (st.http_max_connections, station(&st).limits.max_sessions),
            (600, 500)
        );
        let e = st
            .descriptors_needed()
            .check(1_024, 4_096)
            .expect_err("1 228 > 1 024")
            .to_string();
        for want in [
            "soft 1024, hard 4096",
            "1228 = 600 HTTP connections",
            "500 BMP sessions",
            "LimitNOFILE=",
            "--http-max-connections",
        ] {
            assert!(e.contains(want), "{want:?} in {e}");
        }
        let e = file("http_max_connections = 0\n")
            .expect_err("0")
            .to_string();
        assert!(
            e.contains("key 'http_max_connections': 0 is outside 1..=65536"),
            "{e}"
        );
        let e = file("bmp_max_sessions = 8\n")
            .expect_err("node")
            .to_string();
        assert!(e.contains("only the BMP station reads it"), "{e}");
    }

    #[test]
    fn probes_from_the_file_and_the_flags_configure_their_vips() {
        let text = "[[vip]]\nprefix = \"192.0.2.10/32\"\nhealth = \"http://localhost:1936/healthz\"\nfall = 2\n\n[[vip]]\nprefix = \"192.0.2.20/32\"\nready = \"https://localhost:6443/readyz\"\ninsecure = true\n";
        let flags = Layer {
            ready: vec!["192.0.2.10/32=http://localhost:1936/healthz/ready".into()],
            health: vec!["192.0.2.30/32=http://127.0.0.1:8080/".into()],
            ..Layer::default()
        };
        let s = Settings::resolve(Some((p(), parse(text, p()).expect("parse"))), flags)
            .expect("resolve");
        assert_eq!(node(&s).probes.len(), 3);
        let first = &node(&s).probes[0];
        assert_eq!(first.fall, 2, "the table's settings kept");
        assert_eq!(
            first.ready.as_deref(),
            Some("http://localhost:1936/healthz/ready"),
            "the flag's URL added to the table"
        );
        for v in ["192.0.2.10/32", "192.0.2.20/32", "192.0.2.30/32"] {
            assert!(
                s.vips.contains(&v.parse().expect("prefix")),
                "{v} configured"
            );
        }
        // Refused, each naming where and what to do.
        let cases = [
            (
                "[[vip]]\nprefix = \"192.0.2.10/32\"\n",
                "neither `health` nor `ready`",
            ),
            (
                "[[vip]]\nprefix = \"192.0.2.10/32\"\nhealth = \"https://localhost:6443/readyz\"\n",
                "192.0.2.10/32",
            ),
            (
                "[[vip]]\nprefix = \"192.0.2.10/32\"\nready = \"http://x/\"\nwithdraw = true\n",
                "`withdraw = true` without `health`",
            ),
            (
                "[[vip]]\nprefix = \"192.0.2.10/32\"\nhealth = \"http://x/\"\n[[vip]]\nprefix = \"192.0.2.10/32\"\nready = \"http://x/\"\n",
                "a second [[vip]] table",
            ),
            (
                "vantage = \"router\"\nvips = [\"192.0.2.10/32\"]\n[[vip]]\nprefix = \"192.0.2.10/32\"\nhealth = \"http://x/\"\n",
                "only the node vantage probes",
            ),
        ];
        for (text, want) in cases {
            let e = file(text).expect_err(text).to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
        let bad = Layer {
            health: vec!["192.0.2.10/32 http://x/".into()],
            ..Layer::default()
        };
        let e = Settings::resolve(None, bad).expect_err("no =").to_string();
        assert!(e.starts_with("--health: "), "{e}");
    }

    #[test]
    fn the_writer_settings_are_read_and_bounded() {
        let s = file("require_address = false\nwriter_silent_ticks = 5\nwriter_interval_ms = 5000\nflap_pairs = 7\nflap_window_secs = 60\n")
            .expect("resolve");
        assert!(!node(&s).require_address);
        assert_eq!(
            (node(&s).writer_silent_ticks, node(&s).writer_interval_ms),
            (5, Some(5_000))
        );
        assert_eq!((node(&s).flap_pairs, node(&s).flap_window_secs), (7, 60));
        assert!(NodeRole::default().require_address, "on by default");
        let e = file("flap_pairs = 8\n").expect_err("8").to_string();
        assert!(e.contains("key 'flap_pairs': 8 is outside 1..=7"), "{e}");
    }

    #[test]
    fn the_detail_limit_is_read_and_bounded() {
        assert_eq!(
            node(&file("max_detailed_vips = 0\n").expect("0")).max_detailed_vips,
            0
        );
        let e = file("max_detailed_vips = 70000\n")
            .expect_err("too many")
            .to_string();
        assert!(
            e.contains("key 'max_detailed_vips': 70000 is outside 0..=65536"),
            "{e}"
        );
    }

    #[test]
    fn the_default_mode_observes_and_repair_is_asked_for() {
        let bare = Settings::resolve(None, Layer::default()).expect("no file, no flag");
        assert_eq!(node(&bare).mode, Mode::Observe);
        assert_eq!(node(&file("").expect("an empty file")).mode, Mode::Observe);
        let flag = Layer {
            mode: Some(Mode::Repair),
            ..Layer::default()
        };
        let asked = Settings::resolve(None, flag).expect("--mode repair");
        assert_eq!(node(&asked).mode, Mode::Repair);
    }

    #[test]
    fn drain_state_defaults_to_run_and_must_name_a_file() {
        assert_eq!(
            node(&file("").expect("defaults")).drain_state,
            Path::new(DEFAULT_DRAIN_STATE)
        );
        let s = file("drain_state = \"/var/run/ribbridge/intent\"\n").expect("a file");
        assert_eq!(node(&s).drain_state, Path::new("/var/run/ribbridge/intent"));
        let e = file("drain_state = \"/run/ribbridge/\"\n")
            .expect_err("a directory")
            .to_string();
        assert!(
            e.starts_with(
                "/etc/ribbridge.toml: key 'drain_state': '/run/ribbridge/' names no file"
            ),
            "{e}"
        );
        let e = Settings::resolve(
            None,
            Layer {
                drain_state: Some(PathBuf::from("/run/..")),
                ..Layer::default()
            },
        )
        .expect_err("no file name")
        .to_string();
        assert!(e.starts_with("--drain-state: "), "{e}");
    }

    #[test]
    fn unreadable_file_names_the_file() {
        let e = load(Path::new("/nonexistent/ribbridge.toml")).expect_err("missing");
        assert!(
            e.to_string()
                .starts_with("/nonexistent/ribbridge.toml: cannot read"),
            "{e}"
        );
        assert!(std::error::Error::source(&e).is_some());
    }
}
