//! ribbridge: bridges the Linux routing tables (rtnetlink) and FRR's control
//! plane (zebra's ZAPI socket, the vty sockets) for BGP-advertised VIPs.
//!
//! See `ARCHITECTURE.md` for the structure and the rules every module keeps.

#![deny(missing_docs)]

pub mod bmp;
pub mod cli;
mod clock;
pub mod cluster;
pub mod config;
pub mod daemon;
pub mod drain;
mod fault;
pub mod frr;
pub mod http;
pub mod kernel;
pub mod logging;
pub mod model;
pub mod privilege;
pub mod probe;
pub mod reconcile;
pub mod render;
pub mod status;
pub mod telemetry;
