//! `--record`: every event a role's join is told, one JSON line each with
//! the owner's time, so a run replays through the same join
//! (`tests/reconcile_cases.rs`).

use std::fs::File;
use std::io::{BufWriter, Write};

use super::error::DaemonError;
use crate::config::Settings;
use crate::reconcile::{Event, Millis};

/// The recording, when `--record` names a file.
#[derive(Debug)]
pub(super) struct Recorder(Option<BufWriter<File>>);

impl Recorder {
    /// The file `--record` names, created (truncated) at the start.
    pub fn open(s: &Settings) -> Result<Recorder, DaemonError> {
        let Some(p) = &s.record else {
            return Ok(Recorder(None));
        };
        let f = File::create(p).map_err(|source| DaemonError::Record {
            path: p.clone(),
            source,
        })?;
        Ok(Recorder(Some(BufWriter::new(f))))
    }

    /// One event at `now`, written through (a crash loses nothing told).
    pub fn write(&mut self, now: Millis, ev: &Event) {
        if let Some(r) = self.0.as_mut() {
            if let Ok(line) = serde_json::to_string(&(now, ev)) {
                let _ = writeln!(r, "{line}").and_then(|()| r.flush());
            }
        }
    }

    /// Flush what is buffered.
    pub fn flush(&mut self) {
        if let Some(r) = self.0.as_mut() {
            let _ = r.flush();
        }
    }
}
