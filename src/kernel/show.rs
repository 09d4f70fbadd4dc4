//! Printing the mirror the way iproute2 6.1 prints `ip -json route show
//! table N` (and its text form), ECMP legs resolved, so that a person or a
//! test can put the two side by side.
//!
//! Contract: for the route shapes the mirror keeps, `ip_json` produces the
//! same JSON object `ip -json` does, field for field, except that nexthop
//! legs are sorted (the kernel orders them differently in dumps and
//! events).

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde_json::{Map, Value, json};

use super::types::{Link, Nexthop, RT_SCOPE_UNIVERSE, RTN_UNICAST, Route};
use super::watcher::MirrorSnapshot;

fn route_type(k: u8) -> String {
    match k {
        0 => "none".into(),
        1 => "unicast".into(),
        2 => "local".into(),
        3 => "broadcast".into(),
        4 => "anycast".into(),
        5 => "multicast".into(),
        6 => "blackhole".into(),
        7 => "unreachable".into(),
        8 => "prohibit".into(),
        9 => "throw".into(),
        10 => "nat".into(),
        11 => "xresolve".into(),
        n => n.to_string(),
    }
}

/// Names from iproute2's default `rt_protos`.
fn protocol(p: u8) -> String {
    match p {
        1 => "redirect".into(),
        2 => "kernel".into(),
        3 => "boot".into(),
        4 => "static".into(),
        8 => "gated".into(),
        9 => "ra".into(),
        10 => "mrt".into(),
        11 => "zebra".into(),
        12 => "bird".into(),
        13 => "dnrouted".into(),
        14 => "xorp".into(),
        15 => "ntk".into(),
        16 => "dhcp".into(),
        18 => "keepalived".into(),
        42 => "babel".into(),
        99 => "openr".into(),
        186 => "bgp".into(),
        187 => "isis".into(),
        188 => "ospf".into(),
        189 => "rip".into(),
        192 => "eigrp".into(),
        n => n.to_string(),
    }
}

fn scope(s: u8) -> String {
    match s {
        0 => "global".into(),
        200 => "site".into(),
        253 => "link".into(),
        254 => "host".into(),
        255 => "nowhere".into(),
        n => n.to_string(),
    }
}

fn flags(f: u8) -> Value {
    let names = [
        (1, "dead"),
        (2, "pervasive"),
        (4, "onlink"),
        (8, "offload"),
        (16, "linkdown"),
        (32, "unresolved"),
        (64, "trap"),
    ];
    Value::Array(
        names
            .iter()
            .filter(|(b, _)| f & b != 0)
            .map(|(_, n)| Value::String((*n).into()))
            .collect(),
    )
}

fn dev(links: &BTreeMap<u32, Link>, oif: u32) -> String {
    links
        .get(&oif)
        .map_or_else(|| format!("if{oif}"), |l| l.name.clone())
}

fn dst(r: &Route) -> String {
    if r.prefix.prefix_len() == 0 {
        "default".into()
    } else if r.prefix.is_host() {
        r.prefix.addr().to_string()
    } else {
        r.prefix.to_string()
    }
}

fn leg(links: &BTreeMap<u32, Link>, n: &Nexthop) -> Value {
    let mut o = Map::new();
    if let Some(g) = n.gateway {
        o.insert("gateway".into(), json!(g.to_string()));
    }
    if let Some(i) = n.oif {
        o.insert("dev".into(), json!(dev(links, i)));
    }
    o.insert("weight".into(), json!(n.weight));
    o.insert("flags".into(), flags(n.flags));
    Value::Object(o)
}

/// One route as `ip -json route show` prints it. `multipath`: the kernel
/// sends the legs as `RTA_MULTIPATH` even when there is one (an IPv6 route
/// through a nexthop group).
pub fn route_json(links: &BTreeMap<u32, Link>, r: &Route, multipath: bool) -> Value {
    let mut o = Map::new();
    if r.kind != RTN_UNICAST {
        o.insert("type".into(), json!(route_type(r.kind)));
    }
    o.insert("dst".into(), json!(dst(r)));
    if let Some(id) = r.nhid {
        o.insert("nhid".into(), json!(id));
    }
    let single = match r.nexthops.as_slice() {
        [one] if !multipath => Some(one),
        _ => None,
    };
    if let Some(n) = single {
        if let Some(g) = n.gateway {
            o.insert("gateway".into(), json!(g.to_string()));
        }
        if let Some(i) = n.oif {
            o.insert("dev".into(), json!(dev(links, i)));
        }
    }
    // iproute2 leaves out "boot", the protocol of a route added by hand.
    if r.protocol != 3 && r.protocol != 0 {
        o.insert("protocol".into(), json!(protocol(r.protocol)));
    }
    if r.scope != RT_SCOPE_UNIVERSE {
        o.insert("scope".into(), json!(scope(r.scope)));
    }
    if r.metric != 0 {
        o.insert("metric".into(), json!(r.metric));
    }
    if let Some(src) = r.prefsrc {
        o.insert("prefsrc".into(), json!(src.to_string()));
    }
    o.insert("flags".into(), flags(single.map_or(0, |n| n.flags)));
    if let Some(realm) = r.realm {
        let mut f = Map::new();
        if realm >> 16 != 0 {
            f.insert("from".into(), json!((realm >> 16).to_string()));
        }
        f.insert("to".into(), json!((realm & 0xffff).to_string()));
        o.insert("flow".into(), Value::Object(f));
    }
    if let Some(p) = r.pref {
        let name = match p {
            0 => "medium".to_string(),
            1 => "high".to_string(),
            3 => "low".to_string(),
            n => n.to_string(),
        };
        o.insert("pref".into(), json!(name));
    }
    if r.nexthops.len() > 1 || (multipath && !r.nexthops.is_empty()) {
        o.insert(
            "nexthops".into(),
            Value::Array(r.nexthops.iter().map(|n| leg(links, n)).collect()),
        );
    }
    Value::Object(o)
}

/// The routes of `table` in one family (`ipv6`), as `ip [-6] -json route
/// show table N` prints them.
pub fn ip_json(m: &MirrorSnapshot, table: u32, ipv6: bool) -> Value {
    Value::Array(
        m.routes
            .iter()
            .filter(|r| r.table == table && r.prefix.addr().is_ipv6() == ipv6)
            .map(|r| {
                // IPv6 dumps a route through a group as RTA_MULTIPATH even
                // with one member; IPv4 dumps a single path inline.
                let group = ipv6
                    && r.nhid
                        .and_then(|id| m.nexthop_objects.get(&id))
                        .is_some_and(|n| !n.group.is_empty());
                route_json(&m.links, r, group)
            })
            .collect(),
    )
}

/// The text form, one route per line (legs indented), like `ip route`.
pub fn ip_text(links: &BTreeMap<u32, Link>, routes: &[Route], table: u32) -> String {
    let mut s = String::new();
    for r in routes.iter().filter(|r| r.table == table) {
        if r.kind != RTN_UNICAST {
            s += &route_type(r.kind);
            s += " ";
        }
        s += &dst(r);
        if let Some(id) = r.nhid {
            s += &format!(" nhid {id}");
        }
        let gw = |g: Option<IpAddr>| g.map(|g| format!(" via {g}")).unwrap_or_default();
        let dv = |o: Option<u32>| {
            o.map(|o| format!(" dev {}", dev(links, o)))
                .unwrap_or_default()
        };
        if let [n] = r.nexthops.as_slice() {
            s += &gw(n.gateway);
            s += &dv(n.oif);
        }
        s += &format!(" proto {}", protocol(r.protocol));
        if r.scope != RT_SCOPE_UNIVERSE {
            s += &format!(" scope {}", scope(r.scope));
        }
        if r.metric != 0 {
            s += &format!(" metric {}", r.metric);
        }
        if let Some(src) = r.prefsrc {
            s += &format!(" src {src}");
        }
        if let Some(realm) = r.realm {
            s += &format!(" realm {}", realm & 0xffff);
        }
        s += "\n";
        if r.nexthops.len() > 1 {
            for n in &r.nexthops {
                s += &format!(
                    "\tnexthop{}{} weight {}\n",
                    gw(n.gateway),
                    dv(n.oif),
                    n.weight
                );
            }
        }
    }
    s
}
