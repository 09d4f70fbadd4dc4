//! The BMP station's wire code and pure view (RFC 7854 BMP, RFC 9069 Loc-RIB).
//!
//! Contract: depends on `model` only. [`codec::BmpCodec`] cuts the TCP
//! stream a router sends into whole messages, bounded (1 MiB by default) and
//! version 3 only; [`message::Decoder`] turns each into a [`message::Message`]
//! through `bgpkit-parser` for the BMP layer and [`update::decode`] (ours)
//! for the BGP UPDATE of Route Monitoring: IPv4 and IPv6 unicast decoded,
//! every other AFI/SAFI skipped and counted, RFC 7606 error handling
//! (never panicking: a malformed message is a [`message::DecodeError`]
//! that ends the session); [`view::View`] is the
//! pure state: per router, per configured VIP, the paths the router holds,
//! unknown until the router's initial dump is complete and again once its
//! session is gone; [`station::Station`] holds the view with the sessions
//! and routers and says what it decided. `daemon::bmp` owns the sockets,
//! the clock, the metrics and the log; nothing here does I/O.
//!
//! Use per session: `FramedRead::new(socket, BmpCodec::default())`, a fresh
//! `Decoder::new()`, `view.session_up(router)`, then for every frame
//! `view.apply_at(router, &decoder.decode(frame)?, now)`; on close or error
//! `view.session_down(router)`; `view.expire(now)` at
//! `view.next_deadline()` takes the peers that never sent their End-of-RIB
//! as dumped and ends the stale paths (graceful restart) whose time passed (the view has no clock of its own). The router is the address
//! its session comes from. `Decoder` is per session because add-path use
//! and each peer's families are learnt from its Peer Up; the free `decode`
//! is a decoder that has seen none.
//!
//! What FRR sends, release by release, and why the view's synced rule is
//! what it is: docs/BMP.md.

#[cfg(any(test, feature = "testing"))]
pub mod build;
pub mod codec;
pub mod message;
pub mod station;
pub mod update;
pub mod view;

pub use codec::{BmpCodec, FrameError, MAX_MESSAGE};
pub use message::{
    DecodeError, Decoder, GracefulRestart, Message, Notification, PeerKey, Rib, decode,
};
pub use station::{BmpInput, Bounds, Note, Output, SessionId, Station};
pub use update::{Anomaly, EndOfRib, Path, Skipped, UpdateError};
pub use view::{Counters, Expired, Limits, PathDetail, RouterState, View};
