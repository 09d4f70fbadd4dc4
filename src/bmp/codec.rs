//! BMP framing: cuts the TCP stream a router sends into whole messages.
//!
//! Contract: every BMP message (RFC 7854 section 4.1) starts with a 6-byte
//! common header: version (u8, must be 3), message length (u32, big endian,
//! the whole message including the header) and type (u8). The codec checks
//! the version and the length bound as soon as the header is in, so a
//! desynchronised or hostile stream fails at once instead of after buffering
//! up to the bound; the type is left to [`super::message`], which turns an
//! unknown one into a typed error. A frame is the whole message, header
//! included, because `bgpkit-parser` parses from the header.

use bytes::{Bytes, BytesMut};
use tokio_util::codec::Decoder;

/// Size of the BMP common header.
pub const HEADER_SIZE: usize = 6;
/// The only BMP version spoken (RFC 7854; every FRR release sends 3).
pub const VERSION: u8 = 3;
/// The default bound on one message: a BGP UPDATE is at most 65535 bytes
/// (RFC 8654 extended messages), and a Peer Up carries two OPENs; 1 MiB
/// leaves room for any vendor's TLVs while a garbage length cannot make the
/// station buffer gigabytes.
pub const MAX_MESSAGE: usize = 1 << 20;

/// Splits a BMP TCP stream into whole messages (header included).
#[derive(Debug, Clone, Copy)]
pub struct BmpCodec {
    max_len: usize,
}

impl BmpCodec {
    /// A codec refusing messages longer than `max_len` bytes.
    pub fn new(max_len: usize) -> BmpCodec {
        BmpCodec { max_len }
    }

    /// The bound this codec enforces.
    pub fn max_len(&self) -> usize {
        self.max_len
    }
}

impl Default for BmpCodec {
    fn default() -> BmpCodec {
        BmpCodec::new(MAX_MESSAGE)
    }
}

/// Why the BMP stream could not be cut into messages. Every variant ends the
/// session: after a bad header nothing later on the stream can be trusted.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Reading the socket failed.
    #[error("reading the BMP session failed: {0}; the router reconnects on its own retry timer")]
    Io(#[from] std::io::Error),
    /// The version byte is not 3.
    #[error(
        "BMP message header: version {got}, only version 3 (RFC 7854) is spoken; configure the router to send BMP version 3, or check that it is a BMP speaker connecting to this port"
    )]
    Version {
        /// The version byte received.
        got: u8,
    },
    /// The length field is shorter than the header itself.
    #[error(
        "BMP message header: length {len} is shorter than the 6-byte header; the stream is corrupt, the session is closed"
    )]
    TooShort {
        /// The length field received.
        len: u32,
    },
    /// The length field is larger than the bound.
    #[error(
        "BMP message header: length {len} exceeds the bound of {max} bytes; the session is closed (raise the bound only if the router really sends such messages)"
    )]
    TooLong {
        /// The length field received.
        len: u32,
        /// The bound in force.
        max: usize,
    },
    /// The stream ended inside a message.
    #[error(
        "the BMP session ended inside a message ({received} of {expected} bytes); the router closed the connection mid-message"
    )]
    CutShort {
        /// Bytes of the message received.
        received: usize,
        /// The message's length (0 when the header itself was cut).
        expected: usize,
    },
}

/// The most a partial message grows the read buffer by at a time.
const RESERVE_STEP: usize = 64 * 1024;

impl Decoder for BmpCodec {
    type Item = Bytes;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        if src.is_empty() {
            return Ok(None);
        }
        // The version is the first byte: check it before waiting for more,
        // so a stranger talking to the port fails on its first byte.
        if src[0] != VERSION {
            return Err(FrameError::Version { got: src[0] });
        }
        if src.len() < HEADER_SIZE {
            src.reserve(HEADER_SIZE - src.len());
            return Ok(None);
        }
        let len = u32::from_be_bytes([src[1], src[2], src[3], src[4]]);
        let size = usize::try_from(len).unwrap_or(usize::MAX);
        if size < HEADER_SIZE {
            return Err(FrameError::TooShort { len });
        }
        if size > self.max_len {
            return Err(FrameError::TooLong {
                len,
                max: self.max_len,
            });
        }
        if src.len() < size {
            // Grow with the bytes that arrive, never by what a length field
            // claims: a header announcing 1 MiB and nothing after it costs
            // one step, not the megabyte.
            src.reserve((size - src.len()).min(RESERVE_STEP));
            return Ok(None);
        }
        Ok(Some(src.split_to(size).freeze()))
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Bytes>, FrameError> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() => Ok(None),
            None => {
                let expected = if src.len() >= HEADER_SIZE {
                    u32::from_be_bytes([src[1], src[2], src[3], src[4]]) as usize
                } else {
                    0
                };
                Err(FrameError::CutShort {
                    received: src.len(),
                    expected,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_length_field_is_not_an_allocation() {
        // A header announcing the largest message, and 10 bytes of it.
        let mut src = BytesMut::new();
        src.extend_from_slice(&[VERSION]);
        src.extend_from_slice(&u32::try_from(MAX_MESSAGE).expect("fits").to_be_bytes());
        src.extend_from_slice(&[4; 11]);
        let mut c = BmpCodec::default();
        assert!(matches!(c.decode(&mut src), Ok(None)));
        assert!(
            src.capacity() <= 2 * RESERVE_STEP,
            "reserved {} bytes for 16 received",
            src.capacity()
        );
    }

    /// A message of `body` bytes after the header, of type 4 (Initiation).
    fn message(body: &[u8]) -> Vec<u8> {
        crate::bmp::build::common(4, body).to_vec()
    }

    #[test]
    fn every_split_point_yields_the_same_messages() {
        let a = message(b"first");
        let b = message(&[0u8; 40]);
        let c = message(b"");
        let stream: Vec<u8> = [a.clone(), b.clone(), c.clone()].concat();
        for cut in 0..=stream.len() {
            let mut codec = BmpCodec::default();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                buf.extend_from_slice(part);
                while let Some(f) = codec.decode(&mut buf).expect("valid stream") {
                    got.push(f.to_vec());
                }
            }
            assert_eq!(got, vec![a.clone(), b.clone(), c.clone()], "cut at {cut}");
            assert!(buf.is_empty(), "cut at {cut}: leftover bytes");
        }
    }

    #[test]
    fn byte_by_byte_yields_the_same_messages() {
        let a = message(b"one");
        let b = message(b"two two");
        let stream = [a.clone(), b.clone()].concat();
        let mut codec = BmpCodec::default();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for byte in stream {
            buf.extend_from_slice(&[byte]);
            while let Some(f) = codec.decode(&mut buf).expect("valid stream") {
                got.push(f.to_vec());
            }
        }
        assert_eq!(got, vec![a, b]);
    }

    #[test]
    fn a_bad_version_fails_on_the_first_byte() {
        let mut buf = BytesMut::from(&[1u8][..]);
        match BmpCodec::default().decode(&mut buf) {
            Err(FrameError::Version { got: 1 }) => {}
            other => panic!("expected a version error, got {other:?}"),
        }
    }

    #[test]
    fn a_length_shorter_than_the_header_is_refused() {
        let mut buf = BytesMut::from(&[3u8, 0, 0, 0, 5, 4][..]);
        match BmpCodec::default().decode(&mut buf) {
            Err(FrameError::TooShort { len: 5 }) => {}
            other => panic!("expected TooShort, got {other:?}"),
        }
    }

    #[test]
    fn a_length_over_the_bound_is_refused_before_buffering() {
        let mut codec = BmpCodec::new(100);
        let mut buf = BytesMut::from(&[3u8, 0, 0, 0, 101, 0][..]);
        match codec.decode(&mut buf) {
            Err(FrameError::TooLong { len: 101, max: 100 }) => {}
            other => panic!("expected TooLong, got {other:?}"),
        }
        let mut at_bound = BytesMut::from(&message(&[0u8; 94])[..]);
        assert_eq!(
            codec
                .decode(&mut at_bound)
                .expect("at the bound")
                .map(|f| f.len()),
            Some(100)
        );
        let mut max = BytesMut::from(&[3u8, 0xff, 0xff, 0xff, 0xff, 0][..]);
        assert!(matches!(
            BmpCodec::default().decode(&mut max),
            Err(FrameError::TooLong { .. })
        ));
    }

    #[test]
    fn eof_inside_a_message_says_how_far_it_got() {
        let m = message(b"abcdef");
        let mut buf = BytesMut::from(&m[..8]);
        match BmpCodec::default().decode_eof(&mut buf) {
            Err(FrameError::CutShort {
                received: 8,
                expected: 12,
            }) => {}
            other => panic!("expected CutShort, got {other:?}"),
        }
        let mut empty = BytesMut::new();
        assert!(matches!(
            BmpCodec::default().decode_eof(&mut empty),
            Ok(None)
        ));
    }
}
