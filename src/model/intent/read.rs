//! bgpd's (and zebra's) running configuration (`show running-config`
//! on their vty sockets) read as an [`Intent`]: which
//! kernel tables are redistributed in which family, through which
//! route-map, the route-maps and prefix-lists those name, each neighbour's
//! outbound filter, and bgpd's route-map delay timer.
//!
//! Contract: pure text in, [`Intent`] out; lenient (a line it does not know
//! is skipped, never an error: the evaluator then calls what it needed
//! unknown). Only the default BGP instance is read: a `router bgp N vrf V`
//! block is skipped, as are address families other than IPv4 and IPv6
//! unicast.

use super::{Family, Intent, ListEntry, MapEntry, Match, OutFilter, PeerPolicy, Redistribute};
use crate::model::{Prefix, TableId};

/// Where a line sits.
#[derive(Clone, Copy, PartialEq)]
enum Block {
    Top,
    /// `router bgp N` (default instance), in this family (None: the
    /// instance's own lines, or a family not read).
    Bgp(Option<Family>),
    /// A VRF instance or another block whose lines are not read.
    Skipped,
    /// A route-map entry (the one being read).
    MapEntry,
}

/// bgpd's running configuration (`show running-config` on bgpd.vty) and,
/// where a redistribution goes through zebra's import (`redistribute table
/// N`), zebra's (`None`: not read, the imports are then assumed).
pub fn parse(bgpd: &str, zebra: Option<&str>) -> Intent {
    let mut intent = Intent::default();
    let mut block = Block::Top;
    let mut entry: Option<(String, MapEntry)> = None;
    for line in bgpd.lines() {
        let indented = line.starts_with(' ');
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        if !indented {
            if let Some((name, e)) = entry.take() {
                intent.route_maps.entry(name).or_default().push(e);
            }
            block = Block::Top;
            top_line(&mut intent, &w, &mut block, &mut entry);
            continue;
        }
        match block {
            Block::Top | Block::Skipped => {}
            Block::MapEntry => {
                if let Some((_, e)) = entry.as_mut() {
                    map_line(e, &w);
                }
            }
            Block::Bgp(family) => {
                if let Some(b) = bgp_line(&mut intent, &w, family) {
                    block = b;
                }
            }
        }
    }
    if let Some((name, e)) = entry.take() {
        intent.route_maps.entry(name).or_default().push(e);
    }
    for entries in intent.route_maps.values_mut() {
        entries.sort_by_key(|e| e.seq);
        entries.dedup_by_key(|e| e.seq);
    }
    for lists in [&mut intent.ip_prefix_lists, &mut intent.ipv6_prefix_lists] {
        for entries in lists.values_mut() {
            entries.sort_by_key(|e| e.seq);
        }
    }
    intent.imports = zebra.map(imports);
    intent
}

/// Whether zebra's configuration must be read too: some redistribution
/// goes through zebra's import (`redistribute table N`, FRR 8.4's way).
pub fn needs_zebra(intent: &Intent) -> bool {
    intent.redistributions.iter().any(|r| !r.direct)
}

fn top_line(
    intent: &mut Intent,
    w: &[&str],
    block: &mut Block,
    entry: &mut Option<(String, MapEntry)>,
) {
    match w {
        ["router", "bgp", _] => *block = Block::Bgp(None),
        ["router", ..] => *block = Block::Skipped,
        ["route-map", name, action @ ("permit" | "deny"), seq] => {
            if let Ok(seq) = seq.parse() {
                *entry = Some((
                    (*name).to_string(),
                    MapEntry {
                        seq,
                        permit: *action == "permit",
                        matches: Vec::new(),
                        flow: None,
                    },
                ));
                *block = Block::MapEntry;
            }
        }
        [afi @ ("ip" | "ipv6"), "prefix-list", name, rest @ ..] => {
            let (family, lists) = if *afi == "ip" {
                (Family::Ipv4, &mut intent.ip_prefix_lists)
            } else {
                (Family::Ipv6, &mut intent.ipv6_prefix_lists)
            };
            let Some(e) = list_entry(family, rest) else {
                return;
            };
            lists.entry((*name).to_string()).or_default().push(e);
        }
        ["bgp", "route-map", "delay-timer", n] => {
            if let Ok(secs) = n.parse::<u64>() {
                intent.route_map_delay_ms = secs.saturating_mul(1_000);
            }
        }
        _ => {}
    }
}

/// `seq N permit|deny PREFIX|any [ge N] [le N]` of a `family` list.
fn list_entry(family: Family, w: &[&str]) -> Option<ListEntry> {
    let ["seq", seq, action @ ("permit" | "deny"), what, rest @ ..] = w else {
        return None;
    };
    let (prefix, mut le) = if *what == "any" {
        let (addr, max): (std::net::IpAddr, u8) = match family {
            Family::Ipv4 => (std::net::Ipv4Addr::UNSPECIFIED.into(), 32),
            Family::Ipv6 => (std::net::Ipv6Addr::UNSPECIFIED.into(), 128),
        };
        (Prefix::new(addr, 0).ok()?, Some(max))
    } else {
        (what.parse::<Prefix>().ok()?, None)
    };
    let mut ge = None;
    let mut it = rest.iter();
    while let Some(k) = it.next() {
        let v = Some(it.next()?.parse::<u8>().ok()?);
        match *k {
            "ge" => ge = v,
            "le" => le = v,
            _ => return None,
        }
    }
    Some(ListEntry {
        seq: seq.parse().ok()?,
        permit: *action == "permit",
        prefix,
        ge,
        le,
    })
}

/// A line inside `router bgp N`; returns the block it opens, if any.
fn bgp_line(intent: &mut Intent, w: &[&str], family: Option<Family>) -> Option<Block> {
    match w {
        ["address-family", "ipv4", "unicast"] => return Some(Block::Bgp(Some(Family::Ipv4))),
        ["address-family", "ipv6", "unicast"] => return Some(Block::Bgp(Some(Family::Ipv6))),
        ["address-family", ..] => return Some(Block::Bgp(None)),
        ["exit-address-family"] => return Some(Block::Bgp(None)),
        [
            "redistribute",
            kind @ ("table" | "table-direct"),
            n,
            rest @ ..,
        ] => {
            let (Some(family), Ok(table)) = (family, n.parse::<TableId>()) else {
                return None;
            };
            let route_map = match rest {
                ["route-map", m, ..] => Some((*m).to_string()),
                _ => None,
            };
            intent.redistributions.push(Redistribute {
                family,
                table,
                direct: *kind == "table-direct",
                route_map,
            });
        }
        ["neighbor", peer, "peer-group", group] => {
            peer_of(intent, peer).group = Some((*group).to_string());
        }
        ["neighbor", peer, "peer-group"] | ["neighbor", peer, "remote-as", ..] => {
            peer_of(intent, peer);
        }
        ["neighbor", peer, "route-map", m, "out"] => {
            if let Some(f) = family {
                let out = &mut peer_of(intent, peer).out;
                match out.get(&f) {
                    Some(OutFilter::Other(_)) => {}
                    _ => {
                        out.insert(f, OutFilter::RouteMap((*m).to_string()));
                    }
                }
            }
        }
        [
            "neighbor",
            peer,
            kind @ ("prefix-list" | "filter-list" | "distribute-list"),
            _,
            "out",
        ] => {
            if let Some(f) = family {
                peer_of(intent, peer)
                    .out
                    .insert(f, OutFilter::Other(format!("{kind} out")));
            }
        }
        _ => {}
    }
    None
}

fn peer_of<'a>(intent: &'a mut Intent, peer: &str) -> &'a mut PeerPolicy {
    intent.peers.entry(peer.to_string()).or_default()
}

/// A line inside a route-map entry.
fn map_line(e: &mut MapEntry, w: &[&str]) {
    match w {
        [
            "match",
            afi @ ("ip" | "ipv6"),
            "address",
            "prefix-list",
            name,
        ] => {
            e.matches.push(Match::PrefixList {
                family: if *afi == "ip" {
                    Family::Ipv4
                } else {
                    Family::Ipv6
                },
                name: (*name).to_string(),
            });
        }
        ["match", ..] => e.matches.push(Match::Other(w.join(" "))),
        ["on-match" | "continue" | "call", ..] => e.flow = Some(w.join(" ")),
        ["set", ..] | ["description", ..] | ["exit"] => {}
        // A clause this reader does not know: treated as a match it
        // cannot evaluate, so the entry is unknown when reached.
        _ => e.matches.push(Match::Other(w.join(" "))),
    }
}

/// zebra's `ip|ipv6 import-table N` lines (default VRF) in its running
/// configuration.
pub fn imports(zebra: &str) -> Vec<(Family, TableId)> {
    let mut out = Vec::new();
    let mut in_vrf = false;
    for line in zebra.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["vrf", ..] => in_vrf = true,
            ["exit-vrf"] => in_vrf = false,
            [afi @ ("ip" | "ipv6"), "import-table", n, ..] if !in_vrf => {
                if let Ok(t) = n.parse() {
                    let f = if *afi == "ip" {
                        Family::Ipv4
                    } else {
                        Family::Ipv6
                    };
                    out.push((f, t));
                }
            }
            _ => {}
        }
    }
    out
}
