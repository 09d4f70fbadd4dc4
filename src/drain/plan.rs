//! The drain as bgpd's configuration holds it: which redistributions feed
//! the VIP table into BGP, whether their route-maps carry the drain's deny
//! entry, and the allowlisted commands that add or remove it.
//!
//! Contract: pure text in, text out. The drain is one entry per route-map,
//! `route-map NAME deny SEQ` with `description ribbridge-drain`, ahead of
//! every other entry of each route-map a `redistribute table|table-direct N
//! route-map NAME` line names; bgpd then withdraws every redistributed VIP
//! from every peer while the sessions stay up (docs/FRR-BEHAVIOUR.md,
//! Drain).
//! - The entry is recognised by its mark, at any sequence; it drains only
//!   while it is the route-map's first entry ([`drained_route_maps`]).
//! - [`drain_commands`] puts it at the lowest sequence below the
//!   route-map's first entry (1 unless the route-map uses 1; a route-map
//!   with no entry yet gets 1), so it never takes an existing entry's
//!   place; when no sequence is free it refuses
//!   ([`DrainPlanError::NoFreeSequence`]) before any command is sent. A
//!   marked entry that is no longer first (entries were added ahead of it)
//!   is replaced.
//! - [`undrain_commands`] removes every marked entry, whatever its
//!   sequence.
//!
//! The entry lives in bgpd's running configuration: a restarted ribbridge
//! reads it back; a restarted FRR, or a reload that rewrites the whole
//! configuration (frr-k8s's `frr-reload.py --reload --overwrite`), comes
//! back undrained, which is why the drain is also kept as an intent
//! (`crate::drain::state`) that a daemon re-applies with [`drain_commands`].

use std::collections::{BTreeMap, BTreeSet};

use crate::model::TableId;
use crate::model::intent::{Family, Intent, parse};
use crate::model::{DRAIN_MARK, Prefix, WITHDRAW_LIST_V4, WITHDRAW_LIST_V6, WITHDRAW_MARK};

/// One `redistribute` line of bgpd's configuration for the VIP table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redistribution {
    /// `router bgp ASN`.
    pub asn: u32,
    /// The address family it sits in.
    pub afi: Family,
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
/// default instance; a VRF instance is not read), as the intent reads it.
pub fn redistributions(config: &str, table: u32) -> Vec<Redistribution> {
    of_table(&parse(config, None), table)
}

fn of_table(intent: &Intent, table: u32) -> Vec<Redistribution> {
    intent
        .redistributions
        .iter()
        .filter(|r| r.table == table)
        .map(|r| Redistribution {
            asn: r.asn,
            afi: r.family,
            keyword: if r.direct { "table-direct" } else { "table" }.to_string(),
            table,
            route_map: r.route_map.clone(),
        })
        .collect()
}

/// One entry of a route-map, as bgpd's running configuration prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteMapEntry {
    /// Its sequence number (1-65535).
    pub seq: u32,
    /// `permit` (true) or `deny` (false).
    pub permit: bool,
    /// A deny entry with the drain's description: ribbridge's own.
    pub marked: bool,
    /// A deny entry with the withdrawal's description (it matches the
    /// withdrawn VIPs' prefix-list): ribbridge's own too.
    pub withdraw: bool,
}

impl RouteMapEntry {
    /// ribbridge's own entry (the drain's or a withdrawal's): every other
    /// entry is the operator's, and ribbridge's go ahead of them.
    fn ours(&self) -> bool {
        self.marked || self.withdraw
    }
}

/// Every route-map of bgpd's running configuration, its entries sorted by
/// sequence.
pub fn route_maps(config: &str) -> BTreeMap<String, Vec<RouteMapEntry>> {
    entries_of(&parse(config, None))
}

fn entries_of(intent: &Intent) -> BTreeMap<String, Vec<RouteMapEntry>> {
    intent
        .route_maps
        .iter()
        .map(|(name, entries)| {
            let entries = entries
                .iter()
                .map(|e| RouteMapEntry {
                    seq: e.seq,
                    permit: e.permit,
                    marked: !e.permit && e.description.as_deref() == Some(DRAIN_MARK),
                    withdraw: !e.permit && e.description.as_deref() == Some(WITHDRAW_MARK),
                })
                .collect();
            (name.clone(), entries)
        })
        .collect()
}

/// A route-map's drain, read from its entries.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MapDrain {
    /// The sequences of its marked entries.
    marked: Vec<u32>,
    /// The lowest sequence of its other entries.
    first_other: Option<u32>,
}

impl MapDrain {
    fn of(entries: &[RouteMapEntry]) -> MapDrain {
        MapDrain {
            marked: entries.iter().filter(|e| e.marked).map(|e| e.seq).collect(),
            first_other: entries.iter().filter(|e| !e.ours()).map(|e| e.seq).min(),
        }
    }

    /// A marked entry comes before every other entry: bgpd denies all.
    fn drains(&self) -> bool {
        match (self.marked.iter().min(), self.first_other) {
            (Some(m), Some(o)) => *m < o,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// The route-maps the drain's marked deny entry heads: the marked entry
/// (at any sequence) comes before every other entry of the route-map. A
/// marked entry behind another entry does not drain (the earlier entry
/// decides first) and is not counted.
pub fn drained_route_maps(config: &str) -> BTreeSet<String> {
    entries_of(&parse(config, None))
        .into_iter()
        .filter(|(_, entries)| MapDrain::of(entries).drains())
        .map(|(m, _)| m)
        .collect()
}

/// Whether bgpd's configuration holds a drain of `table`: some route-map
/// of a redistribution of it is headed by the drain's entry.
pub fn is_drained(config: &str, table: u32) -> bool {
    intent_is_drained(&parse(config, None), table)
}

/// [`is_drained`] on the configuration already read as an intent.
pub fn intent_is_drained(intent: &Intent, table: u32) -> bool {
    let maps = entries_of(intent);
    of_table(intent, table).iter().any(|r| {
        r.route_map
            .as_ref()
            .and_then(|m| maps.get(m))
            .is_some_and(|e| MapDrain::of(e).drains())
    })
}

/// The sequence for a new entry of ribbridge's (the drain's, a
/// withdrawal's) in a route-map whose entries are `entries`: the lowest one
/// below its first entry not ribbridge's that no entry uses (1 for a
/// route-map with no entry), or `None` when that first entry is 1.
pub fn free_sequence(entries: &[RouteMapEntry]) -> Option<u32> {
    let taken: BTreeSet<u32> = entries.iter().map(|e| e.seq).collect();
    let below = entries
        .iter()
        .filter(|e| !e.ours())
        .map(|e| e.seq)
        .min()
        .unwrap_or(MAX_SEQ + 1);
    (1..below).find(|s| !taken.contains(s))
}

/// The highest route-map sequence bgpd accepts.
pub const MAX_SEQ: u32 = 65_535;

/// Why the drain's commands cannot be written for bgpd's configuration.
/// Nothing has been sent when one of these is returned.
#[derive(Debug, thiserror::Error)]
pub enum DrainPlanError {
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
    /// The route-map's first entry is sequence 1: the drain's deny entry
    /// cannot come before it without taking another entry's place.
    #[error(
        "bgpd's route-map {route_map} starts at sequence {first}: the drain's deny entry must come before every entry, and no sequence below {first} is free; renumber the route-map's entries so that sequence 1 is free (e.g. 10, 20, ... as ribbridge render writes them), then drain again"
    )]
    NoFreeSequence {
        /// The route-map.
        route_map: String,
        /// Its first entry's sequence.
        first: u32,
    },
}

/// The redistributions of `tables`, each with its route-map.
fn checked_redistributions(
    config: &str,
    tables: &[TableId],
) -> Result<Vec<Redistribution>, DrainPlanError> {
    let rs: Vec<Redistribution> = tables
        .iter()
        .flat_map(|&t| redistributions(config, t))
        .collect();
    if rs.is_empty() {
        return Err(DrainPlanError::NoRedistribution {
            tables: tables.to_vec(),
        });
    }
    if let Some(r) = rs.iter().find(|r| r.route_map.is_none()) {
        return Err(DrainPlanError::NoRouteMap { line: r.line() });
    }
    Ok(rs)
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
        cmds.push(format!("address-family {} unicast", r.afi.name()));
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

/// The commands that drain the redistributions of `tables` in bgpd's
/// running configuration `config`: in each of their route-maps not yet
/// drained, the marked deny entry at a free sequence ahead of its first
/// entry ([`free_sequence`]) and any marked entry left behind another entry
/// removed; then the redistributions re-applied. Empty when already
/// drained. This is what a daemon re-applies when the drain's intent is
/// recorded and a reload removed the entry.
///
/// Errors (nothing to send): no redistribution of `tables`, one without a
/// route-map, or a route-map whose first entry is sequence 1.
pub fn drain_commands(config: &str, tables: &[TableId]) -> Result<Vec<String>, DrainPlanError> {
    let rs = checked_redistributions(config, tables)?;
    let all = route_maps(config);
    let mut cmds = Vec::new();
    for m in maps(&rs) {
        let entries = all.get(&m).map(Vec::as_slice).unwrap_or_default();
        let d = MapDrain::of(entries);
        if d.drains() {
            continue;
        }
        let seq = free_sequence(entries).ok_or_else(|| DrainPlanError::NoFreeSequence {
            route_map: m.clone(),
            first: d.first_other.unwrap_or(1),
        })?;
        cmds.push(format!("route-map {m} deny {seq}"));
        cmds.push(format!("description {DRAIN_MARK}"));
        cmds.push("exit".to_string());
        // A marked entry behind another one drains nothing: the new one
        // replaces it.
        for s in d.marked {
            cmds.push(format!("no route-map {m} deny {s}"));
        }
    }
    if cmds.is_empty() {
        return Ok(cmds);
    }
    cmds.extend(cycle(&rs));
    Ok(cmds)
}

/// The commands that undrain the redistributions of `tables`: every marked
/// entry of their route-maps removed, whatever its sequence, then the
/// redistributions re-applied. Empty when no marked entry is left.
///
/// Errors: no redistribution of `tables`, or one without a route-map.
pub fn undrain_commands(config: &str, tables: &[TableId]) -> Result<Vec<String>, DrainPlanError> {
    let rs = checked_redistributions(config, tables)?;
    let all = route_maps(config);
    let mut cmds = Vec::new();
    for m in maps(&rs) {
        let entries = all.get(&m).map(Vec::as_slice).unwrap_or_default();
        for e in entries.iter().filter(|e| e.marked) {
            cmds.push(format!("no route-map {m} deny {}", e.seq));
        }
    }
    if cmds.is_empty() {
        return Ok(cmds);
    }
    cmds.extend(cycle(&rs));
    Ok(cmds)
}

/// The withdrawal's names for `prefix`'s family: the `ip`/`ipv6` keyword
/// and ribbridge's prefix-list.
fn withdraw_list(prefix: &Prefix) -> (&'static str, &'static str, Family) {
    if prefix.addr().is_ipv4() {
        ("ip", WITHDRAW_LIST_V4, Family::Ipv4)
    } else {
        ("ipv6", WITHDRAW_LIST_V6, Family::Ipv6)
    }
}

/// bgpd's configuration read for `prefix`'s withdrawal: the intent and
/// the route-maps of its family's redistributions of `tables`.
fn read_withdrawal(
    config: &str,
    tables: &[TableId],
    prefix: &Prefix,
) -> Result<(Intent, BTreeSet<String>), DrainPlanError> {
    let (_, _, afi) = withdraw_list(prefix);
    Ok((parse(config, None), family_maps(config, tables, afi)?))
}

/// The route-maps of the redistributions of `tables` in `afi`.
fn family_maps(
    config: &str,
    tables: &[TableId],
    afi: Family,
) -> Result<BTreeSet<String>, DrainPlanError> {
    let rs = checked_redistributions(config, tables)?;
    let in_family: Vec<Redistribution> = rs.into_iter().filter(|r| r.afi == afi).collect();
    Ok(maps(&in_family))
}

/// The commands that take one VIP, `prefix`, out of BGP: the prefix in
/// ribbridge's withdrawal prefix-list of its family, and in every route-map
/// of that family's redistributions of `tables` a deny entry marked
/// [`WITHDRAW_MARK`] that matches the list, ahead of the operator's entries
/// ([`free_sequence`]; one left behind another entry is replaced). No
/// redistribution is re-applied (that would withdraw every VIP for a
/// moment): bgpd applies the change after its route-map delay timer. Empty
/// when bgpd's configuration already withdraws it.
///
/// Errors (nothing to send): as [`drain_commands`].
pub fn withdraw_commands(
    config: &str,
    tables: &[TableId],
    prefix: &Prefix,
) -> Result<Vec<String>, DrainPlanError> {
    let (kw, list, _) = withdraw_list(prefix);
    let (intent, maps) = read_withdrawal(config, tables, prefix)?;
    let all = entries_of(&intent);
    let mut cmds = Vec::new();
    // The route-map entries first: the list they match exists by the end
    // of the same batch, and until then matches nothing.
    for m in maps {
        let entries = all.get(&m).map(Vec::as_slice).unwrap_or_default();
        let first_other = entries.iter().filter(|e| !e.ours()).map(|e| e.seq).min();
        let ahead = |e: &&RouteMapEntry| e.withdraw && first_other.is_none_or(|o| e.seq < o);
        if entries.iter().any(|e| ahead(&e)) {
            continue;
        }
        let seq = free_sequence(entries).ok_or_else(|| DrainPlanError::NoFreeSequence {
            route_map: m.clone(),
            first: first_other.unwrap_or(1),
        })?;
        cmds.push(format!("route-map {m} deny {seq}"));
        cmds.push(format!("description {WITHDRAW_MARK}"));
        cmds.push(format!("match {kw} address prefix-list {list}"));
        cmds.push("exit".to_string());
        for e in entries.iter().filter(|e| e.withdraw) {
            cmds.push(format!("no route-map {m} deny {}", e.seq));
        }
    }
    if listed(&intent, prefix).is_empty() {
        let seq = list_entries(&intent, prefix)
            .iter()
            .map(|e| e.seq)
            .max()
            .unwrap_or(0)
            + 5;
        cmds.push(format!("{kw} prefix-list {list} seq {seq} permit {prefix}"));
    }
    Ok(cmds)
}

/// The entries of ribbridge's withdrawal prefix-list of `prefix`'s family.
fn list_entries<'a>(intent: &'a Intent, prefix: &Prefix) -> &'a [crate::model::intent::ListEntry] {
    let (_, list, afi) = withdraw_list(prefix);
    let lists = match afi {
        Family::Ipv4 => &intent.ip_prefix_lists,
        Family::Ipv6 => &intent.ipv6_prefix_lists,
    };
    lists.get(list).map(Vec::as_slice).unwrap_or_default()
}

/// The sequences of ribbridge's withdrawal prefix-list entries for `prefix`.
fn listed(intent: &Intent, prefix: &Prefix) -> Vec<u32> {
    list_entries(intent, prefix)
        .iter()
        .filter(|e| e.permit && e.prefix == *prefix)
        .map(|e| e.seq)
        .collect()
}

/// The commands that put `prefix` back: its entries of the withdrawal
/// prefix-list removed; when no other VIP of its family is withdrawn, the
/// marked deny entries of that family's route-maps too (a route-map entry
/// matching a list that no longer exists would leave every VIP's verdict
/// unknown). Empty when nothing of it is left.
///
/// Errors: no redistribution of `tables`, or one without a route-map.
pub fn restore_commands(
    config: &str,
    tables: &[TableId],
    prefix: &Prefix,
) -> Result<Vec<String>, DrainPlanError> {
    let (kw, list, _) = withdraw_list(prefix);
    let (intent, maps) = read_withdrawal(config, tables, prefix)?;
    let mine = listed(&intent, prefix);
    let others = intent
        .withdraw_listed()
        .filter(|p| p.addr().is_ipv4() == prefix.addr().is_ipv4() && *p != prefix)
        .count();
    let mut cmds = Vec::new();
    if others == 0 {
        let all = entries_of(&intent);
        for m in maps {
            for e in all.get(&m).into_iter().flatten().filter(|e| e.withdraw) {
                cmds.push(format!("no route-map {m} deny {}", e.seq));
            }
        }
    }
    for seq in mine {
        cmds.push(format!(
            "no {kw} prefix-list {list} seq {seq} permit {prefix}"
        ));
    }
    Ok(cmds)
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
        assert_eq!(rs[0].afi, Family::Ipv4);
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

    const TABLES: &[TableId] = &[198];

    fn drain(config: &str) -> Vec<String> {
        drain_commands(config, TABLES).unwrap_or_else(|e| panic!("{e}"))
    }

    fn undrain(config: &str) -> Vec<String> {
        undrain_commands(config, TABLES).unwrap_or_else(|e| panic!("{e}"))
    }

    fn allowlisted(cmds: &[String]) {
        for c in cmds {
            allowed_config(c).unwrap_or_else(|e| panic!("{c}: {e}"));
        }
    }

    #[test]
    fn commands_are_allowlisted_and_idempotent() {
        let d = drain(CONFIG);
        assert!(d.contains(&"route-map KUBE-VIP-ROUTES-V4 deny 1".to_string()));
        assert!(d.contains(
            &"no redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V6".to_string()
        ));
        allowlisted(&d);
        assert!(undrain(CONFIG).is_empty());
        let both = format!(
            "{CONFIG}{DRAINED_V4}route-map KUBE-VIP-ROUTES-V6 deny 1\n description ribbridge-drain\nexit\n"
        );
        assert!(drain(&both).is_empty());
        let u = undrain(&both);
        assert_eq!(u[0], "no route-map KUBE-VIP-ROUTES-V4 deny 1");
        allowlisted(&u);
        // Half drained (one family): drain completes it, undrain undoes it.
        let half = format!("{CONFIG}{DRAINED_V4}");
        assert!(drain(&half).contains(&"route-map KUBE-VIP-ROUTES-V6 deny 1".to_string()));
        assert!(!undrain(&half).is_empty());
    }

    /// CONFIG with the V4 route-map's entries at `v4` (permits) instead of 10.
    fn numbered(v4: &[u32]) -> String {
        let mut c = CONFIG.replace(
            "route-map KUBE-VIP-ROUTES-V4 permit 10\n match ip address prefix-list P4\nexit\n!\n",
            "",
        );
        for s in v4 {
            c.push_str(&format!(
                "route-map KUBE-VIP-ROUTES-V4 permit {s}\nexit\n!\n"
            ));
        }
        c
    }

    fn entries(seqs: &[u32]) -> Vec<RouteMapEntry> {
        seqs.iter()
            .map(|&seq| RouteMapEntry {
                seq,
                permit: true,
                marked: false,
                withdraw: false,
            })
            .collect()
    }

    #[test]
    fn the_free_sequence_is_the_lowest_below_the_first_entry() {
        assert_eq!(free_sequence(&[]), Some(1));
        assert_eq!(free_sequence(&entries(&[10, 20])), Some(1));
        assert_eq!(free_sequence(&entries(&[2, 3])), Some(1));
        assert_eq!(free_sequence(&entries(&[1, 10])), None);
        assert_eq!(free_sequence(&entries(&[1])), None);
        // A stale marked entry holds its sequence: the next one is taken.
        let mut e = entries(&[3]);
        e.insert(
            0,
            RouteMapEntry {
                seq: 1,
                permit: false,
                marked: true,
                withdraw: false,
            },
        );
        assert_eq!(free_sequence(&e), Some(2));
    }

    #[test]
    fn the_drain_entry_goes_ahead_of_the_first_entry() {
        // The enhancement's proof of concept: 10 and 20.
        let c = numbered(&[10, 20]);
        let d = drain(&c);
        assert_eq!(
            &d[..3],
            [
                "route-map KUBE-VIP-ROUTES-V4 deny 1",
                "description ribbridge-drain",
                "exit"
            ]
        );
        allowlisted(&d);
        // A redistribution whose route-map has no entry yet: 1.
        let c = CONFIG.replace("route-map KUBE-VIP-ROUTES-V6 permit 10\nexit\n", "");
        assert!(!route_maps(&c).contains_key("KUBE-VIP-ROUTES-V6"));
        assert!(drain(&c).contains(&"route-map KUBE-VIP-ROUTES-V6 deny 1".to_string()));
    }

    #[test]
    fn a_route_map_starting_at_1_is_refused_naming_it() {
        // frr-k8s numbers its entries from 1.
        let c = numbered(&[1, 2]);
        let e = drain_commands(&c, TABLES).expect_err("no free sequence");
        assert!(
            matches!(&e, DrainPlanError::NoFreeSequence { route_map, first: 1 } if route_map == "KUBE-VIP-ROUTES-V4"),
            "{e:?}"
        );
        let msg = e.to_string();
        assert!(
            msg.contains("route-map KUBE-VIP-ROUTES-V4 starts at sequence 1"),
            "{msg}"
        );
        assert!(
            msg.contains("renumber the route-map's entries so that sequence 1 is free"),
            "{msg}"
        );
        // An operator's own deny 1 (no mark) is an entry like any other:
        // never taken over.
        let c = format!("{CONFIG}route-map KUBE-VIP-ROUTES-V6 deny 1\n match tag 7\nexit\n");
        assert!(matches!(
            drain_commands(&c, TABLES),
            Err(DrainPlanError::NoFreeSequence { first: 1, .. })
        ));
        // Undrain has nothing to remove there, and says so with no command.
        assert!(undrain(&numbered(&[1, 2])).is_empty());
    }

    #[test]
    fn a_marked_entry_at_any_sequence_is_the_drain() {
        let marked5 =
            "route-map KUBE-VIP-ROUTES-V4 deny 5\n description ribbridge-drain\nexit\n!\n";
        let c = format!("{}{marked5}", numbered(&[10, 20]));
        assert!(drained_route_maps(&c).contains("KUBE-VIP-ROUTES-V4"));
        assert!(is_drained(&c, 198));
        let e = route_maps(&c);
        assert_eq!(
            e["KUBE-VIP-ROUTES-V4"]
                .iter()
                .map(|e| (e.seq, e.marked))
                .collect::<Vec<_>>(),
            [(5, true), (10, false), (20, false)]
        );
        // Drain completes only the other family; undrain removes seq 5.
        let d = drain(&c);
        assert!(
            !d.iter().any(|l| l.contains("KUBE-VIP-ROUTES-V4 deny")),
            "{d:?}"
        );
        let u = undrain(&c);
        assert_eq!(u[0], "no route-map KUBE-VIP-ROUTES-V4 deny 5");
        allowlisted(&u);
    }

    #[test]
    fn a_marked_entry_behind_another_is_replaced() {
        // Entries added ahead of the drain's: it no longer drains.
        let marked5 =
            "route-map KUBE-VIP-ROUTES-V4 deny 5\n description ribbridge-drain\nexit\n!\n";
        let c = format!("{}{marked5}", numbered(&[3, 10]));
        assert!(!drained_route_maps(&c).contains("KUBE-VIP-ROUTES-V4"));
        let d = drain(&c);
        let i = d
            .iter()
            .position(|l| l == "route-map KUBE-VIP-ROUTES-V4 deny 1");
        let j = d
            .iter()
            .position(|l| l == "no route-map KUBE-VIP-ROUTES-V4 deny 5");
        assert!(matches!((i, j), (Some(i), Some(j)) if i < j), "{d:?}");
        allowlisted(&d);
        // Undrain removes it too.
        assert_eq!(undrain(&c)[0], "no route-map KUBE-VIP-ROUTES-V4 deny 5");
    }

    const VIP: &str = "192.0.2.10/32";

    /// `config` as bgpd prints it after the withdrawal of `vips` (IPv4).
    fn withdrawn(config: &str, vips: &[&str]) -> String {
        let mut c = config.to_string();
        for (i, v) in vips.iter().enumerate() {
            c.push_str(&format!(
                "ip prefix-list ribbridge-withdraw-v4 seq {} permit {v}\n",
                5 * (i + 1)
            ));
        }
        c.push_str(
            "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-withdraw\n \
             match ip address prefix-list ribbridge-withdraw-v4\nexit\n!\n",
        );
        c
    }

    #[test]
    fn a_withdrawal_is_one_marked_entry_and_the_prefix_in_ribbridges_list() {
        let vip: Prefix = VIP.parse().expect("prefix");
        let w = withdraw_commands(CONFIG, TABLES, &vip).expect("plan");
        assert_eq!(
            w,
            [
                "route-map KUBE-VIP-ROUTES-V4 deny 1",
                "description ribbridge-withdraw",
                "match ip address prefix-list ribbridge-withdraw-v4",
                "exit",
                "ip prefix-list ribbridge-withdraw-v4 seq 5 permit 192.0.2.10/32",
            ]
        );
        allowlisted(&w);
        // Applied: nothing more to send; the intent sees it withdrawn,
        // another VIP not; the configuration is not drained.
        let c = withdrawn(CONFIG, &[VIP]);
        assert!(
            withdraw_commands(&c, TABLES, &vip)
                .expect("plan")
                .is_empty()
        );
        let intent = parse(&c, None);
        assert!(intent.withdrawn_by_ribbridge(198, &vip));
        let other: Prefix = "192.0.2.11/32".parse().expect("prefix");
        assert!(!intent.withdrawn_by_ribbridge(198, &other));
        assert_eq!(intent.withdraw_listed().collect::<Vec<_>>(), [&vip]);
        assert!(!is_drained(&c, 198));
        // A second VIP joins the list; the entry is already there.
        assert_eq!(
            withdraw_commands(&c, TABLES, &other).expect("plan"),
            ["ip prefix-list ribbridge-withdraw-v4 seq 10 permit 192.0.2.11/32"]
        );
        // The drain goes behind the withdrawal, ahead of the operator's.
        let d = drain(&c);
        assert_eq!(d[0], "route-map KUBE-VIP-ROUTES-V4 deny 2");
        assert!(!d.iter().any(|l| l.starts_with("no route-map")), "{d:?}");
        // A withdrawal behind a drain (the node drained first) is still
        // seen, and not asked again.
        let behind = format!("{DRAINED_V4}{}", withdrawn(CONFIG, &[VIP])).replace(
            "route-map KUBE-VIP-ROUTES-V4 deny 1\n description ribbridge-withdraw",
            "route-map KUBE-VIP-ROUTES-V4 deny 2\n description ribbridge-withdraw",
        );
        assert!(is_drained(&behind, 198));
        assert!(parse(&behind, None).withdrawn_by_ribbridge(198, &vip));
        assert!(
            withdraw_commands(&behind, TABLES, &vip)
                .expect("plan")
                .is_empty()
        );
        // Put back: the last one takes the marked entry with it.
        let r = restore_commands(&c, TABLES, &vip).expect("plan");
        assert_eq!(
            r,
            [
                "no route-map KUBE-VIP-ROUTES-V4 deny 1",
                "no ip prefix-list ribbridge-withdraw-v4 seq 5 permit 192.0.2.10/32",
            ]
        );
        allowlisted(&r);
        let two = withdrawn(CONFIG, &[VIP, "192.0.2.11/32"]);
        assert_eq!(
            restore_commands(&two, TABLES, &vip).expect("plan"),
            ["no ip prefix-list ribbridge-withdraw-v4 seq 5 permit 192.0.2.10/32"]
        );
        assert!(
            restore_commands(CONFIG, TABLES, &vip)
                .expect("plan")
                .is_empty()
        );
    }

    #[test]
    fn only_ribbridges_list_and_host_prefixes_are_allowed() {
        for bad in [
            "ip prefix-list P4 seq 5 permit 192.0.2.10/32",
            "ip prefix-list ribbridge-withdraw-v4 seq 5 permit 0.0.0.0/0",
            "ip prefix-list ribbridge-withdraw-v4 seq 5 deny 192.0.2.10/32",
            "ipv6 prefix-list ribbridge-withdraw-v4 seq 5 permit 2001:db8::1/128",
            "match ip address prefix-list P4",
            "no match ip address prefix-list ribbridge-withdraw-v4",
        ] {
            assert!(allowed_config(bad).is_err(), "{bad}");
        }
        allowlisted(&[
            "ipv6 prefix-list ribbridge-withdraw-v6 seq 5 permit 2001:db8::1/128".to_string(),
            "match ipv6 address prefix-list ribbridge-withdraw-v6".to_string(),
        ]);
    }

    #[test]
    fn a_permit_with_the_mark_is_not_the_drain() {
        let c = format!(
            "{}route-map KUBE-VIP-ROUTES-V4 permit 5\n description ribbridge-drain\nexit\n",
            numbered(&[10])
        );
        assert!(!is_drained(&c, 198));
        assert!(undrain(&c).is_empty());
    }

    #[test]
    fn missing_redistribution_or_route_map_is_an_error() {
        assert!(matches!(
            drain_commands(CONFIG, &[199]),
            Err(DrainPlanError::NoRedistribution { .. })
        ));
        let c = CONFIG.replace(
            "redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4",
            "redistribute table-direct 198",
        );
        let e = undrain_commands(&c, TABLES).expect_err("no route-map");
        assert!(
            e.to_string()
                .contains("'redistribute table-direct 198' has no route-map"),
            "{e}"
        );
    }
}
