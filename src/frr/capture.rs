//! What `tests/data/frr/` holds of the real daemons (its README says how it
//! was captured): the ZAPI frames of one zebra session and the raw vty
//! replies, per release. For the golden tests, the benches and the fakes
//! only (the `testing` feature, which the crate's own tests enable).
//!
//! The captures are part of the source tree: a missing or malformed one
//! panics, naming the file.

use std::path::{Path, PathBuf};

use bytes::BytesMut;
use tokio_util::codec::Decoder;

use super::vty::codec::{VtyCodec, VtyReply};

/// The releases captured, oldest first.
pub const RELEASES: [&str; 3] = ["8.4.4", "10.3", "10.7.1"];

/// The directory of one release's captures: `tests/data/frr/frr-RELEASE`.
pub fn dir(release: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/frr")
        .join(format!("frr-{release}"))
}

/// One frame zebra sent in the captured session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedFrame {
    /// The capture's step that made zebra send it (`dump`, `add_single_v4`...).
    pub step: String,
    /// Its command number, in the release's numbering.
    pub command: u16,
    /// The whole frame, header included, as read from `zserv.api`.
    pub bytes: Vec<u8>,
}

/// The frames of `release`'s captured session (`zapi-frames.txt`: a line
/// `step command hex` each), in capture order.
pub fn frames(release: &str) -> Vec<CapturedFrame> {
    let path = dir(release).join("zapi-frames.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let mut w = l.split_whitespace();
            let (Some(step), Some(command), Some(hex), None) =
                (w.next(), w.next(), w.next(), w.next())
            else {
                malformed(&path, l)
            };
            CapturedFrame {
                step: step.to_string(),
                command: command.parse().unwrap_or_else(|_| malformed(&path, l)),
                bytes: from_hex(hex).unwrap_or_else(|| malformed(&path, l)),
            }
        })
        .collect()
}

fn malformed(path: &Path, line: &str) -> ! {
    panic!("{}: not `step command hex`: {line}", path.display())
}

/// `hex` as bytes, two digits a byte.
fn from_hex(hex: &str) -> Option<Vec<u8>> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A captured vty reply as the daemon wrote it (`vty-NAME.bin`: the text
/// and its 4-byte trailer).
pub fn vty_raw(release: &str, name: &str) -> Vec<u8> {
    let path = dir(release).join(format!("vty-{name}.bin"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A captured vty reply, decoded; the file must hold exactly one reply.
pub fn vty_reply(release: &str, name: &str) -> VtyReply {
    let mut buf = BytesMut::from(&vty_raw(release, name)[..]);
    let reply = VtyCodec::default().decode(&mut buf);
    match reply {
        Ok(Some(r)) if buf.is_empty() => r,
        other => panic!(
            "{release} vty-{name}.bin: not one whole reply: {other:?}, {} bytes after it",
            buf.len()
        ),
    }
}
