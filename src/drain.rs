//! Drain and undrain: take this node's VIPs out of BGP before it stops, and
//! put them back, proving each step from bgpd's own view (and, when named,
//! the local daemon's and a router-vantage ribbridge's).
//!
//! Contract:
//! - [`drain`] adds the drain's deny entry to every route-map that feeds the
//!   VIP table into bgpd (`crate::frr::drain`; only allowlisted commands),
//!   then waits until no established peer is sent any VIP; [`undrain`]
//!   removes it and waits until every VIP is sent to an established peer
//!   (the `advertised` class). Both are idempotent: already in the asked
//!   state, nothing is sent and the wait ends at the first check.
//! - Nothing kube-vip owns (kernel routes, addresses) is touched, and the
//!   BGP sessions stay up.
//! - The drain's truth is bgpd's running configuration, whoever wrote it: a
//!   running daemon reads it back on every poll (and after a restart) and
//!   reports every VIP `drained`. `endpoint` only waits for that report;
//!   the daemon's HTTP endpoint stays read-only.
//! - At the timeout: [`DrainError::Timeout`], naming what still advertises
//!   (or, undraining, what is still missing).

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::frr::drain::{Redistribution, drain_commands, redistributions, undrain_commands};
use crate::frr::{Afi, VtyClient, VtyError, bgp_snapshot};
use crate::http::client::{self, Address};
use crate::model::{Prefix, TableId};
use crate::status::{StatusDoc, VipState};

/// What [`drain`] and [`undrain`] act on and wait for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainInput {
    /// Directory holding zebra.vty and bgpd.vty.
    pub frr_dir: PathBuf,
    /// The VIP tables bgpd redistributes.
    pub tables: Vec<TableId>,
    /// How long to wait for the views to agree.
    pub timeout: Duration,
    /// This node's running ribbridge: also wait until its `/status` reports
    /// every VIP `drained` (undrain: `advertised`).
    pub endpoint: Option<Address>,
    /// A router-vantage ribbridge: also wait until its `/status` shows no
    /// path to a VIP through this node (undrain: a path to each).
    pub confirm: Option<Address>,
}

/// What a drain or an undrain did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainOutcome {
    /// bgpd's configuration changed (false: it was already in that state).
    pub changed: bool,
    /// The VIPs (zebra's view of the tables).
    pub vips: BTreeSet<Prefix>,
    /// The established peers checked.
    pub peers: BTreeSet<String>,
    /// From the configuration change to the views agreeing.
    pub waited: Duration,
}

/// Which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Withdraw every VIP from every peer.
    Drain,
    /// Advertise them again.
    Undrain,
}

impl Direction {
    fn goal(self) -> &'static str {
        match self {
            Direction::Drain => "drained",
            Direction::Undrain => "advertised",
        }
    }
}

/// Why a drain or an undrain failed.
#[derive(Debug, thiserror::Error)]
pub enum DrainError {
    /// A vty socket could not be used, or bgpd refused a command.
    #[error("{}: {source}; is FRR running, and is --frr-dir its socket directory?", path.display())]
    Vty {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: VtyError,
    },
    /// bgpd does not redistribute the VIP table: nothing to drain.
    #[error(
        "bgpd's running configuration redistributes none of the tables {tables:?}: nothing to drain or undrain; check frr.conf (ribbridge render writes the redistribution)"
    )]
    NoRedistribution {
        /// The tables looked for.
        tables: Vec<TableId>,
    },
    /// A redistribution without a route-map: the drain needs one.
    #[error(
        "bgpd's '{line}' has no route-map: the drain adds a deny entry to the redistribution's route-map; add one (ribbridge render writes it)"
    )]
    NoRouteMap {
        /// The configuration line.
        line: String,
    },
    /// The views did not agree within the timeout.
    #[error("not {goal} after {timeout:?}: {}", pending.join("; "))]
    Timeout {
        /// `drained` or `advertised`.
        goal: &'static str,
        /// The timeout.
        timeout: Duration,
        /// What still advertises (or is still missing), one item each.
        pending: Vec<String>,
    },
}

/// Take this node's VIPs out of BGP and wait until no peer is sent one.
pub async fn drain(input: &DrainInput) -> Result<DrainOutcome, DrainError> {
    run(input, Direction::Drain).await
}

/// Put them back and wait until each is `advertised` again.
pub async fn undrain(input: &DrainInput) -> Result<DrainOutcome, DrainError> {
    run(input, Direction::Undrain).await
}

/// Time between two checks of the views.
const CHECK_EVERY: Duration = Duration::from_millis(100);

async fn run(input: &DrainInput, dir: Direction) -> Result<DrainOutcome, DrainError> {
    let start = Instant::now();
    let vty_timeout = input
        .timeout
        .clamp(Duration::from_secs(1), Duration::from_secs(10));
    let bgpd_path = input.frr_dir.join("bgpd.vty");
    let zebra_path = input.frr_dir.join("zebra.vty");
    let vty_err = |path: &PathBuf| {
        let path = path.clone();
        move |source| DrainError::Vty { path, source }
    };
    let bgpd = VtyClient::lazy(&bgpd_path, vty_timeout);
    let zebra = VtyClient::lazy(&zebra_path, vty_timeout);
    let config = bgpd.running_config().await.map_err(vty_err(&bgpd_path))?;
    let rs: Vec<Redistribution> = input
        .tables
        .iter()
        .flat_map(|&t| redistributions(&config, t))
        .collect();
    if rs.is_empty() {
        return Err(DrainError::NoRedistribution {
            tables: input.tables.clone(),
        });
    }
    if let Some(r) = rs.iter().find(|r| r.route_map.is_none()) {
        return Err(DrainError::NoRouteMap { line: r.line() });
    }
    let cmds = match dir {
        Direction::Drain => drain_commands(&config, &rs),
        Direction::Undrain => undrain_commands(&config, &rs),
    };
    let changed = !cmds.is_empty();
    if changed {
        let refs: Vec<&str> = cmds.iter().map(String::as_str).collect();
        bgpd.configure(&refs).await.map_err(vty_err(&bgpd_path))?;
        tracing::info!(commands = cmds.len(), "bgpd: {} configured", dir.goal());
    }
    let mine = local_addresses();
    let deadline = start + input.timeout;
    let waited_from = Instant::now();
    loop {
        let check = check(input, dir, &bgpd, &zebra, &mine).await;
        if check.pending.is_empty() {
            return Ok(DrainOutcome {
                changed,
                vips: check.vips,
                peers: check.peers,
                waited: waited_from.elapsed(),
            });
        }
        if Instant::now() >= deadline {
            return Err(DrainError::Timeout {
                goal: dir.goal(),
                timeout: input.timeout,
                pending: check.pending,
            });
        }
        tokio::time::sleep(CHECK_EVERY).await;
    }
}

struct Check {
    vips: BTreeSet<Prefix>,
    peers: BTreeSet<String>,
    pending: Vec<String>,
}

fn family(p: &Prefix) -> Afi {
    if p.addr().is_ipv4() {
        Afi::Ipv4
    } else {
        Afi::Ipv6
    }
}

async fn check(
    input: &DrainInput,
    dir: Direction,
    bgpd: &VtyClient,
    zebra: &VtyClient,
    mine: &BTreeSet<IpAddr>,
) -> Check {
    let mut pending = Vec::new();
    let mut vips = BTreeSet::new();
    for &table in &input.tables {
        for afi in [Afi::Ipv4, Afi::Ipv6] {
            match zebra.route_prefixes(afi, table).await {
                Ok(view) => vips.extend(view),
                Err(e) => pending.push(format!("zebra's table {table} unreadable: {e}")),
            }
        }
    }
    let mut peers = BTreeSet::new();
    match bgp_snapshot(bgpd).await {
        Err(e) => pending.push(format!("bgpd's sessions unreadable: {e}")),
        Ok(view) => {
            for v in &vips {
                let Some(fam) = view.get(&family(v)) else {
                    continue;
                };
                let mut sent_to = Vec::new();
                for (name, p) in fam.iter().filter(|(_, p)| p.established) {
                    peers.insert(name.clone());
                    match &p.advertised {
                        Some(a) if a.contains(v) => sent_to.push(name.clone()),
                        Some(_) => {}
                        None => pending.push(format!(
                            "peer {name}'s advertised-routes unreadable: {}",
                            p.error.as_deref().unwrap_or("no answer")
                        )),
                    }
                }
                match dir {
                    Direction::Drain if !sent_to.is_empty() => {
                        pending.push(format!("bgpd still sends {v} to {}", sent_to.join(", ")))
                    }
                    Direction::Undrain if sent_to.is_empty() => {
                        pending.push(format!("bgpd sends {v} to no established peer"));
                    }
                    _ => {}
                }
            }
        }
    }
    if let Some(e) = &input.endpoint {
        match status(e).await {
            Err(why) => pending.push(why.to_string()),
            Ok(doc) => {
                for v in doc.vips.iter().filter(|s| vips.contains(&s.prefix)) {
                    let want = match dir {
                        Direction::Drain => crate::reconcile::Class::Drained,
                        Direction::Undrain => crate::reconcile::Class::Advertised,
                    };
                    if v.state != want {
                        pending.push(format!(
                            "the daemon at {e} reports {} {}",
                            v.prefix,
                            VipState::name(v.state)
                        ));
                    }
                }
            }
        }
    }
    if let Some(r) = &input.confirm {
        match status(r).await {
            Err(why) => pending.push(why.to_string()),
            Ok(doc) => {
                for v in &vips {
                    let via: Vec<&String> = doc
                        .vips
                        .iter()
                        .filter(|s| s.prefix == *v)
                        .flat_map(|s| s.nexthops.iter())
                        .filter(|h| h.parse::<IpAddr>().is_ok_and(|a| mine.contains(&a)))
                        .collect();
                    match dir {
                        Direction::Drain if !via.is_empty() => pending.push(format!(
                            "the router view {r} still has a path to {v} via {}",
                            via.iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                        Direction::Undrain if via.is_empty() => pending.push(format!(
                            "the router view {r} has no path to {v} through this node"
                        )),
                        _ => {}
                    }
                }
            }
        }
    }
    Check {
        vips,
        peers,
        pending,
    }
}

/// Why a daemon's `/status` could not be read (the wait retries it).
#[derive(Debug, thiserror::Error)]
enum StatusError {
    /// Unreachable, or an answer that is not 200.
    #[error(transparent)]
    Client(#[from] client::ClientError),
    /// Another service on that port, or a different document.
    #[error("{address}/status is not a ribbridge status document: {source}")]
    Document {
        /// The endpoint.
        address: String,
        /// The parser's reason.
        source: serde_json::Error,
    },
}

/// GET `/status`.
async fn status(a: &Address) -> Result<StatusDoc, StatusError> {
    let body = client::get_ok(a, "/status", client::DEFAULT_TIMEOUT).await?;
    serde_json::from_slice(&body).map_err(|source| StatusError::Document {
        address: a.to_string(),
        source,
    })
}

/// This host's addresses: a router's next hop equal to one of them is a
/// path through this node.
fn local_addresses() -> BTreeSet<IpAddr> {
    let Ok(addrs) = nix::ifaddrs::getifaddrs() else {
        return BTreeSet::new();
    };
    let mut out = BTreeSet::new();
    for a in addrs {
        let Some(s) = a.address else { continue };
        if let Some(v4) = s.as_sockaddr_in() {
            out.insert(IpAddr::V4(v4.ip()));
        } else if let Some(v6) = s.as_sockaddr_in6() {
            out.insert(IpAddr::V6(v6.ip()));
        }
    }
    out
}
