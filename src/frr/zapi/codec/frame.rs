//! ZAPI framing: the 10-byte header (version 6, FRR 6.0 and later) and a
//! `tokio-util` codec that cuts a byte stream into [`Frame`]s.
//!
//! The header is the same in every release this client supports; what a
//! command number means is the [`Dialect`](super::Dialect)'s business, so a
//! frame of an unknown command still comes out whole and can be skipped.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::{Decoder, Encoder};

use super::error::ZapiError;

/// Size of the ZAPI header (version 6, FRR 6.0 and later).
pub const HEADER_SIZE: usize = 10;
/// The header marker of FRR (Quagga used 255).
pub const MARKER: u8 = 0xFE;
/// The only ZAPI version this codec speaks (FRR 6.0 through 10.x).
pub const VERSION: u8 = 6;
/// zebra drops client-to-zebra frames larger than this (`ZEBRA_MAX_PACKET_SIZ`).
pub const MAX_CLIENT_FRAME: usize = 16384;

/// One ZAPI frame: the header fields and the raw body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The VRF the message is about (0 = default).
    pub vrf_id: u32,
    /// The command number (release dependent: see [`Dialect`](super::Dialect)).
    pub command: u16,
    /// The body, after the header.
    pub body: Bytes,
}

/// The frame codec: length-delimited frames of up to 65535 bytes.
#[derive(Debug, Default, Clone, Copy)]
pub struct FrameCodec;

impl Decoder for FrameCodec {
    type Item = Frame;
    type Error = ZapiError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, ZapiError> {
        if src.len() < HEADER_SIZE {
            src.reserve(HEADER_SIZE - src.len());
            return Ok(None);
        }
        let len = u16::from_be_bytes([src[0], src[1]]);
        // Check the header before waiting for the body: a desynchronised
        // stream must fail now, not after up to 64 KiB of garbage.
        if src[2] != MARKER {
            return Err(ZapiError::BadMarker(src[2]));
        }
        if src[3] != VERSION {
            return Err(ZapiError::BadVersion(src[3]));
        }
        if usize::from(len) < HEADER_SIZE {
            return Err(ZapiError::BadLength(len));
        }
        let len = usize::from(len);
        if src.len() < len {
            src.reserve(len - src.len());
            return Ok(None);
        }
        let mut frame = src.split_to(len);
        frame.advance(4);
        let vrf_id = frame.get_u32();
        let command = frame.get_u16();
        Ok(Some(Frame {
            vrf_id,
            command,
            body: frame.freeze(),
        }))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, ZapiError> {
        match self.decode(src)? {
            Some(f) => Ok(Some(f)),
            None if src.is_empty() => Ok(None),
            // The stream ended inside a frame: say how far it got.
            None => Err(ZapiError::CutShort {
                received: src.len(),
                announced: (src.len() >= 2).then(|| u16::from_be_bytes([src[0], src[1]])),
            }),
        }
    }
}

impl Encoder<Frame> for FrameCodec {
    type Error = ZapiError;

    fn encode(&mut self, item: Frame, dst: &mut BytesMut) -> Result<(), ZapiError> {
        let len = HEADER_SIZE + item.body.len();
        if len > MAX_CLIENT_FRAME {
            return Err(ZapiError::TooLarge(len));
        }
        dst.reserve(len);
        // `len` <= 16384, so the cast cannot truncate.
        dst.put_u16(len as u16);
        dst.put_u8(MARKER);
        dst.put_u8(VERSION);
        dst.put_u32(item.vrf_id);
        dst.put_u16(item.command);
        dst.extend_from_slice(&item.body);
        Ok(())
    }
}

/// Frame helpers the codec's tests share.
#[cfg(test)]
pub(super) mod testing {
    use bytes::{BufMut, BytesMut};
    use tokio_util::codec::{Decoder, Encoder};

    use super::{Frame, FrameCodec, HEADER_SIZE, MARKER, VERSION};

    /// A frame's bytes on the wire (through the client-side encoder).
    pub(in crate::frr::zapi::codec) fn bytes_of(f: Frame) -> Vec<u8> {
        let mut b = BytesMut::new();
        FrameCodec.encode(f, &mut b).unwrap();
        b.to_vec()
    }

    /// The one frame `bytes` hold, with nothing left over.
    pub(in crate::frr::zapi::codec) fn one(bytes: &[u8]) -> Frame {
        let mut b = BytesMut::from(bytes);
        let f = FrameCodec.decode(&mut b).unwrap().unwrap();
        assert!(b.is_empty());
        f
    }

    /// What zebra would send: the header written by hand, because the
    /// client-side encoder refuses frames above zebra's inbound limit.
    pub(in crate::frr::zapi::codec) fn from_zebra(f: &Frame) -> BytesMut {
        let mut b = BytesMut::new();
        b.put_u16((HEADER_SIZE + f.body.len()) as u16);
        b.put_u8(MARKER);
        b.put_u8(VERSION);
        b.put_u32(f.vrf_id);
        b.put_u16(f.command);
        b.extend_from_slice(&f.body);
        b
    }
}

#[cfg(test)]
mod tests {
    use bytes::{Bytes, BytesMut};
    use proptest::prelude::*;
    use tokio_util::codec::{Decoder, Encoder};

    use super::testing::bytes_of;
    use super::*;
    use crate::frr::zapi::codec::{Dialect, Hello, Numbering};

    #[test]
    fn bad_headers_are_errors_and_unknown_commands_pass_by_length() {
        let mut b = BytesMut::from(&[0, 10, 0xff, 6, 0, 0, 0, 0, 0, 1][..]);
        assert!(matches!(
            FrameCodec.decode(&mut b),
            Err(ZapiError::BadMarker(0xff))
        ));
        let mut b = BytesMut::from(&[0, 10, 0xfe, 5, 0, 0, 0, 0, 0, 1][..]);
        assert!(matches!(
            FrameCodec.decode(&mut b),
            Err(ZapiError::BadVersion(5))
        ));
        let mut b = BytesMut::from(&[0, 9, 0xfe, 6, 0, 0, 0, 0, 0, 1][..]);
        assert!(matches!(
            FrameCodec.decode(&mut b),
            Err(ZapiError::BadLength(9))
        ));
        // An unknown command 999 with a 3-byte body, then a HELLO: both frames arrive.
        let mut raw = vec![0, 13, 0xfe, 6, 0, 0, 0, 0, 0x03, 0xe7, 1, 2, 3];
        raw.extend(bytes_of(Dialect::new(Numbering::V8_2).encode_hello(
            Hello {
                proto: 0,
                instance: 0,
                session_id: 0,
            },
        )));
        let mut b = BytesMut::from(&raw[..]);
        let f = FrameCodec.decode(&mut b).unwrap().unwrap();
        assert_eq!((f.command, &f.body[..]), (999, &[1u8, 2, 3][..]));
        let f = FrameCodec.decode(&mut b).unwrap().unwrap();
        assert_eq!(f.command, 18);
        // A 65535-byte frame is accepted from zebra.
        let mut big = vec![0xff, 0xff, 0xfe, 6, 0, 0, 0, 0, 0, 99];
        big.resize(65535, 0);
        let f = FrameCodec
            .decode(&mut BytesMut::from(&big[..]))
            .unwrap()
            .unwrap();
        assert_eq!(f.body.len(), 65525);
        // Clients must not send what zebra drops.
        let too_big = Frame {
            vrf_id: 0,
            command: 1,
            body: Bytes::from(vec![0; MAX_CLIENT_FRAME]),
        };
        assert!(matches!(
            FrameCodec.encode(too_big, &mut BytesMut::new()),
            Err(ZapiError::TooLarge(_))
        ));
    }

    #[test]
    fn a_stream_cut_inside_a_frame_says_how_far_it_got() {
        let mut b = BytesMut::from(&[0xff, 0xff, 0xfe, 6, 0, 0, 0, 0, 0, 1, 0][..]);
        let e = FrameCodec.decode_eof(&mut b).unwrap_err();
        assert!(
            e.to_string()
                .contains("middle of a frame (11 bytes of 65535 received)"),
            "{e}"
        );
        let e = FrameCodec
            .decode_eof(&mut BytesMut::from(&[0][..]))
            .unwrap_err();
        assert!(e.to_string().contains("(1 bytes received)"), "{e}");
        assert!(
            FrameCodec
                .decode_eof(&mut BytesMut::new())
                .unwrap()
                .is_none()
        );
    }

    proptest! {
        #[test]
        fn frames_survive_any_split(bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..6), cut in any::<proptest::sample::Index>()) {
            let mut raw = Vec::new();
            for (i, b) in bodies.iter().enumerate() {
                raw.extend(bytes_of(Frame { vrf_id: i as u32, command: i as u16, body: Bytes::from(b.clone()) }));
            }
            let cut = cut.index(raw.len() + 1);
            let mut buf = BytesMut::from(&raw[..cut]);
            let mut got = Vec::new();
            while let Some(f) = FrameCodec.decode(&mut buf).unwrap() { got.push(f); }
            buf.extend_from_slice(&raw[cut..]);
            while let Some(f) = FrameCodec.decode(&mut buf).unwrap() { got.push(f); }
            prop_assert_eq!(got.len(), bodies.len());
            for (f, b) in got.iter().zip(&bodies) { prop_assert_eq!(&f.body[..], &b[..]); }
        }
    }
}
