//! The kernel view: a lossless mirror of the watched routing tables over
//! rtnetlink (issue 3).
//!
//! Contract: at every moment the mirror equals what the kernel holds in the
//! watched tables, both families, ECMP legs resolved (inline,
//! `RTA_MULTIPATH`, or a nexthop object), or a re-dump is under way. The
//! daemon gets typed `KernelEvent`s on a bounded channel; every re-dump ends
//! with `Resynced { reason, routes }` carrying the whole route set, which is
//! authoritative (events dropped on a full channel are answered by one).
//!
//! Layers: `wire` and `nexthop` decode bytes (depending only on
//! `crate::model` and the plain data of `types`); `mirror` is pure state;
//! `watcher` is the I/O task; `heal` writes; `show` prints like iproute2.
//!
//! Why sockets of our own (netlink-sys + our framing) and not rtnetlink's
//! connection: the nexthop group (`RTNLGRP_NEXTHOP`) carries messages
//! netlink-packet-route cannot decode, and netlink-proto drops undecodable
//! messages with only a log line, so a mirror built on it could silently
//! miss a change. It also hides `NLM_F_DUMP_INTR` and drains into an
//! unbounded channel (a slow consumer grows memory instead of overrunning
//! visibly). With our own sockets, ENOBUFS, `NLM_F_DUMP_INTR` and any
//! undecodable message become counted re-dumps. Decoding straight into the
//! model is also 3.6-4.4x faster than netlink-packet-route's parse alone
//! (`benches/kernel_decode.rs`: 11.6-14.4 M against 3.2-3.3 M msg/s).
//!
//! Why two sockets: one joined to the groups (subscribed before any dump),
//! one for dumps only. With a single socket, a multicast flood stalls a
//! dump for good: the kernel continues a dump only from `recvmsg` when the
//! queue is at most half full, and a continuation refused for lack of room
//! is not retried until another message arrives, which after the flood
//! never happens (seen here: the mirror stayed stale after a flood).
//! Ordering is kept by draining the multicast socket before the dump (which
//! also ends a congestion episode: after an overrun the kernel drops
//! further notifications silently until the queue has been empty once) and
//! applying what arrived during the dump on top of it.

//!
//! Kernel behaviour this code relies on (measured on 6.18.44; each one has
//! a netns test or a golden capture):
//! - IPv4 routes via a device that goes down, or whose last IPv4 address is
//!   removed, vanish without `RTM_DELROUTE`; IPv6 routes get one. Nexthop
//!   objects on a downed device vanish without `RTM_DELNEXTHOP`. Carrier
//!   loss and return set and clear `linkdown` on routes without events, and
//!   a link dump shows the new link state before the routes change (the
//!   `RTM_NEWLINK` comes after them): every `RTM_NEWLINK` of a known link
//!   triggers a re-dump.
//! - An identical IPv4 `replace` emits nothing; an IPv6 one emits the route
//!   again. IPv6 accepts `realm` and drops it.
//! - IPv6 appends a multipath leg with an event listing the new leg first
//!   (the dump lists it last) and deletes one leg with a `RTM_DELROUTE`
//!   carrying only that leg.
//! - With `nexthop_compat_mode=1`, routes through a nexthop object carry the
//!   expanded legs, and replacing a group re-announces its routes. An IPv6
//!   route through a one-member group is still `RTA_MULTIPATH`; IPv4 puts a
//!   single leg inline.
//! - A strict dump of a table with no route of that family answers ENOENT;
//!   a dump whose reply cannot fit the receive buffer answers ENOBUFS in an
//!   `NLMSG_ERROR` (not as a socket error).
//! - Multicast notifications carry the port and sequence number of the
//!   process that made the change, so dump replies are told apart by our
//!   own port and sequence number, not by "non-zero".

use std::process::ExitCode;

pub mod heal;
pub mod mirror;
pub mod nexthop;
pub mod show;
pub mod types;
pub mod watcher;
pub mod wire;

pub use heal::KernelWriter;
pub use mirror::{Applied, Mirror};
pub use types::{
    Address, GroupMember, KernelEvent, Link, Nexthop, NexthopObject, ResyncReason, Route, RouteKey,
};
pub use watcher::{
    CountersSnapshot, KernelCounters, KernelError, KernelView, MirrorSnapshot, Watcher,
    WatcherConfig,
};

/// `ribbridge kernel` flags.
#[derive(Debug, clap::Args)]
pub struct KernelArgs {
    /// Routing table to print.
    #[arg(long, default_value_t = 198)]
    pub table: u32,
    /// JSON in the shape of `ip -json route show table N`.
    #[arg(long)]
    pub json: bool,
    /// Only one family: 4 or 6 (default: both, IPv4 first).
    #[arg(long, value_parser = clap::value_parser!(u8).range(4..=6))]
    pub family: Option<u8>,
}

/// `ribbridge kernel`: dump the table once through the watcher (the same
/// code path the daemon uses) and print the mirror.
pub fn command(args: KernelArgs) -> ExitCode {
    match print_table(&args) {
        Ok(out) => {
            println!("{out}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("ribbridge kernel: {e}");
            ExitCode::from(crate::cli::EXIT_ERROR)
        }
    }
}

fn print_table(args: &KernelArgs) -> Result<String, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let _enter = rt.enter();
    let config = WatcherConfig {
        tables: vec![args.table],
        ..WatcherConfig::default()
    };
    let mut w = Watcher::new(config).map_err(|e| e.to_string())?;
    rt.block_on(w.resync(ResyncReason::Startup))
        .map_err(|e| e.to_string())?;
    let snap = MirrorSnapshot::of(w.mirror());
    if args.json {
        let mut all = Vec::new();
        for v6 in [false, true] {
            if args.family.is_none() || args.family == Some(if v6 { 6 } else { 4 }) {
                if let serde_json::Value::Array(a) = show::ip_json(&snap, args.table, v6) {
                    all.extend(a);
                }
            }
        }
        serde_json::to_string(&all).map_err(|e| format!("cannot print JSON: {e}"))
    } else {
        let keep: Vec<Route> = snap
            .routes
            .into_iter()
            .filter(|r| match args.family {
                Some(4) => r.prefix.is_ipv4(),
                Some(6) => !r.prefix.is_ipv4(),
                _ => true,
            })
            .collect();
        Ok(show::ip_text(&snap.links, &keep, args.table)
            .trim_end()
            .to_string())
    }
}
