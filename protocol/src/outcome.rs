//! Named reasons: why a run failed, and why a branch of the search was cut.
//!
//! Both appear in the result document and the event log under their snake_case names, which
//! are therefore part of forager's stable surface.

use crate::risk::RiskClass;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a run ended `failing`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureReason {
    /// The action budget ran out before any success.
    BudgetExhausted,
    /// The wall-clock limit passed before any success.
    Timeout,
    /// Every branch was explored or pruned without a success.
    SearchExhausted,
    /// The only ways forward need an action above the risk ceiling.
    ApprovalRequired,
    /// Replays of the winning path did not reproduce its states.
    Nondeterministic,
    /// The browser crashed more often than the retry limit allows.
    BrowserCrashed,
    /// No action changed the page.
    NoProgress,
    /// A success could not be reproduced by a second node.
    NotReproduced,
    /// The start URL could not be loaded (HTTP error, redirect loop, timeout, refused).
    NavigationFailed,
    /// The user interrupted the run.
    Interrupted,
    /// A replayed workflow step could not be carried out: no locator of its chain found the
    /// target, or it was hidden, covered or disabled.
    ActionFailed,
    /// A replayed workflow step did not leave the page its workflow expects (URL path, text,
    /// fingerprint family), or the success predicates did not hold after the last step.
    PostconditionFailed,
    /// The task's session capsule no longer logs in (a page of its origin asked for a login)
    /// and no credentials were given to capture it again.
    SessionExpired,
    /// An operator cancelled the task (`forager cancel`).
    Cancelled,
    /// The goal's plan needs what the task does not bring (a login, and no credentials and
    /// no capsule): said before any search.
    PreconditionUnmet,
}

impl FailureReason {
    /// The snake_case name used in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::BudgetExhausted => "budget_exhausted",
            FailureReason::Timeout => "timeout",
            FailureReason::SearchExhausted => "search_exhausted",
            FailureReason::ApprovalRequired => "approval_required",
            FailureReason::Nondeterministic => "nondeterministic",
            FailureReason::BrowserCrashed => "browser_crashed",
            FailureReason::NoProgress => "no_progress",
            FailureReason::NotReproduced => "not_reproduced",
            FailureReason::NavigationFailed => "navigation_failed",
            FailureReason::Interrupted => "interrupted",
            FailureReason::ActionFailed => "action_failed",
            FailureReason::PostconditionFailed => "postcondition_failed",
            FailureReason::SessionExpired => "session_expired",
            FailureReason::PreconditionUnmet => "precondition_unmet",
            FailureReason::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a child of the search tree was cut. Pruned children are recorded, never silently dropped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PruneReason {
    /// The action left the fingerprint unchanged.
    NoProgress,
    /// The action led to a state already on the path.
    Loop,
    /// The state was already reached by another path at the same or smaller depth.
    Transposition,
    /// The action is above the risk ceiling; it was not executed.
    ApprovalRequired {
        /// The action's class.
        class: RiskClass,
    },
    /// The action could not be carried out (target gone, hidden, covered, timed out, …).
    ActionFailed {
        /// What went wrong, as the environment named it.
        reason: String,
    },
    /// Replaying the path to this state reached a different state.
    Nondeterministic,
    /// The path is as deep as the budget allows.
    DepthLimit,
    /// Restoring the state would replay a write (risk class 3 or more) on a site not declared
    /// resettable, and no live page was kept at it.
    ReplayUnsafe,
    /// A failure predicate of the task holds here: the task has failed on this path.
    DeadEnd,
    /// The action ended a logged-in session (logged out, or landed on a login form) and the
    /// goal does not ask for that: everything past it would start over.
    SessionLost,
    /// The task mounts a session capsule and the page asks to log in on one of its origins:
    /// the captured session no longer holds there.
    SessionExpired,
    /// The action was rated at or below the ceiling, but while it ran the page tried to send
    /// a write its class does not allow (a `POST` behind "Show more"): the browser refused
    /// the request (the network gate) and the action is re-rated by what it tried to send.
    RiskUnderestimated {
        /// The class of what it tried to send.
        class: RiskClass,
    },
    /// The action would end the session the search stands on (log out, sign out, switch
    /// user, revoke, delete the account) and the goal does not ask for that: never executed,
    /// whatever the ceiling, since a server that ends a session ends it for every branch and
    /// every node that shares it (a mounted capsule's).
    EndsSession,
    /// The action is a write another branch of the task holds (the same action on the same
    /// page, claimed from the queen first): on a site not declared resettable a write runs
    /// once per task. Never executed here.
    WriteTaken,
    /// While the action ran, the page tried to write to another record than the one the
    /// action's page names; the browser refused the request (the network gate).
    WriteElsewhere,
}

impl PruneReason {
    /// A short snake_case name for counting.
    pub fn kind(&self) -> &'static str {
        match self {
            PruneReason::NoProgress => "no_progress",
            PruneReason::Loop => "loop",
            PruneReason::Transposition => "transposition",
            PruneReason::ApprovalRequired { .. } => "approval_required",
            PruneReason::ActionFailed { .. } => "action_failed",
            PruneReason::Nondeterministic => "nondeterministic",
            PruneReason::DepthLimit => "depth_limit",
            PruneReason::ReplayUnsafe => "replay_unsafe",
            PruneReason::DeadEnd => "dead_end",
            PruneReason::SessionLost => "session_lost",
            PruneReason::SessionExpired => "session_expired",
            PruneReason::RiskUnderestimated { .. } => "risk_underestimated",
            PruneReason::EndsSession => "ends_session",
            PruneReason::WriteTaken => "write_taken",
            PruneReason::WriteElsewhere => "write_elsewhere",
        }
    }
}

impl fmt::Display for PruneReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PruneReason::ApprovalRequired { class } => {
                write!(f, "approval_required (risk class {class})")
            }
            PruneReason::ActionFailed { reason } => write!(f, "action_failed: {reason}"),
            PruneReason::RiskUnderestimated { class } => {
                write!(
                    f,
                    "risk_underestimated (it tried to send a class {class} request)"
                )
            }
            other => f.write_str(other.kind()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_json_match_as_str() {
        for reason in [
            FailureReason::BudgetExhausted,
            FailureReason::Timeout,
            FailureReason::SearchExhausted,
            FailureReason::ApprovalRequired,
            FailureReason::Nondeterministic,
            FailureReason::BrowserCrashed,
            FailureReason::NoProgress,
            FailureReason::NotReproduced,
            FailureReason::NavigationFailed,
            FailureReason::Interrupted,
            FailureReason::SessionExpired,
            FailureReason::Cancelled,
            FailureReason::PreconditionUnmet,
        ] {
            let json = serde_json::to_string(&reason).expect("serialises");
            assert_eq!(json, format!("\"{}\"", reason.as_str()));
        }
        let json = serde_json::to_string(&PruneReason::Loop).expect("serialises");
        assert_eq!(json, "\"loop\"");
        let json = serde_json::to_string(&PruneReason::SessionExpired).expect("serialises");
        assert_eq!(json, format!("\"{}\"", PruneReason::SessionExpired.kind()));
    }
}
