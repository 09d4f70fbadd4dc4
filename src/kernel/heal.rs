//! Kernel writes the daemon heals with: a realm-toggling replace (what
//! kube-vip does to re-assert a route), a delete then add, and a host
//! address on `lo`.
//!
//! Contract: only routes of the watched tables are ever written (anything
//! else is `KernelError::NotWatched`, before any syscall); each call sends
//! one request with `NLM_F_ACK` on its own blocking socket and returns once
//! the kernel answered (microseconds), with the kernel's errno as the error.
//! The socket lives in the network namespace of the thread that created the
//! writer.

use std::collections::BTreeSet;

use netlink_sys::{Socket, SocketAddr, protocols::NETLINK_ROUTE};

use super::types::{Address, Route};
use super::watcher::{KernelError, sock_err};
use super::wire::{
    Message, NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REPLACE, NLM_F_REQUEST, RTM_DELADDR,
    RTM_DELROUTE, RTM_NEWADDR, RTM_NEWROUTE, decode, encode_addr, encode_route, frames, message,
};
use crate::model::{Prefix, TableId};

/// How long one write waits for the kernel's acknowledgement.
pub const RECV_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Writes routes of the watched tables.
#[derive(Debug)]
pub struct KernelWriter {
    sock: Socket,
    tables: BTreeSet<TableId>,
    seq: u32,
}

impl KernelWriter {
    /// A writer for `tables`, in the current thread's network namespace.
    pub fn new(tables: impl IntoIterator<Item = TableId>) -> Result<KernelWriter, KernelError> {
        let mut sock = Socket::new(NETLINK_ROUTE).map_err(sock_err("socket(NETLINK_ROUTE)"))?;
        sock.bind_auto().map_err(sock_err("bind"))?;
        // A lost acknowledgement must not pin the thread: every receive
        // gives up after RECV_TIMEOUT (EAGAIN, reported as the write's
        // failure).
        let timeout = nix::sys::time::TimeVal::new(
            i64::try_from(RECV_TIMEOUT.as_secs()).unwrap_or(i64::MAX),
            0,
        );
        nix::sys::socket::setsockopt(&sock, nix::sys::socket::sockopt::ReceiveTimeout, &timeout)
            .map_err(std::io::Error::from)
            .map_err(sock_err("setsockopt(SO_RCVTIMEO)"))?;
        Ok(KernelWriter {
            sock,
            tables: tables.into_iter().collect(),
            seq: 0,
        })
    }

    /// Re-assert `route` the way kube-vip does: replace it with the realm
    /// flipped (1 <-> 2), so the kernel emits an event and zebra sees the
    /// route again. IPv6 has no realms (the kernel accepts and drops
    /// `RTA_FLOW`) but announces every replace, so an IPv6 route is replaced
    /// as it is. Returns the route as the kernel now holds it.
    pub fn replace_toggling_realm(&mut self, route: &Route) -> Result<Route, KernelError> {
        self.check(route)?;
        let mut r = route.clone();
        if route.prefix.is_ipv4() {
            r.realm = Some(if route.realm == Some(1) { 2 } else { 1 });
        }
        self.route_request(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, &r, "replace")?;
        Ok(r)
    }

    /// Delete `route` and add it again (two events: a removal then an
    /// addition). A route already gone is not an error for the delete.
    pub fn delete_then_add(&mut self, route: &Route) -> Result<(), KernelError> {
        self.check(route)?;
        match self.route_request(RTM_DELROUTE, 0, route, "delete") {
            Err(KernelError::Refused { errno, .. }) if errno == nix::libc::ESRCH => {}
            other => other?,
        }
        // If this fails the route stays deleted: the error says so.
        self.route_request(
            RTM_NEWROUTE,
            NLM_F_CREATE | NLM_F_EXCL,
            route,
            "re-add (after the delete succeeded: the route is now absent)",
        )
    }

    /// Add `prefix` (a host prefix) as an address of `lo`.
    pub fn add_address_on_lo(&mut self, prefix: Prefix) -> Result<(), KernelError> {
        let a = lo_address(prefix)?;
        self.request(
            RTM_NEWADDR,
            NLM_F_CREATE | NLM_F_EXCL,
            &encode_addr(&a),
            || format!("adding address {prefix} on lo"),
        )
    }

    /// Remove `prefix` from `lo`.
    pub fn remove_address_on_lo(&mut self, prefix: Prefix) -> Result<(), KernelError> {
        let a = lo_address(prefix)?;
        self.request(RTM_DELADDR, 0, &encode_addr(&a), || {
            format!("removing address {prefix} from lo")
        })
    }

    fn check(&self, r: &Route) -> Result<(), KernelError> {
        if self.tables.contains(&r.table) {
            Ok(())
        } else {
            Err(KernelError::NotWatched { table: r.table })
        }
    }

    fn route_request(
        &mut self,
        ty: u16,
        flags: u16,
        r: &Route,
        verb: &str,
    ) -> Result<(), KernelError> {
        self.request(ty, flags, &encode_route(r), || {
            format!(
                "{verb} of route {} table {} proto {}",
                r.prefix, r.table, r.protocol
            )
        })
    }

    fn request(
        &mut self,
        ty: u16,
        flags: u16,
        payload: &[u8],
        what: impl Fn() -> String,
    ) -> Result<(), KernelError> {
        self.seq = self.seq.wrapping_add(1);
        let mut msg = message(ty, NLM_F_REQUEST | NLM_F_ACK | flags, payload);
        msg[8..12].copy_from_slice(&self.seq.to_ne_bytes());
        self.sock
            .send_to(&msg, &SocketAddr::new(0, 0), 0)
            .map_err(sock_err("send request"))?;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let mut b = &mut buf[..];
            let n = self.sock.recv(&mut b, 0).map_err(sock_err("recv answer"))?;
            for f in frames(&buf[..n.min(buf.len())]) {
                let Ok(f) = f else { continue };
                if f.seq != self.seq {
                    continue;
                }
                if let Ok(Message::Error(code)) = decode(&f) {
                    return if code == 0 {
                        Ok(())
                    } else {
                        Err(KernelError::Refused {
                            what: what(),
                            errno: -code,
                        })
                    };
                }
            }
        }
    }
}

fn lo_address(prefix: Prefix) -> Result<Address, KernelError> {
    let ifindex = nix::net::if_::if_nametoindex("lo").map_err(|e| KernelError::Socket {
        step: "find the index of lo",
        source: e.into(),
    })?;
    Ok(Address {
        ifindex,
        prefix: Prefix::host(prefix.addr()),
        len: prefix.prefix_len(),
        usable: true,
    })
}
