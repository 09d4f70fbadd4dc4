//! The instantaneous class of a VIP: [`classify`] joins what the kernel,
//! zebra (its ZAPI stream and its own table) and bgpd (the established
//! peers) hold of one VIP, and what bgpd's configuration says of it, into
//! a [`Class`]; [`filtered_by`] names the denial that makes a VIP
//! `filtered`, for `/status`.
//!
//! Contract: pure functions of their arguments: no state, no time, no
//! grace. They say what the views show at this instant; whether it lasted
//! long enough to be reported is `evaluate`'s, what to do about it
//! `heal`'s. The policy is evaluated only for a VIP bgpd does not send: a
//! healthy table costs no evaluation.

use super::vip::Vip;
use super::vocab::Class;
use crate::model::intent::{Intent, Verdict};
use crate::model::{PeerView, Prefix, TableId};

/// What the node itself says of a VIP beside the routing views: its
/// address and its writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Local {
    /// A local address equals the VIP (on any interface, usable or not).
    pub has_address: bool,
    /// The node can serve the VIP as far as its address and its backend's
    /// health go ([`State::servable`](super::State::servable)).
    pub servable: bool,
    /// The VIP's writer went silent.
    pub writer_silent: bool,
    /// The VIP's writer withdrew it more than `flap_pairs` times within
    /// the window.
    pub flapping: bool,
    /// The backend's health passes and its readiness fails.
    pub draining: bool,
    /// The backend is up and the route has been absent from every view
    /// for more than two of its writer's ticks.
    pub capacity_lost: bool,
}

impl Local {
    /// No address, none required, no writer known.
    pub const NONE: Local = Local {
        has_address: false,
        servable: true,
        writer_silent: false,
        flapping: false,
        draining: false,
        capacity_lost: false,
    };
}

/// The instantaneous class of one VIP from the joined views.
///
/// Precedence: a VIP bgpd sends while its address is missing or unusable,
/// or its backend's health probe fails, is `blackhole` (the traffic comes
/// and is dropped); then a VIP whose writer withdraws it again and again
/// is `flapping`, whether it is in the kernel now or not (but for zebra
/// still holding a route the kernel dropped: `zebra_stale`); a VIP absent
/// everywhere while its backend is up is `capacity_lost` once that lasted
/// two of its writer's ticks; an unservable VIP bgpd does not send is
/// `withdrawn`, whatever zebra holds (nothing must re-advertise it), and so
/// is one ribbridge's own withdrawal holds back (`withdraw = true`); one
/// bgpd sends while its backend drains is `unready`, then one whose writer
/// is silent `orphaned`. The drain, decided before this, wins over all of
/// them.
///
/// "zebra has it" is either view: the ZAPI stream (what zebra redistributes)
/// or zebra's own table (vty). They differ exactly in the FRR bugs: before
/// 10.7 a route that existed before a subscription is in zebra's table but
/// never redistributed; on 8.4 a replace drops the import while the table
/// keeps the route; a local address makes the import lose to the connected
/// route.
pub fn classify(
    vip: &Vip,
    table: TableId,
    prefix: &Prefix,
    local: Local,
    peers: &[PeerView],
    intent: Option<&Intent>,
) -> Class {
    // Iterated, not collected: a whole-view event classifies every VIP.
    // A peer counts only where its session carries the VIP's family.
    let established = || peers.iter().filter(|p| p.carries(prefix));
    let sent = established().any(|p| p.advertised.contains(prefix));
    let zebra_has = vip.zebra || vip.zebra_table == Some(true);
    // What the configuration says (None: not read). Evaluated only where a
    // VIP is not sent: a healthy table costs no policy evaluation.
    let redistributed = || intent.map(|i| i.redistributed(table, prefix));
    match (vip.in_kernel(), zebra_has) {
        (false, false) if !sent && local.flapping => Class::Flapping,
        (false, false) if !sent && local.capacity_lost => Class::CapacityLost,
        (false, false) if !sent => Class::Withdrawn,
        (false, _) => Class::ZebraStale,
        (true, _) if sent && !local.servable => Class::Blackhole,
        (true, _) if local.flapping => Class::Flapping,
        (true, _) if !local.servable => Class::Withdrawn,
        (true, _) if sent && local.draining => Class::Unready,
        (true, _) if sent && local.writer_silent => Class::Orphaned,
        (true, _) if !sent && matches!(redistributed(), Some(None)) => Class::Unconfigured,
        (true, false) => Class::KernelOnly,
        (true, true) if established().next().is_none() => Class::NoPeer,
        (true, true) if sent => Class::Advertised,
        // ribbridge's own withdrawal (`withdraw = true`), until it is put
        // back: withdrawn on purpose, not the operator's filter.
        (true, true) if intent.is_some_and(|i| i.withdrawn_by_ribbridge(table, prefix)) => {
            Class::Withdrawn
        }
        (true, true) if denied(intent, redistributed(), (table, prefix), peers) => Class::Filtered,
        // In zebra's table, not redistributed, and a local address of the
        // same prefix: the connected route wins the selection.
        (true, true) if !vip.zebra && local.has_address => Class::Shadowed,
        (true, true) => Class::NotRedistributed,
    }
}

/// The policy denies the prefix: the redistribution's route-map does, or
/// the outbound policy of every established peer carrying its family
/// does. An unknown verdict is no denial.
fn denied(
    intent: Option<&Intent>,
    redistributed: Option<Option<Verdict<'_>>>,
    (table, prefix): (TableId, &Prefix),
    peers: &[PeerView],
) -> bool {
    let Some(intent) = intent else {
        return false;
    };
    match redistributed {
        Some(Some(Verdict::Deny { .. })) => true,
        Some(Some(Verdict::Permit)) => matches!(
            outbound(intent, table, prefix, peers),
            Some(Judged::Denied(_))
        ),
        _ => false,
    }
}

/// What the policy says of a VIP it does not permit outright, for
/// `/status`.
enum Judged {
    /// Denied: the first denial.
    Denied(String),
    /// Not decided: the first unknown verdict (its entry and construct).
    Unknown(String),
}

/// The redistribution's verdict, then the outbound policies of the peers
/// carrying the VIP's family: None when the policy permits it (or the
/// table is not redistributed, or no such peer is established).
fn judge(intent: &Intent, table: TableId, prefix: &Prefix, peers: &[PeerView]) -> Option<Judged> {
    match intent.redistributed(table, prefix)? {
        v @ Verdict::Deny { .. } => Some(Judged::Denied(v.to_string())),
        v @ Verdict::Unknown { .. } => Some(Judged::Unknown(v.to_string())),
        Verdict::Permit => outbound(intent, table, prefix, peers),
    }
}

/// The outbound side: a peer that permits decides; else the first unknown
/// verdict; else (every peer denies) the first denial.
fn outbound(
    intent: &Intent,
    table: TableId,
    prefix: &Prefix,
    peers: &[PeerView],
) -> Option<Judged> {
    let (mut denied, mut unknown) = (None, None);
    for p in peers.iter().filter(|p| p.carries(prefix)) {
        match intent.sent_from(p.peer.as_str(), table, prefix) {
            Verdict::Permit => return None,
            v @ Verdict::Unknown { .. } => {
                unknown.get_or_insert_with(|| format!("to {}: {v}", p.peer));
            }
            v @ Verdict::Deny { .. } => {
                denied.get_or_insert_with(|| format!("to {}: {v}", p.peer));
            }
        }
    }
    unknown.map(Judged::Unknown).or(denied.map(Judged::Denied))
}

/// Why bgpd's sending of a VIP cannot be judged from the policy: the
/// redistribution's verdict is unknown, or it permits and no peer carrying
/// the VIP's family has a permitting outbound policy while one has an
/// unknown one. Its text names the route-map, the entry and the construct
/// (for `/status`); None when the policy decides.
pub fn policy_unknown(
    intent: &Intent,
    table: TableId,
    prefix: &Prefix,
    peers: &[PeerView],
) -> Option<String> {
    match judge(intent, table, prefix, peers)? {
        Judged::Unknown(why) => Some(why),
        Judged::Denied(_) => None,
    }
}

/// Why a VIP of `table` is `filtered`: the first denial its policy gives
/// (for `/status`), or None when the policy does not deny it.
pub fn filtered_by(
    intent: &Intent,
    table: TableId,
    prefix: &Prefix,
    peers: &[PeerView],
) -> Option<String> {
    match judge(intent, table, prefix, peers)? {
        Judged::Denied(why) => Some(why),
        Judged::Unknown(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::intent;
    use crate::reconcile::fixture::{T, facts, peer, vip};

    /// bgpd redistributes table 198 through `RM`, which denies everything
    /// but `192.0.2.10/32`.
    const ONE_PERMITTED: &str = "router bgp 64512\n address-family ipv4 unicast\n  \
redistribute table-direct 198 route-map RM\n exit-address-family\nexit\n!\n\
ip prefix-list P seq 10 permit 192.0.2.10/32\n!\n\
route-map RM permit 10\n match ip address prefix-list P\nexit\n!\n\
route-map RM deny 20\nexit\n";

    /// A VIP the kernel holds (`kernel`) and zebra redistributes (`zebra`).
    fn seen(kernel: bool, zebra: bool) -> Vip {
        let mut v = Vip::new(0);
        v.set_kernel(kernel.then(facts));
        v.zebra = zebra;
        v
    }

    fn class(v: &Vip, prefix: Prefix, peers: &[PeerView], intent: Option<&Intent>) -> Class {
        classify(v, T, &prefix, Local::NONE, peers, intent)
    }

    #[test]
    fn a_route_everywhere_is_advertised_only_while_a_peer_is_sent_it() {
        let v = seen(true, true);
        assert_eq!(class(&v, vip(), &[peer(&[vip()])], None), Class::Advertised);
        assert_eq!(
            class(&v, vip(), &[peer(&[])], None),
            Class::NotRedistributed
        );
        let mut down = peer(&[vip()]);
        down.established = false;
        assert_eq!(class(&v, vip(), &[down], None), Class::NoPeer);
        assert_eq!(
            class(&seen(true, false), vip(), &[peer(&[])], None),
            Class::KernelOnly
        );
    }

    #[test]
    fn without_the_kernel_route_a_vip_is_withdrawn_or_zebra_stale() {
        let none = [peer(&[])];
        assert_eq!(
            class(&seen(false, false), vip(), &none, None),
            Class::Withdrawn
        );
        assert_eq!(
            class(&seen(false, true), vip(), &none, None),
            Class::ZebraStale
        );
        // bgpd still sending it is stale too, whatever zebra says.
        let sent = [peer(&[vip()])];
        assert_eq!(
            class(&seen(false, false), vip(), &sent, None),
            Class::ZebraStale
        );
    }

    #[test]
    fn zebra_s_table_counts_as_zebra_and_a_local_address_shadows_the_import() {
        let mut v = seen(true, false);
        v.zebra_table = Some(true);
        let peers = [peer(&[])];
        assert_eq!(class(&v, vip(), &peers, None), Class::NotRedistributed);
        let addresses = Local {
            has_address: true,
            ..Local::NONE
        };
        assert_eq!(
            classify(&v, T, &vip(), addresses, &peers, None),
            Class::Shadowed
        );
        // Redistributed on ZAPI: the address is not what keeps it back.
        v.zebra = true;
        assert_eq!(
            classify(&v, T, &vip(), addresses, &peers, None),
            Class::NotRedistributed
        );
    }

    #[test]
    fn the_intent_makes_a_denied_vip_filtered_and_an_unredistributed_table_unconfigured() {
        let policy = intent::parse(ONE_PERMITTED, None);
        let other: Prefix = "192.0.2.11/32".parse().expect("prefix");
        let v = seen(true, true);
        let peers = [peer(&[])];
        assert_eq!(class(&v, other, &peers, Some(&policy)), Class::Filtered);
        // Permitted and not sent: a drift, not the operator's choice.
        assert_eq!(
            class(&v, vip(), &peers, Some(&policy)),
            Class::NotRedistributed
        );
        let nothing = intent::parse("router bgp 64512\nexit\n", None);
        assert_eq!(
            class(&v, vip(), &peers, Some(&nothing)),
            Class::Unconfigured
        );
    }

    /// One session per family, as the enhancement's nodes run them: the
    /// IPv4 neighbour's outbound route-map denies `192.0.2.11/32`.
    const PER_FAMILY: &str = "router bgp 64512\n neighbor 198.18.1.1 remote-as 64500\n \
neighbor 2001:db8:18:1::1 remote-as 64500\n address-family ipv4 unicast\n  \
redistribute table-direct 198\n  neighbor 198.18.1.1 activate\n  \
neighbor 198.18.1.1 route-map OUT4 out\n exit-address-family\n address-family ipv6 unicast\n  \
redistribute table-direct 198\n  neighbor 2001:db8:18:1::1 activate\n exit-address-family\nexit\n!\n\
ip prefix-list NOT seq 5 deny 192.0.2.11/32\nip prefix-list NOT seq 10 permit 0.0.0.0/0 le 32\n!\n\
route-map OUT4 permit 10\n match ip address prefix-list NOT\nexit\n";

    /// The two sessions of [`PER_FAMILY`]: the IPv4 one sent `sent`.
    fn per_family(sent: &[Prefix]) -> [PeerView; 2] {
        use crate::model::{Families, intent::Family};
        let v4 = PeerView {
            families: Families::only(Family::Ipv4),
            ..peer(sent)
        };
        let v6 = PeerView {
            peer: "2001:db8:18:1::1".into(),
            families: Families::only(Family::Ipv6),
            ..peer(&[])
        };
        [v4, v6]
    }

    #[test]
    fn a_peer_counts_only_for_the_families_its_session_carries() {
        let policy = intent::parse(PER_FAMILY, None);
        let denied: Prefix = "192.0.2.11/32".parse().expect("prefix");
        let v = seen(true, true);
        let peers = per_family(&[vip()]);
        // Denied toward the one IPv4 session: filtered, though the IPv6
        // session's policy (none) would permit it, were it an IPv4 peer.
        assert_eq!(class(&v, denied, &peers, Some(&policy)), Class::Filtered);
        assert_eq!(
            filtered_by(&policy, T, &denied, &peers).as_deref(),
            Some("to 198.18.1.1: denied by route-map OUT4 (no entry matches: implicit deny)")
        );
        assert_eq!(class(&v, vip(), &peers, Some(&policy)), Class::Advertised);
        // The IPv4 session down: no peer for an IPv4 VIP, whatever the IPv6
        // session does.
        let mut down = peers.clone();
        down[0].established = false;
        assert_eq!(class(&v, vip(), &down, Some(&policy)), Class::NoPeer);
        // A session that did not negotiate IPv4 is no IPv4 peer either.
        let mut unnegotiated = peers;
        unnegotiated[0].families = crate::model::Families::NONE;
        assert_eq!(
            class(&v, vip(), &unnegotiated, Some(&policy)),
            Class::NoPeer
        );
    }

    #[test]
    fn filtered_by_names_the_route_map_entry_that_denies() {
        let policy = intent::parse(ONE_PERMITTED, None);
        let other: Prefix = "192.0.2.11/32".parse().expect("prefix");
        let peers = [peer(&[])];
        assert_eq!(
            filtered_by(&policy, T, &other, &peers).as_deref(),
            Some("denied by route-map RM seq 20")
        );
        assert_eq!(filtered_by(&policy, T, &vip(), &peers), None);
    }
}
