//! The memory that pays: successful trajectories, found again by their goal, vote for the
//! action they took next at the page the search stands on.
//!
//! A trajectory is remembered as the vector of its goal (from the node's [`GoalEmbedder`]: the
//! sentence model, or hashed n-grams without one), its task family (the start URL's origin
//! unless the task names another) and its trace: per step, the page's location, the page's
//! fingerprint family and the key of the action taken there. For a task, [`TaskMemory`]
//! recalls the successful trajectories of the same family whose goals are nearest to its own
//! goal; at a state, each recalled trace that passed through the same location (or, weaker, a
//! page of the same fingerprint family) votes for the action it took next, weighted by how
//! close its goal is. The engine raises the priors of voted actions ([`raise_priors`]: the
//! plausible ones among them are tried first) and uses the
//! vote as the replay bonus R in the score. Memory from another site never votes: the family
//! keys it, and location and page family must match too.
//!
//! [`Recall`] finds the trajectories: [`FlatMemory`] by brute force, the replica
//! (`crate::index`) by HNSW. A vote is weighted by goal similarity ([`GOAL_FLOOR`] → 0,
//! [`GOAL_SURE`] → 1) and counts [`FAMILY_MATCH`] where only the page's family matches;
//! [`raise_priors`] multiplies a voted prior by 1 + [`MEMORY_BOOST`] × the vote, so a remembered
//! action the eyes find implausible is still not tried first.

use crate::embed::text_features;
use crate::environment::StateInfo;
use crate::model::SentenceModel;
use forager_protocol::digest::Digest32;
use forager_protocol::trajectory::{TrajectoryVector, VECTOR_DIM, VectorError};
use forager_protocol::wire::{EmbedderId, TraceStep};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How goals are embedded for the memory: the node's policy reader, so that peers with the
/// same reader share one vector space.
#[derive(Clone, Default)]
pub enum GoalEmbedder {
    /// Hashed word and trigram features ([`VECTOR_DIM`] dimensions).
    #[default]
    Ngram,
    /// A sentence model.
    Model(Arc<SentenceModel>),
}

impl std::fmt::Debug for GoalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.id())
    }
}

/// Why a goal could not be embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The model failed.
    #[error(transparent)]
    Model(#[from] crate::model::ModelError),
    /// The vector is not valid (an empty goal).
    #[error(transparent)]
    Vector(#[from] VectorError),
}

/// The n-gram embedder's identity.
pub fn ngram_id() -> EmbedderId {
    EmbedderId {
        name: "ngram".into(),
        digest: Digest32::of(b"forager/ngram/fnv1a-words-and-trigrams/256/v1"),
        dim: VECTOR_DIM as u32,
    }
}

impl GoalEmbedder {
    /// Its identity, which peers compare.
    pub fn id(&self) -> EmbedderId {
        match self {
            GoalEmbedder::Ngram => ngram_id(),
            GoalEmbedder::Model(model) => EmbedderId {
                name: model.name().to_owned(),
                digest: model.digest(),
                dim: model.dim() as u32,
            },
        }
    }

    /// The unit vector of a goal. CPU work (milliseconds with the model, cached by text).
    pub fn embed(&self, goal: &str) -> Result<TrajectoryVector, EmbedError> {
        match self {
            GoalEmbedder::Ngram => Ok(TrajectoryVector::normalise(text_features(goal).to_dense())?),
            GoalEmbedder::Model(model) => {
                let vector = model.embed(&[goal])?.remove(0);
                Ok(TrajectoryVector::normalise(vector.to_vec())?)
            }
        }
    }
}

/// A remembered successful trajectory, as recalled.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// Cosine of its goal to the asking goal.
    pub similarity: f32,
    /// Where it went and what it did.
    pub trace: Arc<[TraceStep]>,
}

/// Where successful trajectories are found again by goal.
pub trait Recall: Send + Sync {
    /// Up to `k` successful trajectories of `family` whose goal vectors are nearest to `goal`.
    fn recall(&self, family: &str, goal: &TrajectoryVector, k: usize) -> Vec<Recalled>;
}

/// What the engine asks of a memory: the votes of remembered successes for the actions at a
/// state, by action key, each in (0, 1].
pub trait ReplayMemory: Send + Sync {
    /// The votes at `state` (empty when nothing remembered passed there).
    fn votes(&self, state: &StateInfo) -> HashMap<u64, f64>;
}

/// A memory that knows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoMemory;

impl ReplayMemory for NoMemory {
    fn votes(&self, _state: &StateInfo) -> HashMap<u64, f64> {
        HashMap::new()
    }
}

/// Goal cosines at or below this say the goals are unrelated (no vote).
pub const GOAL_FLOOR: f32 = 0.3;
/// A goal cosine at which a trajectory votes with full weight.
pub const GOAL_SURE: f32 = 0.8;
/// A match of the page's kind (fingerprint family) rather than its location counts this much.
pub const FAMILY_MATCH: f64 = 0.6;
/// Trajectories recalled per task.
pub const RECALLED: usize = 16;
/// How far below the nearest goal a recalled trajectory may be and still vote.
pub const NEAREST_MARGIN: f32 = 0.05;

/// The memory of one task: the trajectories recalled for its goal, voting at each state.
#[derive(Debug, Clone, Default)]
pub struct TaskMemory {
    recalled: Vec<(f64, Arc<[TraceStep]>)>,
}

impl TaskMemory {
    /// Recalls, from `store`, the successes of `family` nearest to `goal`: only the nearest
    /// goal (and those within [`NEAREST_MARGIN`] of it) votes. Other needs on the same site
    /// are often nearly as close (measured with the sentence model on the documentation
    /// benchmark's paraphrases: their own goal was the nearest in 40 of 48, and above 0.3 the
    /// nearest wrong one came within 0.1 of the right one often), and their routes lead
    /// elsewhere.
    pub fn recall(store: &dyn Recall, family: &str, goal: &TrajectoryVector) -> TaskMemory {
        let found = store.recall(family, goal, RECALLED);
        let nearest = found
            .iter()
            .map(|r| r.similarity)
            .fold(f32::NEG_INFINITY, f32::max);
        let recalled = found
            .into_iter()
            .filter(|r| r.similarity >= nearest - NEAREST_MARGIN)
            .filter_map(|r| {
                let weight = f64::from(
                    ((r.similarity - GOAL_FLOOR) / (GOAL_SURE - GOAL_FLOOR)).clamp(0.0, 1.0),
                );
                (weight > 0.0).then_some((weight, r.trace))
            })
            .collect();
        TaskMemory { recalled }
    }

    /// Trajectories that can vote.
    pub fn len(&self) -> usize {
        self.recalled.len()
    }

    /// Whether nothing was recalled.
    pub fn is_empty(&self) -> bool {
        self.recalled.is_empty()
    }
}

impl ReplayMemory for TaskMemory {
    fn votes(&self, state: &StateInfo) -> HashMap<u64, f64> {
        let mut votes: HashMap<u64, f64> = HashMap::new();
        for (weight, trace) in &self.recalled {
            for step in trace.iter() {
                let matched = if step.location == state.location {
                    1.0
                } else if state.page_family != 0 && step.page_family == state.page_family {
                    FAMILY_MATCH
                } else {
                    continue;
                };
                let vote = votes.entry(step.key).or_default();
                *vote = vote.max(weight * matched);
            }
        }
        votes
    }
}

/// How much a full vote multiplies an action's prior (by 1 + this × the vote). A vote
/// reorders what the eyes find plausible; it does not put first what they find implausible:
/// an added vote (the first form) let a success of another need on the same site lead every
/// branch ("click Peru" first for "cities whose description mentions a harbour": 44 actions
/// against 3 without memory). On the simulated sites the two forms are alike (solved and
/// actions within 0.3%, seeds 1–12); see `docs/memory-benchmark.md`.
pub const MEMORY_BOOST: f64 = 4.0;

/// Raises the priors of the candidates the memory votes for (× 1 + [`MEMORY_BOOST`] × the
/// vote, then normalised again) and returns the votes that applied, by key.
pub fn raise_priors<A>(
    candidates: &mut [crate::Candidate<A>],
    votes: &HashMap<u64, f64>,
) -> Vec<(u64, f64)> {
    let mut applied: Vec<(u64, f64)> = Vec::new();
    for candidate in candidates.iter_mut() {
        if let Some(&vote) = votes.get(&candidate.key) {
            let vote = if vote.is_finite() {
                vote.clamp(0.0, 1.0)
            } else {
                0.0
            };
            if vote > 0.0 {
                candidate.prior *= 1.0 + MEMORY_BOOST * vote;
                applied.push((candidate.key, vote));
            }
        }
    }
    if !applied.is_empty() {
        let total: f64 = candidates.iter().map(|c| c.prior).sum();
        if total > 0.0 {
            for candidate in candidates.iter_mut() {
                candidate.prior /= total;
            }
        }
    }
    applied
}

/// A brute-force store of successful trajectories (exact; for simulations and tests, where
/// the cluster's HNSW replica is not needed).
#[derive(Debug, Default)]
pub struct FlatMemory {
    entries: Mutex<Vec<Remembered>>,
}

/// One trajectory of a [`FlatMemory`]: its family, goal vector and trace.
type Remembered = (String, TrajectoryVector, Arc<[TraceStep]>);

impl FlatMemory {
    /// Remembers a successful trajectory.
    pub fn insert(&self, family: &str, goal: TrajectoryVector, trace: Vec<TraceStep>) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((family.to_owned(), goal, trace.into()));
    }

    /// Trajectories remembered.
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Recall for FlatMemory {
    fn recall(&self, family: &str, goal: &TrajectoryVector, k: usize) -> Vec<Recalled> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let mut found: Vec<Recalled> = entries
            .iter()
            .filter(|(f, v, _)| f == family && v.dim() == goal.dim())
            .map(|(_, v, trace)| Recalled {
                similarity: v.cosine(goal),
                trace: trace.clone(),
            })
            .collect();
        found.sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        found.truncate(k);
        found
    }
}

/// The 64-bit form of a fingerprint family, as [`StateInfo::page_family`] and traces hold it.
pub fn page_family_key(family: &forager_protocol::Fingerprint) -> u64 {
    let bytes = family.0;
    u64::from_le_bytes([
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::Fingerprint;

    fn state(location: u64, page_family: u64) -> StateInfo {
        StateInfo {
            fingerprint: Fingerprint([0; 16]),
            success: false,
            dead_end: false,
            hidden_change: false,
            rolled: false,
            wordless: false,
            value_hint: 0.0,
            auth: 0.0,
            location,
            page_family,
            logged_in: false,
            session_lost: false,
            session_expired: false,
            transient: false,
        }
    }

    fn step(location: u64, page_family: u64, key: u64) -> TraceStep {
        TraceStep {
            location,
            page_family,
            key,
        }
    }

    #[test]
    fn near_goals_vote_for_their_next_action_where_they_passed() {
        let embedder = GoalEmbedder::Ngram;
        let store = FlatMemory::default();
        let remembered = embedder
            .embed("find the laptop battery specs")
            .expect("embeds");
        store.insert("shop", remembered, vec![step(1, 10, 100), step(2, 20, 200)]);
        let goal = embedder.embed("laptop battery specs").expect("embeds");
        let memory = TaskMemory::recall(&store, "shop", &goal);
        assert_eq!(memory.len(), 1);
        let at_start = memory.votes(&state(1, 10));
        assert!(at_start[&100] > 0.0, "{at_start:?}");
        assert!(!at_start.contains_key(&200));
        // Another page of the same kind: a weaker vote.
        let same_kind = memory.votes(&state(9, 20));
        assert!(same_kind[&200] < memory.votes(&state(2, 20))[&200]);
        // Nowhere it passed: no vote.
        assert!(memory.votes(&state(7, 70)).is_empty());
        // Another family (another site) recalls nothing.
        assert!(TaskMemory::recall(&store, "blog", &goal).is_empty());
        // An unrelated goal recalls nothing that votes.
        let unrelated = embedder.embed("garden hose coupling").expect("embeds");
        assert!(TaskMemory::recall(&store, "shop", &unrelated).is_empty());
        // A farther goal on the same site does not vote beside the nearest.
        store.insert(
            "shop",
            embedder.embed("laptop bags").expect("embeds"),
            vec![step(1, 10, 300)],
        );
        let memory = TaskMemory::recall(&store, "shop", &goal);
        assert_eq!(memory.len(), 1);
        assert!(!memory.votes(&state(1, 10)).contains_key(&300));
    }

    #[test]
    fn a_vote_puts_a_plausible_action_first_but_not_an_implausible_one() {
        let candidate = |key: u64, prior: f64| crate::Candidate {
            action: key,
            prior,
            risk: forager_protocol::RiskClass::ReadOnly,
            key,
            target: None,
            refused: None,
            why: crate::environment::Why::default(),
        };
        let mut candidates = vec![candidate(1, 0.4), candidate(2, 0.3), candidate(3, 0.02)];
        let votes = HashMap::from([(2, 0.5), (3, 0.5), (9, 1.0)]);
        let applied = raise_priors(&mut candidates, &votes);
        // Only the votes for offered actions apply.
        assert_eq!(applied, vec![(2, 0.5), (3, 0.5)]);
        let prior = |key: u64| {
            candidates
                .iter()
                .find(|c| c.key == key)
                .expect("kept")
                .prior
        };
        let total: f64 = candidates.iter().map(|c| c.prior).sum();
        assert!((total - 1.0).abs() < 1e-9, "normalised: {total}");
        // The second choice, remembered, comes first; the eyes' long shot stays behind.
        assert!(prior(2) > prior(1), "{candidates:?}");
        assert!(prior(3) < prior(1), "{candidates:?}");
        assert!(prior(3) > 0.02, "raised all the same");
        // A vote that is not a number changes nothing.
        let mut again = vec![candidate(1, 0.6), candidate(2, 0.4)];
        assert!(raise_priors(&mut again, &HashMap::from([(2, f64::NAN)])).is_empty());
        assert_eq!(again[1].prior, 0.4);
    }

    #[test]
    fn the_embedders_have_distinct_identities() {
        assert_eq!(GoalEmbedder::Ngram.id(), ngram_id());
        assert_eq!(ngram_id().dim, VECTOR_DIM as u32);
        assert!(GoalEmbedder::Ngram.embed("").is_err());
    }
}
