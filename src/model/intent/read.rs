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
    /// `router bgp ASN` (default instance), in this family (None: the
    /// instance's own lines, or a family not read).
    Bgp(u32, Option<Family>),
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
            Block::Bgp(asn, family) => {
                if let Some(f) = bgp_line(&mut intent, &w, asn, family) {
                    block = Block::Bgp(asn, f);
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
        ["router", "bgp", asn] => {
            *block = match asn.parse() {
                Ok(asn) => Block::Bgp(asn, None),
                Err(_) => Block::Skipped,
            }
        }
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
                        description: None,
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

/// A line inside `router bgp ASN`; returns the family block it opens or
/// closes, if it does.
fn bgp_line(
    intent: &mut Intent,
    w: &[&str],
    asn: u32,
    family: Option<Family>,
) -> Option<Option<Family>> {
    match w {
        ["address-family", "ipv4", "unicast"] => return Some(Some(Family::Ipv4)),
        ["address-family", "ipv6", "unicast"] => return Some(Some(Family::Ipv6)),
        ["address-family", ..] | ["exit-address-family"] => return Some(None),
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
                asn,
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
        ["description", rest @ ..] => e.description = Some(rest.join(" ")),
        ["set", ..] | ["exit"] => {}
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

#[cfg(test)]
mod tests {
    //! The reader on each release's captured running configuration
    //! (`tests/data/frr/`): the lab's own rendering and frr-k8s's shape.

    use super::*;
    use crate::model::intent::Verdict;

    fn p(s: &str) -> Prefix {
        s.parse().expect("prefix")
    }

    /// A capture: text (a vty reply's trailing NUL and status bytes cut).
    fn capture(rel: &str) -> String {
        let path = format!("{}/tests/data/frr/{rel}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
        String::from_utf8_lossy(&bytes[..end]).into_owned()
    }

    const DENY_20: Verdict<'static> = Verdict::Deny {
        route_map: "KUBE-VIP-ROUTES-V4",
        seq: Some(20),
    };

    /// The lab's frr-k8s profile is OpenShift's day-2 shape: frr-k8s's
    /// per-peer `<peer>-out` route-maps advertise nothing (their prefix-lists
    /// deny any), and the raw configuration brings the VIPs out through
    /// `KUBE-VIP-ROUTES-V4|V6` on the redistribution and `<peer>-out permit
    /// 100` on the same prefix-list, one session per family.
    #[test]
    fn frr_k8s_day2_shape_on_every_release() {
        for (dir, direct) in [
            ("frr-8.4.4", false),
            ("frr-10.3", true),
            ("frr-10.7.1", true),
        ] {
            let bgpd = capture(&format!("{dir}/bgpd-running-config-frrk8s.txt"));
            let zebra =
                (!direct).then(|| capture(&format!("{dir}/zebra-running-config-frrk8s.txt")));
            let i = parse(&bgpd, zebra.as_deref());
            let r = i
                .redistribution(198, Family::Ipv4)
                .unwrap_or_else(|| panic!("{dir}: {i:?}"));
            assert_eq!(r.direct, direct, "{dir}");
            assert_eq!(r.route_map.as_deref(), Some("KUBE-VIP-ROUTES-V4"), "{dir}");
            assert_eq!(needs_zebra(&i), !direct, "{dir}");
            let vip = p("192.0.2.10/32");
            let other = p("192.0.2.77/32");
            assert_eq!(i.redistributed(198, &vip), Some(Verdict::Permit), "{dir}");
            assert_eq!(i.redistributed(198, &other), Some(DENY_20), "{dir}");
            // The IPv4 peer's outbound route-map: frr-k8s's own entries
            // (permit 1 and 2 on prefix-lists that deny any) never match;
            // the VIP falls through to the raw configuration's permit 100,
            // any other prefix to the implicit deny.
            assert_eq!(i.sent_to("198.18.1.1", &vip), Verdict::Permit, "{dir}");
            let implicit = Verdict::Deny {
                route_map: "198.18.1.1-out",
                seq: None,
            };
            assert_eq!(i.sent_to("198.18.1.1", &other), implicit, "{dir}");
            let mut without = i.clone();
            without
                .route_maps
                .get_mut("198.18.1.1-out")
                .unwrap_or_else(|| panic!("{dir}: no 198.18.1.1-out"))
                .retain(|e| e.seq != 100);
            assert_eq!(
                without.sent_to("198.18.1.1", &vip),
                implicit,
                "{dir}: frr-k8s's entries alone send nothing"
            );
            assert_eq!(i.route_map_delay_ms, 5_000, "{dir}: the default timer");
            let drained = capture(&format!("{dir}/bgpd-running-config-frrk8s-drained.txt"));
            let d = parse(&drained, zebra.as_deref());
            assert_eq!(
                d.redistributed(198, &vip),
                Some(Verdict::Deny {
                    route_map: "KUBE-VIP-ROUTES-V4",
                    seq: Some(1)
                }),
                "{dir}: the drain's entry denies first"
            );
            // The outbound permit stays: the drain is the redistribution's.
            assert_eq!(d.sent_to("198.18.1.1", &vip), Verdict::Permit, "{dir}");
        }
    }

    /// 10.x redistributes IPv6 too: the IPv6 VIP the same way, through
    /// `KUBE-VIP-ROUTES-V6` and the IPv6 peer's permit 100. (8.4 has no
    /// IPv6 import: its captures redistribute IPv4 only.)
    #[test]
    fn frr_k8s_day2_shape_ipv6_on_10() {
        for dir in ["frr-10.3", "frr-10.7.1"] {
            let i = parse(
                &capture(&format!("{dir}/bgpd-running-config-frrk8s.txt")),
                None,
            );
            let vip = p("2001:db8::10/128");
            let other = p("2001:db8::77/128");
            assert_eq!(i.redistributed(198, &vip), Some(Verdict::Permit), "{dir}");
            assert_eq!(
                i.redistributed(198, &other),
                Some(Verdict::Deny {
                    route_map: "KUBE-VIP-ROUTES-V6",
                    seq: Some(20)
                }),
                "{dir}"
            );
            assert_eq!(i.sent_to("fdbb:0:0:1::1", &vip), Verdict::Permit, "{dir}");
            assert_eq!(
                i.sent_to("fdbb:0:0:1::1", &other),
                Verdict::Deny {
                    route_map: "fdbb:0:0:1::1-out",
                    seq: None
                },
                "{dir}"
            );
            let d = parse(
                &capture(&format!("{dir}/bgpd-running-config-frrk8s-drained.txt")),
                None,
            );
            assert_eq!(
                d.redistributed(198, &vip),
                Some(Verdict::Deny {
                    route_map: "KUBE-VIP-ROUTES-V6",
                    seq: Some(1)
                }),
                "{dir}: drained in IPv6 too"
            );
        }
    }

    #[test]
    fn lab_rendering_of_8_4_and_its_import() {
        let bgpd = capture("frr-8.4.4/vty-bgpd-running-config.bin");
        let i = parse(&bgpd, None);
        assert!(needs_zebra(&i));
        // zebra's configuration not read: the import is assumed.
        assert_eq!(
            i.redistributed(198, &p("192.0.2.10/32")),
            Some(Verdict::Permit)
        );
        assert_eq!(
            i.redistributed(198, &p("192.0.2.11/32")),
            Some(Verdict::Deny {
                route_map: "KUBE-VIP-ROUTES-V4",
                seq: Some(20)
            })
        );
        // 8.4's lab redistributes IPv4 only.
        assert_eq!(i.redistributed(198, &p("2001:db8::10/128")), None);
        // zebra read, without the import: nothing is redistributed.
        let i = parse(&bgpd, Some("frr version 8.4.4\n!\nend\n"));
        assert_eq!(i.redistributed(198, &p("192.0.2.10/32")), None);
        let i = parse(&bgpd, Some("ip import-table 198\n"));
        assert!(i.redistributed(198, &p("192.0.2.10/32")).is_some());
    }

    #[test]
    fn vrf_instances_and_other_families_are_not_read() {
        let text = "router bgp 1 vrf RED\n address-family ipv4 unicast\n  \
redistribute table-direct 198\n exit-address-family\nexit\n\
router bgp 1\n address-family l2vpn evpn\n  redistribute table-direct 198\n exit-address-family\nexit\n";
        assert!(parse(text, None).redistributions.is_empty());
    }

    #[test]
    fn unknown_lines_never_fail_and_clauses_are_kept() {
        // (A line continuation eats the next line's indentation: the
        // entry's clauses stay on the first line.)
        let text = "route-map M permit 5\n match tag 7\n on-match next\n set metric 5\n frobnicate\n\
exit\nip prefix-list L seq x permit 1.2.3.4/32\n\
ip prefix-list L seq 5 permit 10.0.0.0/8 ge 24 le 32\nipv6 prefix-list L6 seq 5 permit any\n\
bgp route-map delay-timer 0\n";
        let i = parse(text, None);
        let m = &i.route_maps["M"][0];
        assert_eq!(m.matches.len(), 2, "{m:?}");
        assert_eq!(m.flow.as_deref(), Some("on-match next"));
        assert_eq!(i.ip_prefix_lists["L"].len(), 1);
        let e = &i.ip_prefix_lists["L"][0];
        assert_eq!((e.ge, e.le), (Some(24), Some(32)));
        assert!(i.ipv6_prefix_lists["L6"][0].covers(&p("2001:db8::1/128")));
        assert_eq!(i.route_map_delay_ms, 0);
    }
}
