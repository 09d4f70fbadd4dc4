//! Failpoints: faults the tests inject into a running daemon to prove its
//! supervision (docs/RELIABILITY.md, "Supervision"), through the `fail`
//! crate behind the `failpoints` cargo feature. Without the feature (every
//! shipped build) [`armed`] is `false` and compiles to nothing.
//!
//! A point is armed from the environment when the daemon starts:
//! `FAILPOINTS='POINT=return(KEY)'` (`;` between points). It fires where
//! the code evaluates `POINT` for that `KEY` (a VIP's prefix, say), so a
//! test picks the moment by what it does to the lab (adding that VIP). The
//! points: `kernel-watcher-fail`, `owner-wedge`, `zapi-panic`,
//! `heal-hang`, `bmp-session-panic` (each documented where it is
//! evaluated).

/// Keeps the failpoints configured for the process's life.
#[derive(Debug)]
pub struct Armed {
    #[cfg(feature = "failpoints")]
    _scenario: fail::FailScenario<'static>,
}

/// Read `FAILPOINTS` (feature `failpoints` only; otherwise nothing).
pub fn setup() -> Armed {
    #[cfg(feature = "failpoints")]
    {
        let configured = std::env::var_os("FAILPOINTS").is_some();
        let scenario = fail::FailScenario::setup();
        if configured {
            tracing::warn!(failpoints = ?std::env::var("FAILPOINTS").ok(), "failpoints armed: this daemon will fail on purpose");
        }
        Armed {
            _scenario: scenario,
        }
    }
    #[cfg(not(feature = "failpoints"))]
    Armed {}
}

/// True when `point` is armed with `return(KEY)` and `key` is that KEY.
#[cfg(feature = "failpoints")]
pub fn armed(point: &str, key: &dyn std::fmt::Display) -> bool {
    fail::eval(point, |arg| arg.is_some_and(|a| a == key.to_string())).unwrap_or(false)
}

/// Always false: this build has no failpoints.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub fn armed(_point: &str, _key: &dyn std::fmt::Display) -> bool {
    false
}
