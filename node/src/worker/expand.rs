//! Opening a task's start page: the root's children, classified, for the queen to assign.

use super::consent::check_capsule;
use super::sign;
use crate::environment::{EnvError, Environment, StateInfo};
use crate::factory::EnvFactory;
use crate::memory::{ReplayMemory, TaskMemory, raise_priors};
use crate::net::NodeIdentity;
use forager_protocol::wire::{
    ExpandReport, ExpandRequest, Message, Refusal, RefusalReason, TaskId, WireCandidate,
};

pub(super) async fn expand<F: EnvFactory>(
    factory: &F,
    identity: &NodeIdentity,
    request: ExpandRequest,
    memory: &TaskMemory,
) -> Message {
    let task_id = match TaskId::of(&request.task) {
        Ok(id) => id,
        Err(e) => return Refusal::new(RefusalReason::InvalidTask, e.to_string()).into(),
    };
    if let Err(e) = request.task.validate() {
        return Refusal::new(RefusalReason::InvalidTask, e.to_string()).into();
    }
    if let Err(detail) = check_capsule(&request.task) {
        return Refusal::new(RefusalReason::InvalidTask, detail).into();
    }
    let mut env = match factory.create(&request.task, false) {
        Ok(env) => env,
        Err(e) => {
            return Refusal::new(
                RefusalReason::NoEnvironment,
                format!("cannot create an environment: {e}"),
            )
            .into();
        }
    };
    let result = async {
        env.restore(&[]).await?;
        let state = env.observe().await?;
        let candidates = env.candidates().await?;
        Ok::<_, EnvError>((state, candidates))
    }
    .await;
    match result {
        Ok((state, mut candidates)) => {
            // The start page's actions the memory votes for come first at the queen's root.
            // Traces name the start page by the task's start URL (the node that searched a
            // branch never saw the page the start URL redirected to): both are this page.
            let mut votes = memory.votes(&state);
            let by_start_url = StateInfo {
                location: crate::policy::location_of(&request.task.start_url),
                ..state
            };
            for (key, vote) in memory.votes(&by_start_url) {
                let kept = votes.entry(key).or_default();
                *kept = kept.max(vote);
            }
            let votes = raise_priors(&mut candidates, &votes);
            if !votes.is_empty() {
                tracing::info!(votes = votes.len(), "the memory votes at the start page");
            }
            let report = ExpandReport {
                model: F::take_model_usage(&env),
                task: task_id,
                root: state.fingerprint,
                success: state.success,
                value_hint: state.value_hint,
                session_expired: state.session_expired,
                candidates: candidates
                    .into_iter()
                    // Refused outright (it would end the session): never a branch.
                    .filter(|c| {
                        let keep = c.refused.is_none();
                        if !keep {
                            tracing::info!(action = %c.action.label(), "refused at the start page: it would end the session");
                        }
                        keep
                    })
                    .map(|c| WireCandidate {
                        action: c.action,
                        prior: c.prior,
                        risk: c.risk,
                        key: c.key,
                        target: c.target,
                    })
                    .collect(),
            };
            match sign(identity, report) {
                Ok(signed) => Message::Expanded(signed),
                Err(refusal) => refusal.into(),
            }
        }
        Err(e) => Refusal::new(RefusalReason::StartPage, format!("start page: {e}")).into(),
    }
}
