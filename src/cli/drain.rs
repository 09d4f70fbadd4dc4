//! `ribbridge drain` and `ribbridge undrain`: take this node's VIPs out of
//! BGP (and put them back), waiting until the views say it is done.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use super::{Exit, defaulted};
use crate::drain::{Direction, DrainError, DrainInput, DrainState, IntentRecord};
use crate::http::client::{Address, EndpointError};
use crate::model::TableId;

const AFTER_HELP: &str = "The drain is recorded in --drain-state before bgpd is configured (a \
running ribbridge re-applies it when a reload of FRR's configuration removes it; the file is on a \
tmpfs, so a reboot ends it); undrain removes the file first, then undrains bgpd.

Exit status: 0 done (no established peer is sent a VIP; undrain: every VIP \
is sent to one), also when it already was; 1 not done within --timeout (the message names what \
still advertises, or what is missing); 2 error (bad flags, FRR unreachable, no redistribution \
route-map to drain, the intent file not writable).";

/// `ribbridge drain` / `ribbridge undrain` flags.
#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// How long to wait for the views to agree, e.g. 30s, 2m.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_timeout)]
    timeout: Duration,
    #[arg(long, value_name = "DIR", help = defaulted(
        "Directory holding zebra.vty and bgpd.vty",
        crate::config::DEFAULT_FRR_DIR,
    ))]
    frr_dir: Option<PathBuf>,
    /// This node's running ribbridge (`HOST:PORT` or `http://HOST:PORT`):
    /// also wait until its /status reports every VIP drained (undrain:
    /// advertised). bgpd is configured through --frr-dir either way.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_endpoint)]
    endpoint: Option<Address>,
    /// A router-vantage ribbridge's status (`http://HOST:PORT/status`):
    /// also wait until it shows no path to a VIP through this node
    /// (undrain: a path to each).
    #[arg(long, value_name = "URL", value_parser = parse_confirm)]
    confirm: Option<Address>,
    #[arg(long = "table", value_name = "ID", help = defaulted(
        "Kernel routing table bgpd redistributes (repeatable)",
        crate::model::VIP_TABLE,
    ))]
    tables: Vec<TableId>,
    /// The drain's intent file (drain writes it, undrain removes it); its
    /// directory must exist and be writable.
    #[arg(long, value_name = "PATH", default_value = crate::config::DEFAULT_DRAIN_STATE)]
    drain_state: PathBuf,
    /// Drain only: record no intent (a stop hook's drain: the node is going
    /// away, and a replaced pod or a restarted FRR must not stay drained;
    /// a running daemon then does not re-apply it after a reload).
    #[arg(long)]
    no_intent: bool,
    /// Print the outcome as one JSON object (`result`: drained, advertised
    /// or timeout; the VIPs, the established peers, the wait, the intent;
    /// at a timeout what is still pending) instead of a sentence.
    #[arg(long)]
    json: bool,
    /// Started as root: become UID:GID (FRR's user) first, holding no
    /// capability (a repair container's preStop runs as its root).
    #[arg(long, value_name = "UID:GID")]
    user: Option<crate::privilege::Ids>,
}

/// A `--timeout` that is not a positive duration.
#[derive(Debug, thiserror::Error)]
pub(super) enum TimeoutError {
    #[error("'{text}' is not a duration ({source}); write e.g. 30s or 2m")]
    Syntax {
        text: String,
        source: humantime::DurationError,
    },
    #[error("the timeout must be more than 0")]
    Zero,
}

pub(super) fn parse_timeout(s: &str) -> Result<Duration, TimeoutError> {
    let d = humantime::parse_duration(s).map_err(|source| TimeoutError::Syntax {
        text: s.to_string(),
        source,
    })?;
    if d.is_zero() {
        return Err(TimeoutError::Zero);
    }
    Ok(d)
}

fn parse_endpoint(s: &str) -> Result<Address, EndpointError> {
    s.parse()
}

/// A status URL: the endpoint with or without its `/status` path.
fn parse_confirm(s: &str) -> Result<Address, EndpointError> {
    let t = s.trim();
    let t = t.strip_suffix('/').unwrap_or(t);
    t.strip_suffix("/status").unwrap_or(t).parse()
}

/// `ribbridge drain`.
pub fn run_drain(args: Args) -> ExitCode {
    run(args, Direction::Drain)
}

/// `ribbridge undrain`.
pub fn run_undrain(args: Args) -> ExitCode {
    run(args, Direction::Undrain)
}

fn run(args: Args, dir: Direction) -> ExitCode {
    let cmd = match dir {
        Direction::Drain => "ribbridge drain",
        Direction::Undrain => "ribbridge undrain",
    };
    if args.no_intent && dir == Direction::Undrain {
        return super::fail(
            cmd,
            &"--no-intent is for drain only: undrain always removes the intent; drop the flag",
        );
    }
    match crate::privilege::enter(args.user)
        .and_then(|h| crate::privilege::narrow(&h, crate::privilege::Need::Nothing))
    {
        Ok(held) if held.untouched_root => {}
        Ok(held) => tracing::debug!(privileges = %held, "privileges set"),
        Err(e) => return super::fail_err(cmd, &e),
    }
    let rt = match super::runtime(cmd) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let json = args.json;
    let input = DrainInput {
        frr_dir: args
            .frr_dir
            .unwrap_or_else(|| PathBuf::from(crate::config::DEFAULT_FRR_DIR)),
        tables: if args.tables.is_empty() {
            vec![crate::model::VIP_TABLE]
        } else {
            args.tables
        },
        state: args.drain_state,
        record: !args.no_intent,
        timeout: args.timeout,
        endpoint: args.endpoint,
        confirm: args.confirm,
    };
    let result = rt.block_on(async {
        match dir {
            Direction::Drain => crate::drain::drain(&input).await,
            Direction::Undrain => crate::drain::undrain(&input).await,
        }
    });
    let state = input.state.display();
    match result {
        Ok(o) if json => {
            let doc = serde_json::json!({
                "result": goal_word(dir),
                "changed": o.changed,
                "vips": o.vips.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "peers": o.peers,
                "waited_ms": u64::try_from(o.waited.as_millis()).unwrap_or(u64::MAX),
                "intent": intent_text(&o.intent, &state.to_string()),
            });
            println!("{doc}");
            ExitCode::from(Exit::Ok)
        }
        Ok(o) => {
            let vips: Vec<String> = o.vips.iter().map(ToString::to_string).collect();
            let peers: Vec<&str> = o.peers.iter().map(String::as_str).collect();
            println!(
                "{}: {} ({}); VIPs: {}; established peers: {}; waited {} ms; {}",
                cmd,
                goal_word(dir),
                if o.changed {
                    "configured now"
                } else {
                    "already so"
                },
                if vips.is_empty() {
                    "none".to_string()
                } else {
                    vips.join(", ")
                },
                if peers.is_empty() {
                    "none".to_string()
                } else {
                    peers.join(", ")
                },
                o.waited.as_millis(),
                intent_text(&o.intent, &state.to_string())
            );
            if let IntentRecord::Unrecorded { why } = &o.intent {
                eprintln!(
                    "{cmd}: warning: the node is drained, but the drain is not recorded: {why}. \
                     A reload of FRR's configuration (frr-k8s applies one with every change) \
                     undoes this drain, and no ribbridge re-applies it; fix the directory and run \
                     {cmd} again to record it"
                );
            }
            ExitCode::from(Exit::Ok)
        }
        Err(DrainError::Timeout { ref pending, .. }) if json => {
            let doc = serde_json::json!({"result": "timeout", "pending": pending});
            println!("{doc}");
            intent_note(cmd, dir, &input.state);
            ExitCode::from(Exit::Drift)
        }
        Err(e @ DrainError::Timeout { .. }) => {
            eprintln!("{cmd}: {e}");
            intent_note(cmd, dir, &input.state);
            ExitCode::from(Exit::Drift)
        }
        Err(e) => {
            let code = super::fail_err(cmd, &e);
            intent_note(cmd, dir, &input.state);
            code
        }
    }
}

/// The word of a reached goal.
fn goal_word(dir: Direction) -> &'static str {
    match dir {
        Direction::Drain => "drained",
        Direction::Undrain => "advertised",
    }
}

/// What became of the drain's intent file (`state` its path).
fn intent_text(intent: &IntentRecord, state: &str) -> String {
    match intent {
        IntentRecord::Recorded { made_dir: false } => format!("intent recorded in {state}"),
        IntentRecord::Recorded { made_dir: true } => {
            format!("intent recorded in {state} (its directory made, mode 0755)")
        }
        IntentRecord::Unrecorded { .. } => format!("intent NOT recorded in {state}"),
        IntentRecord::Removed => format!("intent {state} removed"),
        IntentRecord::Absent => format!("no intent was recorded ({state} was absent)"),
        IntentRecord::NotRecorded => "no intent recorded (--no-intent)".to_string(),
    }
}

/// After a failed drain: whether the intent stays recorded (a running
/// ribbridge then keeps re-applying it).
fn intent_note(cmd: &str, dir: Direction, path: &std::path::Path) {
    if dir == Direction::Drain && matches!(DrainState::read(path), Ok(Some(_))) {
        eprintln!(
            "{cmd}: the drain intent stays recorded in {} (a running ribbridge applies it); ribbridge undrain removes it",
            path.display()
        );
    }
}
