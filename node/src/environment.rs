//! The world the search acts on.
//!
//! An [`Environment`] is a single-threaded handle on one browsing session (a browser context,
//! or a simulated site): it observes the current state, lists the actions possible there with
//! policy priors and risk classes, acts, and restores a state by replaying an action prefix
//! from the start. Success predicates are checked on every observation, so every [`Step`]
//! says whether the state it reached is a success, and what reaching it cost.
//!
//! The search never looks inside actions: an environment's `Action` type is opaque to it,
//! which lets simulated sites use plain integers and the browser use
//! [`forager_protocol::Action`].
//!
//! A [`Candidate`] carries its prior, risk class, stable key, the target's location when known
//! and its `why`; errors are [`EnvError`] variants the engine acts on (retry, recover, prune).
//! A worker gets its environments from a [`crate::factory::EnvFactory`].

use forager_protocol::artifact::Digest32;
use forager_protocol::trajectory::Cost;
use forager_protocol::{Fingerprint, RiskClass};
use std::fmt::Debug;
use std::future::Future;

/// What the search needs to know about a state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateInfo {
    /// The state's identity.
    pub fingerprint: Fingerprint,
    /// Whether every success predicate holds here.
    pub success: bool,
    /// Whether a failure predicate holds here (a dead end: nothing past it can succeed).
    pub dead_end: bool,
    /// The action that led here changed nothing the fingerprint sees, but the page's own
    /// handlers ran: its change is in script state (a button that must be pressed before
    /// another). Such a state is kept (a short chain of them) rather than pruned as no progress.
    pub hidden_change: bool,
    /// The hidden change drew random numbers (a "Generate" button, a die): the state looks
    /// like its parent's, but a repeat of the action may show something else, so a longer
    /// chain of such rolls is kept (see `search::tree::MAX_ROLL_CHAIN`).
    pub rolled: bool,
    /// Most of the page's controls show no words of their own (squares of a board told apart
    /// by place alone): where such a page's actions also leave the value as it was, the search
    /// plays them out (`search::tree::FLAT_MIN_CHILDREN`). False where unknown.
    pub wordless: bool,
    /// A heuristic estimate in [0, 1] of how close the state is to the goal (for example the
    /// similarity of the page to the goal text); used as the value of non-terminal leaves.
    pub value_hint: f64,
    /// Session fragility seen here, in [0, 1]: login or logout forms, password fields,
    /// cookie clearing, 401/403 responses.
    pub auth: f64,
    /// A stable hash of where the state is (its URL without query and fragment), so the search
    /// can recognise candidates that lead somewhere already known.
    pub location: u64,
    /// The kind of page (its fingerprint family, 64 bits; 0 when unknown): where the memory
    /// of another run or another site of the family can still recognise the page.
    pub page_family: u64,
    /// The page offers to end a session (a "Log out" control): someone is logged in here.
    pub logged_in: bool,
    /// The step that led here ended a logged-in session, and the goal does not ask for that:
    /// the search prunes it (`session_lost`).
    pub session_lost: bool,
    /// A login form on an origin of the task's mounted session capsule: the session no
    /// longer holds. The search prunes it (`session_expired`); at the root the run ends so.
    pub session_expired: bool,
    /// The page reports a transient failure (HTTP 5xx, a network error page): trying again
    /// may reach the real state.
    pub transient: bool,
}

/// The result of acting (or restoring): the state reached and what getting there cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The state reached.
    pub state: StateInfo,
    /// What it cost.
    pub cost: Cost,
    /// Actions executed to get there (1 for an act; the prefix length for a replay, 0 when a
    /// cached page was reused).
    pub executed: u32,
}

/// An action possible in the current state, as the policy sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate<A> {
    /// The action.
    pub action: A,
    /// The policy's prior, in [0, 1]; candidates are expanded in descending prior order.
    pub prior: f64,
    /// The action's risk class; above the task's ceiling it is never executed.
    pub risk: RiskClass,
    /// A stable hash of the action's description (role and name of its target, say), equal
    /// for "the same" action on different pages of a task family; drives the replay bonus.
    pub key: u64,
    /// Where the action leads, when that is known before acting (a link's `href`), as the
    /// same hash as [`StateInfo::location`]; `None` for forms, scripts and buttons.
    pub target: Option<u64>,
    /// Why the environment refuses the action outright, whatever the ceiling and consents (it
    /// would end the session the search stands on, and the goal does not ask for that): the
    /// search records it pruned with this reason, unexecuted, as it records an action above
    /// the ceiling; rollouts skip it.
    pub refused: Option<forager_protocol::PruneReason>,
    /// Why the policy ranked it where it did: its named signals and what each added to its
    /// affinity (empty where no policy says: a simulation, a prefix from another node).
    pub why: Why,
}

/// The named signals behind a candidate's prior and what each added to its affinity, in the
/// order the policy combined them (`crate::policy::signals`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Why(pub Vec<(&'static str, f64)>);

impl Why {
    /// One signal's whole say.
    pub fn single(signal: &'static str, lift: f64) -> Why {
        Why(vec![(signal, lift)])
    }

    /// The `n` signals that moved the affinity most, largest first (ties in combining order).
    pub fn top(&self, n: usize) -> Vec<(&'static str, f64)> {
        let mut ranked: Vec<(&'static str, f64)> = self
            .0
            .iter()
            .copied()
            .filter(|(_, lift)| *lift != 0.0)
            .collect();
        ranked.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
        ranked.truncate(n);
        ranked
    }
}

/// Why an environment could not do what was asked. Every variant is recoverable by the search
/// (the branch is pruned with the reason) except [`EnvError::Crashed`], after which the
/// environment must be restarted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvError {
    /// No locator of the target resolves any more.
    #[error("target not found: {0}")]
    TargetMissing(String),
    /// The target exists but is not visible.
    #[error("target hidden: {0}")]
    TargetHidden(String),
    /// Another element covers the target.
    #[error("target covered: {0}")]
    TargetCovered(String),
    /// The action would leave the allowed origins.
    #[error("navigation blocked: {0}")]
    NavigationBlocked(String),
    /// An operation took longer than its timeout.
    #[error("{operation} timed out after {after_ms} ms")]
    Timeout {
        /// What was being done.
        operation: &'static str,
        /// The timeout.
        after_ms: u64,
    },
    /// Replaying a prefix reached a different state than recorded.
    #[error("replay diverged at step {step}: expected {expected}, found {found}")]
    Diverged {
        /// Index of the first diverging step in the prefix.
        step: usize,
        /// The recorded fingerprint.
        expected: Fingerprint,
        /// The fingerprint found.
        found: Fingerprint,
    },
    /// Replaying the steps to the environment's start (a branch's prefix, before the search's
    /// own steps) reached a different state: no state of this search can be restored.
    #[error("replay to the start diverged: expected {expected}, found {found}")]
    RootDiverged {
        /// The recorded fingerprint.
        expected: Fingerprint,
        /// The fingerprint found.
        found: Fingerprint,
    },
    /// Restoring the state would replay a write (risk class 3 or more) on a site that is not
    /// declared resettable, and no live page is kept at that state.
    #[error("replay refused: {0}")]
    ReplayUnsafe(String),
    /// The task's reset command could not run here (this node does not run them) or failed.
    #[error("site reset failed: {0}")]
    ResetFailed(String),
    /// The action was rated at or below the ceiling, but while it ran the page tried to send a
    /// write its class does not allow; the browser refused it (the network gate).
    #[error(
        "the network gate refused {request}: a class {class} request from an action rated lower"
    )]
    RiskUnderestimated {
        /// The class of what it tried to send.
        class: forager_protocol::RiskClass,
        /// The first refused request, `METHOD URL`.
        request: String,
    },
    /// While the action ran, the page tried to write to another record than the one the
    /// action's page names (a "Save" on issue 3 that posts to issue 2); the browser refused
    /// it (the network gate).
    #[error("the network gate refused {request}: a write to another record than the page's")]
    WriteElsewhere {
        /// The refused request, `METHOD URL`.
        request: String,
    },
    /// The action is a write another branch of the task holds (or the queen could not be
    /// asked): on a site not declared resettable a write runs once per task. Not executed.
    #[error("write taken: {0}")]
    WriteTaken(String),
    /// The browser (or whatever backs the environment) died.
    #[error("environment crashed: {0}")]
    Crashed(String),
    /// Anything else the environment reports.
    #[error("{0}")]
    Other(String),
}

/// A world the search can act on. See the module documentation.
pub trait Environment: Send {
    /// An action in this world.
    type Action: Clone + Debug + Send + Sync + 'static;

    /// The current state, with success predicates checked.
    fn observe(&mut self) -> impl Future<Output = Result<StateInfo, EnvError>> + Send;

    /// The actions possible in the current state.
    fn candidates(
        &mut self,
    ) -> impl Future<Output = Result<Vec<Candidate<Self::Action>>, EnvError>> + Send;

    /// Performs one action.
    fn act(&mut self, action: &Self::Action)
    -> impl Future<Output = Result<Step, EnvError>> + Send;

    /// Returns to the start and replays `prefix`, checking after each action that the recorded
    /// fingerprint is reached ([`EnvError::Diverged`] if not). An environment may reuse a live
    /// page already at that state instead of replaying.
    fn restore(
        &mut self,
        prefix: &[(Self::Action, Fingerprint)],
    ) -> impl Future<Output = Result<Step, EnvError>> + Send;

    /// Brings the environment back after [`EnvError::Crashed`] (a fresh browser, say). The
    /// next call will be a [`Environment::restore`].
    fn recover(&mut self) -> impl Future<Output = Result<(), EnvError>> + Send {
        async { Ok(()) }
    }

    /// A human description of an action, for reports and event logs.
    fn describe(&self, action: &Self::Action) -> String;
}

/// A page after a write, as the step that wrote left it.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteEvidence {
    /// SHA-256 of the page as read (URL and accessibility snapshot).
    pub page_digest: Digest32,
    /// Its screenshot (JPEG), when it has pixels.
    pub screenshot: Option<Vec<u8>>,
}
