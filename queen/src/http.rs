//! Serving an axum router on an ephemeral port of 127.0.0.1 until told to stop: the demo site
//! of `forager demo` and the fixture sites of the end-to-end tests.

use std::net::SocketAddr;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A router served on loopback. Dropping it stops the server too (without waiting).
#[derive(Debug)]
pub struct LoopbackServer {
    /// Where it listens.
    pub address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl LoopbackServer {
    /// Binds 127.0.0.1 on a port the system picks and serves `router` there.
    pub async fn start(router: axum::Router) -> std::io::Result<LoopbackServer> {
        LoopbackServer::start_on(std::net::Ipv4Addr::LOCALHOST, router).await
    }

    /// The same on another loopback address (127.0.0.0/8: a second host name, so a second
    /// cookie domain); any other address is refused.
    pub async fn start_on(
        ip: std::net::Ipv4Addr,
        router: axum::Router,
    ) -> std::io::Result<LoopbackServer> {
        if !ip.is_loopback() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{ip} is not a loopback address"),
            ));
        }
        let listener = tokio::net::TcpListener::bind((ip, 0)).await?;
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
            if let Err(error) = served {
                tracing::error!(%error, %address, "the loopback server stopped");
            }
        });
        Ok(LoopbackServer {
            address,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// Stops it and waits until open connections are done.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
