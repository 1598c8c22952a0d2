//! Routing by cost: which decisions the rules and the sentence model take alone, and which
//! go to a model tier. The rules decide when they are confident (a clear first candidate);
//! the small tier ranks a flat shortlist; the large tier is kept for recovery and for
//! confirming a verdict of success. Pure functions: the environment asks, these answer.
//!
//! [`route_priors`]: the rules when the first prior leads the second by [`CLEAR_LEAD`], else the
//! small tier over the first [`SHORTLIST`]; [`stuck`]: the last actions reached at most two pages.

use forager_protocol::llm::Tier;

/// A first candidate whose prior is at least this many times the second's is clear: the
/// rules decide. (At 1.5 a page of a dozen links where one names the goal's words is left to
/// the rules; a form whose buttons the goal does not name goes to the model.)
pub const CLEAR_LEAD: f64 = 1.5;
/// Candidates in the shortlist a model ranks (MindAct ranks a short list of the cheap
/// ranker's best; more costs tokens and a small model's attention).
pub const SHORTLIST: usize = 6;
/// Actions in a row that reached at most two distinct pages, after which the search counts as
/// stuck and recovery is asked.
pub const STUCK_LOOKS: usize = 6;
/// Most recoveries asked per environment (each is a large-tier call).
pub const MAX_RECOVERIES: u32 = 3;

/// Who takes a ranking decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The rules' order stands.
    Rules,
    /// A model tier ranks the shortlist.
    Model(Tier),
}

/// Who ranks candidates with these priors (any order).
pub fn route_priors(priors: &[f64]) -> Route {
    let mut sorted: Vec<f64> = priors.iter().copied().filter(|p| p.is_finite()).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    match sorted.as_slice() {
        [] | [_] => Route::Rules,
        [first, second, ..] if *first >= CLEAR_LEAD * second.max(f64::MIN_POSITIVE) => Route::Rules,
        _ => Route::Model(Tier::Small),
    }
}

/// Whether the pages the last actions reached (their fingerprints' digests, most recent
/// last) show a stuck search: at least [`STUCK_LOOKS`] of them, on at most two distinct pages (no progress, or
/// going back and forth).
pub fn stuck(recent: &[u64]) -> bool {
    if recent.len() < STUCK_LOOKS {
        return false;
    }
    let window = &recent[recent.len() - STUCK_LOOKS..];
    let mut distinct: Vec<u64> = window.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len() <= 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_clear_lead_stays_with_the_rules() {
        assert_eq!(route_priors(&[]), Route::Rules);
        assert_eq!(route_priors(&[0.9]), Route::Rules);
        assert_eq!(route_priors(&[0.1, 0.6, 0.3]), Route::Rules);
        assert_eq!(route_priors(&[0.3, 0.35, 0.35]), Route::Model(Tier::Small));
        assert_eq!(route_priors(&[0.5, 0.5, 0.0]), Route::Model(Tier::Small));
    }

    #[test]
    fn oscillation_is_stuck_and_progress_is_not() {
        assert!(!stuck(&[1, 2, 1, 2, 1]));
        assert!(stuck(&[1, 2, 1, 2, 1, 2]));
        assert!(stuck(&[5, 5, 5, 5, 5, 5]));
        assert!(!stuck(&[1, 2, 3, 1, 2, 3]));
        assert!(stuck(&[9, 8, 7, 1, 1, 2, 1, 2, 2]));
    }

    proptest! {
        /// Scaling every prior by one factor never changes who decides.
        #[test]
        fn routing_is_scale_free(priors in proptest::collection::vec(0.001f64..1.0, 0..12), k in 0.01f64..100.0) {
            let scaled: Vec<f64> = priors.iter().map(|p| p * k).collect();
            prop_assert_eq!(route_priors(&priors), route_priors(&scaled));
        }
    }
}
