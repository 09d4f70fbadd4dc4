//! What an event's handler leaves to the dispatch ([`Next`]): which VIPs
//! the event can change ([`Scope`]), and whether it may have changed what
//! bgpd sends.
//!
//! Contract: the handlers (one per event kind, in the file of their
//! concern) record what the event says and answer with a [`Next`], or
//! `None` when nothing changed; [`step`](fn@super::step) re-evaluates the
//! scope's VIPs and asks for a bgpd view when one is due.

use crate::model::{Prefix, TableId};

/// Which VIPs an event can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scope {
    /// One VIP.
    One(TableId, Prefix),
    /// The VIPs of one prefix, in every watched table.
    Prefix(Prefix),
    /// Every VIP.
    All,
    /// The VIPs whose deadline passed.
    Due,
}

/// What an event leaves to the dispatch: which VIPs to re-evaluate, and
/// whether it may have changed what bgpd sends (a bgpd view is then due).
/// `None` from a handler: nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Next {
    /// The VIPs to re-evaluate.
    pub(super) scope: Scope,
    /// What bgpd sends may have changed.
    pub(super) touched_bgp: bool,
}

impl Next {
    /// Every VIP, bgpd's view not asked for by the event itself.
    pub(super) fn all() -> Option<Next> {
        Next::only(Scope::All)
    }

    /// The VIPs of `scope`, bgpd's view not asked for by the event itself.
    pub(super) fn only(scope: Scope) -> Option<Next> {
        Some(Next {
            scope,
            touched_bgp: false,
        })
    }

    /// The VIPs of `scope`, and what bgpd sends may have changed.
    pub(super) fn touching(scope: Scope) -> Option<Next> {
        Some(Next {
            scope,
            touched_bgp: true,
        })
    }
}
