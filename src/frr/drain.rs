//! The drain as bgpd's configuration holds it: which redistributions feed
//! the VIP table into BGP, whether their route-maps carry the drain's deny
//! entry, and the allowlisted commands that add or remove it.
//!
//! Contract: pure text in, text out. The drain is one entry,
//! `route-map NAME deny 1` with `description ribbridge-drain`, ahead of the
//! permits of every route-map a `redistribute table|table-direct N
//! route-map NAME` line names; bgpd then withdraws every redistributed VIP
//! from every peer while the sessions stay up (docs/FRR-BEHAVIOUR.md,
//! Drain). The entry lives in bgpd's running configuration: a restarted
//! ribbridge reads it back; a restarted FRR (a reboot) comes back undrained.

use std::collections::BTreeSet;

use super::vty::client::{DRAIN_MARK, DRAIN_SEQ};
use super::zapi::codec::Afi;

/// One `redistribute` line of bgpd's configuration for the VIP table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redistribution {
    /// `router bgp ASN`.
    pub asn: u32,
    /// The address family it sits in.
    pub afi: Afi,
    /// `table` or `table-direct`.
    pub keyword: String,
    /// The table.
    pub table: u32,
    /// Its route-map, if any (the drain needs one).
    pub route_map: Option<String>,
}

impl Redistribution {
    /// The line as bgpd prints it.
    pub fn line(&self) -> String {
        match &self.route_map {
            Some(m) => format!("redistribute {} {} route-map {m}", self.keyword, self.table),
            None => format!("redistribute {} {}", self.keyword, self.table),
        }
    }
}

/// Every redistribution of `table` in bgpd's running configuration (the
/// default instance; a VRF instance is not read).
pub fn redistributions(config: &str, table: u32) -> Vec<Redistribution> {
    let mut out = Vec::new();
    let mut asn: Option<u32> = None;
    let mut afi: Option<Afi> = None;
    for line in config.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["router", "bgp", n] => {
                asn = n.parse().ok();
                afi = None;
            }
            ["router", "bgp", ..] => asn = None,
            ["address-family", "ipv4", "unicast"] => afi = Some(Afi::Ipv4),
            ["address-family", "ipv6", "unicast"] => afi = Some(Afi::Ipv6),
            ["exit-address-family"] => afi = None,
            [
                "redistribute",
                kw @ ("table" | "table-direct"),
                n,
                rest @ ..,
            ] if n.parse() == Ok(table) => {
                let (Some(asn), Some(afi)) = (asn, afi) else {
                    continue;
                };
                let route_map = match rest {
                    ["route-map", m, ..] => Some((*m).to_string()),
                    _ => None,
                };
                out.push(Redistribution {
                    asn,
                    afi,
                    keyword: (*kw).to_string(),
                    table,
                    route_map,
                });
            }
            _ => {}
        }
    }
    out
}

/// The route-maps holding the drain's marked deny entry.
pub fn drained_route_maps(config: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut current: Option<String> = None;
    for line in config.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["route-map", m, "deny", seq] if *seq == DRAIN_SEQ => current = Some((*m).to_string()),
            ["route-map", ..] | ["exit"] | ["!"] => current = None,
            ["description", d] if *d == DRAIN_MARK => {
                if let Some(m) = current.take() {
                    out.insert(m);
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether bgpd's configuration holds a drain of `table`: some route-map
/// of a redistribution of it carries the drain's entry.
pub fn is_drained(config: &str, table: u32) -> bool {
    let marked = drained_route_maps(config);
    redistributions(config, table)
        .iter()
        .any(|r| r.route_map.as_ref().is_some_and(|m| marked.contains(m)))
}

/// The redistribution lines re-applied (`no` form first), so that bgpd
/// re-reads the table through its route-map at once instead of after its
/// route-map delay timer (5 s), and so that 8.4, which never re-sends a
/// route that existed before a re-subscription through a changed route-map,
/// advertises again on undrain.
fn cycle(rs: &[Redistribution]) -> Vec<String> {
    let mut cmds = Vec::new();
    for r in rs {
        cmds.push(format!("router bgp {}", r.asn));
        cmds.push(format!(
            "address-family {} unicast",
            match r.afi {
                Afi::Ipv4 => "ipv4",
                Afi::Ipv6 => "ipv6",
            }
        ));
        cmds.push(format!("no {}", r.line()));
        cmds.push(r.line());
        cmds.push("exit-address-family".to_string());
        cmds.push("exit".to_string());
    }
    cmds
}

fn maps(rs: &[Redistribution]) -> BTreeSet<String> {
    rs.iter().filter_map(|r| r.route_map.clone()).collect()
}

/// The commands that drain: the marked deny entry in each route-map, then
/// the redistributions re-applied. Empty when already drained.
pub fn drain_commands(config: &str, rs: &[Redistribution]) -> Vec<String> {
    let marked = drained_route_maps(config);
    let missing: Vec<String> = maps(rs)
        .into_iter()
        .filter(|m| !marked.contains(m))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    let mut cmds = Vec::new();
    for m in missing {
        cmds.push(format!("route-map {m} deny {DRAIN_SEQ}"));
        cmds.push(format!("description {DRAIN_MARK}"));
        cmds.push("exit".to_string());
    }
    cmds.extend(cycle(rs));
    cmds
}

/// The commands that undrain: the marked entries removed, then the
/// redistributions re-applied. Empty when not drained.
pub fn undrain_commands(config: &str, rs: &[Redistribution]) -> Vec<String> {
    let marked = drained_route_maps(config);
    let present: Vec<String> = maps(rs)
        .into_iter()
        .filter(|m| marked.contains(m))
        .collect();
    if present.is_empty() {
        return Vec::new();
    }
    let mut cmds: Vec<String> = present
        .into_iter()
        .map(|m| format!("no route-map {m} deny {DRAIN_SEQ}"))
        .collect();
    cmds.extend(cycle(rs));
    cmds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frr::vty::client::allowed_config;

    const CONFIG: &str = "frr version 10.7\n!\nrouter bgp 64512\n bgp router-id 1.1.1.1\n \
neighbor 198.18.1.1 remote-as 64513\n !\n address-family ipv4 unicast\n  \
redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4\n  neighbor 198.18.1.1 activate\n \
exit-address-family\n !\n address-family ipv6 unicast\n  redistribute table-direct 198 route-map \
KUBE-VIP-ROUTES-V6\n exit-address-family\nexit\n!\nroute-map KUBE-VIP-ROUTES-V4 permit 10\n \
match ip address prefix-list P4\nexit\n!\nroute-map KUBE-VIP-ROUTES-V6 permit 10\nexit\n";

    const DRAINED_V4: &str =
        "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-drain\nexit\n!\n";

    #[test]
    fn reads_the_redistributions_of_the_table() {
        let rs = redistributions(CONFIG, 198);
        assert_eq!(rs.len(), 2);
        assert_eq!(rs[0].asn, 64512);
        assert_eq!(rs[0].afi, Afi::Ipv4);
        assert_eq!(rs[1].route_map.as_deref(), Some("KUBE-VIP-ROUTES-V6"));
        assert!(redistributions(CONFIG, 199).is_empty());
    }

    #[test]
    fn drained_only_with_the_marked_entry_of_a_redistribution_route_map() {
        assert!(!is_drained(CONFIG, 198));
        let c = format!("{CONFIG}{DRAINED_V4}");
        assert!(is_drained(&c, 198));
        // An operator's own deny 1 (no mark) is not a drain.
        let c = format!("{CONFIG}route-map KUBE-VIP-ROUTES-V4 deny 1\n match tag 7\nexit\n");
        assert!(!is_drained(&c, 198));
        // A marked entry in a route-map no redistribution uses is not either.
        let c = format!("{CONFIG}route-map OTHER deny 1\n description ribbridge-drain\nexit\n");
        assert!(!is_drained(&c, 198));
    }

    #[test]
    fn commands_are_allowlisted_and_idempotent() {
        let rs = redistributions(CONFIG, 198);
        let d = drain_commands(CONFIG, &rs);
        assert!(d.contains(&"route-map KUBE-VIP-ROUTES-V4 deny 1".to_string()));
        assert!(d.contains(
            &"no redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V6".to_string()
        ));
        for c in &d {
            allowed_config(c).unwrap_or_else(|e| panic!("{c}: {e}"));
        }
        assert!(undrain_commands(CONFIG, &rs).is_empty());
        let both = format!(
            "{CONFIG}{DRAINED_V4}route-map KUBE-VIP-ROUTES-V6 deny 1\n description ribbridge-drain\nexit\n"
        );
        assert!(drain_commands(&both, &rs).is_empty());
        let u = undrain_commands(&both, &rs);
        assert_eq!(u[0], "no route-map KUBE-VIP-ROUTES-V4 deny 1");
        for c in &u {
            allowed_config(c).unwrap_or_else(|e| panic!("{c}: {e}"));
        }
        // Half drained (one family): drain completes it, undrain undoes it.
        let half = format!("{CONFIG}{DRAINED_V4}");
        assert!(
            drain_commands(&half, &rs).contains(&"route-map KUBE-VIP-ROUTES-V6 deny 1".to_string())
        );
        assert!(!undrain_commands(&half, &rs).is_empty());
    }
}
