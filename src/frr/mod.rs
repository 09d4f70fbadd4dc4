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

pub mod release;
pub mod vty;
pub mod zapi;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use release::Release;
pub use vty::client::VtyClient;
pub use vty::codec::{VtyError, VtyReply, VtyStatus};
pub use vty::json::TableMode;
pub use zapi::client::{ZapiConfig, ZapiEvent};
pub use zapi::codec::{Afi, ZapiRoute};

use crate::model::Prefix;

/// One BGP peer as bgpd reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerView {
    /// FSM state text (`Established`, `Active`, ...).
    pub state: String,
    /// True when Established.
    pub established: bool,
    /// The prefixes sent to it; `None` when the peer is not Established (bgpd
    /// has nothing to show) or the query failed (see `error`).
    pub advertised: Option<BTreeSet<Prefix>>,
    /// Why `advertised` is missing, if a query failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// bgpd's sessions and per-peer advertised prefixes, per address family.
pub type BgpView = BTreeMap<Afi, BTreeMap<String, PeerView>>;

/// Reads bgpd's sessions for IPv4 and IPv6 unicast and, for each Established
/// peer, the prefixes bgpd sends it. Call on bgpd.vty.
pub async fn bgp_snapshot(bgpd: &VtyClient) -> Result<BgpView, VtyError> {
    let mut out = BgpView::new();
    for afi in [Afi::Ipv4, Afi::Ipv6] {
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
                PeerView {
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

#[derive(Debug, clap::Args)]
pub struct FrrArgs {
    /// Directory holding zserv.api, zebra.vty and bgpd.vty.
    #[arg(long)]
    pub frr_dir: PathBuf,
    /// The kernel table FRR redistributes.
    #[arg(long, default_value_t = 198)]
    pub table: u16,
    /// The table mode; read from bgpd's running config when absent.
    #[arg(long, value_parser = parse_mode)]
    pub mode: Option<TableMode>,
    /// How long to wait for zebra's ZAPI dump.
    #[arg(long, default_value_t = 10)]
    pub timeout_secs: u64,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_mode(s: &str) -> Result<TableMode, String> {
    match s {
        "table-direct" => Ok(TableMode::TableDirect),
        "import-table" => Ok(TableMode::ImportTable),
        _ => Err(format!(
            "'{s}' is not a table mode: use table-direct or import-table"
        )),
    }
}

/// Everything `ribbridge frr` prints.
#[derive(Debug, Serialize)]
struct Report {
    release: Release,
    mode: TableMode,
    table: u16,
    zapi_routes: Vec<ZapiRoute>,
    zebra_table: BTreeMap<Afi, vty::json::RouteTableView>,
    bgp: BgpView,
}

/// `ribbridge frr`: print what the clients see.
pub fn command(args: FrrArgs) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("ribbridge frr: cannot start the async runtime: {e}");
            return ExitCode::from(crate::cli::EXIT_ERROR);
        }
    };
    match rt.block_on(report(&args)) {
        Ok(r) => {
            if args.json {
                match serde_json::to_string_pretty(&r) {
                    Ok(s) => println!("{s}"),
                    Err(e) => {
                        eprintln!("ribbridge frr: cannot print JSON: {e}");
                        return ExitCode::from(crate::cli::EXIT_ERROR);
                    }
                }
            } else {
                print_text(&r);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ribbridge frr: {e}");
            ExitCode::from(crate::cli::EXIT_ERROR)
        }
    }
}

async fn report(args: &FrrArgs) -> Result<Report, String> {
    let dir = &args.frr_dir;
    let mut cfg = ZapiConfig::in_dir(dir, args.table);
    cfg.mode = args.mode;
    let (release, _, mode) = zapi::client::discover(&cfg)
        .await
        .map_err(|e| e.to_string())?;
    let zapi_routes = zapi_dump(cfg, Duration::from_secs(args.timeout_secs)).await?;
    let zebra = VtyClient::connect(dir.join("zebra.vty"))
        .await
        .map_err(|e| e.to_string())?;
    let mut zebra_table = BTreeMap::new();
    for afi in [Afi::Ipv4, Afi::Ipv6] {
        let t = zebra
            .route_table(afi, u32::from(args.table))
            .await
            .map_err(|e| e.to_string())?;
        zebra_table.insert(afi, t);
    }
    let bgpd = VtyClient::connect(dir.join("bgpd.vty"))
        .await
        .map_err(|e| e.to_string())?;
    let bgp = bgp_snapshot(&bgpd).await.map_err(|e| e.to_string())?;
    Ok(Report {
        release,
        mode,
        table: args.table,
        zapi_routes,
        zebra_table,
        bgp,
    })
}

/// Runs the ZAPI client until its first `Synced` and returns the routes.
async fn zapi_dump(cfg: ZapiConfig, limit: Duration) -> Result<Vec<ZapiRoute>, String> {
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let task = tokio::spawn(zapi::client::run(cfg, tx));
    let mut routes = BTreeMap::new();
    let collect = async {
        while let Some(ev) = rx.recv().await {
            match ev {
                ZapiEvent::RouteAdd { route } => {
                    routes.insert((route.vrf_id, route.prefix), route);
                }
                ZapiEvent::RouteDel { route, .. } => {
                    routes.remove(&(route.vrf_id, route.prefix));
                }
                ZapiEvent::Synced { .. } => return Ok(()),
                ZapiEvent::Disconnected { reason, .. } => return Err(reason),
                _ => {}
            }
        }
        Err("the ZAPI client stopped".to_string())
    };
    let r = tokio::time::timeout(limit, collect).await;
    task.abort();
    match r {
        Err(_) => Err(format!("zebra's dump did not complete within {limit:?}")),
        Ok(Err(e)) => Err(e),
        Ok(Ok(())) => Ok(routes.into_values().collect()),
    }
}

fn print_text(r: &Report) {
    println!("FRR {} ({:?}, table {})", r.release, r.mode, r.table);
    println!("ZAPI routes ({}):", r.zapi_routes.len());
    for z in &r.zapi_routes {
        let nhs: Vec<String> = z
            .nexthops
            .iter()
            .map(|n| {
                let mut s = match n.gateway.addr() {
                    Some(a) => format!("via {a}"),
                    None => format!("{:?}", n.gateway),
                };
                if let Some(w) = n.weight {
                    s.push_str(&format!(" weight {w}"));
                }
                s
            })
            .collect();
        println!(
            "  {} type {} inst {} distance {:?} metric {:?}: {}",
            z.prefix,
            z.route_type,
            z.instance,
            z.distance,
            z.metric,
            nhs.join(", ")
        );
    }
    for (afi, t) in &r.zebra_table {
        println!("zebra table {} {afi:?} ({} prefixes):", r.table, t.len());
        for (p, entries) in t {
            for e in entries {
                println!(
                    "  {p} {} selected={} installed={} nexthops={}",
                    e.protocol,
                    e.selected,
                    e.installed,
                    e.nexthops.len()
                );
            }
        }
    }
    for (afi, peers) in &r.bgp {
        println!("BGP {afi:?} sessions ({}):", peers.len());
        for (name, p) in peers {
            let adv = match (&p.advertised, &p.error) {
                (Some(a), _) => a
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
                (None, Some(e)) => format!("(error: {e})"),
                (None, None) => "-".into(),
            };
            println!("  {name} {}: advertised {adv}", p.state);
        }
    }
}
