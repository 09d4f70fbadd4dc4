//! What bgpd's configuration says should happen to a VIP: the intent.
//!
//! Contract: plain data read from bgpd's (and, for `ip import-table`,
//! zebra's) running configuration text by [`parse`] (like
//! [`Release::from_show_version`](super::Release::from_show_version), a
//! reading of FRR's text, no I/O), and a pure evaluator of it. The evaluator covers the subset FRR's renderers use (frr-k8s,
//! `ribbridge render`): route-map entries in sequence order, permit or
//! deny, `match ip|ipv6 address prefix-list P`, prefix-list entries with
//! `ge`/`le`; `set` and `description` clauses do not change whether a
//! route passes. Anything else the evaluation reaches (`continue`,
//! `on-match`, `call`, another `match` kind, a route-map or prefix-list
//! that is named but not defined, an outbound filter that is not a
//! route-map) makes the answer [`Verdict::Unknown`], never a guess.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod read;

pub use read::{imports, needs_zebra, parse};

use super::{Prefix, TableId, mask, max_len};

/// An address family of unicast routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// IPv4 unicast.
    Ipv4,
    /// IPv6 unicast.
    Ipv6,
}

impl Family {
    /// The family of a prefix.
    pub fn of(p: &Prefix) -> Family {
        if p.is_ipv4() {
            Family::Ipv4
        } else {
            Family::Ipv6
        }
    }

    /// FRR's word for it (`ipv4`, `ipv6`).
    pub fn name(self) -> &'static str {
        match self {
            Family::Ipv4 => "ipv4",
            Family::Ipv6 => "ipv6",
        }
    }
}

/// One `redistribute table|table-direct N [route-map M]` line of the
/// default BGP instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redistribute {
    /// `router bgp ASN` of the instance it sits in.
    #[serde(default)]
    pub asn: u32,
    /// The address family it sits in.
    pub family: Family,
    /// The kernel table.
    pub table: TableId,
    /// `table-direct` (true) or `table` (through zebra's import).
    pub direct: bool,
    /// Its route-map, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_map: Option<String>,
}

/// One `match` clause of a route-map entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Match {
    /// `match ip|ipv6 address prefix-list NAME`.
    PrefixList {
        /// The family of the prefix-list (`ip` or `ipv6`).
        family: Family,
        /// Its name.
        name: String,
    },
    /// Any other match, as written: not evaluated.
    Other(String),
}

/// One `route-map NAME permit|deny SEQ` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapEntry {
    /// Its sequence number.
    pub seq: u32,
    /// `permit` (true) or `deny`.
    pub permit: bool,
    /// Its match clauses (all must match; none matches every route).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<Match>,
    /// A clause that changes the flow after a match (`continue`,
    /// `on-match`, `call`), as written: a permit that reaches it is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// Its `description` (the drain's entry is marked by one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One prefix-list entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListEntry {
    /// Its sequence number.
    pub seq: u32,
    /// `permit` (true) or `deny`.
    pub permit: bool,
    /// The prefix (`any` is the family's default route with `le` its
    /// maximum length).
    pub prefix: Prefix,
    /// `ge N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ge: Option<u8>,
    /// `le N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub le: Option<u8>,
}

impl ListEntry {
    /// Whether `p` falls in this entry (its family, its range of lengths).
    pub fn covers(&self, p: &Prefix) -> bool {
        let e = &self.prefix;
        if e.is_ipv4() != p.is_ipv4() || p.prefix_len() < e.prefix_len() {
            return false;
        }
        if mask(p.addr(), e.prefix_len()) != e.addr() {
            return false;
        }
        let (lo, hi) = match (self.ge, self.le) {
            (None, None) => (e.prefix_len(), e.prefix_len()),
            (ge, le) => (
                ge.unwrap_or(e.prefix_len()),
                le.unwrap_or(max_len(e.addr())),
            ),
        };
        (lo..=hi).contains(&p.prefix_len())
    }
}

/// A neighbour's outbound filter in one family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutFilter {
    /// `neighbor X route-map M out`.
    RouteMap(String),
    /// Any other outbound filter (a prefix-list, a filter-list, a
    /// distribute-list, or a route-map beside one), as written.
    Other(String),
}

/// One neighbour's (or peer-group's) outbound policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerPolicy {
    /// `neighbor X peer-group G`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The outbound filters per family.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub out: BTreeMap<Family, OutFilter>,
}

/// bgpd's default route-map delay timer (`bgp route-map delay-timer`):
/// bgpd applies a changed route-map this long after the change.
pub const DEFAULT_ROUTE_MAP_DELAY_MS: u64 = 5_000;

fn default_delay() -> u64 {
    DEFAULT_ROUTE_MAP_DELAY_MS
}

/// What the configuration says, as read at one time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// The redistributions of kernel tables in the default instance.
    #[serde(default)]
    pub redistributions: Vec<Redistribute>,
    /// zebra's `ip|ipv6 import-table N` lines, when zebra's configuration
    /// was read (only where a redistribution goes through the import);
    /// None: not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imports: Option<Vec<(Family, TableId)>>,
    /// Route-maps by name, entries in sequence order.
    #[serde(default)]
    pub route_maps: BTreeMap<String, Vec<MapEntry>>,
    /// `ip prefix-list`s by name, entries in sequence order.
    #[serde(default)]
    pub ip_prefix_lists: BTreeMap<String, Vec<ListEntry>>,
    /// `ipv6 prefix-list`s by name, entries in sequence order.
    #[serde(default)]
    pub ipv6_prefix_lists: BTreeMap<String, Vec<ListEntry>>,
    /// Neighbours and peer-groups of the default instance.
    #[serde(default)]
    pub peers: BTreeMap<String, PeerPolicy>,
    /// `bgp route-map delay-timer`, in milliseconds (0: bgpd never
    /// re-applies a changed route-map on its own).
    #[serde(default = "default_delay")]
    pub route_map_delay_ms: u64,
}

impl Default for Intent {
    fn default() -> Intent {
        Intent {
            redistributions: Vec::new(),
            imports: None,
            route_maps: BTreeMap::new(),
            ip_prefix_lists: BTreeMap::new(),
            ipv6_prefix_lists: BTreeMap::new(),
            peers: BTreeMap::new(),
            route_map_delay_ms: DEFAULT_ROUTE_MAP_DELAY_MS,
        }
    }
}

/// The outcome of a policy for one prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// The policy lets the route through.
    Permit,
    /// The policy denies it: the route-map, and the entry that denied it
    /// (None: no entry matched, the route-map's implicit deny).
    Deny {
        /// The route-map.
        route_map: &'a str,
        /// The denying entry's sequence.
        seq: Option<u32>,
    },
    /// The policy cannot be evaluated here.
    Unknown {
        /// The route-map.
        route_map: &'a str,
        /// The entry the evaluation stopped at, if any.
        seq: Option<u32>,
        /// What stopped it.
        why: &'static str,
    },
}

impl std::fmt::Display for Verdict<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Permit => f.write_str("permitted"),
            Verdict::Deny {
                route_map,
                seq: Some(s),
            } => write!(f, "denied by route-map {route_map} seq {s}"),
            Verdict::Deny {
                route_map,
                seq: None,
            } => write!(
                f,
                "denied by route-map {route_map} (no entry matches: implicit deny)"
            ),
            Verdict::Unknown {
                route_map,
                seq: Some(s),
                why,
            } => write!(f, "unknown: route-map {route_map} seq {s} {why}"),
            Verdict::Unknown {
                route_map,
                seq: None,
                why,
            } => write!(f, "unknown: route-map {route_map} {why}"),
        }
    }
}

/// Whether a prefix-list permits, denies or cannot say.
enum ListOutcome {
    Permit,
    Deny,
    Undefined,
}

impl Intent {
    /// The redistribution feeding `table` into BGP in `family`, if the
    /// configuration has one (through zebra's import: only if zebra's
    /// configuration, when read, imports the table in that family).
    pub fn redistribution(&self, table: TableId, family: Family) -> Option<&Redistribute> {
        self.redistributions
            .iter()
            .filter(|r| r.table == table && r.family == family)
            .find(|r| {
                r.direct
                    || self
                        .imports
                        .as_ref()
                        .is_none_or(|i| i.contains(&(family, table)))
            })
    }

    /// The redistribution policy's verdict on `prefix` of `table`; None:
    /// the table is not redistributed in the prefix's family at all.
    pub fn redistributed(&self, table: TableId, prefix: &Prefix) -> Option<Verdict<'_>> {
        let r = self.redistribution(table, Family::of(prefix))?;
        Some(match &r.route_map {
            Some(m) => self.route_map(m, prefix),
            None => Verdict::Permit,
        })
    }

    /// The outbound policy of `peer` (its own, else its peer-group's) on
    /// `prefix`. A peer the configuration does not name is unknown; so is
    /// a member's own route-map beside its group's prefix-list (or other
    /// filter that is not a route-map): bgpd applies both.
    pub fn sent_to<'a>(&'a self, peer: &'a str, prefix: &Prefix) -> Verdict<'a> {
        let family = Family::of(prefix);
        let Some(p) = self.peers.get(peer) else {
            return Verdict::Unknown {
                route_map: "",
                seq: None,
                why: "(the peer is not in the configuration)",
            };
        };
        let group = p
            .group
            .as_ref()
            .and_then(|g| self.peers.get(g))
            .and_then(|g| g.out.get(&family));
        // A member's own filter overrides its group's of the same kind
        // only: the group's prefix-list (filter-list, distribute-list)
        // still applies beside the member's own route-map.
        let filter = match (p.out.get(&family), group) {
            (Some(OutFilter::RouteMap(_)), Some(g @ OutFilter::Other(_))) => Some(g),
            (Some(own), _) => Some(own),
            (None, group) => group,
        };
        match filter {
            None => Verdict::Permit,
            Some(OutFilter::RouteMap(m)) => self.route_map(m, prefix),
            Some(OutFilter::Other(_)) => Verdict::Unknown {
                route_map: "",
                seq: None,
                why: "(an outbound filter other than a route-map)",
            },
        }
    }

    /// A route-map's verdict on `prefix`.
    pub fn route_map<'a>(&'a self, name: &'a str, prefix: &Prefix) -> Verdict<'a> {
        let Some(entries) = self.route_maps.get(name) else {
            return Verdict::Unknown {
                route_map: name,
                seq: None,
                why: "is named but not defined",
            };
        };
        for e in entries {
            let Some(unknown) = self.matches(e, prefix) else {
                continue;
            };
            if let Some(why) = unknown {
                return Verdict::Unknown {
                    route_map: name,
                    seq: Some(e.seq),
                    why,
                };
            }
            if !e.permit {
                return Verdict::Deny {
                    route_map: name,
                    seq: Some(e.seq),
                };
            }
            if e.flow.is_some() {
                return Verdict::Unknown {
                    route_map: name,
                    seq: Some(e.seq),
                    why: "goes on after its permit (continue, on-match or call)",
                };
            }
            return Verdict::Permit;
        }
        Verdict::Deny {
            route_map: name,
            seq: None,
        }
    }

    /// The prefixes ribbridge's withdrawal prefix-lists hold (a VIP of a
    /// `withdraw = true` table taken out of BGP), either family.
    pub fn withdraw_listed(&self) -> impl Iterator<Item = &Prefix> {
        [
            self.ip_prefix_lists.get(super::WITHDRAW_LIST_V4),
            self.ipv6_prefix_lists.get(super::WITHDRAW_LIST_V6),
        ]
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.permit)
        .map(|e| &e.prefix)
    }

    /// `prefix` of `table` is held back by ribbridge's withdrawal: the
    /// first entry of the redistribution's route-map that matches it, the
    /// drain's entry aside (it denies every VIP, and a drain may come and
    /// go over a withdrawal), is the deny marked
    /// [`WITHDRAW_MARK`](super::WITHDRAW_MARK).
    pub fn withdrawn_by_ribbridge(&self, table: TableId, prefix: &Prefix) -> bool {
        // No withdrawal at all (the usual case) costs one lookup: every
        // VIP bgpd does not send is asked.
        let list = match Family::of(prefix) {
            Family::Ipv4 => self.ip_prefix_lists.get(super::WITHDRAW_LIST_V4),
            Family::Ipv6 => self.ipv6_prefix_lists.get(super::WITHDRAW_LIST_V6),
        };
        if list.is_none_or(|l| !l.iter().any(|e| e.permit && e.prefix == *prefix)) {
            return false;
        }
        let Some(entries) = self
            .redistribution(table, Family::of(prefix))
            .and_then(|r| r.route_map.as_ref())
            .and_then(|m| self.route_maps.get(m))
        else {
            return false;
        };
        fn mark(e: &MapEntry) -> Option<&str> {
            e.description.as_deref()
        }
        entries
            .iter()
            .filter(|e| e.permit || mark(e) != Some(super::DRAIN_MARK))
            .find_map(|e| self.matches(e, prefix).map(|unknown| (e, unknown)))
            .is_some_and(|(e, unknown)| {
                unknown.is_none() && !e.permit && mark(e) == Some(super::WITHDRAW_MARK)
            })
    }

    /// Whether entry `e` matches `prefix`: None, it does not; Some(None),
    /// it does; Some(Some(why)), unknown, for the reason `why`.
    fn matches(&self, e: &MapEntry, prefix: &Prefix) -> Option<Option<&'static str>> {
        let mut unknown = None;
        for m in &e.matches {
            match m {
                Match::PrefixList { family, name } => match self.list(*family, name, prefix) {
                    ListOutcome::Permit => {}
                    ListOutcome::Deny => return None,
                    ListOutcome::Undefined => {
                        unknown.get_or_insert("matches a prefix-list that is not defined");
                    }
                },
                Match::Other(_) => {
                    unknown.get_or_insert("has a match clause ribbridge does not evaluate");
                }
            }
        }
        Some(unknown)
    }

    fn list(&self, family: Family, name: &str, prefix: &Prefix) -> ListOutcome {
        let lists = match family {
            Family::Ipv4 => &self.ip_prefix_lists,
            Family::Ipv6 => &self.ipv6_prefix_lists,
        };
        // A list of the other family never matches, defined or not.
        if Family::of(prefix) != family {
            return ListOutcome::Deny;
        }
        let Some(entries) = lists.get(name).filter(|e| !e.is_empty()) else {
            return ListOutcome::Undefined;
        };
        match entries.iter().find(|e| e.covers(prefix)) {
            Some(e) if e.permit => ListOutcome::Permit,
            _ => ListOutcome::Deny,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Prefix {
        s.parse().unwrap()
    }

    fn entry(seq: u32, permit: bool, prefix: &str, ge: Option<u8>, le: Option<u8>) -> ListEntry {
        ListEntry {
            seq,
            permit,
            prefix: p(prefix),
            ge,
            le,
        }
    }

    fn vip_map(intent: &mut Intent, name: &str, list: &str) {
        intent.route_maps.insert(
            name.to_string(),
            vec![
                MapEntry {
                    seq: 10,
                    permit: true,
                    matches: vec![Match::PrefixList {
                        family: Family::Ipv4,
                        name: list.to_string(),
                    }],
                    flow: None,
                    description: None,
                },
                MapEntry {
                    seq: 20,
                    permit: false,
                    matches: vec![],
                    flow: None,
                    description: None,
                },
            ],
        );
    }

    #[test]
    fn ranges_follow_ge_and_le() {
        let exact = entry(5, true, "192.0.2.0/24", None, None);
        assert!(exact.covers(&p("192.0.2.0/24")));
        assert!(!exact.covers(&p("192.0.2.10/32")));
        let le = entry(5, true, "192.0.2.0/24", None, Some(32));
        assert!(le.covers(&p("192.0.2.10/32")) && le.covers(&p("192.0.2.0/24")));
        assert!(!le.covers(&p("192.0.3.10/32")));
        let ge = entry(5, true, "10.0.0.0/8", Some(30), None);
        assert!(ge.covers(&p("10.1.2.4/30")) && ge.covers(&p("10.1.2.4/32")));
        assert!(!ge.covers(&p("10.1.0.0/16")));
        let any = entry(5, true, "0.0.0.0/0", None, Some(32));
        assert!(any.covers(&p("198.51.100.1/32")));
        assert!(!any.covers(&p("2001:db8::1/128")));
    }

    #[test]
    fn the_first_matching_entry_decides() {
        let mut i = Intent::default();
        vip_map(&mut i, "VIPS", "PL");
        i.ip_prefix_lists.insert(
            "PL".to_string(),
            vec![
                entry(5, false, "192.0.2.11/32", None, None),
                entry(10, true, "192.0.2.0/24", None, Some(32)),
            ],
        );
        assert_eq!(i.route_map("VIPS", &p("192.0.2.10/32")), Verdict::Permit);
        // Denied by the prefix-list: the map's own deny 20 says no.
        assert_eq!(
            i.route_map("VIPS", &p("192.0.2.11/32")),
            Verdict::Deny {
                route_map: "VIPS",
                seq: Some(20)
            }
        );
        // An IPv6 prefix never matches an `ip` prefix-list.
        assert_eq!(
            i.route_map("VIPS", &p("2001:db8::1/128")),
            Verdict::Deny {
                route_map: "VIPS",
                seq: Some(20)
            }
        );
        // Without the deny entry, the implicit deny.
        i.route_maps.get_mut("VIPS").unwrap().pop();
        assert_eq!(
            i.route_map("VIPS", &p("198.51.100.1/32")),
            Verdict::Deny {
                route_map: "VIPS",
                seq: None
            }
        );
    }

    #[test]
    fn what_is_not_evaluated_is_unknown_only_when_reached() {
        let mut i = Intent::default();
        vip_map(&mut i, "VIPS", "PL");
        i.ip_prefix_lists.insert(
            "PL".to_string(),
            vec![entry(10, true, "192.0.2.10/32", None, None)],
        );
        // A `match tag` ahead of the permit: reached by every route.
        let tag = MapEntry {
            seq: 5,
            permit: false,
            matches: vec![Match::Other("match tag 7".to_string())],
            flow: None,
            description: None,
        };
        i.route_maps.get_mut("VIPS").unwrap().insert(0, tag.clone());
        assert!(matches!(
            i.route_map("VIPS", &p("192.0.2.10/32")),
            Verdict::Unknown { seq: Some(5), .. }
        ));
        // Behind the permit: the permit decides first.
        let m = i.route_maps.get_mut("VIPS").unwrap();
        m.remove(0);
        m.push(MapEntry { seq: 30, ..tag });
        assert_eq!(i.route_map("VIPS", &p("192.0.2.10/32")), Verdict::Permit);
        // A permit with `continue` is unknown; an undefined list or map too.
        i.route_maps.get_mut("VIPS").unwrap()[0].flow = Some("continue".to_string());
        assert!(matches!(
            i.route_map("VIPS", &p("192.0.2.10/32")),
            Verdict::Unknown { seq: Some(10), .. }
        ));
        assert!(matches!(
            i.route_map("NOPE", &p("192.0.2.10/32")),
            Verdict::Unknown { seq: None, .. }
        ));
        i.ip_prefix_lists.clear();
        assert!(matches!(
            i.route_map("VIPS", &p("192.0.2.10/32")),
            Verdict::Unknown { seq: Some(10), .. }
        ));
    }

    #[test]
    fn redistribution_per_family_and_through_the_import() {
        let mut i = Intent::default();
        i.redistributions.push(Redistribute {
            asn: 64512,
            family: Family::Ipv4,
            table: 198,
            direct: false,
            route_map: None,
        });
        assert_eq!(
            i.redistributed(198, &p("192.0.2.10/32")),
            Some(Verdict::Permit)
        );
        assert_eq!(i.redistributed(198, &p("2001:db8::10/128")), None);
        assert_eq!(i.redistributed(199, &p("192.0.2.10/32")), None);
        // zebra's configuration read and without the import: nothing flows.
        i.imports = Some(vec![]);
        assert_eq!(i.redistributed(198, &p("192.0.2.10/32")), None);
        i.imports = Some(vec![(Family::Ipv4, 198)]);
        assert!(i.redistributed(198, &p("192.0.2.10/32")).is_some());
    }

    #[test]
    fn outbound_policy_of_a_peer_or_its_group() {
        let mut i = Intent::default();
        vip_map(&mut i, "OUT", "PL");
        i.ip_prefix_lists.insert(
            "PL".to_string(),
            vec![entry(1, true, "192.0.2.10/32", None, None)],
        );
        let mut g = PeerPolicy::default();
        g.out
            .insert(Family::Ipv4, OutFilter::RouteMap("OUT".to_string()));
        i.peers.insert("G".to_string(), g);
        i.peers.insert(
            "198.18.1.1".to_string(),
            PeerPolicy {
                group: Some("G".to_string()),
                ..PeerPolicy::default()
            },
        );
        i.peers
            .insert("198.18.2.1".to_string(), PeerPolicy::default());
        assert_eq!(
            i.sent_to("198.18.1.1", &p("192.0.2.10/32")),
            Verdict::Permit
        );
        assert!(matches!(
            i.sent_to("198.18.1.1", &p("192.0.2.11/32")),
            Verdict::Deny { .. }
        ));
        assert_eq!(
            i.sent_to("198.18.2.1", &p("192.0.2.11/32")),
            Verdict::Permit
        );
        assert!(matches!(
            i.sent_to("198.18.9.9", &p("192.0.2.11/32")),
            Verdict::Unknown { .. }
        ));
        // The member's own route-map overrides the group's route-map...
        vip_map(&mut i, "OWN", "OTHER");
        i.ip_prefix_lists.insert(
            "OTHER".to_string(),
            vec![entry(1, true, "192.0.2.11/32", None, None)],
        );
        i.peers
            .get_mut("198.18.1.1")
            .unwrap()
            .out
            .insert(Family::Ipv4, OutFilter::RouteMap("OWN".to_string()));
        assert_eq!(
            i.sent_to("198.18.1.1", &p("192.0.2.11/32")),
            Verdict::Permit
        );
        // ...but not its prefix-list, which bgpd applies beside it (the
        // differential test against bgpd found it: a group's `prefix-list
        // out` denied what the member's route-map permitted).
        i.peers.get_mut("G").unwrap().out.insert(
            Family::Ipv4,
            OutFilter::Other("prefix-list out".to_string()),
        );
        assert!(matches!(
            i.sent_to("198.18.1.1", &p("192.0.2.11/32")),
            Verdict::Unknown { .. }
        ));
    }
}
