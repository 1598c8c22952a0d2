//! Consents as a node uses them: the revocations this machine knows of (a folder of signed
//! revocations, one file each), which of a task's consents hold, and what they permit below a
//! branch's root, in the terms the search matches ([`crate::search::Consented`]).
//!
//! A consent that does not hold (forged, expired, revoked, for another task) permits nothing;
//! the caller names why. Revocations are read when a task with consents arrives, so a
//! revocation written while a node runs stops the next branch search that would use it.
//!
//! The per-user store is `revocations` in forager's data folder (`RevocationStore::for_user`).
//! [`check_consents`] checks all of a task's consents and names the first that does not hold;
//! [`consented_below`] gives what those that hold permit below a branch's root.

use crate::embed::action_key;
use crate::search::Consented;
use forager_protocol::consent::{
    ConsentError, ConsentStep, SignedConsent, SignedRevocation, consent_digest,
};
use forager_protocol::wire::TaskId;
use forager_protocol::{Action, TaskSpec};
use std::path::{Path, PathBuf};

/// Largest revocation file read (a signed revocation is a few hundred bytes).
const MAX_REVOCATION_BYTES: u64 = 16 * 1024;
/// Most revocation files read from one folder.
const MAX_REVOCATIONS: usize = 10_000;

/// Why the revocation store could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RevocationError {
    /// The folder or a file could not be read or written.
    #[error("revocations in {path}: {source}")]
    Io {
        /// Where.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A revocation could not be encoded.
    #[error("a revocation cannot be encoded: {0}")]
    Encoding(String),
}

/// The folder of signed revocations this machine knows of.
#[derive(Debug, Clone)]
pub struct RevocationStore {
    dir: PathBuf,
}

impl RevocationStore {
    /// The store in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        RevocationStore { dir: dir.into() }
    }

    /// The per-user store: `<user data>/forager/revocations` (None without a home).
    pub fn for_user() -> Option<Self> {
        crate::model::user_data_dir().map(|d| RevocationStore::new(d.join("revocations")))
    }

    /// Its folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every revocation in the folder that parses (a missing folder holds none; a file that
    /// is not a revocation is skipped with a warning: it cannot revoke anything).
    pub fn load(&self) -> Result<Vec<SignedRevocation>, RevocationError> {
        let io = |source| RevocationError::Io {
            path: self.dir.clone(),
            source,
        };
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(e)),
        };
        let mut revocations = Vec::new();
        for entry in entries.take(MAX_REVOCATIONS) {
            let path = entry.map_err(io)?.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let small = std::fs::metadata(&path).is_ok_and(|m| m.len() <= MAX_REVOCATION_BYTES);
            let parsed = small
                .then(|| std::fs::read(&path).ok())
                .flatten()
                .and_then(|bytes| serde_json::from_slice::<SignedRevocation>(&bytes).ok());
            match parsed {
                Some(revocation) => revocations.push(revocation),
                None => tracing::warn!(file = %path.display(), "not a revocation; skipped"),
            }
        }
        Ok(revocations)
    }

    /// Adds a revocation (written to a temporary file, then renamed: a crash leaves the old
    /// state or the new one). Returns the file.
    pub fn add(&self, revocation: &SignedRevocation) -> Result<PathBuf, RevocationError> {
        let io = |source| RevocationError::Io {
            path: self.dir.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let name = revocation.value.subject.to_hex();
        let path = self.dir.join(format!("{name}.json"));
        let temporary = self.dir.join(format!(".{name}.json.tmp"));
        let bytes = serde_json::to_vec_pretty(revocation)
            .map_err(|e| RevocationError::Encoding(e.to_string()))?;
        std::fs::write(&temporary, bytes).map_err(io)?;
        std::fs::rename(&temporary, &path).map_err(io)?;
        Ok(path)
    }
}

/// A consent's step for `action`: the action, its label and its key.
pub fn step_of(action: Action) -> ConsentStep {
    let label = action.label();
    ConsentStep {
        key: action_key(&label),
        label,
        action,
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Checks every consent a task carries; the first that does not hold is named with its
/// position (1-based) and the reason.
pub fn check_consents(
    task: &TaskSpec,
    task_id: &TaskId,
    now: u64,
    revocations: &[SignedRevocation],
) -> Result<(), (usize, ConsentError)> {
    let origins = task.origins();
    for (i, consent) in task.consents.iter().enumerate() {
        consent
            .check(&task_id.to_string(), &origins, now, revocations)
            .map_err(|e| (i + 1, e))?;
    }
    Ok(())
}

/// What the task's consents that hold permit below a branch whose root is reached by
/// `branch_prefix`: the paths are relative to that root. A consent that does not hold is
/// left out (and logged).
pub fn consented_below(
    task: &TaskSpec,
    task_id: &TaskId,
    branch_prefix: &[Action],
    now: u64,
    revocations: &[SignedRevocation],
) -> Vec<Consented> {
    let origins = task.origins();
    let branch: Vec<u64> = branch_prefix
        .iter()
        .map(|a| action_key(&a.label()))
        .collect();
    let mut consented = Vec::new();
    for signed in &task.consents {
        let consent = match signed.check(&task_id.to_string(), &origins, now, revocations) {
            Ok(consent) => consent,
            Err(error) => {
                let digest = consent_digest(signed)
                    .map(|d| d.to_hex())
                    .unwrap_or_default();
                tracing::warn!(%error, consent = %digest, "a consent that does not hold is ignored");
                continue;
            }
        };
        let keys: Vec<u64> = consent.prefix.iter().map(|s| s.key).collect();
        if keys.len() < branch.len() || keys[..branch.len()] != branch[..] {
            continue;
        }
        consented.push(Consented {
            path: keys[branch.len()..].to_vec(),
            key: consent.action.key,
            risk: consent.risk,
        });
    }
    consented
}

/// The first action of a branch prefix (0-based) that the node reads as above the task's
/// ceiling (`risk::classify_action`, without the page's context) and that no consent that
/// holds names at its place: the queen hands such a prefix out only for a consent, and a node
/// does not take its word for it.
pub fn unconsented_in_prefix(
    task: &TaskSpec,
    task_id: &TaskId,
    prefix: &[Action],
    now: u64,
    revocations: &[SignedRevocation],
) -> Option<usize> {
    let keys: Vec<u64> = prefix.iter().map(|a| action_key(&a.label())).collect();
    let origins = task.origins();
    prefix.iter().enumerate().position(|(i, action)| {
        let risk = forager_protocol::risk::classify_action(action);
        risk > task.risk_ceiling
            && !task.consents.iter().any(|signed| {
                signed
                    .check(&task_id.to_string(), &origins, now, revocations)
                    .is_ok_and(|c| {
                        c.prefix.len() == i
                            && c.prefix.iter().zip(&keys).all(|(s, k)| s.key == *k)
                            && c.action.key == keys[i]
                    })
            })
    })
}

/// The classes a node records for a branch prefix's actions, whose pages it did not read:
/// the class a consent of the task names for the action at that place (the class its user
/// approved), else read-only, as the queen hands out start-page branches within the ceiling.
/// (What the verification repeats does not rest on these: it takes the higher of them and
/// its own reading of each action.)
pub fn prefix_risks(task: &TaskSpec, prefix: &[Action]) -> Vec<forager_protocol::RiskClass> {
    let keys: Vec<u64> = prefix.iter().map(|a| action_key(&a.label())).collect();
    prefix
        .iter()
        .enumerate()
        .map(|(i, _)| {
            task.consents
                .iter()
                .map(|c| &c.value)
                .filter(|c| {
                    c.prefix.len() == i
                        && c.prefix.iter().zip(&keys).all(|(s, k)| s.key == *k)
                        && c.action.key == keys[i]
                })
                .map(|c| c.risk)
                .max()
                .unwrap_or(forager_protocol::RiskClass::ReadOnly)
        })
        .collect()
}

/// A consent read from a file, with the reason it cannot be used by name.
pub fn read_consent(path: &Path) -> Result<SignedConsent, String> {
    let small = std::fs::metadata(path)
        .map_err(|e| format!("cannot read consent {}: {e}", path.display()))?
        .len()
        <= MAX_REVOCATION_BYTES * 4;
    if !small {
        return Err(format!("consent {} is too large", path.display()));
    }
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read consent {}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("consent {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::consent::{CONSENT_VERSION, Consent, revoke, sign_consent};
    use forager_protocol::{Locator, RiskClass, Target};
    use rand::SeedableRng;

    fn click(name: &str) -> Action {
        Action::Click {
            target: Target {
                locators: vec![Locator::Text(name.into())],
                role: "button".into(),
                name: name.into(),
                sends: Default::default(),
            },
        }
    }

    fn task() -> TaskSpec {
        TaskSpec::new(
            "http://127.0.0.1:8080/",
            "Buy it",
            vec![forager_protocol::predicate::SuccessPredicate::TextPresent(
                "Thanks".into(),
            )],
        )
    }

    fn consent(task: &TaskSpec, prefix: &[Action], action: Action) -> SignedConsent {
        let key = ed25519_dalek::SigningKey::generate(&mut rand::rngs::StdRng::seed_from_u64(3));
        sign_consent(
            &key,
            Consent {
                version: CONSENT_VERSION,
                task_id: TaskId::of(task).expect("an id").to_string(),
                origin: "http://127.0.0.1:8080".into(),
                prefix: prefix.iter().cloned().map(step_of).collect(),
                action: step_of(action),
                risk: RiskClass::Financial,
                issued_at: 100,
                expires_at: 10_000,
            },
        )
        .expect("signed")
    }

    #[test]
    fn a_consent_is_translated_below_the_branch_it_lies_under() {
        let mut task = task();
        let prefix = [click("Cart"), click("Checkout")];
        task.consents = vec![consent(&task, &prefix, click("Place order"))];
        let id = TaskId::of(&task).expect("an id");
        let below = consented_below(&task, &id, &prefix[..1], 200, &[]);
        assert_eq!(below.len(), 1);
        assert_eq!(below[0].path, [action_key(&click("Checkout").label())]);
        assert_eq!(below[0].key, action_key(&click("Place order").label()));
        // Another branch does not hold it.
        assert!(consented_below(&task, &id, &[click("Account")], 200, &[]).is_empty());
        // Expired: nothing.
        assert!(consented_below(&task, &id, &prefix[..1], 20_000, &[]).is_empty());
        assert!(check_consents(&task, &id, 20_000, &[]).is_err());
        assert!(check_consents(&task, &id, 200, &[]).is_ok());
    }

    #[test]
    fn revocations_are_kept_on_disk_and_stop_the_consent() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let store = RevocationStore::new(dir.path().join("revocations"));
        assert!(store.load().expect("an empty store").is_empty());
        let mut task = task();
        task.consents = vec![consent(&task, &[], click("Place order"))];
        let id = TaskId::of(&task).expect("an id");
        assert_eq!(consented_below(&task, &id, &[], 200, &[]).len(), 1);
        let key = ed25519_dalek::SigningKey::generate(&mut rand::rngs::StdRng::seed_from_u64(3));
        store
            .add(&revoke(&key, &task.consents[0], 150).expect("signed"))
            .expect("written");
        std::fs::write(store.dir().join("junk.json"), b"{not json").expect("written");
        let revocations = store.load().expect("loaded");
        assert_eq!(revocations.len(), 1);
        assert!(consented_below(&task, &id, &[], 200, &revocations).is_empty());
        assert!(matches!(
            check_consents(&task, &id, 200, &revocations),
            Err((1, ConsentError::Revoked(150)))
        ));
    }
}
