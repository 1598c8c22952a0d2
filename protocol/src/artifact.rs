//! The signed trajectory a run leaves behind (`trajectory.json`, version
//! [`TRAJECTORY_VERSION`]): a document anyone can check without trusting whoever wrote it.
//!
//! - The steps form a hash chain: the first step's `previous` is the hash of the task (under a
//!   domain tag), each step's `hash` is SHA-256 of `previous` and the step's canonical
//!   encoding, and the next step's `previous` is that hash.
//! - `found_by` and `reproduced_by` are the node messages that stand behind the path, each with
//!   its signer's key and signature exactly as the node made it: the finder's progress report
//!   (which holds the path), and the reproducer's replay report (which holds the fingerprints,
//!   URLs, titles and verdicts it saw).
//! - `files` names the other files of the run directory with their SHA-256.
//! - The queen signs the canonical encoding of the whole body.
//!
//! The file itself must be the canonical JSON rendering of its content
//! ([`TrajectoryDocument::to_json`]), so that no byte of it can change without a check failing.
//! Checking needs peer ids (libp2p), so the checks live in the queen crate; this module holds
//! the format and the pure pieces.
//!
//! Also here: [`Attestation`], a message exactly as a peer signed it (canonical bytes, key,
//! signature); the `--keep-all` file (`rollouts.json`, [`RolloutsDocument`]) and
//! [`rollout_steps`], the path to one node of a signed tree.

use crate::codec::{self, CodecError};
pub use crate::digest::Digest32;
use crate::result::ResultStep;
use crate::signing::{Domain, Signed};
use crate::task::TaskSpec;
use ed25519_dalek::{Signature, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The version of `trajectory.json` this build writes and reads.
pub const TRAJECTORY_VERSION: u32 = 4;
/// The trajectory's file name in a run directory.
pub const TRAJECTORY_FILE: &str = "trajectory.json";

const CHAIN_TAG: &[u8] = b"forager/v1/trajectory-chain\0";

/// One step of the path, chained to the one before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryStep {
    /// The step as the result document shows it.
    pub step: ResultStep,
    /// A screenshot of the page after the step, when one was taken: a file of the run
    /// directory and its digest.
    pub screenshot: Option<FileDigest>,
    /// The previous step's `hash` (for the first step, the chain's start: see [`chain_start`]).
    pub previous: Digest32,
    /// SHA-256 of `previous` and the canonical encoding of (`step`, `screenshot`).
    pub hash: Digest32,
}

/// A file of the run directory and its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    /// The file's name, relative to the run directory (no `/`, no `..`).
    pub name: String,
    /// Its SHA-256.
    pub sha256: Digest32,
}

/// A message a peer signed, exactly as it signed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attestation {
    /// The signer's libp2p peer id (derived from `public_key`).
    pub peer: String,
    /// The signer's Ed25519 public key, hex.
    pub public_key: String,
    /// The canonical encoding of the signed message, hex.
    pub message: String,
    /// The Ed25519 signature, hex.
    pub signature: String,
}

/// Why an attestation does not open.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AttestationError {
    /// A field is not the hex it should be.
    #[error("{field} is not valid hex of the right length")]
    Hex {
        /// The field.
        field: &'static str,
    },
    /// The public key is not a valid Ed25519 point.
    #[error("the public key is not a valid Ed25519 key")]
    Key,
    /// The message does not decode as the expected type in canonical form.
    #[error("the message does not decode: {0}")]
    Message(#[from] CodecError),
    /// The signature does not verify.
    #[error("the signature does not verify under the attached key")]
    Signature,
}

impl Attestation {
    /// The attestation of a signed value, naming its signer's peer id.
    pub fn of<T: Serialize>(signed: &Signed<T>, peer: String) -> Result<Attestation, CodecError> {
        Ok(Attestation {
            peer,
            public_key: data_encoding::HEXLOWER.encode(signed.signer.as_bytes()),
            message: data_encoding::HEXLOWER.encode(&codec::canonical_bytes(&signed.value)?),
            signature: data_encoding::HEXLOWER.encode(&signed.signature.to_bytes()),
        })
    }

    /// The signed message and its signer's key, if the signature verifies for `domain`.
    pub fn open<T>(&self, domain: Domain) -> Result<(T, VerifyingKey), AttestationError>
    where
        T: Serialize + serde::de::DeserializeOwned,
    {
        let hex = |field: &'static str, text: &str| {
            data_encoding::HEXLOWER
                .decode(text.as_bytes())
                .map_err(|_| AttestationError::Hex { field })
        };
        let key: [u8; 32] = hex("public_key", &self.public_key)?
            .try_into()
            .map_err(|_| AttestationError::Hex {
                field: "public_key",
            })?;
        let key = VerifyingKey::from_bytes(&key).map_err(|_| AttestationError::Key)?;
        let signature: [u8; 64] = hex("signature", &self.signature)?
            .try_into()
            .map_err(|_| AttestationError::Hex { field: "signature" })?;
        let message = hex("message", &self.message)?;
        if message.len() > codec::MAX_FRAME_BYTES {
            return Err(CodecError::TooLarge {
                size: message.len(),
                limit: codec::MAX_FRAME_BYTES,
            }
            .into());
        }
        let value: T = codec::decode_body(&message)?;
        let signed = Signed {
            value,
            signer: key,
            signature: Signature::from_bytes(&signature),
        };
        signed
            .verify(domain)
            .map_err(|_| AttestationError::Signature)?;
        Ok((signed.value, key))
    }
}

/// What the queen signs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryBody {
    /// [`TRAJECTORY_VERSION`].
    pub version: u32,
    /// The task's id (hex), `TaskId::of(task)`.
    pub task_id: String,
    /// The task.
    pub task: TaskSpec,
    /// The path, chained.
    pub steps: Vec<TrajectoryStep>,
    /// The finder's signed progress report holding the path.
    pub found_by: Attestation,
    /// The reproducer's signed replay report.
    pub reproduced_by: Attestation,
    /// The other files of the run directory, with their digests.
    pub files: Vec<FileDigest>,
    /// When the queen recorded the run (Unix seconds): the time a consent the task carries
    /// must have been valid at.
    pub recorded_at: u64,
}

/// `trajectory.json`: the body and the queen's signature over it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryDocument {
    /// What is signed.
    pub body: TrajectoryBody,
    /// The queen's signature over the body ([`Domain::Trajectory`]); `message` is empty, the
    /// body is the message.
    pub queen: Attestation,
}

impl TrajectoryDocument {
    /// The canonical JSON rendering: the only byte sequence a valid `trajectory.json` has.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// The version of `rollouts.json` this build writes and reads.
pub const ROLLOUTS_VERSION: u32 = 1;

/// `rollouts.json` (`--keep-all`): every finished trajectory of a task, each standing on a
/// progress report its searching node signed (whose tree holds it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutsDocument {
    /// [`ROLLOUTS_VERSION`].
    pub version: u32,
    /// The task's id (hex).
    pub task_id: String,
    /// Signed progress reports, exactly as their nodes signed them (domain `report`).
    pub reports: Vec<Attestation>,
    /// The finished trajectories.
    pub rollouts: Vec<Rollout>,
}

/// One finished trajectory: from the start URL through the branch's prefix, then down the
/// reported tree to one of its nodes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rollout {
    /// Which of `reports` holds it.
    pub report: u32,
    /// The branch (as the queen numbered it).
    pub branch: u64,
    /// The tree instance and the node id in it where the trajectory ends.
    pub tree: u64,
    /// The node id.
    pub node: u32,
    /// The branch's actions from the start URL, as the queen assigned them.
    pub prefix: Vec<crate::action::Action>,
    /// The steps below the branch root, as the signed tree holds them.
    pub steps: Vec<RolloutStep>,
    /// Whether it ends at a success.
    pub success: bool,
}

/// One step of a finished trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RolloutStep {
    /// The action.
    pub action: crate::action::Action,
    /// The state reached.
    pub fingerprint: crate::fingerprint::Fingerprint,
    /// The action's risk class.
    pub risk: crate::risk::RiskClass,
    /// The state's mean backed-up value when reported.
    pub value: f64,
    /// What the action cost, in browser milliseconds.
    pub cost_ms: u64,
    /// Where the node stood: `open`, `success`, `exhausted`, or why it was pruned.
    pub status: String,
}

impl RolloutsDocument {
    /// The canonical JSON rendering (pretty, newline at the end).
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

/// The path from a tree's root to node `id`, as rollout steps, or `None` if the tree does not
/// hold it whole (or it passes through a state that was never reached).
pub fn rollout_steps(tree: &crate::wire::TreeSnapshot, id: u32) -> Option<Vec<RolloutStep>> {
    let by_id: std::collections::HashMap<u32, &crate::wire::TreeNode> =
        tree.nodes.iter().map(|n| (n.id, n)).collect();
    let mut steps = Vec::new();
    let mut cursor = by_id.get(&id).copied()?;
    // Bounded by the tree's size: a cycle of parent links (a forged tree) ends here.
    for _ in 0..=tree.nodes.len() {
        let Some(parent) = cursor.parent else {
            steps.reverse();
            return Some(steps);
        };
        steps.push(RolloutStep {
            action: cursor.action.clone()?,
            fingerprint: cursor.fingerprint?,
            risk: cursor.risk,
            value: cursor.mean_value,
            cost_ms: cursor.cost_ms,
            status: cursor.status.kind().to_owned(),
        });
        cursor = by_id.get(&parent).copied()?;
    }
    None
}

/// The chain's start: the hash of the task under the chain's domain tag.
pub fn chain_start(task: &TaskSpec) -> Result<Digest32, CodecError> {
    let mut hasher = Sha256::new();
    hasher.update(CHAIN_TAG);
    hasher.update(codec::canonical_bytes(task)?);
    Ok(Digest32(hasher.finalize().into()))
}

/// The hash of a step whose predecessor's hash is `previous`.
pub fn chain_next(
    previous: &Digest32,
    step: &ResultStep,
    screenshot: &Option<FileDigest>,
) -> Result<Digest32, CodecError> {
    let mut hasher = Sha256::new();
    hasher.update(previous.0);
    hasher.update(codec::canonical_bytes(&(step, screenshot))?);
    Ok(Digest32(hasher.finalize().into()))
}

/// Chains `steps` (with their screenshots) from the task's start.
pub fn chain(
    task: &TaskSpec,
    steps: Vec<(ResultStep, Option<FileDigest>)>,
) -> Result<Vec<TrajectoryStep>, CodecError> {
    let mut previous = chain_start(task)?;
    let mut chained = Vec::with_capacity(steps.len());
    for (step, screenshot) in steps {
        let hash = chain_next(&previous, &step, &screenshot)?;
        chained.push(TrajectoryStep {
            step,
            screenshot,
            previous,
            hash,
        });
        previous = hash;
    }
    Ok(chained)
}

/// Whether a file name stays inside the run directory.
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains(['/', '\\', '\0'])
        && !name.starts_with('.')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Action, Locator, Target};
    use crate::fingerprint::Fingerprint;
    use crate::risk::RiskClass;
    use ed25519_dalek::SigningKey;

    /// A rollout's step values are compared with the signed tree's after a trip through
    /// `rollouts.json`: every float must come back as the very same bits. This one did not
    /// with serde_json's default (fast, not always correctly rounded) parser.
    #[test]
    fn floats_survive_a_json_round_trip_bit_for_bit() {
        for value in [
            0.410_469_818_115_234_36_f64,
            0.1 + 0.2,
            1e-300,
            0.522_660_513_281_822_2,
        ] {
            let text = serde_json::to_string(&value).expect("serialises");
            let back: f64 = serde_json::from_str(&text).expect("parses");
            assert_eq!(back.to_bits(), value.to_bits(), "{text}");
        }
    }

    fn task() -> TaskSpec {
        TaskSpec::new(
            "http://127.0.0.1:1/",
            "find it",
            vec![crate::predicate::SuccessPredicate::UrlMatches(
                "/found$".into(),
            )],
        )
    }

    fn step(index: u32) -> ResultStep {
        let action = Action::Click {
            target: Target {
                locators: vec![Locator::Css(format!("#a{index}"))],
                role: "link".into(),
                name: format!("step {index}"),
                sends: Default::default(),
            },
        };
        ResultStep {
            index,
            label: action.label(),
            action,
            url: format!("http://127.0.0.1:1/{index}"),
            title: "t".into(),
            fingerprint: Fingerprint([index as u8; 16]),
            risk: RiskClass::ReadOnly,
            reward: 0.0,
            cost_ms: 5,
            verdict: None,
            healed_locator: None,
            healed_by: None,
            verification: Default::default(),
            why: None,
        }
    }

    #[test]
    fn the_chain_links_every_step_to_the_one_before() {
        let task = task();
        let steps = chain(&task, (1..=3).map(|i| (step(i), None)).collect()).expect("chains");
        assert_eq!(steps[0].previous, chain_start(&task).expect("start"));
        for pair in steps.windows(2) {
            assert_eq!(pair[1].previous, pair[0].hash);
        }
        for s in &steps {
            assert_eq!(
                s.hash,
                chain_next(&s.previous, &s.step, &s.screenshot).expect("hash")
            );
        }
        // Any change to a step changes its hash, so the next link breaks.
        let mut changed = steps[1].step.clone();
        changed.url.push('x');
        assert_ne!(
            chain_next(&steps[1].previous, &changed, &None).expect("hash"),
            steps[1].hash
        );
        // Another task, another chain.
        let mut other = task.clone();
        other.goal.push('!');
        assert_ne!(chain_start(&other).expect("start"), steps[0].previous);
    }

    #[test]
    fn an_attestation_opens_only_unchanged() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let signed = Signed::new(&key, Domain::Report, step(1)).expect("signs");
        let attestation = Attestation::of(&signed, "peer".into()).expect("attests");
        let (value, signer): (ResultStep, _) = attestation.open(Domain::Report).expect("opens");
        assert_eq!(value, step(1));
        assert_eq!(signer, key.verifying_key());
        // Another domain, a changed message, signature or key: refused.
        assert!(attestation.open::<ResultStep>(Domain::Result).is_err());
        for field in 0..3 {
            let mut bad = attestation.clone();
            let text = match field {
                0 => &mut bad.message,
                1 => &mut bad.signature,
                _ => &mut bad.public_key,
            };
            let flipped = if text.ends_with('0') { '1' } else { '0' };
            text.pop();
            text.push(flipped);
            assert!(
                bad.open::<ResultStep>(Domain::Report).is_err(),
                "field {field}"
            );
        }
    }

    #[test]
    fn digests_render_as_lower_hex_and_parse_back() {
        let digest = Digest32::of(b"abc");
        let json = serde_json::to_string(&digest).expect("json");
        assert_eq!(json.len(), 66);
        assert_eq!(
            serde_json::from_str::<Digest32>(&json).expect("back"),
            digest
        );
        assert!(serde_json::from_str::<Digest32>(&json.to_uppercase()).is_err());
        assert!(serde_json::from_str::<Digest32>("\"00\"").is_err());
    }

    #[test]
    fn file_names_stay_inside_the_directory() {
        for good in ["result.json", "events.jsonl", "step-01.png"] {
            assert!(is_plain_file_name(good), "{good}");
        }
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", ".hidden"] {
            assert!(!is_plain_file_name(bad), "{bad}");
        }
    }
}
