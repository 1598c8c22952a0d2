//! `forager node`, `forager queen`, `forager submit` and `forager key`: the cluster over
//! several processes (or machines).
//!
//! `node` starts a node on Chromium, or with `--sim SEED` on a generated site
//! (`forager_simulations::cluster`); `queen` a queen on its data folder, resuming its unfinished
//! tasks. With `--metrics ADDR` each serves Prometheus text built at each scrape from what the
//! owners report (`forager_queen::metrics::serve`). A Chromium node first kills and removes
//! whatever a previous run left in its `DATA/browsers` folder (`reap_stale_browsers`).

use crate::BadInput;
use crate::cli::{NodeArgs, PeerNetworkArgs, QueenArgs, SubmitArgs};
use crate::cluster_key::read_or_create_cluster_key;
use crate::explore::report;
use crate::operator::QueenClient;
use crate::run::{RunOutcome, default_out, write_json};
use crate::task_input::build_task;
use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumFactory, EnvOptions};
use forager_node::index::Replica;
use forager_node::net::{NetworkConfig, NodeIdentity, Role, format_cluster_key};
use forager_node::worker::WorkerConfig;
use forager_protocol::wire::RefusalReason;
use forager_protocol::wire::{Message, TaskState};
use forager_queen::cluster::{spawn_node, spawn_queen};
use forager_queen::config::QueenConfig;
use forager_simulations::cluster::SimFactory;
use forager_simulations::site::SiteParams;
use libp2p::{Multiaddr, PeerId};
use std::collections::HashSet;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn addresses(list: &[String], flag: &str) -> Result<Vec<Multiaddr>, BadInput> {
    list.iter()
        .map(|a| {
            a.parse::<Multiaddr>()
                .map_err(|e| BadInput(format!("{flag} {a:?} is not a multiaddr: {e}")))
        })
        .collect()
}

fn allow_list(list: &[String]) -> Result<Option<HashSet<PeerId>>, BadInput> {
    if list.is_empty() {
        return Ok(None);
    }
    list.iter()
        .map(|p| {
            p.parse::<PeerId>()
                .map_err(|e| BadInput(format!("--allow {p:?} is not a peer id: {e}")))
        })
        .collect::<Result<HashSet<_>, _>>()
        .map(Some)
}

/// The network settings of `forager node` or `queen`: addresses and the allow-list checked
/// (bad ones are bad input), the cluster key read or created in `data`.
fn network_config(
    args: &PeerNetworkArgs,
    data: &Path,
    role: Role,
) -> anyhow::Result<NetworkConfig> {
    Ok(NetworkConfig {
        listen: addresses(&args.listen, "--listen")?,
        bootstrap: addresses(&args.bootstrap, "--bootstrap")?,
        allow: allow_list(&args.allow)?,
        mdns: args.mdns,
        ..NetworkConfig::new(
            role,
            read_or_create_cluster_key(args.cluster_key.as_deref(), data)?,
        )
    })
}

/// Serves the metrics `source` encodes, when asked to.
async fn serve_metrics(
    address: Option<std::net::SocketAddr>,
    source: forager_queen::metrics::MetricsSource,
) -> anyhow::Result<Option<forager_queen::metrics::MetricsServer>> {
    let Some(address) = address else {
        return Ok(None);
    };
    let server = forager_queen::metrics::serve(address, source)
        .await
        .map_err(|e| BadInput(format!("--metrics {address}: cannot listen: {e}")))?;
    Ok(Some(server))
}

/// Prints a peer's id, its metrics endpoint and its addresses (one per line, for scripts),
/// then waits for Ctrl-C or SIGTERM.
async fn announce_and_wait(
    role: &str,
    peer: PeerId,
    addresses: &[Multiaddr],
    metrics: Option<&forager_queen::metrics::MetricsServer>,
) {
    println!("{role} {peer}");
    if let Some(server) = metrics {
        println!("metrics http://{}/metrics", server.address);
    }
    for address in addresses {
        println!("listening {address}");
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    crate::stop_requested().await;
}

/// `forager node`.
pub fn node(args: &NodeArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let config = network_config(&args.network, &args.data, Role::Node)?;
    // A simulated node reads with n-grams; a browser node with the model it is given.
    let model = match args.sim {
        Some(_) => None,
        None => crate::embedder::load(&args.embedder, Some(&args.data.join("embeddings")))?,
    };
    let embedder = match &model {
        Some(model) => forager_node::memory::GoalEmbedder::Model(model.clone()),
        None => forager_node::memory::GoalEmbedder::Ngram,
    };
    runtime.block_on(async {
        let identity = NodeIdentity::load_or_create(&args.data)?;
        let replica = Arc::new(Replica::open_with(
            &args.data.join("index"),
            100_000,
            embedder.id(),
            forager_node::index::Retention {
                failures: args.keep_failures,
                ..Default::default()
            },
        )?);
        let worker = WorkerConfig {
            concurrency: args.concurrency.max(1),
            ..WorkerConfig::default()
        };
        let worker_metrics = worker.metrics.clone();
        let mut pool = None;
        let handle = match args.sim {
            Some(seed) => {
                let factory = SimFactory::new(
                    &SiteParams::default(),
                    seed,
                    args.sim_site,
                    args.sim_latency,
                )
                .map_err(|e| BadInput(e.to_string()))?;
                let factory = match args.sim_pace {
                    Some(ms) => factory.with_pace(Duration::from_millis(ms)),
                    None => factory,
                };
                spawn_node(&identity, config, replica, Arc::new(factory), worker).await?
            }
            None => {
                let profiles = args.data.join("browsers");
                let reaped = forager_node::browser::reap_stale_browsers(&profiles);
                if reaped > 0 {
                    eprintln!("killed {reaped} browser(s) left by a previous run of this node");
                }
                let browser = BrowserPool::new(BrowserOptions {
                    profile_dir: Some(profiles),
                    ..BrowserOptions::default()
                });
                browser.browser().await?;
                pool = Some(browser.clone());
                let factory = ChromiumFactory {
                    pool: browser,
                    options: EnvOptions {
                        allow_reset: args.allow_reset_cmd,
                        ..EnvOptions::default()
                    },
                    model,
                };
                spawn_node(&identity, config, replica, Arc::new(factory), worker).await?
            }
        };
        let source: forager_queen::metrics::MetricsSource = {
            let network = handle.network.clone();
            let replica = handle.replica.clone();
            let pool = pool.clone();
            std::sync::Arc::new(move || {
                let network = network.clone();
                let replica = replica.clone();
                let pool = pool.clone();
                let worker = worker_metrics.clone();
                Box::pin(async move {
                    let browser_launches = match &pool {
                        Some(pool) => pool.launches().await,
                        None => None,
                    };
                    let snapshot = forager_node::metrics::NodeSnapshot {
                        gossip: network.counters().await.unwrap_or_default(),
                        replica_entries: replica.len() as u64,
                        replica_dropped: replica.dropped(),
                        browser_launches,
                    };
                    forager_node::metrics::encode_node(&worker, &snapshot)
                })
            })
        };
        let metrics = serve_metrics(args.metrics, source).await?;
        announce_and_wait("node", handle.peer, &handle.addresses, metrics.as_ref()).await;
        drop(metrics);
        handle.network.shutdown().await;
        if let Some(pool) = pool {
            pool.shutdown().await;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `forager queen`.
pub fn queen(args: &QueenArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let config = network_config(&args.network, &args.data, Role::Queen)?;
    runtime.block_on(async {
        let identity = NodeIdentity::load_or_create(&args.data)?;
        let queen_config = QueenConfig {
            chunk_actions: args.chunk.max(1),
            assignment_deadline: Duration::from_secs(args.assignment_deadline.max(1)),
            keep_all: args.keep_all,
            ended_in_memory: args.ended_in_memory.max(1),
            // Template matching needs no model: the queen's vectors are n-grams.
            memory: match args.no_memory {
                true => None,
                false => Some(forager_queen::memory::WorkflowMemory::open(
                    &args.data.join(forager_queen::memory::WORKFLOWS_DIR),
                    forager_node::memory::GoalEmbedder::Ngram,
                    forager_queen::memory::MemoryLimits::default(),
                )?),
            },
            ..QueenConfig::new(args.data.clone())
        };
        let counters = queen_config.metrics.clone();
        let handle = spawn_queen(&identity, config, queen_config).await?;
        let source: forager_queen::metrics::MetricsSource =
            {
                let queen = handle.queen.clone();
                std::sync::Arc::new(move || {
                    let queen = queen.clone();
                    let counters = counters.clone();
                    Box::pin(async move {
                        let overview = queen.overview().await.unwrap_or(
                            forager_protocol::wire::ClusterOverview {
                                uptime_secs: 0,
                                nodes: Vec::new(),
                                tasks: Vec::new(),
                                more_tasks: 0,
                            },
                        );
                        forager_queen::metrics::encode_queen(&counters, &overview)
                    })
                })
            };
        let metrics = serve_metrics(args.metrics, source).await?;
        announce_and_wait("queen", handle.peer, &handle.addresses, metrics.as_ref()).await;
        drop(metrics);
        handle.queen.shutdown().await;
        handle.network.shutdown().await;
        Ok(ExitCode::SUCCESS)
    })
}

/// `forager submit`.
pub fn submit(args: &SubmitArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    // No recovery here: a submitted run that ends session_expired is refreshed
    // (`forager capsule refresh`) and submitted again.
    let task = build_task(&args.task)?.task;
    let out = args.out.clone().unwrap_or_else(|| default_out("submit"));
    let outcome = runtime.block_on(async {
        let client = QueenClient::start(&args.queen)?;
        let id = match client.ask(Message::Submit(Box::new(task.clone()))).await? {
            Message::Accepted(id) => id,
            Message::Refused {
                reason: RefusalReason::InvalidTask,
                detail,
            } => return Err(BadInput(detail).into()),
            Message::Refused { reason, detail } => {
                anyhow::bail!("the queen refused the task ({reason}): {detail}")
            }
            other => anyhow::bail!("unexpected answer from the queen: {other:?}"),
        };
        eprintln!("task {id} accepted");
        let deadline = Duration::from_secs(u64::from(task.budget.wall_time_secs) + 120);
        let started = Instant::now();
        let result = loop {
            if started.elapsed() > deadline {
                anyhow::bail!("no result from the queen within {} s", deadline.as_secs());
            }
            match client.ask(Message::Status(id)).await? {
                Message::State(state) => match *state {
                    TaskState::Done(result) => break *result,
                    TaskState::Running { .. } => {}
                    TaskState::Unknown => anyhow::bail!("the queen no longer knows task {id}"),
                },
                other => anyhow::bail!("unexpected answer from the queen: {other:?}"),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        client.stop().await;
        std::fs::create_dir_all(&out)?;
        write_json(&out.join("result.json"), &result)?;
        Ok::<_, anyhow::Error>(RunOutcome { result, out })
    })?;
    Ok(report(&outcome, args.json))
}

/// `forager key`.
pub fn key(out: &Path) -> anyhow::Result<ExitCode> {
    if out.exists() {
        return Err(BadInput(format!("{} exists; not overwriting a key", out.display())).into());
    }
    std::fs::write(
        out,
        format_cluster_key(&forager_queen::cluster::random_cluster_key()),
    )?;
    eprintln!("wrote a cluster key to {}", out.display());
    Ok(ExitCode::SUCCESS)
}
