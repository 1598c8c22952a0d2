//! Consent: a user's signed permission for one action above a task's risk ceiling, and its
//! revocation.
//!
//! A run that meets an action above its ceiling stops `approval_required` and names it (the
//! prefix of actions that leads to it, the action, its class). `forager approve` turns one of
//! those into a [`Consent`] signed by the user's key (kept apart from peer keys): it names the
//! task, the origin, the prefix and the action (each with its locators, label and key: the
//! label's stable hash, which is what is matched), the class it was seen at, and an expiry. A
//! task carries its consents to the nodes; the search may then execute exactly that action at
//! exactly that prefix, at that class or below. Everything else above the ceiling still stops.
//!
//! A consent is checked as a whole before use ([`SignedConsent::check`]): the signature (by
//! the key it names, `verify_strict`), the task, the origin, the expiry, and the revocations
//! the caller knows of. A [`Revocation`] is signed by the same user key and names the consent
//! by the digest of its canonical encoding.
//!
//! The check also refuses another version and a validity over [`MAX_CONSENT_SECS`] (90 days);
//! [`Consent::permits`] matches the prefix's keys, the action's key and the class. A task carries
//! its consents in `TaskSpec::consents`, which `TaskId::of` leaves out. See `docs/consent.md`.

use crate::action::Action;
use crate::codec::{CodecError, canonical_bytes};
use crate::digest::Digest32;
use crate::risk::RiskClass;
use crate::signing::{Domain, SignatureError, Signed};
use serde::{Deserialize, Serialize};

/// The version of the consent format.
pub const CONSENT_VERSION: u32 = 1;

/// Longest a consent may live: a consent is for a run, not a standing order.
pub const MAX_CONSENT_SECS: u64 = 90 * 24 * 3600;

/// One action a user allows above a task's ceiling.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Consent {
    /// [`CONSENT_VERSION`].
    pub version: u32,
    /// The task it is for: `TaskId::of` (hex), which leaves consents out.
    pub task_id: String,
    /// The origin of the site the action acts on (`scheme://host:port`).
    pub origin: String,
    /// The actions from the start URL to the state where the action is offered.
    pub prefix: Vec<ConsentStep>,
    /// The action.
    pub action: ConsentStep,
    /// The class the run saw it at; the consent covers that class and those below.
    pub risk: RiskClass,
    /// When it was signed (Unix seconds).
    pub issued_at: u64,
    /// When it stops being valid (Unix seconds).
    pub expires_at: u64,
}

/// An action of a consent: the action itself (locators and all, so a run can walk to it),
/// its label (what the user read) and its key (`embed::action_key` of the label: what the
/// search and the replayer compare, since a workflow's locators are re-ranked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsentStep {
    /// The action.
    pub action: Action,
    /// Its label.
    pub label: String,
    /// Its key.
    pub key: u64,
}

/// A consent with the user's signature.
pub type SignedConsent = Signed<Consent>;

/// A user's statement that a consent no longer holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Revocation {
    /// What it revokes: [`consent_digest`] of a signed consent, or
    /// [`crate::capsule::capsule_digest`] of a signed capsule.
    #[serde(alias = "consent")]
    pub subject: Digest32,
    /// When (Unix seconds).
    pub revoked_at: u64,
}

/// A revocation with the user's signature (the consent's signer).
pub type SignedRevocation = Signed<Revocation>;

/// Why a consent may not be used. Each names what the user can fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConsentError {
    /// The signature does not verify under the key the consent names.
    #[error("the consent's signature does not verify")]
    BadSignature,
    /// A consent of another format.
    #[error("consent version {0} is not supported (this forager reads {CONSENT_VERSION})")]
    Version(u32),
    /// It was given for another task.
    #[error("the consent is for task {consent}, this run is task {task}")]
    OtherTask {
        /// The consent's task.
        consent: String,
        /// This run's.
        task: String,
    },
    /// It names an origin the task does not act on.
    #[error("the consent is for origin {0}, which this task does not allow")]
    OtherOrigin(String),
    /// Its expiry has passed.
    #[error("the consent expired at {expired_at} (now {now})")]
    Expired {
        /// The expiry (Unix seconds).
        expired_at: u64,
        /// Now (Unix seconds).
        now: u64,
    },
    /// Its validity is longer than [`MAX_CONSENT_SECS`], or it ends before it starts.
    #[error("the consent's validity ({0} s) is not between 1 s and {MAX_CONSENT_SECS} s")]
    Validity(i128),
    /// The user revoked it.
    #[error("the consent was revoked at {0}")]
    Revoked(u64),
    /// It cannot be encoded canonically (so it cannot be signed or named).
    #[error(transparent)]
    Encoding(#[from] CodecError),
}

/// When `signer` revoked the object named `subject`, among `revocations` (others' and forged
/// ones do not count).
pub fn revoked_at(
    signer: &ed25519_dalek::VerifyingKey,
    subject: &Digest32,
    revocations: &[SignedRevocation],
) -> Option<u64> {
    revocations
        .iter()
        .find(|r| {
            r.signer == *signer
                && r.verify(Domain::Revocation)
                    .is_ok_and(|r| r.subject == *subject)
        })
        .map(|r| r.value.revoked_at)
}

/// The name of a signed consent: SHA-256 of its canonical encoding (value, signer, signature).
pub fn consent_digest(consent: &SignedConsent) -> Result<Digest32, CodecError> {
    Ok(Digest32::of(&canonical_bytes(consent)?))
}

impl Consent {
    /// Whether it permits the action with key `key` of class `risk` after the steps with
    /// keys `prefix` (from the start URL).
    pub fn permits(&self, prefix: &[u64], key: u64, risk: RiskClass) -> bool {
        risk <= self.risk
            && self.prefix.len() == prefix.len()
            && self.prefix.iter().zip(prefix).all(|(s, k)| s.key == *k)
            && self.action.key == key
    }
}

/// Signs a consent.
pub fn sign_consent(
    key: &ed25519_dalek::SigningKey,
    consent: Consent,
) -> Result<SignedConsent, CodecError> {
    Signed::new(key, Domain::Consent, consent)
}

/// Signs a revocation of `consent` with `key` (which must be the consent's signer for the
/// revocation to count).
pub fn revoke(
    key: &ed25519_dalek::SigningKey,
    consent: &SignedConsent,
    now: u64,
) -> Result<SignedRevocation, CodecError> {
    Signed::new(
        key,
        Domain::Revocation,
        Revocation {
            subject: consent_digest(consent)?,
            revoked_at: now,
        },
    )
}

impl SignedConsent {
    /// Checks a consent for use by task `task_id` (hex) acting on `origins`, at `now`, given
    /// the revocations known here (others' and forged ones are ignored).
    pub fn check(
        &self,
        task_id: &str,
        origins: &[String],
        now: u64,
        revocations: &[SignedRevocation],
    ) -> Result<&Consent, ConsentError> {
        let consent = self.verify(Domain::Consent).map_err(|e| match e {
            SignatureError::Encoding(e) => ConsentError::Encoding(e),
            _ => ConsentError::BadSignature,
        })?;
        if consent.version != CONSENT_VERSION {
            return Err(ConsentError::Version(consent.version));
        }
        let validity = i128::from(consent.expires_at) - i128::from(consent.issued_at);
        if validity < 1 || validity > i128::from(MAX_CONSENT_SECS) {
            return Err(ConsentError::Validity(validity));
        }
        if consent.task_id != task_id {
            return Err(ConsentError::OtherTask {
                consent: consent.task_id.clone(),
                task: task_id.to_owned(),
            });
        }
        if !origins.contains(&consent.origin) {
            return Err(ConsentError::OtherOrigin(consent.origin.clone()));
        }
        if let Some(at) = revoked_at(&self.signer, &consent_digest(self)?, revocations) {
            return Err(ConsentError::Revoked(at));
        }
        if now >= consent.expires_at {
            return Err(ConsentError::Expired {
                expired_at: consent.expires_at,
                now,
            });
        }
        Ok(consent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::{Locator, Target};
    use ed25519_dalek::SigningKey;
    use rand::SeedableRng;

    fn key(seed: u64) -> SigningKey {
        SigningKey::generate(&mut rand::rngs::StdRng::seed_from_u64(seed))
    }

    fn step(name: &str, key: u64) -> ConsentStep {
        let action = Action::Click {
            target: Target {
                locators: vec![Locator::Css("#x".into())],
                role: "button".into(),
                name: name.into(),
                sends: Default::default(),
            },
        };
        ConsentStep {
            label: action.label(),
            action,
            key,
        }
    }

    fn consent() -> Consent {
        Consent {
            version: CONSENT_VERSION,
            task_id: "ab".repeat(16),
            origin: "http://127.0.0.1:8080".into(),
            prefix: vec![step("Checkout", 7)],
            action: step("Place order", 9),
            risk: RiskClass::Financial,
            issued_at: 1_000,
            expires_at: 1_000 + 3600,
        }
    }

    fn origins() -> Vec<String> {
        vec!["http://127.0.0.1:8080".into()]
    }

    #[test]
    fn a_signed_consent_permits_its_action_at_its_prefix_and_nothing_else() {
        let signed = sign_consent(&key(1), consent()).expect("signed");
        let task = "ab".repeat(16);
        let consent = signed.check(&task, &origins(), 2_000, &[]).expect("valid");
        assert!(consent.permits(&[7], 9, RiskClass::Financial));
        assert!(consent.permits(&[7], 9, RiskClass::ExternalSubmission));
        assert!(
            !consent.permits(&[7], 9, RiskClass::AccountMutation),
            "a higher class"
        );
        assert!(
            !consent.permits(&[8], 9, RiskClass::Financial),
            "another prefix"
        );
        assert!(
            !consent.permits(&[], 9, RiskClass::Financial),
            "a shorter prefix"
        );
        assert!(
            !consent.permits(&[7], 10, RiskClass::Financial),
            "another action"
        );
    }

    #[test]
    fn tampering_another_task_or_origin_expiry_and_revocation_are_refused_by_name() {
        let user = key(1);
        let signed = sign_consent(&user, consent()).expect("signed");
        let task = "ab".repeat(16);
        let mut tampered = signed.clone();
        tampered.value.risk = RiskClass::Destructive;
        assert_eq!(
            tampered.check(&task, &origins(), 2_000, &[]).err(),
            Some(ConsentError::BadSignature)
        );
        assert!(matches!(
            signed.check(&"cd".repeat(16), &origins(), 2_000, &[]),
            Err(ConsentError::OtherTask { .. })
        ));
        assert!(matches!(
            signed.check(&task, &["http://127.0.0.1:9".into()], 2_000, &[]),
            Err(ConsentError::OtherOrigin(_))
        ));
        assert!(matches!(
            signed.check(&task, &origins(), 4_600, &[]),
            Err(ConsentError::Expired { .. })
        ));
        // A revocation counts only when signed by the consent's signer.
        let by_user = revoke(&user, &signed, 1_500).expect("signed");
        let by_stranger = revoke(&key(2), &signed, 1_500).expect("signed");
        assert!(
            signed
                .check(&task, &origins(), 2_000, std::slice::from_ref(&by_stranger))
                .is_ok()
        );
        assert_eq!(
            signed
                .check(&task, &origins(), 2_000, &[by_stranger, by_user])
                .err(),
            Some(ConsentError::Revoked(1_500))
        );
        // A consent that would outlive the limit is refused whatever its signature.
        let mut forever = consent();
        forever.expires_at = forever.issued_at + MAX_CONSENT_SECS + 1;
        let forever = sign_consent(&user, forever).expect("signed");
        assert!(matches!(
            forever.check(&task, &origins(), 2_000, &[]),
            Err(ConsentError::Validity(_))
        ));
    }

    #[test]
    fn a_consent_survives_json_and_its_digest_names_it() {
        let signed = sign_consent(&key(1), consent()).expect("signed");
        let json = serde_json::to_vec(&signed).expect("json");
        let back: SignedConsent = serde_json::from_slice(&json).expect("parsed");
        assert_eq!(back, signed);
        assert!(back.check(&"ab".repeat(16), &origins(), 2_000, &[]).is_ok());
        let other = sign_consent(&key(2), consent()).expect("signed");
        assert_ne!(
            consent_digest(&signed).expect("a digest"),
            consent_digest(&other).expect("a digest")
        );
    }
}
