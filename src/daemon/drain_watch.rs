//! The drain state file's watcher task (node vantage): tells the core what
//! the file says whenever it changes, so a drain is known to the daemon
//! the moment `ribbridge drain` records it, before bgpd is touched.
//!
//! Contract:
//! - Subscribe, then read, then report: the core hears the file's state at
//!   the start and after every change; an unchanged state is not sent
//!   again.
//! - A watch that cannot be set up (the directory is not mounted yet) or
//!   that ends is set up again every [`WATCH_RETRY`]; in between the file
//!   is read once per retry, so the core is never left with a stale view
//!   for longer than that. Each cause is logged once until it changes.
//! - Sends go to the owner's bounded results channel and await room: the
//!   file's state is a level, and the latest one is what matters.

use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::owner::Input;
use crate::drain::watch::{self, StateWatch};
use crate::reconcile::{DrainFile, Event};

/// How long a failed watch waits before it is set up again.
pub const WATCH_RETRY: Duration = Duration::from_secs(10);

/// Watch `path` until `stop`; report its state to `results`.
pub async fn run(path: &Path, results: mpsc::Sender<Input>, stop: CancellationToken) {
    let mut last: Option<DrainFile> = None;
    let mut last_problem: Option<String> = None;
    loop {
        let mut w = match StateWatch::new(path) {
            Ok(w) => Some(w),
            Err(e) => {
                note_problem(&mut last_problem, e.to_string());
                None
            }
        };
        loop {
            let (file, why) = watch::read(path);
            match why {
                Some(e) => note_problem(&mut last_problem, e.to_string()),
                None if w.is_some() => last_problem = None,
                None => {}
            }
            if last != Some(file) {
                last = Some(file);
                tracing::info!(intent = %path.display(), state = file.name(), "drain: the intent file changed");
                let ev = Input::Core(Event::DrainFile { file }, "drain");
                if results.send(ev).await.is_err() {
                    return;
                }
            }
            let Some(watching) = w.as_mut() else { break };
            tokio::select! {
                () = stop.cancelled() => return,
                r = watching.changed() => if let Err(e) = r {
                    note_problem(&mut last_problem, e.to_string());
                    break;
                },
            }
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(WATCH_RETRY) => {}
        }
    }
}

/// Log `problem` unless it is the one logged last.
fn note_problem(last: &mut Option<String>, problem: String) {
    if last.as_deref() != Some(problem.as_str()) {
        tracing::warn!(
            %problem,
            retry = ?WATCH_RETRY,
            "drain: the drain state file cannot be watched or read; the daemon's view of the \
             drain may lag by the retry period until this is fixed"
        );
        *last = Some(problem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drain::DrainState;
    use std::time::SystemTime;

    async fn next(rx: &mut mpsc::Receiver<Input>) -> DrainFile {
        match rx.recv().await.expect("the task sends") {
            Input::Core(Event::DrainFile { file }, "drain") => file,
            Input::Core(other, who) => panic!("unexpected input from {who}: {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_start_and_each_change_reach_the_core_once() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("drain");
        let (tx, mut rx) = mpsc::channel(4);
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (path, stop) = (path.clone(), stop.clone());
            async move { run(&path, tx, stop).await }
        });
        assert_eq!(next(&mut rx).await, DrainFile::Absent);
        DrainState::new(vec![198], SystemTime::now())
            .write(&path)
            .expect("write");
        assert_eq!(next(&mut rx).await, DrainFile::Drained);
        DrainState::remove(&path).expect("remove");
        assert_eq!(next(&mut rx).await, DrainFile::Absent);
        stop.cancel();
        task.await.expect("the task stops");
        assert!(rx.try_recv().is_err(), "no state is sent twice");
    }
}
