//! The one request/reply helper every actor handle in the node uses (the swarm's [`Network`]
//! and the browser pool): send a command carrying a oneshot, await the answer, and name the
//! only way it can fail (the actor's task has stopped). And [`spawn_detached`], the one way
//! the workspace starts a task nobody awaits: its panic is logged, never lost.
//!
//! [`Network`]: crate::net::Network

use futures::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
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

/// Starts a task that no one awaits: an actor that ends with its last handle (the swarm, the
/// browser pool, the queen), a pipe drained until it closes, a command bounded by its own
/// timeout. Should it panic, the panic is logged as an error naming `name` instead of ending
/// the task unseen; the program goes on as it would have.
pub fn spawn_detached<F>(name: &'static str, future: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        if let Err(message) = caught(future).await {
            tracing::error!(task = name, %message, "a detached task panicked");
        }
    });
}

/// Runs `future` to its end; its panic's message, if it panicked.
async fn caught<F: Future<Output = ()>>(future: F) -> Result<(), String> {
    // The future is not touched again after a panic: nothing observes a broken invariant.
    AssertUnwindSafe(future)
        .catch_unwind()
        .await
        .map_err(|panic| {
            panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_caught_with_its_message() {
        assert_eq!(caught(async {}).await, Ok(()));
        assert_eq!(
            caught(async { panic!("on purpose") }).await,
            Err("on purpose".to_owned())
        );
        let n = 3;
        assert_eq!(
            caught(async move { panic!("{n} times") }).await,
            Err("3 times".to_owned())
        );
    }
}
