//! The pure core's cases as data: every directory under
//! `tests/data/reconcile/` is one run of `ribbridge run --record` on the
//! lab's real kernel and FRR, replayed here through `reconcile::step`
//! without root, FRR or a clock.
//!
//! A case holds `config.json` (the `reconcile::Config` the daemon ran with),
//! `events.jsonl` (its `(now, event)` lines exactly as `--record` wrote
//! them), `case.json` (where it was recorded and the state changes the
//! daemon logged there) and `expected.json` (the actions of every step that
//! returned any, by line of `events.jsonl`, and each VIP's final state).
//!
//! Three checks per case: the replay returns exactly the expected actions
//! and final states; its state changes are the ones the daemon logged in
//! the lab; and its heal actions, drain re-applies and withdrawals are the ones the
//! daemon executed (the recording's `heal_done`, `drain_reapplied` and `withdrew`
//! events). The last two are ground truth from the
//! lab, which blessing does not rewrite.
//!
//! `RIBBRIDGE_BLESS=1 cargo test --test reconcile_cases` rewrites every
//! `expected.json` from the replay; `scripts/record-cases.sh` records the
//! cases again from the netns tests.

#![allow(clippy::unwrap_used)] // a test file: a failed unwrap is a failed test

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ribbridge::model::Mode;
use ribbridge::model::{Prefix, TableId};
use ribbridge::reconcile::{self, Action, Class, Event, HealAction, Millis};
use serde::{Deserialize, Serialize};

/// What a case must replay to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Expected {
    /// Every step that returned actions, in order.
    steps: Vec<StepActions>,
    /// Every VIP of the final state.
    vips: Vec<VipSummary>,
}

/// The actions of one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StepActions {
    /// Line of `events.jsonl`, from 1.
    line: usize,
    /// The event's time.
    now: Millis,
    /// What `step` returned.
    actions: Vec<Action>,
}

/// One VIP at the end of the replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct VipSummary {
    table: TableId,
    prefix: Prefix,
    /// The reported class.
    state: Class,
    /// The instantaneous class.
    observed: Class,
    reassertions: u64,
    heal_attempts: u32,
    last_action: Option<HealAction>,
    last_result: Option<String>,
}

/// `case.json`.
#[derive(Debug, Clone, Deserialize)]
#[allow(dead_code)] // about, source, daemon and args are for people
struct CaseInfo {
    about: String,
    /// The netns test that recorded it.
    source: String,
    /// The daemon of that test (namespace, `-N` for the Nth started there).
    daemon: String,
    /// The daemon's flags.
    args: Vec<String>,
    /// The state changes the daemon logged: (prefix, table, class).
    logged: Vec<(String, TableId, String)>,
}

/// One case, loaded.
struct Case {
    name: String,
    dir: PathBuf,
    /// `config.json`: the node core's `Config`, or the router's join.
    config: serde_json::Value,
    /// The mode the daemon ran in.
    mode: Mode,
    events: Vec<(usize, Millis, Event)>,
    info: CaseInfo,
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reconcile")
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn load(dir: &Path) -> Result<Case, String> {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let config: serde_json::Value = serde_json::from_str(&read(&dir.join("config.json"))?)
        .map_err(|e| format!("case {name}: config.json: {e}"))?;
    let mode = match reconcile::Replay::from_case(&config) {
        Ok(reconcile::Replay::Node(state)) => state.config.mode,
        // The mode the router was started with (it heals in none).
        Ok(reconcile::Replay::Router(_)) => config
            .get("mode")
            .and_then(|m| serde_json::from_value(m.clone()).ok())
            .unwrap_or(Mode::Observe),
        Err(e) => return Err(format!("case {name}: config.json: {e}")),
    };
    let info: CaseInfo = serde_json::from_str(&read(&dir.join("case.json"))?)
        .map_err(|e| format!("case {name}: case.json: {e}"))?;
    let mut events = Vec::new();
    for (i, line) in read(&dir.join("events.jsonl"))?.lines().enumerate() {
        let (now, event): (Millis, Event) = serde_json::from_str(line)
            .map_err(|e| format!("case {name}: events.jsonl:{}: {e}", i + 1))?;
        events.push((i + 1, now, event));
    }
    Ok(Case {
        name,
        dir: dir.to_path_buf(),
        config,
        mode,
        events,
        info,
    })
}

fn all_cases() -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.iter().map(|d| load(d).unwrap()).collect()
}

/// Replay a case through the join it ran, as the daemon stepped it.
fn replay(case: &Case) -> Expected {
    let mut join = reconcile::Replay::from_case(&case.config).expect("loaded");
    let mut steps = Vec::new();
    for (line, now, event) in &case.events {
        let actions = join.step(event.clone(), *now);
        if !actions.is_empty() {
            steps.push(StepActions {
                line: *line,
                now: *now,
                actions,
            });
        }
    }
    let vips = match &join {
        reconcile::Replay::Node(state) => state
            .vips
            .iter()
            .map(|((table, prefix), v)| VipSummary {
                table: *table,
                prefix: *prefix,
                state: v.state,
                observed: v.observed,
                reassertions: v.reassertions(),
                heal_attempts: v.heal().attempts,
                last_action: v.heal().last_action,
                last_result: v.heal().last_result.as_ref().map(ToString::to_string),
            })
            .collect(),
        // The router's join observes what it reports and heals nothing.
        reconcile::Replay::Router(j) => j
            .vips()
            .iter()
            .map(|(prefix, v)| VipSummary {
                table: v.table,
                prefix: *prefix,
                state: v.state,
                observed: v.state,
                reassertions: 0,
                heal_attempts: 0,
                last_action: None,
                last_result: None,
            })
            .collect(),
    };
    Expected { steps, vips }
}

/// Compare a replay with a case's expectations: `Err` names the case, the
/// first line of `events.jsonl` whose actions differ (and how many others
/// do), or the VIP whose final state differs, and what differed.
fn compare(case: &str, expected: &Expected, actual: &Expected) -> Result<(), String> {
    let lines: BTreeSet<usize> = expected
        .steps
        .iter()
        .chain(&actual.steps)
        .map(|s| s.line)
        .collect();
    let at = |steps: &[StepActions], line: usize| -> Vec<Action> {
        steps
            .iter()
            .find(|s| s.line == line)
            .map(|s| s.actions.clone())
            .unwrap_or_default()
    };
    let differing: Vec<usize> = lines
        .into_iter()
        .filter(|l| at(&expected.steps, *l) != at(&actual.steps, *l))
        .collect();
    let mut msg = String::new();
    if let Some(&first) = differing.first() {
        let show = |a: Vec<Action>| {
            if a.is_empty() {
                "no action".to_string()
            } else {
                serde_json::to_string(&a).unwrap()
            }
        };
        let _ = writeln!(
            msg,
            "case {case}: events.jsonl:{first}: expected {}, the replay returned {}{}",
            show(at(&expected.steps, first)),
            show(at(&actual.steps, first)),
            match differing.len() {
                1 => String::new(),
                n => format!(" ({} more line(s) differ)", n - 1),
            }
        );
    }
    for e in &expected.vips {
        match actual
            .vips
            .iter()
            .find(|a| (a.table, a.prefix) == (e.table, e.prefix))
        {
            Some(a) if a == e => {}
            Some(a) => {
                let _ = writeln!(
                    msg,
                    "case {case}: final state of {} (table {}) after the last line: expected {}, the replay ended with {}",
                    e.prefix,
                    e.table,
                    serde_json::to_string(e).unwrap(),
                    serde_json::to_string(a).unwrap()
                );
            }
            None => {
                let _ = writeln!(
                    msg,
                    "case {case}: final state: expected {} (table {}), the replay has no such VIP",
                    e.prefix, e.table
                );
            }
        }
    }
    for a in &actual.vips {
        if !expected
            .vips
            .iter()
            .any(|e| (e.table, e.prefix) == (a.table, a.prefix))
        {
            let _ = writeln!(
                msg,
                "case {case}: final state: the replay has {} (table {}), not expected",
                a.prefix, a.table
            );
        }
    }
    if msg.is_empty() { Ok(()) } else { Err(msg) }
}

/// The state changes of a replay, in the form the daemon logs them.
fn changes(e: &Expected) -> Vec<(String, TableId, String)> {
    e.steps
        .iter()
        .flat_map(|s| &s.actions)
        .filter_map(|a| match a {
            Action::StateChanged {
                table, prefix, to, ..
            } => Some((prefix.to_string(), *table, to.name().to_string())),
            _ => None,
        })
        .collect()
}

/// The heal actions a replay asks for, in order.
fn heals(e: &Expected) -> Vec<HealAction> {
    e.steps
        .iter()
        .flat_map(|s| &s.actions)
        .filter_map(|a| match a {
            Action::Heal { action, .. } => Some(*action),
            _ => None,
        })
        .collect()
}

/// `expected.json`: one line per step, so a re-blessed case diffs by step.
fn render(e: &Expected) -> String {
    let mut out = String::from("{\n  \"steps\": [\n");
    for (i, s) in e.steps.iter().enumerate() {
        let sep = if i + 1 < e.steps.len() { "," } else { "" };
        let _ = writeln!(out, "    {}{sep}", serde_json::to_string(s).unwrap());
    }
    out.push_str("  ],\n  \"vips\": [\n");
    for (i, v) in e.vips.iter().enumerate() {
        let sep = if i + 1 < e.vips.len() { "," } else { "" };
        let _ = writeln!(out, "    {}{sep}", serde_json::to_string(v).unwrap());
    }
    out.push_str("  ]\n}\n");
    out
}

fn blessing() -> bool {
    std::env::var_os("RIBBRIDGE_BLESS").is_some_and(|v| v == "1")
}

/// Check (or with `RIBBRIDGE_BLESS=1`, rewrite) one case.
fn check(case: &Case) -> Result<(), String> {
    let actual = replay(case);
    let logged = changes(&actual);
    if logged != case.info.logged {
        return Err(format!(
            "case {}: the replay's state changes are not the ones the daemon logged in the lab ({}):\n  replay: {logged:?}\n  logged: {:?}\n  (a change of the core's behaviour: record the case again, scripts/record-cases.sh {})",
            case.name, case.info.source, case.info.logged, case.name
        ));
    }
    // The heals the daemon executed are in the recording (one HealDone
    // each); the replay asks for the same, plus at most one still running
    // when the daemon stopped.
    let done: Vec<HealAction> = case
        .events
        .iter()
        .filter_map(|(_, _, e)| match e {
            Event::HealDone { action, .. } => Some(*action),
            _ => None,
        })
        .collect();
    let asked = heals(&actual);
    if !(asked.starts_with(&done) && asked.len() <= done.len() + 1) {
        return Err(format!(
            "case {}: the replay's heals are not the ones the daemon executed in the lab ({}):\n  replay: {asked:?}\n  executed: {done:?}",
            case.name, case.info.source
        ));
    }
    // The same for the drain's re-applies: one `DrainReapplied` in the
    // recording for each the daemon ran.
    let ran = case
        .events
        .iter()
        .filter(|(_, _, e)| matches!(e, Event::DrainReapplied { .. }))
        .count();
    let reapplies = actual
        .steps
        .iter()
        .flat_map(|s| &s.actions)
        .filter(|a| matches!(a, Action::ReapplyDrain))
        .count();
    if !(ran..=ran + 1).contains(&reapplies) {
        return Err(format!(
            "case {}: the replay asks for {reapplies} drain re-apply(ies), the daemon ran {ran} in the lab ({})",
            case.name, case.info.source
        ));
    }
    // And for the withdrawals of `withdraw = true` VIPs: the same
    // directions, in order, as the daemon's `Withdrew` answers.
    let answered: Vec<bool> = case
        .events
        .iter()
        .filter_map(|(_, _, e)| match e {
            Event::Withdrew { out, .. } => Some(*out),
            _ => None,
        })
        .collect();
    let withdrawals: Vec<bool> = actual
        .steps
        .iter()
        .flat_map(|s| &s.actions)
        .filter_map(|a| match a {
            Action::Withdraw { out, .. } => Some(*out),
            _ => None,
        })
        .collect();
    if !(withdrawals.starts_with(&answered) && withdrawals.len() <= answered.len() + 1) {
        return Err(format!(
            "case {}: the replay's withdrawals (true: out) are not the ones the daemon ran in the lab ({}):\n  replay: {withdrawals:?}\n  ran: {answered:?}",
            case.name, case.info.source
        ));
    }
    let path = case.dir.join("expected.json");
    if blessing() {
        std::fs::write(&path, render(&actual)).map_err(|e| format!("{}: {e}", path.display()))?;
        return Ok(());
    }
    let expected: Expected = serde_json::from_str(&read(&path).map_err(|e| {
        format!(
            "case {}: {e} (write it: RIBBRIDGE_BLESS=1 cargo test --test reconcile_cases)",
            case.name
        )
    })?)
    .map_err(|e| format!("case {}: expected.json: {e}", case.name))?;
    compare(&case.name, &expected, &actual)
}

#[test]
fn recorded_cases_replay_to_their_expectations() {
    let cases = all_cases();
    assert!(
        cases.len() >= 12,
        "only {} cases under {}",
        cases.len(),
        cases_dir().display()
    );
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ (RIBBRIDGE_BLESS=1 rewrites the expectations once the change is understood):\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A deliberately wrong expectation of a real case is caught, and the
/// report says which case, which line of events.jsonl and what differed.
#[test]
fn a_wrong_expectation_is_reported_with_case_line_and_difference() {
    let case = load(&cases_dir().join("8.4-realm-replace-repair")).unwrap();
    let actual = replay(&case);
    // The expectation as blessed (the replay itself: the test above checks
    // that expected.json holds exactly that, and this one runs while
    // RIBBRIDGE_BLESS=1 is rewriting it).
    let good = actual.clone();
    compare(&case.name, &good, &actual).unwrap();

    // The heal action of the first step that heals: reimport_table on 8.4.
    let mut wrong = good.clone();
    let step = wrong
        .steps
        .iter_mut()
        .find(|s| s.actions.iter().any(|a| matches!(a, Action::Heal { .. })))
        .expect("the repair case heals");
    let line = step.line;
    for a in &mut step.actions {
        if let Action::Heal { action, .. } = a {
            assert_eq!(*action, HealAction::ReimportTable);
            *action = HealAction::RealmToggle;
        }
    }
    let err = compare(&case.name, &wrong, &actual).unwrap_err();
    for needle in [
        "case 8.4-realm-replace-repair",
        &format!("events.jsonl:{line}:"),
        "realm_toggle",
        "reimport_table",
    ] {
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    }

    // A step the replay returns but the expectation lacks.
    let mut missing = good.clone();
    let dropped = missing.steps.remove(0);
    let err = compare(&case.name, &missing, &actual).unwrap_err();
    assert!(
        err.contains(&format!(
            "events.jsonl:{}: expected no action",
            dropped.line
        )),
        "{err}"
    );

    // The final class.
    let mut last = good.clone();
    last.vips[0].state = Class::Shadowed;
    let err = compare(&case.name, &last, &actual).unwrap_err();
    assert!(
        err.contains("final state of 192.0.2.10/32") && err.contains("\"shadowed\""),
        "{err}"
    );
}

fn mode(m: Mode) -> &'static str {
    match m {
        Mode::Observe => "observe",
        Mode::Repair => "repair",
    }
}

/// The cases keep covering every drift class on every release it occurs
/// on in the lab, both modes, each release's heal action, and the
/// consistent paths (heartbeat, withdraw, restarts).
#[test]
fn every_drift_class_is_covered_on_every_release_it_occurs_on() {
    let mut seen: BTreeSet<(String, &str, String)> = BTreeSet::new();
    for case in all_cases() {
        let release = case
            .events
            .iter()
            .find_map(|(_, _, e)| match e {
                // Recordings name the patch since zebra's HELLO gives it;
                // coverage is per major.minor.
                Event::ZebraUp { release, .. } => {
                    Some(format!("{}.{}", release.major, release.minor))
                }
                _ => None,
            })
            .unwrap_or_else(|| "router".to_string());
        let actual = replay(&case);
        for a in actual.steps.iter().flat_map(|s| &s.actions) {
            let what = match a {
                Action::StateChanged { to, .. } => to.name().to_string(),
                Action::Heal { action, .. } => format!("heal:{}", action.name()),
                _ => continue,
            };
            seen.insert((release.clone(), mode(case.mode), what));
        }
        let reasserted = actual.vips.iter().any(|v| v.reassertions > 0);
        if reasserted {
            seen.insert((release.clone(), mode(case.mode), "reasserted".into()));
        }
    }
    let want = [
        ("8.4", Mode::Observe, "not_redistributed"),
        ("8.4", Mode::Repair, "not_redistributed"),
        ("8.4", Mode::Repair, "heal:reimport_table"),
        ("8.4", Mode::Observe, "shadowed"),
        ("8.4", Mode::Repair, "shadowed"),
        ("10.3", Mode::Observe, "kernel_only"),
        ("10.3", Mode::Repair, "kernel_only"),
        ("10.3", Mode::Repair, "heal:address_cycle"),
        ("10.7", Mode::Observe, "kernel_only"),
        ("10.7", Mode::Repair, "kernel_only"),
        ("10.7", Mode::Repair, "heal:realm_toggle"),
        ("8.4", Mode::Repair, "no_peer"),
        ("10.3", Mode::Repair, "no_peer"),
        ("10.7", Mode::Repair, "no_peer"),
        ("8.4", Mode::Repair, "withdrawn"),
        ("10.3", Mode::Repair, "withdrawn"),
        ("10.7", Mode::Repair, "withdrawn"),
        ("8.4", Mode::Repair, "reasserted"),
        ("10.3", Mode::Repair, "reasserted"),
        ("10.7", Mode::Repair, "reasserted"),
        ("router", Mode::Repair, "advertised"),
    ];
    let missing: Vec<_> = want
        .iter()
        .filter(|(r, m, w)| !seen.contains(&(r.to_string(), mode(*m), w.to_string())))
        .collect();
    assert!(
        missing.is_empty(),
        "no case shows {missing:?}; seen {seen:?}"
    );
    // Observe mode never acts.
    assert!(
        !seen
            .iter()
            .any(|(_, m, w)| *m == "observe" && w.starts_with("heal:")),
        "{seen:?}"
    );
}
