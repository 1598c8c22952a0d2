//! The browser pool: one task owns the node's Chromium process; environments hold a cheap,
//! cloneable [`BrowserPool`] handle and talk to it over a bounded channel.
//!
//! Restarts are keyed by generation, so that when several environments see the same crash,
//! the browser is restarted once: a restart request for an old generation just returns the
//! current browser.

use super::process::{BrowserOptions, BrowserProcess, LaunchError};
use chromiumoxide::Browser;
use std::sync::Arc;
use tokio::sync::{mpsc, oneshot};

enum Command {
    Get {
        reply: oneshot::Sender<Result<(Arc<Browser>, u64), LaunchError>>,
    },
    Restart {
        seen: u64,
        reply: oneshot::Sender<Result<(Arc<Browser>, u64), LaunchError>>,
    },
    Pid {
        reply: oneshot::Sender<Option<u32>>,
    },
    Launches {
        reply: oneshot::Sender<u64>,
    },
    Alive {
        generation: u64,
        reply: oneshot::Sender<bool>,
    },
    Shutdown {
        reply: oneshot::Sender<()>,
    },
}

/// A handle on the node's browser. Dropping every handle stops the browser.
#[derive(Debug, Clone)]
pub struct BrowserPool {
    commands: mpsc::Sender<Command>,
}

/// The browser could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// The pool has been shut down (or its task is gone).
    #[error("the browser pool has stopped")]
    Stopped,
    /// Chromium could not be launched.
    #[error(transparent)]
    Launch(#[from] LaunchError),
}

impl BrowserPool {
    /// Starts the pool's task (the browser itself starts on first use).
    pub fn new(options: BrowserOptions) -> BrowserPool {
        let (commands, mut inbox) = mpsc::channel::<Command>(16);
        // Fire-and-forget by design: the task ends on `shutdown` or when the last handle is
        // dropped, and kills its browser (awaited) either way.
        crate::actor::spawn_detached("browser pool", async move {
            let mut process: Option<BrowserProcess> = None;
            let mut generation = 0u64;
            while let Some(command) = inbox.recv().await {
                match command {
                    Command::Get { reply } => {
                        let result = ensure(&mut process, &mut generation, &options).await;
                        let _ = reply.send(result);
                    }
                    Command::Restart { seen, reply } => {
                        if seen == generation
                            && let Some(old) = process.take()
                        {
                            tracing::warn!(pid = old.pid(), "restarting chromium");
                            old.shutdown().await;
                        }
                        let result = ensure(&mut process, &mut generation, &options).await;
                        let _ = reply.send(result);
                    }
                    Command::Pid { reply } => {
                        let _ = reply.send(process.as_ref().map(BrowserProcess::pid));
                    }
                    Command::Launches { reply } => {
                        let _ = reply.send(generation);
                    }
                    Command::Alive {
                        generation: asked,
                        reply,
                    } => {
                        let alive = asked == generation
                            && process.as_mut().is_some_and(BrowserProcess::is_alive);
                        let _ = reply.send(alive);
                    }
                    Command::Shutdown { reply } => {
                        if let Some(old) = process.take() {
                            old.shutdown().await;
                        }
                        let _ = reply.send(());
                        // Stopped for good: a late request must not launch a new browser.
                        break;
                    }
                }
            }
            if let Some(old) = process.take() {
                old.shutdown().await;
            }
        });
        BrowserPool { commands }
    }

    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, PoolError> {
        crate::actor::ask(&self.commands, make)
            .await
            .map_err(|_| PoolError::Stopped)
    }

    /// The browser and its generation, launching it if needed.
    pub async fn browser(&self) -> Result<(Arc<Browser>, u64), PoolError> {
        self.ask(|reply| Command::Get { reply })
            .await?
            .map_err(PoolError::Launch)
    }

    /// Restarts the browser if it is still the generation `seen`; returns the current one.
    pub async fn restart(&self, seen: u64) -> Result<(Arc<Browser>, u64), PoolError> {
        self.ask(|reply| Command::Restart { seen, reply })
            .await?
            .map_err(PoolError::Launch)
    }

    /// The browser's PID, if it runs.
    pub async fn pid(&self) -> Option<u32> {
        self.ask(|reply| Command::Pid { reply })
            .await
            .ok()
            .flatten()
    }

    /// How many times Chromium was launched (the first launch and every restart); `None`
    /// once the pool has stopped.
    pub async fn launches(&self) -> Option<u64> {
        self.ask(|reply| Command::Launches { reply }).await.ok()
    }

    /// Whether the browser of this generation is still running.
    pub async fn alive(&self, generation: u64) -> bool {
        self.ask(|reply| Command::Alive { generation, reply })
            .await
            .unwrap_or(false)
    }

    /// Stops the browser (kills its process group) and waits for it.
    pub async fn shutdown(&self) {
        let _ = self.ask(|reply| Command::Shutdown { reply }).await;
    }
}

async fn ensure(
    process: &mut Option<BrowserProcess>,
    generation: &mut u64,
    options: &BrowserOptions,
) -> Result<(Arc<Browser>, u64), LaunchError> {
    if let Some(running) = process.as_mut() {
        if running.is_alive() {
            return Ok((running.browser().clone(), *generation));
        }
        tracing::warn!(pid = running.pid(), "chromium died; starting a new one");
        if let Some(dead) = process.take() {
            dead.shutdown().await;
        }
    }
    let launched = BrowserProcess::launch(options).await?;
    *generation += 1;
    let browser = launched.browser().clone();
    *process = Some(launched);
    Ok((browser, *generation))
}
