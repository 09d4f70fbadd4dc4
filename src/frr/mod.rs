//! The FRR clients: zebra's ZAPI stream and the daemons' vty sockets.
//!
//! Contract:
//! - [`zapi`] streams what zebra redistributes from one kernel table (the
//!   exact routes bgpd is told about) as [`ZapiEvent`]s into a bounded
//!   channel, reconnecting, re-subscribing and dropping stale routes by
//!   itself (see [`zapi::client`] for the end-of-dump marker).
//! - [`vty`] answers `show ... json` as typed views and applies only
//!   allowlisted configuration.
//! - The release comes from zebra's `show version` ([`Release`]); the table
//!   mode from bgpd's running config ([`TableMode`]), or the configuration.
//! - Nothing here decides anything about routes: the daemon joins the views.
//!
//! What the daemon calls: [`zapi::client::run`] (a task) with a
//! [`ZapiConfig`]; [`VtyClient::connect`] on zebra.vty and bgpd.vty, then
//! [`bgp_snapshot`] (sessions + advertised prefixes per peer) and
//! [`VtyClient::route_table`] on its own schedule; [`VtyClient::configure`] /
//! [`VtyClient::exec`] for healing.

pub mod access;
#[cfg(any(test, feature = "testing"))]
pub mod capture;

pub mod release;
pub mod vty;
pub mod zapi;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::Family;
pub use release::Release;
pub use vty::client::VtyClient;
pub use vty::codec::{VtyError, VtyReply, VtyStatus};
pub use vty::json::TableMode;
pub use zapi::client::{ZapiConfig, ZapiEvent};
pub use zapi::codec::ZapiRoute;

use crate::model::PrefixSet;

/// One BGP peer of one address family as bgpd reports it (the core sees
/// both families merged, as [`crate::model::PeerView`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerReport {
    /// FSM state text (`Established`, `Active`, ...).
    pub state: String,
    /// True when Established.
    pub established: bool,
    /// The prefixes sent to it; `None` when the peer is not Established (bgpd
    /// has nothing to show) or the query failed (see `error`).
    pub advertised: Option<PrefixSet>,
    /// Why `advertised` is missing, if a query failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// bgpd's sessions and per-peer advertised prefixes, per address family.
pub type BgpView = BTreeMap<Family, BTreeMap<String, PeerReport>>;

/// Reads bgpd's sessions for IPv4 and IPv6 unicast and, for each Established
/// peer, the prefixes bgpd sends it. Call on bgpd.vty.
pub async fn bgp_snapshot(bgpd: &VtyClient) -> Result<BgpView, VtyError> {
    let mut out = BgpView::new();
    for afi in [Family::Ipv4, Family::Ipv6] {
        let summary = bgpd.bgp_summary(afi).await?;
        let mut peers = BTreeMap::new();
        for (name, p) in summary.peers {
            let established = p.is_established();
            let (advertised, error) = if established {
                match bgpd.advertised_routes(afi, &name).await {
                    Ok(a) => (Some(a.prefixes), None),
                    Err(e) => (None, Some(e.to_string())),
                }
            } else {
                (None, None)
            };
            peers.insert(
                name,
                PeerReport {
                    state: p.state,
                    established,
                    advertised,
                    error,
                },
            );
        }
        out.insert(afi, peers);
    }
    Ok(out)
}

/// What [`report`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportInput {
    /// Directory holding zserv.api, zebra.vty and bgpd.vty.
    pub frr_dir: PathBuf,
    /// The kernel table FRR redistributes.
    pub table: u16,
    /// The table mode; read from bgpd's running config when `None`.
    pub table_mode: Option<TableMode>,
    /// How long zebra may take to send its ZAPI dump.
    pub timeout: Duration,
}

/// Everything the clients see of FRR at one moment.
#[derive(Debug, Serialize)]
pub struct Report {
    /// zebra's release.
    pub release: Release,
    /// How bgpd is fed the table.
    pub mode: TableMode,
    /// The table.
    pub table: u16,
    /// What zebra redistributes over ZAPI.
    pub zapi_routes: Vec<ZapiRoute>,
    /// zebra's own view of the table, per family.
    pub zebra_table: BTreeMap<Family, vty::json::RouteTableView>,
    /// bgpd's sessions and what each is sent.
    pub bgp: BgpView,
}

/// Why FRR could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrrError {
    /// The release or the table mode could not be found out.
    #[error(transparent)]
    Discover(#[from] zapi::client::DiscoverError),
    /// zebra's ZAPI socket: connect, release, table mode, or the dump.
    #[error("zebra's ZAPI socket in {}: {reason}", dir.display())]
    Zapi {
        /// The socket directory.
        dir: PathBuf,
        /// What went wrong and what to check.
        reason: String,
    },
    /// A vty socket refused or answered something unreadable.
    #[error("{}: {source}", path.display())]
    Vty {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: VtyError,
    },
}

/// Read zebra's ZAPI dump, zebra's table and bgpd's sessions once.
pub async fn report(input: &ReportInput) -> Result<Report, FrrError> {
    let dir = &input.frr_dir;
    let mut cfg = ZapiConfig::in_dir(dir, input.table);
    cfg.mode = input.table_mode;
    let (release, _, mode) = zapi::client::discover(&cfg).await?;
    let zapi_routes = zapi_dump(cfg, input.timeout).await?;
    let vty = |name: &str| {
        let path = dir.join(name);
        move |source| FrrError::Vty {
            path: path.clone(),
            source,
        }
    };
    let zebra = VtyClient::connect(dir.join("zebra.vty"))
        .await
        .map_err(vty("zebra.vty"))?;
    let mut zebra_table = BTreeMap::new();
    for afi in [Family::Ipv4, Family::Ipv6] {
        let t = zebra
            .route_table(afi, u32::from(input.table))
            .await
            .map_err(vty("zebra.vty"))?;
        zebra_table.insert(afi, t);
    }
    let bgpd = VtyClient::connect(dir.join("bgpd.vty"))
        .await
        .map_err(vty("bgpd.vty"))?;
    let bgp = bgp_snapshot(&bgpd).await.map_err(vty("bgpd.vty"))?;
    Ok(Report {
        release,
        mode,
        table: input.table,
        zapi_routes,
        zebra_table,
        bgp,
    })
}

/// zebra's first dump, as routes.
async fn zapi_dump(cfg: ZapiConfig, limit: Duration) -> Result<Vec<ZapiRoute>, FrrError> {
    let dir = cfg
        .zserv
        .parent()
        .map_or_else(PathBuf::new, std::path::Path::to_path_buf);
    let events = zapi::client::until_synced(cfg, limit)
        .await
        .map_err(|e| FrrError::Zapi {
            dir,
            reason: e.to_string(),
        })?;
    let mut routes = BTreeMap::new();
    for ev in events {
        match ev {
            ZapiEvent::RouteAdd { route } => {
                routes.insert((route.vrf_id, route.prefix), route);
            }
            ZapiEvent::RouteDel { route, .. } => {
                routes.remove(&(route.vrf_id, route.prefix));
            }
            _ => {}
        }
    }
    Ok(routes.into_values().collect())
}
