//! The one request/reply helper every actor handle in the node uses (the swarm's [`Network`]
//! and the browser pool): send a command carrying a oneshot, await the answer, and name the
//! only way it can fail (the actor's task has stopped).
//!
//! [`Network`]: crate::net::Network

use tokio::sync::{mpsc, oneshot};

/// The actor's task has stopped: its command channel or the reply was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the task has stopped")]
pub struct Stopped;

/// Sends the command `make` builds around a reply channel and waits for the reply. Waits on a
/// full command channel (bounded: the back-pressure is the point).
pub async fn ask<C, T>(
    commands: &mpsc::Sender<C>,
    make: impl FnOnce(oneshot::Sender<T>) -> C,
) -> Result<T, Stopped> {
    let (reply, answer) = oneshot::channel();
    commands.send(make(reply)).await.map_err(|_| Stopped)?;
    answer.await.map_err(|_| Stopped)
}
