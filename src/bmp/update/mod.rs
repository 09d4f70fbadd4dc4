//! The BGP UPDATE inside a BMP Route Monitoring message, decoded into the
//! unicast paths it announces and withdraws (RFC 4271 section 4.3, RFC 4760
//! MP_REACH_NLRI / MP_UNREACH_NLRI, RFC 7911 add-path, RFC 4724
//! End-of-RIB, RFC 7606 error handling, RFC 8654 extended messages).
//!
//! Contract: [`decode`] takes the UPDATE's body (what follows the 19-byte
//! BGP header; the caller checked marker, length and type) and returns an
//! [`Update`] or an [`UpdateError`]; it never panics, never indexes out of
//! bounds and never allocates from a length field ahead of the bytes that
//! fill it. Depends on `crate::model::Prefix` only.
//!
//! Rules:
//! - **Families.** Only IPv4 unicast (AFI 1/SAFI 1: the classic withdrawn
//!   routes and NLRI fields, and MP_REACH/MP_UNREACH) and IPv6 unicast
//!   (AFI 2/SAFI 1, MP_REACH/MP_UNREACH only) are decoded. Every other
//!   AFI/SAFI in an MP_REACH_NLRI or MP_UNREACH_NLRI (VPN, labeled unicast,
//!   multicast, EVPN, flowspec, RT constraint, BGP-LS, SR policy, MVPN, any
//!   unknown value) is skipped by the attribute's length, never parsed past
//!   its AFI/SAFI, and reported in [`Update::skipped`] with the number of
//!   attributes skipped; nothing inside a skipped attribute can fail the
//!   message, and an UPDATE carrying only skipped families is not an error.
//!   An MP attribute shorter than its 3-byte AFI/SAFI names no family and
//!   is an error.
//! - **End-of-RIB** (RFC 4724): IPv4 unicast is an UPDATE with no withdrawn
//!   routes, no attributes and no NLRI; any other family is an UPDATE
//!   holding only an MP_UNREACH_NLRI of that family with no NLRI. It is
//!   reported as [`EndOfRib::Unicast`] or, for a skipped family, as
//!   [`EndOfRib::Other`] (which the caller must not take for a unicast one).
//! - **Add-path** ([`Options::add_path`], RFC 7911): a 4-byte path id
//!   before each IPv4 and IPv6 unicast prefix, classic and MP.
//! - **Session reset** (RFC 7606 section 4: the NLRI cannot be located or
//!   read): an [`UpdateError`] when the withdrawn routes length or the total
//!   path attribute length runs past the UPDATE, an attribute's header or
//!   length runs past the attribute field, MP_REACH_NLRI or MP_UNREACH_NLRI
//!   appears more than once (section 3g), a unicast MP_REACH/MP_UNREACH is
//!   malformed (a prefix length over 32/128, a prefix or path id running
//!   past the attribute, an IPv6 unicast next hop length other than 16 or
//!   32, an IPv4 unicast one other than 4, 16 or 32 (RFC 8950)), or the
//!   classic withdrawn routes or NLRI field is malformed the same way.
//! - **Anomalies** (RFC 7606 sections 3 and 7, read for a monitor), only
//!   when the UPDATE announces unicast NLRI: ORIGIN (type 1: length 1,
//!   value 0..=2) or AS_PATH (type 2: segments of type 1..=4 whose AS
//!   counts times 4 bytes, 2 without [`Options::asn4`], fill the attribute
//!   exactly) missing or malformed; NEXT_HOP (type 3, length 4) missing or
//!   malformed when classic NLRI are present; one of those three with the
//!   optional flag set; LOCAL_PREF (5) or MULTI_EXIT_DISC (4) of a length
//!   other than 4. A BGP speaker would treat such an UPDATE as a withdraw;
//!   a station mirrors what the router already holds, and the NLRI were
//!   located and read intact, so the announced paths stay announced and
//!   [`Update::anomalies`] names every fault found, each once, in that
//!   order. A malformed ATOMIC_AGGREGATE (6) or AGGREGATOR (7) is discarded
//!   silently (RFC 7606 7.6, 7.7: attribute discard, the route kept).
//! - **Ignored**: a repeated attribute other than MP_REACH/MP_UNREACH (the
//!   first is kept, section 3g), unknown attributes, other malformed
//!   optional attributes (attribute discard), and next hop values.

mod attrs;
mod nlri;

use self::attrs::{anomalies, attributes};
use self::nlri::prefixes;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::model::{Family, Prefix};

/// The unicast family of an (AFI, SAFI) pair, if it is one: the wire's
/// encoding of the model's [`Family`].
pub fn family_of(afi: u16, safi: u8) -> Option<Family> {
    match (afi, safi) {
        (AFI_IPV4, SAFI_UNICAST) => Some(Family::Ipv4),
        (AFI_IPV6, SAFI_UNICAST) => Some(Family::Ipv6),
        _ => None,
    }
}

/// One path of a prefix: the prefix and its add-path id, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path {
    /// The prefix (host bits cleared).
    pub prefix: Prefix,
    /// The add-path id when the peer's session uses add-path.
    pub path_id: Option<u32>,
}

/// An End-of-RIB marker (RFC 4724) and its family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EndOfRib {
    /// The initial dump of a unicast family is complete.
    Unicast(Family),
    /// The End-of-RIB of a family that is not decoded (VPN, EVPN, ...):
    /// says nothing about the unicast families.
    Other {
        /// Its AFI.
        afi: u16,
        /// Its SAFI.
        safi: u8,
    },
}

/// A family the UPDATE carried in MP_REACH/MP_UNREACH that is not decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Skipped {
    /// Its AFI.
    pub afi: u16,
    /// Its SAFI.
    pub safi: u8,
    /// How many attributes of this family the UPDATE held (1 or 2).
    pub count: u32,
}

/// A missing or malformed attribute of an UPDATE that announces unicast
/// paths (RFC 7606's treat-as-withdraw cases): the paths still count, the
/// anomaly is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Anomaly {
    /// No ORIGIN attribute.
    MissingOrigin,
    /// ORIGIN of a wrong length, value or flags.
    MalformedOrigin,
    /// No AS_PATH attribute.
    MissingAsPath,
    /// AS_PATH whose segments do not parse, or wrong flags.
    MalformedAsPath,
    /// No NEXT_HOP attribute while classic IPv4 NLRI are announced.
    MissingNextHop,
    /// NEXT_HOP of a wrong length or flags while classic NLRI are announced.
    MalformedNextHop,
    /// LOCAL_PREF of a length other than 4.
    MalformedLocalPref,
    /// MULTI_EXIT_DISC of a length other than 4.
    MalformedMed,
}

impl Anomaly {
    /// Every anomaly, in the order [`decode`] checks them.
    pub const ALL: [Anomaly; 8] = [
        Anomaly::MissingOrigin,
        Anomaly::MalformedOrigin,
        Anomaly::MissingAsPath,
        Anomaly::MalformedAsPath,
        Anomaly::MissingNextHop,
        Anomaly::MalformedNextHop,
        Anomaly::MalformedLocalPref,
        Anomaly::MalformedMed,
    ];

    /// The metric's label value (a fixed, bounded set).
    pub fn label(self) -> &'static str {
        match self {
            Anomaly::MissingOrigin => "origin_missing",
            Anomaly::MalformedOrigin => "origin_malformed",
            Anomaly::MissingAsPath => "as_path_missing",
            Anomaly::MalformedAsPath => "as_path_malformed",
            Anomaly::MissingNextHop => "next_hop_missing",
            Anomaly::MalformedNextHop => "next_hop_malformed",
            Anomaly::MalformedLocalPref => "local_pref_malformed",
            Anomaly::MalformedMed => "med_malformed",
        }
    }

    /// A short text naming the attribute and the fault, for the log.
    pub fn as_str(self) -> &'static str {
        match self {
            Anomaly::MissingOrigin => "ORIGIN missing",
            Anomaly::MalformedOrigin => "ORIGIN malformed",
            Anomaly::MissingAsPath => "AS_PATH missing",
            Anomaly::MalformedAsPath => "AS_PATH malformed",
            Anomaly::MissingNextHop => "NEXT_HOP missing",
            Anomaly::MalformedNextHop => "NEXT_HOP malformed",
            Anomaly::MalformedLocalPref => "LOCAL_PREF malformed",
            Anomaly::MalformedMed => "MULTI_EXIT_DISC malformed",
        }
    }
}

impl fmt::Display for Anomaly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the peer's session says about the UPDATE's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Unicast NLRI carry a 4-byte add-path id (RFC 7911).
    pub add_path: bool,
    /// AS numbers in AS_PATH are 4 bytes (else 2).
    pub asn4: bool,
}

/// A decoded UPDATE: its unicast paths and what was not decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    /// Unicast paths announced (classic NLRI, then MP_REACH_NLRI).
    pub announced: Vec<Path>,
    /// Unicast paths withdrawn (classic, then MP_UNREACH_NLRI).
    pub withdrawn: Vec<Path>,
    /// Set when the UPDATE is an End-of-RIB marker.
    pub end_of_rib: Option<EndOfRib>,
    /// The families skipped, each once, in the order met.
    pub skipped: Vec<Skipped>,
    /// The missing or malformed attributes of an UPDATE that announces
    /// unicast paths, each once, in the order checked (empty when none).
    pub anomalies: Vec<Anomaly>,
}

/// Where in the UPDATE a prefix field is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// The classic withdrawn routes field.
    Withdrawn,
    /// The classic NLRI field.
    Nlri,
    /// An MP_REACH_NLRI attribute.
    MpReach,
    /// An MP_UNREACH_NLRI attribute.
    MpUnreach,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Withdrawn => "withdrawn routes",
            Field::Nlri => "NLRI",
            Field::MpReach => "MP_REACH_NLRI",
            Field::MpUnreach => "MP_UNREACH_NLRI",
        })
    }
}

/// An UPDATE whose NLRI cannot be located or read: RFC 7606's session
/// reset (the station ends the BMP session; the router dumps again).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    /// A length field runs past what holds it.
    #[error("the {what} length {len} runs past the {available} bytes left")]
    Length {
        /// "withdrawn routes", "total path attribute" or an attribute header.
        what: &'static str,
        /// The length field's value (or the header's size).
        len: usize,
        /// The bytes available.
        available: usize,
    },
    /// An attribute's length runs past the attribute field.
    #[error(
        "path attribute type {type_code} of {len} bytes runs past the {available} bytes left of the attribute field"
    )]
    Attribute {
        /// Its type code.
        type_code: u8,
        /// Its length field.
        len: usize,
        /// The bytes left.
        available: usize,
    },
    /// MP_REACH_NLRI or MP_UNREACH_NLRI appears twice.
    #[error("{0} appears more than once")]
    Duplicate(Field),
    /// An MP attribute too short to name its AFI/SAFI.
    #[error("{field} of {len} bytes is too short for its AFI/SAFI")]
    MpShort {
        /// Which attribute.
        field: Field,
        /// Its length.
        len: usize,
    },
    /// A unicast MP_REACH_NLRI whose next hop length is not allowed.
    #[error("MP_REACH_NLRI for {family:?} unicast with a next hop of {len} bytes")]
    NextHop {
        /// The family.
        family: Family,
        /// The next hop length.
        len: usize,
    },
    /// A unicast MP_REACH_NLRI cut short before its NLRI.
    #[error("MP_REACH_NLRI for {0:?} unicast ends before its NLRI")]
    MpReachShort(Family),
    /// A prefix length beyond the family's.
    #[error("{field}: prefix length {len} for {family:?}")]
    PrefixLength {
        /// Where.
        field: Field,
        /// The family.
        family: Family,
        /// The length read.
        len: u8,
    },
    /// A prefix or its path id runs past its field.
    #[error("{field}: a prefix runs past the field (add-path {add_path})")]
    PrefixOverrun {
        /// Where.
        field: Field,
        /// Whether path ids were read.
        add_path: bool,
    },
}

const AFI_IPV4: u16 = 1;
const AFI_IPV6: u16 = 2;
const SAFI_UNICAST: u8 = 1;

pub(super) const ORIGIN: u8 = 1;
pub(super) const AS_PATH: u8 = 2;
pub(super) const NEXT_HOP: u8 = 3;
const MED: u8 = 4;
const LOCAL_PREF: u8 = 5;
pub(super) const MP_REACH: u8 = 14;
pub(super) const MP_UNREACH: u8 = 15;

const FLAG_OPTIONAL: u8 = 0x80;
pub(super) const FLAG_EXTENDED: u8 = 0x10;

/// Reads from the front of a byte slice; every read is checked.
#[derive(Debug, Clone, Copy)]
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([*b.first()?, *b.get(1)?]))
    }
    fn u32(&mut self) -> Option<u32> {
        let b: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(u32::from_be_bytes(b))
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A unicast MP attribute's family and NLRI field.
type UnicastNlri<'a> = (Family, &'a [u8]);

/// What was seen of an attribute the anomaly rules look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Absent,
    Good,
    Bad,
}

#[derive(Debug)]
struct Attrs<'a> {
    seen: [u64; 4],
    origin: Seen,
    as_path: Seen,
    next_hop: Seen,
    local_pref: Seen,
    med: Seen,
    count: usize,
    /// (afi, safi, value length) of the only attribute, when it is an MP_UNREACH.
    only_unreach: Option<(u16, u8, usize)>,
    /// The NLRI of a unicast MP_REACH_NLRI, past its next hop.
    mp_reach: Option<UnicastNlri<'a>>,
    /// The withdrawn routes of a unicast MP_UNREACH_NLRI.
    mp_unreach: Option<UnicastNlri<'a>>,
}

impl Attrs<'_> {
    /// Marks `t` seen; false when it already was.
    fn first(&mut self, t: u8) -> bool {
        let (word, bit) = (usize::from(t / 64), u64::from(t % 64));
        match self.seen.get_mut(word) {
            Some(w) if *w & (1 << bit) == 0 => {
                *w |= 1 << bit;
                true
            }
            _ => false,
        }
    }
}

fn check(ok: bool) -> Seen {
    if ok { Seen::Good } else { Seen::Bad }
}

/// A field after its two-byte length (`what` names it in the error).
fn length_prefixed<'a>(c: &mut Cursor<'a>, what: &'static str) -> Result<&'a [u8], UpdateError> {
    let short = |len, available| UpdateError::Length {
        what,
        len,
        available,
    };
    let len = usize::from(c.u16().ok_or_else(|| short(2, c.len()))?);
    c.take(len).ok_or_else(|| short(len, c.len()))
}

/// Decodes one UPDATE body (after the BGP header) per the module's rules.
pub fn decode(body: &[u8], options: Options) -> Result<Update, UpdateError> {
    let mut c = Cursor(body);
    let withdrawn_field = length_prefixed(&mut c, "withdrawn routes")?;
    let attrs_field = length_prefixed(&mut c, "total path attribute")?;
    let nlri_field = c.0;

    let mut out = Update::default();
    let attrs = attributes(attrs_field, options, &mut out.skipped)?;
    prefixes(
        withdrawn_field,
        Family::Ipv4,
        options.add_path,
        Field::Withdrawn,
        &mut out.withdrawn,
    )?;
    if let Some((family, nlri)) = attrs.mp_unreach {
        prefixes(
            nlri,
            family,
            options.add_path,
            Field::MpUnreach,
            &mut out.withdrawn,
        )?;
    }
    prefixes(
        nlri_field,
        Family::Ipv4,
        options.add_path,
        Field::Nlri,
        &mut out.announced,
    )?;
    if let Some((family, nlri)) = attrs.mp_reach {
        prefixes(
            nlri,
            family,
            options.add_path,
            Field::MpReach,
            &mut out.announced,
        )?;
    }
    let classic = !nlri_field.is_empty();

    if withdrawn_field.is_empty() && nlri_field.is_empty() {
        if attrs.count == 0 {
            out.end_of_rib = Some(EndOfRib::Unicast(Family::Ipv4));
        } else if let Some((afi, safi, 3)) = attrs.only_unreach {
            out.end_of_rib = Some(match family_of(afi, safi) {
                Some(f) => EndOfRib::Unicast(f),
                None => EndOfRib::Other { afi, safi },
            });
        }
    }

    if !out.announced.is_empty() {
        // Withdrawals need no attribute: only announcements are checked.
        out.anomalies = anomalies(&attrs, classic);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bmp::build::{
        as_path, attr, mandatory, mp_reach, mp_unreach, next_hop, nlri, origin, update,
    };
    const ATOMIC_AGGREGATE: u8 = 6;
    const AGGREGATOR: u8 = 7;
    use proptest::prelude::*;

    const PLAIN: Options = Options {
        add_path: false,
        asn4: true,
    };
    const ADD_PATH: Options = Options {
        add_path: true,
        asn4: true,
    };

    fn path(s: &str) -> Path {
        Path {
            prefix: s.parse().expect("prefix"),
            path_id: None,
        }
    }
    fn with_id(s: &str, id: u32) -> Path {
        Path {
            path_id: Some(id),
            ..path(s)
        }
    }
    const V6_NH: [u8; 16] = [0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

    fn ok(body: &[u8], o: Options) -> Update {
        decode(body, o).unwrap_or_else(|e| panic!("{e}: {body:?}"))
    }

    // ---- skipped families ----

    /// (name, afi, safi, next hop, one NLRI of the family) as routers send them.
    type Case = (&'static str, u16, u8, Vec<u8>, Vec<u8>);
    fn families() -> Vec<Case> {
        let rd = [0, 1, 0xfc, 0, 0, 0, 0, 7]; // type 0, 64512:7
        let label = [0x00, 0x3e, 0x81]; // label 1000, bottom of stack
        let mut vpn4 = vec![24 + 64 + 24];
        vpn4.extend_from_slice(&label);
        vpn4.extend_from_slice(&rd);
        vpn4.extend_from_slice(&[10, 1, 2]);
        let mut vpn4_nh = vec![0; 8];
        vpn4_nh.extend_from_slice(&[198, 18, 1, 2]);
        let mut vpn6 = vec![24 + 64 + 64];
        vpn6.extend_from_slice(&label);
        vpn6.extend_from_slice(&rd);
        vpn6.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 1, 0, 0]);
        let mut vpn6_nh = vec![0; 8];
        vpn6_nh.extend_from_slice(&V6_NH);
        // EVPN MAC/IP advertisement (type 2) and IP prefix (type 5).
        let mut t2 = rd.to_vec();
        t2.extend_from_slice(&[0; 10]); // ESI
        t2.extend_from_slice(&[0, 0, 0, 0]); // Ethernet tag
        t2.push(48);
        t2.extend_from_slice(&[0x02, 0, 0, 0, 0, 1]);
        t2.push(32);
        t2.extend_from_slice(&[10, 1, 2, 3]);
        t2.extend_from_slice(&label);
        let mut evpn2 = vec![2, u8::try_from(t2.len()).expect("fits")];
        evpn2.extend_from_slice(&t2);
        let mut t5 = rd.to_vec();
        t5.extend_from_slice(&[0; 10]);
        t5.extend_from_slice(&[0, 0, 0, 0]);
        t5.push(24);
        t5.extend_from_slice(&[10, 1, 2, 0]);
        t5.extend_from_slice(&[0, 0, 0, 0]); // gateway
        t5.extend_from_slice(&label);
        let mut evpn5 = vec![5, u8::try_from(t5.len()).expect("fits")];
        evpn5.extend_from_slice(&t5);
        let mut labeled = vec![24 + 24];
        labeled.extend_from_slice(&label);
        labeled.extend_from_slice(&[10, 1, 2]);
        // Flowspec: destination 10.1.2.0/24 (component 1).
        let flowspec = vec![5, 1, 24, 10, 1, 2];
        // BGP-LS node NLRI (type 1), protocol IS-IS L2, identifier, a
        // local node descriptor with an AS.
        let mut ls = vec![0, 1, 0, 17, 2];
        ls.extend_from_slice(&[0; 8]);
        ls.extend_from_slice(&[1, 0, 0, 4, 0, 0, 0xfc, 0]);
        vec![
            ("VPNv4", 1, 128, vpn4_nh, vpn4),
            ("VPNv6", 2, 128, vpn6_nh, vpn6),
            ("EVPN type 2", 25, 70, vec![198, 18, 1, 2], evpn2),
            ("EVPN type 5", 25, 70, vec![198, 18, 1, 2], evpn5),
            ("labeled unicast", 1, 4, vec![198, 18, 1, 2], labeled),
            ("multicast", 1, 2, vec![198, 18, 1, 2], vec![24, 10, 1, 2]),
            ("flowspec", 1, 133, vec![], flowspec),
            ("BGP-LS", 16388, 71, vec![198, 18, 1, 2], ls),
            (
                "unknown",
                999,
                250,
                vec![1, 2, 3],
                vec![0xde, 0xad, 0xbe, 0xef],
            ),
            // Length-consistent garbage inside a skipped family.
            ("garbage", 1, 128, vec![0xff; 12], vec![0xff, 0xff, 0, 3]),
            ("empty", 25, 70, vec![], vec![]),
        ]
    }

    #[test]
    fn other_families_next_to_ipv4_classic_nlri_are_skipped_and_counted() {
        for (name, afi, safi, nh, body) in families() {
            let attrs = [mandatory(), mp_reach(afi, safi, &nh, &body)].concat();
            let u = ok(&update(&[], &attrs, &nlri(&[path("192.0.2.10/32")])), PLAIN);
            assert_eq!(u.announced, vec![path("192.0.2.10/32")], "{name}");
            assert!(u.withdrawn.is_empty(), "{name}");
            assert_eq!(
                u.skipped,
                vec![Skipped {
                    afi,
                    safi,
                    count: 1
                }],
                "{name}"
            );
            assert_eq!(u.end_of_rib, None, "{name}");
            assert!(u.anomalies.is_empty(), "{name}");
        }
    }

    #[test]
    fn other_families_withdrawn_next_to_an_ipv6_mp_reach_are_skipped_and_counted() {
        for (name, afi, safi, _, body) in families() {
            let attrs = [
                origin(),
                as_path(),
                mp_reach(2, 1, &V6_NH, &nlri(&[path("2001:db8::10/128")])),
                mp_unreach(afi, safi, &body),
            ]
            .concat();
            let u = ok(&update(&nlri(&[path("192.0.2.0/24")]), &attrs, &[]), PLAIN);
            assert_eq!(u.announced, vec![path("2001:db8::10/128")], "{name}");
            assert_eq!(u.withdrawn, vec![path("192.0.2.0/24")], "{name}");
            assert_eq!(u.skipped.len(), 1, "{name}");
            assert!(u.anomalies.is_empty(), "{name}");
        }
    }

    #[test]
    fn an_update_of_a_skipped_family_alone_is_not_an_error() {
        for (name, afi, safi, nh, body) in families() {
            let attrs = [mandatory(), mp_reach(afi, safi, &nh, &body)].concat();
            let u = ok(&update(&[], &attrs, &[]), PLAIN);
            assert!(u.announced.is_empty() && u.withdrawn.is_empty(), "{name}");
            assert_eq!(u.skipped.len(), 1, "{name}");
            assert_eq!(u.end_of_rib, None, "{name}");
            // Withdrawn in MP_UNREACH, with no other attribute.
            let u = ok(&update(&[], &mp_unreach(afi, safi, &body), &[]), PLAIN);
            assert_eq!(u.skipped.len(), 1, "{name}");
        }
        // Reach and unreach of one family: one entry, counted twice.
        let attrs = [
            mandatory(),
            mp_reach(25, 70, &[198, 18, 1, 2], &[9, 9]),
            mp_unreach(25, 70, &[7]),
        ]
        .concat();
        let u = ok(&update(&[], &attrs, &[]), PLAIN);
        assert_eq!(
            u.skipped,
            vec![Skipped {
                afi: 25,
                safi: 70,
                count: 2
            }]
        );
        // Whatever the MP attribute's flags say, a skipped family's body is
        // never looked into: a next hop length byte running past it too.
        let attrs = [mandatory(), attr(0x80, MP_REACH, &[0, 1, 128, 200])].concat();
        assert_eq!(ok(&update(&[], &attrs, &[]), PLAIN).skipped.len(), 1);
    }

    // ---- End-of-RIB ----

    #[test]
    fn end_of_rib_of_every_family() {
        let eor = |body: Vec<u8>| ok(&body, PLAIN).end_of_rib;
        assert_eq!(
            eor(update(&[], &[], &[])),
            Some(EndOfRib::Unicast(Family::Ipv4))
        );
        assert_eq!(
            eor(update(&[], &mp_unreach(1, 1, &[]), &[])),
            Some(EndOfRib::Unicast(Family::Ipv4))
        );
        assert_eq!(
            eor(update(&[], &mp_unreach(2, 1, &[]), &[])),
            Some(EndOfRib::Unicast(Family::Ipv6))
        );
        // An MP_UNREACH written with a one-byte length is the same marker.
        assert_eq!(
            eor(update(&[], &attr(0x80, MP_UNREACH, &[0, 2, 1]), &[])),
            Some(EndOfRib::Unicast(Family::Ipv6))
        );
        // EVPN (the XR and Junos End-of-RIB that used to end the session), VPNv4.
        let u = ok(&update(&[], &mp_unreach(25, 70, &[]), &[]), PLAIN);
        assert_eq!(u.end_of_rib, Some(EndOfRib::Other { afi: 25, safi: 70 }));
        assert_eq!(
            u.skipped,
            vec![Skipped {
                afi: 25,
                safi: 70,
                count: 1
            }]
        );
        assert_eq!(
            eor(update(&[], &mp_unreach(1, 128, &[]), &[])),
            Some(EndOfRib::Other { afi: 1, safi: 128 })
        );
        // Not markers: an MP_UNREACH with NLRI, or next to another attribute,
        // or withdrawn routes.
        assert_eq!(
            eor(update(
                &[],
                &mp_unreach(2, 1, &nlri(&[path("2001:db8::/32")])),
                &[]
            )),
            None
        );
        assert_eq!(
            eor(update(
                &[],
                &[origin(), mp_unreach(2, 1, &[])].concat(),
                &[]
            )),
            None
        );
        assert_eq!(eor(update(&nlri(&[path("192.0.2.0/24")]), &[], &[])), None);
        assert_eq!(eor(update(&[], &origin(), &[])), None);
    }

    // ---- add-path ----

    #[test]
    fn add_path_ids_on_ipv4_classic_ipv4_mp_and_ipv6_mp() {
        let classic = update(
            &nlri(&[with_id("198.51.100.0/24", 9)]),
            &mandatory(),
            &nlri(&[with_id("192.0.2.10/32", 1), with_id("192.0.2.10/32", 2)]),
        );
        let u = ok(&classic, ADD_PATH);
        assert_eq!(
            u.announced,
            vec![with_id("192.0.2.10/32", 1), with_id("192.0.2.10/32", 2)]
        );
        assert_eq!(u.withdrawn, vec![with_id("198.51.100.0/24", 9)]);
        let v4_mp = [
            origin(),
            as_path(),
            mp_reach(
                1,
                1,
                &[198, 18, 1, 2],
                &nlri(&[with_id("192.0.2.10/32", 7)]),
            ),
            mp_unreach(1, 1, &nlri(&[with_id("192.0.2.11/32", 8)])),
        ]
        .concat();
        let u = ok(&update(&[], &v4_mp, &[]), ADD_PATH);
        assert_eq!(u.announced, vec![with_id("192.0.2.10/32", 7)]);
        assert_eq!(u.withdrawn, vec![with_id("192.0.2.11/32", 8)]);
        let v6_mp = [
            origin(),
            as_path(),
            mp_reach(
                2,
                1,
                &[V6_NH, V6_NH].concat(),
                &nlri(&[with_id("2001:db8::10/128", u32::MAX)]),
            ),
            mp_unreach(2, 1, &nlri(&[with_id("2001:db8:1::/48", 0)])),
        ]
        .concat();
        let u = ok(&update(&[], &v6_mp, &[]), ADD_PATH);
        assert_eq!(u.announced, vec![with_id("2001:db8::10/128", u32::MAX)]);
        assert_eq!(u.withdrawn, vec![with_id("2001:db8:1::/48", 0)]);
        // Read without add-path, the same bytes are an error, not a guess.
        assert!(decode(&classic, PLAIN).is_err());
        // Read with add-path, FRR-style NLRI without ids are too.
        let plain = update(&[], &mandatory(), &nlri(&[path("192.0.2.10/32")]));
        assert!(decode(&plain, ADD_PATH).is_err());
    }

    #[test]
    fn host_bits_are_cleared_and_lengths_0_to_max_decode() {
        let u = ok(
            &update(&[], &mandatory(), &[24, 192, 0, 2, 0, 20, 10, 255, 0xff]),
            PLAIN,
        );
        assert_eq!(
            u.announced,
            vec![
                path("192.0.2.0/24"),
                path("0.0.0.0/0"),
                path("10.255.240.0/20")
            ]
        );
        let attrs = [
            origin(),
            as_path(),
            mp_reach(
                2,
                1,
                &V6_NH,
                &[
                    0, 128, 0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 33, 0x20, 1,
                    0xd, 0xb8, 0xff,
                ],
            ),
        ]
        .concat();
        assert_eq!(
            ok(&update(&[], &attrs, &[]), PLAIN).announced,
            vec![
                path("::/0"),
                path("2001:db8::1/128"),
                path("2001:db8:8000::/33")
            ]
        );
    }

    #[test]
    fn ipv4_mp_next_hops_of_4_16_and_32_bytes() {
        for nh in [vec![198, 18, 1, 2], V6_NH.to_vec(), [V6_NH, V6_NH].concat()] {
            let attrs = [
                origin(),
                as_path(),
                mp_reach(1, 1, &nh, &nlri(&[path("192.0.2.10/32")])),
            ]
            .concat();
            assert_eq!(
                ok(&update(&[], &attrs, &[]), PLAIN).announced,
                vec![path("192.0.2.10/32")]
            );
        }
    }

    #[test]
    fn a_4096_prefix_update_decodes_whole() {
        let paths: Vec<Path> = (0..4096u32)
            .map(|i| Path {
                prefix: Prefix::host(IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i))),
                path_id: None,
            })
            .collect();
        let body = update(&[], &mandatory(), &nlri(&paths));
        assert!(body.len() > 4096, "an extended message (RFC 8654)");
        let u = ok(&body, PLAIN);
        assert_eq!(u.announced, paths);
        let with_ids: Vec<Path> = paths
            .iter()
            .enumerate()
            .map(|(i, p)| Path {
                path_id: u32::try_from(i).ok(),
                ..*p
            })
            .collect();
        let attrs = [
            origin(),
            as_path(),
            mp_reach(1, 1, &[198, 18, 1, 2], &nlri(&with_ids)),
        ]
        .concat();
        assert_eq!(ok(&update(&[], &attrs, &[]), ADD_PATH).announced, with_ids);
    }

    // ---- RFC 7606 for a monitor: anomalies, the paths kept ----

    /// The first anomaly of an UPDATE announcing 192.0.2.10/32 and
    /// withdrawing 198.51.100.0/24 with `attrs`; whatever the anomalies,
    /// the announcement stays an announcement and the withdrawal a
    /// withdrawal (a monitor mirrors what the router holds).
    fn taw(attrs: &[u8], o: Options) -> Option<Anomaly> {
        let u = ok(
            &update(
                &nlri(&[path("198.51.100.0/24")]),
                attrs,
                &nlri(&[path("192.0.2.10/32")]),
            ),
            o,
        );
        assert_eq!(u.announced, vec![path("192.0.2.10/32")]);
        assert_eq!(u.withdrawn, vec![path("198.51.100.0/24")]);
        u.anomalies.first().copied()
    }

    #[test]
    fn a_missing_or_malformed_mandatory_attribute_is_an_anomaly_and_the_path_counts() {
        use Anomaly as T;
        let (o, p, n) = (origin(), as_path(), next_hop());
        assert_eq!(taw(&mandatory(), PLAIN), None);
        let cases: Vec<(&str, Vec<u8>, T)> = vec![
            (
                "no ORIGIN",
                [p.clone(), n.clone()].concat(),
                T::MissingOrigin,
            ),
            (
                "ORIGIN of 2 bytes",
                [attr(0x40, ORIGIN, &[0, 0]), p.clone(), n.clone()].concat(),
                T::MalformedOrigin,
            ),
            (
                "ORIGIN of 0 bytes",
                [attr(0x40, ORIGIN, &[]), p.clone(), n.clone()].concat(),
                T::MalformedOrigin,
            ),
            (
                "ORIGIN 3",
                [attr(0x40, ORIGIN, &[3]), p.clone(), n.clone()].concat(),
                T::MalformedOrigin,
            ),
            (
                "ORIGIN optional",
                [attr(0xc0, ORIGIN, &[0]), p.clone(), n.clone()].concat(),
                T::MalformedOrigin,
            ),
            (
                "no AS_PATH",
                [o.clone(), n.clone()].concat(),
                T::MissingAsPath,
            ),
            (
                "AS_PATH segment type 0",
                [
                    o.clone(),
                    attr(0x40, AS_PATH, &[0, 1, 0, 0, 0xfc, 0]),
                    n.clone(),
                ]
                .concat(),
                T::MalformedAsPath,
            ),
            (
                "AS_PATH segment type 5",
                [
                    o.clone(),
                    attr(0x40, AS_PATH, &[5, 1, 0, 0, 0xfc, 0]),
                    n.clone(),
                ]
                .concat(),
                T::MalformedAsPath,
            ),
            (
                "AS_PATH overrun",
                [
                    o.clone(),
                    attr(0x40, AS_PATH, &[2, 2, 0, 0, 0xfc, 0]),
                    n.clone(),
                ]
                .concat(),
                T::MalformedAsPath,
            ),
            (
                "AS_PATH trailing byte",
                [
                    o.clone(),
                    attr(0x40, AS_PATH, &[2, 1, 0, 0, 0xfc, 0, 2]),
                    n.clone(),
                ]
                .concat(),
                T::MalformedAsPath,
            ),
            (
                "AS_PATH optional",
                [o.clone(), attr(0xc0, AS_PATH, &[]), n.clone()].concat(),
                T::MalformedAsPath,
            ),
            (
                "no NEXT_HOP",
                [o.clone(), p.clone()].concat(),
                T::MissingNextHop,
            ),
            (
                "NEXT_HOP of 16 bytes",
                [o.clone(), p.clone(), attr(0x40, NEXT_HOP, &V6_NH)].concat(),
                T::MalformedNextHop,
            ),
            (
                "NEXT_HOP optional",
                [o.clone(), p.clone(), attr(0xc0, NEXT_HOP, &[198, 18, 1, 2])].concat(),
                T::MalformedNextHop,
            ),
            (
                "LOCAL_PREF of 3 bytes",
                [mandatory(), attr(0x40, LOCAL_PREF, &[0, 0, 100])].concat(),
                T::MalformedLocalPref,
            ),
            (
                "MED of 5 bytes",
                [mandatory(), attr(0x80, MED, &[0; 5])].concat(),
                T::MalformedMed,
            ),
            // The first of a repeated attribute counts.
            (
                "a bad ORIGIN then a good one",
                [attr(0x40, ORIGIN, &[7]), o.clone(), p.clone(), n.clone()].concat(),
                T::MalformedOrigin,
            ),
        ];
        for (name, attrs, want) in cases {
            assert_eq!(taw(&attrs, PLAIN), Some(want), "{name}");
            assert!(!want.as_str().is_empty());
        }
        // 2-byte AS numbers follow the option.
        let two_byte = [
            o.clone(),
            attr(0x40, AS_PATH, &[2, 2, 0xfc, 0, 0xfc, 1]),
            n.clone(),
        ]
        .concat();
        let legacy = Options {
            add_path: false,
            asn4: false,
        };
        assert_eq!(taw(&two_byte, legacy), None);
        assert_eq!(taw(&two_byte, PLAIN), Some(T::MalformedAsPath));
        let agg6 = [
            two_byte.clone(),
            attr(0xc0, AGGREGATOR, &[0xfc, 0, 198, 18, 1, 2]),
        ]
        .concat();
        assert_eq!(taw(&agg6, legacy), None);
        let agg8 = [
            mandatory(),
            attr(0xc0, AGGREGATOR, &[0, 0, 0xfc, 0, 198, 18, 1, 2]),
        ]
        .concat();
        assert_eq!(taw(&agg8, PLAIN), None);
        let agg8_legacy = [
            two_byte.clone(),
            attr(0xc0, AGGREGATOR, &[0, 0, 0xfc, 0, 198, 18, 1, 2]),
        ]
        .concat();
        // Attribute discard, the route kept (RFC 7606 7.6, 7.7).
        assert_eq!(taw(&agg8_legacy, legacy), None);
        for bad in [
            attr(0x40, ATOMIC_AGGREGATE, &[0]),
            attr(0xc0, AGGREGATOR, &[0; 6]),
        ] {
            assert_eq!(taw(&[mandatory(), bad].concat(), PLAIN), None);
        }
    }

    #[test]
    fn what_is_not_an_anomaly() {
        // The right lengths, an empty AS_PATH (iBGP), every segment type, a
        // repeated attribute after a good one, unknown and malformed
        // optional attributes (attribute discard).
        let attrs = [
            origin(),
            attr(
                0x40,
                AS_PATH,
                &[1, 1, 0, 0, 0, 1, 2, 0, 3, 1, 0, 0, 0, 2, 4, 0],
            ),
            next_hop(),
            attr(0x40, ORIGIN, &[9]),
            attr(0x40, AS_PATH, &[9]),
            attr(0x80, MED, &[0, 0, 0, 5]),
            attr(0x40, LOCAL_PREF, &[0, 0, 0, 100]),
            attr(0x40, ATOMIC_AGGREGATE, &[]),
            attr(0xc0, 8, &[1, 2, 3]),         // COMMUNITIES of 3 bytes
            attr(0xc0, 32, &[1]),              // LARGE_COMMUNITY of 1 byte
            attr(0xc0, 200, &[1, 2, 3, 4, 5]), // unknown
            attr(0x40, MED, &[0; 9]),          // a second MED: ignored
        ]
        .concat();
        assert_eq!(taw(&attrs, PLAIN), None);
        assert_eq!(
            taw(
                &[origin(), attr(0x40, AS_PATH, &[])]
                    .concat()
                    .iter()
                    .copied()
                    .chain(next_hop())
                    .collect::<Vec<_>>(),
                PLAIN
            ),
            None
        );
        // Nothing announced: withdrawals need no attribute.
        let u = ok(&update(&nlri(&[path("192.0.2.10/32")]), &[], &[]), PLAIN);
        assert_eq!((u.anomalies.len(), u.withdrawn.len()), (0, 1));
        let u = ok(
            &update(
                &nlri(&[path("192.0.2.10/32")]),
                &attr(0x40, ORIGIN, &[5]),
                &[],
            ),
            PLAIN,
        );
        assert!(u.anomalies.is_empty());
        // NEXT_HOP is not needed when only MP_REACH announces.
        let mp_only = [
            origin(),
            as_path(),
            attr(0x40, NEXT_HOP, &[1]),
            mp_reach(2, 1, &V6_NH, &nlri(&[path("2001:db8::10/128")])),
        ]
        .concat();
        let u = ok(&update(&[], &mp_only, &[]), PLAIN);
        assert!(u.anomalies.is_empty());
        assert_eq!(u.announced, vec![path("2001:db8::10/128")]);
        // Only a skipped family announced: no unicast NLRI, nothing to withdraw.
        let vpn = mp_reach(1, 128, &[0; 12], &[0]);
        let u = ok(&update(&[], &vpn, &[]), PLAIN);
        assert!(u.anomalies.is_empty());
    }

    #[test]
    fn an_anomaly_keeps_every_announced_prefix_classic_and_mp() {
        let attrs = [
            as_path(),
            mp_reach(2, 1, &V6_NH, &nlri(&[path("2001:db8::10/128")])),
            mp_unreach(2, 1, &nlri(&[path("2001:db8::11/128")])),
        ]
        .concat();
        let u = ok(
            &update(
                &[],
                &[attrs.clone(), next_hop()].concat(),
                &nlri(&[path("192.0.2.10/32")]),
            ),
            PLAIN,
        );
        assert_eq!(u.anomalies, [Anomaly::MissingOrigin]);
        assert_eq!(
            u.announced,
            vec![path("192.0.2.10/32"), path("2001:db8::10/128")]
        );
        assert_eq!(u.withdrawn, vec![path("2001:db8::11/128")]);
        assert_eq!(Anomaly::MissingOrigin.to_string(), "ORIGIN missing");
    }

    /// 6WIND vSR's and FRR 8.0.1's post-policy and Loc-RIB Route
    /// Monitoring: ORIGIN, AS_PATH and classic NLRI, no NEXT_HOP. The
    /// router holds the path: it counts, the anomaly is named.
    #[test]
    fn an_update_without_next_hop_announces_its_prefixes() {
        let n = nlri(&[path("192.0.2.10/32"), path("192.0.2.11/32")]);
        for o in [PLAIN, ADD_PATH] {
            let n = if o.add_path {
                nlri(&[
                    Path {
                        path_id: Some(7),
                        ..path("192.0.2.10/32")
                    },
                    Path {
                        path_id: Some(8),
                        ..path("192.0.2.11/32")
                    },
                ])
            } else {
                n.clone()
            };
            let u = ok(&update(&[], &[origin(), as_path()].concat(), &n), o);
            assert_eq!(u.announced.len(), 2, "{o:?}");
            assert!(u.withdrawn.is_empty(), "{o:?}");
            assert_eq!(u.anomalies, [Anomaly::MissingNextHop], "{o:?}");
        }
    }

    /// Every fault of one UPDATE is named once, in the module's order, and
    /// the label values are distinct metric-safe words.
    #[test]
    fn every_anomaly_is_reported_once_in_order() {
        let attrs = [
            attr(0x40, AS_PATH, &[7, 1]),
            attr(0x40, LOCAL_PREF, &[1]),
            attr(0x80, MED, &[1, 2]),
            attr(0x80, MED, &[0, 0, 0, 1]), // a second MED: ignored
        ]
        .concat();
        let u = ok(&update(&[], &attrs, &nlri(&[path("192.0.2.10/32")])), PLAIN);
        assert_eq!(u.announced, vec![path("192.0.2.10/32")]);
        assert_eq!(
            u.anomalies,
            [
                Anomaly::MissingOrigin,
                Anomaly::MalformedAsPath,
                Anomaly::MissingNextHop,
                Anomaly::MalformedLocalPref,
                Anomaly::MalformedMed,
            ]
        );
        let labels: std::collections::BTreeSet<&str> =
            Anomaly::ALL.iter().map(|a| a.label()).collect();
        assert_eq!(labels.len(), Anomaly::ALL.len());
        assert!(
            labels
                .iter()
                .all(|l| l.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        );
    }

    /// Where the NLRI cannot be trusted the session still ends, whatever
    /// attribute is missing besides: an anomaly never hides a framing fault.
    #[test]
    fn a_framing_fault_ends_the_session_even_with_an_anomaly() {
        let no_next_hop = [origin(), as_path()].concat();
        for (name, body) in [
            (
                "NLRI past the UPDATE",
                update(&[], &no_next_hop, &[32, 192, 0, 2]),
            ),
            (
                "NLRI prefix of 33",
                update(&[], &no_next_hop, &[33, 192, 0, 2, 10, 0]),
            ),
            (
                "attribute past the field",
                update(
                    &[],
                    &[no_next_hop.clone(), vec![0x40, 5, 9, 0]].concat(),
                    &[],
                ),
            ),
            (
                "IPv6 MP_REACH next hop of 4",
                update(
                    &[],
                    &[
                        no_next_hop.clone(),
                        mp_reach(2, 1, &[1, 2, 3, 4], &nlri(&[path("2001:db8::10/128")])),
                    ]
                    .concat(),
                    &[],
                ),
            ),
        ] {
            assert!(decode(&body, PLAIN).is_err(), "{name}");
        }
    }

    // ---- RFC 7606: session reset ----

    #[test]
    fn structural_faults_are_errors() {
        let good_nlri = nlri(&[path("192.0.2.10/32")]);
        let v6 = |nh: &[u8], n: &[u8]| [origin(), as_path(), mp_reach(2, 1, nh, n)].concat();
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("empty body", vec![]),
            ("one byte", vec![0]),
            ("withdrawn length past the UPDATE", vec![0, 9, 24, 10, 0, 0]),
            ("no attribute length", vec![0, 0, 0]),
            (
                "attribute length past the UPDATE",
                vec![0, 0, 0, 20, 0x40, 1, 1, 0],
            ),
            ("attribute header cut", update(&[], &[0x40, 1], &[])),
            (
                "extended attribute header cut",
                update(&[], &[0x50, 1, 0], &[]),
            ),
            (
                "attribute past the field",
                update(&[], &[0x40, 1, 5, 0], &[]),
            ),
            (
                "extended attribute past the field",
                update(&[], &[0x50, 1, 0, 2, 0], &[]),
            ),
            (
                "skipped family's attribute past the field",
                update(&[], &[0x80, 14, 40, 0, 25, 70], &[]),
            ),
            (
                "two MP_REACH",
                update(
                    &[],
                    &[v6(&V6_NH, &[]), mp_reach(25, 70, &[], &[])].concat(),
                    &[],
                ),
            ),
            (
                "two MP_UNREACH",
                update(
                    &[],
                    &[mp_unreach(25, 70, &[]), mp_unreach(25, 70, &[])].concat(),
                    &[],
                ),
            ),
            (
                "MP_REACH without AFI/SAFI",
                update(&[], &attr(0x80, MP_REACH, &[0, 1]), &[]),
            ),
            (
                "MP_UNREACH without SAFI",
                update(&[], &attr(0x80, MP_UNREACH, &[0, 2]), &[]),
            ),
            (
                "IPv6 next hop of 4",
                update(&[], &v6(&[1, 2, 3, 4], &[]), &[]),
            ),
            ("IPv6 next hop of 24", update(&[], &v6(&[0; 24], &[]), &[])),
            (
                "IPv4 MP next hop of 12",
                update(&[], &mp_reach(1, 1, &[0; 12], &good_nlri), &[]),
            ),
            (
                "IPv4 MP next hop of 0",
                update(&[], &mp_reach(1, 1, &[], &good_nlri), &[]),
            ),
            (
                "IPv6 MP_REACH cut in its next hop",
                update(&[], &attr(0x80, MP_REACH, &[0, 2, 1, 16, 0, 0]), &[]),
            ),
            (
                "IPv6 MP_REACH without its reserved byte",
                update(
                    &[],
                    &attr(0x80, MP_REACH, &[&[0, 2, 1, 16][..], &V6_NH].concat()),
                    &[],
                ),
            ),
            (
                "IPv6 MP_REACH without next hop length",
                update(&[], &attr(0x80, MP_REACH, &[0, 2, 1]), &[]),
            ),
            (
                "IPv6 prefix of 129",
                update(&[], &v6(&V6_NH, &[129, 0]), &[]),
            ),
            (
                "IPv4 MP prefix of 33",
                update(
                    &[],
                    &mp_reach(1, 1, &[1, 2, 3, 4], &[33, 1, 2, 3, 4, 5]),
                    &[],
                ),
            ),
            (
                "IPv6 prefix past the attribute",
                update(&[], &v6(&V6_NH, &[64, 0x20, 1]), &[]),
            ),
            (
                "IPv6 MP_UNREACH prefix past the attribute",
                update(&[], &mp_unreach(2, 1, &[128, 0x20]), &[]),
            ),
            (
                "IPv4 MP_UNREACH prefix of 40",
                update(&[], &mp_unreach(1, 1, &[40, 1, 2, 3, 4, 5]), &[]),
            ),
            (
                "classic NLRI prefix of 33",
                update(&[], &mandatory(), &[33, 192, 0, 2, 10, 0]),
            ),
            (
                "classic NLRI past the UPDATE",
                update(&[], &mandatory(), &[32, 192, 0, 2]),
            ),
            (
                "classic withdrawn prefix of 33",
                update(&[33, 1, 1, 1, 1, 1], &[], &[]),
            ),
            (
                "classic withdrawn past its field",
                update(&[24, 1, 1], &[], &[]),
            ),
        ];
        for (name, body) in cases {
            assert!(
                decode(&body, PLAIN).is_err(),
                "{name}: {:?}",
                decode(&body, PLAIN)
            );
        }
        // With add-path, a path id cut short.
        assert!(decode(&update(&[], &mandatory(), &[0, 0, 1]), ADD_PATH).is_err());
        assert!(decode(&update(&[0, 0, 0, 1], &[], &[]), ADD_PATH).is_err());
        let e = decode(&update(&[], &v6(&[1, 2, 3, 4], &[]), &[]), PLAIN).expect_err("bad");
        assert!(e.to_string().contains("next hop of 4 bytes"), "{e}");
    }

    // ---- properties ----

    fn any_prefix() -> impl Strategy<Value = Prefix> {
        prop_oneof![
            (any::<u32>(), 0u8..=32).prop_map(|(a, l)| {
                let bits = a & u32::MAX.checked_shl(32 - u32::from(l)).unwrap_or(0);
                Prefix::new(IpAddr::V4(Ipv4Addr::from(bits)), l).expect("masked")
            }),
            (any::<u128>(), 0u8..=128).prop_map(|(a, l)| {
                let bits = a & u128::MAX.checked_shl(128 - u32::from(l)).unwrap_or(0);
                Prefix::new(IpAddr::V6(Ipv6Addr::from(bits)), l).expect("masked")
            }),
        ]
    }

    proptest! {
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            for add_path in [false, true] {
                for asn4 in [false, true] {
                    let _ = decode(&bytes, Options { add_path, asn4 });
                }
            }
        }

        #[test]
        fn unicast_prefixes_round_trip(
            announced in proptest::collection::vec((any_prefix(), any::<u32>()), 0..200),
            withdrawn in proptest::collection::vec((any_prefix(), any::<u32>()), 0..200),
            add_path in any::<bool>(),
        ) {
            let to_path = |(prefix, id): &(Prefix, u32)| Path {
                prefix: *prefix,
                path_id: add_path.then_some(*id),
            };
            let (a4, a6): (Vec<Path>, Vec<Path>) =
                announced.iter().map(to_path).partition(|p| p.prefix.is_ipv4());
            let (w4, w6): (Vec<Path>, Vec<Path>) =
                withdrawn.iter().map(to_path).partition(|p| p.prefix.is_ipv4());
            let attrs = [
                mandatory(),
                mp_reach(2, 1, &V6_NH, &nlri(&a6)),
                mp_unreach(2, 1, &nlri(&w6)),
            ]
            .concat();
            let body = update(&nlri(&w4), &attrs, &nlri(&a4));
            let u = decode(&body, Options { add_path, asn4: true });
            prop_assert!(u.is_ok(), "{:?}", u);
            let u = u.unwrap_or_default();
            prop_assert_eq!(u.announced, [a4, a6].concat());
            prop_assert_eq!(u.withdrawn, [w4, w6].concat());
            prop_assert!(u.anomalies.is_empty());
            prop_assert!(u.skipped.is_empty());
        }
    }
}
