//! zebra's API socket (ZAPI): the wire codec and the client task.

pub mod client;
pub mod codec;
