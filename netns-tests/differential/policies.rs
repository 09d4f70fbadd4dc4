//! The seeded generator of the differential test's policies: route-maps
//! and the lists they match (prefix-lists with `ge`/`le`, access-lists,
//! community-lists), attached to the redistribution of table 198 and to a
//! neighbour's (or its peer-group's) outbound side, with candidate
//! prefixes chosen at the entries' boundaries.
//!
//! Deterministic: one seed, one sequence of policies (a SplitMix64 stream,
//! no dependency). A policy is one node's and one family's: its objects,
//! the configuration text that creates them (and the text that removes
//! them again), the construct each route-map entry uses (for the
//! abstentions' tally) and its candidates. The text is frr.conf syntax,
//! applied by `vtysh -f`.
//!
//! What stays in bgpd between policies (the base configuration, see
//! [`base_config`]): the attachment points, route-maps and prefix-lists of
//! fixed names, each with a first entry that passes the round's marker
//! prefix (the differential waits for the marker at the router: every
//! route added before it has then been sent or filtered), so that a
//! redistribution or a neighbour never points at a route-map that is
//! deleted and made again. A policy fills them with its entries (sequence
//! 5 and up) and adds objects of its own, named after its round.

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ribbridge::model::Prefix;
use ribbridge::model::intent::Family;

/// SplitMix64: a small, well-mixed, seedable stream.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The stream of `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the modulo's bias is negligible here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u32, hi: u32) -> u32 {
        lo + u32::try_from(self.below(u64::from(hi - lo) + 1)).expect("in range")
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// One of `xs`.
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[usize::try_from(self.below(xs.len() as u64)).expect("an index")]
    }

    /// `xs` in a random order.
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = usize::try_from(self.below(i as u64 + 1)).expect("an index");
            xs.swap(i, j);
        }
    }
}

/// What a release's bgpd is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// FRR 8.4: the table through zebra's import (`redistribute table`),
    /// IPv4 only.
    pub import: bool,
}

impl Dialect {
    /// The families this release redistributes table 198 in.
    pub fn families(self) -> &'static [Family] {
        if self.import {
            &[Family::Ipv4]
        } else {
            &[Family::Ipv4, Family::Ipv6]
        }
    }

    /// The redistribution keyword.
    pub fn redistribute(self) -> &'static str {
        if self.import { "table" } else { "table-direct" }
    }
}

/// The address space of one family: where candidates and list entries
/// live, and where the markers do (apart from them).
#[derive(Debug, Clone, Copy)]
pub struct Space {
    pub family: Family,
    /// `ip` or `ipv6`.
    pub word: &'static str,
    /// `V4` or `V6`, the suffix of every name.
    pub tag: &'static str,
    /// Candidates and list entries lie inside it.
    pub base: (IpAddr, u8),
    /// The family's longest prefix.
    pub max: u8,
    /// The markers: hosts of this prefix, never a candidate.
    pub marker: (IpAddr, u8),
}

/// The two families' spaces (documentation-free private ranges: nothing
/// of the lab's own addressing is inside them).
pub fn space(family: Family) -> Space {
    match family {
        Family::Ipv4 => Space {
            family,
            word: "ip",
            tag: "V4",
            base: (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 0)), 8),
            max: 32,
            marker: (IpAddr::V4(Ipv4Addr::new(100, 64, 0, 0)), 16),
        },
        Family::Ipv6 => Space {
            family,
            word: "ipv6",
            tag: "V6",
            base: (
                IpAddr::V6(Ipv6Addr::new(0xfd00, 0xd1ff, 0, 0, 0, 0, 0, 0)),
                32,
            ),
            max: 128,
            marker: (
                IpAddr::V6(Ipv6Addr::new(0xfd00, 0xffff, 0, 0, 0, 0, 0, 0)),
                64,
            ),
        },
    }
}

fn bits(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

fn addr_of(family: Family, b: u128) -> IpAddr {
    match family {
        Family::Ipv4 => IpAddr::V4(Ipv4Addr::from(u32::try_from(b).expect("an IPv4 address"))),
        Family::Ipv6 => IpAddr::V6(Ipv6Addr::from(b)),
    }
}

/// The mask of the first `len` bits of a `max`-bit address.
fn mask(max: u8, len: u8) -> u128 {
    if len == 0 {
        return 0;
    }
    let all = if max == 128 {
        u128::MAX
    } else {
        (1u128 << max) - 1
    };
    all & !((1u128 << (max - len)) - 1)
}

/// `a` cut to `len` bits, as a prefix.
fn cut(s: &Space, a: u128, len: u8) -> Prefix {
    Prefix::new(addr_of(s.family, a & mask(s.max, len)), len).expect("a masked prefix")
}

/// A random address inside `p`.
fn inside(rng: &mut Rng, s: &Space, p: &Prefix) -> u128 {
    let host = !mask(s.max, p.prefix_len()) & mask(s.max, s.max);
    let random = (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64());
    bits(p.addr()) | (random & host)
}

/// The marker of `round` (a host of the family's marker prefix).
pub fn marker(family: Family, round: u32) -> Prefix {
    let s = space(family);
    let a = bits(s.marker.0) | u128::from(round % 60_000 + 1);
    Prefix::host(addr_of(family, a))
}

/// One prefix-list entry.
#[derive(Debug, Clone)]
pub struct PlEntry {
    pub seq: u32,
    pub permit: bool,
    /// None: `any`.
    pub prefix: Option<Prefix>,
    pub ge: Option<u8>,
    pub le: Option<u8>,
}

/// One access-list entry (zebra's style: a prefix, `exact-match` or not).
#[derive(Debug, Clone)]
pub struct AclEntry {
    pub seq: u32,
    pub permit: bool,
    /// None: `any`.
    pub prefix: Option<Prefix>,
    pub exact: bool,
}

/// A `match` clause.
#[derive(Debug, Clone)]
pub enum Clause {
    /// `match ip|ipv6 address prefix-list NAME` (`other`: the other
    /// family's keyword, never matching this family's routes;
    /// `undefined`: the list does not exist).
    PrefixList {
        name: String,
        other: bool,
        undefined: bool,
    },
    /// `match ip|ipv6 address NAME` (an access-list).
    Acl { name: String },
    /// `match tag N`.
    Tag(u32),
    /// `match source-protocol P`.
    SourceProtocol(&'static str),
    /// `match community NAME [exact-match]`.
    Community { name: String, exact: bool },
}

/// A `set` clause.
#[derive(Debug, Clone)]
pub enum SetClause {
    Tag(u32),
    Community { value: String, additive: bool },
    Metric(u32),
}

/// What an entry does after a permit (`continue` without a sequence is
/// incomplete to FRR 10.7's parser: only `continue N` is written).
#[derive(Debug, Clone, Copy)]
pub enum Flow {
    OnMatchNext,
    OnMatchGoto(u32),
    ContinueTo(u32),
}

/// One route-map entry.
#[derive(Debug, Clone)]
pub struct Entry {
    pub seq: u32,
    pub permit: bool,
    pub matches: Vec<Clause>,
    pub sets: Vec<SetClause>,
    pub call: Option<String>,
    pub flow: Option<Flow>,
}

impl Entry {
    /// The constructs this entry uses, by name (the abstentions' tally).
    pub fn constructs(&self) -> Vec<&'static str> {
        let mut c: Vec<&'static str> = self
            .matches
            .iter()
            .map(|m| match m {
                Clause::PrefixList {
                    undefined: true, ..
                } => "match prefix-list (undefined)",
                Clause::PrefixList { other: true, .. } => "match prefix-list (other family)",
                Clause::PrefixList { .. } => "match prefix-list",
                Clause::Acl { .. } => "match access-list",
                Clause::Tag(_) => "match tag",
                Clause::SourceProtocol(_) => "match source-protocol",
                Clause::Community { exact: true, .. } => "match community exact-match",
                Clause::Community { .. } => "match community",
            })
            .collect();
        if self.call.is_some() {
            c.push("call");
        }
        c.push(match self.flow {
            Some(Flow::OnMatchNext) => "on-match next",
            Some(Flow::OnMatchGoto(_)) => "on-match goto",
            Some(Flow::ContinueTo(_)) => "continue N",
            None => return c,
        });
        c
    }
}

/// A route-map: a sub map (`call`ed, made and removed by the policy) or
/// the generated entries of a fixed one.
#[derive(Debug, Clone)]
pub struct RouteMap {
    pub name: String,
    pub entries: Vec<Entry>,
}

/// Where an outbound filter sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The neighbour itself (`neighbor ADDR ...`).
    Member,
    /// Its peer-group (`neighbor GROUP ...`).
    Group,
}

/// An outbound filter of the policy.
#[derive(Debug, Clone)]
pub enum Out {
    /// `neighbor X route-map NAME out` with these entries.
    RouteMap { target: Target, map: RouteMap },
    /// `neighbor X prefix-list NAME out` with these entries.
    PrefixList {
        target: Target,
        name: String,
        entries: Vec<PlEntry>,
    },
}

impl Out {
    /// Its construct's name (the abstentions' tally).
    pub fn construct(&self) -> &'static str {
        match self {
            Out::RouteMap {
                target: Target::Member,
                ..
            } => "neighbor route-map out",
            Out::RouteMap {
                target: Target::Group,
                ..
            } => "peer-group route-map out",
            Out::PrefixList {
                target: Target::Member,
                ..
            } => "neighbor prefix-list out",
            Out::PrefixList {
                target: Target::Group,
                ..
            } => "peer-group prefix-list out",
        }
    }
}

/// How a node's neighbours are configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Each neighbour in a peer-group of its family (`DIFF-G4`, `DIFF-G6`):
    /// filters on the group, the member or both.
    PeerGroups,
    /// Plain neighbours.
    Direct,
}

/// One node's and family's generated policy.
#[derive(Debug, Clone)]
pub struct Policy {
    pub round: u32,
    /// Every construct (else only what ribbridge evaluates today).
    pub rich: bool,
    pub space: Space,
    /// The generated entries of the redistribution's route-map.
    pub redistribution: RouteMap,
    /// The outbound filters (none: the neighbour sends what bgpd has).
    pub out: Vec<Out>,
    /// Sub maps (`call` targets).
    pub subs: Vec<RouteMap>,
    pub prefix_lists: Vec<(String, Vec<PlEntry>)>,
    pub acls: Vec<(String, Vec<AclEntry>)>,
    pub community_lists: Vec<(String, Vec<(bool, String)>)>,
    pub candidates: Vec<Prefix>,
}

/// The fixed names of a family's attachment points.
pub fn redistribution_map(s: &Space) -> String {
    format!("DIFF-REDIST-{}", s.tag)
}
fn out_map(s: &Space, t: Target) -> String {
    match t {
        Target::Member => format!("DIFF-OUT-{}", s.tag),
        Target::Group => format!("DIFF-GROUP-{}", s.tag),
    }
}
fn out_list(s: &Space, t: Target) -> String {
    match t {
        Target::Member => format!("DIFF-OUT-PL-{}", s.tag),
        Target::Group => format!("DIFF-GROUP-PL-{}", s.tag),
    }
}
fn marker_list(s: &Space) -> String {
    format!("DIFF-MARK-{}", s.tag)
}
/// A family's peer-group (the [`Style::PeerGroups`] node's).
pub fn group(s: &Space) -> String {
    format!("DIFF-G{}", &s.tag[1..])
}

/// The marker entries' ranges: every host of the marker prefix.
fn marker_range(s: &Space) -> String {
    format!("{}/{} ge {}", s.marker.0, s.marker.1, s.max)
}

/// A node's configuration before any policy: FRR's datacenter defaults
/// (no advertisement interval: the router sees a change at once), bgpd
/// applying a route-map's change only to routes it evaluates from then on
/// (`bgp route-map delay-timer 0`: each policy's routes are added after it
/// is in place), the neighbours of `peers` (router address, family) in
/// `style`, and per family the redistribution of table 198 through its
/// fixed route-map and the fixed outbound route-maps and prefix-lists,
/// each passing the markers only.
pub fn base_config(
    hostname: &str,
    router_id: &str,
    dialect: Dialect,
    style: Style,
    peers: &[(String, Family)],
) -> String {
    let mut t = String::new();
    let w = &mut t;
    let _ = writeln!(w, "frr defaults datacenter");
    let _ = writeln!(w, "hostname {hostname}");
    let _ = writeln!(
        w,
        "log file /run/ribbridge-lab/{hostname}/frr.log informational"
    );
    let _ = writeln!(w, "bgp route-map delay-timer 0");
    if dialect.import {
        let _ = writeln!(w, "ip import-table 198");
    }
    for f in dialect.families() {
        let s = space(*f);
        let mark = marker_range(&s);
        let _ = writeln!(
            w,
            "{} prefix-list {} seq 1 permit {mark}",
            s.word,
            marker_list(&s)
        );
        for t in [Target::Member, Target::Group] {
            let _ = writeln!(
                w,
                "{} prefix-list {} seq 1 permit {mark}",
                s.word,
                out_list(&s, t)
            );
        }
        for m in [
            redistribution_map(&s),
            out_map(&s, Target::Member),
            out_map(&s, Target::Group),
        ] {
            let _ = writeln!(w, "route-map {m} permit 1");
            let _ = writeln!(
                w,
                " match {} address prefix-list {}",
                s.word,
                marker_list(&s)
            );
            let _ = writeln!(w, "exit");
        }
    }
    let _ = writeln!(w, "router bgp 64512");
    let _ = writeln!(w, " bgp router-id {router_id}");
    let _ = writeln!(w, " no bgp ebgp-requires-policy");
    let _ = writeln!(w, " no bgp network import-check");
    let _ = writeln!(w, " no bgp default ipv4-unicast");
    if style == Style::PeerGroups {
        for f in dialect.families() {
            let g = group(&space(*f));
            let _ = writeln!(w, " neighbor {g} peer-group");
            let _ = writeln!(w, " neighbor {g} remote-as 64513");
        }
    }
    for (p, f) in peers {
        match style {
            Style::PeerGroups if dialect.families().contains(f) => {
                let _ = writeln!(w, " neighbor {p} peer-group {}", group(&space(*f)));
            }
            _ => {
                let _ = writeln!(w, " neighbor {p} remote-as 64513");
            }
        }
    }
    for f in [Family::Ipv4, Family::Ipv6] {
        let s = space(f);
        let _ = writeln!(w, " address-family {} unicast", f.name());
        if dialect.families().contains(&f) {
            let _ = writeln!(
                w,
                "  redistribute {} 198 route-map {}",
                dialect.redistribute(),
                redistribution_map(&s)
            );
        }
        for (p, pf) in peers.iter().filter(|(_, pf)| *pf == f) {
            let who = match style {
                Style::PeerGroups if dialect.families().contains(pf) => group(&s),
                _ => p.clone(),
            };
            let _ = writeln!(w, "  neighbor {who} activate");
        }
        let _ = writeln!(w, " exit-address-family");
    }
    let _ = writeln!(w, "exit");
    let _ = writeln!(w, "end");
    t
}

/// The generator: one stream of policies.
#[derive(Debug)]
pub struct Generator {
    pub rng: Rng,
    /// How many candidates a policy gets at most.
    pub candidates: usize,
}

/// Community values the policies set and match.
const COMMUNITIES: [&str; 3] = ["64512:7", "64512:8", "64512:9"];
/// Tags the policies set and match.
const TAGS: [u32; 3] = [7, 8, 9];

impl Generator {
    /// One policy of `round` for family `f`, its outbound filters as a node
    /// of `style` can hold them.
    pub fn policy(&mut self, round: u32, f: Family, style: Style) -> Policy {
        let s = space(f);
        // Half the policies use only what ribbridge evaluates today
        // (prefix-list matches, permit and deny, `set`, outbound
        // route-maps): their every verdict is compared. The other half use
        // every construct, and abstain where the evaluator stops.
        let rich = self.rng.chance(50);
        let mut p = Policy {
            round,
            rich,
            space: s,
            redistribution: RouteMap {
                name: redistribution_map(&s),
                entries: Vec::new(),
            },
            out: Vec::new(),
            subs: Vec::new(),
            prefix_lists: Vec::new(),
            acls: Vec::new(),
            community_lists: Vec::new(),
            candidates: Vec::new(),
        };
        // Anchors: a few prefixes the lists' entries are made around, so
        // that entries overlap and their order decides.
        let anchors: Vec<Prefix> = (0..self.rng.range(1, 3))
            .map(|_| {
                let len = self
                    .rng
                    .range(u32::from(s.base.1) + 4, u32::from(s.max) - 6);
                let len = u8::try_from(len).expect("a length");
                let whole = Prefix::new(s.base.0, s.base.1).expect("the base");
                cut(&s, inside(&mut self.rng, &s, &whole), len)
            })
            .collect();
        let n_lists = self.rng.range(1, 3);
        for i in 1..=n_lists {
            let name = format!("D{round}-PL{i}-{}", s.tag);
            let entries = self.prefix_list(&s, &anchors);
            p.prefix_lists.push((name, entries));
        }
        if rich && self.rng.chance(50) {
            let name = format!("D{round}-ACL1-{}", s.tag);
            let entries = self.acl(&s, &anchors);
            p.acls.push((name, entries));
        }
        if rich && self.rng.chance(50) {
            let name = format!("D{round}-CL1-{}", s.tag);
            let n = self.rng.range(1, 2);
            let entries = (0..n)
                .map(|_| (self.rng.chance(80), self.rng.pick(&COMMUNITIES).to_string()))
                .collect();
            p.community_lists.push((name, entries));
        }
        if rich && self.rng.chance(40) {
            let name = format!("D{round}-SUB1-{}", s.tag);
            let entries = self.entries(&p, &s, false, 1, 3);
            p.subs.push(RouteMap { name, entries });
        }
        // What is under test: the redistribution, the outbound side, or both.
        let (redist, out) = match self.rng.below(10) {
            0..=2 => (true, false),
            3..=5 => (false, true),
            _ => (true, true),
        };
        p.redistribution.entries = if redist {
            self.entries(&p, &s, true, 1, 6)
        } else {
            vec![Entry {
                seq: 10,
                permit: true,
                matches: Vec::new(),
                sets: Vec::new(),
                call: None,
                flow: None,
            }]
        };
        if out {
            let targets: &[Target] = match style {
                Style::PeerGroups => &[Target::Member, Target::Group],
                Style::Direct => &[Target::Member],
            };
            // One filter, or a route-map and a prefix-list (each on the
            // member or the group): bgpd applies both.
            let both = rich && self.rng.chance(40);
            let first_map = !rich || self.rng.chance(50);
            let kinds: Vec<bool> = if both {
                vec![true, false]
            } else {
                vec![first_map]
            };
            for is_map in kinds {
                let target = self.rng.pick(targets);
                if is_map {
                    let entries = self.entries(&p, &s, true, 1, 5);
                    p.out.push(Out::RouteMap {
                        target,
                        map: RouteMap {
                            name: out_map(&s, target),
                            entries,
                        },
                    });
                } else {
                    let entries = self.prefix_list(&s, &anchors);
                    p.out.push(Out::PrefixList {
                        target,
                        name: out_list(&s, target),
                        entries,
                    });
                }
            }
        }
        p.candidates = self.candidates(&p, &s, &anchors);
        p
    }

    /// A prefix-list's entries around `anchors` (sequence 5 and up: a fixed
    /// list's marker entry is 1).
    fn prefix_list(&mut self, s: &Space, anchors: &[Prefix]) -> Vec<PlEntry> {
        let n = self.rng.range(1, 5);
        let mut seq = 2;
        (0..n)
            .map(|_| {
                seq += self.rng.pick(&[5, 5, 10, 3]);
                let permit = self.rng.chance(65);
                if self.rng.chance(5) {
                    return PlEntry {
                        seq,
                        permit,
                        prefix: None,
                        ge: None,
                        le: None,
                    };
                }
                let a = self.rng.pick(anchors);
                // The anchor itself, a prefix covering it, or one inside.
                let len = match self.rng.below(3) {
                    0 => a.prefix_len(),
                    1 => a
                        .prefix_len()
                        .saturating_sub(u8::try_from(self.rng.range(1, 4)).expect("small")),
                    _ => a.prefix_len() + u8::try_from(self.rng.range(1, 4)).expect("small"),
                }
                .clamp(s.base.1, s.max);
                let prefix = cut(s, inside(&mut self.rng, s, &a), len);
                let pick_len = |rng: &mut Rng, lo: u8| {
                    u8::try_from(rng.range(u32::from(lo), u32::from(s.max))).expect("a length")
                };
                let (ge, le) = match self.rng.below(4) {
                    0 => (None, None),
                    1 => (None, Some(pick_len(&mut self.rng, len))),
                    2 => (Some(pick_len(&mut self.rng, len)), None),
                    _ => {
                        let ge = pick_len(&mut self.rng, len);
                        (Some(ge), Some(pick_len(&mut self.rng, ge)))
                    }
                };
                PlEntry {
                    seq,
                    permit,
                    prefix: Some(prefix),
                    ge,
                    le,
                }
            })
            .collect()
    }

    fn acl(&mut self, s: &Space, anchors: &[Prefix]) -> Vec<AclEntry> {
        let n = self.rng.range(1, 3);
        let mut seq = 0;
        (0..n)
            .map(|_| {
                seq += 5;
                let a = self.rng.pick(anchors);
                let len = (a.prefix_len() + u8::try_from(self.rng.range(0, 3)).expect("small"))
                    .min(s.max);
                AclEntry {
                    seq,
                    permit: self.rng.chance(65),
                    prefix: (!self.rng.chance(5))
                        .then(|| cut(s, inside(&mut self.rng, s, &a), len)),
                    exact: self.rng.chance(30),
                }
            })
            .collect()
    }

    /// `lo..=hi` route-map entries (sequence 5 and up) over the policy's
    /// objects; `flow`: entries may `call`, go on or jump.
    fn entries(&mut self, p: &Policy, s: &Space, flow: bool, lo: u32, hi: u32) -> Vec<Entry> {
        let n = self.rng.range(lo, hi);
        let mut seqs: Vec<u32> = Vec::new();
        let mut seq = 4;
        for _ in 0..n {
            seq += self.rng.pick(&[5, 5, 10, 1]);
            seqs.push(seq);
        }
        let mut out = Vec::new();
        for (i, &seq) in seqs.iter().enumerate() {
            let permit = self.rng.chance(65);
            let mut matches = Vec::new();
            for _ in 0..self.rng.pick(&[0, 1, 1, 1, 2]) {
                matches.push(self.clause(p, s, p.rich));
            }
            let mut sets = Vec::new();
            if permit && self.rng.chance(30) {
                sets.push(match self.rng.below(3) {
                    0 => SetClause::Tag(self.rng.pick(&TAGS)),
                    1 => SetClause::Community {
                        value: self.rng.pick(&COMMUNITIES).to_string(),
                        additive: self.rng.chance(50),
                    },
                    _ => SetClause::Metric(self.rng.range(1, 500)),
                });
            }
            // Both act after a permit only (10.7's validation rejects an
            // `on-match` on a deny entry).
            let flow = flow && p.rich;
            let call = (flow && permit && !p.subs.is_empty() && self.rng.chance(20))
                .then(|| p.subs[0].name.clone());
            let later = &seqs[i + 1..];
            let flow = if flow && permit && self.rng.chance(25) {
                // A jump's target: a later entry, or a sequence between two.
                let to = |rng: &mut Rng| match later {
                    [] => seq + 1,
                    l => rng.pick(l) - u32::from(rng.chance(20)),
                };
                Some(match self.rng.below(3) {
                    0 => Flow::OnMatchNext,
                    1 => Flow::OnMatchGoto(to(&mut self.rng).max(seq + 1)),
                    _ => Flow::ContinueTo(to(&mut self.rng).max(seq + 1)),
                })
            } else {
                None
            };
            out.push(Entry {
                seq,
                permit,
                matches,
                sets,
                call,
                flow,
            });
        }
        out
    }

    /// One `match` clause; `rich`: of any kind, else on a prefix-list.
    fn clause(&mut self, p: &Policy, s: &Space, rich: bool) -> Clause {
        loop {
            match if rich { self.rng.below(20) } else { 0 } {
                0..=11 => {
                    let i = usize::try_from(self.rng.below(p.prefix_lists.len() as u64))
                        .expect("an index");
                    let name = &p.prefix_lists[i].0;
                    let undefined = rich && self.rng.chance(5);
                    return Clause::PrefixList {
                        name: if undefined {
                            format!("D{}-NOPL-{}", p.round, s.tag)
                        } else {
                            name.clone()
                        },
                        other: self.rng.chance(5),
                        undefined,
                    };
                }
                12..=13 if !p.acls.is_empty() => {
                    return Clause::Acl {
                        name: p.acls[0].0.clone(),
                    };
                }
                14..=15 => return Clause::Tag(self.rng.pick(&TAGS)),
                // No word of `match source-protocol` names the VIP
                // table's routes (10.7 offers no `table-direct`): the
                // clause never matches them, whichever it is.
                16 => {
                    return Clause::SourceProtocol(self.rng.pick(&[
                        "kernel",
                        "static",
                        "connected",
                        "bgp",
                    ]));
                }
                17..=19 if !p.community_lists.is_empty() => {
                    return Clause::Community {
                        name: p.community_lists[0].0.clone(),
                        exact: self.rng.chance(25),
                    };
                }
                _ => {}
            }
        }
    }

    /// Candidates at the lists' boundaries: per entry, prefixes inside and
    /// just outside its range (its length, one shorter and longer, its
    /// `ge`/`le` and one past them, the longest), and a few anywhere in the
    /// family's space; at most `self.candidates`, no marker, all distinct.
    fn candidates(&mut self, p: &Policy, s: &Space, anchors: &[Prefix]) -> Vec<Prefix> {
        let mut edges: Vec<(Prefix, Vec<u8>)> = Vec::new();
        let lists = p
            .prefix_lists
            .iter()
            .map(|(_, e)| e)
            .chain(p.out.iter().filter_map(|o| match o {
                Out::PrefixList { entries, .. } => Some(entries),
                Out::RouteMap { .. } => None,
            }));
        for entries in lists {
            for e in entries {
                let Some(pre) = e.prefix else { continue };
                let l = pre.prefix_len();
                let mut lens = vec![l, l.saturating_sub(1), l.saturating_add(1), s.max];
                for b in [e.ge, e.le].into_iter().flatten() {
                    lens.extend([b.saturating_sub(1), b, b.saturating_add(1)]);
                }
                edges.push((pre, lens));
            }
        }
        for (_, entries) in &p.acls {
            for e in entries {
                let Some(pre) = e.prefix else { continue };
                let l = pre.prefix_len();
                edges.push((pre, vec![l, l.saturating_sub(1), l + 1, s.max]));
            }
        }
        for a in anchors {
            edges.push((*a, vec![a.prefix_len(), s.max]));
        }
        let mut all: Vec<Prefix> = Vec::new();
        for (pre, lens) in edges {
            for len in lens {
                if len < s.base.1 || len > s.max {
                    continue;
                }
                // Inside the entry's prefix (or covering it, when shorter),
                // and the same beside it: its sibling at its own length.
                let sibling = cut(
                    s,
                    bits(pre.addr()) ^ (1u128 << (s.max - pre.prefix_len())),
                    pre.prefix_len(),
                );
                for around in [pre, sibling] {
                    if around.prefix_len() <= s.base.1 && around != pre {
                        continue;
                    }
                    let a = inside(&mut self.rng, s, &around);
                    all.push(cut(s, a, len));
                }
            }
        }
        let whole = Prefix::new(s.base.0, s.base.1).expect("the base");
        for _ in 0..3 {
            let len = u8::try_from(self.rng.range(u32::from(s.base.1) + 1, u32::from(s.max)))
                .expect("a length");
            all.push(cut(s, inside(&mut self.rng, s, &whole), len));
        }
        // Inside the family's space only (a shorter prefix may cover more).
        all.retain(|c| c.prefix_len() > s.base.1 && whole.contains(c.addr()));
        all.sort();
        all.dedup();
        self.rng.shuffle(&mut all);
        all.truncate(self.candidates);
        all.sort();
        all
    }
}

fn pl_line(word: &str, name: &str, e: &PlEntry) -> String {
    let action = if e.permit { "permit" } else { "deny" };
    let what = match e.prefix {
        None => "any".to_string(),
        Some(p) => {
            let mut t = p.to_string();
            if let Some(g) = e.ge {
                let _ = write!(t, " ge {g}");
            }
            if let Some(l) = e.le {
                let _ = write!(t, " le {l}");
            }
            t
        }
    };
    format!("{word} prefix-list {name} seq {} {action} {what}", e.seq)
}

fn acl_line(s: &Space, name: &str, e: &AclEntry) -> String {
    let action = if e.permit { "permit" } else { "deny" };
    let what = match e.prefix {
        None => "any".to_string(),
        Some(p) if e.exact => format!("{p} exact-match"),
        Some(p) => p.to_string(),
    };
    let kw = match s.family {
        Family::Ipv4 => "access-list",
        Family::Ipv6 => "ipv6 access-list",
    };
    format!("{kw} {name} seq {} {action} {what}", e.seq)
}

fn entry_lines(s: &Space, map: &str, e: &Entry, out: &mut Vec<String>) {
    let action = if e.permit { "permit" } else { "deny" };
    out.push(format!("route-map {map} {action} {}", e.seq));
    let other = match s.family {
        Family::Ipv4 => "ipv6",
        Family::Ipv6 => "ip",
    };
    for m in &e.matches {
        out.push(match m {
            Clause::PrefixList { name, other: o, .. } => format!(
                " match {} address prefix-list {name}",
                if *o { other } else { s.word }
            ),
            Clause::Acl { name } => format!(" match {} address {name}", s.word),
            Clause::Tag(t) => format!(" match tag {t}"),
            Clause::SourceProtocol(p) => format!(" match source-protocol {p}"),
            Clause::Community { name, exact } => format!(
                " match community {name}{}",
                if *exact { " exact-match" } else { "" }
            ),
        });
    }
    for st in &e.sets {
        out.push(match st {
            SetClause::Tag(t) => format!(" set tag {t}"),
            SetClause::Community { value, additive } => format!(
                " set community {value}{}",
                if *additive { " additive" } else { "" }
            ),
            SetClause::Metric(m) => format!(" set metric {m}"),
        });
    }
    if let Some(c) = &e.call {
        out.push(format!(" call {c}"));
    }
    match e.flow {
        Some(Flow::OnMatchNext) => out.push(" on-match next".to_string()),
        Some(Flow::OnMatchGoto(n)) => out.push(format!(" on-match goto {n}")),
        Some(Flow::ContinueTo(n)) => out.push(format!(" continue {n}")),
        None => {}
    }
    out.push("exit".to_string());
}

/// The neighbour (or group) a filter of `target` is written on.
fn who(s: &Space, target: Target, peer: &str) -> String {
    match target {
        Target::Member => peer.to_string(),
        Target::Group => group(s),
    }
}

impl Policy {
    /// The lines that create the policy on a node whose neighbour of this
    /// family is `peer`: its objects, then the fixed route-maps' and
    /// prefix-lists' entries, then the attachments.
    pub fn create(&self, peer: &str) -> Vec<String> {
        let s = &self.space;
        let mut out = Vec::new();
        for (name, entries) in &self.prefix_lists {
            out.extend(entries.iter().map(|e| pl_line(s.word, name, e)));
        }
        for (name, entries) in &self.acls {
            out.extend(entries.iter().map(|e| acl_line(s, name, e)));
        }
        for (name, entries) in &self.community_lists {
            for (permit, c) in entries {
                let action = if *permit { "permit" } else { "deny" };
                out.push(format!("bgp community-list standard {name} {action} {c}"));
            }
        }
        for m in &self.subs {
            for e in &m.entries {
                entry_lines(s, &m.name, e, &mut out);
            }
        }
        for e in &self.redistribution.entries {
            entry_lines(s, &self.redistribution.name, e, &mut out);
        }
        for o in &self.out {
            match o {
                Out::RouteMap { map, .. } => {
                    for e in &map.entries {
                        entry_lines(s, &map.name, e, &mut out);
                    }
                }
                Out::PrefixList { name, entries, .. } => {
                    out.extend(entries.iter().map(|e| pl_line(s.word, name, e)));
                }
            }
        }
        if !self.out.is_empty() {
            out.push("router bgp 64512".to_string());
            out.push(format!(" address-family {} unicast", s.family.name()));
            for o in &self.out {
                out.push(match o {
                    Out::RouteMap { target, map } => {
                        format!(
                            "  neighbor {} route-map {} out",
                            who(s, *target, peer),
                            map.name
                        )
                    }
                    Out::PrefixList { target, name, .. } => {
                        format!(
                            "  neighbor {} prefix-list {name} out",
                            who(s, *target, peer)
                        )
                    }
                });
            }
            out.push(" exit-address-family".to_string());
            out.push("exit".to_string());
        }
        out
    }

    /// The lines that remove it again (the reverse order: attachments,
    /// the fixed objects' entries, the policy's own objects).
    pub fn remove(&self, peer: &str) -> Vec<String> {
        let s = &self.space;
        let mut out = Vec::new();
        if !self.out.is_empty() {
            out.push("router bgp 64512".to_string());
            out.push(format!(" address-family {} unicast", s.family.name()));
            for o in &self.out {
                out.push(match o {
                    Out::RouteMap { target, map } => format!(
                        "  no neighbor {} route-map {} out",
                        who(s, *target, peer),
                        map.name
                    ),
                    Out::PrefixList { target, name, .. } => {
                        format!(
                            "  no neighbor {} prefix-list {name} out",
                            who(s, *target, peer)
                        )
                    }
                });
            }
            out.push(" exit-address-family".to_string());
            out.push("exit".to_string());
        }
        let drop_entries = |map: &RouteMap, out: &mut Vec<String>| {
            for e in &map.entries {
                let action = if e.permit { "permit" } else { "deny" };
                out.push(format!("no route-map {} {action} {}", map.name, e.seq));
            }
        };
        drop_entries(&self.redistribution, &mut out);
        for o in &self.out {
            match o {
                Out::RouteMap { map, .. } => drop_entries(map, &mut out),
                Out::PrefixList { name, entries, .. } => {
                    for e in entries {
                        out.push(format!("no {} prefix-list {name} seq {}", s.word, e.seq));
                    }
                }
            }
        }
        for m in &self.subs {
            out.push(format!("no route-map {}", m.name));
        }
        for (name, _) in &self.prefix_lists {
            out.push(format!("no {} prefix-list {name}", s.word));
        }
        for (name, _) in &self.acls {
            out.push(match s.family {
                Family::Ipv4 => format!("no access-list {name}"),
                Family::Ipv6 => format!("no ipv6 access-list {name}"),
            });
        }
        for (name, _) in &self.community_lists {
            out.push(format!("no bgp community-list standard {name}"));
        }
        out
    }

    /// The entry `seq` of route-map `map`, if the policy generated it.
    pub fn entry(&self, map: &str, seq: u32) -> Option<&Entry> {
        let maps = std::iter::once(&self.redistribution)
            .chain(self.subs.iter())
            .chain(self.out.iter().filter_map(|o| match o {
                Out::RouteMap { map, .. } => Some(map),
                Out::PrefixList { .. } => None,
            }));
        maps.filter(|m| m.name == map)
            .flat_map(|m| m.entries.iter())
            .find(|e| e.seq == seq)
    }
}

/// The generator alone (no lab, no root): seeded, and its policies keep
/// the rules the differential relies on.
#[test]
fn differential_generator_is_seeded_and_keeps_its_rules() {
    let run = |seed: u64| -> Vec<Policy> {
        let mut g = Generator {
            rng: Rng::new(seed),
            candidates: 24,
        };
        (1..=50)
            .flat_map(|round| {
                [
                    g.policy(round, Family::Ipv4, Style::PeerGroups),
                    g.policy(round, Family::Ipv6, Style::Direct),
                ]
            })
            .collect()
    };
    let text = |ps: &[Policy]| -> Vec<Vec<String>> { ps.iter().map(|p| p.create("X")).collect() };
    let (a, b) = (run(7), run(7));
    assert_eq!(text(&a), text(&b), "one seed, one sequence");
    assert_ne!(text(&a), text(&run(8)), "another seed, another sequence");
    for p in &a {
        let s = p.space;
        let base = Prefix::new(s.base.0, s.base.1).expect("the base");
        let mark = Prefix::new(s.marker.0, s.marker.1).expect("the markers");
        assert!(!p.candidates.is_empty() && p.candidates.len() <= 24);
        let mut sorted = p.candidates.clone();
        sorted.dedup();
        assert_eq!(sorted, p.candidates, "distinct and sorted");
        for c in &p.candidates {
            assert!(
                base.contains(c.addr()) && c.prefix_len() > s.base.1 && !mark.contains(c.addr()),
                "{c} outside the family's space"
            );
        }
        let maps = std::iter::once(&p.redistribution).chain(p.out.iter().filter_map(|o| match o {
            Out::RouteMap { map, .. } => Some(map),
            Out::PrefixList { .. } => None,
        }));
        for m in maps {
            for e in &m.entries {
                // The base configuration's marker entry is sequence 1.
                assert!(e.seq >= 5, "{} seq {}", m.name, e.seq);
                assert!(e.permit || (e.flow.is_none() && e.call.is_none()));
                if let Some(Flow::OnMatchGoto(n) | Flow::ContinueTo(n)) = e.flow {
                    assert!(n > e.seq, "{} seq {} jumps back to {n}", m.name, e.seq);
                }
            }
        }
        // Whatever is made is removed again.
        let made: Vec<String> = p
            .prefix_lists
            .iter()
            .map(|(n, _)| n.clone())
            .chain(p.acls.iter().map(|(n, _)| n.clone()))
            .chain(p.community_lists.iter().map(|(n, _)| n.clone()))
            .chain(p.subs.iter().map(|m| m.name.clone()))
            .collect();
        let removed = p.remove("X").join("\n");
        for n in made {
            assert!(removed.contains(&n), "{n} is never removed:\n{removed}");
        }
    }
}
