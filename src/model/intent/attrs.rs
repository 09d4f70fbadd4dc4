//! The attributes of the route a policy sees, as far as the evaluator
//! tracks them (its source protocol, tag, communities, large communities,
//! whether its AS path is still empty), and the `set` clauses that change
//! them on the way.
//!
//! Contract: a route-map's `match` on one of these attributes reads what
//! the earlier permits of the same evaluation set (FRR applies a permit's
//! sets to the route before going on: lib/routemap.c,
//! `route_map_apply_ext`); the outbound policy reads what the
//! redistribution's route-map set. An attribute ribbridge cannot compute
//! is unknown with the construct that made it so, which becomes the
//! verdict only if a later match reads it.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::lists::{self, Large};
use super::{Construct, Family, Intent};

/// A value, or why it is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Known<T> {
    /// The value.
    Is(T),
    /// Not known, for this reason.
    Not(Construct),
}

/// The zebra route type bgpd gave the route (what `match source-protocol`
/// compares: bgpd/bgp_routemap.c, `route_match_source_protocol`, compares
/// the path's type with `proto_name2num` of the word, case-insensitively).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// Type 0 (`system`): what the redistribution's route-map sees before
    /// FRR 10.2 (bgpd/bgp_route.c, `bgp_redistribute_add`, set the path's
    /// type only from 10.2).
    System,
    /// `table-direct` (10.x `redistribute table-direct N`: zebra/zapi_msg.c,
    /// `zsend_redistribute_route`, sends ZEBRA_ROUTE_TABLE_DIRECT).
    TableDirect,
    /// `table` (`redistribute table N` through zebra's `ip import-table`:
    /// zebra/redistribute.c, `zebra_add_import_table_entry`, makes a
    /// ZEBRA_ROUTE_TABLE route).
    Table,
}

impl Source {
    fn name(self) -> &'static str {
        match self {
            Source::System => "system",
            Source::TableDirect => "table-direct",
            Source::Table => "table",
        }
    }

    /// Whether `match source-protocol WORD` matches.
    pub(super) fn is(self, word: &str) -> bool {
        self.name().eq_ignore_ascii_case(word)
    }
}

/// The route's tracked attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Attrs {
    pub(super) source: Known<Source>,
    pub(super) tag: Known<u32>,
    /// Its communities (empty: none).
    pub(super) community: Known<BTreeSet<u32>>,
    /// Its large communities (empty: none).
    pub(super) large: Known<BTreeSet<Large>>,
    /// Whether its AS path is the empty path of a locally originated route.
    pub(super) as_path_empty: Known<bool>,
}

impl Attrs {
    /// A route whose attributes are not known at all (not redistributed
    /// from a table the configuration names, or through a policy not
    /// evaluated).
    pub(super) fn unknown(why: Construct) -> Attrs {
        Attrs {
            source: Known::Not(why),
            tag: Known::Not(why),
            community: Known::Not(why),
            large: Known::Not(why),
            as_path_empty: Known::Not(why),
        }
    }

    /// A kernel route of a table as bgpd's redistribution receives it:
    /// bgpd/bgp_route.c, `bgp_redistribute_add` (`bgp_attr_default_set`:
    /// no communities, an empty AS path; the tag zebra sent). The tag is
    /// zebra's reading of the kernel route's realm (zebra/rt_netlink.c reads
    /// RTA_FLOW into the tag only when FRR is built with `--enable-realms`;
    /// the import of 8.4 copies it): 0 without realm support, and for IPv6
    /// (the kernel keeps no realm on IPv6 routes), else the realm, which
    /// kube-vip's heartbeat and ribbridge's heals flip between 1 and 2.
    /// `map_sees_type`: whether the redistribution's route-map sees the
    /// route's type (10.2 and later; None: the release is not known).
    pub(super) fn redistributed(
        direct: bool,
        family: Family,
        realms: Option<bool>,
        map_sees_type: Option<bool>,
    ) -> Attrs {
        let source = if direct {
            Source::TableDirect
        } else {
            Source::Table
        };
        Attrs {
            source: match map_sees_type {
                Some(true) => Known::Is(source),
                Some(false) => Known::Is(Source::System),
                None => Known::Not(Construct::MatchSourceProtocol),
            },
            tag: match (family, realms) {
                (Family::Ipv6, _) | (Family::Ipv4, Some(false)) => Known::Is(0),
                _ => Known::Not(Construct::KernelTag),
            },
            community: Known::Is(BTreeSet::new()),
            large: Known::Is(BTreeSet::new()),
            as_path_empty: Known::Is(true),
        }
    }

    /// The path as bgpd keeps it once redistributed: its own type whatever
    /// the release (the outbound route-map reads it: bgpd/bgp_route.h,
    /// `prep_for_rmap_apply`, copies the path's type).
    pub(super) fn stored(mut self, direct: bool) -> Attrs {
        self.source = Known::Is(if direct {
            Source::TableDirect
        } else {
            Source::Table
        });
        self
    }

    /// One permit entry's sets, applied to the route.
    pub(super) fn apply(&mut self, sets: &[Set], intent: &Intent) {
        let mut community = Vec::new();
        let mut large = Vec::new();
        for s in sets {
            match s {
                Set::Tag(t) => self.tag = Known::Is(*t),
                Set::Community(_) | Set::CommListDelete(_) => community.push(s),
                Set::LargeCommunity(_) | Set::LargeCommListDelete(_) => large.push(s),
                Set::AsPath(_) => self.as_path_empty = Known::Not(Construct::SetThenMatch),
            }
        }
        // FRR applies an entry's sets in the order they were configured
        // (lib/routemap.c, `route_map_add_set` appends), which the running
        // configuration does not show: two that touch the same attribute
        // are known only if both orders agree.
        if !community.is_empty() {
            self.community = both_orders(&self.community, &community, |c, s| {
                community_set(c, s, intent)
            });
        }
        if !large.is_empty() {
            self.large = both_orders(&self.large, &large, |c, s| large_set(c, s, intent));
        }
    }

    /// The attributes of a route two sources may give: each attribute the
    /// two agree on, the others unknown (`why`).
    pub(super) fn merge(&self, other: &Attrs, why: Construct) -> Attrs {
        fn one<T: Clone + PartialEq>(a: &Known<T>, b: &Known<T>, why: Construct) -> Known<T> {
            if a == b { a.clone() } else { Known::Not(why) }
        }
        Attrs {
            source: one(&self.source, &other.source, why),
            tag: one(&self.tag, &other.tag, why),
            community: one(&self.community, &other.community, why),
            large: one(&self.large, &other.large, why),
            as_path_empty: one(&self.as_path_empty, &other.as_path_empty, why),
        }
    }

    /// bgpd/bgp_route.c, `bgp_redistribute_add`: under `bgp
    /// graceful-shutdown` the redistributed route gets the graceful-shutdown
    /// community after its route-map (`bgp_attr_add_gshut_community`).
    pub(super) fn add_gshut(&mut self) {
        if let Known::Is(c) = &mut self.community {
            c.insert(GSHUT);
        }
    }
}

fn both_orders<T: Clone + PartialEq>(
    start: &Known<T>,
    sets: &[&Set],
    step: impl Fn(Known<T>, &Set) -> Known<T>,
) -> Known<T> {
    let forward = sets.iter().fold(start.clone(), |c, s| step(c, s));
    if sets.len() > 1 {
        let backward = sets.iter().rev().fold(start.clone(), |c, s| step(c, s));
        if backward != forward {
            return Known::Not(Construct::SetThenMatch);
        }
    }
    forward
}

/// `set community none|COMMUNITIES [additive]` and `set comm-list NAME
/// delete`: bgpd/bgp_routemap.c, `route_set_community` (none: no
/// communities; additive: merged with the route's; else replaced) and
/// `route_set_community_delete`.
fn community_set(c: Known<BTreeSet<u32>>, s: &Set, intent: &Intent) -> Known<BTreeSet<u32>> {
    match s {
        Set::Community(text) => set_values(c, text, parse_communities),
        Set::CommListDelete(name) => match c {
            Known::Is(old) => {
                let l = intent.lists.community.get(name).map(Vec::as_slice);
                lists::community_delete(l, &old, intent.internet_rule())
                    .map_or_else(Known::Not, Known::Is)
            }
            not => not,
        },
        _ => c,
    }
}

/// `set community|large-community none|VALUES [additive]`: none empties,
/// additive merges with the route's, else the values replace them.
fn set_values<T: Ord>(
    c: Known<BTreeSet<T>>,
    text: &str,
    parse: fn(&str) -> Option<BTreeSet<T>>,
) -> Known<BTreeSet<T>> {
    let (text, additive) = split_additive(text);
    if text == "none" {
        return Known::Is(BTreeSet::new());
    }
    let Some(vals) = parse(text) else {
        return Known::Not(Construct::SetThenMatch);
    };
    match c {
        Known::Is(mut old) if additive => {
            old.extend(vals);
            Known::Is(old)
        }
        Known::Not(w) if additive => Known::Not(w),
        _ => Known::Is(vals),
    }
}

/// `set large-community ...` and `set large-comm-list NAME delete`:
/// bgpd/bgp_routemap.c, `route_set_lcommunity`, `route_set_lcommunity_delete`.
fn large_set(c: Known<BTreeSet<Large>>, s: &Set, intent: &Intent) -> Known<BTreeSet<Large>> {
    match s {
        Set::LargeCommunity(text) => set_values(c, text, parse_large),
        Set::LargeCommListDelete(name) => match c {
            Known::Is(old) => {
                let l = intent.lists.large_community.get(name).map(Vec::as_slice);
                lists::large_delete(l, &old).map_or_else(Known::Not, Known::Is)
            }
            not => not,
        },
        _ => c,
    }
}

fn split_additive(text: &str) -> (&str, bool) {
    match text.trim().strip_suffix("additive") {
        Some(rest) if rest.ends_with(' ') => (rest.trim_end(), true),
        _ => (text.trim(), false),
    }
}

/// One `set` clause that changes an attribute the evaluator tracks (the
/// others change nothing a match of ribbridge's reads, and are not kept).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Set {
    /// `set tag N` (`untagged`: 0).
    Tag(u32),
    /// `set community ...`, its text as written (`none`, or communities
    /// with an optional trailing `additive`).
    Community(String),
    /// `set comm-list NAME delete`.
    CommListDelete(String),
    /// `set large-community ...`, its text as written.
    LargeCommunity(String),
    /// `set large-comm-list NAME delete`.
    LargeCommListDelete(String),
    /// `set as-path ...`, as written.
    AsPath(String),
}

/// The graceful-shutdown community (65535:0).
pub(super) const GSHUT: u32 = 0xFFFF_0000;
/// `no-export`.
pub(super) const NO_EXPORT: u32 = 0xFFFF_FF01;
/// `no-advertise`.
pub(super) const NO_ADVERTISE: u32 = 0xFFFF_FF02;
/// `local-AS` (`no-export-subconfed`).
pub(super) const LOCAL_AS: u32 = 0xFFFF_FF03;

/// One community token as FRR prints it: `AA:NN` (each at most 65535) or
/// a well-known name (bgpd/bgp_community.c, `community_gettoken`;
/// `internet`, 0, is a name before 9.1 only, `0:0` on any release).
fn community(token: &str) -> Option<u32> {
    Some(match token {
        "internet" => lists::INTERNET,
        "graceful-shutdown" => GSHUT,
        "accept-own" => 0xFFFF_0001,
        "route-filter-translated-v4" => 0xFFFF_0002,
        "route-filter-v4" => 0xFFFF_0003,
        "route-filter-translated-v6" => 0xFFFF_0004,
        "route-filter-v6" => 0xFFFF_0005,
        "llgr-stale" => 0xFFFF_0006,
        "no-llgr" => 0xFFFF_0007,
        "accept-own-nexthop" => 0xFFFF_0008,
        "blackhole" => 0xFFFF_029A,
        "no-export" => NO_EXPORT,
        "no-advertise" => NO_ADVERTISE,
        "local-AS" => LOCAL_AS,
        "no-peer" => 0xFFFF_FF04,
        _ => {
            let (hi, lo) = token.split_once(':')?;
            let num = |s: &str| {
                (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| s.parse::<u16>().ok())
                    .flatten()
            };
            (u32::from(num(hi)?) << 16) | u32::from(num(lo)?)
        }
    })
}

/// Communities separated by spaces (None: one is not a community FRR
/// prints, an alias say).
pub(super) fn parse_communities(text: &str) -> Option<BTreeSet<u32>> {
    let vals: Option<BTreeSet<u32>> = text.split_whitespace().map(community).collect();
    vals.filter(|v| !v.is_empty())
}

/// Large communities `G:L1:L2` separated by spaces (bgpd/bgp_lcommunity.c,
/// `lcommunity_gettoken`: three unsigned 32-bit numbers).
pub(super) fn parse_large(text: &str) -> Option<BTreeSet<Large>> {
    let one = |t: &str| {
        let mut it = t.split(':');
        let mut n = || {
            it.next()
                .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))?
                .parse::<u32>()
                .ok()
        };
        let v = (n()?, n()?, n()?);
        it.next().is_none().then_some(v)
    };
    let vals: Option<BTreeSet<Large>> = text.split_whitespace().map(one).collect();
    vals.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs() -> Attrs {
        Attrs::redistributed(true, Family::Ipv4, Some(false), Some(true))
    }

    #[test]
    fn communities_as_frr_prints_them() {
        assert_eq!(
            parse_communities("64512:1 no-export"),
            Some([(64512 << 16) | 1, NO_EXPORT].into())
        );
        assert_eq!(parse_communities("65536:1"), None);
        assert_eq!(parse_communities("ALIAS"), None);
        assert_eq!(parse_large("64512:1:2"), Some([(64512, 1, 2)].into()));
        assert_eq!(parse_large("64512:1"), None);
    }

    /// bgpd/bgp_routemap.c, `route_set_community`: additive merges, else
    /// replaces; `none` removes.
    #[test]
    fn set_community_additive_replace_none() {
        let i = Intent::default();
        let mut a = attrs();
        a.apply(&[Set::Community("64512:1".into())], &i);
        a.apply(&[Set::Community("64512:2 additive".into())], &i);
        assert_eq!(
            a.community,
            Known::Is([(64512 << 16) | 1, (64512 << 16) | 2].into())
        );
        a.apply(&[Set::Community("64512:3".into())], &i);
        assert_eq!(a.community, Known::Is([(64512 << 16) | 3].into()));
        a.apply(&[Set::Community("none".into())], &i);
        assert_eq!(a.community, Known::Is(BTreeSet::new()));
        a.apply(&[Set::Tag(7)], &i);
        assert_eq!(a.tag, Known::Is(7));
    }

    /// Two sets of one attribute in an entry: FRR's order is the order
    /// they were configured, not shown; known only if both orders agree.
    #[test]
    fn set_order_matters_only_when_it_changes_the_result() {
        let mut i = Intent::default();
        i.lists.community.insert(
            "DEL".into(),
            vec![super::super::CommunityEntry {
                seq: 5,
                permit: true,
                kind: super::super::CommunityKind::Standard(vec![(64512 << 16) | 1]),
            }],
        );
        let mut a = attrs();
        a.apply(
            &[
                Set::Community("64512:1 additive".into()),
                Set::CommListDelete("DEL".into()),
            ],
            &i,
        );
        assert_eq!(a.community, Known::Not(Construct::SetThenMatch));
        let mut a = attrs();
        a.apply(
            &[
                Set::Community("64512:2 additive".into()),
                Set::CommListDelete("DEL".into()),
            ],
            &i,
        );
        assert_eq!(a.community, Known::Is([(64512 << 16) | 2].into()));
    }

    #[test]
    fn the_tag_of_a_kernel_route() {
        let t = |f, realms| Attrs::redistributed(true, f, realms, Some(true)).tag;
        assert_eq!(t(Family::Ipv6, None), Known::Is(0));
        assert_eq!(t(Family::Ipv4, Some(false)), Known::Is(0));
        assert_eq!(
            t(Family::Ipv4, Some(true)),
            Known::Not(Construct::KernelTag)
        );
        assert_eq!(t(Family::Ipv4, None), Known::Not(Construct::KernelTag));
    }
}
