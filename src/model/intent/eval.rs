//! A route-map applied to one route, as bgpd applies it.
//!
//! Contract: lib/routemap.c, `route_map_apply_ext`, on the attributes
//! [`Attrs`] tracks. Entries in sequence order; an entry matches when all
//! its clauses do (none: every route). A matching deny denies there, its
//! sets, `call` and `on-match` ignored. A matching permit applies its sets,
//! then `call NAME` (a called map that denies denies the route; a called map
//! that is not defined is skipped), then its exit policy: none, permit and
//! stop; `on-match next`, go on with the next entry; `on-match goto N`
//! (`continue N`), go on with the first entry whose sequence is at least N,
//! permit if there is none. An entry that does not match makes the answer a
//! deny unless a later permit matches: falling off the end after an
//! `on-match next` permits only if no entry after it failed to match.
//! bgpd applies a map at most `RMAP_RECURSION_LIMIT` (10) calls deep; deeper
//! it denies the route and resets its (static) counter, which changes how
//! deep its later calls may go: unknown here. A clause the evaluator cannot
//! decide makes the answer unknown at that entry, unless another clause of
//! the same entry certainly fails (then the entry does not match).
//!
//! The route-map prefix trie bgpd walks first (`route_map_get_index`) gives
//! the same first matching entry as the linear walk for every clause
//! evaluated here, but for a prefix-list without entries (permits all when
//! applied, never indexed in the trie): that one stays unknown.

use super::attrs::{Attrs, Known};
use super::lists::{self, PlistAnswer};
use super::{Construct, Denier, Family, FilterKind, Intent, MapEntry, Match, OnMatch, Verdict};
use crate::model::Prefix;

/// lib/routemap.h, `RMAP_RECURSION_LIMIT`.
const RECURSION_LIMIT: u32 = 10;

/// Whether one clause, or one entry, matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hit {
    Yes,
    No,
    Unknown(Construct),
}

/// One evaluation: the configuration and the route's prefix.
pub(super) struct Eval<'a, 'p> {
    pub(super) intent: &'a Intent,
    pub(super) prefix: &'p Prefix,
}

impl<'a> Eval<'a, '_> {
    /// The route-map `name`, as a redistribution's or a neighbour's
    /// outbound map: one named but not defined denies every route
    /// (bgpd/bgp_route.c, `bgp_redistribute_add` and
    /// `subgroup_announce_check` apply the map's NULL pointer, and
    /// `route_map_apply_ext` on NULL denies).
    pub(super) fn route_map(&self, name: &'a str, attrs: &mut Attrs) -> Verdict<'a> {
        match self.intent.route_maps.get_key_value(name) {
            Some((name, entries)) => self.run(name, entries, attrs, 0),
            None => Verdict::Deny {
                route_map: name,
                seq: None,
                by: Denier::Undefined(FilterKind::RouteMap),
            },
        }
    }

    fn run(
        &self,
        name: &'a str,
        entries: &'a [MapEntry],
        attrs: &mut Attrs,
        depth: u32,
    ) -> Verdict<'a> {
        if depth > RECURSION_LIMIT {
            return Verdict::Unknown {
                route_map: name,
                seq: None,
                construct: Construct::CallDepth,
            };
        }
        // A map without entries (never in a running configuration): NULL
        // head, denied.
        let mut ret = Verdict::Deny {
            route_map: name,
            seq: None,
            by: Denier::Filter(FilterKind::RouteMap),
        };
        if !entries.is_empty() {
            ret = Verdict::Permit;
        }
        let mut i = 0;
        while let Some(e) = entries.get(i) {
            match self.entry(e, attrs) {
                Hit::Unknown(construct) => {
                    return Verdict::Unknown {
                        route_map: name,
                        seq: Some(e.seq),
                        construct,
                    };
                }
                Hit::No => {
                    ret = Verdict::Deny {
                        route_map: name,
                        seq: None,
                        by: Denier::Filter(FilterKind::RouteMap),
                    };
                    i += 1;
                    continue;
                }
                Hit::Yes if !e.permit => {
                    return Verdict::Deny {
                        route_map: name,
                        seq: Some(e.seq),
                        by: Denier::Filter(FilterKind::RouteMap),
                    };
                }
                Hit::Yes => {}
            }
            ret = Verdict::Permit;
            attrs.apply(&e.sets, self.intent);
            if let Some((called, inner)) = e
                .call
                .as_ref()
                .and_then(|c| self.intent.route_maps.get_key_value(c))
            {
                match self.run(called, inner, attrs, depth + 1) {
                    Verdict::Permit => {}
                    other => return other,
                }
            }
            match e.on_match {
                None => return Verdict::Permit,
                Some(OnMatch::Next) => i += 1,
                Some(OnMatch::Goto(n)) => match entries[i + 1..].iter().position(|f| f.seq >= n) {
                    Some(j) => i += 1 + j,
                    None => return Verdict::Permit,
                },
            }
        }
        ret
    }

    /// Whether entry `e` matches: all its clauses (a certain failure wins
    /// over a clause not evaluated).
    pub(super) fn entry(&self, e: &MapEntry, attrs: &Attrs) -> Hit {
        let mut unknown = None;
        for m in &e.matches {
            match self.clause(m, attrs) {
                Hit::Yes => {}
                Hit::No => return Hit::No,
                Hit::Unknown(c) => {
                    unknown.get_or_insert(c);
                }
            }
        }
        unknown.map_or(Hit::Yes, Hit::Unknown)
    }

    fn clause(&self, m: &Match, attrs: &Attrs) -> Hit {
        let family = Family::of(self.prefix);
        match m {
            // bgpd/bgp_routemap.c, `route_match_address_prefix_list`: a list
            // not defined does not match; the list of the clause's family
            // is applied (an IPv6 prefix in an `ip` list matches no entry).
            Match::PrefixList { family: f, name } => {
                let entries = self.intent.prefix_lists(*f).get(name).map(Vec::as_slice);
                match lists::prefix_list(entries, self.prefix) {
                    PlistAnswer::Empty => Hit::Unknown(Construct::PrefixListEmpty),
                    PlistAnswer::Entry(_, true) if *f == family => Hit::Yes,
                    _ => Hit::No,
                }
            }
            // `route_match_ip_address` / `route_match_ipv6_address`: only a
            // prefix of the clause's family is looked up; a list not defined
            // does not match.
            Match::AccessList { family: f, name } => {
                if *f != family {
                    return Hit::No;
                }
                let entries = self.intent.access_lists(*f).get(name).map(Vec::as_slice);
                match lists::access_list(entries, self.prefix) {
                    Ok((true, _)) => Hit::Yes,
                    Ok((false, _)) => Hit::No,
                    Err((c, _)) => Hit::Unknown(c),
                }
            }
            // `route_match_tag`: the attribute's tag equals.
            Match::Tag(t) => known(&attrs.tag, |v| v == t),
            Match::SourceProtocol(word) => known(&attrs.source, |s| s.is(word)),
            Match::Community { name, mode } => match &attrs.community {
                Known::Is(c) => {
                    let l = self.intent.lists.community.get(name).map(Vec::as_slice);
                    hit(lists::community_match(
                        l,
                        c,
                        *mode,
                        self.intent.internet_rule(),
                    ))
                }
                Known::Not(why) => Hit::Unknown(*why),
            },
            Match::LargeCommunity { name, mode } => match &attrs.large {
                Known::Is(c) => {
                    let l = self
                        .intent
                        .lists
                        .large_community
                        .get(name)
                        .map(Vec::as_slice);
                    hit(lists::large_match(l, c, *mode))
                }
                Known::Not(why) => Hit::Unknown(*why),
            },
            Match::Other(text) => Hit::Unknown(Construct::of_match(text)),
        }
    }
}

fn known<T>(v: &Known<T>, f: impl FnOnce(&T) -> bool) -> Hit {
    match v {
        Known::Is(v) if f(v) => Hit::Yes,
        Known::Is(_) => Hit::No,
        Known::Not(c) => Hit::Unknown(*c),
    }
}

fn hit(r: Result<bool, (Construct, Option<u32>)>) -> Hit {
    match r {
        Ok(true) => Hit::Yes,
        Ok(false) => Hit::No,
        Err((c, _)) => Hit::Unknown(c),
    }
}
