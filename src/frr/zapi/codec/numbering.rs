//! The per-release numbering: which wire number each command and route type
//! has in each FRR release, and the few body layout switches that go with it.
//!
//! The header carries no release number (every release since 6.0 says
//! version 6), so the caller picks the [`Numbering`] from zebra's
//! `show version` and hands the codec a [`Dialect`]. The numbers come from
//! FRR's `lib/zclient.h` (`zebra_message_types_t`) and `lib/route_types.txt`
//! at each release tag; docs/ZAPI.md has the table and the tests that
//! confirm it against captured sessions.

use serde::{Deserialize, Serialize};

/// Which ZAPI numbering table a release uses.
///
/// A new table starts where FRR inserted or removed a command or route type
/// below one this client uses; point releases never changed a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Numbering {
    /// FRR 8.2 to 8.4.
    V8_2,
    /// FRR 9.0.
    V9_0,
    /// FRR 9.1.
    V9_1,
    /// FRR 10.0 and 10.1.
    V10_0,
    /// FRR 10.2.
    V10_2,
    /// FRR 10.3 and later.
    V10_3,
}

impl Numbering {
    /// Every numbering table, oldest first: the one list tests, fuzz targets
    /// and fake peers iterate.
    pub const ALL: [Numbering; 6] = [
        Numbering::V8_2,
        Numbering::V9_0,
        Numbering::V9_1,
        Numbering::V10_0,
        Numbering::V10_2,
        Numbering::V10_3,
    ];

    /// The first FRR release (major, minor) that uses this table.
    pub const fn first_release(self) -> (u32, u32) {
        match self {
            Numbering::V8_2 => (8, 2),
            Numbering::V9_0 => (9, 0),
            Numbering::V9_1 => (9, 1),
            Numbering::V10_0 => (10, 0),
            Numbering::V10_2 => (10, 2),
            Numbering::V10_3 => (10, 3),
        }
    }
}

/// Everything about the ZAPI wire that depends on the FRR release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dialect {
    /// The command numbering table.
    pub numbering: Numbering,
    /// Nexthop weight is a u64 on the wire (FRR 10.1 and later), else a u32.
    pub weight_u64: bool,
}

/// The commands this client uses, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Command {
    /// ZEBRA_HELLO (client to zebra).
    Hello,
    /// ZEBRA_CAPABILITIES (zebra's answer to HELLO).
    Capabilities,
    /// ZEBRA_REDISTRIBUTE_ADD (subscribe).
    RedistributeAdd,
    /// ZEBRA_REDISTRIBUTE_DELETE (unsubscribe).
    RedistributeDelete,
    /// ZEBRA_REDISTRIBUTE_ROUTE_ADD (zebra to client, an upsert).
    RedistributeRouteAdd,
    /// ZEBRA_REDISTRIBUTE_ROUTE_DEL (zebra to client).
    RedistributeRouteDel,
    /// ZEBRA_ROUTER_ID_ADD (asks for the router id; zebra answers at once).
    RouterIdAdd,
    /// ZEBRA_ROUTER_ID_DELETE.
    RouterIdDelete,
    /// ZEBRA_ROUTER_ID_UPDATE (zebra's answer to ROUTER_ID_ADD).
    RouterIdUpdate,
    /// ZEBRA_VRF_ADD (unsolicited).
    VrfAdd,
    /// ZEBRA_ERROR.
    Error,
}

impl Command {
    /// Every command this client knows, for reverse lookups and tests.
    pub const ALL: [Command; 11] = [
        Command::Hello,
        Command::Capabilities,
        Command::RedistributeAdd,
        Command::RedistributeDelete,
        Command::RedistributeRouteAdd,
        Command::RedistributeRouteDel,
        Command::RouterIdAdd,
        Command::RouterIdDelete,
        Command::RouterIdUpdate,
        Command::VrfAdd,
        Command::Error,
    ];
}

/// Route type ZEBRA_ROUTE_SYSTEM: what a read-only client says HELLO as.
pub const ROUTE_SYSTEM: u8 = 0;

impl Dialect {
    /// The dialect of a numbering table, with the weight width of its first
    /// release; use [`Dialect::with_weight_u64`] for 10.1.
    pub const fn new(numbering: Numbering) -> Dialect {
        Dialect {
            numbering,
            weight_u64: matches!(numbering, Numbering::V10_2 | Numbering::V10_3),
        }
    }

    /// The same dialect with the given nexthop weight width.
    pub const fn with_weight_u64(self, weight_u64: bool) -> Dialect {
        Dialect {
            numbering: self.numbering,
            weight_u64,
        }
    }

    /// 10.0 inserted ZEBRA_INTERFACE_SET_ARP and ZEBRA_ROUTE_LOCAL: most
    /// numbers below split on this alone.
    fn is_10(self) -> bool {
        matches!(
            self.numbering,
            Numbering::V10_0 | Numbering::V10_2 | Numbering::V10_3
        )
    }

    /// The wire number of a command.
    pub fn command(self, c: Command) -> u16 {
        // Below ZEBRA_INTERFACE_SET_ARP (inserted at 7 in 10.0) nothing moved;
        // every command this client uses is above it.
        let shift = u16::from(self.is_10());
        match c {
            Command::Hello => 18 + shift,
            Command::Capabilities => 19 + shift,
            Command::RedistributeAdd => 11 + shift,
            Command::RedistributeDelete => 12 + shift,
            Command::RedistributeRouteAdd => 30 + shift,
            Command::RedistributeRouteDel => 31 + shift,
            Command::RouterIdAdd => 15 + shift,
            Command::RouterIdDelete => 16 + shift,
            Command::RouterIdUpdate => 17 + shift,
            // 10.2 removed ZEBRA_VRF_UNREGISTER, undoing 10.0's shift here.
            Command::VrfAdd => match self.numbering {
                Numbering::V10_0 => 34,
                _ => 33,
            },
            // 9.1 removed a command below it, 10.0 inserted one, 10.2
            // inserted three SRv6 commands before it.
            Command::Error => match self.numbering {
                Numbering::V8_2 | Numbering::V9_0 | Numbering::V10_0 => 118,
                Numbering::V9_1 => 117,
                Numbering::V10_2 | Numbering::V10_3 => 120,
            },
        }
    }

    /// The command a wire number stands for, if this client knows it.
    pub fn command_of(self, n: u16) -> Option<Command> {
        Command::ALL.into_iter().find(|c| self.command(*c) == n)
    }

    /// ZEBRA_ROUTE_TABLE (what `ip import-table N` creates).
    pub fn route_table(self) -> u8 {
        if self.is_10() { 16 } else { 15 }
    }

    /// ZEBRA_ROUTE_TABLE_DIRECT (10.0 and later only).
    pub fn route_table_direct(self) -> Option<u8> {
        self.is_10().then_some(31)
    }

    /// ZEBRA_ROUTE_MAX: route types must be below it.
    pub fn route_max(self) -> u8 {
        if self.is_10() { 33 } else { 31 }
    }

    /// Whether nexthop MPLS labels carry a `label_type` byte (9.0 and later).
    pub fn label_type(self) -> bool {
        !matches!(self.numbering, Numbering::V8_2)
    }

    /// Whether HELLO still has the `receive_notify` byte (before 10.0).
    pub fn hello_has_notify(self) -> bool {
        !self.is_10()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_tables_match_the_reference() {
        let c = |n, cmd| Dialect::new(n).command(cmd);
        assert_eq!(c(Numbering::V8_2, Command::RedistributeRouteAdd), 30);
        assert_eq!(c(Numbering::V10_0, Command::RedistributeRouteAdd), 31);
        assert_eq!(c(Numbering::V10_0, Command::VrfAdd), 34);
        assert_eq!(c(Numbering::V10_2, Command::VrfAdd), 33);
        assert_eq!(c(Numbering::V9_1, Command::Error), 117);
        assert_eq!(c(Numbering::V10_3, Command::Error), 120);
        assert_eq!(c(Numbering::V10_3, Command::Capabilities), 20);
        assert_eq!(c(Numbering::V8_2, Command::RouterIdUpdate), 17);
        assert_eq!(c(Numbering::V10_3, Command::RouterIdUpdate), 18);
    }

    #[test]
    fn every_numbering_maps_each_known_command_to_its_own_number() {
        for n in Numbering::ALL {
            let d = Dialect::new(n);
            for c in Command::ALL {
                assert_eq!(d.command_of(d.command(c)), Some(c), "{n:?} {c:?}");
            }
        }
        // Oldest first, each table once.
        assert!(
            Numbering::ALL
                .windows(2)
                .all(|w| w[0].first_release() < w[1].first_release())
        );
    }
}
