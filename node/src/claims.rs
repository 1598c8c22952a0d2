//! Writes claimed from the queen before they run. On a site not declared resettable a write
//! that reaches others (risk class 4 or more) runs once per task: two branches, on two nodes,
//! that reach the same form would otherwise both send it (a comment posted twice). The
//! environment asks the task's queen for the write's key (the page's path and the action)
//! before executing it; the queen grants each key once ([`Message::ClaimWrite`]). A node that
//! cannot reach the queen does not write. A draft (class 3: a cart) is the browser context's
//! own and is made in each.
//!
//! The key is [`write_key`] (the page's path and the action's label). The browser environment
//! asks before it sends (`claim_write` in `browser/env/writes.rs`); a refusal, or no answer
//! within [`CLAIM_TIMEOUT`], is `EnvError::WriteTaken` and the tree prunes `write_taken`.
//! Environments outside a branch search (a start page's expansion, replays) have no claims: on
//! such a site replays never execute a write anyway.

use crate::net::Network;
use forager_protocol::Action;
use forager_protocol::wire::Message;
use forager_protocol::wire::TaskId;
use libp2p::PeerId;
use std::time::Duration;

/// How long a claim may take before the write is given up (the queen answers from memory).
pub const CLAIM_TIMEOUT: Duration = Duration::from_secs(15);

/// Why a claim got no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ClaimError {
    /// The request failed (the queen is gone, the network stopped).
    #[error("{0}")]
    Network(String),
    /// No answer within [`CLAIM_TIMEOUT`].
    #[error("no answer within {} s", CLAIM_TIMEOUT.as_secs())]
    Timeout,
    /// The queen answered something else (a refusal: the task is not hers).
    #[error("unexpected answer: {0}")]
    Unexpected(String),
}

/// The queen of a task, asked for its writes.
#[derive(Clone)]
pub struct WriteClaims {
    network: Network,
    queen: PeerId,
    task: TaskId,
}

impl std::fmt::Debug for WriteClaims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteClaims")
            .field("queen", &self.queen)
            .field("task", &self.task)
            .finish()
    }
}

impl WriteClaims {
    /// Claims for `task` from `queen` over `network`.
    pub fn new(network: Network, queen: PeerId, task: TaskId) -> WriteClaims {
        WriteClaims {
            network,
            queen,
            task,
        }
    }

    /// Whether the write named `key` is this node's to execute.
    pub async fn claim(&self, key: u64) -> Result<bool, ClaimError> {
        let request = Message::ClaimWrite {
            task: self.task,
            key,
        };
        match tokio::time::timeout(CLAIM_TIMEOUT, self.network.request(self.queen, request)).await {
            Err(_) => Err(ClaimError::Timeout),
            Ok(Err(error)) => Err(ClaimError::Network(error.to_string())),
            Ok(Ok(Message::WriteClaimed(granted))) => Ok(granted),
            Ok(Ok(Message::Refused { detail, .. })) => Err(ClaimError::Unexpected(detail)),
            Ok(Ok(other)) => Err(ClaimError::Unexpected(format!("{other:?}"))),
        }
    }
}

/// A write's key: the path of the page it is taken on (no query, no fragment) and the
/// action's label (its fields, values and button), so that the same form sent from the same
/// page by two branches is one write, and the same button on another record another.
pub fn write_key(page_url: &str, action: &Action) -> u64 {
    let path = page_url.split(['?', '#']).next().unwrap_or(page_url);
    crate::embed::stable_hash(format!("{path}\n{}", action.label()).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::Target;

    #[test]
    fn a_write_is_named_by_its_page_and_its_action() {
        let click = |name: &str| Action::Click {
            target: Target {
                locators: vec![],
                role: "button".into(),
                name: name.into(),
                sends: Default::default(),
            },
        };
        let here = write_key("http://127.0.0.1:1/issue1?@ok_message=x", &click("Submit"));
        assert_eq!(
            here,
            write_key("http://127.0.0.1:1/issue1#top", &click("Submit"))
        );
        assert_ne!(
            here,
            write_key("http://127.0.0.1:1/issue2", &click("Submit"))
        );
        assert_ne!(here, write_key("http://127.0.0.1:1/issue1", &click("Save")));
    }
}
