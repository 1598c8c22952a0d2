//! A TCP relay on 127.0.0.1 that delays every chunk it forwards by a fixed time plus jitter,
//! in order: the link delay `tc netem` would add, for kernels without `sch_netem` (this
//! machine's). Loss is not emulated: over TCP it shows up as retransmission delay, which a
//! relay cannot reproduce faithfully.
//!
//! [`DelayRelay`] runs on loopback (the cluster bench's `--delay`); [`ThreadRelay`] runs on a
//! thread of its own that entered a host's network namespace (`Lab::delay_relay`).

use rand::{RngExt, SeedableRng};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How a relayed link is slowed down, each direction.
#[derive(Debug, Clone, Copy)]
pub struct Delay {
    /// Added to every chunk.
    pub base: Duration,
    /// Uniform in ±jitter around `base` (never reordering: a chunk waits for the one before).
    pub jitter: Duration,
}

/// A running relay; it stops (and closes its connections) when dropped.
pub struct DelayRelay {
    /// Where it listens.
    pub address: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for DelayRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl DelayRelay {
    /// Relays connections to `target` through a listener on 127.0.0.1, with `delay` in each
    /// direction; `seed` makes the jitter reproducible.
    pub async fn start(target: SocketAddr, delay: Delay, seed: u64) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let task = tokio::spawn(serve(listener, target, delay, seed));
        Ok(DelayRelay { address, task })
    }
}

/// A relay on a thread of its own, with its own runtime: whatever `enter` does to the thread
/// first (entering a network namespace) holds for every socket the relay opens. It stops when
/// dropped.
pub struct ThreadRelay {
    /// Where it listens.
    pub address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ThreadRelay {
    /// Listens on `bind` and relays to `target` with `delay`, after `enter` ran on the thread.
    pub fn spawn(
        bind: SocketAddr,
        target: SocketAddr,
        delay: Delay,
        seed: u64,
        enter: impl FnOnce() -> std::io::Result<()> + Send + 'static,
    ) -> std::io::Result<ThreadRelay> {
        let (ready, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let setup = || -> std::io::Result<_> {
                enter()?;
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let listener = runtime.block_on(TcpListener::bind(bind))?;
                Ok((runtime, listener))
            };
            match setup() {
                Err(error) => {
                    let _ = ready.send(Err(error));
                }
                Ok((runtime, listener)) => {
                    let _ = ready.send(listener.local_addr());
                    runtime.block_on(async move {
                        tokio::select! {
                            _ = serve(listener, target, delay, seed) => {}
                            _ = stopped => {}
                        }
                    });
                }
            }
        });
        let address = ready_rx
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| std::io::Error::other("the relay thread did not start"))??;
        Ok(ThreadRelay {
            address,
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for ThreadRelay {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accepts connections on `listener` and relays each to `target`, until dropped.
async fn serve(listener: TcpListener, target: SocketAddr, delay: Delay, seed: u64) {
    let mut connections = tokio::task::JoinSet::new();
    let mut seed = seed;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((inbound, _)) = accepted else { break };
                seed = seed.wrapping_add(1);
                connections.spawn(relay(inbound, target, delay, seed));
            }
            Some(_) = connections.join_next() => {}
        }
    }
}

async fn relay(inbound: TcpStream, target: SocketAddr, delay: Delay, seed: u64) {
    let Ok(Ok(outbound)) =
        tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(target)).await
    else {
        return;
    };
    let _ = inbound.set_nodelay(true);
    let _ = outbound.set_nodelay(true);
    let (in_read, in_write) = inbound.into_split();
    let (out_read, out_write) = outbound.into_split();
    // Either direction ending ends both: the peers see the connection close, as they would.
    tokio::select! {
        _ = pump(in_read, out_write, delay, seed) => {}
        _ = pump(out_read, in_write, delay, seed ^ 0x5eed) => {}
    }
}

/// Reads chunks from `from` and writes each to `to` once its delay has passed, in order.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Delay,
    seed: u64,
) {
    let (chunks, mut due) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let writer = async move {
        while let Some((at, chunk)) = due.recv().await {
            tokio::time::sleep_until(at).await;
            if to.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    };
    let reader = async move {
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
        let mut last = Instant::now();
        let mut buffer = vec![0u8; 64 * 1024];
        let jitter = delay.jitter.as_micros() as i64;
        // Until the end of the stream (0) or an error.
        while let Ok(n @ 1..) = from.read(&mut buffer).await {
            let offset = if jitter > 0 {
                rng.random_range(-jitter..=jitter)
            } else {
                0
            };
            let wait = (delay.base.as_micros() as i64 + offset).max(0) as u64;
            let at = (Instant::now() + Duration::from_micros(wait)).max(last);
            last = at;
            if chunks.send((at, buffer[..n].to_vec())).is_err() {
                break;
            }
        }
        // Dropping the sender lets the writer flush what is due, then shut down.
    };
    tokio::join!(reader, writer);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_relayed_round_trip_takes_the_delay_twice_and_keeps_the_bytes() {
        let echo = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let target = echo.local_addr().expect("address");
        tokio::spawn(async move {
            if let Ok((mut socket, _)) = echo.accept().await {
                let mut buffer = vec![0u8; 1024];
                while let Ok(n) = socket.read(&mut buffer).await {
                    if n == 0 || socket.write_all(&buffer[..n]).await.is_err() {
                        break;
                    }
                }
            }
        });
        let delay = Delay {
            base: Duration::from_millis(40),
            jitter: Duration::from_millis(10),
        };
        let relay = DelayRelay::start(target, delay, 1).await.expect("relay");
        let mut socket = TcpStream::connect(relay.address).await.expect("connect");
        let started = Instant::now();
        let message: Vec<u8> = (0..200u8).collect();
        socket.write_all(&message).await.expect("write");
        let mut back = vec![0u8; message.len()];
        tokio::time::timeout(Duration::from_secs(5), socket.read_exact(&mut back))
            .await
            .expect("an answer within 5 s")
            .expect("read");
        assert_eq!(back, message);
        // Two directions of at least base − jitter each.
        assert!(started.elapsed() >= Duration::from_millis(60));
    }
}
