//! The writes granted to nodes: a node asks before it sends a write of the task
//! ([`forager_protocol::wire::Message::ClaimWrite`]); the first to ask gets it, once per task,
//! journaled before the grant, so a restarted queen (which replays `WriteClaimed`) grants it
//! no more.

use super::TaskRun;
use crate::journal::JournalEvent;
use libp2p::PeerId;

impl TaskRun {
    /// Grants the write `key` to `node` if no node holds it yet; whether it was granted.
    pub(crate) fn claim_write(&mut self, node: PeerId, key: u64) -> bool {
        if self.writes_claimed.contains(&key) {
            tracing::info!(task = %self.id, %node, key, "a write another branch holds is refused");
            return false;
        }
        self.record(JournalEvent::WriteClaimed {
            node: node.to_string(),
            key,
        });
        self.writes_claimed.insert(key);
        tracing::info!(task = %self.id, %node, key, "write granted");
        true
    }
}
