//! How success is recognised: the predicates a page is checked against at the end of a task
//! (and at the end of a capsule's login), each mechanically, never by reading prose. Below
//! both [`crate::task`] and [`crate::capsule`], which carry them.

use serde::{Deserialize, Serialize};

/// How success is recognised. Never by reading prose: each predicate is checked mechanically.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuccessPredicate {
    /// The page URL matches this regular expression.
    UrlMatches(String),
    /// This text is present in the page's visible text.
    TextPresent(String),
    /// An element matches this CSS selector.
    SelectorPresent(String),
    /// This JavaScript expression evaluates to `true` in the page.
    JavaScript(String),
    /// This JavaScript expression returns a value that passes the meaningful-output check.
    Extraction(String),
}

impl SuccessPredicate {
    /// The predicate's argument: the regex, text, selector or script.
    pub fn argument(&self) -> &str {
        match self {
            SuccessPredicate::UrlMatches(s)
            | SuccessPredicate::TextPresent(s)
            | SuccessPredicate::SelectorPresent(s)
            | SuccessPredicate::JavaScript(s)
            | SuccessPredicate::Extraction(s) => s,
        }
    }
}
