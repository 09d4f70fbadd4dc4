//! A recorded run replayed through the join it ran: the node's core
//! ([`State`], [`step`]) or the router's ([`RouterJoin`]), as the case's
//! `config.json` says (`"vantage": "router"` names the router's: its
//! `tables` and `vips`; anything else is the node core's [`Config`]).
//! `tests/reconcile_cases.rs` and the netns suites' recordings use it.

use super::event::{Action, Event};
use super::router::RouterJoin;
use super::state::State;
use super::step::step;
use super::vocab::{Config, Millis};
use crate::model::{Prefix, TableId};

/// The join a recording replays through.
#[derive(Debug)]
pub enum Replay {
    /// The node's core.
    Node(Box<State>),
    /// The router's reduced join.
    Router(RouterJoin),
}

/// The router's `config.json`.
#[derive(serde::Deserialize)]
struct RouterCase {
    tables: Vec<TableId>,
    vips: Vec<Prefix>,
}

impl Replay {
    /// The join a case's `config.json` names, at time 0.
    pub fn from_case(config: &serde_json::Value) -> Result<Replay, serde_json::Error> {
        if config.get("vantage").and_then(|v| v.as_str()) == Some("router") {
            let c: RouterCase = serde_json::from_value(config.clone())?;
            return Ok(Replay::Router(RouterJoin::new(c.tables, c.vips, 0)));
        }
        let c: Config = serde_json::from_value(config.clone())?;
        Ok(Replay::Node(Box::new(State::new(c, 0))))
    }

    /// One recorded event at `now`: the actions the join answered.
    pub fn step(&mut self, ev: Event, now: Millis) -> Vec<Action> {
        match self {
            Replay::Node(state) => step(state, ev, now),
            Replay::Router(join) => join.step(ev, now),
        }
    }
}
