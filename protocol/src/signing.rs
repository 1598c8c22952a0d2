//! Ed25519 signatures over a domain-separated canonical encoding.
//!
//! The signed bytes are `forager/v1/<domain>\0` followed by the value's canonical encoding
//! ([`crate::codec::canonical_bytes`]). The domain tag means a signature made for one purpose
//! (say, a gossiped trajectory) can never be replayed as another (say, an artifact).
//! Verification uses `verify_strict`, which rejects malleable signatures and weak keys.

use crate::codec::{CodecError, canonical_bytes};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

/// What a signature is for. Each has its own tag in the signed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Domain {
    /// A trajectory announcement gossiped between peers.
    Announcement,
    /// A trajectory written as an artifact.
    Trajectory,
    /// A progress report from a node to the queen.
    Report,
    /// A run's result document.
    Result,
    /// A manifest of an artifact directory.
    Manifest,
    /// A user's consent to an action above a task's ceiling.
    Consent,
    /// A user's revocation of a consent or a capsule.
    Revocation,
    /// A user's sealed session capsule.
    Capsule,
    /// A bundle of remembered workflows, exported from one installation for another.
    Memory,
}

impl Domain {
    fn tag(self) -> &'static [u8] {
        match self {
            Domain::Announcement => b"forager/v1/announcement\0",
            Domain::Trajectory => b"forager/v1/trajectory\0",
            Domain::Report => b"forager/v1/report\0",
            Domain::Result => b"forager/v1/result\0",
            Domain::Manifest => b"forager/v1/manifest\0",
            Domain::Consent => b"forager/v1/consent\0",
            Domain::Revocation => b"forager/v1/revocation\0",
            Domain::Capsule => b"forager/v1/capsule\0",
            Domain::Memory => b"forager/v1/memory\0",
        }
    }
}

/// Why a signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The value could not be encoded canonically.
    #[error(transparent)]
    Encoding(#[from] CodecError),
    /// The signature does not verify under the key for these bytes and this domain.
    #[error("signature does not verify")]
    Invalid,
}

/// The exact bytes a signature covers.
pub fn signed_bytes<T: Serialize>(domain: Domain, value: &T) -> Result<Vec<u8>, CodecError> {
    let body = canonical_bytes(value)?;
    let tag = domain.tag();
    let mut bytes = Vec::with_capacity(tag.len() + body.len());
    bytes.extend_from_slice(tag);
    bytes.extend_from_slice(&body);
    Ok(bytes)
}

/// Signs a value for a domain.
pub fn sign<T: Serialize>(
    key: &SigningKey,
    domain: Domain,
    value: &T,
) -> Result<Signature, CodecError> {
    Ok(key.sign(&signed_bytes(domain, value)?))
}

/// Verifies a signature strictly.
pub fn verify<T: Serialize>(
    key: &VerifyingKey,
    domain: Domain,
    value: &T,
    signature: &Signature,
) -> Result<(), SignatureError> {
    let bytes = signed_bytes(domain, value)?;
    key.verify_strict(&bytes, signature)
        .map_err(|_| SignatureError::Invalid)
}

/// A value with its signer and signature.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signed<T> {
    /// The signed value.
    pub value: T,
    /// The signer's public key.
    pub signer: VerifyingKey,
    /// The signature over the value's domain-tagged canonical encoding.
    pub signature: Signature,
}

impl<T: Serialize> Signed<T> {
    /// Signs `value` with `key` for `domain`.
    pub fn new(key: &SigningKey, domain: Domain, value: T) -> Result<Signed<T>, CodecError> {
        let signature = sign(key, domain, &value)?;
        Ok(Signed {
            value,
            signer: key.verifying_key(),
            signature,
        })
    }

    /// The value, if the signature verifies for `domain` under the embedded signer.
    pub fn verify(&self, domain: Domain) -> Result<&T, SignatureError> {
        verify(&self.signer, domain, &self.value, &self.signature)?;
        Ok(&self.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn key(seed: u64) -> SigningKey {
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
        SigningKey::generate(&mut rng)
    }

    #[test]
    fn sign_and_verify() {
        let signed = Signed::new(&key(1), Domain::Announcement, "hello".to_owned()).expect("signs");
        assert_eq!(
            signed.verify(Domain::Announcement).map(String::as_str),
            Ok("hello")
        );
    }

    #[test]
    fn another_domain_does_not_verify() {
        let signed = Signed::new(&key(1), Domain::Announcement, 7u64).expect("signs");
        assert_eq!(
            signed.verify(Domain::Trajectory),
            Err(SignatureError::Invalid)
        );
    }

    #[test]
    fn another_value_or_key_does_not_verify() {
        let mut signed = Signed::new(&key(1), Domain::Report, 7u64).expect("signs");
        signed.value = 8;
        assert_eq!(signed.verify(Domain::Report), Err(SignatureError::Invalid));
        let mut signed = Signed::new(&key(1), Domain::Report, 7u64).expect("signs");
        signed.signer = key(2).verifying_key();
        assert_eq!(signed.verify(Domain::Report), Err(SignatureError::Invalid));
    }
}
