//! What bgpd's configuration says should happen to a VIP: the intent.
//!
//! Contract: plain data read from bgpd's (and, for `ip import-table`,
//! zebra's) running configuration text by [`parse`] (like
//! [`Release::from_show_version`], a reading of FRR's text, no I/O), and a
//! pure evaluator of it that answers as FRR does, each rule taken from
//! FRR's source (the functions cited where each is implemented), or says
//! [`Verdict::Unknown`] and names the [`Construct`] it does not evaluate:
//! never a guess.
//!
//! Evaluated: route-map entries in sequence order, permit or deny, with
//! their flow (`on-match next`, `on-match goto N` / `continue N`, `call
//! NAME`) and the sets a later match reads (`set tag`, `set community`,
//! `set comm-list ... delete`, `set large-community`, `set large-comm-list
//! ... delete`); `match ip|ipv6 address prefix-list`, `match ip|ipv6
//! address` (access-lists), `match tag`, `match source-protocol`, `match
//! community` and `match large-community` (standard lists); a route-map or
//! list named but not defined as FRR treats it. A neighbour's outbound
//! policy: its own filters or its peer-group's, distribute-list,
//! prefix-list, filter-list (on the empty AS path of a redistributed
//! route) and route-map in bgpd's order, the well-known communities and
//! RFC 8212. The rest ([`Construct`]) is unknown when the evaluation
//! reaches it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod attrs;
mod eval;
mod lists;
mod outbound;
mod read;
mod verdict;

pub use attrs::Set;
pub use lists::{
    AccessEntry, AccessRule, AsPathEntry, CommunityEntry, CommunityKind, Large, ListEntry,
    ListMode, Lists,
};
pub use read::{imports, needs_zebra, parse, realms_from_show_version};
pub use verdict::{Construct, Denier, FilterKind, Verdict};

// The family is the model's; named here too, where the intent first spoke it.
pub use super::Family;
use super::{Prefix, Release, TableId};
use attrs::Attrs;
use eval::{Eval, Hit};

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
    /// `match ip|ipv6 address NAME` (an access-list).
    AccessList {
        /// The family of the access-list.
        family: Family,
        /// Its name.
        name: String,
    },
    /// `match tag N` (`untagged`: 0).
    Tag(u32),
    /// `match source-protocol WORD`.
    SourceProtocol(String),
    /// `match community NAME [exact-match|any]`.
    Community {
        /// The community-list.
        name: String,
        /// How it compares.
        #[serde(default)]
        mode: ListMode,
    },
    /// `match large-community NAME [exact-match|any]`.
    LargeCommunity {
        /// The large-community-list.
        name: String,
        /// How it compares.
        #[serde(default)]
        mode: ListMode,
    },
    /// Any other match (or a line not recognised), as written: not
    /// evaluated.
    Other(String),
}

/// A permit entry's exit policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMatch {
    /// `on-match next`: go on with the next entry.
    Next,
    /// `on-match goto N` (`continue N`): go on with the first entry whose
    /// sequence is at least N.
    Goto(u32),
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
    /// Its sets that change an attribute a match reads, in the order the
    /// configuration prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<Set>,
    /// `call NAME`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// `on-match next|goto N` (`continue N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_match: Option<OnMatch>,
    /// Its `description` (the drain's entry is marked by one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A neighbour's (or peer-group's) outbound filters in one family, as it
/// sets them itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutPolicy {
    /// `neighbor X route-map M out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route_map: Option<String>,
    /// `neighbor X prefix-list L out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix_list: Option<String>,
    /// `neighbor X distribute-list L out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribute_list: Option<String>,
    /// `neighbor X filter-list L out`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_list: Option<String>,
    /// Outbound options not evaluated (`advertise-map`, `unsuppress-map`,
    /// `capability orf prefix-list`, `maximum-prefix-out`, `soo`), as
    /// written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// `neighbor X remote-as ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteAs {
    /// An AS number.
    Number(u32),
    /// `internal`.
    Internal,
    /// `external`.
    External,
    /// `auto`, or another word.
    Auto,
}

/// One neighbour's (or peer-group's) configuration, as far as its outbound
/// policy goes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerPolicy {
    /// `neighbor X peer-group G`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `neighbor X remote-as ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_as: Option<RemoteAs>,
    /// `neighbor X local-as ...` is set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local_as: bool,
    /// `neighbor X oad` is set.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub oad: bool,
    /// The outbound filters per family.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub out: BTreeMap<Family, OutPolicy>,
}

/// One `aggregate-address` of the default instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aggregate {
    /// The family it sits in.
    pub family: Family,
    /// The aggregate.
    pub prefix: Prefix,
    /// `summary-only` or `suppress-map`: it suppresses routes it covers.
    pub suppresses: bool,
}

/// The default BGP instance's settings the outbound checks read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BgpInstance {
    /// `router bgp ASN`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asn: Option<u32>,
    /// `bgp ebgp-requires-policy` in effect (the `frr defaults` profile's
    /// default unless the configuration says; None: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ebgp_requires_policy: Option<bool>,
    /// `bgp confederation ...` is configured.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confederation: bool,
    /// `bgp graceful-shutdown` (the instance's or the global one).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub graceful_shutdown: bool,
    /// `aggregate-address` lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregates: Vec<Aggregate>,
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
    /// `ip prefix-list`s by name, entries in sequence order (a list with
    /// only a description: no entries).
    #[serde(default)]
    pub ip_prefix_lists: BTreeMap<String, Vec<ListEntry>>,
    /// `ipv6 prefix-list`s by name, entries in sequence order.
    #[serde(default)]
    pub ipv6_prefix_lists: BTreeMap<String, Vec<ListEntry>>,
    /// The lists other than prefix-lists (access-lists, community-lists,
    /// AS-path access-lists).
    #[serde(default, skip_serializing_if = "Lists::is_empty")]
    pub lists: Box<Lists>,
    /// Neighbours and peer-groups of the default instance.
    #[serde(default)]
    pub peers: BTreeMap<String, PeerPolicy>,
    /// The default instance's settings.
    #[serde(default)]
    pub bgp: Box<BgpInstance>,
    /// `bgp route-map delay-timer`, in milliseconds (0: bgpd never
    /// re-applies a changed route-map on its own).
    #[serde(default = "default_delay")]
    pub route_map_delay_ms: u64,
    /// The FRR release whose rules apply (the configuration's `frr
    /// version` line; a caller may set it from `show version`). None: not
    /// known, and what differs between releases is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<Release>,
    /// Whether zebra was built with realm support (`--enable-realms`), so
    /// that a kernel route's realm is its tag: set by the caller from
    /// `show version` ([`realms_from_show_version`]); the running
    /// configuration does not say. None: not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realms: Option<bool>,
}

impl Default for Intent {
    fn default() -> Intent {
        Intent {
            redistributions: Vec::new(),
            imports: None,
            route_maps: BTreeMap::new(),
            ip_prefix_lists: BTreeMap::new(),
            ipv6_prefix_lists: BTreeMap::new(),
            lists: Box::default(),
            peers: BTreeMap::new(),
            bgp: Box::default(),
            route_map_delay_ms: DEFAULT_ROUTE_MAP_DELAY_MS,
            release: None,
            realms: None,
        }
    }
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
        Some(self.redistribute(r, prefix).0)
    }

    /// The outbound policy of `peer` (its own filters, else its
    /// peer-group's) on `prefix`, as redistributed from whichever table
    /// of the configuration brings it to BGP (two that permit it: an
    /// attribute they give differently is unknown; none: every attribute
    /// but the prefix is unknown). A peer the configuration does not name
    /// is unknown.
    pub fn sent_to<'a>(&'a self, peer: &'a str, prefix: &Prefix) -> Verdict<'a> {
        let family = Family::of(prefix);
        let mut source: Option<Attrs> = None;
        for r in &self.redistributions {
            if r.family != family || self.redistribution(r.table, family) != Some(r) {
                continue;
            }
            let attrs = match self.redistribute(r, prefix) {
                (Verdict::Permit, attrs) => attrs,
                (Verdict::Deny { .. }, _) => continue,
                (Verdict::Unknown { .. }, _) => Attrs::unknown(Construct::RouteSource),
            };
            source = Some(match source {
                Some(s) => s.merge(&attrs, Construct::RouteSource),
                None => attrs,
            });
        }
        let attrs = source.unwrap_or_else(|| Attrs::unknown(Construct::RouteSource));
        outbound::sent(self, peer, prefix, &attrs)
    }

    /// The outbound policy of `peer` on `prefix` as redistributed from
    /// `table` (unknown attributes if the table's redistribution does not
    /// permit it or is not evaluated).
    pub fn sent_from<'a>(&'a self, peer: &'a str, table: TableId, prefix: &Prefix) -> Verdict<'a> {
        let attrs = match self
            .redistribution(table, Family::of(prefix))
            .map(|r| self.redistribute(r, prefix))
        {
            Some((Verdict::Permit, attrs)) => attrs,
            _ => Attrs::unknown(Construct::RouteSource),
        };
        outbound::sent(self, peer, prefix, &attrs)
    }

    /// A route-map's verdict on `prefix`, as an outbound map (one not
    /// defined denies); the route's attributes other than its prefix are
    /// unknown.
    pub fn route_map<'a>(&'a self, name: &'a str, prefix: &Prefix) -> Verdict<'a> {
        let mut attrs = Attrs::unknown(Construct::RouteSource);
        Eval {
            intent: self,
            prefix,
        }
        .route_map(name, &mut attrs)
    }

    /// The redistribution's verdict and the route's attributes after it
    /// (as bgpd stores the path: its type, and the graceful-shutdown
    /// community under `bgp graceful-shutdown`).
    fn redistribute<'a>(&'a self, r: &'a Redistribute, prefix: &Prefix) -> (Verdict<'a>, Attrs) {
        let mut attrs = Attrs::redistributed(
            r.direct,
            r.family,
            self.realms,
            self.release.map(|v| v >= Release::new(10, 2)),
        );
        let v = match &r.route_map {
            Some(m) => Eval {
                intent: self,
                prefix,
            }
            .route_map(m, &mut attrs),
            None => Verdict::Permit,
        };
        let mut attrs = attrs.stored(r.direct);
        if self.bgp.graceful_shutdown {
            attrs.add_gshut();
        }
        (v, attrs)
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
        let Some(r) = self.redistribution(table, Family::of(prefix)) else {
            return false;
        };
        let Some(entries) = r.route_map.as_ref().and_then(|m| self.route_maps.get(m)) else {
            return false;
        };
        fn mark(e: &MapEntry) -> Option<&str> {
            e.description.as_deref()
        }
        let attrs = Attrs::redistributed(r.direct, r.family, self.realms, None);
        let eval = Eval {
            intent: self,
            prefix,
        };
        entries
            .iter()
            .filter(|e| e.permit || mark(e) != Some(super::DRAIN_MARK))
            .map(|e| (e, eval.entry(e, &attrs)))
            .find(|(_, hit)| *hit != Hit::No)
            .is_some_and(|(e, hit)| {
                hit == Hit::Yes && !e.permit && mark(e) == Some(super::WITHDRAW_MARK)
            })
    }

    /// The prefix-lists of a family.
    fn prefix_lists(&self, family: Family) -> &BTreeMap<String, Vec<ListEntry>> {
        match family {
            Family::Ipv4 => &self.ip_prefix_lists,
            Family::Ipv6 => &self.ipv6_prefix_lists,
        }
    }

    /// The access-lists of a family.
    fn access_lists(&self, family: Family) -> &BTreeMap<String, Vec<AccessEntry>> {
        match family {
            Family::Ipv4 => &self.lists.ip_access,
            Family::Ipv6 => &self.lists.ipv6_access,
        }
    }

    /// What community 0 (`internet`) means in a community-list: matches
    /// every route before 9.1 (Some(true)), is 0:0 from 9.1 (Some(false)).
    fn internet_rule(&self) -> Option<bool> {
        self.release.map(|r| r < Release::new(9, 1))
    }
}

#[cfg(test)]
mod tests;
