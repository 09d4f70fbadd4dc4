//! BMP messages and the BGP messages inside them, built as a router sends
//! them: the one builder the crate's tests, benches and fuzz targets use
//! (the `testing` feature), so that none frames a message by hand. Lengths
//! are computed, nothing else is checked: a test may build what no router
//! should send.

use std::net::{IpAddr, Ipv4Addr};

use bytes::{BufMut, Bytes, BytesMut};

use super::Path;
use super::codec::{HEADER_SIZE, VERSION};
use super::update::{AS_PATH, FLAG_EXTENDED, MP_REACH, MP_UNREACH, NEXT_HOP, ORIGIN};

/// The AS the builders' peers and paths speak for, unless told otherwise.
pub const ASN: u32 = 64512;

/// The per-peer header's length (RFC 7854 section 4.2).
const PER_PEER_HEADER: usize = 42;

/// The per-peer header of a BMP message (RFC 7854 section 4.2) for a peer
/// with an IPv4 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerHeader {
    /// 0 a global instance peer, 3 the Loc-RIB instance (RFC 9069).
    pub peer_type: u8,
    /// 0x40 post-policy (L), 0x80 an IPv6 address (V), 0x20 2-byte ASes (A).
    pub flags: u8,
    /// The peer's address (0.0.0.0 for the Loc-RIB).
    pub address: Ipv4Addr,
    /// Its AS.
    pub asn: u32,
    /// Its BGP identifier.
    pub bgp_id: Ipv4Addr,
    /// The timestamp's seconds (its microseconds are 0).
    pub seconds: u32,
}

impl PeerHeader {
    /// A global instance peer at `address` in AS [`ASN`], its address its
    /// BGP identifier, pre-policy, timestamp 0.
    pub fn global(address: impl Into<Ipv4Addr>) -> PeerHeader {
        let address = address.into();
        PeerHeader {
            peer_type: 0,
            flags: 0,
            address,
            asn: ASN,
            bgp_id: address,
            seconds: 0,
        }
    }

    /// The same peer's post-policy Adj-RIB-In.
    pub fn post_policy(self) -> PeerHeader {
        PeerHeader {
            flags: self.flags | 0x40,
            ..self
        }
    }
}

/// A BMP message (version 3) of `kind` with no per-peer header (4
/// Initiation, 5 Termination): the common header in front of `body`.
pub fn common(kind: u8, body: &[u8]) -> Bytes {
    let mut m = BytesMut::with_capacity(HEADER_SIZE + body.len());
    m.put_u8(VERSION);
    m.put_u32(u32::try_from(HEADER_SIZE + body.len()).unwrap_or(u32::MAX));
    m.put_u8(kind);
    m.put_slice(body);
    m.freeze()
}

/// A BMP message (version 3) of `kind` (0 Route Monitoring, 2 Peer Down,
/// 3 Peer Up) with `peer`'s per-peer header in front of `body`.
pub fn per_peer(kind: u8, peer: &PeerHeader, body: &[u8]) -> Bytes {
    let mut m = BytesMut::with_capacity(PER_PEER_HEADER + body.len());
    m.put_u8(peer.peer_type);
    m.put_u8(peer.flags);
    m.put_u64(0); // the peer distinguisher
    m.put_slice(&[0; 12]);
    m.put_slice(&peer.address.octets());
    m.put_u32(peer.asn);
    m.put_slice(&peer.bgp_id.octets());
    m.put_u32(peer.seconds);
    m.put_u32(0);
    m.put_slice(body);
    common(kind, &m)
}

/// A Route Monitoring message of `peer` carrying the UPDATE whose body is
/// `update` ([`update`]).
pub fn route_monitoring(peer: &PeerHeader, update: &[u8]) -> Bytes {
    per_peer(0, peer, &bgp(2, update))
}

/// A BGP message of `kind` (1 OPEN, 2 UPDATE): marker, length, type, body.
pub fn bgp(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![0xff; 16];
    m.extend_from_slice(
        &u16::try_from(19 + body.len())
            .unwrap_or(u16::MAX)
            .to_be_bytes(),
    );
    m.push(kind);
    m.extend_from_slice(body);
    m
}

/// An UPDATE's body: withdrawn routes, path attributes and NLRI, each
/// field as RFC 4271 lays it out.
pub fn update(withdrawn: &[u8], attrs: &[u8], nlri: &[u8]) -> Vec<u8> {
    let len = |b: &[u8]| u16::try_from(b.len()).unwrap_or(u16::MAX).to_be_bytes();
    let mut b = len(withdrawn).to_vec();
    b.extend_from_slice(withdrawn);
    b.extend_from_slice(&len(attrs));
    b.extend_from_slice(attrs);
    b.extend_from_slice(nlri);
    b
}

/// One path attribute, its length in two bytes when the value needs it or
/// `flags` has the extended-length bit (0x10).
pub fn attr(flags: u8, type_code: u8, value: &[u8]) -> Vec<u8> {
    let mut a = Vec::with_capacity(4 + value.len());
    if value.len() > 255 || flags & FLAG_EXTENDED != 0 {
        a.extend_from_slice(&[flags | FLAG_EXTENDED, type_code]);
        a.extend_from_slice(&u16::try_from(value.len()).unwrap_or(u16::MAX).to_be_bytes());
    } else {
        a.extend_from_slice(&[
            flags,
            type_code,
            u8::try_from(value.len()).unwrap_or(u8::MAX),
        ]);
    }
    a.extend_from_slice(value);
    a
}

/// ORIGIN IGP.
pub fn origin() -> Vec<u8> {
    attr(0x40, ORIGIN, &[0])
}

/// AS_PATH: one AS_SEQUENCE of [`ASN`], in 4 bytes.
pub fn as_path() -> Vec<u8> {
    let mut v = vec![2, 1];
    v.extend_from_slice(&ASN.to_be_bytes());
    attr(0x40, AS_PATH, &v)
}

/// NEXT_HOP 198.18.1.2 (the decoder reads no next hop's value).
pub fn next_hop() -> Vec<u8> {
    attr(0x40, NEXT_HOP, &[198, 18, 1, 2])
}

/// ORIGIN, AS_PATH and NEXT_HOP: what an IPv4 announcement needs.
pub fn mandatory() -> Vec<u8> {
    [origin(), as_path(), next_hop()].concat()
}

/// The NLRI of `paths`, each with its add-path id where it has one.
pub fn nlri(paths: &[Path]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in paths {
        if let Some(id) = p.path_id {
            out.extend_from_slice(&id.to_be_bytes());
        }
        let len = p.prefix.prefix_len();
        out.push(len);
        let octets = match p.prefix.addr() {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        };
        out.extend_from_slice(&octets[..usize::from(len).div_ceil(8)]);
    }
    out
}

/// MP_REACH_NLRI of (`afi`, `safi`) with this next hop and NLRI.
pub fn mp_reach(afi: u16, safi: u8, next_hop: &[u8], nlri: &[u8]) -> Vec<u8> {
    let mut v = afi.to_be_bytes().to_vec();
    v.push(safi);
    v.push(u8::try_from(next_hop.len()).unwrap_or(u8::MAX));
    v.extend_from_slice(next_hop);
    v.push(0);
    v.extend_from_slice(nlri);
    attr(0x80 | FLAG_EXTENDED, MP_REACH, &v)
}

/// MP_UNREACH_NLRI of (`afi`, `safi`) with these NLRI.
pub fn mp_unreach(afi: u16, safi: u8, nlri: &[u8]) -> Vec<u8> {
    let mut v = afi.to_be_bytes().to_vec();
    v.push(safi);
    v.extend_from_slice(nlri);
    attr(0x80 | FLAG_EXTENDED, MP_UNREACH, &v)
}
