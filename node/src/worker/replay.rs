//! Reproducing a path from scratch, step by step, and what each step saw (for the queen's
//! verification and for a found path's evidence).
//!
//! A reproduction executes the first `reproduce` steps in a fresh environment (the site reset
//! first when they write), compares each page's family with the finder's and names what differed;
//! when the rest is attested, it loads the task's after-check page. It reports pages,
//! screenshots and success.

use super::consent::check_capsule;
use super::sign;
use crate::environment::{EnvError, Environment};
use crate::factory::EnvFactory;
use crate::net::NodeIdentity;
use forager_protocol::Fingerprint;
use forager_protocol::artifact::Digest32;
use forager_protocol::result::NetworkSummary;
use forager_protocol::wire::{
    FoundPath, MAX_SEEN_TEXT, Message, PageInfo, Refusal, RefusalReason, ReplayAnswer,
    ReplayReport, ReplayRequest, StepSeen,
};

/// Screenshot bytes of write evidence a progress answer carries at most.
pub(super) const EVIDENCE_BUDGET: usize = 384 * 1024;

/// Screenshot bytes a replay answer carries at most (they travel in one frame).
pub(super) const SCREENSHOT_BUDGET: usize = 640 * 1024;

/// What the finder saw along a success path: each page's kind (what a reproduction compares)
/// and, past a write, the evidence captured when the step ran; screenshots go to `shots`
/// (within [`EVIDENCE_BUDGET`]), named by their digest.
pub(super) fn seen_along<F: EnvFactory>(
    env: &F::Env,
    path: &FoundPath,
    shots: &mut Vec<Vec<u8>>,
) -> Vec<StepSeen> {
    let mut before = Fingerprint([0; 16]);
    let mut seen = Vec::with_capacity(path.fingerprints.len());
    for (i, &after) in path.fingerprints.iter().enumerate() {
        let page = F::step_info(env, before, after);
        let why = path
            .actions
            .get(i)
            .and_then(|action| F::why(env, action, after));
        let evidence = F::evidence(env, after);
        let used: usize = shots.iter().map(Vec::len).sum();
        let screenshot = evidence
            .as_ref()
            .and_then(|e| e.screenshot.as_ref())
            .filter(|bytes| used + bytes.len() <= EVIDENCE_BUDGET)
            .map(|bytes| {
                shots.push(bytes.clone());
                Digest32::of(bytes)
            });
        seen.push(StepSeen {
            family: page.family,
            heading: page.heading.map(|h| bounded(&h)),
            url: bounded(&page.url),
            title: bounded(&page.title),
            page_digest: evidence.map(|e| e.page_digest),
            screenshot,
            why,
        });
        before = after;
    }
    seen
}

/// Whether step `i` of a reproduction reached another kind of page than the finder's, and
/// what differed. Pages are compared by family where the finder said it (live regions,
/// timestamps and tokens change the fingerprint, not the family), else by fingerprint.
pub(super) fn differs(
    path: &FoundPath,
    i: usize,
    reached: Fingerprint,
    page: &PageInfo,
) -> Option<String> {
    let step = i + 1;
    match (path.seen.get(i), page.family) {
        (
            Some(
                seen @ StepSeen {
                    family: Some(family),
                    ..
                },
            ),
            Some(found),
        ) => {
            if *family == found {
                return None;
            }
            let own_path = url_path(&page.url);
            let what = if seen.heading != page.heading {
                format!(
                    "heading {:?} vs {:?}",
                    seen.heading.as_deref().unwrap_or(""),
                    page.heading.as_deref().unwrap_or("")
                )
            } else if url_path(&seen.url) != own_path {
                format!("path {:?} vs {:?}", url_path(&seen.url), own_path)
            } else {
                "headings or forms".to_owned()
            };
            Some(format!("family differs at step {step}: {what}"))
        }
        _ => (path.fingerprints.get(i) != Some(&reached))
            .then(|| format!("fingerprint differs at step {step}")),
    }
}

/// A text cut to [`MAX_SEEN_TEXT`] bytes at a character boundary.
pub(super) fn bounded(text: &str) -> String {
    let mut end = text.len().min(MAX_SEEN_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// The path of a URL (`/admin/auth/group/`), or the text itself when it does not parse.
pub(super) fn url_path(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.path().to_owned())
}

pub(super) async fn replay<F: EnvFactory>(
    factory: &F,
    identity: &NodeIdentity,
    request: ReplayRequest,
) -> Message {
    if let Err(detail) = check_capsule(&request.task) {
        return Refusal::new(RefusalReason::InvalidTask, detail).into();
    }
    let mut report = ReplayReport {
        task: request.task_id,
        fingerprints: Vec::new(),
        pages: Vec::new(),
        success: false,
        divergence: None,
        divergence_detail: None,
        executed: 0,
        after_check: None,
        error: None,
        transient: false,
        network: NetworkSummary::default(),
        screenshots: Vec::new(),
        model: Default::default(),
        answer: None,
    };
    let path = &request.path;
    let reproduce = (request.reproduce as usize).min(path.actions.len());
    let partial = reproduce < path.actions.len();
    // By the queen's rule: the finder's class or the action's own reading, the higher.
    let writes = path.actions[..reproduce]
        .iter()
        .enumerate()
        .any(|(i, action)| {
            let claimed = path
                .risks
                .get(i)
                .copied()
                .unwrap_or(forager_protocol::RiskClass::ReadOnly);
            claimed.max(forager_protocol::risk::classify_action(action))
                >= forager_protocol::RiskClass::DraftWrite
        });
    let mut screenshots: Vec<Vec<u8>> = Vec::new();
    match factory.create(&request.task, true) {
        Ok(mut env) => {
            let walked = async {
                if writes {
                    // The site's sandbox is restored before its writes are executed again.
                    F::reset_site(&mut env).await?;
                }
                env.restore(&[]).await?;
                let mut last = env.observe().await?;
                for (i, action) in path.actions[..reproduce].iter().enumerate() {
                    let before = last.fingerprint;
                    let step = env.act(action).await?;
                    last = step.state;
                    report.executed += 1;
                    report.fingerprints.push(step.state.fingerprint);
                    let mut page = F::step_info(&env, before, step.state.fingerprint);
                    page.cost_ms = step.cost.browser_ms;
                    page.value_hint = step.state.value_hint;
                    // What the page looked like, for the trajectory and the report; past the
                    // budget, later steps go without.
                    let used: usize = screenshots.iter().map(Vec::len).sum();
                    let shot = F::screenshot(&env)
                        .await
                        .filter(|bytes| used + bytes.len() <= SCREENSHOT_BUDGET);
                    report.screenshots.push(shot.as_deref().map(Digest32::of));
                    screenshots.push(shot.unwrap_or_default());
                    let diverged = differs(path, i, step.state.fingerprint, &page);
                    report.pages.push(page);
                    if let Some(detail) = diverged {
                        // Not the finder's page: what follows would act on another page.
                        report.divergence = Some(i as u32);
                        report.divergence_detail = Some(detail);
                        break;
                    }
                }
                if partial
                    && report.divergence.is_none()
                    && let Some(check) = &request.task.verify
                {
                    report.after_check = Some(F::after_check(&mut env, check).await?);
                }
                Ok::<_, EnvError>(last)
            }
            .await;
            match walked {
                Ok(last) => report.success = last.success,
                Err(e) => {
                    // The verifier's own trouble says nothing of the path.
                    report.transient = matches!(e, EnvError::Timeout { .. } | EnvError::Crashed(_));
                    report.error = Some(e.to_string());
                }
            }
            let wants_answer = request
                .task
                .model
                .as_ref()
                .is_some_and(|m| m.answer_schema.is_some());
            if report.success && !partial && report.divergence.is_none() && wants_answer {
                // The reproduction stands on the final page: the answer is read there.
                report.answer = F::extract_answer(&mut env)
                    .await
                    .map(forager_protocol::llm::JsonAnswer);
            }
            report.network = F::network(&env);
            report.model = F::take_model_usage(&env);
        }
        Err(e) => {
            report.transient = true;
            report.error = Some(format!("cannot create an environment: {e}"));
        }
    }
    match sign(identity, report) {
        Ok(signed) => Message::Replayed(Box::new(ReplayAnswer {
            report: signed,
            screenshots,
        })),
        Err(refusal) => refusal.into(),
    }
}
