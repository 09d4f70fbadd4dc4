//! The drain state file's watcher task (node vantage): tells the core what
//! the file says whenever it changes, so a drain is known to the daemon
//! the moment `ribbridge drain` records it, before bgpd is touched.
//!
//! Contract:
//! - Subscribe, then read, then report: the core hears the file's state at
//!   the start and after every change; an unchanged state is not sent
//!   again.
//! - A watch that cannot be set up (the directory is missing) or that
//!   ends is set up again as soon as the directory's parent changes (the
//!   directory made: `ribbridge drain` makes it on a tmpfs), and at the
//!   latest after [`WATCH_RETRY`]; the file is read at each try, so the
//!   core is never left with a stale view for longer than that. Each cause
//!   is logged once until it changes.
//! - Sends go to the owner's bounded results channel and await room: the
//!   file's state is a level, and the latest one is what matters.

use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::seam::{Input, Source};
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
                let ev = Input::Core(Event::DrainFile { file }, Source::Drain);
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
        // The directory is missing (or its watch ended): watch its parent
        // for it to appear (`ribbridge drain` makes it on a tmpfs), and
        // retry at the latest after WATCH_RETRY.
        let mut above = path.parent().and_then(|d| StateWatch::new(d).ok());
        if path.parent().is_some_and(Path::is_dir) {
            continue;
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(WATCH_RETRY) => {}
            _ = async {
                match above.as_mut() {
                    Some(a) => a.changed().await,
                    None => std::future::pending().await,
                }
            } => {}
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

    async fn next(rx: &mut mpsc::Receiver<Input>) -> DrainFile {
        match rx.recv().await.expect("the task sends") {
            Input::Core(Event::DrainFile { file }, Source::Drain) => file,
            Input::Core(other, who) => panic!("unexpected input from {}: {other:?}", who.name()),
        }
    }

    /// The task on `path`: its inputs, its stop and its handle.
    fn start(
        path: &Path,
    ) -> (
        mpsc::Receiver<Input>,
        CancellationToken,
        tokio::task::JoinHandle<()>,
    ) {
        let (tx, rx) = mpsc::channel(4);
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (path, stop) = (path.to_path_buf(), stop.clone());
            async move { run(&path, tx, stop).await }
        });
        (rx, stop, task)
    }

    #[tokio::test]
    async fn the_start_and_each_change_reach_the_core_once() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("drain");
        let (mut rx, stop, task) = start(&path);
        assert_eq!(next(&mut rx).await, DrainFile::Absent);
        DrainState::new(vec![198], crate::clock::wall())
            .write(&path)
            .expect("write");
        assert_eq!(next(&mut rx).await, DrainFile::Drained);
        DrainState::remove(&path).expect("remove");
        assert_eq!(next(&mut rx).await, DrainFile::Absent);
        stop.cancel();
        task.await.expect("the task stops");
        assert!(rx.try_recv().is_err(), "no state is sent twice");
    }

    #[tokio::test]
    async fn a_directory_made_later_is_watched_from_its_making() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("ribbridge/drain");
        let (mut rx, stop, task) = start(&path);
        assert_eq!(next(&mut rx).await, DrainFile::Absent);
        // The clock paused: what comes before half the retry period (in
        // the clock's time) came through the parent's watch.
        tokio::time::pause();
        std::fs::create_dir(tmp.path().join("ribbridge")).expect("mkdir");
        DrainState::new(vec![198], crate::clock::wall())
            .write(&path)
            .expect("write");
        let seen = tokio::time::timeout(WATCH_RETRY / 2, next(&mut rx))
            .await
            .expect("seen through the parent's watch, not a retry");
        assert_eq!(seen, DrainFile::Drained);
        stop.cancel();
        task.await.expect("the task stops");
    }
}
