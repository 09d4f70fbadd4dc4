//! What can go wrong on the ZAPI wire. Every decoding failure is one of these
//! values, never a panic: the input comes from another process.

use super::frame::MAX_CLIENT_FRAME;

/// Why a frame or a body could not be decoded or encoded.
///
/// The messages name the command number where there is one, so a log line
/// points at the frame; the client turns them into a reconnect or an
/// `Undecodable` event, never into a crash.
#[derive(Debug, thiserror::Error)]
pub enum ZapiError {
    /// The header marker is not 0xFE: not a FRR zserv peer, or a desynchronised stream.
    #[error(
        "ZAPI header marker is {0:#04x}, expected 0xfe: the peer is not FRR's zebra (or the stream lost sync)"
    )]
    BadMarker(u8),
    /// The header version is not 6.
    #[error(
        "ZAPI header version is {0}, expected 6: this zebra speaks a ZAPI this client does not support"
    )]
    BadVersion(u8),
    /// The header length is below the header size.
    #[error("ZAPI header length {0} is below the 10-byte header: the stream lost sync")]
    BadLength(u16),
    /// A body ended before a field: which field, and the command.
    #[error("ZAPI command {command}: body ends before field '{field}'")]
    Truncated {
        /// The command number of the frame.
        command: u16,
        /// The field being read.
        field: &'static str,
    },
    /// A value is out of its range (e.g. prefix length 40 for IPv4).
    #[error("ZAPI command {command}: {what}")]
    Invalid {
        /// The command number of the frame.
        command: u16,
        /// What was wrong.
        what: String,
    },
    /// The body uses a feature whose layout this client does not decode.
    #[error(
        "ZAPI command {command}: carries {what}, whose layout this client does not decode; the route is ignored"
    )]
    Unsupported {
        /// The command number of the frame.
        command: u16,
        /// The feature.
        what: &'static str,
    },
    /// An encoded frame would exceed what zebra accepts.
    #[error("a {0}-byte ZAPI frame exceeds the {MAX_CLIENT_FRAME} bytes zebra accepts")]
    TooLarge(usize),
    /// The peer closed the stream inside a frame.
    #[error(
        "zebra closed the connection in the middle of a frame ({received} bytes{} received)",
        of_announced(*.announced)
    )]
    CutShort {
        /// The bytes of the unfinished frame that arrived.
        received: usize,
        /// The frame length its header announced, when the length arrived.
        announced: Option<u16>,
    },
    /// The socket failed.
    #[error("ZAPI socket: {0}")]
    Io(#[from] std::io::Error),
}

/// " of N" when the header's length arrived, else nothing.
fn of_announced(announced: Option<u16>) -> String {
    announced.map(|n| format!(" of {n}")).unwrap_or_default()
}
