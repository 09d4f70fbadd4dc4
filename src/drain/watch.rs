//! The drain state file, watched: a running daemon learns of a drain the
//! moment `ribbridge drain` records it, before bgpd is touched, instead of
//! at its next read of bgpd's configuration.
//!
//! Contract:
//! - [`StateWatch::new`] watches the file's directory with inotify (the
//!   file is replaced by a rename, so the file itself is not the thing to
//!   watch); [`StateWatch::changed`] returns at the next change in that
//!   directory, or when the kernel's queue overflowed (then anything may
//!   have changed). The caller reads the file after each: it is a few
//!   bytes on a tmpfs.
//! - Subscribe, then read: a caller reads once after `new`, so no change
//!   between its start and its first read is missed.
//! - [`read`] turns the file into what the core is told
//!   ([`DrainFile`]), with the error of an unreadable one for the log.

use std::path::{Path, PathBuf};

use futures::StreamExt;
use inotify::{Inotify, WatchMask};

use super::{DrainError, DrainState};
use crate::reconcile::DrainFile;

/// inotify's read buffer: room for a few dozen events with their names.
const EVENT_BUFFER: usize = 4_096;

/// A watch on the drain state file's directory.
pub struct StateWatch {
    events: inotify::EventStream<[u8; EVENT_BUFFER]>,
    dir: PathBuf,
}

impl std::fmt::Debug for StateWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateWatch")
            .field("dir", &self.dir)
            .finish()
    }
}

impl StateWatch {
    /// Watch the directory of `path` (it must exist: the state module never
    /// creates it).
    pub fn new(path: &Path) -> Result<StateWatch, DrainError> {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let err = |source| DrainError::Watch {
            dir: dir.clone(),
            source,
        };
        let inotify = Inotify::init().map_err(err)?;
        inotify
            .watches()
            .add(
                &dir,
                WatchMask::CREATE
                    | WatchMask::CLOSE_WRITE
                    | WatchMask::MOVED_TO
                    | WatchMask::MOVED_FROM
                    | WatchMask::DELETE
                    | WatchMask::DELETE_SELF
                    | WatchMask::MOVE_SELF,
            )
            .map_err(err)?;
        let events = inotify
            .into_event_stream([0u8; EVENT_BUFFER])
            .map_err(err)?;
        Ok(StateWatch { events, dir })
    }

    /// The next change in the directory. An error (the watch is gone: the
    /// directory was removed or unmounted) ends the watch.
    pub async fn changed(&mut self) -> Result<(), DrainError> {
        match self.events.next().await {
            Some(Ok(ev)) if ev.mask.contains(inotify::EventMask::IGNORED) => {
                Err(DrainError::Watch {
                    dir: self.dir.clone(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "the directory was removed or unmounted",
                    ),
                })
            }
            Some(Ok(_)) => Ok(()),
            Some(Err(source)) => Err(DrainError::Watch {
                dir: self.dir.clone(),
                source,
            }),
            None => Err(DrainError::Watch {
                dir: self.dir.clone(),
                source: std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "inotify closed"),
            }),
        }
    }
}

/// What the drain state file at `path` says now, and why it cannot be read
/// when it cannot.
pub fn read(path: &Path) -> (DrainFile, Option<DrainError>) {
    match DrainState::read(path) {
        Ok(Some(_)) => (DrainFile::Drained, None),
        Ok(None) => (DrainFile::Absent, None),
        Err(e) => (DrainFile::Unreadable, Some(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_recorded_and_a_removed_drain_are_each_seen_as_a_change() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("drain");
        let mut w = StateWatch::new(&path).expect("watch");
        assert_eq!(read(&path).0, DrainFile::Absent);
        DrainState::new(vec![198], crate::clock::wall())
            .write(&path)
            .expect("write");
        w.changed().await.expect("a change");
        assert_eq!(read(&path).0, DrainFile::Drained);
        assert!(DrainState::remove(&path).expect("remove"));
        // Every event of the write may still be queued: the removal is
        // seen once the queue is read to it.
        while read(&path).0 != DrainFile::Absent {
            w.changed().await.expect("a change");
        }
        std::fs::write(&path, "not json").expect("write");
        w.changed().await.expect("a change");
        let (file, err) = read(&path);
        assert_eq!(file, DrainFile::Unreadable);
        assert!(
            err.is_some_and(|e| e.to_string().contains("not a ribbridge drain intent")),
            "the reason names the file's problem"
        );
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_it() {
        let e = StateWatch::new(Path::new("/nonexistent-ribbridge-dir/drain"))
            .expect_err("no directory");
        assert!(e.to_string().contains("/nonexistent-ribbridge-dir"), "{e}");
    }
}
