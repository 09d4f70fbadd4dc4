//! The evaluator's answer: permit, deny (by what), or unknown (at which
//! construct), never a guess.

/// The outcome of a policy for one prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict<'a> {
    /// The policy lets the route through.
    Permit,
    /// The policy denies it.
    Deny {
        /// The route-map, or the list `by` names, that denied it (empty
        /// for a denial that is no list's: [`Denier::Community`],
        /// [`Denier::NoOutboundPolicy`]). For a route-map reached by
        /// `call`, the called map.
        route_map: &'a str,
        /// The denying entry's sequence (None: no entry matched, the
        /// implicit deny, or no entry at all).
        seq: Option<u32>,
        /// What denied it.
        by: Denier,
    },
    /// The policy cannot be evaluated here.
    Unknown {
        /// The route-map (or, for [`Construct::object`] other than a
        /// route-map, the list) the evaluation stopped in; empty when the
        /// construct is the neighbour's or the route's, no list's.
        route_map: &'a str,
        /// The entry the evaluation stopped at, if any.
        seq: Option<u32>,
        /// What stopped it.
        construct: Construct,
    },
}

/// A kind of filter bgpd applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterKind {
    /// A route-map.
    RouteMap,
    /// A neighbour's outbound prefix-list.
    PrefixList,
    /// A neighbour's outbound distribute-list (an access-list).
    DistributeList,
    /// A neighbour's outbound filter-list (an AS-path access-list).
    FilterList,
}

impl FilterKind {
    /// How FRR's configuration names it.
    pub fn name(self) -> &'static str {
        match self {
            FilterKind::RouteMap => "route-map",
            FilterKind::PrefixList => "prefix-list",
            FilterKind::DistributeList => "distribute-list",
            FilterKind::FilterList => "filter-list",
        }
    }
}

/// What denied a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denier {
    /// The filter's entry `seq`, or (no seq) its implicit deny.
    Filter(FilterKind),
    /// A filter named but not defined: bgpd denies every route with it.
    Undefined(FilterKind),
    /// A well-known community on the route (`no-advertise`, `no-export`,
    /// `local-AS`): bgpd does not send it to this neighbour.
    Community(&'static str),
    /// An eBGP neighbour without any outbound policy under `bgp
    /// ebgp-requires-policy` (RFC 8212): sent nothing.
    NoOutboundPolicy,
}

/// A construct the evaluator does not evaluate, named in
/// [`Verdict::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Construct {
    /// `match metric`: the route's MED (the kernel route's metric).
    MatchMetric,
    /// `match as-path`.
    MatchAsPath,
    /// `match ip|ipv6 next-hop ...`.
    MatchNextHop,
    /// `match source-protocol` where the release (which decides what the
    /// redistribution's route-map sees) is not known.
    MatchSourceProtocol,
    /// `match community|large-community NAME any` on a route without
    /// communities (FRR answers neither match nor no match).
    MatchCommunityAny,
    /// Another `match` clause.
    MatchOther,
    /// A route-map line the reader did not recognise.
    UnrecognisedClause,
    /// A prefix-list defined without entries: applied it permits every
    /// prefix, but bgpd's route-map prefix index never finds the entry.
    PrefixListEmpty,
    /// An access-list entry of a form not evaluated (extended, IPv6
    /// wildcard).
    AccessListEntry,
    /// An expanded (regular expression) community-list entry.
    ExpandedCommunityList,
    /// A community-list entry the reader could not read (an alias).
    CommunityListEntry,
    /// A community-list entry holding `internet` (0:0) where the release,
    /// which decides what it matches, is not known.
    CommunityInternet,
    /// The route's tag, from the kernel route's realm: FRR built with
    /// realm support, or not known to be built without.
    KernelTag,
    /// A match on an attribute an earlier set changed in a way the
    /// evaluator cannot compute (an alias, two sets whose order matters,
    /// `set as-path`).
    SetThenMatch,
    /// `call` nested deeper than bgpd's limit (or a loop of calls).
    CallDepth,
    /// An outbound filter-list (AS-path regular expression) not decided.
    FilterList,
    /// An outbound distribute-list entry of a form not evaluated.
    DistributeList,
    /// The peer is not in the configuration.
    PeerNotConfigured,
    /// Whether the peer is iBGP or eBGP cannot be told (confederation,
    /// `local-as`, `oad`, `remote-as auto`, no `remote-as`).
    PeerSort,
    /// Whether `bgp ebgp-requires-policy` is on cannot be told (the
    /// defaults profile is not known).
    EbgpRequiresPolicy,
    /// An outbound option not evaluated (`advertise-map`,
    /// `unsuppress-map`, ORF, `maximum-prefix-out`, `soo`).
    NeighborOption,
    /// An `aggregate-address ... summary-only|suppress-map` covers the
    /// prefix.
    AggregateAddress,
    /// The route's attributes are not known: no redistribution of the
    /// configuration brings it to BGP, its route-map is unknown, or two
    /// redistributions give it different attributes.
    RouteSource,
}

impl Construct {
    /// A stable snake_case name (logs, metrics, `/status`).
    pub fn name(self) -> &'static str {
        match self {
            Construct::MatchMetric => "match_metric",
            Construct::MatchAsPath => "match_as_path",
            Construct::MatchNextHop => "match_next_hop",
            Construct::MatchSourceProtocol => "match_source_protocol",
            Construct::MatchCommunityAny => "match_community_any",
            Construct::MatchOther => "match_other",
            Construct::UnrecognisedClause => "unrecognised_clause",
            Construct::PrefixListEmpty => "prefix_list_empty",
            Construct::AccessListEntry => "access_list_entry",
            Construct::ExpandedCommunityList => "expanded_community_list",
            Construct::CommunityListEntry => "community_list_entry",
            Construct::CommunityInternet => "community_internet",
            Construct::KernelTag => "kernel_tag",
            Construct::SetThenMatch => "set_then_match",
            Construct::CallDepth => "call_depth",
            Construct::FilterList => "filter_list",
            Construct::DistributeList => "distribute_list",
            Construct::PeerNotConfigured => "peer_not_configured",
            Construct::PeerSort => "peer_sort",
            Construct::EbgpRequiresPolicy => "ebgp_requires_policy",
            Construct::NeighborOption => "neighbor_option",
            Construct::AggregateAddress => "aggregate_address",
            Construct::RouteSource => "route_source",
        }
    }

    /// What kind of object an unknown verdict's `route_map` names for this
    /// construct.
    pub fn object(self) -> &'static str {
        match self {
            Construct::FilterList => "as-path access-list",
            Construct::DistributeList => "access-list",
            _ => "route-map",
        }
    }

    /// The `match` clause text's construct.
    pub(super) fn of_match(text: &str) -> Construct {
        let w: Vec<&str> = text.split_whitespace().collect();
        match w.as_slice() {
            ["match", "metric", ..] => Construct::MatchMetric,
            ["match", "as-path", ..] => Construct::MatchAsPath,
            ["match", "ip" | "ipv6", "next-hop", ..] => Construct::MatchNextHop,
            ["match", ..] => Construct::MatchOther,
            _ => Construct::UnrecognisedClause,
        }
    }

    /// Its phrase after "route-map NAME seq N ", "as-path access-list NAME
    /// seq N ", ...
    fn in_object(self) -> &'static str {
        match self {
            Construct::MatchMetric => "matches on metric, which ribbridge does not evaluate",
            Construct::MatchAsPath => "matches on the AS path, which ribbridge does not evaluate",
            Construct::MatchNextHop => "matches on the next hop, which ribbridge does not evaluate",
            Construct::MatchSourceProtocol => {
                "matches on the source protocol, which depends on the FRR release (not known)"
            }
            Construct::MatchCommunityAny => {
                "matches a community-list with 'any' on a route without communities, which FRR neither matches nor rejects"
            }
            Construct::MatchOther => "has a match clause ribbridge does not evaluate",
            Construct::UnrecognisedClause => "has a line ribbridge does not recognise",
            Construct::PrefixListEmpty => {
                "matches a prefix-list without entries (bgpd's answer depends on its prefix index)"
            }
            Construct::AccessListEntry => {
                "matches an access-list with an entry of a form ribbridge does not evaluate"
            }
            Construct::ExpandedCommunityList => {
                "reaches an expanded (regular expression) community-list, which ribbridge does not evaluate"
            }
            Construct::CommunityListEntry => {
                "reaches a community-list entry ribbridge could not read"
            }
            Construct::CommunityInternet => {
                "reaches a community-list entry with internet (0:0), whose meaning depends on the FRR release (not known)"
            }
            Construct::KernelTag => {
                "matches on the tag, which bgpd takes from the kernel route's realm (FRR with realm support, or not known to be without)"
            }
            Construct::SetThenMatch => {
                "matches on an attribute an earlier set changed in a way ribbridge cannot compute"
            }
            Construct::CallDepth => {
                "is called more than 10 deep: bgpd denies the route there and miscounts its later calls"
            }
            Construct::FilterList => {
                "has a regular expression ribbridge does not decide on the route's AS path"
            }
            Construct::DistributeList => "has an entry of a form ribbridge does not evaluate",
            Construct::RouteSource => {
                "matches on the route's attributes, which are not known (not redistributed here, or its redistribution is not evaluated)"
            }
            other => other.alone(),
        }
    }

    /// Its phrase on its own (no object).
    fn alone(self) -> &'static str {
        match self {
            Construct::PeerNotConfigured => "the peer is not in the configuration",
            Construct::PeerSort => {
                "whether the peer is iBGP or eBGP cannot be told from the configuration"
            }
            Construct::EbgpRequiresPolicy => {
                "whether bgp ebgp-requires-policy is on cannot be told (defaults profile not known)"
            }
            Construct::NeighborOption => {
                "the neighbour has an outbound option ribbridge does not evaluate (advertise-map, unsuppress-map, ORF, maximum-prefix-out or soo)"
            }
            Construct::AggregateAddress => {
                "an aggregate-address with summary-only or suppress-map covers the prefix"
            }
            Construct::RouteSource => {
                "the route's attributes are not known (not redistributed here, or its redistribution is not evaluated)"
            }
            Construct::KernelTag => {
                "the route's tag comes from the kernel route's realm, which ribbridge does not know"
            }
            Construct::SetThenMatch => {
                "the route's communities or AS path were changed by a set ribbridge cannot compute"
            }
            Construct::ExpandedCommunityList => {
                "the route's communities were changed through an expanded (regular expression) community-list"
            }
            Construct::CommunityListEntry => {
                "the route's communities were changed through a community-list entry ribbridge could not read"
            }
            Construct::CommunityInternet => {
                "the route's communities were changed through a community-list entry with internet (0:0), whose meaning depends on the FRR release"
            }
            other => other.in_object(),
        }
    }
}

impl std::fmt::Display for Construct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for Verdict<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Verdict::Permit => f.write_str("permitted"),
            Verdict::Deny {
                by: Denier::Community(c),
                ..
            } => write!(
                f,
                "not sent: the route carries the {c} community (bgpd sends it to no such peer)"
            ),
            Verdict::Deny {
                by: Denier::NoOutboundPolicy,
                ..
            } => f.write_str(
                "not sent: an eBGP peer without outbound policy under bgp ebgp-requires-policy (RFC 8212)",
            ),
            Verdict::Deny {
                route_map,
                seq,
                by: Denier::Filter(kind),
            } => match seq {
                Some(s) => write!(f, "denied by {} {route_map} seq {s}", kind.name()),
                None => write!(
                    f,
                    "denied by {} {route_map} (no entry matches: implicit deny)",
                    kind.name()
                ),
            },
            Verdict::Deny {
                route_map,
                by: Denier::Undefined(kind),
                ..
            } => write!(
                f,
                "denied by {} {route_map} (named but not defined: bgpd denies every route)",
                kind.name()
            ),
            Verdict::Unknown {
                route_map: "",
                construct,
                ..
            } => write!(f, "unknown: {}", construct.alone()),
            Verdict::Unknown {
                route_map,
                seq,
                construct,
            } => {
                write!(f, "unknown: {} {route_map}", construct.object())?;
                if let Some(s) = seq {
                    write!(f, " seq {s}")?;
                }
                write!(f, " {}", construct.in_object())
            }
        }
    }
}
