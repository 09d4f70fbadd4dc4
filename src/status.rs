//! The `/status` document and `ribbridge status`: the per-VIP join table.
//!
//! Contract: [`document`] is a pure function of the core's state (plus the
//! wall-clock time of the daemon's monotonic zero, to print `since`); the
//! HTTP endpoint serves it as JSON and the command prints it as a table a
//! person reads at a glance. Exit codes of the command: 0 when every VIP is
//! `advertised` or `withdrawn`, 1 when any drifts, 2 on error.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::model::{Prefix, TableId};
use crate::reconcile::{Class, Millis, State};

/// Exit code when some VIP drifts.
pub const EXIT_DRIFT: u8 = 1;

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// URL of a running daemon's HTTP endpoint.
    #[arg(long, default_value = crate::http::DEFAULT_ENDPOINT)]
    pub endpoint: String,
    /// Build the join once, without a daemon.
    #[arg(long)]
    pub oneshot: bool,
    /// Directory holding zserv.api, zebra.vty and bgpd.vty (with --oneshot).
    #[arg(long)]
    pub frr_dir: Option<PathBuf>,
    /// Kernel routing table (with --oneshot).
    #[arg(long = "table")]
    pub tables: Vec<u32>,
    /// Print the /status JSON document instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The `/status` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusDoc {
    /// FRR release in use (`null` before zebra answered).
    pub frr_release: Option<String>,
    /// `observe` or `repair`.
    pub mode: String,
    /// Kernel mirror synced and zebra's view complete.
    pub ready: bool,
    /// One entry per VIP, sorted by table then prefix.
    pub vips: Vec<VipStatus>,
}

/// One VIP in `/status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VipStatus {
    /// The VIP.
    pub prefix: Prefix,
    /// The watched table.
    pub table: TableId,
    /// The class name.
    pub state: Class,
    /// The kernel holds it.
    pub kernel: bool,
    /// zebra redistributes it.
    pub zebra: bool,
    /// Each BGP peer: established, and whether it is sent the VIP.
    pub peers: Vec<PeerStatus>,
    /// ECMP legs in the kernel (0 when absent).
    pub ecmp_nexthops: u32,
    /// When the state began (RFC 3339, UTC).
    pub since: String,
    /// Healing bookkeeping.
    pub heal: HealStatus,
}

/// One peer of one VIP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerStatus {
    /// The peer as bgpd names it.
    pub peer: String,
    /// Session Established.
    pub established: bool,
    /// The VIP is in its advertised-routes.
    pub sent: bool,
}

/// Healing of one VIP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealStatus {
    /// Attempts in the current drift.
    pub attempts: u32,
    /// Last action decided.
    pub last_action: Option<String>,
    /// Its result.
    pub last_result: Option<String>,
}

impl StatusDoc {
    /// True when any VIP is in a drift class.
    pub fn drifting(&self) -> bool {
        self.vips.iter().any(|v| !v.state.is_consistent())
    }
}

/// Build the document. `zero_unix_ms`: wall-clock time of monotonic zero.
pub fn document(state: &State, frr_release: Option<String>, zero_unix_ms: u64) -> StatusDoc {
    let vips = state
        .vips
        .iter()
        .map(|((table, prefix), v)| VipStatus {
            prefix: *prefix,
            table: *table,
            state: v.state,
            kernel: v.kernel.is_some(),
            zebra: v.zebra,
            peers: state
                .peers
                .iter()
                .map(|p| PeerStatus {
                    peer: p.peer.clone(),
                    established: p.established,
                    sent: p.established && p.advertised.contains(prefix),
                })
                .collect(),
            ecmp_nexthops: v.kernel.as_ref().map_or(0, |k| k.nexthops),
            since: rfc3339(zero_unix_ms + v.since),
            heal: HealStatus {
                attempts: v.heal.attempts,
                last_action: v.heal.last_action.map(|a| a.name().to_string()),
                last_result: v.heal.last_result.clone(),
            },
        })
        .collect();
    StatusDoc {
        frr_release,
        mode: match state.config.mode {
            crate::reconcile::Mode::Observe => "observe",
            crate::reconcile::Mode::Repair => "repair",
        }
        .to_string(),
        ready: state.ready(),
        vips,
    }
}

/// RFC 3339 UTC with milliseconds, from Unix milliseconds.
pub fn rfc3339(unix_ms: Millis) -> String {
    let secs = unix_ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        unix_ms % 1000
    )
}

/// The table a person reads: one line per VIP.
pub fn render_table(doc: &StatusDoc) -> String {
    let mut out = format!(
        "FRR {}  mode {}  {}\n",
        doc.frr_release.as_deref().unwrap_or("unknown"),
        doc.mode,
        if doc.ready { "ready" } else { "NOT READY" }
    );
    let rows: Vec<[String; 8]> = doc
        .vips
        .iter()
        .map(|v| {
            let est = v.peers.iter().filter(|p| p.established).count();
            let sent = v.peers.iter().filter(|p| p.sent).count();
            [
                v.prefix.to_string(),
                v.table.to_string(),
                v.state.name().to_string(),
                yes_no(v.kernel),
                yes_no(v.zebra),
                format!("{sent}/{est}"),
                v.ecmp_nexthops.to_string(),
                match (&v.heal.last_action, &v.heal.last_result) {
                    (Some(a), Some(r)) => format!("{a}: {r} ({} tries)", v.heal.attempts),
                    (None, Some(r)) => r.clone(),
                    _ => "-".to_string(),
                },
            ]
        })
        .collect();
    let head = [
        "VIP",
        "TABLE",
        "STATE",
        "KERNEL",
        "ZEBRA",
        "SENT/PEERS",
        "ECMP",
        "HEAL",
    ];
    let mut width = head.map(str::len);
    for r in &rows {
        for (w, c) in width.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    let line = |cells: &[&str]| {
        let mut l: String = cells
            .iter()
            .zip(width)
            .map(|(c, w)| format!("{c:<w$}  "))
            .collect();
        l.truncate(l.trim_end().len());
        l + "\n"
    };
    out += &line(&head);
    for r in &rows {
        out += &line(&r.each_ref().map(String::as_str));
    }
    if doc.vips.is_empty() {
        out += "(no VIP in the watched tables and none configured)\n";
    }
    out
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// `ribbridge status`.
pub fn command(args: StatusArgs) -> ExitCode {
    let doc = if args.oneshot {
        match crate::daemon::oneshot(args.frr_dir.clone(), args.tables.clone()) {
            Ok(d) => d,
            Err(e) => return fail(&e),
        }
    } else {
        match fetch(&args.endpoint) {
            Ok(d) => d,
            Err(e) => return fail(&e),
        }
    };
    if args.json {
        match serde_json::to_string_pretty(&doc) {
            Ok(j) => println!("{j}"),
            Err(e) => return fail(&format!("cannot print the status as JSON: {e}")),
        }
    } else {
        print!("{}", render_table(&doc));
    }
    if doc.drifting() {
        ExitCode::from(EXIT_DRIFT)
    } else {
        ExitCode::SUCCESS
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("ribbridge status: {msg}");
    ExitCode::from(crate::cli::EXIT_ERROR)
}

/// GET `/status` from a running daemon (plain HTTP on loopback).
pub fn fetch(endpoint: &str) -> Result<StatusDoc, String> {
    let hostport = endpoint
        .strip_prefix("http://")
        .ok_or_else(|| format!("endpoint '{endpoint}' must start with http://"))?
        .trim_end_matches('/');
    let addr = hostport
        .to_socket_addrs()
        .map_err(|e| format!("endpoint '{endpoint}': {e}"))?
        .next()
        .ok_or_else(|| format!("endpoint '{endpoint}' resolves to no address"))?;
    let timeout = Duration::from_secs(5);
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| {
        format!("cannot reach ribbridge at {endpoint}: {e} (is `ribbridge run` running? or use --oneshot)")
    })?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    write!(
        s,
        "GET /status HTTP/1.1\r\nHost: {hostport}\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| format!("{endpoint}: {e}"))?;
    let mut body = Vec::new();
    s.take(16 << 20)
        .read_to_end(&mut body)
        .map_err(|e| format!("reading from {endpoint}: {e}"))?;
    let text = String::from_utf8_lossy(&body);
    let (head, json) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("{endpoint} answered something that is not HTTP"))?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(format!(
            "{endpoint}/status answered '{}'",
            head.lines().next().unwrap_or("")
        ));
    }
    serde_json::from_str(json)
        .map_err(|e| format!("{endpoint}/status is not a status document: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::{Config, Event, KernelFacts, PeerView, Redistribution, Release, step};

    #[test]
    fn rfc3339_is_exact() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_795_996_800_123), "2026-11-30T00:00:00.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn document_and_table_show_each_vip() {
        let vip: Prefix = "192.0.2.10/32".parse().expect("prefix");
        let mut s = State::new(Config::default(), 0);
        step(&mut s, Event::KernelSynced { routes: vec![] }, 0);
        step(
            &mut s,
            Event::ZebraUp {
                release: Release {
                    major: 10,
                    minor: 7,
                },
                redistribution: Redistribution::TableDirect,
            },
            0,
        );
        step(
            &mut s,
            Event::ZebraSynced {
                table: 198,
                prefixes: [vip].into(),
            },
            0,
        );
        step(
            &mut s,
            Event::KernelRoute {
                table: 198,
                prefix: vip,
                route: Some(KernelFacts {
                    protocol: 248,
                    nexthops: 2,
                }),
            },
            5,
        );
        step(
            &mut s,
            Event::BgpView {
                peers: vec![PeerView {
                    peer: "198.18.1.1".into(),
                    established: true,
                    advertised: [vip].into(),
                    up_ms: None,
                }],
            },
            100,
        );
        let doc = document(&s, Some("10.7".into()), 1_795_996_800_000);
        assert!(doc.ready && !doc.drifting());
        let v = &doc.vips[0];
        assert_eq!(
            (v.state, v.kernel, v.zebra, v.ecmp_nexthops),
            (Class::Advertised, true, true, 2)
        );
        assert_eq!(v.since, "2026-11-30T00:00:00.100Z");
        let json = serde_json::to_value(&doc).expect("json");
        assert_eq!(json["vips"][0]["state"], "advertised");
        assert_eq!(json["vips"][0]["peers"][0]["sent"], true);
        assert_eq!(
            serde_json::from_value::<StatusDoc>(json).expect("back"),
            doc
        );
        let table = render_table(&doc);
        assert!(
            table.contains("192.0.2.10/32  198    advertised  yes     yes    1/1"),
            "{table}"
        );
    }
}
