//! The vty unix-socket protocol as a `tokio-util` codec.
//!
//! Request: the command text and one NUL. Reply: the output text, then
//! `00 00 00 <status>`. The text never contains NUL, so the first NUL starts
//! the 4-byte trailer; the trailer may arrive split across reads.
//!
//! Contract: decoding never panics; a trailer whose second or third byte is
//! not NUL, or a reply larger than [`MAX_REPLY`], is a [`VtyError`] value.
//! Commands containing NUL or newlines, or reaching the daemon's 4096-byte
//! line limit (where it answers with no trailer at all), are refused before
//! they are sent. A reply can instead stream into a [`KeyScan`]
//! ([`VtyCodec::stream_into`]): its text is fed as it arrives and dropped,
//! so a table of any size costs one socket read of buffer (no
//! [`MAX_REPLY`] then: the client's timeout bounds it). Depends on the
//! sibling `scan` module (and through it `model`) only.

use bytes::{Buf, BufMut, BytesMut};
use serde::{Deserialize, Serialize};
use tokio_util::codec::{Decoder, Encoder};

use super::scan::KeyScan;

/// The daemon's line buffer (`VTY_BUFSIZ`): a command must be shorter.
pub const MAX_COMMAND: usize = 4095;
/// The largest reply accepted (a full BGP table in JSON stays far below).
pub const MAX_REPLY: usize = 256 * 1024 * 1024;

/// A vty status code (lib/command.h, identical in 8.4 and 10.x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum VtyStatus {
    /// CMD_SUCCESS (0).
    Success,
    /// CMD_WARNING (1).
    Warning,
    /// CMD_ERR_NO_MATCH (2): unknown command.
    NoMatch,
    /// CMD_ERR_AMBIGUOUS (3).
    Ambiguous,
    /// CMD_ERR_INCOMPLETE (4).
    Incomplete,
    /// CMD_ERR_EXEED_ARGC_MAX (5).
    ExceedArgcMax,
    /// CMD_ERR_NOTHING_TODO (6).
    NothingTodo,
    /// CMD_SUCCESS_DAEMON (10).
    SuccessDaemon,
    /// CMD_ERR_NO_FILE (11).
    NoFile,
    /// CMD_SUSPEND (12).
    Suspend,
    /// CMD_WARNING_CONFIG_FAILED (13).
    WarningConfigFailed,
    /// CMD_NOT_MY_INSTANCE (14).
    NotMyInstance,
    /// CMD_NO_LEVEL_UP (15).
    NoLevelUp,
    /// CMD_ERR_NO_DAEMON (16).
    NoDaemon,
    /// Any other code (completion codes 7-9, or codes newer than this client).
    Other(u8),
}

impl VtyStatus {
    /// From the trailer byte.
    pub fn from_code(c: u8) -> VtyStatus {
        use VtyStatus::*;
        match c {
            0 => Success,
            1 => Warning,
            2 => NoMatch,
            3 => Ambiguous,
            4 => Incomplete,
            5 => ExceedArgcMax,
            6 => NothingTodo,
            10 => SuccessDaemon,
            11 => NoFile,
            12 => Suspend,
            13 => WarningConfigFailed,
            14 => NotMyInstance,
            15 => NoLevelUp,
            16 => NoDaemon,
            c => Other(c),
        }
    }

    /// The trailer byte.
    pub fn code(self) -> u8 {
        use VtyStatus::*;
        match self {
            Success => 0,
            Warning => 1,
            NoMatch => 2,
            Ambiguous => 3,
            Incomplete => 4,
            ExceedArgcMax => 5,
            NothingTodo => 6,
            SuccessDaemon => 10,
            NoFile => 11,
            Suspend => 12,
            WarningConfigFailed => 13,
            NotMyInstance => 14,
            NoLevelUp => 15,
            NoDaemon => 16,
            Other(c) => c,
        }
    }

    /// True for CMD_SUCCESS and CMD_SUCCESS_DAEMON.
    pub fn is_success(self) -> bool {
        matches!(self, VtyStatus::Success | VtyStatus::SuccessDaemon)
    }
}

/// One reply: the text and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VtyReply {
    /// The status of the command.
    pub status: VtyStatus,
    /// The output text (lossily UTF-8).
    pub text: String,
}

/// Errors of the vty codec and client.
#[derive(Debug, thiserror::Error)]
pub enum VtyError {
    /// The command cannot be sent (NUL, newline, too long).
    #[error(
        "vty command '{0}' cannot be sent: no NUL or newline, shorter than {MAX_COMMAND} bytes"
    )]
    BadCommand(String),
    /// The command is not on the client's allowlist.
    #[error(
        "vty command '{0}' is not on ribbridge's configuration allowlist; refused without sending"
    )]
    NotAllowed(String),
    /// The trailer was not `00 00 00 <status>`.
    #[error(
        "vty reply trailer is {0:02x?} + status, expected 00 00 00 + status: the stream is out of sync"
    )]
    BadTrailer([u8; 3]),
    /// The reply exceeded [`MAX_REPLY`].
    #[error("vty reply exceeds {0} bytes; refused")]
    TooLarge(usize),
    /// The socket failed: `what` says where (connect PATH, read, write),
    /// with what to check.
    #[error("vty socket: {what}: {source}")]
    Io {
        /// The step and the socket.
        what: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// The daemon closed the connection, or the exchange broke off.
    #[error("vty socket: {0}")]
    Closed(String),
    /// No reply within the timeout.
    #[error("vty command '{command}': no reply within {ms} ms")]
    Timeout {
        /// The command.
        command: String,
        /// The timeout in milliseconds.
        ms: u64,
    },
    /// The daemon answered with a failure status.
    #[error("vty command '{command}' failed with {status:?}: {}", text.trim())]
    Failed {
        /// The command.
        command: String,
        /// Its status.
        status: VtyStatus,
        /// The daemon's text.
        text: String,
    },
    /// The JSON reply did not have the expected shape.
    #[error("vty command '{command}': unexpected JSON: {error}")]
    Json {
        /// The command.
        command: String,
        /// Why it could not be read.
        #[source]
        error: super::json::JsonError,
    },
    /// `show version` does not name a supported FRR release.
    #[error(transparent)]
    Release(crate::frr::release::ReleaseError),
}

impl From<std::io::Error> for VtyError {
    fn from(source: std::io::Error) -> VtyError {
        VtyError::Io {
            what: "read or write".to_string(),
            source,
        }
    }
}

/// Checks that a command can travel on the socket.
pub fn check_command(cmd: &str) -> Result<(), VtyError> {
    if cmd.len() >= MAX_COMMAND || cmd.contains(['\0', '\n', '\r']) {
        return Err(VtyError::BadCommand(cmd.chars().take(80).collect()));
    }
    Ok(())
}

/// How much of a streamed reply's text is kept (for a failure's message).
pub const STREAMED_HEAD: usize = 512;

/// The vty codec: encodes commands, decodes replies.
#[derive(Debug, Default)]
pub struct VtyCodec {
    /// How far the buffer was already searched for a NUL.
    scanned: usize,
    /// The next reply's text goes here as it arrives (see
    /// [`VtyCodec::stream_into`]).
    scan: Option<KeyScan>,
    /// The first [`STREAMED_HEAD`] bytes of a streamed reply.
    head: Vec<u8>,
}

impl VtyCodec {
    /// Streams the next reply into `scan` as its bytes arrive instead of
    /// holding it: the reply decoded is then only its first
    /// [`STREAMED_HEAD`] bytes (enough for a failure's message), and the
    /// read buffer stays at the size of one socket read. Take the scan back
    /// with [`VtyCodec::take_scan`] once the reply is decoded.
    pub fn stream_into(&mut self, scan: KeyScan) {
        self.scan = Some(scan);
        self.head.clear();
    }

    /// The scan given to [`VtyCodec::stream_into`], fed with the reply.
    pub fn take_scan(&mut self) -> Option<KeyScan> {
        self.scan.take()
    }

    fn decode_streamed(&mut self, src: &mut BytesMut) -> Result<Option<VtyReply>, VtyError> {
        let Some(scan) = self.scan.as_mut() else {
            return Ok(None);
        };
        let nul = src.iter().position(|b| *b == 0);
        let text = nul.unwrap_or(src.len());
        scan.feed(&src[..text]);
        let room = STREAMED_HEAD.saturating_sub(self.head.len()).min(text);
        self.head.extend_from_slice(&src[..room]);
        // The text fed is dropped: the buffer never holds more than what
        // one read brought (plus a split trailer).
        src.advance(text);
        if nul.is_none() || src.len() < 4 {
            return Ok(None);
        }
        let t = [src[0], src[1], src[2]];
        if t != [0, 0, 0] {
            return Err(VtyError::BadTrailer(t));
        }
        let status = VtyStatus::from_code(src[3]);
        src.advance(4);
        let head = std::mem::take(&mut self.head);
        let text = String::from_utf8(head)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Ok(Some(VtyReply { status, text }))
    }
}

impl Decoder for VtyCodec {
    type Item = VtyReply;
    type Error = VtyError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<VtyReply>, VtyError> {
        if self.scan.is_some() {
            return self.decode_streamed(src);
        }
        let start = self.scanned.min(src.len());
        let Some(pos) = src[start..].iter().position(|b| *b == 0).map(|p| p + start) else {
            self.scanned = src.len();
            if src.len() > MAX_REPLY {
                return Err(VtyError::TooLarge(MAX_REPLY));
            }
            return Ok(None);
        };
        self.scanned = pos;
        if src.len() < pos + 4 {
            return Ok(None);
        }
        let t = [src[pos], src[pos + 1], src[pos + 2]];
        if t != [0, 0, 0] {
            return Err(VtyError::BadTrailer(t));
        }
        let status = VtyStatus::from_code(src[pos + 3]);
        self.scanned = 0;
        // A reply is normally all the buffer holds (one command, one
        // answer): take the buffer itself as the text's storage instead of
        // copying it (a table of 100 000 routes is ~55 MB of JSON, and a
        // copy doubled the peak).
        let mut bytes = if src.len() == pos + 4 {
            Vec::from(std::mem::take(src))
        } else {
            src.split_to(pos + 4).to_vec()
        };
        bytes.truncate(pos);
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Ok(Some(VtyReply { status, text }))
    }
}

impl Encoder<&str> for VtyCodec {
    type Error = VtyError;

    fn encode(&mut self, cmd: &str, dst: &mut BytesMut) -> Result<(), VtyError> {
        check_command(cmd)?;
        dst.reserve(cmd.len() + 1);
        dst.put_slice(cmd.as_bytes());
        dst.put_u8(0);
        Ok(())
    }
}

/// Encodes a reply as a daemon would: for tests and fake daemons only
/// (the `testing` feature, which the crate's own tests enable).
#[cfg(any(test, feature = "testing"))]
pub fn encode_reply(reply: &VtyReply, dst: &mut BytesMut) -> Result<(), VtyError> {
    if reply.text.contains('\0') {
        return Err(VtyError::BadCommand("reply text with NUL".into()));
    }
    dst.put_slice(reply.text.as_bytes());
    dst.put_slice(&[0, 0, 0, reply.status.code()]);
    Ok(())
}

/// Decodes a command the way a daemon reads it (for tests and fakes).
pub fn decode_command(src: &mut BytesMut) -> Option<String> {
    let pos = src.iter().position(|b| *b == 0)?;
    let c = src.split_to(pos + 1);
    Some(String::from_utf8_lossy(&c[..pos]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_split_trailer_waits_and_a_bad_one_is_an_error() {
        let mut c = VtyCodec::default();
        let mut b = BytesMut::from(&b"hello\0\0"[..]);
        assert!(matches!(c.decode(&mut b), Ok(None)));
        b.extend_from_slice(&[0, 2]);
        let r = c.decode(&mut b).unwrap().unwrap();
        assert_eq!((r.status, r.text.as_str()), (VtyStatus::NoMatch, "hello"));
        let mut b = BytesMut::from(&b"x\0\x01\0\0"[..]);
        assert!(matches!(c.decode(&mut b), Err(VtyError::BadTrailer(_))));
    }

    #[test]
    fn a_whole_buffer_reply_takes_the_buffer_and_bad_utf8_is_replaced() {
        let mut c = VtyCodec::default();
        let mut b = BytesMut::with_capacity(1 << 20);
        b.extend_from_slice(b"caf\xe9\0\0\0\0");
        let r = c.decode(&mut b).unwrap().unwrap();
        assert_eq!(r.text, "caf\u{fffd}");
        // The reply took the buffer: nothing of the large one is kept.
        assert_eq!((b.len(), b.capacity()), (0, 0));
        // A reply followed by the start of the next keeps the rest.
        let mut b = BytesMut::from(&b"one\0\0\0\0tw"[..]);
        let r = c.decode(&mut b).unwrap().unwrap();
        assert_eq!((r.text.as_str(), &b[..]), ("one", &b"tw"[..]));
    }

    #[test]
    fn a_streamed_reply_keeps_its_head_only_and_a_bad_trailer_is_an_error() {
        use crate::frr::vty::scan::{KeyScan, KeysOf};
        let text = format!("% Unknown command: {}", "x".repeat(2000));
        let mut c = VtyCodec::default();
        c.stream_into(KeyScan::new(KeysOf::TopLevel));
        let mut b = BytesMut::from(text.as_bytes());
        assert_eq!(c.decode(&mut b).unwrap(), None);
        assert!(b.is_empty(), "the fed text is dropped");
        b.extend_from_slice(&[0, 0]);
        assert_eq!(c.decode(&mut b).unwrap(), None);
        b.extend_from_slice(&[0, 2]);
        let r = c.decode(&mut b).unwrap().unwrap();
        assert_eq!(r.status, VtyStatus::NoMatch);
        assert_eq!(r.text, text[..STREAMED_HEAD]);
        assert!(c.take_scan().unwrap().finish().is_err());
        let mut c = VtyCodec::default();
        c.stream_into(KeyScan::new(KeysOf::TopLevel));
        let mut b = BytesMut::from(&b"{}\0\x01\0\0"[..]);
        assert!(matches!(
            c.decode(&mut b),
            Err(VtyError::BadTrailer([0, 1, 0]))
        ));
    }

    #[test]
    fn commands_that_cannot_travel_are_refused() {
        let mut b = BytesMut::new();
        for bad in ["a\0b", "a\nb", &"x".repeat(MAX_COMMAND)] {
            assert!(VtyCodec::default().encode(bad, &mut b).is_err());
        }
        VtyCodec::default().encode("show version", &mut b).unwrap();
        assert_eq!(&b[..], b"show version\0");
        assert_eq!(decode_command(&mut b).as_deref(), Some("show version"));
    }

    proptest! {
        #[test]
        fn replies_round_trip_in_any_chunks(
            replies in proptest::collection::vec(("[^\u{0}]{0,200}", any::<u8>()), 1..5),
            chunk in 1usize..50,
        ) {
            let mut raw = BytesMut::new();
            let want: Vec<VtyReply> = replies
                .iter()
                .map(|(t, s)| VtyReply { status: VtyStatus::from_code(*s), text: t.clone() })
                .collect();
            for r in &want { encode_reply(r, &mut raw).unwrap(); }
            let mut c = VtyCodec::default();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for piece in raw.chunks(chunk) {
                buf.extend_from_slice(piece);
                while let Some(r) = c.decode(&mut buf).unwrap() { got.push(r); }
            }
            prop_assert_eq!(got, want);
        }

        #[test]
        fn status_codes_round_trip(code in any::<u8>()) {
            prop_assert_eq!(VtyStatus::from_code(code).code(), code);
        }

        #[test]
        fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..400)) {
            let mut c = VtyCodec::default();
            let mut buf = BytesMut::from(&raw[..]);
            while let Ok(Some(_)) = c.decode(&mut buf) {}
        }
    }
}
