//! bgpd's (and zebra's) running configuration (`show running-config`
//! on their vty sockets) read as an [`Intent`]: which
//! kernel tables are redistributed in which family, through which
//! route-map, the route-maps and the lists those name (prefix-lists,
//! access-lists, community-lists, AS-path access-lists), each neighbour's
//! outbound filters, the instance settings the outbound checks read, the
//! release (`frr version`), and bgpd's route-map delay timer.
//!
//! Contract: pure text in, [`Intent`] out; lenient (a line it does not know
//! is skipped, never an error: the evaluator then calls what it needed
//! unknown; inside a route-map entry, such a line makes the entry unknown).
//! Only the default BGP instance is read: a `router bgp N vrf V` block is
//! skipped, as are address families other than IPv4 and IPv6 unicast.

use std::net::{IpAddr, Ipv4Addr};

use super::attrs::{parse_communities, parse_large};
use super::{
    AccessEntry, AccessRule, Aggregate, AsPathEntry, CommunityEntry, CommunityKind, Family, Intent,
    ListEntry, ListMode, MapEntry, Match, OnMatch, Redistribute, RemoteAs, Set,
};
use crate::model::{Prefix, Release, TableId};

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

/// What the reading collects beside the intent.
#[derive(Default)]
struct Reading {
    /// `frr defaults PROFILE`.
    profile: Option<String>,
    /// `[no] bgp ebgp-requires-policy` of the instance.
    requires_policy: Option<bool>,
}

/// bgpd's running configuration (`show running-config` on bgpd.vty) and,
/// where a redistribution goes through zebra's import (`redistribute table
/// N`), zebra's (`None`: not read, the imports are then assumed).
pub fn parse(bgpd: &str, zebra: Option<&str>) -> Intent {
    let mut intent = Intent::default();
    let mut reading = Reading::default();
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
            top_line(&mut intent, &mut reading, &w, &mut block, &mut entry);
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
                if let Some(f) = bgp_line(&mut intent, &mut reading, &w, asn, family) {
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
        lists.values_mut().for_each(|l| l.sort_by_key(|e| e.seq));
    }
    for lists in [&mut intent.lists.ip_access, &mut intent.lists.ipv6_access] {
        lists.values_mut().for_each(|l| l.sort_by_key(|e| e.seq));
    }
    for lists in [
        &mut intent.lists.community,
        &mut intent.lists.large_community,
    ] {
        lists.values_mut().for_each(|l| l.sort_by_key(|e| e.seq));
    }
    intent
        .lists
        .as_path
        .values_mut()
        .for_each(|l| l.sort_by_key(|e| e.seq));
    // bgpd/bgp_vty.c, `FRR_CFG_DEFAULT_BOOL(BGP_EBGP_REQUIRES_POLICY, ...)`:
    // off in the datacenter profile and for a configuration of a release
    // before 7.4, on otherwise; the running configuration prints the line
    // only when it differs.
    let default = match reading.profile.as_deref() {
        Some("datacenter") => Some(false),
        _ if intent.release.is_some_and(|r| r < Release::new(7, 4)) => Some(false),
        Some(_) => Some(true),
        None => None,
    };
    intent.bgp.ebgp_requires_policy = reading.requires_policy.or(default);
    intent.imports = zebra.map(imports);
    intent
}

/// Whether zebra's configuration must be read too: some redistribution
/// goes through zebra's import (`redistribute table N`, FRR 8.4's way).
pub fn needs_zebra(intent: &Intent) -> bool {
    intent.redistributions.iter().any(|r| !r.direct)
}

/// Whether zebra was built with realm support, from its `show version`
/// ("configured with:" and the configure options): zebra/rt_netlink.c
/// reads a kernel route's realm into its tag only under SUPPORT_REALMS,
/// which configure defines for `--enable-realms`. None: the text does not
/// list the options.
pub fn realms_from_show_version(text: &str) -> Option<bool> {
    let (_, options) = text.split_once("configured with:")?;
    Some(options.split_whitespace().any(|o| {
        matches!(
            o.trim_matches('\''),
            "--enable-realms" | "--enable-realms=yes"
        )
    }))
}

fn top_line(
    intent: &mut Intent,
    reading: &mut Reading,
    w: &[&str],
    block: &mut Block,
    entry: &mut Option<(String, MapEntry)>,
) {
    match w {
        ["frr", "version", v, ..] => intent.release = Release::parse(v),
        ["frr", "defaults", p] => reading.profile = Some((*p).to_string()),
        ["router", "bgp", asn] => {
            *block = match asn.parse() {
                Ok(asn) => {
                    intent.bgp.asn.get_or_insert(asn);
                    Block::Bgp(asn, None)
                }
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
                        sets: Vec::new(),
                        call: None,
                        on_match: None,
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
            let list = lists.entry((*name).to_string());
            if let ["description", ..] = rest {
                // A list with only a description exists, without entries.
                list.or_default();
            } else if let Some(e) = list_entry(family, rest) {
                list.or_default().push(e);
            }
        }
        ["access-list", name, rest @ ..] => {
            access_line(&mut intent.lists.ip_access, Family::Ipv4, name, rest)
        }
        ["ipv6", "access-list", name, rest @ ..] => {
            access_line(&mut intent.lists.ipv6_access, Family::Ipv6, name, rest)
        }
        [
            "bgp",
            kind @ ("community-list" | "large-community-list"),
            rest @ ..,
        ] => {
            let large = *kind == "large-community-list";
            if let Some((name, e)) = community_line(rest, large) {
                let lists = if large {
                    &mut intent.lists.large_community
                } else {
                    &mut intent.lists.community
                };
                lists.entry(name).or_default().push(e);
            }
        }
        ["bgp", "as-path", "access-list", name, rest @ ..] => {
            let (seq, rest) = match rest {
                ["seq", n, rest @ ..] => (n.parse().ok(), rest),
                _ => (Some(0), rest),
            };
            if let (Some(seq), [action @ ("permit" | "deny"), re @ ..]) = (seq, rest) {
                intent
                    .lists
                    .as_path
                    .entry((*name).to_string())
                    .or_default()
                    .push(AsPathEntry {
                        seq,
                        permit: *action == "permit",
                        regex: re.join(" "),
                    });
            }
        }
        ["bgp", "graceful-shutdown"] => intent.bgp.graceful_shutdown = true,
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
        let (addr, max): (IpAddr, u8) = match family {
            Family::Ipv4 => (Ipv4Addr::UNSPECIFIED.into(), 32),
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

/// `access-list NAME seq N permit|deny ...` (lib/filter_cli.c,
/// `access_list_show`: the zebra form `PREFIX [exact-match]` or `any`; the
/// Cisco forms `A.B.C.D` for a host, `A.B.C.D W.W.W.W`, `ip ...` extended)
/// and `access-list NAME remark ...` (the list exists, entries or not).
fn access_line(
    lists: &mut std::collections::BTreeMap<String, Vec<AccessEntry>>,
    family: Family,
    name: &str,
    w: &[&str],
) {
    let list = lists.entry(name.to_string()).or_default();
    let ["seq", seq, action @ ("permit" | "deny"), rest @ ..] = w else {
        return;
    };
    let Ok(seq) = seq.parse() else {
        return;
    };
    let zebra = |s: &str, exact| {
        s.parse::<Prefix>()
            .ok()
            .filter(|p| Family::of(p) == family && s.contains('/'))
            .map(|prefix| AccessRule::Prefix { prefix, exact })
    };
    // The Cisco forms are IPv4 only on 8.4; the IPv6 ones of later
    // releases stay unparsed.
    let v4 = |s: &str| {
        (family == Family::Ipv4)
            .then(|| s.parse::<Ipv4Addr>().ok())
            .flatten()
    };
    let rule = match rest {
        ["any"] => Some(AccessRule::Any),
        [p, "exact-match"] => zebra(p, true),
        [p] => zebra(p, false).or_else(|| v4(p).map(AccessRule::Host)),
        ["host", a] => v4(a).map(AccessRule::Host),
        [a, m] => v4(a)
            .zip(v4(m))
            .map(|(addr, wildcard)| AccessRule::Network { addr, wildcard }),
        _ => None,
    }
    .unwrap_or_else(|| AccessRule::Unparsed(rest.join(" ")));
    list.push(AccessEntry {
        seq,
        permit: *action == "permit",
        rule,
    });
}

/// `bgp [large-]community-list standard|expanded NAME seq N permit|deny
/// ...` or `bgp [large-]community-list NUMBER seq N ...` (1-99 standard,
/// 100-500 expanded): bgpd/bgp_vty.c, `community_list_config_write`.
fn community_line(w: &[&str], large: bool) -> Option<(String, CommunityEntry)> {
    let (expanded, name, rest) = match w {
        [style @ ("standard" | "expanded"), name, rest @ ..] => (*style == "expanded", *name, rest),
        [num, rest @ ..] => match num.parse::<u32>().ok()? {
            1..=99 => (false, *num, rest),
            100..=500 => (true, *num, rest),
            _ => return None,
        },
        _ => return None,
    };
    let ["seq", seq, action @ ("permit" | "deny"), vals @ ..] = rest else {
        return None;
    };
    let text = vals.join(" ");
    let kind = if expanded {
        CommunityKind::Expanded(text)
    } else if large {
        parse_large(&text).map_or(CommunityKind::Unparsed(text), |v| {
            CommunityKind::Large(v.into_iter().collect())
        })
    } else {
        parse_communities(&text).map_or(CommunityKind::Unparsed(text), |v| {
            CommunityKind::Standard(v.into_iter().collect())
        })
    };
    Some((
        name.to_string(),
        CommunityEntry {
            seq: seq.parse().ok()?,
            permit: *action == "permit",
            kind,
        },
    ))
}

/// A line inside `router bgp ASN`; returns the family block it opens or
/// closes, if it does.
fn bgp_line(
    intent: &mut Intent,
    reading: &mut Reading,
    w: &[&str],
    asn: u32,
    family: Option<Family>,
) -> Option<Option<Family>> {
    match w {
        ["address-family", "ipv4", "unicast"] => return Some(Some(Family::Ipv4)),
        ["address-family", "ipv6", "unicast"] => return Some(Some(Family::Ipv6)),
        ["address-family", ..] | ["exit-address-family"] => return Some(None),
        ["bgp", "ebgp-requires-policy"] => reading.requires_policy = Some(true),
        ["no", "bgp", "ebgp-requires-policy"] => reading.requires_policy = Some(false),
        ["bgp", "confederation", ..] => intent.bgp.confederation = true,
        ["bgp", "graceful-shutdown"] => intent.bgp.graceful_shutdown = true,
        [
            "redistribute",
            kind @ ("table" | "table-direct"),
            n,
            rest @ ..,
        ] => {
            let (Some(family), Ok(table)) = (family, n.parse::<TableId>()) else {
                return None;
            };
            // `redistribute table-direct N [metric M] [route-map R]`: the
            // metric, when set, comes first.
            let route_map = rest
                .windows(2)
                .find(|p| p[0] == "route-map")
                .map(|p| p[1].to_string());
            intent.redistributions.push(Redistribute {
                asn,
                family,
                table,
                direct: *kind == "table-direct",
                route_map,
            });
        }
        ["aggregate-address", p, rest @ ..] => {
            if let (Some(family), Ok(prefix)) = (family, p.parse::<Prefix>()) {
                intent.bgp.aggregates.push(Aggregate {
                    family,
                    prefix,
                    suppresses: rest
                        .iter()
                        .any(|o| matches!(*o, "summary-only" | "suppress-map")),
                });
            }
        }
        ["neighbor", peer, rest @ ..] => neighbor_line(intent, peer, rest, family),
        _ => {}
    }
    None
}

/// `neighbor X ...` inside `router bgp ASN` (in `family`, if any).
fn neighbor_line(intent: &mut Intent, peer: &str, w: &[&str], family: Option<Family>) {
    let p = intent.peers.entry(peer.to_string()).or_default();
    let w = match w {
        ["interface", rest @ ..] => rest,
        _ => w,
    };
    match w {
        ["peer-group", group] => p.group = Some((*group).to_string()),
        ["remote-as", how, ..] => {
            p.remote_as = Some(match *how {
                "internal" => RemoteAs::Internal,
                "external" => RemoteAs::External,
                n => n.parse().map_or(RemoteAs::Auto, RemoteAs::Number),
            });
        }
        ["local-as", ..] => p.local_as = true,
        ["oad"] => p.oad = true,
        _ => {
            let Some(f) = family else {
                return;
            };
            let out = p.out.entry(f).or_default();
            match w {
                ["route-map", m, "out"] => out.route_map = Some((*m).to_string()),
                ["prefix-list", l, "out"] => out.prefix_list = Some((*l).to_string()),
                ["distribute-list", l, "out"] => out.distribute_list = Some((*l).to_string()),
                ["filter-list", l, "out"] => out.filter_list = Some((*l).to_string()),
                [
                    "unsuppress-map" | "advertise-map" | "maximum-prefix-out" | "soo",
                    ..,
                ]
                | ["capability", "orf", ..] => out.options.push(w.join(" ")),
                _ => {}
            }
            if *out == Default::default() {
                p.out.remove(&f);
            }
        }
    }
}

/// A line inside a route-map entry.
fn map_line(e: &mut MapEntry, w: &[&str]) {
    let family = |afi: &str| {
        if afi == "ip" {
            Family::Ipv4
        } else {
            Family::Ipv6
        }
    };
    let mode = |m: &[&str]| match m {
        [] => Some(ListMode::Subset),
        ["exact-match"] => Some(ListMode::Exact),
        ["any"] => Some(ListMode::Any),
        _ => None,
    };
    let tag = |t: &str| match t {
        "untagged" => Some(0),
        t => t.parse().ok(),
    };
    let m = match w {
        [
            "match",
            afi @ ("ip" | "ipv6"),
            "address",
            "prefix-list",
            name,
        ] => Some(Match::PrefixList {
            family: family(afi),
            name: (*name).to_string(),
        }),
        ["match", afi @ ("ip" | "ipv6"), "address", name] => Some(Match::AccessList {
            family: family(afi),
            name: (*name).to_string(),
        }),
        ["match", "tag", t] => tag(t).map(Match::Tag),
        ["match", "source-protocol", p] => Some(Match::SourceProtocol((*p).to_string())),
        ["match", "community", name, how @ ..] => mode(how).map(|mode| Match::Community {
            name: (*name).to_string(),
            mode,
        }),
        ["match", "large-community", name, how @ ..] => {
            mode(how).map(|mode| Match::LargeCommunity {
                name: (*name).to_string(),
                mode,
            })
        }
        ["on-match", "next"] => {
            e.on_match = Some(OnMatch::Next);
            return;
        }
        ["on-match", "goto", n] | ["continue", n] if n.parse::<u32>().is_ok() => {
            e.on_match = n.parse().ok().map(OnMatch::Goto);
            return;
        }
        ["call", name] => {
            e.call = Some((*name).to_string());
            return;
        }
        ["set", rest @ ..] => {
            if let Some(s) = set_line(rest, tag) {
                e.sets.push(s);
            }
            return;
        }
        ["description", rest @ ..] => {
            e.description = Some(rest.join(" "));
            return;
        }
        ["exit"] => return,
        _ => None,
    };
    // A clause this reader does not know: kept as written, a match it
    // cannot evaluate, so the entry is unknown when reached.
    e.matches
        .push(m.unwrap_or_else(|| Match::Other(w.join(" "))));
}

/// A `set` clause that changes an attribute a match reads (None: any
/// other).
fn set_line(w: &[&str], tag: impl Fn(&str) -> Option<u32>) -> Option<Set> {
    Some(match w {
        ["tag", t] => Set::Tag(tag(t)?),
        ["community", rest @ ..] => Set::Community(rest.join(" ")),
        ["comm-list", name, "delete"] => Set::CommListDelete((*name).to_string()),
        ["large-community", rest @ ..] => Set::LargeCommunity(rest.join(" ")),
        ["large-comm-list", name, "delete"] => Set::LargeCommListDelete((*name).to_string()),
        ["as-path", rest @ ..] => Set::AsPath(rest.join(" ")),
        _ => return None,
    })
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
    use crate::model::intent::{
        AccessRule, CommunityKind, Denier, FilterKind, ListMode, OnMatch, Verdict,
    };

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
        by: Denier::Filter(FilterKind::RouteMap),
    };

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
                by: Denier::Filter(FilterKind::RouteMap),
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
                    seq: Some(1),
                    by: Denier::Filter(FilterKind::RouteMap),
                }),
                "{dir}: the drain's entry denies first"
            );
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
                    seq: Some(20),
                    by: Denier::Filter(FilterKind::RouteMap),
                }),
                "{dir}"
            );
            assert_eq!(i.sent_to("fdbb:0:0:1::1", &vip), Verdict::Permit, "{dir}");
            assert_eq!(
                i.sent_to("fdbb:0:0:1::1", &other),
                Verdict::Deny {
                    route_map: "fdbb:0:0:1::1-out",
                    seq: None,
                    by: Denier::Filter(FilterKind::RouteMap),
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
                    seq: Some(1),
                    by: Denier::Filter(FilterKind::RouteMap),
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
                seq: Some(20),
                by: Denier::Filter(FilterKind::RouteMap),
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
        let text = "route-map M permit 5\n match tag 7\n match metric 5\n on-match next\n set metric 5\n frobnicate\n\
exit\nip prefix-list L seq x permit 1.2.3.4/32\n\
ip prefix-list L seq 5 permit 10.0.0.0/8 ge 24 le 32\nipv6 prefix-list L6 seq 5 permit any\n\
bgp route-map delay-timer 0\n";
        let i = parse(text, None);
        let m = &i.route_maps["M"][0];
        assert_eq!(
            m.matches,
            [
                Match::Tag(7),
                Match::Other("match metric 5".into()),
                Match::Other("frobnicate".into())
            ],
            "{m:?}"
        );
        assert_eq!(m.on_match, Some(OnMatch::Next));
        assert!(
            m.sets.is_empty(),
            "set metric changes nothing a match reads"
        );
        assert_eq!(i.ip_prefix_lists["L"].len(), 1);
        let e = &i.ip_prefix_lists["L"][0];
        assert_eq!((e.ge, e.le), (Some(24), Some(32)));
        assert!(i.ipv6_prefix_lists["L6"][0].covers(&p("2001:db8::1/128")));
        assert_eq!(i.route_map_delay_ms, 0);
    }

    /// A route-map block as FRR prints it (lib/routemap_cli.c: `on-match
    /// next|goto N`, `call NAME`, the set and match lines).
    #[test]
    fn route_map_blocks_as_frr_prints_them() {
        let text = "route-map RM permit 10\n match ip address prefix-list VIPS\n match ip address ACL\n \
match ipv6 address ACL6\n match tag untagged\n match source-protocol table-direct\n \
match community C1 exact-match\n match large-community L1 any\n match ip address prefix-len 32\n \
on-match goto 30\n call SUB\n set community 64512:1 additive\n set comm-list DEL delete\n \
set large-community 64512:1:1\n set tag 7\n set as-path prepend 64512\n set local-preference 50\n \
description our VIPs\nexit\n!\nroute-map RM deny 20\n continue 40\nexit\n";
        let i = parse(text, None);
        let [e, d] = i.route_maps["RM"].as_slice() else {
            panic!("{:?}", i.route_maps)
        };
        assert_eq!(
            e.matches,
            [
                Match::PrefixList {
                    family: Family::Ipv4,
                    name: "VIPS".into()
                },
                Match::AccessList {
                    family: Family::Ipv4,
                    name: "ACL".into()
                },
                Match::AccessList {
                    family: Family::Ipv6,
                    name: "ACL6".into()
                },
                Match::Tag(0),
                Match::SourceProtocol("table-direct".into()),
                Match::Community {
                    name: "C1".into(),
                    mode: ListMode::Exact
                },
                Match::LargeCommunity {
                    name: "L1".into(),
                    mode: ListMode::Any
                },
                Match::Other("match ip address prefix-len 32".into()),
            ]
        );
        assert_eq!(e.on_match, Some(OnMatch::Goto(30)));
        assert_eq!(e.call.as_deref(), Some("SUB"));
        assert_eq!(
            e.sets,
            [
                Set::Community("64512:1 additive".into()),
                Set::CommListDelete("DEL".into()),
                Set::LargeCommunity("64512:1:1".into()),
                Set::Tag(7),
                Set::AsPath("prepend 64512".into()),
            ]
        );
        assert_eq!(e.description.as_deref(), Some("our VIPs"));
        assert_eq!((d.permit, d.on_match), (false, Some(OnMatch::Goto(40))));
    }

    /// The lists as FRR prints them: lib/filter_cli.c (`access_list_show`,
    /// `prefix_list_remark_show`), bgpd/bgp_vty.c
    /// (`community_list_config_write`), bgpd/bgp_filter.c (as-path).
    #[test]
    fn lists_as_frr_prints_them() {
        let text = "access-list ACL seq 5 permit 192.0.2.0/24\n\
access-list ACL seq 10 deny 192.0.2.0/24 exact-match\naccess-list ACL seq 15 permit 192.0.2.10\n\
access-list ACL seq 20 deny 192.0.2.0 0.0.0.255\naccess-list ACL seq 25 permit ip any any\n\
access-list ACL seq 30 permit any\naccess-list ONLY remark nothing\n\
ipv6 access-list ACL6 seq 5 permit 2001:db8::/32 exact-match\n\
ip prefix-list DESC description later\n\
bgp community-list standard C1 seq 5 permit 64512:1 no-export\n\
bgp community-list expanded CX seq 5 deny ^64512:.*$\nbgp community-list 10 seq 5 permit 64512:2\n\
bgp community-list 100 seq 5 permit _1_\nbgp community-list standard CA seq 5 permit MY-ALIAS\n\
bgp large-community-list standard L1 seq 5 permit 64512:1:1 64512:2:2\n\
bgp as-path access-list AP seq 5 permit ^$\nbgp as-path access-list AP seq 10 deny _64513 64514_\n";
        let i = parse(text, None);
        let rules: Vec<_> = i.lists.ip_access["ACL"].iter().map(|e| &e.rule).collect();
        assert_eq!(
            rules,
            [
                &AccessRule::Prefix {
                    prefix: p("192.0.2.0/24"),
                    exact: false
                },
                &AccessRule::Prefix {
                    prefix: p("192.0.2.0/24"),
                    exact: true
                },
                &AccessRule::Host("192.0.2.10".parse().unwrap()),
                &AccessRule::Network {
                    addr: "192.0.2.0".parse().unwrap(),
                    wildcard: "0.0.0.255".parse().unwrap()
                },
                &AccessRule::Unparsed("ip any any".into()),
                &AccessRule::Any,
            ]
        );
        assert!(i.lists.ip_access["ONLY"].is_empty());
        assert_eq!(
            i.lists.ipv6_access["ACL6"][0].rule,
            AccessRule::Prefix {
                prefix: p("2001:db8::/32"),
                exact: true
            }
        );
        assert!(i.ip_prefix_lists["DESC"].is_empty());
        let kind = |l: &str| &i.lists.community[l][0].kind;
        assert_eq!(
            kind("C1"),
            &CommunityKind::Standard(vec![(64512 << 16) | 1, 0xFFFF_FF01])
        );
        assert_eq!(kind("CX"), &CommunityKind::Expanded("^64512:.*$".into()));
        assert_eq!(
            kind("10"),
            &CommunityKind::Standard(vec![(64512 << 16) | 2])
        );
        assert_eq!(kind("100"), &CommunityKind::Expanded("_1_".into()));
        assert_eq!(kind("CA"), &CommunityKind::Unparsed("MY-ALIAS".into()));
        assert_eq!(
            i.lists.large_community["L1"][0].kind,
            CommunityKind::Large(vec![(64512, 1, 1), (64512, 2, 2)])
        );
        let ap = &i.lists.as_path["AP"];
        assert_eq!((ap[1].seq, ap[1].permit), (10, false));
        assert_eq!(ap[1].regex, "_64513 64514_");
    }

    /// The instance's settings and each neighbour's outbound lines.
    #[test]
    fn neighbours_and_instance_settings() {
        let text = "frr version 10.3\nfrr defaults traditional\n!\nrouter bgp 64512\n \
bgp confederation identifier 100\n bgp graceful-shutdown\n neighbor G peer-group\n \
neighbor G remote-as internal\n neighbor 198.18.1.1 peer-group G\n neighbor swp1 interface remote-as external\n \
neighbor 198.18.3.1 remote-as 64513\n neighbor 198.18.3.1 local-as 64999 no-prepend\n !\n \
address-family ipv4 unicast\n  redistribute table-direct 198 metric 10 route-map RM\n  \
aggregate-address 192.0.2.0/24 summary-only\n  neighbor G prefix-list PL out\n  \
neighbor 198.18.1.1 route-map OUT out\n  neighbor 198.18.1.1 filter-list AP out\n  \
neighbor 198.18.1.1 distribute-list ACL out\n  neighbor 198.18.1.1 route-map IN in\n  \
neighbor swp1 advertise-map A exist-map B\n exit-address-family\nexit\n";
        let i = parse(text, None);
        assert_eq!(i.release, Release::parse("10.3"));
        assert_eq!(i.bgp.asn, Some(64512));
        assert_eq!(i.bgp.ebgp_requires_policy, Some(true));
        assert!(i.bgp.confederation && i.bgp.graceful_shutdown);
        assert!(i.bgp.aggregates[0].suppresses);
        // The metric comes before the route-map on the line.
        assert_eq!(i.redistributions[0].route_map.as_deref(), Some("RM"));
        let peer = &i.peers["198.18.1.1"];
        assert_eq!(peer.group.as_deref(), Some("G"));
        let out = &peer.out[&Family::Ipv4];
        assert_eq!(out.route_map.as_deref(), Some("OUT"));
        assert_eq!(out.filter_list.as_deref(), Some("AP"));
        assert_eq!(out.distribute_list.as_deref(), Some("ACL"));
        assert_eq!(out.prefix_list, None, "the group's, not its own");
        assert_eq!(
            i.peers["G"].out[&Family::Ipv4].prefix_list.as_deref(),
            Some("PL")
        );
        assert_eq!(i.peers["G"].remote_as, Some(RemoteAs::Internal));
        assert_eq!(i.peers["swp1"].remote_as, Some(RemoteAs::External));
        assert_eq!(i.peers["swp1"].out[&Family::Ipv4].options.len(), 1);
        assert!(i.peers["198.18.3.1"].local_as);
        let dc = parse(
            "frr defaults datacenter\nrouter bgp 1\n bgp ebgp-requires-policy\nexit\n",
            None,
        );
        assert_eq!(dc.bgp.ebgp_requires_policy, Some(true));
        assert_eq!(
            parse("frr defaults datacenter\n", None)
                .bgp
                .ebgp_requires_policy,
            Some(false)
        );
        assert_eq!(parse("router bgp 1\n", None).bgp.ebgp_requires_policy, None);
    }

    #[test]
    fn realm_support_from_show_version() {
        let captured = capture("frr-10.7.1/vty-show-version.bin");
        assert_eq!(realms_from_show_version(&captured), Some(false));
        let built = "FRRouting 10.7.1 (n1) on Linux.\nconfigured with:\n    '--prefix=/usr' '--enable-realms'\n";
        assert_eq!(realms_from_show_version(built), Some(true));
        assert_eq!(realms_from_show_version("FRRouting 10.7.1 (n1)\n"), None);
    }

    /// The captured configurations never reach a construct the evaluator
    /// does not evaluate for the VIPs.
    #[test]
    fn captured_configurations_are_fully_evaluated() {
        for dir in ["frr-8.4.4", "frr-10.3", "frr-10.7.1"] {
            let i = parse(
                &capture(&format!("{dir}/bgpd-running-config-frrk8s.txt")),
                None,
            );
            for vip in ["192.0.2.10/32", "192.0.2.77/32", "2001:db8::10/128"] {
                let Some(v) = i.redistributed(198, &p(vip)) else {
                    continue;
                };
                assert!(!matches!(v, Verdict::Unknown { .. }), "{dir} {vip}: {v}");
            }
            let v = i.sent_to("198.18.1.1", &p("192.0.2.10/32"));
            assert_eq!(v, Verdict::Permit, "{dir}");
        }
    }
}
