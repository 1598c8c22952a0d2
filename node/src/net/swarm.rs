//! The swarm actor: one task owns the libp2p `Swarm`; callers hold a cheap, cloneable
//! [`Network`] and get [`NetworkEvent`]s on a bounded channel.
//!
//! Transport: TCP, then the private-network handshake (a pre-shared cluster key: peers without
//! it cannot even start Noise), then Noise and Yamux. Behaviours: gossipsub (signed, strict,
//! every message validated by [`Validator`] before it is accepted or forwarded; rejections
//! lower the sender's peer score), request-response over [`MessageCodec`], identify (whose
//! agent string says whether a peer is a node, a queen or a client), and mDNS discovery, off
//! unless [`NetworkConfig::mdns`] asks for it (it multicasts on every non-loopback interface).
//!
//! Only a [`Role::Node`] joins the trajectory topic: a queen or a client has no memory to fill,
//! and would reject honest rollouts as `wrong_dimension` and score their authors down.

use super::codec::{MessageCodec, PROTOCOL};
use super::identity::NodeIdentity;
use super::validate::{Accepted, Validator};
use forager_protocol::wire::{MAX_GOSSIP_BYTES, Message};
use futures::StreamExt;
use libp2p::core::muxing::StreamMuxerBox;
use libp2p::core::transport::upgrade::Version;
use libp2p::gossipsub::{self, IdentTopic, MessageAcceptance, MessageAuthenticity};
use libp2p::pnet::{PnetConfig, PreSharedKey};
use libp2p::request_response::{self, OutboundRequestId, ProtocolSupport, ResponseChannel};
use libp2p::swarm::behaviour::toggle::Toggle;
use libp2p::swarm::dial_opts::DialOpts;
use libp2p::swarm::{NetworkBehaviour, SwarmEvent};
use libp2p::{Multiaddr, PeerId, Swarm, Transport, identify, mdns, noise, tcp, yamux};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// The gossip topic of trajectory announcements.
pub const TOPIC: &str = "forager/trajectories/1";

/// What kind of peer this is (announced through identify).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// A worker with a browser (or a simulated site).
    Node,
    /// The coordinator.
    Queen,
    /// `forager submit`.
    Client,
}

impl Role {
    fn agent(self) -> &'static str {
        match self {
            Role::Node => "forager-node/1",
            Role::Queen => "forager-queen/1",
            Role::Client => "forager-client/1",
        }
    }

    fn of_agent(agent: &str) -> Option<Role> {
        [Role::Node, Role::Queen, Role::Client]
            .into_iter()
            .find(|r| r.agent() == agent)
    }
}

/// How to start the network.
#[derive(Debug, Clone)]
pub struct NetworkConfig {
    /// Addresses to listen on (loopback in tests).
    pub listen: Vec<Multiaddr>,
    /// Peers to dial at start.
    pub bootstrap: Vec<Multiaddr>,
    /// The cluster's pre-shared key.
    pub cluster_key: [u8; 32],
    /// If set, only these peers may stay connected.
    pub allow: Option<HashSet<PeerId>>,
    /// This peer's role.
    pub role: Role,
    /// Announcements per peer per second before rate limiting.
    pub rate_limit: u32,
    /// How long a request may wait for its response.
    pub request_timeout: Duration,
    /// Discover peers on the local network by mDNS and dial them (they still need the
    /// cluster key). Off by default: it multicasts on every non-loopback interface.
    pub mdns: bool,
    /// The embedder of this node's memory: gossip embedded otherwise is refused
    /// (`wrong_dimension`, `other_embedder`). `spawn_node` sets it from the replica.
    pub embedder: forager_protocol::wire::EmbedderId,
}

impl NetworkConfig {
    /// A configuration with defaults for everything but the essentials.
    pub fn new(role: Role, cluster_key: [u8; 32]) -> NetworkConfig {
        NetworkConfig {
            listen: Vec::new(),
            bootstrap: Vec::new(),
            cluster_key,
            allow: None,
            role,
            rate_limit: 500,
            request_timeout: Duration::from_secs(600),
            mdns: false,
            embedder: crate::memory::ngram_id(),
        }
    }
}

/// Why a network operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// The swarm could not be built.
    #[error("cannot start the network: {0}")]
    Start(String),
    /// The network task has stopped.
    #[error("the network has stopped")]
    Stopped,
    /// A request failed (peer unreachable, timed out, connection closed, bad response).
    #[error("request to {peer} failed: {reason}")]
    Request {
        /// The peer.
        peer: PeerId,
        /// Why.
        reason: String,
    },
    /// Publishing failed (no peers subscribed, too large, …).
    #[error("publish failed: {0}")]
    Publish(String),
    /// Dialing failed.
    #[error("dial failed: {0}")]
    Dial(String),
}

/// An incoming request; answer it with [`Network::respond`].
#[derive(Debug)]
pub struct Responder {
    id: u64,
}

/// Something the network tells its owner.
#[derive(Debug)]
pub enum NetworkEvent {
    /// A peer asks something.
    Request {
        /// Who.
        peer: PeerId,
        /// What.
        message: Box<Message>,
        /// Where the answer goes.
        responder: Responder,
    },
    /// A gossiped announcement passed validation.
    Announcement(Box<Accepted>),
    /// A peer connected and said what it is.
    PeerIdentified {
        /// Who.
        peer: PeerId,
        /// Its role.
        role: Role,
        /// The address its first connection came from (or went to).
        address: Option<Multiaddr>,
        /// Where it says it listens (from identify), each with `/p2p/<its id>`.
        listen: Vec<Multiaddr>,
    },
    /// A peer's last connection closed.
    PeerGone(PeerId),
    /// Listening on an address.
    Listening(Multiaddr),
}

#[derive(NetworkBehaviour)]
struct Behaviour {
    gossipsub: gossipsub::Behaviour,
    rpc: request_response::Behaviour<MessageCodec>,
    identify: identify::Behaviour,
    mdns: Toggle<mdns::tokio::Behaviour>,
}

enum Command {
    Publish {
        data: Vec<u8>,
        reply: oneshot::Sender<Result<(), NetError>>,
    },
    Request {
        peer: PeerId,
        message: Box<Message>,
        reply: oneshot::Sender<Result<Message, NetError>>,
    },
    Respond {
        id: u64,
        message: Box<Message>,
    },
    Dial {
        address: Multiaddr,
        reply: oneshot::Sender<Result<(), NetError>>,
    },
    Listeners {
        reply: oneshot::Sender<Vec<Multiaddr>>,
    },
    Peers {
        reply: oneshot::Sender<HashMap<PeerId, Role>>,
    },
    Counters {
        reply: oneshot::Sender<GossipCounters>,
    },
    Shutdown,
}

/// Most listen addresses taken from a peer's identify message.
const MAX_LISTEN_ADDRESSES: usize = 8;

/// `address` ending in `/p2p/<peer>` (once).
fn with_peer(address: Multiaddr, peer: PeerId) -> Multiaddr {
    match address.iter().last() {
        Some(libp2p::multiaddr::Protocol::P2p(_)) => address,
        _ => address.with(libp2p::multiaddr::Protocol::P2p(peer)),
    }
}

/// How often a peer checks that its bootstrap peers are connected.
const REDIAL_CHECK: Duration = Duration::from_secs(2);

/// The longest wait between two dials of a bootstrap peer that stays away.
const REDIAL_MAX_WAIT: Duration = Duration::from_secs(16);

/// Gossip validation counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GossipCounters {
    /// Accepted announcements.
    pub accepted: u64,
    /// Rejected ones, by reason.
    pub rejected: BTreeMap<&'static str, u64>,
    /// Bytes of accepted announcement data.
    pub accepted_bytes: u64,
}

/// A handle on the network task. Cheap to clone; the task stops when every handle is dropped
/// or on [`Network::shutdown`].
#[derive(Debug, Clone)]
pub struct Network {
    commands: mpsc::Sender<Command>,
    local: PeerId,
}

impl Network {
    /// Builds the swarm, starts listening and dialing, and spawns its task.
    pub fn start(
        identity: &NodeIdentity,
        config: NetworkConfig,
    ) -> Result<(Network, mpsc::Receiver<NetworkEvent>), NetError> {
        let psk = PreSharedKey::new(config.cluster_key);
        let keypair = identity.keypair().clone();
        let start = |e: &dyn std::fmt::Display| NetError::Start(e.to_string());
        let mut swarm = libp2p::SwarmBuilder::with_existing_identity(keypair)
            .with_tokio()
            .with_other_transport(|key| {
                let noise = noise::Config::new(key)?;
                let transport = tcp::tokio::Transport::new(tcp::Config::default().nodelay(true))
                    .and_then(move |socket, _| PnetConfig::new(psk).handshake(socket))
                    .upgrade(Version::V1Lazy)
                    .authenticate(noise)
                    .multiplex(yamux::Config::default())
                    .timeout(Duration::from_secs(20))
                    .map(|(peer, muxer), _| (peer, StreamMuxerBox::new(muxer)));
                Ok(transport)
            })
            .map_err(|e| start(&e))?
            .with_behaviour(|key| {
                let gossip_config = gossipsub::ConfigBuilder::default()
                    .validation_mode(gossipsub::ValidationMode::Strict)
                    .validate_messages()
                    .max_transmit_size(MAX_GOSSIP_BYTES + 1024)
                    .heartbeat_interval(Duration::from_millis(500))
                    .message_id_fn(|message: &gossipsub::Message| {
                        // Content addressing with a cryptographic hash: the same payload is the
                        // same message, and no one can make two payloads collide.
                        gossipsub::MessageId::from(Sha256::digest(&message.data).to_vec())
                    })
                    .build()
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                let mut gossipsub = gossipsub::Behaviour::new(
                    MessageAuthenticity::Signed(key.clone()),
                    gossip_config,
                )
                .map_err(std::io::Error::other)?;
                let (params, thresholds) = peer_scoring();
                gossipsub
                    .with_peer_score(params, thresholds)
                    .map_err(std::io::Error::other)?;
                let rpc = request_response::Behaviour::with_codec(
                    MessageCodec,
                    [(PROTOCOL, ProtocolSupport::Full)],
                    request_response::Config::default()
                        .with_request_timeout(config.request_timeout),
                );
                let identify = identify::Behaviour::new(
                    identify::Config::new("/forager/id/1".into(), key.public())
                        .with_agent_version(config.role.agent().into()),
                );
                let mdns = if config.mdns {
                    Some(mdns::tokio::Behaviour::new(
                        mdns::Config::default(),
                        key.public().to_peer_id(),
                    )?)
                } else {
                    None
                };
                Ok(Behaviour {
                    gossipsub,
                    rpc,
                    identify,
                    mdns: Toggle::from(mdns),
                })
            })
            .map_err(|e| start(&e))?
            .with_swarm_config(|c| c.with_idle_connection_timeout(Duration::from_secs(3600)))
            .build();
        // Only nodes keep the memory. A queen or a client that joined the topic would check
        // every rollout against an embedder it does not have (it has none), reject a node's
        // honest announcements as `wrong_dimension` and score the node down for them.
        if config.role == Role::Node {
            swarm
                .behaviour_mut()
                .gossipsub
                .subscribe(&IdentTopic::new(TOPIC))
                .map_err(|e| start(&e))?;
        }
        for address in &config.listen {
            swarm.listen_on(address.clone()).map_err(|e| start(&e))?;
        }
        for address in &config.bootstrap {
            swarm.dial(address.clone()).map_err(|e| start(&e))?;
        }
        // Bootstrap peers with a known id are dialled again whenever their connection is gone
        // (a queen restarted, a link back up).
        let bootstrap: Vec<(PeerId, Multiaddr)> = config
            .bootstrap
            .iter()
            .filter_map(|address| {
                address.iter().find_map(|p| match p {
                    libp2p::multiaddr::Protocol::P2p(peer) => Some((peer, address.clone())),
                    _ => None,
                })
            })
            .collect();
        let local = *swarm.local_peer_id();
        let (commands, inbox) = mpsc::channel(256);
        let (events, outbox) = mpsc::channel(1024);
        let actor = Actor {
            swarm,
            inbox,
            events,
            validator: Validator::new(config.rate_limit, Duration::from_secs(1))
                .for_embedder(config.embedder.clone()),
            allow: config.allow,
            pending: HashMap::new(),
            responders: HashMap::new(),
            next_responder: 0,
            dials: Vec::new(),
            roles: HashMap::new(),
            remotes: HashMap::new(),
            accepted_bytes: 0,
            bootstrap,
            redialled: HashMap::new(),
        };
        // Fire-and-forget by design: the actor ends on `shutdown` or when the last `Network`
        // handle is dropped, and owns nothing that outlives it.
        crate::actor::spawn_detached("swarm", actor.run());
        Ok((Network { commands, local }, outbox))
    }

    /// This peer's id.
    pub fn local_peer_id(&self) -> PeerId {
        self.local
    }

    async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Result<T, NetError> {
        crate::actor::ask(&self.commands, make)
            .await
            .map_err(|_| NetError::Stopped)
    }

    /// Publishes gossip data on the trajectory topic.
    pub async fn publish(&self, data: Vec<u8>) -> Result<(), NetError> {
        self.ask(|reply| Command::Publish { data, reply }).await?
    }

    /// Sends a request and waits for the response (bounded by the request timeout).
    pub async fn request(&self, peer: PeerId, message: Message) -> Result<Message, NetError> {
        self.ask(|reply| Command::Request {
            peer,
            message: Box::new(message),
            reply,
        })
        .await?
    }

    /// Answers an incoming request.
    pub async fn respond(&self, responder: Responder, message: Message) -> Result<(), NetError> {
        self.commands
            .send(Command::Respond {
                id: responder.id,
                message: Box::new(message),
            })
            .await
            .map_err(|_| NetError::Stopped)
    }

    /// Dials an address and waits until the connection is up.
    pub async fn dial(&self, address: Multiaddr) -> Result<(), NetError> {
        self.ask(|reply| Command::Dial { address, reply }).await?
    }

    /// The addresses this peer listens on.
    pub async fn listeners(&self) -> Result<Vec<Multiaddr>, NetError> {
        self.ask(|reply| Command::Listeners { reply }).await
    }

    /// Connected peers that have identified themselves, with their roles.
    pub async fn peers(&self) -> Result<HashMap<PeerId, Role>, NetError> {
        self.ask(|reply| Command::Peers { reply }).await
    }

    /// Gossip validation counters.
    pub async fn counters(&self) -> Result<GossipCounters, NetError> {
        self.ask(|reply| Command::Counters { reply }).await
    }

    /// Stops the network task (closing every connection).
    pub async fn shutdown(&self) {
        let _ = self.commands.send(Command::Shutdown).await;
    }

    /// Waits until a listening address is known (bounded).
    pub async fn wait_listening(&self, limit: Duration) -> Result<Vec<Multiaddr>, NetError> {
        let started = Instant::now();
        loop {
            let addresses = self.listeners().await?;
            if !addresses.is_empty() {
                return Ok(addresses);
            }
            if started.elapsed() > limit {
                return Err(NetError::Start("no listening address".into()));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn peer_scoring() -> (gossipsub::PeerScoreParams, gossipsub::PeerScoreThresholds) {
    let mut params = gossipsub::PeerScoreParams {
        // Every forager test runs many peers on 127.0.0.1: sharing an IP is normal here.
        ip_colocation_factor_weight: 0.0,
        ..Default::default()
    };
    let topic = gossipsub::TopicScoreParams {
        invalid_message_deliveries_weight: -100.0,
        invalid_message_deliveries_decay: 0.9,
        ..Default::default()
    };
    params.topics.insert(IdentTopic::new(TOPIC).hash(), topic);
    (params, gossipsub::PeerScoreThresholds::default())
}

struct Actor {
    swarm: Swarm<Behaviour>,
    inbox: mpsc::Receiver<Command>,
    events: mpsc::Sender<NetworkEvent>,
    validator: Validator,
    allow: Option<HashSet<PeerId>>,
    pending: HashMap<OutboundRequestId, oneshot::Sender<Result<Message, NetError>>>,
    responders: HashMap<u64, ResponseChannel<Message>>,
    next_responder: u64,
    dials: Vec<(Multiaddr, oneshot::Sender<Result<(), NetError>>)>,
    roles: HashMap<PeerId, Role>,
    /// Where each connected peer's first connection goes.
    remotes: HashMap<PeerId, Multiaddr>,
    /// Bootstrap peers (those named with their id), dialled again while disconnected.
    bootstrap: Vec<(PeerId, Multiaddr)>,
    /// When each was last dialled again, and the wait before the next try.
    redialled: HashMap<PeerId, (std::time::Instant, Duration)>,
    accepted_bytes: u64,
}

impl Actor {
    async fn run(mut self) {
        let mut redial = tokio::time::interval(REDIAL_CHECK);
        redial.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                command = self.inbox.recv() => match command {
                    Some(Command::Shutdown) | None => break,
                    Some(command) => self.on_command(command),
                },
                event = self.swarm.select_next_some() => self.on_event(event).await,
                _ = redial.tick(), if !self.bootstrap.is_empty() => self.redial(),
            }
        }
        tracing::debug!(peer = %self.swarm.local_peer_id(), "network stopped");
    }

    /// Dials every bootstrap peer that is not connected, each at most once per its wait
    /// (doubling from [`REDIAL_CHECK`] to [`REDIAL_MAX_WAIT`] while it stays away).
    fn redial(&mut self) {
        let now = std::time::Instant::now();
        for (peer, address) in &self.bootstrap {
            if self.swarm.is_connected(peer) {
                self.redialled.remove(peer);
                continue;
            }
            let due = self
                .redialled
                .get(peer)
                .is_none_or(|(last, wait)| now.duration_since(*last) >= *wait);
            if !due {
                continue;
            }
            let wait = self
                .redialled
                .get(peer)
                .map_or(REDIAL_CHECK, |(_, wait)| (*wait * 2).min(REDIAL_MAX_WAIT));
            self.redialled.insert(*peer, (now, wait));
            tracing::debug!(%peer, %address, "dialling a bootstrap peer again");
            if let Err(error) = self.swarm.dial(address.clone()) {
                tracing::debug!(%peer, %error, "cannot dial a bootstrap peer");
            }
        }
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Publish { data, reply } => {
                let result = self
                    .swarm
                    .behaviour_mut()
                    .gossipsub
                    .publish(IdentTopic::new(TOPIC), data)
                    .map(|_| ())
                    .map_err(|e| NetError::Publish(e.to_string()));
                let _ = reply.send(result);
            }
            Command::Request {
                peer,
                message,
                reply,
            } => {
                let id = self.swarm.behaviour_mut().rpc.send_request(&peer, *message);
                self.pending.insert(id, reply);
            }
            Command::Respond { id, message } => {
                if let Some(channel) = self.responders.remove(&id)
                    && self
                        .swarm
                        .behaviour_mut()
                        .rpc
                        .send_response(channel, *message)
                        .is_err()
                {
                    tracing::debug!("the requester went away before the response");
                }
            }
            Command::Dial { address, reply } => match self.swarm.dial(address.clone()) {
                Ok(()) => self.dials.push((address, reply)),
                Err(e) => {
                    let _ = reply.send(Err(NetError::Dial(e.to_string())));
                }
            },
            Command::Listeners { reply } => {
                let _ = reply.send(self.swarm.listeners().cloned().collect());
            }
            Command::Peers { reply } => {
                let connected: HashMap<PeerId, Role> = self
                    .roles
                    .iter()
                    .filter(|(p, _)| self.swarm.is_connected(p))
                    .map(|(p, r)| (*p, *r))
                    .collect();
                let _ = reply.send(connected);
            }
            Command::Counters { reply } => {
                let _ = reply.send(GossipCounters {
                    accepted: self.validator.accepted(),
                    rejected: self.validator.rejected().clone(),
                    accepted_bytes: self.accepted_bytes,
                });
            }
            Command::Shutdown => {}
        }
    }

    async fn emit(&mut self, event: NetworkEvent) {
        // Bounded: a slow owner slows the network rather than growing memory.
        let _ = self.events.send(event).await;
    }

    async fn on_event(&mut self, event: SwarmEvent<BehaviourEvent>) {
        match event {
            SwarmEvent::NewListenAddr { address, .. } => {
                self.emit(NetworkEvent::Listening(address)).await;
            }
            SwarmEvent::ConnectionEstablished {
                peer_id, endpoint, ..
            } => {
                if self
                    .allow
                    .as_ref()
                    .is_some_and(|allow| !allow.contains(&peer_id))
                {
                    tracing::warn!(peer = %peer_id, "peer not on the allow-list; disconnecting");
                    let _ = self.swarm.disconnect_peer_id(peer_id);
                    return;
                }
                let address = endpoint.get_remote_address().clone();
                self.remotes
                    .entry(peer_id)
                    .or_insert_with(|| address.clone());
                let mut still_waiting = Vec::new();
                for (dialed, reply) in std::mem::take(&mut self.dials) {
                    if endpoint.is_dialer() && same_host_port(&dialed, &address) {
                        let _ = reply.send(Ok(()));
                    } else {
                        still_waiting.push((dialed, reply));
                    }
                }
                self.dials = still_waiting;
            }
            SwarmEvent::OutgoingConnectionError { error, .. } => {
                for (_, reply) in std::mem::take(&mut self.dials) {
                    let _ = reply.send(Err(NetError::Dial(error.to_string())));
                }
            }
            SwarmEvent::ConnectionClosed {
                peer_id,
                num_established: 0,
                ..
            } => {
                self.roles.remove(&peer_id);
                self.remotes.remove(&peer_id);
                self.emit(NetworkEvent::PeerGone(peer_id)).await;
            }
            SwarmEvent::Behaviour(BehaviourEvent::Identify(identify::Event::Received {
                peer_id,
                info,
                ..
            })) => {
                if let Some(role) = Role::of_agent(&info.agent_version) {
                    let known = self.roles.insert(peer_id, role).is_some();
                    if !known {
                        tracing::info!(peer = %peer_id, ?role, "peer identified");
                        self.emit(NetworkEvent::PeerIdentified {
                            peer: peer_id,
                            role,
                            address: self.remotes.get(&peer_id).cloned(),
                            listen: info
                                .listen_addrs
                                .iter()
                                .take(MAX_LISTEN_ADDRESSES)
                                .map(|a| with_peer(a.clone(), peer_id))
                                .collect(),
                        })
                        .await;
                    }
                }
            }
            SwarmEvent::Behaviour(BehaviourEvent::Gossipsub(gossipsub::Event::Message {
                propagation_source,
                message_id,
                message,
            })) => {
                let verdict = self.validator.check(
                    message.source,
                    propagation_source,
                    &message.data,
                    Instant::now(),
                );
                let acceptance = match &verdict {
                    Ok(_) => MessageAcceptance::Accept,
                    Err(rejection) => {
                        tracing::info!(
                            peer = %propagation_source,
                            reason = rejection.as_str(),
                            "rejected a gossiped announcement"
                        );
                        MessageAcceptance::Reject
                    }
                };
                self.swarm
                    .behaviour_mut()
                    .gossipsub
                    .report_message_validation_result(&message_id, &propagation_source, acceptance);
                if let Ok(accepted) = verdict {
                    self.accepted_bytes += message.data.len() as u64;
                    self.emit(NetworkEvent::Announcement(Box::new(accepted)))
                        .await;
                }
            }
            SwarmEvent::Behaviour(BehaviourEvent::Rpc(event)) => self.on_rpc(event).await,
            SwarmEvent::Behaviour(BehaviourEvent::Mdns(mdns::Event::Discovered(found))) => {
                let mut by_peer: HashMap<PeerId, Vec<Multiaddr>> = HashMap::new();
                for (peer, address) in found {
                    by_peer.entry(peer).or_default().push(address);
                }
                for (peer, addresses) in by_peer {
                    if peer == *self.swarm.local_peer_id() || self.swarm.is_connected(&peer) {
                        continue;
                    }
                    tracing::info!(peer = %peer, ?addresses, "discovered by mDNS; dialing");
                    let options = DialOpts::peer_id(peer).addresses(addresses).build();
                    if let Err(e) = self.swarm.dial(options) {
                        tracing::debug!(peer = %peer, error = %e, "mDNS dial not made");
                    }
                }
            }
            _ => {}
        }
    }

    async fn on_rpc(&mut self, event: request_response::Event<Message, Message>) {
        match event {
            request_response::Event::Message { peer, message, .. } => match message {
                request_response::Message::Request {
                    request, channel, ..
                } => {
                    let id = self.next_responder;
                    self.next_responder += 1;
                    self.responders.insert(id, channel);
                    self.emit(NetworkEvent::Request {
                        peer,
                        message: Box::new(request),
                        responder: Responder { id },
                    })
                    .await;
                }
                request_response::Message::Response {
                    request_id,
                    response,
                } => {
                    if let Some(reply) = self.pending.remove(&request_id) {
                        let _ = reply.send(Ok(response));
                    }
                }
            },
            request_response::Event::OutboundFailure {
                peer,
                request_id,
                error,
                ..
            } => {
                if let Some(reply) = self.pending.remove(&request_id) {
                    let _ = reply.send(Err(NetError::Request {
                        peer,
                        reason: error.to_string(),
                    }));
                }
            }
            request_response::Event::InboundFailure { peer, error, .. } => {
                tracing::debug!(%peer, %error, "inbound request failed");
            }
            request_response::Event::ResponseSent { .. } => {}
        }
    }
}

/// Whether two addresses name the same IP and TCP port (the remote address of a connection
/// we dialed may carry a `/p2p/…` suffix the dialed one lacks).
fn same_host_port(a: &Multiaddr, b: &Multiaddr) -> bool {
    use libp2p::multiaddr::Protocol;
    let key = |m: &Multiaddr| {
        m.iter()
            .filter(|p| matches!(p, Protocol::Ip4(_) | Protocol::Ip6(_) | Protocol::Tcp(_)))
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
    };
    key(a) == key(b)
}
