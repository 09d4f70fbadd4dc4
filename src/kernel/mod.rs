//! The kernel view: a lossless mirror of the watched routing tables over
//! rtnetlink.
//!
//! Contract: at every moment the mirror equals what the kernel holds in the
//! watched tables, both families, ECMP legs resolved (inline,
//! `RTA_MULTIPATH`, or a nexthop object), or a re-dump is under way. The
//! daemon gets typed `KernelEvent`s on a bounded channel; every re-dump ends
//! with `Resynced { reason, routes }`; at startup and after events were
//! dropped on a full channel it carries the whole route set, which is
//! authoritative, and otherwise the differences before it were the change.
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
//! model is also faster than netlink-packet-route's parse alone
//! (`benches/kernel_decode.rs`; the figures are in docs/PERFORMANCE.md).
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

pub mod heal;
pub mod mirror;
pub mod nexthop;
pub mod show;
pub mod types;
pub mod watcher;
pub mod wire;

use crate::model::{Family, UnknownWord};
pub use heal::KernelWriter;
pub use mirror::{Applied, Mirror};
pub use types::{
    Address, GroupMember, KernelEvent, Link, Nexthop, NexthopObject, ResyncReason, Route, RouteKey,
    RouteSet,
};
pub use watcher::{
    CountersSnapshot, KernelCounters, KernelError, KernelView, MirrorSnapshot, ROUTE_QUERY_CHANNEL,
    RouteLookup, RouteQuery, Watcher, WatcherConfig,
};

/// A family as iproute2 spells it on its command line: `4` or `inet`, `6`
/// or `inet6`.
pub fn family_word(s: &str) -> Result<Family, UnknownWord> {
    match s {
        "4" | "inet" => Ok(Family::Ipv4),
        "6" | "inet6" => Ok(Family::Ipv6),
        _ => Err(UnknownWord {
            word: s.to_string(),
            what: "family",
            allowed: "4 or 6",
        }),
    }
}

/// What [`show_table`] prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowInput {
    /// The routing table.
    pub table: crate::model::TableId,
    /// One family, or both (IPv4 first).
    pub family: Option<Family>,
    /// `ip -json route` shape instead of `ip route` text.
    pub json: bool,
}

/// Dump a table once through the watcher (the same code path the daemon
/// uses) and print the mirror as `ip [-json] route show table N` does.
pub async fn show_table(input: &ShowInput) -> Result<String, KernelError> {
    let config = WatcherConfig {
        tables: vec![input.table],
        ..WatcherConfig::default()
    };
    let mut w = Watcher::new(config)?;
    w.resync(ResyncReason::Startup).await?;
    let snap = MirrorSnapshot::of(w.mirror());
    let wanted = |v6: bool| match input.family {
        None => true,
        Some(Family::Ipv4) => !v6,
        Some(Family::Ipv6) => v6,
    };
    if input.json {
        let mut all = Vec::new();
        for v6 in [false, true].into_iter().filter(|v6| wanted(*v6)) {
            if let serde_json::Value::Array(a) = show::ip_json(&snap, input.table, v6) {
                all.extend(a);
            }
        }
        Ok(serde_json::Value::Array(all).to_string())
    } else {
        let mut keep: Vec<Route> = snap
            .routes
            .into_iter()
            .filter(|r| wanted(!r.prefix.is_ipv4()))
            .collect();
        // IPv4 first, like the JSON form.
        keep.sort_by_key(|r| !r.prefix.is_ipv4());
        Ok(show::ip_text(&snap.links, &keep, input.table)
            .trim_end()
            .to_string())
    }
}
