//! What a node checks before it acts for a task: the session capsule, the revocations this
//! machine knows of, the consents that cover a branch's prefix.

use forager_protocol::wire::{BranchAssignment, FoundPath, ProgressReport};
use forager_protocol::{Action, PruneReason, TaskSpec};

/// Whether the task's session capsule may be mounted here: not expired, not revoked on this
/// machine (read now, so a capsule revoked while the node runs stops the next request).
pub(super) fn check_capsule(task: &TaskSpec) -> Result<(), String> {
    let Some(capsule) = &task.capsule else {
        return Ok(());
    };
    let now = crate::consent::unix_now();
    if now >= capsule.expires_at {
        return Err(format!(
            "capsule {}: expired at {} (now {now})",
            capsule.id.to_hex(),
            capsule.expires_at
        ));
    }
    let Some(revocations) = revocations() else {
        return Err("capsule: this machine's revocations cannot be read".into());
    };
    let Some(signer) = capsule.signer_key() else {
        return Err("capsule: its record names no valid signer".into());
    };
    if let Some(at) = forager_protocol::consent::revoked_at(&signer, &capsule.id, &revocations) {
        return Err(format!("capsule {}: revoked at {at}", capsule.id.to_hex()));
    }
    Ok(())
}

/// The revocations this machine knows of, read now (a consent revoked while the node runs
/// stops the next search); `None` when they cannot be read (then no consent is trusted).
pub(super) fn revocations() -> Option<Vec<forager_protocol::consent::SignedRevocation>> {
    match crate::consent::RevocationStore::for_user().map(|s| s.load()) {
        Some(Ok(revocations)) => Some(revocations),
        Some(Err(error)) => {
            tracing::warn!(%error, "revocations unreadable; consents ignored");
            None
        }
        None => Some(Vec::new()),
    }
}

/// The first step of the branch's prefix above the ceiling that no consent covers (with the
/// revocations unreadable, no consent counts).
/// A branch prefix's step `at` sent more than its class allows and the network gate refused
/// it: pruned as the tree prunes such a child (`risk_underestimated`), the branch exhausted,
/// and, above the ceiling, the step offered for approval at the class of what it sent.
pub(super) fn refused_at_the_network(
    report: &mut ProgressReport,
    task: &TaskSpec,
    prefix: &[Action],
    at: usize,
    class: forager_protocol::RiskClass,
    request: &str,
) {
    report.error = Some(format!(
        "the branch's step {} ({}) tried to send {request}: refused at the network",
        at + 1,
        prefix[at].label()
    ));
    report.counters.pruned.insert(
        PruneReason::RiskUnderestimated { class }.kind().to_owned(),
        1,
    );
    if class > task.risk_ceiling {
        let actions = prefix[..=at].to_vec();
        let mut risks = crate::consent::prefix_risks(task, &actions);
        if let Some(last) = risks.last_mut() {
            *last = class;
        }
        report
            .approvals
            .push(FoundPath::new(actions, Vec::new(), risks));
    }
    report.exhausted = true;
}

pub(super) fn unconsented_prefix(task: &TaskSpec, assignment: &BranchAssignment) -> Option<usize> {
    let now = crate::consent::unix_now();
    let id = &assignment.task_id;
    let prefix = &assignment.prefix;
    // A start page's branch (one action) was classified with its page by the node that
    // opened the page; a longer prefix is a consent's resumption, checked here.
    if prefix.len() <= 1 {
        return None;
    }
    if task.consents.is_empty() {
        return crate::consent::unconsented_in_prefix(task, id, prefix, now, &[]);
    }
    match revocations() {
        Some(revocations) => {
            crate::consent::unconsented_in_prefix(task, id, prefix, now, &revocations)
        }
        None => {
            let mut bare = task.clone();
            bare.consents.clear();
            crate::consent::unconsented_in_prefix(&bare, id, prefix, now, &[])
        }
    }
}

/// What the task's consents permit below this branch, checked against the revocations this
/// machine knows of, now.
pub(super) fn consented_for(
    task: &TaskSpec,
    assignment: &BranchAssignment,
) -> Vec<crate::search::Consented> {
    if task.consents.is_empty() {
        return Vec::new();
    }
    let Some(revocations) = revocations() else {
        return Vec::new();
    };
    crate::consent::consented_below(
        task,
        &assignment.task_id,
        &assignment.prefix,
        crate::consent::unix_now(),
        &revocations,
    )
}
