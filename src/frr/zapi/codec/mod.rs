//! ZAPI wire codec: the 10-byte frame header (a `tokio-util` codec), the
//! per-release numbering ([`Dialect`]), the messages a read-only client sends
//! (HELLO, REDISTRIBUTE_ADD/DELETE, ROUTER_ID_ADD) and the route bodies zebra
//! pushes (REDISTRIBUTE_ROUTE_ADD/DEL).
//!
//! Contract:
//! - Decoding never panics: a bad marker or version, a length below the
//!   header size, or a truncated body is a [`ZapiError`] value.
//! - Frames are length-delimited (u16, header included), so a frame of any
//!   command the client does not know is handed up whole and can be skipped.
//! - Everything that differs between FRR releases (command numbers, route
//!   type numbers, the nexthop weight width, the MPLS `label_type` byte, the
//!   HELLO body) is in [`Dialect`]; nothing here guesses a release.
//!   [`Numbering::ALL`] lists every numbering, [`Command::ALL`] every command
//!   this client knows: tests, fuzz targets and fakes iterate those lists.
//! - Nexthops carrying SEG6/SEG6LOCAL data have a release- and host-dependent
//!   layout: such a route is refused ([`ZapiError::Unsupported`]), never
//!   misparsed.
//!
//! Depends on nothing internal but [`crate::model`].
//!
//! Layout, in reading order:
//! - `error`: [`ZapiError`], what can go wrong on the wire;
//! - `frame`: the header constants, [`Frame`] and [`FrameCodec`];
//! - `numbering`: [`Numbering`], [`Dialect`] and [`Command`], the per-release
//!   command and route-type numbers;
//! - `body`: bounds-checked reads and the prefix encoding the bodies share;
//! - `request`: the client's messages ([`Hello`], [`Redistribute`],
//!   ROUTER_ID_ADD) and [`Family`];
//! - `route`: the redistributed route ([`ZapiRoute`], [`Nexthop`],
//!   [`Gateway`]) and its flag bits ([`message`], [`nh_flag`]).

mod body;
mod error;
mod frame;
mod numbering;
mod request;
mod route;

pub use error::ZapiError;
pub use frame::{Frame, FrameCodec, HEADER_SIZE, MARKER, MAX_CLIENT_FRAME, VERSION};
pub use numbering::{Command, Dialect, Numbering, ROUTE_SYSTEM};
pub use request::{Hello, Redistribute, afi_code, family_of_afi};
pub use route::{Gateway, Nexthop, ZapiRoute, message, nh_flag};

#[cfg(test)]
pub(crate) use route::sample_route;

#[cfg(test)]
mod tests {
    //! Properties of the codec as a whole: whatever zebra sends, nothing panics.
    use bytes::{Bytes, BytesMut};
    use proptest::prelude::*;
    use tokio_util::codec::Decoder;

    use super::*;

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..400), n in 0usize..Numbering::ALL.len()) {
            let mut buf = BytesMut::from(&raw[..]);
            while let Ok(Some(_)) = FrameCodec.decode(&mut buf) {}
            let d = Dialect::new(Numbering::ALL[n]);
            for c in [30u16, 31, 32] {
                let f = Frame { vrf_id: 0, command: c, body: Bytes::from(raw.clone()) };
                let _ = d.decode_route(&f);
                let _ = d.decode_hello(&f);
                let _ = d.decode_redistribute(&f);
            }
        }
    }
}
