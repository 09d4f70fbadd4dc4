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
//! - **Treat-as-withdraw** (RFC 7606 sections 3 and 7), only when the
//!   UPDATE announces unicast NLRI: ORIGIN (type 1: length 1, value 0..=2)
//!   or AS_PATH (type 2: segments of type 1..=4 whose AS counts times 4
//!   bytes, 2 without [`Options::asn4`], fill the attribute exactly)
//!   missing or malformed; NEXT_HOP (type 3, length 4) missing or malformed
//!   when classic NLRI are present; one of those three with the optional
//!   flag set; LOCAL_PREF (5) or MULTI_EXIT_DISC (4) of a length other
//!   than 4, ATOMIC_AGGREGATE (6) other than 0, AGGREGATOR (7) other than 8
//!   (6 without `asn4`). Then every announced prefix (classic and MP) is
//!   reported withdrawn instead, and [`Update::treat_as_withdraw`] names
//!   the first reason, checked in that order.
//! - **Ignored**: a repeated attribute other than MP_REACH/MP_UNREACH (the
//!   first is kept, section 3g), unknown attributes, other malformed
//!   optional attributes (attribute discard), and next hop values.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::model::Prefix;

/// A unicast address family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// IPv4 unicast.
    Ipv4,
    /// IPv6 unicast.
    Ipv6,
}

impl Family {
    /// The family of a prefix.
    pub fn of(prefix: &Prefix) -> Family {
        if prefix.is_ipv4() {
            Family::Ipv4
        } else {
            Family::Ipv6
        }
    }

    fn max_len(self) -> u8 {
        match self {
            Family::Ipv4 => 32,
            Family::Ipv6 => 128,
        }
    }

    /// The unicast family of an (AFI, SAFI) pair, if it is one.
    pub fn from_afi_safi(afi: u16, safi: u8) -> Option<Family> {
        match (afi, safi) {
            (AFI_IPV4, SAFI_UNICAST) => Some(Family::Ipv4),
            (AFI_IPV6, SAFI_UNICAST) => Some(Family::Ipv6),
            _ => None,
        }
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

/// Why an UPDATE's announcements were taken as withdrawals (RFC 7606).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TreatAsWithdraw {
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
    /// ATOMIC_AGGREGATE of a length other than 0.
    MalformedAtomicAggregate,
    /// AGGREGATOR of a length other than 8 (4-byte AS) or 6.
    MalformedAggregator,
}

impl TreatAsWithdraw {
    /// A short text naming the attribute and the fault.
    pub fn as_str(self) -> &'static str {
        match self {
            TreatAsWithdraw::MissingOrigin => "ORIGIN missing",
            TreatAsWithdraw::MalformedOrigin => "ORIGIN malformed",
            TreatAsWithdraw::MissingAsPath => "AS_PATH missing",
            TreatAsWithdraw::MalformedAsPath => "AS_PATH malformed",
            TreatAsWithdraw::MissingNextHop => "NEXT_HOP missing",
            TreatAsWithdraw::MalformedNextHop => "NEXT_HOP malformed",
            TreatAsWithdraw::MalformedLocalPref => "LOCAL_PREF malformed",
            TreatAsWithdraw::MalformedMed => "MULTI_EXIT_DISC malformed",
            TreatAsWithdraw::MalformedAtomicAggregate => "ATOMIC_AGGREGATE malformed",
            TreatAsWithdraw::MalformedAggregator => "AGGREGATOR malformed",
        }
    }
}

impl fmt::Display for TreatAsWithdraw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the peer's session says about the UPDATE's encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Unicast NLRI carry a 4-byte add-path id (RFC 7911).
    pub add_path: bool,
    /// AS numbers in AS_PATH and AGGREGATOR are 4 bytes (else 2).
    pub asn4: bool,
}

/// A decoded UPDATE: its unicast paths and what was not decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    /// Unicast paths announced (classic NLRI, then MP_REACH_NLRI).
    pub announced: Vec<Path>,
    /// Unicast paths withdrawn (classic, then MP_UNREACH_NLRI, then the
    /// announcements of a treat-as-withdraw UPDATE).
    pub withdrawn: Vec<Path>,
    /// Set when the UPDATE is an End-of-RIB marker.
    pub end_of_rib: Option<EndOfRib>,
    /// The families skipped, each once, in the order met.
    pub skipped: Vec<Skipped>,
    /// Set when the announcements were turned into withdrawals.
    pub treat_as_withdraw: Option<TreatAsWithdraw>,
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

const ORIGIN: u8 = 1;
const AS_PATH: u8 = 2;
const NEXT_HOP: u8 = 3;
const MED: u8 = 4;
const LOCAL_PREF: u8 = 5;
const ATOMIC_AGGREGATE: u8 = 6;
const AGGREGATOR: u8 = 7;
const MP_REACH: u8 = 14;
const MP_UNREACH: u8 = 15;

const FLAG_OPTIONAL: u8 = 0x80;
const FLAG_EXTENDED: u8 = 0x10;

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

/// What was seen of an attribute the treat-as-withdraw rules look at.
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
    atomic: Seen,
    aggregator: Seen,
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

/// Decodes one UPDATE body (after the BGP header) per the module's rules.
pub fn decode(body: &[u8], options: Options) -> Result<Update, UpdateError> {
    let mut c = Cursor(body);
    let withdrawn_len = usize::from(c.u16().ok_or(UpdateError::Length {
        what: "withdrawn routes",
        len: 2,
        available: body.len(),
    })?);
    let withdrawn_field = c.take(withdrawn_len).ok_or(UpdateError::Length {
        what: "withdrawn routes",
        len: withdrawn_len,
        available: c.len(),
    })?;
    let attrs_len = usize::from(c.u16().ok_or(UpdateError::Length {
        what: "total path attribute",
        len: 2,
        available: c.len(),
    })?);
    let attrs_field = c.take(attrs_len).ok_or(UpdateError::Length {
        what: "total path attribute",
        len: attrs_len,
        available: c.len(),
    })?;
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
            out.end_of_rib = Some(match Family::from_afi_safi(afi, safi) {
                Some(f) => EndOfRib::Unicast(f),
                None => EndOfRib::Other { afi, safi },
            });
        }
    }

    if !out.announced.is_empty() {
        let reason = if attrs.origin != Seen::Good {
            Some(if attrs.origin == Seen::Absent {
                TreatAsWithdraw::MissingOrigin
            } else {
                TreatAsWithdraw::MalformedOrigin
            })
        } else if attrs.as_path != Seen::Good {
            Some(if attrs.as_path == Seen::Absent {
                TreatAsWithdraw::MissingAsPath
            } else {
                TreatAsWithdraw::MalformedAsPath
            })
        } else if classic && attrs.next_hop != Seen::Good {
            Some(if attrs.next_hop == Seen::Absent {
                TreatAsWithdraw::MissingNextHop
            } else {
                TreatAsWithdraw::MalformedNextHop
            })
        } else if attrs.local_pref == Seen::Bad {
            Some(TreatAsWithdraw::MalformedLocalPref)
        } else if attrs.med == Seen::Bad {
            Some(TreatAsWithdraw::MalformedMed)
        } else if attrs.atomic == Seen::Bad {
            Some(TreatAsWithdraw::MalformedAtomicAggregate)
        } else if attrs.aggregator == Seen::Bad {
            Some(TreatAsWithdraw::MalformedAggregator)
        } else {
            None
        };
        if let Some(r) = reason {
            out.treat_as_withdraw = Some(r);
            let announced = std::mem::take(&mut out.announced);
            out.withdrawn.extend(announced);
        }
    }
    Ok(out)
}

/// Walks the attribute field: records what the treat-as-withdraw rules
/// need, locates the unicast MP NLRI, counts the skipped families.
fn attributes<'a>(
    field: &'a [u8],
    options: Options,
    skipped: &mut Vec<Skipped>,
) -> Result<Attrs<'a>, UpdateError> {
    let mut a = Attrs {
        seen: [0; 4],
        origin: Seen::Absent,
        as_path: Seen::Absent,
        next_hop: Seen::Absent,
        local_pref: Seen::Absent,
        med: Seen::Absent,
        atomic: Seen::Absent,
        aggregator: Seen::Absent,
        count: 0,
        only_unreach: None,
        mp_reach: None,
        mp_unreach: None,
    };
    let mut c = Cursor(field);
    while !c.is_empty() {
        let header = |c: &Cursor<'_>, len| UpdateError::Length {
            what: "path attribute header",
            len,
            available: c.len(),
        };
        let (Some(flags), Some(type_code)) = (c.u8(), c.u8()) else {
            return Err(header(&c, 3));
        };
        let len = if flags & FLAG_EXTENDED != 0 {
            c.u16().map(usize::from).ok_or_else(|| header(&c, 4))?
        } else {
            c.u8().map(usize::from).ok_or_else(|| header(&c, 3))?
        };
        let value = c.take(len).ok_or(UpdateError::Attribute {
            type_code,
            len,
            available: c.len(),
        })?;
        a.count += 1;
        let first = a.first(type_code);
        let well_known_ok = flags & FLAG_OPTIONAL == 0;
        match type_code {
            MP_REACH | MP_UNREACH => {
                let field = if type_code == MP_REACH {
                    Field::MpReach
                } else {
                    Field::MpUnreach
                };
                if !first {
                    return Err(UpdateError::Duplicate(field));
                }
                let (afi, safi, nlri) = mp(value, field, skipped)?;
                a.only_unreach =
                    (type_code == MP_UNREACH && a.count == 1).then_some((afi, safi, value.len()));
                if field == Field::MpReach {
                    a.mp_reach = nlri;
                } else {
                    a.mp_unreach = nlri;
                }
            }
            _ if !first => {}
            ORIGIN => {
                a.origin = check(well_known_ok && matches!(value, [v] if *v <= 2));
            }
            AS_PATH => a.as_path = check(well_known_ok && as_path(value, options.asn4)),
            NEXT_HOP => a.next_hop = check(well_known_ok && value.len() == 4),
            MED => a.med = check(value.len() == 4),
            LOCAL_PREF => a.local_pref = check(value.len() == 4),
            ATOMIC_AGGREGATE => a.atomic = check(value.is_empty()),
            AGGREGATOR => {
                a.aggregator = check(value.len() == if options.asn4 { 8 } else { 6 });
            }
            _ => {}
        }
        if a.count > 1 {
            a.only_unreach = None;
        }
    }
    Ok(a)
}

/// True when AS_PATH's segments fill it exactly (RFC 4271 4.3, RFC 7606 7.2).
fn as_path(value: &[u8], asn4: bool) -> bool {
    let width = if asn4 { 4 } else { 2 };
    let mut c = Cursor(value);
    while !c.is_empty() {
        let (Some(kind), Some(count)) = (c.u8(), c.u8()) else {
            return false;
        };
        if !(1..=4).contains(&kind) || c.take(usize::from(count) * width).is_none() {
            return false;
        }
    }
    true
}

/// One MP_REACH/MP_UNREACH value: its (AFI, SAFI) and, when unicast, its
/// family and NLRI (past the next hop); other families are counted in
/// `skipped` and not looked into.
fn mp<'a>(
    value: &'a [u8],
    field: Field,
    skipped: &mut Vec<Skipped>,
) -> Result<(u16, u8, Option<UnicastNlri<'a>>), UpdateError> {
    let mut c = Cursor(value);
    let (Some(afi), Some(safi)) = (c.u16(), c.u8()) else {
        return Err(UpdateError::MpShort {
            field,
            len: value.len(),
        });
    };
    let Some(family) = Family::from_afi_safi(afi, safi) else {
        match skipped.iter_mut().find(|s| s.afi == afi && s.safi == safi) {
            Some(s) => s.count = s.count.saturating_add(1),
            None => skipped.push(Skipped {
                afi,
                safi,
                count: 1,
            }),
        }
        return Ok((afi, safi, None));
    };
    if field == Field::MpUnreach {
        return Ok((afi, safi, Some((family, c.0))));
    }
    let nh_len = usize::from(c.u8().ok_or(UpdateError::MpReachShort(family))?);
    let allowed = match family {
        Family::Ipv4 => matches!(nh_len, 4 | 16 | 32),
        Family::Ipv6 => matches!(nh_len, 16 | 32),
    };
    if !allowed {
        return Err(UpdateError::NextHop {
            family,
            len: nh_len,
        });
    }
    // The next hop, then the reserved byte (RFC 4760 section 3).
    c.take(nh_len + 1)
        .ok_or(UpdateError::MpReachShort(family))?;
    Ok((afi, safi, Some((family, c.0))))
}

/// Reads a field of prefixes of one family, appending them to `out`.
fn prefixes(
    field_bytes: &[u8],
    family: Family,
    add_path: bool,
    field: Field,
    out: &mut Vec<Path>,
) -> Result<(), UpdateError> {
    let overrun = UpdateError::PrefixOverrun { field, add_path };
    let mut c = Cursor(field_bytes);
    while !c.is_empty() {
        let path_id = if add_path {
            Some(c.u32().ok_or(overrun.clone())?)
        } else {
            None
        };
        let len = c.u8().ok_or(overrun.clone())?;
        if len > family.max_len() {
            return Err(UpdateError::PrefixLength { field, family, len });
        }
        let bytes = c
            .take(usize::from(len).div_ceil(8))
            .ok_or(overrun.clone())?;
        let addr = match family {
            Family::Ipv4 => {
                let mut o = [0u8; 4];
                for (d, s) in o.iter_mut().zip(bytes) {
                    *d = *s;
                }
                let bits =
                    u32::from_be_bytes(o) & u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(bits))
            }
            Family::Ipv6 => {
                let mut o = [0u8; 16];
                for (d, s) in o.iter_mut().zip(bytes) {
                    *d = *s;
                }
                let bits = u128::from_be_bytes(o)
                    & u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(bits))
            }
        };
        let prefix =
            Prefix::new(addr, len).map_err(|_| UpdateError::PrefixLength { field, family, len })?;
        out.push(Path { prefix, path_id });
    }
    Ok(())
}
