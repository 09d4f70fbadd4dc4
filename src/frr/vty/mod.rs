//! The daemons' vty sockets: the wire codec, the client, typed JSON views.

pub mod client;
pub mod codec;
pub mod json;
pub mod scan;
