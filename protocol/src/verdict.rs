//! The validator's verdict on a submit-shaped action, and its deterministic pre-pass.
//!
//! Two tiers: the pre-pass compares the page before and after the action (URL, title, expected
//! text, validation-shaped errors, console errors) and settles most cases for free; only when
//! it is inconclusive is a model asked, if one is configured. Success itself is never decided
//! here: predicates decide it.

use crate::fingerprint::normalise_url;
use crate::observation::Observation;
use serde::{Deserialize, Serialize};

/// What the validator concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictOutcome {
    /// The action visibly did what it was for.
    Advanced,
    /// The page refused it (validation errors, error messages).
    Rejected,
    /// Nothing conclusive.
    Inconclusive,
}

/// Which tier decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictTier {
    /// The deterministic comparison.
    PrePass,
    /// A model.
    Model,
}

/// A verdict with its reasons.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Verdict {
    /// The conclusion.
    pub outcome: VerdictOutcome,
    /// Who reached it.
    pub tier: VerdictTier,
    /// Why, in short phrases.
    pub reasons: Vec<String>,
}

/// Words that make a console error validation-shaped (a script crash is not a refusal).
const VALIDATION_WORDS: &[&str] = &[
    "invalid",
    "validation",
    "required",
    "must be",
    "incorrect",
    "not valid",
    "too short",
    "too long",
    "please enter",
    "please fill",
];

fn looks_like_validation(text: &str) -> bool {
    let lower = text.to_lowercase();
    VALIDATION_WORDS.iter().any(|w| lower.contains(w))
}

/// The deterministic pre-pass. `expected_texts` are texts whose appearance means progress (the
/// task's text predicates, say).
pub fn pre_pass(before: &Observation, after: &Observation, expected_texts: &[String]) -> Verdict {
    let mut reasons = Vec::new();
    let new_errors: Vec<&String> = after
        .validation_errors
        .iter()
        .filter(|e| !before.validation_errors.contains(e))
        .collect();
    let validation_console: Vec<&String> = after
        .console_errors
        .iter()
        .filter(|e| looks_like_validation(e))
        .collect();
    if !new_errors.is_empty() || !validation_console.is_empty() {
        for e in new_errors.iter().chain(&validation_console).take(3) {
            reasons.push(format!(
                "validation error: {}",
                e.chars().take(120).collect::<String>()
            ));
        }
        return Verdict {
            outcome: VerdictOutcome::Rejected,
            tier: VerdictTier::PrePass,
            reasons,
        };
    }
    if normalise_url(&before.url) != normalise_url(&after.url) {
        reasons.push(format!("url changed to {}", normalise_url(&after.url)));
    }
    if before.title != after.title {
        reasons.push(format!("title changed to {:?}", after.title));
    }
    for text in expected_texts {
        if after.text_excerpt.contains(text.as_str())
            && !before.text_excerpt.contains(text.as_str())
        {
            reasons.push(format!("expected text appeared: {text:?}"));
        }
    }
    if !reasons.is_empty() {
        return Verdict {
            outcome: VerdictOutcome::Advanced,
            tier: VerdictTier::PrePass,
            reasons,
        };
    }
    if before.fingerprint == after.fingerprint {
        reasons.push("no visible change".into());
    } else {
        reasons.push("the page changed, but nothing says how".into());
    }
    Verdict {
        outcome: VerdictOutcome::Inconclusive,
        tier: VerdictTier::PrePass,
        reasons,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::Fingerprint;

    fn page(url: &str, title: &str, text: &str, errors: &[&str], fp: u8) -> Observation {
        Observation {
            url: url.into(),
            title: title.into(),
            http_status: Some(200),
            elements: vec![],
            text_excerpt: text.into(),
            console_errors: vec![],
            dialogs: vec![],
            snapshot: vec![],
            forms: vec![],
            validation_errors: errors.iter().map(|e| e.to_string()).collect(),
            values: vec![],
            tables: vec![],
            scrollables: vec![],
            terminals: vec![],
            fingerprint: Fingerprint([fp; 16]),
        }
    }

    #[test]
    fn table() {
        let before = page("http://x/form", "Form", "Fill in", &[], 1);
        let cases = [
            (
                page("http://x/done", "Form", "", &[], 2),
                VerdictOutcome::Advanced,
            ),
            (
                page("http://x/form?x=1", "Thanks", "", &[], 2),
                VerdictOutcome::Advanced,
            ),
            (
                page("http://x/form", "Form", "Order 42 saved", &[], 2),
                VerdictOutcome::Advanced,
            ),
            (
                page("http://x/form", "Form", "", &["Email is required"], 2),
                VerdictOutcome::Rejected,
            ),
            (
                page("http://x/form#top", "Form", "Fill in", &[], 1),
                VerdictOutcome::Inconclusive,
            ),
            (
                page("http://x/form", "Form", "other", &[], 3),
                VerdictOutcome::Inconclusive,
            ),
        ];
        for (after, expected) in cases {
            let verdict = pre_pass(&before, &after, &["saved".into()]);
            assert_eq!(verdict.outcome, expected, "{after:?}: {verdict:?}");
            assert_eq!(verdict.tier, VerdictTier::PrePass);
            assert!(!verdict.reasons.is_empty());
        }
        let mut console = page("http://x/form", "Form", "", &[], 2);
        console
            .console_errors
            .push("Uncaught TypeError: x is undefined".into());
        assert_eq!(
            pre_pass(&before, &console, &[]).outcome,
            VerdictOutcome::Inconclusive
        );
        console
            .console_errors
            .push("Validation failed: zip is invalid".into());
        assert_eq!(
            pre_pass(&before, &console, &[]).outcome,
            VerdictOutcome::Rejected
        );
    }
}
