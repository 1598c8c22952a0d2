//! How a queen works: where it writes, how it hands out work, what it signs and keeps. The
//! actor ([`crate::actor`]) and each task's rules (`crate::task`) read it.

use ed25519_dalek::SigningKey;
use forager_node::search::Widening;
use std::path::PathBuf;
use std::time::Duration;

/// How the queen works.
#[derive(Debug, Clone)]
pub struct QueenConfig {
    /// Where journals and results go.
    pub data: PathBuf,
    /// Actions per assignment: small enough to re-balance often, large enough to amortise.
    pub chunk_actions: u32,
    /// How long a node may take for one assignment before its branch is reassigned.
    pub assignment_deadline: Duration,
    /// Progressive widening at the top of the tree, over the search iterations the branches
    /// reported (plus those in flight): the same rule and defaults as a node's own tree, so the
    /// queen's root opens branches as fast as a single search's root would.
    pub widening: Widening,
    /// The queen's identity key: it signs each winning trajectory (none written without it).
    pub signing_key: Option<SigningKey>,
    /// Keep every finished trajectory (every path the searches reached), as the nodes signed
    /// them, in `rollouts.json` beside the result.
    pub keep_all: bool,
    /// What the queen counts for `--metrics` (clones share the counters).
    pub metrics: crate::metrics::QueenMetrics,
    /// Ended tasks kept in memory (the newest), for `status`, the overview and the nodes'
    /// distrust; older ones are answered from their folders on disk.
    pub ended_in_memory: usize,
    /// The workflow memory: verified passes are kept there, and a task of the same kind is
    /// tried first as a remembered workflow with its own values (`None`: neither).
    pub memory: Option<crate::memory::WorkflowMemory>,
}

impl QueenConfig {
    /// Defaults, with journals under `data`.
    pub fn new(data: PathBuf) -> QueenConfig {
        QueenConfig {
            data,
            chunk_actions: 20,
            assignment_deadline: Duration::from_secs(180),
            widening: Widening::default(),
            signing_key: None,
            keep_all: false,
            metrics: crate::metrics::QueenMetrics::default(),
            ended_in_memory: DEFAULT_ENDED_IN_MEMORY,
            memory: None,
        }
    }
}

/// Ended tasks a queen keeps in memory by default: a few KB each.
pub const DEFAULT_ENDED_IN_MEMORY: usize = 256;
