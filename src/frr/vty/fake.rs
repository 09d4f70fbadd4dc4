//! A fake daemon's vty socket, for tests and fakes only (the `testing`
//! feature, which the crate's own tests enable): it reads commands as a
//! daemon does (NUL-terminated, any number of sessions), answers each with
//! what the test's function returns, and records every command it read,
//! `enable` included, before it answers it.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

use super::codec::{VtyReply, VtyStatus, decode_command, encode_reply};

/// A fake vty server: a task accepting on a unix socket and a task per
/// session, until the runtime ends.
#[derive(Debug, Clone, Default)]
pub struct FakeVty {
    commands: Arc<Mutex<Vec<String>>>,
}

impl FakeVty {
    /// Binds `path` and answers each command with `answer(command)`. Call
    /// it inside a tokio runtime.
    pub fn serve<F>(path: &Path, answer: F) -> std::io::Result<FakeVty>
    where
        F: Fn(&str) -> VtyReply + Send + Sync + 'static,
    {
        let listener = UnixListener::bind(path)?;
        let fake = FakeVty::default();
        let log = Arc::clone(&fake.commands);
        let answer = Arc::new(answer);
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let log = Arc::clone(&log);
                let answer = Arc::clone(&answer);
                tokio::spawn(async move {
                    let mut buf = BytesMut::new();
                    loop {
                        while let Some(cmd) = decode_command(&mut buf) {
                            let reply = answer(&cmd);
                            log.lock().unwrap_or_else(PoisonError::into_inner).push(cmd);
                            let mut out = BytesMut::new();
                            encode_reply(&reply, &mut out).expect("a reply without NUL");
                            if s.write_all(&out).await.is_err() {
                                return;
                            }
                        }
                        match s.read_buf(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        }
                    }
                });
            }
        });
        Ok(fake)
    }

    /// Every command read so far, in the order read.
    pub fn commands(&self) -> Vec<String> {
        self.commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// A successful reply with `text`.
pub fn success(text: impl Into<String>) -> VtyReply {
    VtyReply {
        status: VtyStatus::Success,
        text: text.into(),
    }
}
