//! forager's shared vocabulary: everything two forager processes (or two crates) must agree on,
//! and nothing that performs I/O.
//!
//! # Layout
//!
//! - [`task`]: the task a user hands to forager and its validation.
//! - [`predicate`]: how success is recognised (the predicates a task and a capsule's login are
//!   checked by).
//! - [`action`], [`observation`]: what an agent does on a page and what it sees there.
//! - [`amount`]: amounts as goals write them ("5 million" → the digits a field wants).
//! - [`comparison`]: the comparisons a goal asks for ("more than 5 million inhabitants").
//! - [`plan`]: a goal read as a plan before the browser moves: its act, object, conditions and
//!   preconditions.
//! - [`fingerprint`]: the identity of a page state (two observations with one fingerprint are
//!   the same state).
//! - [`trajectory`]: finished rollouts and their fixed-dimension vectors.
//! - [`score`]: the production-aware UCT score and its weights.
//! - [`risk`], [`submit`], [`meaningful`]: pure classifiers the search and validator rely on.
//! - [`credential`]: which task inputs are credentials, and which fields may take them.
//! - [`outcome`]: named failure and pruning reasons, shared by the engine and the result document.
//! - [`codec`]: the only place bincode is used; versioned, size-limited framing.
//! - [`signing`]: Ed25519 signatures over a domain-separated canonical encoding.
//! - [`consent`]: a user's signed permission for one action above the ceiling, and its
//!   revocation.
//! - [`capsule`]: a logged-in session, sealed and signed, with its reuse policy; TOTP codes.
//! - [`wire`]: the messages peers exchange, and why a peer refuses a request.
//! - [`digest`]: SHA-256 digests (raw on the wire, hex in documents).
//! - [`llm`]: the language-model tier's endpoints, budgets and usage (no client: that is the
//!   node's).
//! - [`result`]: the result document (`result.json`) every run writes.
//! - [`verdict`]: the validator's verdict on a submit-shaped action.
//! - [`artifact`]: the signed trajectory a run leaves behind, and its hash chain.
//! - [`workflow`]: the compiled workflow (`workflow.json`) and its compiler.
//! - [`recall`]: a verified success kept as a workflow with parameters, and a new goal bound
//!   to it.
//!
//! Types here are `Serialize` because they cross a boundary (the network, or a document someone
//! else reads). The imports between modules form no circle.

pub mod action;
pub mod amount;
pub mod artifact;
pub mod capsule;
pub mod codec;
pub mod comparison;
pub mod consent;
pub mod credential;
pub mod digest;
pub mod fingerprint;
pub mod llm;
pub mod meaningful;
pub mod observation;
pub mod outcome;
pub mod plan;
pub mod predicate;
pub mod recall;
pub mod result;
pub mod risk;
pub mod score;
pub mod signing;
pub mod submit;
pub mod task;
pub mod trajectory;
pub mod verdict;
pub mod wire;
pub mod workflow;

pub use action::{Action, FillValue, Locator, ScrollEdge, Sends, SliderMove, Target};
pub use fingerprint::Fingerprint;
pub use outcome::{FailureReason, PruneReason};
pub use risk::RiskClass;
pub use score::{ScoreInputs, ScoreWeights};
pub use task::{TaskError, TaskSpec};
