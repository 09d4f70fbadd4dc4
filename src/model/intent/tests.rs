//! The evaluator, construct by construct: each rule is FRR's, cited by the
//! function it comes from; a permit, a deny and an unknown case each.
//! Written on running-configuration text where the shape matters (the
//! reader's own tests are in `read.rs`).

use super::*;

fn p(s: &str) -> Prefix {
    s.parse().unwrap()
}

const VIP: &str = "192.0.2.10/32";
const OTHER: &str = "192.0.2.11/32";

/// A 10.7 configuration: `router bgp 64512` redistributing table 198
/// through `RM`, one eBGP neighbour 198.18.1.1 (its outbound lines in
/// `out`), and `extra` at the top level (route-maps, lists).
fn conf(rm: Option<&str>, out: &str, extra: &str) -> Intent {
    let redistribute = match rm {
        Some(m) => format!("  redistribute table-direct 198 route-map {m}\n"),
        None => "  redistribute table-direct 198\n".to_string(),
    };
    let text = format!(
        "frr version 10.7.1\nfrr defaults traditional\n!\nrouter bgp 64512\n \
neighbor 198.18.1.1 remote-as 64513\n !\n address-family ipv4 unicast\n{redistribute}  \
neighbor 198.18.1.1 activate\n{out} exit-address-family\nexit\n!\n{extra}"
    );
    parse(&text, None)
}

fn redistributed(i: &Intent, prefix: &str) -> Verdict<'static> {
    // (the verdict borrows the intent: compared through its text form
    // where a test needs it owned)
    let v = i.redistributed(198, &p(prefix)).expect("redistributed");
    leak(v)
}

fn leak(v: Verdict<'_>) -> Verdict<'static> {
    let s: &'static str = Box::leak(
        match v {
            Verdict::Deny { route_map, .. } | Verdict::Unknown { route_map, .. } => route_map,
            Verdict::Permit => "",
        }
        .to_string()
        .into_boxed_str(),
    );
    match v {
        Verdict::Permit => Verdict::Permit,
        Verdict::Deny { seq, by, .. } => Verdict::Deny {
            route_map: s,
            seq,
            by,
        },
        Verdict::Unknown { seq, construct, .. } => Verdict::Unknown {
            route_map: s,
            seq,
            construct,
        },
    }
}

fn deny(route_map: &'static str, seq: Option<u32>) -> Verdict<'static> {
    Verdict::Deny {
        route_map,
        seq,
        by: Denier::Filter(FilterKind::RouteMap),
    }
}

fn unknown(route_map: &'static str, seq: Option<u32>, construct: Construct) -> Verdict<'static> {
    Verdict::Unknown {
        route_map,
        seq,
        construct,
    }
}

const VIP_LIST: &str = "ip prefix-list VIPS seq 5 permit 192.0.2.10/32\n";

#[test]
fn the_first_matching_entry_decides() {
    let i = conf(
        Some("RM"),
        "",
        &format!(
            "route-map RM permit 10\n match ip address prefix-list VIPS\nexit\n\
route-map RM deny 20\nexit\n{VIP_LIST}"
        ),
    );
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    assert_eq!(redistributed(&i, OTHER), deny("RM", Some(20)));
    // A clause not evaluated is unknown only where the evaluation reaches
    // it: behind the permit that decides, it is never read.
    let i2 = conf(
        Some("RM"),
        "",
        &format!(
            "route-map RM permit 10\n match ip address prefix-list VIPS\nexit\n\
route-map RM deny 15\n match metric 5\nexit\nroute-map RM deny 20\nexit\n{VIP_LIST}"
        ),
    );
    assert_eq!(redistributed(&i2, VIP), Verdict::Permit);
    assert_eq!(
        redistributed(&i2, OTHER),
        unknown("RM", Some(15), Construct::MatchMetric)
    );
    // An IPv6 prefix never matches an `ip` prefix-list (and IPv6 is not
    // redistributed here).
    assert_eq!(
        i.route_map("RM", &p("2001:db8::1/128")),
        deny("RM", Some(20))
    );
}

/// bgpd/bgp_route.c, `bgp_redistribute_add` and `subgroup_announce_check`:
/// a route-map named but not defined is applied as NULL, and lib/routemap.c,
/// `route_map_apply_ext`, denies on NULL. `route_match_address_prefix_list`:
/// an undefined prefix-list does not match.
#[test]
fn undefined_route_maps_deny_and_undefined_lists_do_not_match() {
    let i = conf(Some("NOPE"), "", "");
    let v = redistributed(&i, VIP);
    assert_eq!(
        v,
        Verdict::Deny {
            route_map: "NOPE",
            seq: None,
            by: Denier::Undefined(FilterKind::RouteMap)
        }
    );
    assert!(v.to_string().contains("not defined"), "{v}");
    let i = conf(
        Some("RM"),
        "",
        "route-map RM permit 10\n match ip address prefix-list MISSING\nexit\n",
    );
    assert_eq!(redistributed(&i, VIP), deny("RM", None));
    // A prefix-list with only a description: FRR's answer depends on its
    // route-map prefix index: unknown.
    let i = conf(
        Some("RM"),
        "",
        "route-map RM permit 10\n match ip address prefix-list EMPTY\nexit\n\
ip prefix-list EMPTY description nothing yet\n",
    );
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(10), Construct::PrefixListEmpty)
    );
}

/// lib/routemap.c, `route_map_apply_ext`: `on-match next` goes on after a
/// permit; a later non-matching entry makes the end a deny, a later
/// matching deny denies.
#[test]
fn on_match_next() {
    let base = |tail: &str| {
        conf(
            Some("RM"),
            "",
            &format!(
                "route-map RM permit 10\n on-match next\nexit\n{tail}\
ip prefix-list VIPS seq 5 permit 192.0.2.10/32\n"
            ),
        )
    };
    // Alone: permit.
    assert_eq!(redistributed(&base(""), VIP), Verdict::Permit);
    // A later permit that does not match: the implicit deny.
    let i = base("route-map RM permit 20\n match ip address prefix-list VIPS\nexit\n");
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    assert_eq!(redistributed(&i, OTHER), deny("RM", None));
    // A later deny that matches: denied there.
    let i = base("route-map RM deny 20\n match ip address prefix-list VIPS\nexit\n");
    assert_eq!(redistributed(&i, VIP), deny("RM", Some(20)));
    // A later entry on metric: unknown there.
    let i = base("route-map RM permit 20\n match metric 5\nexit\n");
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(20), Construct::MatchMetric)
    );
}

/// `on-match goto N` / `continue N`: the first entry whose sequence is at
/// least N; none: permit (`route_map_action_goto_null`).
#[test]
fn on_match_goto_and_continue() {
    let i = conf(
        Some("RM"),
        "",
        &format!(
            "route-map RM permit 10\n on-match goto 30\nexit\n\
route-map RM deny 20\nexit\n\
route-map RM deny 30\n match ip address prefix-list VIPS\nexit\n\
route-map RM permit 40\nexit\n{VIP_LIST}"
        ),
    );
    // 20 is jumped over; 30 denies the VIP; another prefix reaches 40.
    assert_eq!(redistributed(&i, VIP), deny("RM", Some(30)));
    assert_eq!(redistributed(&i, OTHER), Verdict::Permit);
    // `continue 25` (printed `on-match goto 25`) lands on 30 too.
    let i = conf(
        Some("RM"),
        "",
        &format!(
            "route-map RM permit 10\n continue 25\nexit\n\
route-map RM deny 30\n match ip address prefix-list VIPS\nexit\n{VIP_LIST}"
        ),
    );
    assert_eq!(redistributed(&i, VIP), deny("RM", Some(30)));
    // Another prefix: 30 does not match and nothing follows: the implicit
    // deny. A goto past the last entry permits.
    assert_eq!(redistributed(&i, OTHER), deny("RM", None));
    let i = conf(
        Some("RM"),
        "",
        "route-map RM permit 10\n on-match goto 99\nexit\nroute-map RM deny 20\nexit\n",
    );
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    // A goto landing on an entry not evaluated: unknown.
    let i = conf(
        Some("RM"),
        "",
        "route-map RM permit 10\n on-match goto 30\nexit\n\
route-map RM permit 30\n match as-path AP\nexit\n",
    );
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(30), Construct::MatchAsPath)
    );
}

/// `call NAME`: the called map's deny denies; its permit goes on with the
/// caller's exit policy; an undefined map is skipped (`nextrm` NULL leaves
/// the permit); deeper than RMAP_RECURSION_LIMIT: unknown.
#[test]
fn call() {
    let with = |called: &str| {
        conf(
            Some("RM"),
            "",
            &format!("route-map RM permit 10\n call SUB\nexit\n{called}{VIP_LIST}"),
        )
    };
    let i = with("route-map SUB permit 10\n match ip address prefix-list VIPS\nexit\n");
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    assert_eq!(redistributed(&i, OTHER), deny("SUB", None));
    let i = with("route-map SUB deny 5\n match ip address prefix-list VIPS\nexit\n");
    assert_eq!(redistributed(&i, VIP), deny("SUB", Some(5)));
    // Not defined: skipped.
    assert_eq!(redistributed(&with(""), OTHER), Verdict::Permit);
    // A call loop: bgpd stops at its limit (and miscounts later): unknown.
    let i = conf(Some("RM"), "", "route-map RM permit 10\n call RM\nexit\n");
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", None, Construct::CallDepth)
    );
    // Ten calls deep is within the limit.
    let mut chain = String::new();
    for d in 0..10 {
        chain.push_str(&format!(
            "route-map M{d} permit 10\n call M{}\nexit\n",
            d + 1
        ));
    }
    chain.push_str("route-map M10 permit 10\nexit\n");
    let i = conf(Some("M0"), "", &chain);
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
}

/// A deny entry's sets, call and exit policy are never applied.
#[test]
fn a_matching_deny_ignores_its_sets_and_flow() {
    let i = conf(
        Some("RM"),
        "",
        "route-map RM deny 10\n set tag 5\n call SUB\n on-match next\nexit\n\
route-map SUB permit 10\nexit\n",
    );
    assert_eq!(redistributed(&i, VIP), deny("RM", Some(10)));
}

/// bgpd/bgp_routemap.c, `route_match_tag`; the tag of a kernel route is
/// its realm under realm support (zebra/rt_netlink.c), else 0; `set tag`
/// earlier in the evaluation is what a later match sees.
#[test]
fn match_tag() {
    let rm = "route-map RM permit 10\n match tag 7\nexit\n";
    let mut i = conf(Some("RM"), "", rm);
    // Realm support not known: the kernel's tag is unknown.
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(10), Construct::KernelTag)
    );
    i.realms = Some(false);
    assert_eq!(redistributed(&i, VIP), deny("RM", None));
    let mut i = conf(
        Some("RM"),
        "",
        "route-map RM permit 5\n set tag 7\n on-match next\nexit\n\
route-map RM permit 10\n match tag 7\nexit\n",
    );
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    i.realms = Some(true);
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    // `match tag untagged` is tag 0.
    let mut i = conf(
        Some("RM"),
        "",
        "route-map RM permit 10\n match tag untagged\nexit\n",
    );
    i.realms = Some(false);
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
}

/// `route_match_source_protocol` compares the path's type: the
/// redistribution's map sees it from 10.2 (`bgp_redistribute_add` sets
/// `rmap_path.type`), type 0 before; the outbound map sees the stored
/// path's type (`prep_for_rmap_apply`).
#[test]
fn match_source_protocol() {
    let rm = "route-map RM permit 10\n match source-protocol table-direct\nexit\n";
    let i = conf(Some("RM"), "", rm);
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    let i = conf(
        Some("RM"),
        "",
        "route-map RM permit 10\n match source-protocol kernel\nexit\n",
    );
    assert_eq!(redistributed(&i, VIP), deny("RM", None));
    // Before 10.2 the redistribution's map sees type 0: no match.
    let mut i = conf(Some("RM"), "", rm);
    i.release = Release::parse("10.1.2");
    assert_eq!(redistributed(&i, VIP), deny("RM", None));
    i.release = None;
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(10), Construct::MatchSourceProtocol)
    );
    // Outbound, whatever the release: the path's own type.
    let mut i = conf(
        None,
        "  neighbor 198.18.1.1 route-map OUT out\n",
        "route-map OUT permit 10\n match source-protocol table-direct\nexit\n",
    );
    i.release = None;
    assert_eq!(i.sent_to("198.18.1.1", &p(VIP)), Verdict::Permit);
}

/// `route_match_community` on a community-list (bgp_clist.c,
/// `community_list_match`): a redistributed route has no communities
/// unless a set gave it some; the outbound map sees the redistribution's.
#[test]
fn match_community_sees_the_redistributions_sets() {
    let lists = "bgp community-list standard C1 seq 5 permit 64512:1\n\
bgp community-list expanded CX seq 5 permit ^64512:\n";
    let out = "  neighbor 198.18.1.1 route-map OUT out\n";
    let outmap = "route-map OUT permit 10\n match community C1\nexit\n";
    // No set: no community, no match.
    let i = conf(None, out, &format!("{outmap}{lists}"));
    assert_eq!(i.sent_to("198.18.1.1", &p(VIP)), deny("OUT", None));
    // The redistribution sets it: sent.
    let i = conf(
        Some("RM"),
        out,
        &format!("route-map RM permit 10\n set community 64512:1 additive\nexit\n{outmap}{lists}"),
    );
    assert_eq!(i.sent_to("198.18.1.1", &p(VIP)), Verdict::Permit);
    // An expanded list: unknown.
    let i = conf(
        Some("RM"),
        out,
        &format!(
            "route-map RM permit 10\n set community 64512:1\nexit\n\
route-map OUT permit 10\n match community CX\nexit\n{lists}"
        ),
    );
    assert_eq!(
        i.sent_to("198.18.1.1", &p(VIP)),
        unknown("OUT", Some(10), Construct::ExpandedCommunityList)
    );
    // An alias the reader cannot read: the communities are unknown from the
    // well-known community check on (bgpd checks it before the filters).
    let i = conf(
        Some("RM"),
        out,
        &format!("route-map RM permit 10\n set community MY-ALIAS\nexit\n{outmap}{lists}"),
    );
    assert_eq!(
        i.sent_to("198.18.1.1", &p(VIP)),
        unknown("", None, Construct::SetThenMatch)
    );
}

/// `set comm-list NAME delete` then a match: per community, the first
/// entry holding it decides (`community_list_match_delete`).
#[test]
fn comm_list_delete_then_match() {
    let i = conf(
        Some("RM"),
        "",
        "route-map RM permit 5\n set community 64512:1 64512:2\n on-match next\nexit\n\
route-map RM permit 6\n set comm-list DEL delete\n on-match next\nexit\n\
route-map RM deny 10\n match community C1\nexit\n\
route-map RM permit 20\n match community C2 exact-match\nexit\n\
bgp community-list standard DEL seq 5 permit 64512:1\n\
bgp community-list standard C1 seq 5 permit 64512:1\n\
bgp community-list standard C2 seq 5 permit 64512:2\n",
    );
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
}

/// `match large-community` (`route_match_lcommunity`,
/// `lcommunity_list_match`).
#[test]
fn match_large_community() {
    let lists = "bgp large-community-list standard L seq 5 permit 64512:1:1\n";
    let mk = |set: &str| {
        conf(
            Some("RM"),
            "",
            &format!(
                "route-map RM permit 5\n{set} on-match next\nexit\n\
route-map RM deny 10\n match large-community L\nexit\n\
route-map RM permit 20\nexit\n{lists}"
            ),
        )
    };
    assert_eq!(
        redistributed(&mk(" set large-community 64512:1:1\n"), VIP),
        deny("RM", Some(10))
    );
    assert_eq!(
        redistributed(&mk(" set large-community 64512:2:2\n"), VIP),
        Verdict::Permit
    );
    let i = conf(
        Some("RM"),
        "",
        &format!("route-map RM permit 10\n match large-community L any\nexit\n{lists}"),
    );
    // `any` on a route without large communities: FRR answers RMAP_OKAY.
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(10), Construct::MatchCommunityAny)
    );
}

/// `internet` (0) in a community-list matches every route before 9.1.
#[test]
fn internet_by_release() {
    let text = |v: &str| {
        format!(
            "frr version {v}\nrouter bgp 64512\n address-family ipv4 unicast\n  \
redistribute table 198 route-map RM\n exit-address-family\nexit\n\
route-map RM permit 10\n match community ALL\nexit\n\
bgp community-list standard ALL seq 5 permit internet\n"
        )
    };
    let i = parse(&text("8.4.4"), None);
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    let mut i = parse(&text("8.4.4"), None);
    i.release = None;
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(10), Construct::CommunityInternet)
    );
    let i = parse(&text("10.3").replace("internet", "0:0"), None);
    assert_eq!(redistributed(&i, VIP), deny("RM", None));
}

/// `match ip address NAME` (`route_match_ip_address`, lib/filter.c).
#[test]
fn match_ip_address_access_list() {
    let mk = |acl: &str| {
        conf(
            Some("RM"),
            "",
            &format!("route-map RM permit 10\n match ip address ACL\nexit\n{acl}"),
        )
    };
    let i = mk(
        "access-list ACL seq 5 deny 192.0.2.11/32\naccess-list ACL seq 10 permit 192.0.2.0/24\n",
    );
    assert_eq!(redistributed(&i, VIP), Verdict::Permit);
    assert_eq!(redistributed(&i, OTHER), deny("RM", None));
    // Undefined: no match.
    assert_eq!(redistributed(&mk(""), VIP), deny("RM", None));
    // Extended form ahead: unknown.
    let i = mk("access-list ACL seq 5 permit ip any any\n");
    assert_eq!(
        redistributed(&i, VIP),
        unknown("RM", Some(10), Construct::AccessListEntry)
    );
    // IPv6: `match ipv6 address`.
    let text = "frr version 10.7.1\nrouter bgp 64512\n address-family ipv6 unicast\n  \
redistribute table-direct 198 route-map RM6\n exit-address-family\nexit\n\
route-map RM6 permit 10\n match ipv6 address ACL6\nexit\n\
ipv6 access-list ACL6 seq 5 permit 2001:db8::/64\n";
    let i = parse(text, None);
    assert_eq!(
        i.redistributed(198, &p("2001:db8::10/128")),
        Some(Verdict::Permit)
    );
    assert!(matches!(
        i.redistributed(198, &p("2001:db8:1::10/128")),
        Some(Verdict::Deny { .. })
    ));
}

/// bgp_route.c, `bgp_output_filter`: distribute-list, prefix-list,
/// filter-list in that order, then the route-map
/// (`subgroup_announce_check`); a list not defined denies.
#[test]
fn outbound_filters_in_order() {
    let sent = |out: &str, extra: &str| {
        let i = conf(None, out, extra);
        leak(i.sent_to("198.18.1.1", &p(VIP)))
    };
    let pl = "  neighbor 198.18.1.1 prefix-list PL out\n";
    assert_eq!(
        sent(pl, "ip prefix-list PL seq 5 permit 192.0.2.0/24 le 32\n"),
        Verdict::Permit
    );
    assert_eq!(
        sent(pl, "ip prefix-list PL seq 5 deny 192.0.2.10/32\n"),
        Verdict::Deny {
            route_map: "PL",
            seq: Some(5),
            by: Denier::Filter(FilterKind::PrefixList)
        }
    );
    assert_eq!(
        sent(pl, ""),
        Verdict::Deny {
            route_map: "PL",
            seq: None,
            by: Denier::Undefined(FilterKind::PrefixList)
        }
    );
    // A prefix-list with only a description permits (prefix_list_apply).
    assert_eq!(
        sent(pl, "ip prefix-list PL description later\n"),
        Verdict::Permit
    );
    let dl = "  neighbor 198.18.1.1 distribute-list ACL out\n";
    assert_eq!(
        sent(dl, "access-list ACL seq 5 permit any\n"),
        Verdict::Permit
    );
    assert_eq!(
        sent(
            dl,
            "access-list ACL seq 5 deny 192.0.2.10\naccess-list ACL seq 6 permit any\n"
        ),
        Verdict::Deny {
            route_map: "ACL",
            seq: Some(5),
            by: Denier::Filter(FilterKind::DistributeList)
        }
    );
    assert_eq!(
        sent(dl, "access-list ACL seq 5 permit ip any any\n"),
        unknown("ACL", Some(5), Construct::DistributeList)
    );
    // A denial later in the order wins over an unknown earlier one.
    assert_eq!(
        sent(
            &format!("{dl}  neighbor 198.18.1.1 route-map OUT out\n"),
            "access-list ACL seq 5 permit ip any any\nroute-map OUT deny 10\nexit\n"
        ),
        deny("OUT", Some(10))
    );
}

/// `neighbor X filter-list L out`: `as_list_apply` on the empty AS path of
/// a redistributed route.
#[test]
fn filter_list_on_a_local_route() {
    let fl = "  neighbor 198.18.1.1 filter-list AP out\n";
    let sent = |extra: &str| leak(conf(None, fl, extra).sent_to("198.18.1.1", &p(VIP)));
    assert_eq!(
        sent("bgp as-path access-list AP seq 5 permit ^$\n"),
        Verdict::Permit
    );
    assert_eq!(
        sent("bgp as-path access-list AP seq 5 permit _64513_\n"),
        Verdict::Deny {
            route_map: "AP",
            seq: None,
            by: Denier::Filter(FilterKind::FilterList)
        }
    );
    assert_eq!(
        sent("bgp as-path access-list AP seq 5 permit ^(6451[0-9])?$\n"),
        unknown("AP", Some(5), Construct::FilterList)
    );
    // A set as-path on the redistribution: the path is no longer empty.
    let i = conf(
        Some("RM"),
        fl,
        "route-map RM permit 10\n set as-path prepend 64512\nexit\n\
bgp as-path access-list AP seq 5 permit ^$\n",
    );
    assert_eq!(
        i.sent_to("198.18.1.1", &p(VIP)),
        unknown("", None, Construct::SetThenMatch)
    );
}

/// A peer-group's filters apply to a member kind by kind; the member's own
/// setting of a kind overrides the group's (bgpd.c, `peer_route_map_set`,
/// `filter_override`).
#[test]
fn peer_group_filters_and_member_overrides() {
    let text = "frr version 10.7.1\nfrr defaults traditional\nrouter bgp 64512\n \
neighbor G peer-group\n neighbor G remote-as external\n neighbor 198.18.1.1 peer-group G\n \
neighbor 198.18.2.1 peer-group G\n address-family ipv4 unicast\n  \
redistribute table-direct 198\n  neighbor G route-map GOUT out\n  \
neighbor G prefix-list GPL out\n  neighbor 198.18.2.1 route-map OWN out\n \
exit-address-family\nexit\n\
route-map GOUT deny 10\nexit\nroute-map OWN permit 10\nexit\n\
ip prefix-list GPL seq 5 permit 192.0.2.10/32\n";
    let i = parse(text, None);
    // The member without its own: the group's route-map denies.
    assert_eq!(i.sent_to("198.18.1.1", &p(VIP)), deny("GOUT", Some(10)));
    // The member with its own route-map: its own, and the group's
    // prefix-list still.
    assert_eq!(i.sent_to("198.18.2.1", &p(VIP)), Verdict::Permit);
    assert!(matches!(
        i.sent_to("198.18.2.1", &p(OTHER)),
        Verdict::Deny {
            route_map: "GPL",
            ..
        }
    ));
    assert_eq!(
        i.sent_to("198.18.9.9", &p(VIP)),
        unknown("", None, Construct::PeerNotConfigured)
    );
}

/// RFC 8212 (`bgp_outbound_policy_exists`): an eBGP neighbour without any
/// outbound policy gets nothing unless `no bgp ebgp-requires-policy` (or
/// the datacenter profile); an iBGP one is not concerned.
#[test]
fn ebgp_requires_policy() {
    let mk = |profile: &str, line: &str, remote: &str| {
        parse(
            &format!(
                "frr version 10.7.1\nfrr defaults {profile}\nrouter bgp 64512\n{line} \
neighbor 198.18.1.1 remote-as {remote}\n address-family ipv4 unicast\n  \
redistribute table-direct 198\n exit-address-family\nexit\n"
            ),
            None,
        )
    };
    let v = |i: &Intent| leak(i.sent_to("198.18.1.1", &p(VIP)));
    let no_policy = Verdict::Deny {
        route_map: "",
        seq: None,
        by: Denier::NoOutboundPolicy,
    };
    assert_eq!(v(&mk("traditional", "", "64513")), no_policy);
    assert_eq!(v(&mk("traditional", "", "64512")), Verdict::Permit);
    assert_eq!(v(&mk("datacenter", "", "external")), Verdict::Permit);
    assert_eq!(
        v(&mk(
            "traditional",
            " no bgp ebgp-requires-policy\n",
            "64513"
        )),
        Verdict::Permit
    );
    // Only an unsuppress-map: an outbound policy from 10.0, not before.
    let mut i = mk("traditional", "", "64513");
    i.peers
        .get_mut("198.18.1.1")
        .unwrap()
        .out
        .entry(Family::Ipv4)
        .or_default()
        .options
        .push("unsuppress-map U".into());
    assert_eq!(v(&i), unknown("", None, Construct::NeighborOption));
    i.release = Release::parse("8.4.4");
    assert_eq!(v(&i), no_policy);
    // A confederation: whether the peer is eBGP is not told here.
    assert_eq!(
        v(&mk(
            "traditional",
            " bgp confederation identifier 100\n",
            "64513"
        )),
        unknown("", None, Construct::PeerSort)
    );
}

/// `bgp_community_filter`: no-advertise goes to no one, no-export to no
/// eBGP peer.
#[test]
fn well_known_communities_set_by_the_redistribution() {
    let mk = |c: &str, remote: &str| {
        parse(
            &format!(
                "frr version 10.7.1\nfrr defaults traditional\nrouter bgp 64512\n \
no bgp ebgp-requires-policy\n neighbor 198.18.1.1 remote-as {remote}\n \
address-family ipv4 unicast\n  redistribute table-direct 198 route-map RM\n \
exit-address-family\nexit\nroute-map RM permit 10\n set community {c}\nexit\n"
            ),
            None,
        )
    };
    let v = |i: &Intent| leak(i.sent_to("198.18.1.1", &p(VIP)));
    assert!(matches!(
        v(&mk("no-advertise", "64512")),
        Verdict::Deny {
            by: Denier::Community("no-advertise"),
            ..
        }
    ));
    assert!(matches!(
        v(&mk("no-export", "64513")),
        Verdict::Deny {
            by: Denier::Community("no-export"),
            ..
        }
    ));
    assert_eq!(v(&mk("no-export", "64512")), Verdict::Permit);
    assert_eq!(
        v(&mk("no-export", "auto")),
        unknown("", None, Construct::PeerSort)
    );
}

/// Outbound options not evaluated, and aggregation over the prefix.
#[test]
fn neighbour_options_and_aggregates_are_unknown() {
    let i = conf(
        None,
        "  neighbor 198.18.1.1 advertise-map A non-exist-map B\n  neighbor 198.18.1.1 route-map OUT out\n",
        "route-map OUT permit 10\nexit\n",
    );
    assert_eq!(
        i.sent_to("198.18.1.1", &p(VIP)),
        unknown("", None, Construct::NeighborOption)
    );
    let i = conf(
        None,
        "  aggregate-address 192.0.2.0/24 summary-only\n  neighbor 198.18.1.1 route-map OUT out\n",
        "route-map OUT permit 10\nexit\n",
    );
    assert_eq!(
        i.sent_to("198.18.1.1", &p(VIP)),
        unknown("", None, Construct::AggregateAddress)
    );
}

/// The graceful-shutdown community is added after the redistribution's map
/// (`bgp_redistribute_add`): the outbound map sees it.
#[test]
fn graceful_shutdown_community() {
    let i = parse(
        "frr version 10.7.1\nfrr defaults traditional\nrouter bgp 64512\n \
bgp graceful-shutdown\n neighbor 198.18.1.1 remote-as 64513\n address-family ipv4 unicast\n  \
redistribute table-direct 198\n  neighbor 198.18.1.1 route-map OUT out\n exit-address-family\nexit\n\
route-map OUT deny 10\n match community GS\nexit\nroute-map OUT permit 20\nexit\n\
bgp community-list standard GS seq 5 permit graceful-shutdown\n",
        None,
    );
    assert_eq!(i.sent_to("198.18.1.1", &p(VIP)), deny("OUT", Some(10)));
}

/// Two redistributions permitting the prefix with different attributes:
/// the outbound verdict reads them only if a match needs them.
#[test]
fn the_route_source_when_two_tables_bring_the_prefix() {
    let text = "frr version 10.7.1\nfrr defaults traditional\nrouter bgp 64512\n \
neighbor 198.18.1.1 remote-as 64512\n address-family ipv4 unicast\n  \
redistribute table-direct 198 route-map A\n  redistribute table-direct 199\n  \
neighbor 198.18.1.1 route-map OUT out\n exit-address-family\nexit\n\
route-map A permit 10\n set tag 5\nexit\n\
route-map OUT permit 10\n match ip address prefix-list VIPS\nexit\n\
route-map OUT2 permit 10\n match tag 5\nexit\n\
ip prefix-list VIPS seq 5 permit 192.0.2.10/32\n";
    let mut i = parse(text, None);
    assert_eq!(i.sent_to("198.18.1.1", &p(VIP)), Verdict::Permit);
    i.peers
        .get_mut("198.18.1.1")
        .unwrap()
        .out
        .get_mut(&Family::Ipv4)
        .unwrap()
        .route_map = Some("OUT2".into());
    assert_eq!(
        i.sent_to("198.18.1.1", &p(VIP)),
        unknown("OUT2", Some(10), Construct::RouteSource)
    );
    i.realms = Some(false);
    assert_eq!(i.sent_from("198.18.1.1", 198, &p(VIP)), Verdict::Permit);
    assert_eq!(i.sent_from("198.18.1.1", 199, &p(VIP)), deny("OUT2", None));
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
    assert_eq!(i.redistributed(198, &p(VIP)), Some(Verdict::Permit));
    assert_eq!(i.redistributed(198, &p("2001:db8::10/128")), None);
    assert_eq!(i.redistributed(199, &p(VIP)), None);
    // zebra's configuration read and without the import: nothing flows.
    i.imports = Some(vec![]);
    assert_eq!(i.redistributed(198, &p(VIP)), None);
    i.imports = Some(vec![(Family::Ipv4, 198)]);
    assert!(i.redistributed(198, &p(VIP)).is_some());
}

/// What an unknown verdict says, for a person and as a stable name.
#[test]
fn unknown_verdicts_read_well() {
    let v = unknown("X", Some(10), Construct::MatchMetric);
    assert_eq!(
        v.to_string(),
        "unknown: route-map X seq 10 matches on metric, which ribbridge does not evaluate"
    );
    assert_eq!(Construct::MatchMetric.name(), "match_metric");
    let v = unknown("", None, Construct::PeerNotConfigured);
    assert_eq!(
        v.to_string(),
        "unknown: the peer is not in the configuration"
    );
    let v = unknown("AP", Some(5), Construct::FilterList);
    assert!(
        v.to_string()
            .starts_with("unknown: as-path access-list AP seq 5 "),
        "{v}"
    );
}

/// What a denial says, for a person.
#[test]
fn denials_read_well() {
    assert_eq!(
        deny("RM", Some(20)).to_string(),
        "denied by route-map RM seq 20"
    );
    assert_eq!(
        deny("RM", None).to_string(),
        "denied by route-map RM (no entry matches: implicit deny)"
    );
    let v = Verdict::Deny {
        route_map: "PL",
        seq: None,
        by: Denier::Undefined(FilterKind::PrefixList),
    };
    assert_eq!(
        v.to_string(),
        "denied by prefix-list PL (named but not defined: bgpd denies every route)"
    );
    let v = Verdict::Deny {
        route_map: "",
        seq: None,
        by: Denier::Community("no-export"),
    };
    assert!(v.to_string().contains("no-export"), "{v}");
}

/// The shape the recorded cases hold (`tests/data/reconcile/*/events.jsonl`)
/// still reads.
#[test]
fn recorded_intents_still_deserialize() {
    let json = r#"{"redistributions":[{"asn":64512,"family":"ipv4","table":198,"direct":true,"route_map":"RM"}],
"route_maps":{"RM":[{"seq":10,"permit":true,"matches":[{"prefix_list":{"family":"ipv4","name":"VIPS"}}]},{"seq":20,"permit":false}],
"OUT":[{"seq":1,"permit":true,"matches":[{"prefix_list":{"family":"ipv4","name":"VIPS"}}]}]},
"ip_prefix_lists":{"VIPS":[{"seq":10,"permit":true,"prefix":"192.0.2.10/32"}]},"ipv6_prefix_lists":{},
"peers":{"198.18.1.1":{"out":{"ipv4":{"route_map":"OUT"}}}},"route_map_delay_ms":5000}"#;
    let i: Intent = serde_json::from_str(json).unwrap();
    assert_eq!(i.redistributed(198, &p(VIP)), Some(Verdict::Permit));
    assert_eq!(i.redistributed(198, &p(OTHER)), Some(deny("RM", Some(20))));
    // No remote-as recorded: RFC 8212 is not concerned (a policy exists).
    assert_eq!(i.sent_to("198.18.1.1", &p(VIP)), Verdict::Permit);
    assert_eq!(i.sent_to("198.18.1.1", &p(OTHER)), deny("OUT", None));
    let back: Intent = serde_json::from_str(&serde_json::to_string(&i).unwrap()).unwrap();
    assert_eq!(back, i);
}
