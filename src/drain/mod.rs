//! Drain and undrain: take this node's VIPs out of BGP before it stops, and
//! put them back, proving each step from bgpd's own view (and, when named,
//! the local daemon's and a router-vantage ribbridge's).
//!
//! Contract:
//! - [`drain`] adds the drain's deny entry to every route-map that feeds the
//!   VIP table into bgpd ([`plan`]; only allowlisted commands),
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
//! - The drain is also ribbridge's intent, kept in a file ([`state`],
//!   `DrainInput::state`), so that it can be re-applied when a reload of
//!   bgpd's whole configuration removes the entry. [`drain`] records it
//!   once bgpd's configuration has been read and the commands are known,
//!   and before the first command is sent, making its directory when it is
//!   missing on a tmpfs ([`state::ensure_dir`]: a host where no unit or
//!   pod made `/run/ribbridge` yet). When it still cannot be written, the
//!   node is drained anyway and the outcome says so
//!   ([`IntentRecord::Unrecorded`]): an SRE draining before a reboot needs
//!   the drain now; the next reload of bgpd's configuration would undo it,
//!   which the command says plainly. A drain that fails after that (bgpd refuses a
//!   command, the wait times out) leaves the intent recorded: it is still
//!   what was asked for, and `undrain` removes it. [`undrain`] removes the
//!   file first, before bgpd is told anything (so that a daemon, which
//!   re-applies a recorded drain bgpd lacks, does not drain again while the
//!   VIPs come back); a file that cannot be removed leaves bgpd drained
//!   ([`DrainError::StateRemove`]).
//! - A running daemon watches the file and knows of a drain the moment it
//!   is recorded, before bgpd is touched: it heals nothing from then on
//!   (`reconcile`'s drain). It re-applies a recorded drain that bgpd's
//!   configuration lost with [`reconfigure`] ([`Change::Drain`]): the same
//!   plan and commands.
//! - At the timeout: [`DrainError::Timeout`], naming what still advertises
//!   (or, undraining, what is still missing).

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;

pub mod plan;
pub mod state;
pub mod watch;

pub use state::DrainState;

use crate::frr::{VtyClient, VtyError, bgp_snapshot};
use crate::http::client::{self, Address};
use crate::model::Family;
use crate::model::{Prefix, TableId};
use crate::status::{StatusDoc, VipState};
use plan::{DrainPlanError, drain_commands, undrain_commands};

/// What [`drain`] and [`undrain`] act on and wait for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainInput {
    /// Directory holding zebra.vty and bgpd.vty.
    pub frr_dir: PathBuf,
    /// The VIP tables bgpd redistributes.
    pub tables: Vec<TableId>,
    /// The drain's intent file ([`state`]; `crate::config::DEFAULT_DRAIN_STATE`).
    pub state: PathBuf,
    /// Drain: record the intent (false: a stop's drain, which a replaced
    /// pod or a restarted FRR must not inherit). Undrain removes it always.
    pub record: bool,
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
    /// What happened to the intent file.
    pub intent: IntentRecord,
}

/// What a drain or an undrain did with the intent file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IntentRecord {
    /// Drain: written (a recorded drain keeps its `since`); `made_dir`:
    /// its missing directory was made first ([`state::ensure_dir`]).
    Recorded {
        /// The directory was made.
        made_dir: bool,
    },
    /// Drain: it could not be written, and the node was drained anyway
    /// (draining before a reboot matters more than surviving a reload);
    /// `why` is the error, for the command to say plainly.
    Unrecorded {
        /// Why.
        why: String,
    },
    /// Undrain: removed.
    Removed,
    /// Undrain: there was none.
    Absent,
    /// Drain: not recorded, as asked (`--no-intent`).
    NotRecorded,
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
    /// bgpd's configuration cannot be drained or undrained as it is (no
    /// redistribution, no route-map, no free sequence); nothing was sent.
    #[error(transparent)]
    Plan(#[from] DrainPlanError),
    /// The intent file exists but cannot be read.
    #[error(
        "{}: cannot read the drain intent: {source}; make it readable by ribbridge's user, or remove it (ribbridge undrain)",
        path.display()
    )]
    StateRead {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The intent file is not a drain intent document.
    #[error(
        "{}: not a ribbridge drain intent ({source}); it holds {{\"drained\": true, \"since\": \"RFC 3339 time\", \"tables\": [198]}}: run ribbridge drain to rewrite it, or ribbridge undrain to remove it",
        path.display()
    )]
    StateGarbled {
        /// The file.
        path: PathBuf,
        /// The parser's reason.
        source: serde_json::Error,
    },
    /// The intent file's `since` is not an RFC 3339 time.
    #[error(
        "{}: the drain intent's since '{text}' is not an RFC 3339 time ({source}); run ribbridge drain to rewrite it, or ribbridge undrain to remove it",
        path.display()
    )]
    StateSince {
        /// The file.
        path: PathBuf,
        /// The text found.
        text: String,
        /// The parser's reason.
        source: humantime::TimestampError,
    },
    /// The intent file cannot be written.
    #[error(
        "cannot record the drain intent in {}: {source}; mount a writable directory at {} (the manifests mount the host's /run/ribbridge, the systemd units set RuntimeDirectory=ribbridge) or give --drain-state a writable path",
        path.display(),
        path.parent().map_or_else(|| ".".into(), |d| d.display().to_string())
    )]
    StateWrite {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The intent file's missing directory is not made.
    #[error(
        "the drain intent's directory {} is missing and is not made: {why}; mount a directory there (the manifests mount the host's /run/ribbridge, the systemd units set RuntimeDirectory=ribbridge) or give --drain-state a path on a tmpfs",
        dir.display()
    )]
    StateDir {
        /// The directory.
        dir: PathBuf,
        /// Why it is not made.
        why: String,
    },
    /// The intent file cannot be removed: bgpd was not undrained.
    #[error(
        "the drain intent {} cannot be removed: {source}; bgpd was not undrained (a running ribbridge would drain this node again): remove the file by hand, or make its directory writable by ribbridge's user, and run ribbridge undrain again",
        path.display()
    )]
    StateRemove {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The drain state file's directory cannot be watched.
    #[error(
        "cannot watch {} for the drain state: {source}; mount the directory (the manifests mount the host's /run/ribbridge, the systemd units set RuntimeDirectory=ribbridge) or give --drain-state a path in an existing directory",
        dir.display()
    )]
    Watch {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
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
    let bgpd = VtyClient::lazy(&bgpd_path, vty_timeout);
    let zebra = VtyClient::lazy(&zebra_path, vty_timeout);
    let cmds = plan(&bgpd, &bgpd_path, dir, &input.tables).await?;
    // The intent changes before bgpd does, both ways: a running daemon
    // re-applies a recorded drain that bgpd lacks, so an undrain whose
    // intent were removed after its commands would be drained again by
    // it in between.
    let intent = match dir {
        Direction::Drain if input.record => match record(input) {
            Ok(made_dir) => IntentRecord::Recorded { made_dir },
            Err(e) => {
                tracing::warn!(error = %e, "the drain intent is not recorded; draining anyway");
                IntentRecord::Unrecorded { why: e.to_string() }
            }
        },
        Direction::Drain => IntentRecord::NotRecorded,
        Direction::Undrain if DrainState::remove(&input.state)? => IntentRecord::Removed,
        Direction::Undrain => IntentRecord::Absent,
    };
    let changed = !cmds.is_empty();
    if changed {
        apply(&bgpd, &bgpd_path, &cmds).await?;
        tracing::info!(commands = cmds.len(), "bgpd: {} configured", dir.goal());
    }
    let mine = local_addresses();
    let deadline = start + input.timeout;
    let waited_from = Instant::now();
    let mut said: Vec<String> = Vec::new();
    loop {
        let check = check(input, dir, &bgpd, &zebra, &mine).await;
        // What it waits for, said when it changes (a person watching the
        // command sees which peers still receive which VIP).
        if !check.pending.is_empty() && check.pending != said {
            tracing::info!(
                waited_ms = u64::try_from(waited_from.elapsed().as_millis()).unwrap_or(u64::MAX),
                "waiting: {}",
                check.pending.join("; ")
            );
            said.clone_from(&check.pending);
        }
        if check.pending.is_empty() {
            return Ok(DrainOutcome {
                changed,
                vips: check.vips,
                peers: check.peers,
                waited: waited_from.elapsed(),
                intent,
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

/// The apply step's first half, shared by the command and the daemon:
/// bgpd's running configuration read, the commands that take it to `dir`
/// (none: it is so already).
async fn plan(
    bgpd: &VtyClient,
    path: &Path,
    dir: Direction,
    tables: &[TableId],
) -> Result<Vec<String>, DrainError> {
    let config = read_config(bgpd, path).await?;
    Ok(match dir {
        Direction::Drain => drain_commands(&config, tables)?,
        Direction::Undrain => undrain_commands(&config, tables)?,
    })
}

/// bgpd's running configuration.
async fn read_config(bgpd: &VtyClient, path: &Path) -> Result<String, DrainError> {
    bgpd.running_config()
        .await
        .map_err(|source| DrainError::Vty {
            path: path.to_path_buf(),
            source,
        })
}

/// The apply step's second half: the planned commands sent to bgpd.
async fn apply(bgpd: &VtyClient, path: &Path, cmds: &[String]) -> Result<(), DrainError> {
    let refs: Vec<&str> = cmds.iter().map(String::as_str).collect();
    bgpd.configure(&refs)
        .await
        .map_err(|source| DrainError::Vty {
            path: path.to_path_buf(),
            source,
        })
}

/// What a daemon's core asks of bgpd's configuration, beside the drain
/// commands of an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Re-apply a recorded drain that bgpd's configuration lost
    /// (`reconcile::Action::ReapplyDrain`).
    Drain,
    /// Take one VIP out of BGP (`reconcile::Action::Withdraw`).
    Withdraw(Prefix),
    /// Put it back.
    Restore(Prefix),
}

/// Apply `change` to bgpd's running configuration (the daemon, when its
/// core asks): the plan read from the configuration as it is now, so that
/// an answer lost to a timeout and asked again sends nothing twice; no
/// record and no wait (the daemon's own views follow). Returns the number
/// of commands sent (0: bgpd had it already).
pub async fn reconfigure(
    frr_dir: &Path,
    tables: &[TableId],
    change: Change,
    vty_timeout: Duration,
) -> Result<usize, DrainError> {
    let path = frr_dir.join("bgpd.vty");
    let bgpd = VtyClient::lazy(&path, vty_timeout);
    let cmds = match change {
        Change::Drain => plan(&bgpd, &path, Direction::Drain, tables).await?,
        Change::Withdraw(p) | Change::Restore(p) => {
            let config = read_config(&bgpd, &path).await?;
            if matches!(change, Change::Withdraw(_)) {
                plan::withdraw_commands(&config, tables, &p)?
            } else {
                plan::restore_commands(&config, tables, &p)?
            }
        }
    };
    if !cmds.is_empty() {
        apply(&bgpd, &path, &cmds).await?;
    }
    Ok(cmds.len())
}

/// Record the drain's intent for `input`, keeping the `since` of one
/// already recorded (an unreadable one is replaced), and making its
/// directory where that is safe; `true` when the directory was made.
fn record(input: &DrainInput) -> Result<bool, DrainError> {
    let made_dir = state::ensure_dir(&input.state)?;
    let since = match DrainState::read(&input.state) {
        Ok(Some(s)) => s.since,
        Ok(None) => crate::clock::wall(),
        Err(e) => {
            tracing::warn!(error = %e, "replacing the drain intent");
            crate::clock::wall()
        }
    };
    DrainState::new(input.tables.clone(), since).write(&input.state)?;
    tracing::info!(path = %input.state.display(), made_dir, "drain intent recorded");
    Ok(made_dir)
}

struct Check {
    vips: BTreeSet<Prefix>,
    peers: BTreeSet<String>,
    pending: Vec<String>,
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
        for afi in [Family::Ipv4, Family::Ipv6] {
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
                let Some(fam) = view.get(&Family::of(v)) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frr::vty::fake::{FakeVty, success};

    const CONFIG: &str = "router bgp 64512\n address-family ipv4 unicast\n  \
redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4\n exit-address-family\nexit\n!\n\
route-map KUBE-VIP-ROUTES-V4 permit 10\nexit\n";

    const DRAINED: &str =
        "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-drain\nexit\n";

    /// A bgpd.vty in `dir` answering `show running-config` with `config`
    /// and anything else with an empty success; it records every command.
    fn fake_bgpd(dir: &std::path::Path, config: String) -> FakeVty {
        FakeVty::serve(&dir.join("bgpd.vty"), move |cmd| {
            success(if cmd == "show running-config" {
                config.as_str()
            } else {
                ""
            })
        })
        .expect("bind")
    }

    fn input(dir: &std::path::Path, state: PathBuf) -> DrainInput {
        DrainInput {
            frr_dir: dir.to_path_buf(),
            tables: vec![198],
            state,
            record: true,
            // No zebra.vty: the wait never agrees and ends at once.
            timeout: Duration::from_millis(50),
            endpoint: None,
            confirm: None,
        }
    }

    /// The configuration commands `bgpd` read, in order.
    fn configured(bgpd: &FakeVty) -> Vec<String> {
        let mut commands = bgpd.commands();
        commands.retain(|c| !c.starts_with("show") && *c != "enable");
        commands
    }

    #[tokio::test]
    async fn an_unrecordable_intent_still_drains() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let seen = fake_bgpd(tmp.path(), CONFIG.to_string());
        // Its directory's parent is missing too: nothing is made.
        let state = tmp.path().join("no-such-dir/sub/drain");
        let e = record(&input(tmp.path(), state.clone())).expect_err("no directory");
        assert!(matches!(e, DrainError::StateDir { .. }), "{e:?}");
        let e = drain(&input(tmp.path(), state.clone()))
            .await
            .expect_err("the wait cannot agree without zebra");
        assert!(matches!(e, DrainError::Timeout { .. }), "{e:?}");
        assert!(
            configured(&seen).contains(&"route-map KUBE-VIP-ROUTES-V4 deny 1".to_string()),
            "drained though the intent is not recorded"
        );
        assert!(!state.exists());
    }

    #[tokio::test]
    async fn the_intent_is_recorded_before_the_commands_and_stays_on_timeout() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let seen = fake_bgpd(tmp.path(), CONFIG.to_string());
        let state = tmp.path().join("drain");
        let e = drain(&input(tmp.path(), state.clone()))
            .await
            .expect_err("the wait cannot agree without zebra");
        assert!(matches!(e, DrainError::Timeout { .. }), "{e:?}");
        let cmds = configured(&seen);
        assert_eq!(
            cmds.first().map(String::as_str),
            Some("configure terminal"),
            "{cmds:?}"
        );
        assert!(cmds.contains(&"route-map KUBE-VIP-ROUTES-V4 deny 1".to_string()));
        let s = DrainState::read(&state)
            .expect("readable")
            .expect("recorded");
        assert_eq!(s.tables, vec![198]);
    }

    #[tokio::test]
    async fn a_stop_hooks_drain_configures_bgpd_and_records_no_intent() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let seen = fake_bgpd(tmp.path(), CONFIG.to_string());
        let state = tmp.path().join("drain");
        let e = drain(&DrainInput {
            record: false,
            ..input(tmp.path(), state.clone())
        })
        .await
        .expect_err("the wait cannot agree without zebra");
        assert!(matches!(e, DrainError::Timeout { .. }), "{e:?}");
        assert!(configured(&seen).contains(&"route-map KUBE-VIP-ROUTES-V4 deny 1".to_string()));
        assert!(
            !state.exists(),
            "{} written by --no-intent",
            state.display()
        );
    }

    #[tokio::test]
    async fn a_collision_records_nothing_and_sends_nothing() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let config = CONFIG.replace("permit 10", "permit 1");
        let seen = fake_bgpd(tmp.path(), config);
        let state = tmp.path().join("drain");
        let e = drain(&input(tmp.path(), state.clone()))
            .await
            .expect_err("sequence 1 taken");
        assert!(
            matches!(
                e,
                DrainError::Plan(DrainPlanError::NoFreeSequence { first: 1, .. })
            ),
            "{e:?}"
        );
        assert!(!state.exists());
        assert_eq!(configured(&seen), Vec::<String>::new());
    }

    #[tokio::test]
    async fn undrain_removes_the_intent_before_it_sends_the_commands() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let seen = fake_bgpd(tmp.path(), format!("{CONFIG}{DRAINED}"));
        let state = tmp.path().join("drain");
        DrainState::new(vec![198], crate::clock::wall())
            .write(&state)
            .expect("write");
        let e = undrain(&input(tmp.path(), state.clone()))
            .await
            .expect_err("the wait cannot agree without zebra");
        assert!(matches!(e, DrainError::Timeout { .. }), "{e:?}");
        assert!(configured(&seen).contains(&"no route-map KUBE-VIP-ROUTES-V4 deny 1".to_string()));
        assert!(!state.exists(), "removed before the wait");
    }
}
