//! The wall clock, read in one function.
//!
//! Elapsed time is tokio's `Instant` everywhere (a paused-clock test
//! reaches it; `clippy.toml` disallows std's `Instant::now`). The wall
//! clock is needed only where a time leaves the process or outlives it:
//! the Unix time the owner's millisecond clock starts from (`/status`'s
//! timestamps, a recorded run), and the `since` of the drain's intent file.
//! [`wall`] is the one read of it: `clippy.toml` disallows
//! `std::time::SystemTime::now` everywhere else, so a wall-clock read is
//! found by finding this module's callers.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, by the wall clock.
#[allow(clippy::disallowed_methods)] // the one wall-clock read (module doc)
pub fn wall() -> SystemTime {
    SystemTime::now()
}

/// Now, by the wall clock, in milliseconds since the Unix epoch (0 before
/// it; `u64::MAX` past what fits).
pub fn unix_ms() -> u64 {
    wall()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_ms_is_the_wall_clock_in_milliseconds() {
        let before = wall();
        let ms = unix_ms();
        let after = wall();
        let at = UNIX_EPOCH + std::time::Duration::from_millis(ms);
        // Millisecond truncation: `at` may be up to 1 ms before `before`.
        assert!(at + std::time::Duration::from_millis(1) > before);
        assert!(at <= after);
    }
}
