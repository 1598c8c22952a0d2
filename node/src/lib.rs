//! A forager worker.
//!
//! # Layout
//!
//! - [`environment`]: the [`Environment`] trait every world the search acts on implements
//!   (headless Chromium in production, synthetic websites in `forager-simulations`).
//! - [`search`]: the MCTS engine, generic over [`Environment`]: a sans-I/O tree
//!   ([`search::Search`]) that plans jobs and absorbs their results, and an async driver
//!   ([`search::run`]) that feeds it from one or more environments.
//! - [`embed`]: hashed n-gram text embeddings and the stable keys of actions.
//! - [`memory`]: the memory that pays: successful trajectories recalled by goal vote for the
//!   next action at a page (the score's replay bonus, and raised priors).
//! - [`policy`]: which actions a page offers and their priors (the default, offline policy).
//! - [`browser`]: headless Chromium as an [`Environment`].
//! - [`net`]: the libp2p swarm (private network, gossip with validation, request-response).
//! - [`index`]: the HNSW replica of the cluster's trajectories, persisted and synced.
//! - [`arithmetic`]: sums and one-unknown equations a page poses, solved (values to type).
//! - [`goal`]: what a goal's text names literally (quotes, numbers, names, positions).
//! - [`comparison`]: the comparisons a goal asks for ("more than 5 million inhabitants"), for
//!   a data browser's filter row (`forager_protocol::comparison`, re-exported: the goal's
//!   plan reads them too).
//! - [`claims`]: a branch's writes claimed from the task's queen before they run (one write
//!   per task).
//! - [`factory`]: [`factory::EnvFactory`], how a worker gets a task's environments and reads
//!   back what they saw (above `environment`, `memory` and `claims`, below `worker` and
//!   `browser`).
//! - [`worker`]: a node's loop: expansions, branch searches, replays and syncs asked by peers.
//! - [`llm`]: the language-model tier: an OpenAI-compatible client, routing by cost, the
//!   questions (priors, verdict, recovery) and their on-disk cache.
//! - [`model`]: a sentence-embedding model (all-MiniLM-L6-v2 by default): tokenizer, cache.
//! - [`encoder`]: the BERT forward pass the sentence model runs on the CPU.
//! - [`actor`]: the request/reply helper of the node's actors (swarm, browser pool).
//! - [`consent`]: consents as a node uses them: the revocations it knows of, which of a task's
//!   consents hold, and what they permit below a branch's root.
//! - [`item_controls`]: controls that mean something only through their item (a dish's "+",
//!   a cart row's stepper), pressed for the items the goal names or counts.
//! - [`superlative`]: the item the goal wants at an extreme ("the cheapest flight"), whose
//!   controls the default policy lifts.
//! - [`metrics`]: what a node counts for Prometheus (`forager node --metrics`).

pub mod actor;
pub mod arithmetic;
pub mod browser;
pub mod claims;
pub mod consent;
pub mod embed;
pub mod encoder;
pub mod environment;
pub mod factory;
pub mod goal;
pub mod index;
pub mod item_controls;
pub mod llm;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod net;
pub mod policy;
pub mod search;
pub mod superlative;
pub mod worker;

pub use forager_protocol::comparison;

pub use environment::{Candidate, EnvError, Environment, StateInfo, Step};

/// What the unit tests of several modules build pages from.
#[cfg(test)]
pub(crate) mod testing {
    use forager_protocol::observation::{Element, Observation};

    /// A page at `url` (titled "Shop", status 200) with these controls and nothing else.
    pub fn page(url: &str, elements: Vec<Element>) -> Observation {
        Observation {
            url: url.into(),
            title: "Shop".into(),
            http_status: Some(200),
            elements,
            text_excerpt: String::new(),
            console_errors: vec![],
            dialogs: vec![],
            snapshot: vec![],
            forms: vec![],
            validation_errors: vec![],
            values: vec![],
            tables: vec![],
            scrollables: vec![],
            terminals: vec![],
            fingerprint: forager_protocol::Fingerprint([0; 16]),
        }
    }

    /// A control with a role, a name (its text too) and the item it sits in.
    pub fn control(role: &str, name: &str, record: &str) -> Element {
        Element {
            role: role.into(),
            name: name.into(),
            text: name.into(),
            nearby_text: String::new(),
            record: record.into(),
            column: String::new(),
            tag: "span".into(),
            input_type: String::new(),
            href: None,
            locators: vec![],
            form: None,
            required: false,
            disabled: false,
            options: vec![],
            checked: false,
            popup: false,
            readonly: false,
            sends: Default::default(),
            autocomplete: String::new(),
            unsent: false,
        }
    }
}
