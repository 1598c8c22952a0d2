//! The signed trajectory of a run (`trajectory.json`, format in `forager_protocol::artifact`):
//! written by the queen when a task passes, and checked by `forager verify DIR`.
//!
//! Verification trusts nothing in the directory: every signature is checked strictly against
//! the key beside it, every key against the peer id it is named by, the node messages against
//! the steps, the hash chain link by link, the file itself against its canonical rendering, and
//! every other file against its digest. The first failed check is reported with the file it is
//! about and its name.
//!
//! A passing task's files are written in this order, each later one naming the earlier ones'
//! digests: `rollouts.json` (`--keep-all`), `workflow.json`, the step screenshots, `report.html`,
//! and last the signed `trajectory.json`. The writing is the task's `ArtifactJob`
//! (`task/finishing.rs`), on a blocking thread.

use crate::journal::TaskDir;
use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use forager_node::net::identity::peer_id_of;
use forager_protocol::artifact::{
    Attestation, Digest32, FileDigest, ROLLOUTS_VERSION, Rollout, RolloutsDocument,
    TRAJECTORY_FILE, TRAJECTORY_VERSION, TrajectoryBody, TrajectoryDocument, chain, chain_next,
    chain_start, is_plain_file_name, rollout_steps,
};
use forager_protocol::result::{ResultStep, StepVerification};
use forager_protocol::signing::{self, Domain};
use forager_protocol::wire::{
    FoundPath, PageInfo, ProgressReport, ReplayReport, TaskId, TreeSnapshot, TreeStatus,
    judge_reproduction, verified_pages,
};
use forager_protocol::workflow::{WORKFLOW_FILE, compile};
use forager_protocol::{Action, TaskSpec};
use std::path::{Path, PathBuf};

/// The file name of step `index`'s screenshot (1-based).
pub fn screenshot_name(index: usize) -> String {
    format!("step-{index:02}.jpg")
}

/// The finished trajectories' file name in a run directory (`--keep-all`).
pub const ROLLOUTS_FILE: &str = "rollouts.json";

/// A progress report kept for `rollouts.json`: as its node signed it, and what the queen knows
/// of it.
#[derive(Debug, Clone)]
pub struct KeptReport {
    /// The report as signed.
    pub attestation: Attestation,
    /// Its node.
    pub node: libp2p::PeerId,
    /// The branch it is about.
    pub branch: u64,
    /// The branch's actions from the start URL.
    pub prefix: Vec<Action>,
    /// Its tree.
    pub tree: TreeSnapshot,
}

/// Writes `rollouts.json` (see [`rollouts_document`]).
pub fn write_rollouts(
    journal: &TaskDir,
    task: &TaskId,
    kept: &[KeptReport],
) -> Result<(), WriteError> {
    let bytes = rollouts_document(task, kept)
        .to_json()
        .map_err(|e| WriteError::Encoding(e.to_string()))?;
    journal
        .write_file(ROLLOUTS_FILE, &bytes)
        .map_err(|source| WriteError::Io {
            path: journal.dir().join(ROLLOUTS_FILE),
            source,
        })
}

/// The finished trajectories of kept reports: every node of every kept tree that was reached,
/// cited with the latest kept report holding it.
pub fn rollouts_document(task: &TaskId, kept: &[KeptReport]) -> RolloutsDocument {
    let mut rollouts = Vec::new();
    let mut done = std::collections::HashSet::new();
    for (index, report) in kept.iter().enumerate().rev() {
        for node in &report.tree.nodes {
            if node.parent.is_none() || node.fingerprint.is_none() {
                continue;
            }
            if !done.insert((report.node, report.branch, report.tree.instance, node.id)) {
                continue;
            }
            let Some(steps) = rollout_steps(&report.tree, node.id) else {
                continue;
            };
            rollouts.push(Rollout {
                report: index as u32,
                branch: report.branch,
                tree: report.tree.instance,
                node: node.id,
                prefix: report.prefix.clone(),
                success: node.status == TreeStatus::Success,
                steps,
            });
        }
    }
    rollouts.sort_by_key(|r| (r.report, r.node));
    RolloutsDocument {
        version: ROLLOUTS_VERSION,
        task_id: task.to_string(),
        reports: kept.iter().map(|k| k.attestation.clone()).collect(),
        rollouts,
    }
}

/// Checks `rollouts.json`: every report opens under its signer's key, that key is the peer it
/// names, the report is about this task, and every rollout is a path of its report's tree.
fn verify_rollouts(bytes: &[u8], task_id: &str) -> Result<usize, VerifyError> {
    let file = ROLLOUTS_FILE;
    let document: RolloutsDocument = serde_json::from_slice(bytes)
        .map_err(|e| failed(file, "format", format!("not a rollouts document: {e}")))?;
    if document.version != ROLLOUTS_VERSION {
        return Err(failed(
            file,
            "version",
            format!("version {}", document.version),
        ));
    }
    if document.task_id != task_id {
        return Err(failed(file, "task id", "it is about another task"));
    }
    let mut reports = Vec::with_capacity(document.reports.len());
    for (i, attestation) in document.reports.iter().enumerate() {
        let (report, key): (ProgressReport, VerifyingKey) = attestation
            .open(Domain::Report)
            .map_err(|e| failed(file, "signatures", format!("report {i}: {e}")))?;
        named_peer(attestation, &key, "searching node").map_err(|_| {
            failed(
                file,
                "peer ids",
                format!("report {i}'s key is not its named peer's"),
            )
        })?;
        if report.task.to_string() != task_id {
            return Err(failed(
                file,
                "task id",
                format!("report {i} is about another task"),
            ));
        }
        reports.push(report);
    }
    for (i, rollout) in document.rollouts.iter().enumerate() {
        let report = reports
            .get(rollout.report as usize)
            .ok_or_else(|| failed(file, "rollouts", format!("rollout {i} cites no report")))?;
        let holds = report.branch.0 == rollout.branch
            && report.tree.instance == rollout.tree
            && rollout_steps(&report.tree, rollout.node).as_ref() == Some(&rollout.steps);
        if !holds {
            return Err(failed(
                file,
                "rollouts",
                format!("rollout {i} is not a path of the tree its report signed"),
            ));
        }
    }
    Ok(document.rollouts.len())
}

/// Why a trajectory could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file of the run directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Something could not be encoded.
    #[error("cannot encode the trajectory: {0}")]
    Encoding(String),
}

/// What stands behind a winning path: the finder's and the reproducer's signed reports, and
/// the reproducer's screenshots.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// The finder's signed progress report holding the path.
    pub found_by: Attestation,
    /// The reproducer's signed replay report.
    pub reproduced_by: Attestation,
    /// The reproducer's screenshot of every step (empty where none was taken).
    pub screenshots: Vec<Vec<u8>>,
}

/// Writes the reproducer's screenshots as `step-01.jpg`, … (before the report, which shows
/// them, and the trajectory, which names their digests).
pub fn write_screenshots(journal: &TaskDir, screenshots: &[Vec<u8>]) -> Result<(), WriteError> {
    for (i, bytes) in screenshots.iter().enumerate() {
        if bytes.is_empty() {
            continue;
        }
        let name = screenshot_name(i + 1);
        journal
            .write_file(&name, bytes)
            .map_err(|source| WriteError::Io {
                path: journal.dir().join(&name),
                source,
            })?;
    }
    Ok(())
}

/// Writes `trajectory.json` into the task's directory, after the files it names (`names`:
/// the journal, the result, the workflow, the report, …) are final: their digests are in it.
pub fn write_trajectory(
    journal: &TaskDir,
    key: &SigningKey,
    task: &TaskSpec,
    steps: Vec<ResultStep>,
    evidence: Evidence,
    names: &[&str],
) -> Result<(), WriteError> {
    let Evidence {
        found_by,
        reproduced_by,
        screenshots,
    } = evidence;
    let dir = journal.dir();
    let encoding = |e: &dyn std::fmt::Display| WriteError::Encoding(e.to_string());
    let mut files = Vec::new();
    for &name in names {
        let path = dir.join(name);
        let bytes = std::fs::read(&path).map_err(|source| WriteError::Io { path, source })?;
        files.push(FileDigest {
            name: name.to_owned(),
            sha256: Digest32::of(&bytes),
        });
    }
    // The screenshots the reproducer took (written by `write_screenshots`), named by step.
    let shots: Vec<Option<FileDigest>> = (0..steps.len())
        .map(|i| {
            screenshots
                .get(i)
                .filter(|b| !b.is_empty())
                .map(|bytes| FileDigest {
                    name: screenshot_name(i + 1),
                    sha256: Digest32::of(bytes),
                })
        })
        .collect();
    let task_id = TaskId::of(task).map_err(|e| encoding(&e))?;
    // Input values never enter an artifact, only their digests (the id is computed so).
    let task = task.redacted();
    let body = TrajectoryBody {
        version: TRAJECTORY_VERSION,
        task_id: task_id.to_string(),
        steps: chain(&task, steps.into_iter().zip(shots).collect()).map_err(|e| encoding(&e))?,
        task,
        found_by,
        reproduced_by,
        files,
        recorded_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let signature = signing::sign(key, Domain::Trajectory, &body).map_err(|e| encoding(&e))?;
    let public = key.verifying_key();
    let document = TrajectoryDocument {
        body,
        queen: Attestation {
            peer: peer_id_of(&public)
                .map(|p| p.to_string())
                .unwrap_or_default(),
            public_key: data_encoding::HEXLOWER.encode(public.as_bytes()),
            message: String::new(),
            signature: data_encoding::HEXLOWER.encode(&signature.to_bytes()),
        },
    };
    let bytes = document.to_json().map_err(|e| encoding(&e))?;
    journal
        .write_file(TRAJECTORY_FILE, &bytes)
        .map_err(|source| WriteError::Io {
            path: dir.join(TRAJECTORY_FILE),
            source,
        })
}

/// Why a run directory does not verify.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The directory or its trajectory cannot be read at all (exit status 2).
    #[error("{path}: cannot read: {reason}")]
    Unreadable {
        /// What could not be read.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A check failed (exit status 1).
    #[error("{file}: {check} failed: {detail}")]
    Failed {
        /// The file the check is about.
        file: String,
        /// The check's name.
        check: &'static str,
        /// What was wrong.
        detail: String,
    },
}

/// What a verified run directory holds.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The task's id.
    pub task_id: String,
    /// The goal.
    pub goal: String,
    /// Steps in the path.
    pub steps: usize,
    /// The peer that found the path.
    pub found_by: String,
    /// The peer that reproduced it.
    pub reproduced_by: String,
    /// Steps executed again by the reproducer (the first ones); the rest are attested by the
    /// finder's signed evidence.
    pub reproduced_steps: usize,
    /// Whether the task's read-only after-check held, when it was loaded.
    pub after_check: Option<bool>,
    /// Steps above the task's risk ceiling, each covered by a consent the task carries.
    pub consented_steps: usize,
    /// The queen that signed the trajectory.
    pub queen: String,
    /// The other files checked.
    pub files: Vec<String>,
}

fn failed(file: &str, check: &'static str, detail: impl Into<String>) -> VerifyError {
    VerifyError::Failed {
        file: file.to_owned(),
        check,
        detail: detail.into(),
    }
}

/// The trajectory document of a run's directory, read, of this build's version and in its
/// canonical form.
fn read_trajectory(dir: &Path) -> Result<TrajectoryDocument, VerifyError> {
    let path = dir.join(TRAJECTORY_FILE);
    let bytes = std::fs::read(&path).map_err(|e| VerifyError::Unreadable {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let file = TRAJECTORY_FILE;
    let document: TrajectoryDocument = serde_json::from_slice(&bytes)
        .map_err(|e| failed(file, "format", format!("not a trajectory document: {e}")))?;
    let body = &document.body;
    if body.version != TRAJECTORY_VERSION {
        return Err(failed(
            file,
            "version",
            format!(
                "version {} (this build reads {TRAJECTORY_VERSION})",
                body.version
            ),
        ));
    }
    let canonical = document
        .to_json()
        .map_err(|e| failed(file, "canonical form", e.to_string()))?;
    if canonical != bytes {
        return Err(failed(
            file,
            "canonical form",
            "the file is not the canonical rendering of its content (edited by hand?)",
        ));
    }
    Ok(document)
}

/// The queen's signature over the body, and the task it names: no input value in clear, its
/// id its hash.
fn check_queen_and_task(document: &TrajectoryDocument) -> Result<(), VerifyError> {
    let (file, body) = (TRAJECTORY_FILE, &document.body);
    // The queen's signature over the whole body.
    let queen_key = key_of(&document.queen, "queen")?;
    let queen_signature = signature_of(&document.queen, "queen")?;
    signing::verify(&queen_key, Domain::Trajectory, body, &queen_signature)
        .map_err(|_| failed(file, "queen signature", "does not verify over the body"))?;
    named_peer(&document.queen, &queen_key, "queen")?;

    // The task, with no input value in clear, and its id.
    if body.task.redacted() != body.task {
        return Err(failed(
            file,
            "inputs redacted",
            "an input value is in clear (artifacts carry only digests)",
        ));
    }
    let task_id = TaskId::of(&body.task)
        .map_err(|e| failed(file, "task id", e.to_string()))?
        .to_string();
    if task_id != body.task_id {
        return Err(failed(
            file,
            "task id",
            format!("the task hashes to {task_id}, not {}", body.task_id),
        ));
    }
    Ok(())
}

/// The steps' hash chain, link by link, and their numbering.
fn check_chain(body: &TrajectoryBody) -> Result<(), VerifyError> {
    let file = TRAJECTORY_FILE;
    let mut previous =
        chain_start(&body.task).map_err(|e| failed(file, "hash chain", e.to_string()))?;
    for (i, step) in body.steps.iter().enumerate() {
        if step.previous != previous {
            return Err(failed(
                file,
                "hash chain",
                format!("step {} does not link to the step before it", i + 1),
            ));
        }
        let hash = chain_next(&previous, &step.step, &step.screenshot)
            .map_err(|e| failed(file, "hash chain", e.to_string()))?;
        if step.hash != hash {
            return Err(failed(
                file,
                "hash chain",
                format!("step {}'s content does not match its hash", i + 1),
            ));
        }
        if step.step.index != i as u32 + 1 {
            return Err(failed(
                file,
                "hash chain",
                format!("step {} is numbered {}", i + 1, step.step.index),
            ));
        }
        previous = hash;
    }
    Ok(())
}

/// Checks the run directory `dir` (see the module documentation).
pub fn verify_run_dir(dir: &Path) -> Result<Verified, VerifyError> {
    let document = read_trajectory(dir)?;
    let body = &document.body;
    check_queen_and_task(&document)?;
    check_chain(body)?;
    let actions: Vec<&Action> = body.steps.iter().map(|s| &s.step.action).collect();
    let path = finder_path(body, &actions)?;
    let consented_steps = check_consents(body, &actions)?;
    let (replay, reproduced, pages) = check_reproducer(body, &path)?;
    let names = check_files(dir, body, &pages)?;
    Ok(Verified {
        task_id: body.task_id.clone(),
        goal: body.task.goal.clone(),
        steps: body.steps.len(),
        found_by: body.found_by.peer.clone(),
        reproduced_by: body.reproduced_by.peer.clone(),
        reproduced_steps: reproduced,
        after_check: replay.after_check,
        consented_steps,
        queen: document.queen.peer.clone(),
        files: names,
    })
}

/// The finder's signed report, and in it the success that is exactly this path.
fn finder_path(body: &TrajectoryBody, actions: &[&Action]) -> Result<FoundPath, VerifyError> {
    let file = TRAJECTORY_FILE;
    let fingerprints: Vec<_> = body.steps.iter().map(|s| s.step.fingerprint).collect();
    // The finder: its signed report holds exactly this path.
    let (found, finder_key): (ProgressReport, VerifyingKey) = body
        .found_by
        .open(Domain::Report)
        .map_err(|e| failed(file, "finder signature", e.to_string()))?;
    named_peer(&body.found_by, &finder_key, "finder")?;
    if found.task.to_string() != body.task_id {
        return Err(failed(file, "finder report", "it is about another task"));
    }
    let Some(path) = found.successes.iter().find(|path| {
        path.actions.iter().collect::<Vec<_>>() == actions
            && path.fingerprints == fingerprints
            && path.risks.len() == body.steps.len()
            && path
                .risks
                .iter()
                .zip(&body.steps)
                .all(|(r, s)| *r == s.step.risk)
    }) else {
        return Err(failed(
            file,
            "finder report",
            "no success in the finder's report is this path",
        ));
    };

    Ok(path.clone())
}

/// Checks the task's consents and that every step above its ceiling ran under one; the
/// number of such steps.
fn check_consents(body: &TrajectoryBody, actions: &[&Action]) -> Result<usize, VerifyError> {
    let file = TRAJECTORY_FILE;
    // Steps above the task's ceiling ran under a consent the task carries: signed by its
    // key, for this task and an origin of it, valid when the queen recorded the run (a
    // trajectory outlives its consents: today's clock does not matter), permitting that step
    // at that place.
    let keys: Vec<u64> = actions
        .iter()
        .map(|a| forager_node::embed::action_key(&a.label()))
        .collect();
    let origins = body.task.origins();
    let mut consents = Vec::new();
    for (i, signed) in body.task.consents.iter().enumerate() {
        let consent = signed
            .check(&body.task_id, &origins, body.recorded_at, &[])
            .map_err(|e| failed(file, "consent", format!("consent {}: {e}", i + 1)))?;
        if body.recorded_at < consent.issued_at {
            return Err(failed(
                file,
                "consent",
                format!(
                    "consent {} was issued at {}, after the run was recorded ({})",
                    i + 1,
                    consent.issued_at,
                    body.recorded_at
                ),
            ));
        }
        consents.push(consent);
    }
    let mut consented_steps = 0;
    for (i, step) in body.steps.iter().enumerate() {
        if step.step.risk <= body.task.risk_ceiling {
            continue;
        }
        if !consents
            .iter()
            .any(|c| c.permits(&keys[..i], keys[i], step.step.risk))
        {
            return Err(failed(
                file,
                "consent",
                format!(
                    "step {} ({}) is above the task's ceiling and no consent covers it",
                    i + 1,
                    step.step.label
                ),
            ));
        }
        consented_steps += 1;
    }

    Ok(consented_steps)
}

/// Checks the reproducer's signed replay against the path and the steps; the replay, how
/// many steps it reproduced and the pages the steps stand for.
fn check_reproducer(
    body: &TrajectoryBody,
    path: &FoundPath,
) -> Result<(ReplayReport, usize, Vec<PageInfo>), VerifyError> {
    let file = TRAJECTORY_FILE;
    // The reproducer: its signed replay reached pages of the same kinds, and the goal (or, on
    // a site whose writes are not repeated, the page of the first write, the evidence past it
    // and the after-check).
    let (replay, reproducer_key): (ReplayReport, VerifyingKey) = body
        .reproduced_by
        .open(Domain::Report)
        .map_err(|e| failed(file, "reproducer signature", e.to_string()))?;
    named_peer(&body.reproduced_by, &reproducer_key, "reproducer")?;
    if replay.task.to_string() != body.task_id {
        return Err(failed(
            file,
            "reproducer report",
            "it is about another task",
        ));
    }
    let reproduced = path.reproducible_steps(&body.task);
    if let Err(reason) = judge_reproduction(&body.task, path, reproduced, &replay) {
        return Err(failed(
            file,
            "reproducer report",
            format!("the replay did not reproduce the success: {reason}"),
        ));
    }
    for (i, step) in body.steps.iter().enumerate() {
        let expected = if i < reproduced {
            StepVerification::Reproduced
        } else {
            StepVerification::Attested
        };
        if step.step.verification != expected {
            return Err(failed(
                file,
                "steps",
                format!(
                    "step {} says {} where the path and the task make it {}",
                    i + 1,
                    step.step.verification.name(),
                    expected.name()
                ),
            ));
        }
    }
    let pages = verified_pages(&replay, path, reproduced);
    let last = body.steps.len().saturating_sub(1);
    for (i, (page, step)) in pages.iter().zip(&body.steps).enumerate() {
        let s = &step.step;
        let reward = if i == last {
            1.0
        } else {
            page.value_hint.clamp(0.0, 1.0)
        };
        if page.url != s.url
            || s.reward != reward
            || page.title != s.title
            || page.verdict != s.verdict
            || page.healed_locator != s.healed_locator
            || page.healed_by != s.healed_by
            || page.cost_ms != s.cost_ms
        {
            return Err(failed(
                file,
                "reproducer report",
                format!("step {} differs from what the reproducer saw", i + 1),
            ));
        }
    }
    for (i, step) in body.steps.iter().enumerate() {
        let signed = if i < reproduced {
            replay.screenshots.get(i).copied().flatten()
        } else {
            path.seen.get(i).and_then(|s| s.screenshot)
        };
        if step.screenshot.as_ref().map(|s| s.sha256) != signed {
            return Err(failed(
                file,
                "screenshots",
                format!(
                    "step {}'s screenshot is not the one its {} signed",
                    i + 1,
                    if i < reproduced {
                        "reproducer"
                    } else {
                        "finder"
                    }
                ),
            ));
        }
    }
    if replay.pages.len() != reproduced {
        return Err(failed(
            file,
            "reproducer report",
            "the replay saw another number of pages",
        ));
    }

    Ok((replay, reproduced, pages))
}

/// Checks every other file the trajectory names (present, its digest, the workflow the
/// steps compile to, the rollouts); their names.
fn check_files(
    dir: &Path,
    body: &TrajectoryBody,
    pages: &[PageInfo],
) -> Result<Vec<String>, VerifyError> {
    let file = TRAJECTORY_FILE;
    // The other files.
    let mut names = Vec::new();
    let screenshots = body.steps.iter().filter_map(|s| s.screenshot.as_ref());
    for digest in body.files.iter().chain(screenshots) {
        if !is_plain_file_name(&digest.name) {
            return Err(failed(
                file,
                "file names",
                format!("{:?} is not a plain file name", digest.name),
            ));
        }
        let path = dir.join(&digest.name);
        let bytes = std::fs::read(&path).map_err(|e| {
            failed(
                &digest.name,
                "presence",
                format!("named in {TRAJECTORY_FILE} but cannot be read: {e}"),
            )
        })?;
        if Digest32::of(&bytes) != digest.sha256 {
            return Err(failed(
                &digest.name,
                "digest",
                format!("its SHA-256 is not the one {TRAJECTORY_FILE} names"),
            ));
        }
        if digest.name == WORKFLOW_FILE {
            // The workflow is what the trajectory compiles to, byte for byte.
            let steps: Vec<ResultStep> = body.steps.iter().map(|s| s.step.clone()).collect();
            let compiled = compile(&body.task, &steps, pages)
                .map_err(|e| e.to_string())
                .and_then(|w| w.to_json().map_err(|e| e.to_string()))
                .map_err(|e| failed(WORKFLOW_FILE, "workflow", e))?;
            if compiled != bytes {
                return Err(failed(
                    WORKFLOW_FILE,
                    "workflow",
                    "it is not the compilation of the signed trajectory",
                ));
            }
        }
        if digest.name == ROLLOUTS_FILE {
            verify_rollouts(&bytes, &body.task_id)?;
        }
        names.push(digest.name.clone());
    }
    Ok(names)
}

fn key_of(attestation: &Attestation, who: &str) -> Result<VerifyingKey, VerifyError> {
    let bytes: [u8; 32] = data_encoding::HEXLOWER
        .decode(attestation.public_key.as_bytes())
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            failed(
                TRAJECTORY_FILE,
                "keys",
                format!("the {who}'s public key is not 64 hex digits"),
            )
        })?;
    VerifyingKey::from_bytes(&bytes).map_err(|_| {
        failed(
            TRAJECTORY_FILE,
            "keys",
            format!("the {who}'s public key is not a valid Ed25519 key"),
        )
    })
}

fn signature_of(attestation: &Attestation, who: &str) -> Result<Signature, VerifyError> {
    let bytes: [u8; 64] = data_encoding::HEXLOWER
        .decode(attestation.signature.as_bytes())
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or_else(|| {
            failed(
                TRAJECTORY_FILE,
                "signatures",
                format!("the {who}'s signature is not 128 hex digits"),
            )
        })?;
    Ok(Signature::from_bytes(&bytes))
}

/// The key must be the named peer's: a peer id is derived from its public key.
fn named_peer(
    attestation: &Attestation,
    key: &VerifyingKey,
    who: &'static str,
) -> Result<(), VerifyError> {
    match peer_id_of(key) {
        Some(peer) if peer.to_string() == attestation.peer => Ok(()),
        _ => Err(failed(
            TRAJECTORY_FILE,
            "peer ids",
            format!(
                "the {who}'s key is not the key of peer {:?}",
                attestation.peer
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::signing::Signed;
    use forager_protocol::wire::{BranchId, TreeNode};
    use forager_protocol::{Fingerprint, Locator, RiskClass, Target};

    fn node(id: u32, parent: Option<u32>, status: TreeStatus) -> TreeNode {
        TreeNode {
            id,
            parent,
            action: parent.map(|_| Action::Click {
                target: Target {
                    locators: vec![Locator::Css(format!("#a{id}"))],
                    role: "link".into(),
                    name: format!("link {id}"),
                    sends: Default::default(),
                },
            }),
            fingerprint: Some(Fingerprint([id as u8; 16])),
            status,
            visits: 1,
            mean_value: 0.5,
            risk: RiskClass::ReadOnly,
            replay: 0.0,
            cost_ms: 7,
        }
    }

    /// A signed report on a three-node tree (root, a child, its successful child), kept.
    fn kept(task: TaskId) -> KeptReport {
        let key = SigningKey::from_bytes(&[3; 32]);
        let peer = peer_id_of(&key.verifying_key()).expect("a peer id");
        let report = ProgressReport {
            task,
            branch: BranchId(0),
            prefix_fingerprints: Vec::new(),
            visits: 2,
            value_sum: 1.0,
            best_value: 1.0,
            actions: 2,
            replayed: 0,
            cost: Default::default(),
            successes: Vec::new(),
            approvals: Vec::new(),
            exhausted: false,
            error: None,
            network: Default::default(),
            counters: Default::default(),
            locations: Vec::new(),
            states: Vec::new(),
            session_ended: false,
            tree: TreeSnapshot {
                instance: 42,
                nodes: vec![
                    node(0, None, TreeStatus::Open),
                    node(1, Some(0), TreeStatus::Open),
                    node(2, Some(1), TreeStatus::Success),
                ],
                omitted: 0,
            },
        };
        let signed = Signed::new(&key, Domain::Report, report.clone()).expect("signs");
        KeptReport {
            attestation: Attestation::of(&signed, peer.to_string()).expect("attests"),
            node: peer,
            branch: 0,
            prefix: Vec::new(),
            tree: report.tree,
        }
    }

    fn check(document: &RolloutsDocument, task: &TaskId) -> Result<usize, &'static str> {
        let bytes = document.to_json().expect("json");
        verify_rollouts(&bytes, &task.to_string()).map_err(|e| match e {
            VerifyError::Failed { check, .. } => check,
            VerifyError::Unreadable { .. } => "unreadable",
        })
    }

    #[test]
    fn every_reached_node_is_a_rollout_standing_on_its_signed_report() {
        let task = TaskId([5; 16]);
        let document = rollouts_document(&task, &[kept(task)]);
        assert_eq!(document.rollouts.len(), 2);
        assert_eq!(document.rollouts[1].steps.len(), 2);
        assert!(document.rollouts[1].success && !document.rollouts[0].success);
        assert_eq!(check(&document, &task), Ok(2));

        // A step that is not what the node signed, a rollout citing no report, a broken
        // signature, another task: each named.
        let mut changed = document.clone();
        changed.rollouts[1].steps[0].value = 0.9;
        assert_eq!(check(&changed, &task), Err("rollouts"));
        let mut uncited = document.clone();
        uncited.rollouts[0].report = 9;
        assert_eq!(check(&uncited, &task), Err("rollouts"));
        let mut forged = document.clone();
        let signature = &mut forged.reports[0].signature;
        let last = if signature.ends_with('0') { "1" } else { "0" };
        signature.pop();
        signature.push_str(last);
        assert_eq!(check(&forged, &task), Err("signatures"));
        assert_eq!(check(&document, &TaskId([6; 16])), Err("task id"));
    }
}
