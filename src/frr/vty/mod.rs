//! The daemons' vty sockets: the wire codec, the client, typed JSON views;
//! for tests and fakes, a fake daemon's socket (`fake`).

pub mod client;
pub mod codec;
#[cfg(any(test, feature = "testing"))]
pub mod fake;
pub mod json;
pub mod scan;
