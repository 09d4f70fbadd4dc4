//! The lists a policy consults, and how each answers for one route:
//! prefix-lists, access-lists (`match ip address NAME`, distribute-lists),
//! community-lists and large-community-lists, AS-path access-lists.
//!
//! Contract: plain data as bgpd's running configuration prints it, and pure
//! functions that answer exactly as FRR's do (each cites the FRR function
//! its rule comes from), or say which construct they cannot evaluate.

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr};

use serde::{Deserialize, Serialize};

use super::Construct;
use crate::model::{Prefix, mask, max_len};

/// A large community (`GLOBAL:LOCAL1:LOCAL2`).
pub type Large = (u32, u32, u32);

/// The lists of bgpd's configuration other than prefix-lists, by name,
/// entries in sequence order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lists {
    /// `access-list`s.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ip_access: BTreeMap<String, Vec<AccessEntry>>,
    /// `ipv6 access-list`s.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ipv6_access: BTreeMap<String, Vec<AccessEntry>>,
    /// `bgp community-list`s (by name or number).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub community: BTreeMap<String, Vec<CommunityEntry>>,
    /// `bgp large-community-list`s (by name or number).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub large_community: BTreeMap<String, Vec<CommunityEntry>>,
    /// `bgp as-path access-list`s.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub as_path: BTreeMap<String, Vec<AsPathEntry>>,
}

impl Lists {
    /// No list at all.
    pub fn is_empty(&self) -> bool {
        *self == Lists::default()
    }
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
    /// Whether `p` falls in this entry (its family, its range of lengths):
    /// lib/plist.c, `prefix_list_entry_match` (no `ge`/`le`: the exact
    /// length; else `le` bounds above, `ge` below).
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

/// A prefix-list's answer for one prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlistAnswer {
    /// No such list: `prefix_list_apply` on NULL denies.
    Undefined,
    /// Defined without entries (only a description): `prefix_list_apply`
    /// permits every prefix.
    Empty,
    /// The first covering entry (lowest sequence) permits or denies.
    Entry(u32, bool),
    /// No entry covers it: denied.
    NoEntry,
}

/// lib/plist.c, `prefix_list_apply_ext`: NULL denies, a list without
/// entries permits, else the covering entry of the lowest sequence decides,
/// none denies.
pub(super) fn prefix_list(entries: Option<&[ListEntry]>, p: &Prefix) -> PlistAnswer {
    match entries {
        None => PlistAnswer::Undefined,
        Some([]) => PlistAnswer::Empty,
        Some(es) => es
            .iter()
            .find(|e| e.covers(p))
            .map_or(PlistAnswer::NoEntry, |e| {
                PlistAnswer::Entry(e.seq, e.permit)
            }),
    }
}

/// What one access-list entry matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessRule {
    /// `A.B.C.D/M [exact-match]` (or IPv6): every prefix inside it, or
    /// (exact-match) that one prefix only.
    Prefix {
        /// The prefix.
        prefix: Prefix,
        /// `exact-match`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        exact: bool,
    },
    /// `any`: every prefix of the list's family.
    Any,
    /// The Cisco form `A.B.C.D` (`host A.B.C.D`): a prefix whose address is
    /// that one, whatever its length.
    Host(Ipv4Addr),
    /// The Cisco form `A.B.C.D W.W.W.W` (wildcard bits).
    Network {
        /// The address as written.
        addr: Ipv4Addr,
        /// The wildcard (bits set: ignored).
        wildcard: Ipv4Addr,
    },
    /// Any other form (extended `ip ...`, IPv6 wildcards), as written.
    Unparsed(String),
}

impl AccessRule {
    /// lib/filter.c, `filter_match_zebra` and `filter_match_cisco(_ipv4)`;
    /// None: a form this reader does not evaluate. The family is the
    /// list's (an `access-list` is only ever applied to IPv4 prefixes, an
    /// `ipv6 access-list` to IPv6 ones).
    fn matches(&self, p: &Prefix) -> Option<bool> {
        Some(match self {
            AccessRule::Prefix { prefix, exact } => {
                prefix.is_ipv4() == p.is_ipv4()
                    && (!exact || prefix.prefix_len() == p.prefix_len())
                    && p.prefix_len() >= prefix.prefix_len()
                    && mask(p.addr(), prefix.prefix_len()) == prefix.addr()
            }
            AccessRule::Any => true,
            // (p & ~wildcard) == addr: the address as written, not masked
            // (a host's wildcard is 0), the length not looked at.
            AccessRule::Host(a) => cisco(p, *a, Ipv4Addr::UNSPECIFIED),
            AccessRule::Network { addr, wildcard } => cisco(p, *addr, *wildcard),
            AccessRule::Unparsed(_) => return None,
        })
    }
}

fn cisco(p: &Prefix, addr: Ipv4Addr, wildcard: Ipv4Addr) -> bool {
    match p.addr() {
        IpAddr::V4(a) => u32::from(a) & !u32::from(wildcard) == u32::from(addr),
        IpAddr::V6(_) => false,
    }
}

/// One `access-list NAME seq N permit|deny ...` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessEntry {
    /// Its sequence number.
    pub seq: u32,
    /// `permit` (true) or `deny`.
    pub permit: bool,
    /// What it matches.
    pub rule: AccessRule,
}

/// An access-list's answer: lib/filter.c, `access_list_apply`: NULL denies,
/// the first matching entry decides, none denies. Ok((permit, the deciding
/// entry's sequence if any)), or the construct it cannot evaluate with the
/// sequence of the entry it stopped at.
pub(super) fn access_list(
    entries: Option<&[AccessEntry]>,
    p: &Prefix,
) -> Result<(bool, Option<u32>), (Construct, u32)> {
    for e in entries.unwrap_or_default() {
        match e.rule.matches(p) {
            Some(true) => return Ok((e.permit, Some(e.seq))),
            Some(false) => {}
            None => return Err((Construct::AccessListEntry, e.seq)),
        }
    }
    Ok((false, None))
}

/// What one community-list entry holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommunityKind {
    /// A standard community-list entry's communities (sorted, once each).
    Standard(Vec<u32>),
    /// A standard large-community-list entry's communities.
    Large(Vec<Large>),
    /// An expanded (regular expression) entry, as written: not evaluated.
    Expanded(String),
    /// An entry this reader could not read (a community alias, say).
    Unparsed(String),
}

impl CommunityKind {
    /// A standard entry's communities.
    fn standard(&self) -> Option<&[u32]> {
        match self {
            CommunityKind::Standard(vals) => Some(vals),
            _ => None,
        }
    }

    /// A large entry's communities.
    fn large(&self) -> Option<&[Large]> {
        match self {
            CommunityKind::Large(vals) => Some(vals),
            _ => None,
        }
    }
}

/// One `bgp community-list` or `bgp large-community-list` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommunityEntry {
    /// Its sequence number.
    pub seq: u32,
    /// `permit` (true) or `deny`.
    pub permit: bool,
    /// What it holds.
    pub kind: CommunityKind,
}

/// How `match community|large-community NAME` compares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ListMode {
    /// The entry's communities are all on the route.
    #[default]
    Subset,
    /// `exact-match`: the route has exactly the entry's communities.
    Exact,
    /// `any` (9.1 and later): one of the route's communities is the entry's.
    Any,
}

/// Community 0 (`internet`): before FRR 9.1 an entry holding it matches
/// every route (bgpd/bgp_clist.c, `community_list_match`,
/// `community_list_exact_match`, `community_list_match_delete`: the
/// `COMMUNITY_INTERNET` test, removed in 9.1); from 9.1 it is a community
/// like another. `internet`: Some(true) before 9.1, Some(false) after,
/// None when the release is not known.
pub(super) const INTERNET: u32 = 0;

/// Whether an entry's community set makes the release matter.
fn internet_rule(vals: &[u32], internet: Option<bool>) -> Result<bool, Construct> {
    if !vals.contains(&INTERNET) {
        return Ok(false);
    }
    internet.ok_or(Construct::CommunityInternet)
}

/// `match community NAME [exact-match|any]` on a route's communities
/// (empty: the route has none). bgpd/bgp_routemap.c,
/// `route_match_community`: an undefined list does not match; `any` on a
/// route without communities answers RMAP_OKAY, which lib/routemap.c,
/// `route_map_apply_match` neither matches nor rejects (unknown here).
/// bgpd/bgp_clist.c: `community_list_match` (the first entry whose
/// communities are all on the route decides: bgp_community.c,
/// `community_match`), `community_list_exact_match` (`community_cmp`: the
/// same set), `community_list_any_match` (for each of the route's
/// communities in order, the first entry holding it decides).
pub(super) fn community_match(
    entries: Option<&[CommunityEntry]>,
    route: &BTreeSet<u32>,
    mode: ListMode,
    internet: Option<bool>,
) -> Result<bool, (Construct, Option<u32>)> {
    list_match(entries, route, mode, CommunityKind::standard, |vals| {
        internet_rule(vals, internet)
    })
}

/// `match large-community NAME [exact-match|any]`: bgpd/bgp_routemap.c,
/// `route_match_lcommunity`; bgpd/bgp_clist.c, `lcommunity_list_match`
/// (`lcommunity_match`: subset), `lcommunity_list_exact_match`
/// (`lcommunity_cmp`), `lcommunity_list_any_match`. No `internet` rule.
pub(super) fn large_match(
    entries: Option<&[CommunityEntry]>,
    route: &BTreeSet<Large>,
    mode: ListMode,
) -> Result<bool, (Construct, Option<u32>)> {
    list_match(entries, route, mode, CommunityKind::large, |_| Ok(false))
}

/// A community-list's match, standard or large: `kind` is an entry's
/// values of the list's kind (None: an entry not evaluated), `rule` an
/// entry's rule that decides before its values (standard lists'
/// `internet`).
fn list_match<T: Ord>(
    entries: Option<&[CommunityEntry]>,
    route: &BTreeSet<T>,
    mode: ListMode,
    kind: fn(&CommunityKind) -> Option<&[T]>,
    rule: impl Fn(&[T]) -> Result<bool, Construct>,
) -> Result<bool, (Construct, Option<u32>)> {
    let Some(entries) = entries else {
        return Ok(false);
    };
    if mode == ListMode::Any {
        if route.is_empty() {
            return Err((Construct::MatchCommunityAny, None));
        }
        for v in route {
            for e in entries {
                match kind(&e.kind) {
                    Some(vals) if vals.contains(v) => return Ok(e.permit),
                    Some(_) => {}
                    None => return Err((unevaluated(&e.kind), Some(e.seq))),
                }
            }
        }
        return Ok(false);
    }
    for e in entries {
        let Some(vals) = kind(&e.kind) else {
            return Err((unevaluated(&e.kind), Some(e.seq)));
        };
        if rule(vals).map_err(|c| (c, Some(e.seq)))? {
            return Ok(e.permit);
        }
        let hit = match mode {
            ListMode::Exact => !route.is_empty() && route.iter().eq(vals.iter()),
            _ => !route.is_empty() && vals.iter().all(|v| route.contains(v)),
        };
        if hit {
            return Ok(e.permit);
        }
    }
    Ok(false)
}

fn unevaluated(kind: &CommunityKind) -> Construct {
    match kind {
        CommunityKind::Expanded(_) => Construct::ExpandedCommunityList,
        _ => Construct::CommunityListEntry,
    }
}

/// `set comm-list NAME delete`: bgpd/bgp_routemap.c,
/// `route_set_community_delete` (no list or no communities: unchanged);
/// bgpd/bgp_clist.c, `community_list_match_delete`: each of the route's
/// communities is deleted when the first entry holding it (before 9.1: or
/// holding `internet`) is a permit.
pub(super) fn community_delete(
    entries: Option<&[CommunityEntry]>,
    route: &BTreeSet<u32>,
    internet: Option<bool>,
) -> Result<BTreeSet<u32>, Construct> {
    let Some(entries) = entries else {
        return Ok(route.clone());
    };
    let mut kept = BTreeSet::new();
    for v in route {
        let mut delete = false;
        for e in entries {
            let CommunityKind::Standard(vals) = &e.kind else {
                return Err(unevaluated(&e.kind));
            };
            if internet_rule(vals, internet)? || vals.contains(v) {
                delete = e.permit;
                break;
            }
        }
        if !delete {
            kept.insert(*v);
        }
    }
    Ok(kept)
}

/// `set large-comm-list NAME delete`: bgpd/bgp_routemap.c,
/// `route_set_lcommunity_delete`; bgpd/bgp_clist.c,
/// `lcommunity_list_match_delete` (as for communities, no `internet`).
pub(super) fn large_delete(
    entries: Option<&[CommunityEntry]>,
    route: &BTreeSet<Large>,
) -> Result<BTreeSet<Large>, Construct> {
    let Some(entries) = entries else {
        return Ok(route.clone());
    };
    let mut kept = BTreeSet::new();
    for v in route {
        let mut delete = false;
        for e in entries {
            let CommunityKind::Large(vals) = &e.kind else {
                return Err(unevaluated(&e.kind));
            };
            if vals.contains(v) {
                delete = e.permit;
                break;
            }
        }
        if !delete {
            kept.insert(*v);
        }
    }
    Ok(kept)
}

/// One `bgp as-path access-list NAME seq N permit|deny REGEX` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsPathEntry {
    /// Its sequence number.
    pub seq: u32,
    /// `permit` (true) or `deny`.
    pub permit: bool,
    /// The regular expression, as written.
    pub regex: String,
}

/// Whether an AS-path regular expression matches the empty AS path (the
/// string "" that bgpd/bgp_regex.c, `bgp_regexec`, matches a locally
/// originated route's path with, `_` standing for `(^|[,{}() ]|$)`), for
/// the forms whose answer is certain: only anchors and `_` (matches), `.*`
/// anchored or not (matches), anchors, `_`, spaces and at least one digit
/// and nothing else (every digit must appear: no match). None otherwise.
pub(super) fn regex_matches_empty(re: &str) -> Option<bool> {
    if re.chars().all(|c| matches!(c, '^' | '$' | '_')) {
        return Some(true);
    }
    if matches!(re, ".*" | "^.*" | ".*$" | "^.*$") {
        return Some(true);
    }
    let plain = re
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '^' | '$' | '_' | ' '));
    if plain && re.chars().any(|c| c.is_ascii_digit()) {
        return Some(false);
    }
    None
}

/// An AS-path access-list's answer on the empty AS path: bgpd/bgp_filter.c,
/// `as_list_apply`: NULL denies, the first matching entry decides, none
/// denies. Ok((permit, the deciding entry's sequence)), or the sequence of
/// the entry whose expression is not evaluated.
pub(super) fn as_path_list_on_empty(
    entries: Option<&[AsPathEntry]>,
) -> Result<(bool, Option<u32>), u32> {
    for e in entries.unwrap_or_default() {
        match regex_matches_empty(&e.regex) {
            Some(true) => return Ok((e.permit, Some(e.seq))),
            Some(false) => {}
            None => return Err(e.seq),
        }
    }
    Ok((false, None))
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

    /// lib/plist.c, `prefix_list_apply_ext`: NULL denies, no entries
    /// permits, the lowest covering sequence decides.
    #[test]
    fn prefix_list_undefined_empty_and_first_entry() {
        let vip = p("192.0.2.10/32");
        assert_eq!(prefix_list(None, &vip), PlistAnswer::Undefined);
        assert_eq!(prefix_list(Some(&[]), &vip), PlistAnswer::Empty);
        let l = [
            entry(5, false, "192.0.2.10/32", None, None),
            entry(10, true, "192.0.2.0/24", None, Some(32)),
        ];
        assert_eq!(prefix_list(Some(&l), &vip), PlistAnswer::Entry(5, false));
        assert_eq!(
            prefix_list(Some(&l), &p("192.0.2.11/32")),
            PlistAnswer::Entry(10, true)
        );
        assert_eq!(
            prefix_list(Some(&l), &p("198.51.100.1/32")),
            PlistAnswer::NoEntry
        );
    }

    /// lib/filter.c, `filter_match_zebra`, `filter_match_cisco_ipv4`,
    /// `access_list_apply`.
    #[test]
    fn access_list_forms() {
        let vip = p("192.0.2.10/32");
        let e = |seq, permit, rule| AccessEntry { seq, permit, rule };
        let zebra = |s: &str, exact| AccessRule::Prefix {
            prefix: p(s),
            exact,
        };
        // Inside the prefix: matches; exact-match wants the same length.
        let l = [e(5, true, zebra("192.0.2.0/24", false))];
        assert_eq!(access_list(Some(&l), &vip), Ok((true, Some(5))));
        let l = [e(5, true, zebra("192.0.2.0/24", true))];
        assert_eq!(access_list(Some(&l), &vip), Ok((false, None)));
        // Undefined or no matching entry: the implicit deny.
        assert_eq!(access_list(None, &vip), Ok((false, None)));
        // The Cisco host form compares the address only.
        let host = AccessRule::Host("192.0.2.10".parse().unwrap());
        assert_eq!(
            access_list(Some(&[e(1, false, host)]), &vip),
            Ok((false, Some(1)))
        );
        // Wildcard bits: the address as written is compared unmasked.
        let net = |a: &str, w: &str| AccessRule::Network {
            addr: a.parse().unwrap(),
            wildcard: w.parse().unwrap(),
        };
        let l = [e(1, true, net("192.0.2.0", "0.0.0.255"))];
        assert_eq!(access_list(Some(&l), &vip), Ok((true, Some(1))));
        let l = [e(1, true, net("192.0.2.5", "0.0.0.255"))];
        assert_eq!(access_list(Some(&l), &vip), Ok((false, None)));
        // An extended entry ahead of the decision: unknown.
        let l = [
            e(1, true, AccessRule::Unparsed("ip any any".into())),
            e(2, true, AccessRule::Any),
        ];
        assert_eq!(
            access_list(Some(&l), &vip),
            Err((Construct::AccessListEntry, 1))
        );
    }

    fn std_entry(seq: u32, permit: bool, vals: &[u32]) -> CommunityEntry {
        CommunityEntry {
            seq,
            permit,
            kind: CommunityKind::Standard(vals.to_vec()),
        }
    }

    /// bgpd/bgp_clist.c, `community_list_match`, `_exact_match`,
    /// `_any_match`; bgp_community.c `community_match` on no communities.
    #[test]
    fn community_list_modes() {
        let c = |a: u32, b: u32| (a << 16) | b;
        let l = [
            std_entry(5, true, &[c(64512, 1)]),
            std_entry(10, false, &[c(64512, 2)]),
        ];
        let route: BTreeSet<u32> = [c(64512, 1), c(64512, 9)].into();
        let none = BTreeSet::new();
        let m = |r, mode| community_match(Some(&l), r, mode, Some(false));
        assert_eq!(m(&route, ListMode::Subset), Ok(true));
        assert_eq!(m(&route, ListMode::Exact), Ok(false));
        assert_eq!(m(&route, ListMode::Any), Ok(true));
        // No communities: nothing matches; `any` answers neither way.
        assert_eq!(m(&none, ListMode::Subset), Ok(false));
        assert!(m(&none, ListMode::Any).is_err());
        // Undefined: no match.
        assert_eq!(
            community_match(None, &route, ListMode::Subset, None),
            Ok(false)
        );
        // An expanded entry reached: unknown.
        let l = [CommunityEntry {
            seq: 1,
            permit: true,
            kind: CommunityKind::Expanded("^64512:".into()),
        }];
        assert_eq!(
            community_match(Some(&l), &route, ListMode::Subset, None),
            Err((Construct::ExpandedCommunityList, Some(1)))
        );
    }

    /// `internet` (0) before 9.1 matches every route, even one without
    /// communities; from 9.1 it is the community 0:0.
    #[test]
    fn internet_depends_on_the_release() {
        let l = [std_entry(5, true, &[INTERNET])];
        let none = BTreeSet::new();
        assert_eq!(
            community_match(Some(&l), &none, ListMode::Subset, Some(true)),
            Ok(true)
        );
        assert_eq!(
            community_match(Some(&l), &none, ListMode::Subset, Some(false)),
            Ok(false)
        );
        assert_eq!(
            community_match(Some(&l), &none, ListMode::Subset, None),
            Err((Construct::CommunityInternet, Some(5)))
        );
    }

    /// bgpd/bgp_clist.c, `community_list_match_delete`: per community,
    /// the first entry holding it decides; a deny keeps it.
    #[test]
    fn comm_list_delete_per_community() {
        let l = [std_entry(5, false, &[2]), std_entry(10, true, &[1, 2, 3])];
        let route: BTreeSet<u32> = [1, 2, 4].into();
        assert_eq!(
            community_delete(Some(&l), &route, Some(false)),
            Ok([2, 4].into())
        );
        assert_eq!(community_delete(None, &route, None), Ok(route.clone()));
    }

    #[test]
    fn large_lists() {
        let l = [CommunityEntry {
            seq: 5,
            permit: true,
            kind: CommunityKind::Large(vec![(64512, 1, 1)]),
        }];
        let route: BTreeSet<Large> = [(64512, 1, 1), (64512, 2, 2)].into();
        assert_eq!(large_match(Some(&l), &route, ListMode::Subset), Ok(true));
        assert_eq!(large_match(Some(&l), &route, ListMode::Exact), Ok(false));
        assert_eq!(large_delete(Some(&l), &route), Ok([(64512, 2, 2)].into()));
    }

    /// bgpd/bgp_regex.c: `_` is `(^|[,{}() ]|$)`; a locally originated
    /// route's AS path is the empty string.
    #[test]
    fn as_path_regexes_on_the_empty_path() {
        assert_eq!(regex_matches_empty("^$"), Some(true));
        assert_eq!(regex_matches_empty("_"), Some(true));
        assert_eq!(regex_matches_empty(".*"), Some(true));
        assert_eq!(regex_matches_empty("_64512_"), Some(false));
        assert_eq!(regex_matches_empty("^64512 64513$"), Some(false));
        assert_eq!(regex_matches_empty("^(64512)?$"), None);
        assert_eq!(regex_matches_empty("[0-9]*"), None);
        let e = |seq, permit, re: &str| AsPathEntry {
            seq,
            permit,
            regex: re.into(),
        };
        let l = [e(5, false, "_64512_"), e(10, true, "^$")];
        assert_eq!(as_path_list_on_empty(Some(&l)), Ok((true, Some(10))));
        assert_eq!(as_path_list_on_empty(None), Ok((false, None)));
        let l = [e(5, true, "^6451[0-9]$")];
        assert_eq!(as_path_list_on_empty(Some(&l)), Err(5));
    }
}
