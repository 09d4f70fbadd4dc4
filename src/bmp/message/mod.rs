//! BMP messages (RFC 7854; Loc-RIB per RFC 9069) decoded into what the
//! station needs: by way of `bgpkit-parser` for the BMP layer, by our own
//! [`super::update`] for the BGP UPDATE inside Route Monitoring.
//!
//! Contract: [`Decoder::decode`] takes one whole frame from
//! [`super::codec::BmpCodec`] and returns a [`Message`] or a typed
//! [`DecodeError`]; it never panics on any input (fuzzed in
//! `fuzz/fuzz_targets/bmp_decode.rs`). bgpkit-parser reads the Initiation,
//! Peer Up (with the OPENs' add-path capability), Peer Down, Statistics,
//! Termination and the per-peer header. Route Monitoring: the BGP header is
//! checked here (marker, a length the message carries, a known type; a
//! non-UPDATE is [`Message::Ignored`]) and the UPDATE goes to
//! [`super::update::decode`], which keeps only the unicast prefixes (IPv4
//! and IPv6, classic and MP_REACH/MP_UNREACH, with their add-path ids),
//! skips and counts every other AFI/SAFI, and applies RFC 7606: a
//! structural fault is a [`DecodeError`] (the session ends), a missing or
//! malformed mandatory attribute turns the announcements into withdrawals.
//! Its module doc states the rules.
//!
//! Add-path: RFC 7854 carries UPDATEs as the peer sent them, so whether NLRI
//! carry a 4-byte path id depends on the OPENs of that BGP session, which
//! the router reports in Peer Up. A [`Decoder`] lives as long as one BMP
//! session and remembers, per monitored peer, whether the router's OPEN
//! offered to receive add-path and the peer's offered to send it (any
//! unicast family: a mixed set per family on one session is not something
//! the lab or FRR produce, see docs/BMP.md). The free function [`decode`]
//! is a decoder with no Peer Up seen: no add-path. The AS number width of
//! AS_PATH comes from the per-peer header's A flag (4 bytes for Loc-RIB).
//!
//! Graceful restart (RFC 4724 section 3, RFC 8538's N bit) is read here
//! from the Peer Up frame's two OPENs, defensively (anything malformed is
//! no graceful restart): bgpkit-parser's model drops the N bit and refuses
//! a whole capability over one unknown SAFI. Peer Down carries its reason
//! code and, for reasons 1 and 3, the NOTIFICATION's code and subcode.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use bgpkit_parser::models::capabilities::AddPathSendReceive;
use bgpkit_parser::models::{
    Afi, AsnLength, BgpMessage, BgpOpenMessage, CapabilityValue, ParamValue, Safi,
};
use bgpkit_parser::parser::bmp::error::ParserBmpError;
use bgpkit_parser::parser::bmp::messages::{
    BmpMessageBody, BmpMsgType, BmpPeerType, BmpPerPeerHeader, InitiationTlvType, PeerDownReason,
    PerPeerFlags, StatsData, TerminationTlvValue, parse_bmp_common_header, parse_per_peer_header,
};
use bgpkit_parser::parser::bmp::parse_bmp_msg;
use bytes::Bytes;

mod peer_down;
mod peer_up;

use self::peer_down::{down_reason, notification};
use self::peer_up::{add_path_negotiated, negotiated_families, peer_up_graceful_restart};
use super::update::{self, Options};
pub use super::update::{Anomaly, EndOfRib, Path, Skipped, UpdateError};
use crate::model::Family;

/// One BGP peer as the router reports it in the per-peer header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeerKey {
    /// The peer's address (0.0.0.0 for the router's own Loc-RIB).
    pub address: IpAddr,
    /// The peer distinguisher (0 for the global instance).
    pub distinguisher: u64,
}

impl fmt::Display for PeerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.distinguisher == 0 {
            write!(f, "{}", self.address)
        } else {
            write!(f, "{} (distinguisher {})", self.address, self.distinguisher)
        }
    }
}

/// Which of the router's RIBs a Route Monitoring message shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rib {
    /// The Adj-RIB-In before inbound policy.
    PrePolicy,
    /// The Adj-RIB-In after inbound policy: what the router may select.
    PostPolicy,
    /// The router's Loc-RIB (RFC 9069): what it selected.
    LocRib,
}

impl fmt::Display for Rib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rib::PrePolicy => "adj-rib-in-pre",
            Rib::PostPolicy => "adj-rib-in-post",
            Rib::LocRib => "loc-rib",
        })
    }
}

/// A decoded BMP message: only what the station uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// The router opened the session (RFC 7854 section 4.3).
    Initiation {
        /// sysName (TLV 2): the label the station gives this router.
        sys_name: Option<String>,
        /// sysDescr (TLV 1).
        sys_descr: Option<String>,
    },
    /// A BGP session of the router came up.
    PeerUp {
        /// The peer.
        peer: PeerKey,
        /// The peer's AS.
        asn: u32,
        /// The peer's BGP identifier.
        bgp_id: Ipv4Addr,
        /// The "peer" is the router's own Loc-RIB (RFC 9069), not a BGP session.
        loc_rib: bool,
        /// The unicast families the session negotiated (both OPENs'
        /// multiprotocol capabilities; IPv4 when an OPEN has none, RFC
        /// 4760): the families whose End-of-RIB the peer owes the station.
        families: Vec<Family>,
        /// Graceful restart as the two OPENs negotiated it: `Some` when the
        /// router's OPEN carries the capability (it can be a helper) and
        /// the peer's lists at least one unicast family.
        graceful_restart: Option<GracefulRestart>,
    },
    /// A BGP session of the router went down: its routes are gone, or kept
    /// as stale under graceful restart (`bmp::view` decides).
    PeerDown {
        /// The peer.
        peer: PeerKey,
        /// Why, as RFC 7854 section 4.9 words it.
        reason: String,
        /// The reason code (RFC 7854 section 4.9: 1 to 5, 6 for RFC 9069's
        /// TLV, 0 reserved).
        reason_code: u8,
        /// For reasons 1 and 3, the NOTIFICATION that follows, when it
        /// parses.
        notification: Option<Notification>,
    },
    /// Route Monitoring: one UPDATE the router holds from a peer, or in its Loc-RIB.
    Route {
        /// The peer (the zero address for Loc-RIB).
        peer: PeerKey,
        /// The peer's AS.
        asn: u32,
        /// The peer's BGP identifier.
        bgp_id: Ipv4Addr,
        /// Which RIB.
        rib: Rib,
        /// Unicast paths announced.
        announced: Vec<Path>,
        /// Unicast paths withdrawn.
        withdrawn: Vec<Path>,
        /// Set when the UPDATE is an End-of-RIB marker (RFC 4724): of a
        /// unicast family (its initial dump is complete) or of a family
        /// not decoded (to be ignored).
        end_of_rib: Option<EndOfRib>,
        /// The families not decoded that the UPDATE carried, each once.
        skipped: Vec<Skipped>,
        /// The missing or malformed attributes of an UPDATE that announces
        /// (RFC 7606's treat-as-withdraw cases): its paths still count.
        anomalies: Vec<Anomaly>,
    },
    /// A Statistics Report: (stat type, value) pairs.
    Stats {
        /// The peer.
        peer: PeerKey,
        /// Each counter or gauge (per-AFI/SAFI gauges give their value).
        counters: Vec<(u16, u64)>,
    },
    /// The router ends the session (RFC 7854 section 4.5).
    Termination {
        /// The reason and any text the router gave.
        reason: String,
    },
    /// Known but not used: Route Mirroring, Adj-RIB-Out monitoring, or a
    /// Route Monitoring message carrying no UPDATE.
    Ignored {
        /// What it was.
        kind: &'static str,
    },
}

/// Graceful restart negotiated on a BGP session (RFC 4724 section 3, RFC
/// 8538): what the router, a helper, keeps when the session drops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GracefulRestart {
    /// The peer's Restart Time, in seconds: how long the router keeps its
    /// routes once the session is down.
    pub restart_time: u16,
    /// The unicast families the peer's capability lists (others ignored).
    pub families: Vec<Family>,
    /// Of those, the ones whose Forwarding State (F) bit is set: on a
    /// re-established session, stale routes of a family not here are
    /// removed at once (RFC 4724 section 4.2).
    pub preserved: Vec<Family>,
    /// Both OPENs set the N bit (RFC 8538): routes are kept also when a
    /// NOTIFICATION ends the session (unless it is a Hard Reset).
    pub notification: bool,
}

/// A BGP NOTIFICATION's error code and subcode (RFC 4271 section 4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notification {
    /// Error code (4: Hold Timer Expired, 6: Cease).
    pub code: u8,
    /// Error subcode (Cease 9: Hard Reset, RFC 8538).
    pub subcode: u8,
}

/// Why a BMP message could not be decoded. The session that sent it is
/// closed: a router that sends what we cannot read is not being watched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The frame is shorter than the common header.
    #[error(
        "BMP message of {len} bytes is shorter than its 6-byte header; frames must come from bmp::codec::BmpCodec"
    )]
    Short {
        /// The frame's length.
        len: usize,
    },
    /// The type byte names no BMP message.
    #[error(
        "BMP message of unknown type {0}; the router speaks an extension ribbridge does not know: report the router's release"
    )]
    UnknownType(u8),
    /// The message is malformed.
    #[error(
        "BMP {kind} message is malformed: {detail}; the session is closed and the router reconnects (report the router's release if it repeats)"
    )]
    Malformed {
        /// The message type.
        kind: &'static str,
        /// What the parser found wrong.
        detail: String,
    },
}

fn type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "Route Monitoring",
        1 => "Statistics Report",
        2 => "Peer Down",
        3 => "Peer Up",
        4 => "Initiation",
        5 => "Termination",
        6 => "Route Mirroring",
        _ => return None,
    })
}

/// Decodes one frame with no session context (no add-path): see [`Decoder`].
pub fn decode(frame: Bytes) -> Result<Message, DecodeError> {
    Decoder::default().decode(frame)
}

/// Decodes the frames of one BMP session, remembering which peers use
/// add-path (learnt from their Peer Up).
#[derive(Debug, Default, Clone)]
pub struct Decoder {
    add_path: BTreeSet<PeerKey>,
}

impl Decoder {
    /// A decoder for a new session.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes one whole BMP message (header included); never panics.
    pub fn decode(&mut self, frame: Bytes) -> Result<Message, DecodeError> {
        if frame.len() < super::codec::HEADER_SIZE {
            return Err(DecodeError::Short { len: frame.len() });
        }
        let kind = type_name(frame[5]).ok_or(DecodeError::UnknownType(frame[5]))?;
        let malformed = |e: ParserBmpError| DecodeError::Malformed {
            kind,
            detail: e.to_string(),
        };
        if frame[5] == u8::from(BmpMsgType::RouteMonitoring) {
            // Parsed by hand from the per-peer header on, because
            // `parse_bmp_msg` always reads NLRI without add-path ids.
            return self.route_monitoring(frame).map_err(malformed);
        }
        // bgpkit-parser's OPEN model drops the graceful restart N bit:
        // read the capability from the frame itself.
        let graceful_restart = if frame[5] == u8::from(BmpMsgType::PeerUpNotification) {
            peer_up_graceful_restart(&frame)
        } else {
            None
        };
        let mut data = frame;
        let msg = parse_bmp_msg(&mut data).map_err(malformed)?;
        let peer = msg.per_peer_header.as_ref().map(peer_key);
        Ok(match (msg.message_body, msg.per_peer_header) {
            (BmpMessageBody::InitiationMessage(m), _) => {
                let mut sys_name = None;
                let mut sys_descr = None;
                for tlv in m.tlvs {
                    match tlv.info_type {
                        InitiationTlvType::SysName => sys_name = Some(tlv.info),
                        InitiationTlvType::SysDescr => sys_descr = Some(tlv.info),
                        _ => {}
                    }
                }
                Message::Initiation {
                    sys_name,
                    sys_descr,
                }
            }
            (BmpMessageBody::PeerUpNotification(m), Some(h)) => {
                let key = peer_key(&h);
                if add_path_negotiated(&m.sent_open, &m.received_open) {
                    self.add_path.insert(key);
                } else {
                    self.add_path.remove(&key);
                }
                Message::PeerUp {
                    peer: key,
                    asn: h.peer_asn.to_u32(),
                    bgp_id: h.peer_bgp_id,
                    loc_rib: h.peer_type == BmpPeerType::LocalRib,
                    families: negotiated_families(&m.sent_open, &m.received_open),
                    graceful_restart,
                }
            }
            (BmpMessageBody::PeerDownNotification(m), Some(h)) => {
                let key = peer_key(&h);
                self.add_path.remove(&key);
                let data = m.data.as_deref().unwrap_or_default();
                let notification = match m.reason {
                    PeerDownReason::LocalSystemClosedNotificationPduFollows
                    | PeerDownReason::RemoteSystemClosedNotificationPduFollows => {
                        notification(data)
                    }
                    _ => None,
                };
                Message::PeerDown {
                    peer: key,
                    reason: down_reason(m.reason, data.len()),
                    reason_code: u8::from(m.reason),
                    notification,
                }
            }
            (BmpMessageBody::StatsReport(m), Some(h)) => Message::Stats {
                peer: peer_key(&h),
                counters: m
                    .counters
                    .iter()
                    .filter_map(|c| {
                        let value = match c.stat_data {
                            StatsData::Counter(v) => u64::from(v),
                            StatsData::Gauge(v) | StatsData::AfiSafiGauge(_, _, v) => v,
                            StatsData::Unknown(_) => return None,
                        };
                        Some((u16::from(c.stat_type), value))
                    })
                    .collect(),
            },
            (BmpMessageBody::TerminationMessage(m), _) => Message::Termination {
                reason: m
                    .tlvs
                    .iter()
                    .map(|t| match &t.info_value {
                        TerminationTlvValue::String(s) => s.clone(),
                        TerminationTlvValue::Reason(r) => format!("{r:?}"),
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
            },
            (BmpMessageBody::RouteMirroring(_), _) => Message::Ignored {
                kind: "Route Mirroring",
            },
            // Every per-peer type comes with its header; a body without one
            // means the parser changed under us: say so, do not guess.
            _ => {
                return Err(DecodeError::Malformed {
                    kind,
                    detail: format!("no per-peer header (peer {peer:?})"),
                });
            }
        })
    }

    fn route_monitoring(&self, frame: Bytes) -> Result<Message, ParserBmpError> {
        let mut data = frame;
        let header = parse_bmp_common_header(&mut data)?;
        let body_len = (header.msg_len as usize).saturating_sub(super::codec::HEADER_SIZE);
        if data.len() < body_len {
            return Err(ParserBmpError::TruncatedBmpMessage);
        }
        let mut body = data.split_to(body_len);
        let h = parse_per_peer_header(&mut body)?;
        let rib = match (h.peer_type, h.peer_flags) {
            (BmpPeerType::LocalRib, _) => Rib::LocRib,
            (_, PerPeerFlags::PeerFlags(f)) if f.is_adj_rib_out() => {
                return Ok(Message::Ignored {
                    kind: "Adj-RIB-Out Route Monitoring",
                });
            }
            (_, PerPeerFlags::PeerFlags(f)) if f.is_post_policy() => Rib::PostPolicy,
            _ => Rib::PrePolicy,
        };
        let peer = peer_key(&h);
        let add_path = self.add_path.contains(&peer);
        let asn_len = match h.peer_flags {
            PerPeerFlags::PeerFlags(f) => f.asn_length(),
            PerPeerFlags::LocalRibPeerFlags(_) => AsnLength::Bits32,
        };
        let asn4 = matches!(asn_len, AsnLength::Bits32);
        // The BGP header: marker, a length that the message carries (RFC
        // 8654: up to 65535), a known type; only an UPDATE is decoded.
        let corrupted = |detail: String| ParserBmpError::CorruptedBgpMessage(detail);
        let short = || {
            corrupted(format!(
                "the BGP PDU of {} bytes is shorter than its 19-byte header",
                body.len()
            ))
        };
        let (header, rest) = body.split_at_checked(19).ok_or_else(short)?;
        let [marker @ .., len_hi, len_lo, kind] = header else {
            return Err(short());
        };
        if marker.iter().any(|b| *b != 0xff) {
            return Err(corrupted("the BGP PDU's marker is not all ones".into()));
        }
        let pdu_len = usize::from(u16::from_be_bytes([*len_hi, *len_lo]));
        if pdu_len < 19 || pdu_len > body.len() {
            return Err(corrupted(format!(
                "the BGP PDU's length field says {pdu_len} bytes, the message carries {}",
                body.len()
            )));
        }
        match *kind {
            2 => {}
            1 | 3 | 4 | 5 => {
                return Ok(Message::Ignored {
                    kind: "Route Monitoring without an UPDATE",
                });
            }
            t => return Err(corrupted(format!("unknown BGP message type {t}"))),
        }
        let update_body = rest.get(..pdu_len - 19).unwrap_or_default();
        let u = update::decode(update_body, Options { add_path, asn4 })
            .map_err(|e| corrupted(format!("UPDATE: {e}")))?;
        Ok(Message::Route {
            peer,
            asn: h.peer_asn.to_u32(),
            bgp_id: h.peer_bgp_id,
            rib,
            announced: u.announced,
            withdrawn: u.withdrawn,
            end_of_rib: u.end_of_rib,
            skipped: u.skipped,
            anomalies: u.anomalies,
        })
    }
}

fn peer_key(h: &BmpPerPeerHeader) -> PeerKey {
    PeerKey {
        address: h.peer_ip,
        distinguisher: h.peer_distinguisher,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bmp::build::{PeerHeader, bgp, per_peer};
    use crate::model::Prefix;
    use bytes::BytesMut;

    const PEER: [u8; 4] = [198, 18, 1, 2];

    /// A BMP message of `kind` with a global, IPv4, 4-byte-AS per-peer
    /// header (`flags` added) in front of `body`.
    fn with_peer(kind: u8, flags: u8, body: &[u8]) -> Bytes {
        let peer = PeerHeader {
            flags,
            ..PeerHeader::global(PEER)
        };
        per_peer(kind, &peer, body)
    }

    /// An OPEN offering add-path `send_receive` for IPv4 unicast (if any).
    fn open(add_path: Option<u8>) -> Vec<u8> {
        let mut caps = vec![1, 4, 0, 1, 0, 1]; // multiprotocol IPv4 unicast
        if let Some(sr) = add_path {
            caps.extend_from_slice(&[69, 4, 0, 1, 1, sr]);
        }
        open_with(&caps)
    }

    /// An OPEN carrying `caps` (one Capabilities parameter).
    fn open_with(caps: &[u8]) -> Vec<u8> {
        let mut b = vec![4, 0xfc, 0, 0, 9];
        b.extend_from_slice(&PEER);
        b.push(u8::try_from(caps.len() + 2).expect("fits"));
        b.extend_from_slice(&[2, u8::try_from(caps.len()).expect("fits")]);
        b.extend_from_slice(caps);
        bgp(1, &b)
    }

    fn peer_up(local: Option<u8>, remote: Option<u8>) -> Bytes {
        peer_up_opens(&open(local), &open(remote))
    }

    /// A Peer Up carrying these two OPEN PDUs (sent, received).
    fn peer_up_opens(sent: &[u8], received: &[u8]) -> Bytes {
        let mut body = vec![0; 12];
        body.extend_from_slice(&[198, 18, 1, 1]);
        body.extend_from_slice(&[0, 179, 0xc0, 0x01]);
        body.extend_from_slice(sent);
        body.extend_from_slice(received);
        with_peer(3, 0, &body)
    }

    /// An OPEN with IPv4 unicast and, if `gr` is given, a graceful restart
    /// capability of that value (flags and time, then the tuples).
    fn open_gr(gr: Option<&[u8]>) -> Vec<u8> {
        let mut caps = vec![1, 4, 0, 1, 0, 1];
        if let Some(v) = gr {
            caps.extend_from_slice(&[64, u8::try_from(v.len()).expect("fits")]);
            caps.extend_from_slice(v);
        }
        open_with(&caps)
    }

    fn graceful_restart_of(
        sent: Option<&[u8]>,
        received: Option<&[u8]>,
    ) -> Option<GracefulRestart> {
        match decode(peer_up_opens(&open_gr(sent), &open_gr(received))) {
            Ok(Message::PeerUp {
                graceful_restart, ..
            }) => graceful_restart,
            other => panic!("{other:?}"),
        }
    }

    /// FRR's helper-only capability (R and N bits, 120 s, no family), as
    /// the lab's captures carry it.
    const HELPER: &[u8] = &[0xc0, 0x78];
    /// Restart time 120 s, N bit, IPv4 unicast (F 0), IPv6 unicast (F 1),
    /// VPNv4 (ignored).
    const GR_BOTH: &[u8] = &[0x40, 0x78, 0, 1, 1, 0, 0, 2, 1, 0x80, 0, 1, 128, 0x80];

    #[test]
    fn graceful_restart_is_read_from_both_opens() {
        assert_eq!(
            graceful_restart_of(Some(HELPER), Some(GR_BOTH)),
            Some(GracefulRestart {
                restart_time: 120,
                families: vec![Family::Ipv4, Family::Ipv6],
                preserved: vec![Family::Ipv6],
                notification: true,
            })
        );
        // The router cannot help without the capability in its own OPEN;
        // a peer without it, or listing no family (helper only), gets no
        // retention.
        assert_eq!(graceful_restart_of(None, Some(GR_BOTH)), None);
        assert_eq!(graceful_restart_of(Some(HELPER), None), None);
        assert_eq!(graceful_restart_of(Some(GR_BOTH), Some(HELPER)), None);
        // The N bit on one side only: not negotiated (RFC 8538).
        let no_n = [0x00, 0x78, 0, 1, 1, 0];
        let gr = graceful_restart_of(Some(HELPER), Some(&no_n)).expect("gr");
        assert!(!gr.notification);
        assert_eq!(gr.families, [Family::Ipv4]);
        let gr = graceful_restart_of(Some(&[0x80, 0x78]), Some(GR_BOTH)).expect("gr");
        assert!(!gr.notification);
        // Only other families listed: nothing the view counts.
        assert_eq!(
            graceful_restart_of(Some(HELPER), Some(&[0x40, 0x78, 0, 1, 128, 0])),
            None
        );
    }

    #[test]
    fn a_malformed_graceful_restart_capability_is_ignored() {
        // A truncated tuple, a truncated header: the Peer Up decodes, with
        // no graceful restart.
        for bad in [&[0x40, 0x78, 0, 1, 1][..], &[0x40][..], &[][..]] {
            assert_eq!(
                graceful_restart_of(Some(HELPER), Some(bad)),
                None,
                "{bad:?}"
            );
        }
        // Any cut of a Peer Up frame: never a panic.
        let whole = peer_up_opens(&open_gr(Some(HELPER)), &open_gr(Some(GR_BOTH)));
        for cut in 0..whole.len() {
            assert_eq!(
                peer_up_graceful_restart(&whole[..cut]),
                None,
                "cut at {cut}"
            );
            let mut m = BytesMut::from(&whole[..cut.max(6)]);
            m[1..5].copy_from_slice(&u32::try_from(cut.max(6)).expect("fits").to_be_bytes());
            let _ = decode(m.freeze());
        }
        assert!(peer_up_graceful_restart(&whole).is_some());
    }

    #[test]
    fn peer_down_carries_its_reason_code_and_notification() {
        let down = |body: &[u8]| match decode(with_peer(2, 0, body)) {
            Ok(Message::PeerDown {
                reason_code,
                notification,
                ..
            }) => (reason_code, notification),
            other => panic!("{other:?}"),
        };
        // Reason 1, Hold Timer Expired (4/0); reason 3, Cease/Hard Reset (6/9).
        let notified = |reason: u8, code: u8, subcode: u8| {
            let mut body = vec![reason];
            body.extend_from_slice(&bgp(3, &[code, subcode]));
            down(&body)
        };
        let n = |code, subcode| Some(Notification { code, subcode });
        assert_eq!(notified(1, 4, 0), (1, n(4, 0)));
        assert_eq!(notified(3, 6, 9), (3, n(6, 9)));
        // No NOTIFICATION (4), an FSM event (2), a PDU that is no NOTIFICATION.
        assert_eq!(down(&[4]), (4, None));
        assert_eq!(down(&[2, 0, 0]), (2, None));
        let mut keepalive = vec![1];
        keepalive.extend_from_slice(&bgp(4, &[]));
        assert_eq!(down(&keepalive), (1, None));
        assert_eq!(down(&[1, 0xff, 0xff]), (1, None), "a truncated PDU");
    }

    /// An UPDATE announcing 192.0.2.10/32, with `path_id` before the NLRI.
    fn update(path_id: Option<u32>) -> Vec<u8> {
        let attrs = [0x40, 1, 1, 0, 0x40, 2, 0, 0x40, 3, 4, 198, 18, 1, 2];
        let mut b = vec![0, 0];
        b.extend_from_slice(&u16::try_from(attrs.len()).expect("fits").to_be_bytes());
        b.extend_from_slice(&attrs);
        if let Some(id) = path_id {
            b.extend_from_slice(&id.to_be_bytes());
        }
        b.extend_from_slice(&[32, 192, 0, 2, 10]);
        bgp(2, &b)
    }

    fn vip() -> Prefix {
        "192.0.2.10/32".parse().expect("vip")
    }

    #[test]
    fn route_monitoring_post_policy_announce() {
        match decode(with_peer(0, 0x40, &update(None))) {
            Ok(Message::Route {
                rib: Rib::PostPolicy,
                announced,
                withdrawn,
                end_of_rib: None,
                asn: 64512,
                ..
            }) => {
                assert_eq!(
                    announced,
                    vec![Path {
                        prefix: vip(),
                        path_id: None
                    }]
                );
                assert!(withdrawn.is_empty());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn add_path_ids_are_read_after_a_peer_up_negotiating_them() {
        let mut d = Decoder::new();
        // The router receives (1), the peer sends (2): path ids on the wire.
        assert!(matches!(
            d.decode(peer_up(Some(1), Some(2))),
            Ok(Message::PeerUp { asn: 64512, .. })
        ));
        match d.decode(with_peer(0, 0x40, &update(Some(7)))) {
            Ok(Message::Route { announced, .. }) => assert_eq!(
                announced,
                vec![Path {
                    prefix: vip(),
                    path_id: Some(7)
                }]
            ),
            other => panic!("{other:?}"),
        }
        // Only one side offering it: no path ids.
        let mut d = Decoder::new();
        d.decode(peer_up(Some(1), None)).expect("peer up");
        match d.decode(with_peer(0, 0x40, &update(None))) {
            Ok(Message::Route { announced, .. }) => {
                assert_eq!(announced[0].path_id, None);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn end_of_rib_names_its_family() {
        let v4 = bgp(2, &[0, 0, 0, 0]);
        assert!(matches!(
            decode(with_peer(0, 0x40, &v4)),
            Ok(Message::Route {
                end_of_rib: Some(EndOfRib::Unicast(Family::Ipv4)),
                ..
            })
        ));
        // MP_UNREACH_NLRI for IPv6 unicast with no prefix.
        let v6 = bgp(2, &[0, 0, 0, 6, 0x80, 15, 3, 0, 2, 1]);
        assert!(matches!(
            decode(with_peer(0, 0x40, &v6)),
            Ok(Message::Route {
                end_of_rib: Some(EndOfRib::Unicast(Family::Ipv6)),
                ..
            })
        ));
    }

    #[test]
    fn the_bgp_header_is_checked_and_other_families_pass() {
        // A KEEPALIVE inside Route Monitoring: not an UPDATE, ignored.
        assert!(matches!(
            decode(with_peer(0, 0x40, &bgp(4, &[]))),
            Ok(Message::Ignored { .. })
        ));
        // An unknown BGP type, a broken marker, a length under 19: errors.
        assert!(decode(with_peer(0, 0x40, &bgp(9, &[]))).is_err());
        let mut marker = update(None);
        marker[3] = 0;
        assert!(decode(with_peer(0, 0x40, &marker)).is_err());
        let mut short = update(None);
        short[16..18].copy_from_slice(&18u16.to_be_bytes());
        assert!(decode(with_peer(0, 0x40, &short)).is_err());
        // The EVPN End-of-RIB that bgpkit-parser refused ("Unknown AFI type: 25").
        let evpn = bgp(2, &[0, 0, 0, 6, 0x80, 15, 3, 0, 25, 70]);
        match decode(with_peer(0, 0x40, &evpn)) {
            Ok(Message::Route {
                end_of_rib: Some(EndOfRib::Other { afi: 25, safi: 70 }),
                skipped,
                anomalies,
                ..
            }) if anomalies.is_empty() => assert_eq!(
                skipped,
                vec![Skipped {
                    afi: 25,
                    safi: 70,
                    count: 1
                }]
            ),
            other => panic!("{other:?}"),
        }
        // 2-byte AS numbers (the per-peer header's A flag, 0x20).
        let attrs = [
            0x40, 1, 1, 0, 0x40, 2, 4, 2, 1, 0xfc, 0, 0x40, 3, 4, 198, 18, 1, 2,
        ];
        let mut b = vec![0, 0, 0, u8::try_from(attrs.len()).expect("fits")];
        b.extend_from_slice(&attrs);
        b.extend_from_slice(&[32, 192, 0, 2, 10]);
        match decode(with_peer(0, 0x40 | 0x20, &bgp(2, &b))) {
            Ok(Message::Route {
                announced,
                anomalies,
                ..
            }) if anomalies.is_empty() => assert_eq!(announced.len(), 1),
            other => panic!("{other:?}"),
        }
        // Read as 4-byte AS numbers the AS_PATH is malformed: an anomaly,
        // the path still counts (a monitor mirrors what the router holds).
        match decode(with_peer(0, 0x40, &bgp(2, &b))) {
            Ok(Message::Route {
                anomalies,
                announced,
                ..
            }) if anomalies == [Anomaly::MalformedAsPath] => assert_eq!(announced.len(), 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn adj_rib_out_is_ignored() {
        assert!(matches!(
            decode(with_peer(0, 0x40 | 0x10, &update(None))),
            Ok(Message::Ignored { .. })
        ));
    }

    #[test]
    fn malformed_input_is_a_typed_error() {
        assert_eq!(
            decode(Bytes::from_static(&[3, 0, 0])),
            Err(DecodeError::Short { len: 3 })
        );
        assert_eq!(
            decode(Bytes::from_static(&[3, 0, 0, 0, 6, 9])),
            Err(DecodeError::UnknownType(9))
        );
        let whole = with_peer(0, 0x40, &update(None));
        for cut in 6..whole.len() {
            let mut m = BytesMut::from(&whole[..cut]);
            m[1..5].copy_from_slice(&u32::try_from(cut).expect("fits").to_be_bytes());
            match decode(m.freeze()) {
                Err(DecodeError::Malformed { kind, .. }) => assert_eq!(kind, "Route Monitoring"),
                other => panic!("cut at {cut}: {other:?}"),
            }
        }
        // A malformed NLRI (bgpkit-parser only warns) and NLRI read with a
        // wrong add-path guess are errors, not silently missing routes.
        let mut bad_len = update(None);
        let n = bad_len.len();
        bad_len[n - 5] = 33;
        assert!(matches!(
            decode(with_peer(0, 0x40, &bad_len)),
            Err(DecodeError::Malformed { .. })
        ));
        let mut d = Decoder::new();
        d.decode(peer_up(Some(3), Some(3))).expect("peer up");
        assert!(matches!(
            d.decode(with_peer(0, 0x40, &update(None))),
            Err(DecodeError::Malformed { .. })
        ));
        let err = decode(with_peer(2, 0, &[99])).expect_err("bad reason");
        assert!(err.to_string().contains("Peer Down"), "{err}");
    }
}
