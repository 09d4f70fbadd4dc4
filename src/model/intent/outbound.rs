//! Whether bgpd sends a route to one neighbour: the checks of
//! bgpd/bgp_route.c, `subgroup_announce_check`, that the configuration
//! decides, in its order (10.x): aggregate suppression, the well-known
//! communities (`bgp_community_filter`), the neighbour's outbound options
//! not evaluated (ORF and the like), RFC 8212 (`bgp ebgp-requires-policy`:
//! `bgp_outbound_policy_exists`), the output filters (`bgp_output_filter`:
//! distribute-list, then prefix-list, then filter-list), the outbound
//! route-map. 8.4 checks RFC 8212 after the route-map; as it only fails
//! where no filter is configured at all, the order changes no answer.
//!
//! Contract: every check must pass for the route to be sent, so the first
//! certain denial is the answer even if an earlier check is unknown; with
//! no denial, the first unknown is; else the route is sent. The
//! neighbour's filters are its own, each kind that it does not set taken
//! from its peer-group (bgpd/bgpd.c, `peer_route_map_set` and its
//! siblings: a member's own setting is an override, one kind at a time).
//! What bgpd's best-path selection, update groups and timers do is not
//! evaluated: the route is the one redistributed from the table.

use super::attrs::{Attrs, Known, LOCAL_AS, NO_ADVERTISE, NO_EXPORT};
use super::eval::Eval;
use super::lists::{self, PlistAnswer};
use super::{
    Construct, Denier, Family, FilterKind, Intent, OutPolicy, PeerPolicy, RemoteAs, Verdict,
};
use crate::model::{Prefix, Release};

/// iBGP or eBGP, as bgpd sorts a neighbour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    Internal,
    External,
}

/// One neighbour's outbound policy in one family, its own over its
/// peer-group's, kind by kind.
struct Merged<'a> {
    route_map: Option<&'a str>,
    prefix_list: Option<&'a str>,
    distribute_list: Option<&'a str>,
    filter_list: Option<&'a str>,
    options: bool,
    /// `unsuppress-map` among the options (an outbound policy for RFC 8212
    /// from 10.0 only).
    unsuppress: bool,
}

fn merged<'a>(own: Option<&'a OutPolicy>, group: Option<&'a OutPolicy>) -> Merged<'a> {
    let pick = |f: fn(&OutPolicy) -> &Option<String>| {
        own.and_then(|p| f(p).as_deref())
            .or_else(|| group.and_then(|p| f(p).as_deref()))
    };
    Merged {
        route_map: pick(|p| &p.route_map),
        prefix_list: pick(|p| &p.prefix_list),
        distribute_list: pick(|p| &p.distribute_list),
        filter_list: pick(|p| &p.filter_list),
        options: [own, group]
            .into_iter()
            .flatten()
            .any(|p| !p.options.is_empty()),
        unsuppress: [own, group]
            .into_iter()
            .flatten()
            .flat_map(|p| &p.options)
            .any(|o| o.starts_with("unsuppress-map")),
    }
}

/// bgpd/bgpd.c, `peer_calc_sort`, where the configuration decides it: a
/// `remote-as` of the neighbour (else of its peer-group) against the
/// instance's AS; unknown under a confederation, a `local-as`, `oad` or
/// `remote-as auto`, or with no `remote-as` at all.
fn sort(intent: &Intent, peer: &PeerPolicy, group: Option<&PeerPolicy>) -> Known<Sort> {
    let unknown = Known::Not(Construct::PeerSort);
    if intent.bgp.confederation
        || [Some(peer), group]
            .into_iter()
            .flatten()
            .any(|p| p.local_as || p.oad)
    {
        return unknown;
    }
    match peer.remote_as.or(group.and_then(|g| g.remote_as)) {
        Some(RemoteAs::Internal) => Known::Is(Sort::Internal),
        Some(RemoteAs::External) => Known::Is(Sort::External),
        Some(RemoteAs::Number(n)) => match intent.bgp.asn {
            Some(asn) if asn == n => Known::Is(Sort::Internal),
            Some(_) => Known::Is(Sort::External),
            None => unknown,
        },
        Some(RemoteAs::Auto) | None => unknown,
    }
}

/// The outbound verdict of `peer` on a route of `prefix` with `attrs`.
pub(super) fn sent<'a>(
    intent: &'a Intent,
    peer: &'a str,
    prefix: &Prefix,
    attrs: &Attrs,
) -> Verdict<'a> {
    let Some(p) = intent.peers.get(peer) else {
        return unknown(Construct::PeerNotConfigured);
    };
    let family = Family::of(prefix);
    let group = p.group.as_ref().and_then(|g| intent.peers.get(g));
    let m = merged(p.out.get(&family), group.and_then(|g| g.out.get(&family)));
    let sort = sort(intent, p, group);
    let mut first_unknown = None;
    let mut check = |v: Verdict<'a>| -> Option<Verdict<'a>> {
        match v {
            Verdict::Permit => None,
            Verdict::Deny { .. } => Some(v),
            Verdict::Unknown { .. } => {
                first_unknown.get_or_insert(v);
                None
            }
        }
    };
    let steps = [
        aggregate(intent, family, prefix),
        community(attrs, sort),
        if m.options {
            unknown(Construct::NeighborOption)
        } else {
            Verdict::Permit
        },
        requires_policy(intent, &m, sort),
        distribute_list(intent, family, m.distribute_list, prefix),
        prefix_list(intent, family, m.prefix_list, prefix),
        filter_list(intent, m.filter_list, attrs),
    ];
    for v in steps {
        if let Some(deny) = check(v) {
            return deny;
        }
    }
    if let Some(name) = m.route_map {
        let mut out = attrs.clone();
        let v = Eval { intent, prefix }.route_map(name, &mut out);
        if let Some(deny) = check(v) {
            return deny;
        }
    }
    first_unknown.unwrap_or(Verdict::Permit)
}

fn unknown<'a>(construct: Construct) -> Verdict<'a> {
    Verdict::Unknown {
        route_map: "",
        seq: None,
        construct,
    }
}

/// `aggregate-address ... summary-only|suppress-map` over the prefix:
/// bgpd suppresses the more specific routes it aggregates
/// (`bgp_path_suppressed`); not evaluated.
fn aggregate<'a>(intent: &Intent, family: Family, prefix: &Prefix) -> Verdict<'a> {
    let covered = intent.bgp.aggregates.iter().any(|a| {
        a.family == family
            && a.suppresses
            && a.prefix.prefix_len() < prefix.prefix_len()
            && a.prefix.contains(prefix.addr())
    });
    if covered {
        unknown(Construct::AggregateAddress)
    } else {
        Verdict::Permit
    }
}

/// bgpd/bgp_route.c, `bgp_community_filter`: `no-advertise` is sent to no
/// one, `no-export` to no eBGP neighbour, `local-AS` to no eBGP (or
/// confederation) neighbour.
fn community<'a>(attrs: &Attrs, sort: Known<Sort>) -> Verdict<'a> {
    let c = match &attrs.community {
        Known::Is(c) => c,
        Known::Not(why) => return unknown(*why),
    };
    let deny = |name| Verdict::Deny {
        route_map: "",
        seq: None,
        by: Denier::Community(name),
    };
    if c.contains(&NO_ADVERTISE) {
        return deny("no-advertise");
    }
    if !c.contains(&NO_EXPORT) && !c.contains(&LOCAL_AS) {
        return Verdict::Permit;
    }
    match sort {
        Known::Not(why) => unknown(why),
        Known::Is(Sort::Internal) => Verdict::Permit,
        Known::Is(Sort::External) if c.contains(&NO_EXPORT) => deny("no-export"),
        Known::Is(Sort::External) => deny("local-AS"),
    }
}

/// RFC 8212 (`bgp ebgp-requires-policy`, on by default but in the
/// `datacenter` profile): bgpd/bgp_route.c, `bgp_outbound_policy_exists`:
/// an eBGP neighbour with none of route-map, prefix-list, filter-list,
/// distribute-list out (named, defined or not; from 10.0 an
/// unsuppress-map counts too) is sent nothing.
fn requires_policy<'a>(intent: &Intent, m: &Merged<'_>, sort: Known<Sort>) -> Verdict<'a> {
    let has = m.route_map.is_some()
        || m.prefix_list.is_some()
        || m.filter_list.is_some()
        || m.distribute_list.is_some();
    let required = intent.bgp.ebgp_requires_policy;
    if has || required == Some(false) {
        return Verdict::Permit;
    }
    if m.unsuppress {
        match intent.release {
            Some(r) if r >= Release::new(10, 0) => return Verdict::Permit,
            Some(_) => {}
            None => return unknown(Construct::NeighborOption),
        }
    }
    match (sort, required) {
        (Known::Is(Sort::Internal), _) => Verdict::Permit,
        (Known::Is(Sort::External), Some(true)) => Verdict::Deny {
            route_map: "",
            seq: None,
            by: Denier::NoOutboundPolicy,
        },
        (Known::Is(Sort::External), _) => unknown(Construct::EbgpRequiresPolicy),
        (Known::Not(why), _) => unknown(why),
    }
}

/// `neighbor X distribute-list L out`: lib/filter.c, `access_list_apply`
/// on the family's access-list; one not defined denies.
fn distribute_list<'a>(
    intent: &'a Intent,
    family: Family,
    name: Option<&'a str>,
    prefix: &Prefix,
) -> Verdict<'a> {
    let Some(name) = name else {
        return Verdict::Permit;
    };
    let Some(entries) = intent.access_lists(family).get(name) else {
        return Verdict::Deny {
            route_map: name,
            seq: None,
            by: Denier::Undefined(FilterKind::DistributeList),
        };
    };
    match lists::access_list(Some(entries), prefix) {
        Ok((true, _)) => Verdict::Permit,
        Ok((false, seq)) => Verdict::Deny {
            route_map: name,
            seq,
            by: Denier::Filter(FilterKind::DistributeList),
        },
        Err((_, seq)) => Verdict::Unknown {
            route_map: name,
            seq: Some(seq),
            construct: Construct::DistributeList,
        },
    }
}

/// `neighbor X prefix-list L out`: lib/plist.c, `prefix_list_apply` (one
/// not defined denies, one without entries permits).
fn prefix_list<'a>(
    intent: &'a Intent,
    family: Family,
    name: Option<&'a str>,
    prefix: &Prefix,
) -> Verdict<'a> {
    let Some(name) = name else {
        return Verdict::Permit;
    };
    let entries = intent.prefix_lists(family).get(name).map(Vec::as_slice);
    let deny = |seq, by| Verdict::Deny {
        route_map: name,
        seq,
        by,
    };
    match lists::prefix_list(entries, prefix) {
        PlistAnswer::Undefined => deny(None, Denier::Undefined(FilterKind::PrefixList)),
        PlistAnswer::Empty | PlistAnswer::Entry(_, true) => Verdict::Permit,
        PlistAnswer::Entry(seq, false) => deny(Some(seq), Denier::Filter(FilterKind::PrefixList)),
        PlistAnswer::NoEntry => deny(None, Denier::Filter(FilterKind::PrefixList)),
    }
}

/// `neighbor X filter-list L out`: bgpd/bgp_filter.c, `as_list_apply` on
/// the route's AS path before bgpd prepends its own AS (the empty path of a
/// redistributed route, unless a set changed it); one not defined denies.
fn filter_list<'a>(intent: &'a Intent, name: Option<&'a str>, attrs: &Attrs) -> Verdict<'a> {
    let Some(name) = name else {
        return Verdict::Permit;
    };
    let Some(entries) = intent.lists.as_path.get(name) else {
        return Verdict::Deny {
            route_map: name,
            seq: None,
            by: Denier::Undefined(FilterKind::FilterList),
        };
    };
    match &attrs.as_path_empty {
        Known::Is(true) => {}
        Known::Is(false) => return unknown(Construct::FilterList),
        Known::Not(why) => return unknown(*why),
    }
    match lists::as_path_list_on_empty(Some(entries)) {
        Ok((true, _)) => Verdict::Permit,
        Ok((false, seq)) => Verdict::Deny {
            route_map: name,
            seq,
            by: Denier::Filter(FilterKind::FilterList),
        },
        Err(seq) => Verdict::Unknown {
            route_map: name,
            seq: Some(seq),
            construct: Construct::FilterList,
        },
    }
}
