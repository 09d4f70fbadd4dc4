//! The roles a configuration resolves into, each with the settings only
//! it reads ([`Role`]), and the BMP station's bounds.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::{DEFAULT_BGP_POLL_SECS, DEFAULT_BMP_MAX_SESSIONS, DEFAULT_BMP_STALE_SECS};
use super::{
    DEFAULT_DRAIN_STATE, DEFAULT_FRR_DIR, DEFAULT_MAX_DETAILED_VIPS, DEFAULT_REQUIRE_ADDRESS,
};
use crate::model::Mode;
use crate::model::{Prefix, TableId, TableMode, VIP_TABLE, Vantage};

/// The BMP station's allowlist and bounds (docs/BMP.md, "An open port").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BmpLimits {
    /// Where routers may connect from; anything else is refused at accept.
    pub allow: Vec<Prefix>,
    /// How long after a router's session starts its peers may owe their
    /// End-of-RIB, seconds.
    pub sync_secs: u64,
    /// Routers kept (synced, syncing and stale).
    pub max_routers: usize,
    /// BGP peers per router.
    pub max_peers: usize,
    /// Paths per VIP per router.
    pub max_paths: usize,
    /// Sessions at once from one source address.
    pub sessions_per_address: usize,
    /// Sessions at once in all.
    pub max_sessions: usize,
}

impl Default for BmpLimits {
    fn default() -> BmpLimits {
        BmpLimits {
            allow: Vec::new(),
            sync_secs: 60,
            max_routers: crate::bmp::station::DEFAULT_MAX_ROUTERS,
            max_peers: 4_096,
            max_paths: 4_096,
            sessions_per_address: 2,
            max_sessions: DEFAULT_BMP_MAX_SESSIONS,
        }
    }
}

/// What this ribbridge is, each role with the settings only it reads
/// (`daemon::run` starts the role's instance).
#[derive(Debug, Clone, PartialEq)]
pub enum Role {
    /// Beside FRR on a node: the full join over the table kube-vip writes.
    Node(NodeRole),
    /// On the router, reading its kernel: how many nodes serve each VIP.
    Router(RouterRole),
    /// A BMP station: what routers export of the VIPs.
    Station(StationRole),
}

/// A node's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRole {
    /// The one table it watches (kube-vip's; zebra redistributes it).
    pub table: TableId,
    /// Directory with FRR's sockets.
    pub frr_dir: PathBuf,
    /// Forced table mode (None: read from bgpd).
    pub table_mode: Option<TableMode>,
    /// bgpd slow refresh, seconds.
    pub bgp_poll_secs: u64,
    /// The VIPs' backend probes, validated, one entry per VIP (the file's
    /// `[[vip]]` tables, then `--health` and `--ready`, which set the URL
    /// of a VIP's probe and keep the rest of its table). Every probed VIP
    /// is configured (in `vips`).
    pub probes: Vec<crate::probe::VipProbes>,
    /// The drain's intent file: a drain recorded there is re-applied when
    /// bgpd's configuration loses it.
    pub drain_state: PathBuf,
    /// Discovered VIPs (not configured) tracked in detail: per-VIP series,
    /// a row in `/status`, the route kept for its next hops; the others
    /// are counted (`ribbridge_vips_without_series`, `/status`'s
    /// `omitted`), so a table of 100 000 routes costs no more than this.
    pub max_detailed_vips: usize,
    /// observe or repair.
    pub mode: Mode,
    /// Grace, milliseconds.
    pub grace_ms: u64,
    /// Grace of bgpd's classes, milliseconds.
    pub bgp_grace_ms: u64,
    /// Heal attempts before giving up.
    pub max_attempts: u32,
    /// The ceiling on heal actions: actions a second.
    pub heal_rate: u32,
    /// The ceiling on heal actions: actions at once.
    pub heal_burst: u32,
    /// Retention of a discovered VIP absent from every view, seconds.
    pub forget_after_secs: u64,
    /// Allow address-touching heal actions.
    pub heal_addresses: bool,
    /// A VIP needs its address (on any interface, not `tentative` or
    /// `dadfailed`) to be served: advertised without it is `blackhole`,
    /// and no heal re-advertises it. [`DEFAULT_REQUIRE_ADDRESS`] when unset.
    pub require_address: bool,
    /// The writer is `silent` after this many of its ticks without a
    /// re-assertion.
    pub writer_silent_ticks: u32,
    /// The writer's tick, milliseconds (None: learned from its beats).
    pub writer_interval_ms: Option<u64>,
    /// A VIP whose writer withdrew it more than this many times within
    /// `flap_window_secs` is `flapping` (at most
    /// [`crate::reconcile::MAX_FLAP_PAIRS`]).
    pub flap_pairs: u32,
    /// The flap window, seconds.
    pub flap_window_secs: u64,
}

/// A router's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RouterRole {
    /// The kernel tables it reads (main, 254, may be one of them).
    pub tables: Vec<TableId>,
}

/// A BMP station's own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct StationRole {
    /// Where routers connect.
    pub listen: SocketAddr,
    /// Seconds a stale router is kept before it is forgotten.
    pub stale_secs: u64,
    /// Its bounds and allowlist.
    pub limits: BmpLimits,
}

impl Default for StationRole {
    fn default() -> StationRole {
        StationRole {
            listen: SocketAddr::from(([0, 0, 0, 0], 11019)),
            stale_secs: DEFAULT_BMP_STALE_SECS,
            limits: BmpLimits::default(),
        }
    }
}

impl Default for NodeRole {
    /// The defaults, each written once: the core's own from
    /// `reconcile::Config::default` (where each says why; in its units,
    /// milliseconds), the daemon's in `config`'s constants. `run --help`
    /// shows these values (`cli`).
    fn default() -> NodeRole {
        let core = crate::reconcile::Config::default();
        NodeRole {
            table: VIP_TABLE,
            frr_dir: PathBuf::from(DEFAULT_FRR_DIR),
            table_mode: None,
            bgp_poll_secs: DEFAULT_BGP_POLL_SECS,
            probes: Vec::new(),
            drain_state: PathBuf::from(DEFAULT_DRAIN_STATE),
            max_detailed_vips: DEFAULT_MAX_DETAILED_VIPS,
            mode: core.mode,
            grace_ms: core.grace_ms,
            bgp_grace_ms: core.bgp_grace_ms,
            max_attempts: core.max_attempts,
            heal_rate: core.heal_rate_per_s,
            heal_burst: core.heal_burst,
            forget_after_secs: core.forget_after_ms / 1_000,
            heal_addresses: core.heal_addresses,
            require_address: DEFAULT_REQUIRE_ADDRESS,
            writer_silent_ticks: core.writer_silent_ticks,
            writer_interval_ms: core.writer_interval_ms,
            flap_pairs: core.flap_pairs,
            flap_window_secs: core.flap_window_ms / 1_000,
        }
    }
}

impl NodeRole {
    /// The node's word, as `--vantage` and `/status` spell it.
    pub const VANTAGE: Vantage = Vantage::Node;
}

impl RouterRole {
    /// The router's word.
    pub const VANTAGE: Vantage = Vantage::Router;
}

impl StationRole {
    /// The station's word.
    pub const VANTAGE: Vantage = Vantage::Bmp;
}

impl Role {
    /// The role's word (`node`, `router`, `bmp`), as `--vantage` spells it.
    pub fn vantage(&self) -> Vantage {
        match self {
            Role::Node(_) => NodeRole::VANTAGE,
            Role::Router(_) => RouterRole::VANTAGE,
            Role::Station(_) => StationRole::VANTAGE,
        }
    }

    /// The kernel tables the role reads (none at a station).
    pub fn tables(&self) -> Vec<TableId> {
        match self {
            Role::Node(n) => vec![n.table],
            Role::Router(r) => r.tables.clone(),
            Role::Station(_) => Vec::new(),
        }
    }
}

impl NodeRole {
    /// The node's table in ZAPI's 16 bits, which the checks enforce.
    pub fn zapi_table(&self) -> u16 {
        u16::try_from(self.table).unwrap_or(u16::MAX)
    }
}
