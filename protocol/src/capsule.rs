//! Session capsules: a logged-in browser session captured once, sealed, signed, and mounted
//! into the contexts of later runs under a reuse policy.
//!
//! A [`SessionState`] is what a browser context needs to be logged in: its cookies (HttpOnly
//! ones included) and the local and session storage of the origins that matter. It never
//! travels or rests in clear except inside a task on the encrypted cluster connection
//! ([`crate::task::TaskSpec::session`], which [`crate::task::TaskSpec::redacted`] drops), and
//! its `Debug` shows counts, never values.
//!
//! A [`Capsule`] holds the state sealed with ChaCha20-Poly1305 under a key derived from a
//! passphrase (Argon2id) or read from a key file, beside what anyone may read: the origins, the
//! creation and expiry, the [`ReusePolicy`], and the recipe of the login that made it (names of
//! inputs, never values). The user's key signs the whole ([`SignedCapsule`]), and the sealed
//! bytes are bound to the readable part as associated data: a flipped byte anywhere fails the
//! signature, a wrong passphrase fails the seal, each with its own named error, before any
//! browser starts. A capsule is revoked like a consent ([`crate::consent::Revocation`] naming
//! [`capsule_digest`]).
//!
//! [`totp`] computes RFC 6238 one-time codes for a login's second factor.
//!
//! [`SignedCapsule::check`] needs no secret (signature, version, validity, revocations, expiry);
//! [`SignedCapsule::open`] then derives the key and opens the seal, each fault a [`CapsuleError`].
//! A task carries the opened session (`TaskSpec::session`) and a record of the capsule
//! (`TaskSpec::capsule`), neither part of its id. See `docs/capsule.md`.

use crate::codec::{CodecError, canonical_bytes, decode_body};
use crate::consent::{SignedRevocation, revoked_at};
use crate::digest::Digest32;
use crate::predicate::SuccessPredicate;
use crate::risk::RiskClass;
use crate::signing::{Domain, SignatureError, Signed};
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use serde::{Deserialize, Serialize};

/// The version of the capsule format.
pub const CAPSULE_VERSION: u32 = 1;

/// Longest a capsule may live: sessions are renewed, not kept forever.
pub const MAX_CAPSULE_SECS: u64 = 90 * 24 * 3600;

/// Largest session state, encoded: a browser profile's cookies for a few origins fit easily.
pub const MAX_SESSION_BYTES: usize = 256 * 1024;

/// Most cookies a state may hold.
pub const MAX_COOKIES: usize = 300;

/// Argon2id's parameters for a new capsule (OWASP's second recommendation: 19 MiB, 2 passes).
pub const ARGON2_MEMORY_KIB: u32 = 19 * 1024;
/// Argon2id passes.
pub const ARGON2_ITERATIONS: u32 = 2;

/// A browser cookie as CDP reports it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionCookie {
    /// Its name.
    pub name: String,
    /// Its value: the secret.
    pub value: String,
    /// The domain it is sent to (`example.com`, or `.example.com` for subdomains too).
    pub domain: String,
    /// The path it is sent under.
    pub path: String,
    /// When it expires (Unix seconds); none for a session cookie.
    pub expires: Option<u64>,
    /// Hidden from page scripts.
    pub http_only: bool,
    /// Sent over https only.
    pub secure: bool,
    /// `Strict`, `Lax` or `None`, when set.
    pub same_site: Option<String>,
}

impl std::fmt::Debug for SessionCookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionCookie")
            .field("name", &self.name)
            .field("domain", &self.domain)
            .field("path", &self.path)
            .field("http_only", &self.http_only)
            .finish_non_exhaustive()
    }
}

/// The storage of one origin.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OriginStorage {
    /// `scheme://host:port`.
    pub origin: String,
    /// `localStorage` items.
    pub local: Vec<(String, String)>,
    /// `sessionStorage` items.
    pub session: Vec<(String, String)>,
}

/// What a browser context needs to be logged in.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionState {
    /// Cookies.
    pub cookies: Vec<SessionCookie>,
    /// Web storage, per origin.
    pub storage: Vec<OriginStorage>,
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Counts only: a task's Debug reaches logs.
        f.debug_struct("SessionState")
            .field("cookies", &self.cookies.len())
            .field("storage", &self.storage.len())
            .finish()
    }
}

/// The host of an origin or URL (`127.0.0.1` of `http://127.0.0.1:8080`).
fn host_of(origin: &str) -> Option<String> {
    url::Url::parse(origin)
        .ok()?
        .host_str()
        .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase())
}

/// Whether a cookie for `domain` is sent to `host` (RFC 6265 domain matching).
pub fn cookie_domain_matches(domain: &str, host: &str) -> bool {
    let domain = domain.trim_start_matches('.').to_ascii_lowercase();
    host == domain || host.ends_with(&format!(".{domain}"))
}

/// The `scheme://host:port` of a URL, if it has one.
pub fn origin_of(url: &str) -> Option<String> {
    let origin = url::Url::parse(url).ok()?.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

impl SessionState {
    /// The part of the state that belongs to `origins`: cookies sent to one of their hosts,
    /// the storage of those exact origins.
    pub fn restrict(&self, origins: &[String]) -> SessionState {
        let hosts: Vec<String> = origins.iter().filter_map(|o| host_of(o)).collect();
        let origins: Vec<String> = origins.iter().filter_map(|o| origin_of(o)).collect();
        SessionState {
            cookies: self
                .cookies
                .iter()
                .filter(|c| hosts.iter().any(|h| cookie_domain_matches(&c.domain, h)))
                .cloned()
                .collect(),
            storage: self
                .storage
                .iter()
                .filter(|s| origins.contains(&s.origin))
                .cloned()
                .collect(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.cookies.is_empty()
            && self
                .storage
                .iter()
                .all(|s| s.local.is_empty() && s.session.is_empty())
    }

    /// Checks its size, the first problem named.
    pub fn check(&self) -> Result<(), CapsuleError> {
        if self.cookies.len() > MAX_COOKIES {
            return Err(CapsuleError::TooLarge(format!(
                "{} cookies (at most {MAX_COOKIES})",
                self.cookies.len()
            )));
        }
        let size = canonical_bytes(self)?.len();
        if size > MAX_SESSION_BYTES {
            return Err(CapsuleError::TooLarge(format!(
                "{size} bytes (at most {MAX_SESSION_BYTES})"
            )));
        }
        Ok(())
    }
}

/// What a capsule may be used for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReusePolicy {
    /// The origins it is mounted for (`scheme://host:port`); nothing is mounted for others.
    pub origins: Vec<String>,
    /// The highest risk ceiling a task mounting it may have, and the highest class a consent
    /// given beside it may allow: a session captured for reading does not buy things.
    pub max_risk: RiskClass,
}

/// How the login that made a capsule went, so that `capsule refresh` (and the recovery of a
/// run whose session expired) can do it again: the inputs by name only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoginRecipe {
    /// The login page.
    pub url: String,
    /// The goal the login was searched with.
    pub goal: String,
    /// What "logged in" looks like.
    pub success: Vec<SuccessPredicate>,
    /// Other origins the login may reach.
    pub allowed_origins: Vec<String>,
    /// Names of the inputs it typed (`username`, `password`).
    pub inputs: Vec<String>,
    /// Names of the inputs that were one-time codes.
    pub totp: Vec<String>,
}

/// Where the sealing key comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// Argon2id of a passphrase.
    Passphrase {
        /// Random salt.
        salt: [u8; 16],
        /// Memory, KiB.
        memory_kib: u32,
        /// Passes.
        iterations: u32,
    },
    /// A 32-byte key file (`forager capsule keygen`), named by [`key_file_id`].
    KeyFile {
        /// The key's name: a hash of it, so a wrong file is told apart from a tampered seal.
        key_id: Digest32,
    },
}

/// The secret a capsule is opened with.
pub enum CapsuleSecret {
    /// A passphrase.
    Passphrase(String),
    /// A key file's 32 bytes.
    KeyFile([u8; 32]),
}

/// A sealed session and what anyone may read about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capsule {
    /// [`CAPSULE_VERSION`].
    pub version: u32,
    /// When it was captured (Unix seconds).
    pub created_at: u64,
    /// When it stops being usable (Unix seconds).
    pub expires_at: u64,
    /// What it may be used for.
    pub policy: ReusePolicy,
    /// How it was made.
    pub login: Option<LoginRecipe>,
    /// Where the sealing key comes from.
    pub key: KeySource,
    /// The AEAD nonce.
    pub nonce: [u8; 12],
    /// The [`SessionState`], encoded and sealed.
    #[serde(with = "base64_bytes")]
    pub sealed: Vec<u8>,
}

/// A capsule with the user's signature.
pub type SignedCapsule = Signed<Capsule>;

/// Why a capsule may not be made or used. Each names what the user can fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CapsuleError {
    /// The signature does not verify: the file was altered.
    #[error("the capsule's signature does not verify: the file was altered")]
    BadSignature,
    /// A capsule of another format.
    #[error("capsule version {0} is not supported (this forager reads {CAPSULE_VERSION})")]
    Version(u32),
    /// Its validity is longer than [`MAX_CAPSULE_SECS`], or it ends before it starts.
    #[error("the capsule's validity ({0} s) is not between 1 s and {MAX_CAPSULE_SECS} s")]
    Validity(i128),
    /// Its expiry has passed.
    #[error("the capsule expired at {expired_at} (now {now}); capture or refresh it")]
    Expired {
        /// The expiry (Unix seconds).
        expired_at: u64,
        /// Now.
        now: u64,
    },
    /// The user revoked it.
    #[error("the capsule was revoked at {0}")]
    Revoked(u64),
    /// A passphrase for a key-file capsule, or the other way round.
    #[error("the capsule is sealed with {expected}; give that")]
    KeyKind {
        /// What it is sealed with.
        expected: &'static str,
    },
    /// Another key file than the one it was sealed with.
    #[error("the capsule was sealed with another key file")]
    WrongKeyFile,
    /// The seal does not open: a wrong passphrase.
    #[error("the capsule does not open: wrong passphrase")]
    WrongSecret,
    /// The task wants more than the policy allows.
    #[error("the capsule's policy does not allow this: {0}")]
    Policy(String),
    /// The state is too large.
    #[error("the session state is too large: {0}")]
    TooLarge(String),
    /// The key derivation refused its parameters.
    #[error("key derivation failed: {0}")]
    Kdf(String),
    /// It cannot be encoded canonically, or the opened state does not decode.
    #[error(transparent)]
    Encoding(#[from] CodecError),
}

/// The name of a signed capsule: SHA-256 of its canonical encoding.
pub fn capsule_digest(capsule: &SignedCapsule) -> Result<Digest32, CodecError> {
    Ok(Digest32::of(&canonical_bytes(capsule)?))
}

/// The name of a key file's key.
pub fn key_file_id(key: &[u8; 32]) -> Digest32 {
    let mut tagged = b"forager/v1/capsule-key\0".to_vec();
    tagged.extend_from_slice(key);
    Digest32::of(&tagged)
}

/// The sealing key for `source` from `secret`.
pub fn derive_key(source: &KeySource, secret: &CapsuleSecret) -> Result<[u8; 32], CapsuleError> {
    match (source, secret) {
        (
            KeySource::Passphrase {
                salt,
                memory_kib,
                iterations,
            },
            CapsuleSecret::Passphrase(passphrase),
        ) => {
            let params = argon2::Params::new(*memory_kib, *iterations, 1, Some(32))
                .map_err(|e| CapsuleError::Kdf(e.to_string()))?;
            let argon =
                argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
            let mut key = [0u8; 32];
            argon
                .hash_password_into(passphrase.as_bytes(), salt, &mut key)
                .map_err(|e| CapsuleError::Kdf(e.to_string()))?;
            Ok(key)
        }
        (KeySource::KeyFile { key_id }, CapsuleSecret::KeyFile(key)) => {
            if key_file_id(key) != *key_id {
                return Err(CapsuleError::WrongKeyFile);
            }
            Ok(*key)
        }
        (KeySource::Passphrase { .. }, CapsuleSecret::KeyFile(_)) => Err(CapsuleError::KeyKind {
            expected: "a passphrase",
        }),
        (KeySource::KeyFile { .. }, CapsuleSecret::Passphrase(_)) => Err(CapsuleError::KeyKind {
            expected: "a key file",
        }),
    }
}

impl Capsule {
    /// The associated data of the seal: the readable part, canonically encoded.
    fn associated_data(&self) -> Result<Vec<u8>, CodecError> {
        let mut readable = self.clone();
        readable.sealed.clear();
        canonical_bytes(&readable)
    }

    /// Seals `state` into a capsule whose readable part is `self` (its `sealed` is replaced),
    /// with `key` from [`derive_key`] for `self.key`.
    pub fn seal(mut self, state: &SessionState, key: &[u8; 32]) -> Result<Capsule, CapsuleError> {
        state.check()?;
        let validity = i128::from(self.expires_at) - i128::from(self.created_at);
        if validity < 1 || validity > i128::from(MAX_CAPSULE_SECS) {
            return Err(CapsuleError::Validity(validity));
        }
        let plain = canonical_bytes(state)?;
        let aad = self.associated_data()?;
        let cipher = chacha20poly1305::ChaCha20Poly1305::new(key.into());
        self.sealed = cipher
            .encrypt(
                (&self.nonce).into(),
                Payload {
                    msg: &plain,
                    aad: &aad,
                },
            )
            .map_err(|_| CapsuleError::Encoding(CodecError::Encode("seal".into())))?;
        Ok(self)
    }

    /// Opens the seal with `key`.
    pub fn unseal(&self, key: &[u8; 32]) -> Result<SessionState, CapsuleError> {
        let aad = self.associated_data()?;
        let cipher = chacha20poly1305::ChaCha20Poly1305::new(key.into());
        let plain = cipher
            .decrypt(
                (&self.nonce).into(),
                Payload {
                    msg: &self.sealed,
                    aad: &aad,
                },
            )
            .map_err(|_| CapsuleError::WrongSecret)?;
        Ok(decode_body(&plain)?)
    }

    /// Whether a task with this ceiling acting on these origins may mount it.
    pub fn allows(&self, ceiling: RiskClass) -> Result<(), CapsuleError> {
        if ceiling > self.policy.max_risk {
            return Err(CapsuleError::Policy(format!(
                "the task's risk ceiling is {}, the capsule allows up to {}",
                ceiling.level(),
                self.policy.max_risk.level()
            )));
        }
        Ok(())
    }
}

/// Signs a capsule.
pub fn sign_capsule(
    key: &ed25519_dalek::SigningKey,
    capsule: Capsule,
) -> Result<SignedCapsule, CodecError> {
    Signed::new(key, Domain::Capsule, capsule)
}

impl SignedCapsule {
    /// Checks everything that needs no secret: signature, version, validity, revocations
    /// (those by its signer), expiry at `now`.
    pub fn check(
        &self,
        now: u64,
        revocations: &[SignedRevocation],
    ) -> Result<&Capsule, CapsuleError> {
        let capsule = self.verify(Domain::Capsule).map_err(|e| match e {
            SignatureError::Encoding(e) => CapsuleError::Encoding(e),
            _ => CapsuleError::BadSignature,
        })?;
        if capsule.version != CAPSULE_VERSION {
            return Err(CapsuleError::Version(capsule.version));
        }
        let validity = i128::from(capsule.expires_at) - i128::from(capsule.created_at);
        if validity < 1 || validity > i128::from(MAX_CAPSULE_SECS) {
            return Err(CapsuleError::Validity(validity));
        }
        if let Some(at) = revoked_at(&self.signer, &capsule_digest(self)?, revocations) {
            return Err(CapsuleError::Revoked(at));
        }
        if now >= capsule.expires_at {
            return Err(CapsuleError::Expired {
                expired_at: capsule.expires_at,
                now,
            });
        }
        Ok(capsule)
    }

    /// [`SignedCapsule::check`], then the seal opened with `secret`: the state, restricted to
    /// the policy's origins.
    pub fn open(
        &self,
        secret: &CapsuleSecret,
        now: u64,
        revocations: &[SignedRevocation],
    ) -> Result<SessionState, CapsuleError> {
        let capsule = self.check(now, revocations)?;
        let key = derive_key(&capsule.key, secret)?;
        let state = capsule.unseal(&key)?;
        Ok(state.restrict(&capsule.policy.origins))
    }

    /// What a task records of the capsule it mounts: no secret.
    pub fn reference(&self) -> Result<CapsuleRef, CodecError> {
        Ok(CapsuleRef {
            id: capsule_digest(self)?,
            signer: data_encoding::HEXLOWER.encode(self.signer.as_bytes()),
            origins: self.value.policy.origins.clone(),
            expires_at: self.value.expires_at,
        })
    }
}

/// A capsule as a task names it: which one, whose, for where, until when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapsuleRef {
    /// [`capsule_digest`].
    pub id: Digest32,
    /// The signer's public key, hex.
    pub signer: String,
    /// The origins it is mounted for.
    pub origins: Vec<String>,
    /// Its expiry (Unix seconds).
    pub expires_at: u64,
}

impl CapsuleRef {
    /// The signer's key, if the record's hex is one.
    pub fn signer_key(&self) -> Option<ed25519_dalek::VerifyingKey> {
        let bytes: [u8; 32] = data_encoding::HEXLOWER
            .decode(self.signer.as_bytes())
            .ok()?
            .try_into()
            .ok()?;
        ed25519_dalek::VerifyingKey::from_bytes(&bytes).ok()
    }
}

/// A one-time code that cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TotpError {
    /// The secret is not base32.
    #[error("the TOTP secret is not base32 (RFC 4648): {0}")]
    Base32(String),
    /// The secret is empty.
    #[error("the TOTP secret is empty")]
    Empty,
}

/// Decodes a base32 TOTP secret as authenticator apps show it (any case, spaces, optional
/// padding).
pub fn totp_secret(base32: &str) -> Result<Vec<u8>, TotpError> {
    let cleaned: String = base32
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '=' && *c != '-')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if cleaned.is_empty() {
        return Err(TotpError::Empty);
    }
    data_encoding::BASE32_NOPAD
        .decode(cleaned.as_bytes())
        .map_err(|e| TotpError::Base32(e.to_string()))
}

/// HMAC-SHA-1 (RFC 2104), which TOTP uses.
fn hmac_sha1(key: &[u8], message: &[u8]) -> [u8; 20] {
    use sha1::Digest;
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..20].copy_from_slice(&sha1::Sha1::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let mut inner = sha1::Sha1::new();
    inner.update(block.map(|b| b ^ 0x36));
    inner.update(message);
    let mut outer = sha1::Sha1::new();
    outer.update(block.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The RFC 6238 code (HMAC-SHA-1, 30-second steps) of `secret` at Unix time `unix`, with
/// `digits` digits.
pub fn totp_code(secret: &[u8], unix: u64, digits: u32) -> String {
    let counter = unix / 30;
    let mac = hmac_sha1(secret, &counter.to_be_bytes());
    let offset = usize::from(mac[19] & 0x0f);
    let binary = (u32::from(mac[offset] & 0x7f) << 24)
        | (u32::from(mac[offset + 1]) << 16)
        | (u32::from(mac[offset + 2]) << 8)
        | u32::from(mac[offset + 3]);
    let code = binary % 10u32.pow(digits);
    format!("{code:0width$}", width = digits as usize)
}

/// The six-digit code an authenticator app shows for a base32 secret at `unix`.
pub fn totp(base32: &str, unix: u64) -> Result<String, TotpError> {
    Ok(totp_code(&totp_secret(base32)?, unix, 6))
}

/// Bytes as base64 in documents, raw in the binary encoding.
mod base64_bytes {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(bytes: &Vec<u8>, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&data_encoding::BASE64.encode(bytes))
        } else {
            bytes.serialize(serializer)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            data_encoding::BASE64
                .decode(text.as_bytes())
                .map_err(serde::de::Error::custom)
        } else {
            Vec::<u8>::deserialize(deserializer)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consent::Revocation;
    use ed25519_dalek::SigningKey;
    use rand::SeedableRng;

    fn user(seed: u64) -> SigningKey {
        SigningKey::generate(&mut rand::rngs::StdRng::seed_from_u64(seed))
    }

    fn cookie(name: &str, value: &str, domain: &str) -> SessionCookie {
        SessionCookie {
            name: name.into(),
            value: value.into(),
            domain: domain.into(),
            path: "/".into(),
            expires: None,
            http_only: true,
            secure: false,
            same_site: Some("Lax".into()),
        }
    }

    fn state() -> SessionState {
        SessionState {
            cookies: vec![
                cookie("sid", "s3cret-a", "127.0.0.1"),
                cookie("tracker", "s3cret-b", "127.0.0.2"),
            ],
            storage: vec![OriginStorage {
                origin: "http://127.0.0.1:8080".into(),
                local: vec![("name".into(), "Alice".into())],
                session: Vec::new(),
            }],
        }
    }

    fn readable(key: KeySource) -> Capsule {
        Capsule {
            version: CAPSULE_VERSION,
            created_at: 1_000,
            expires_at: 1_000 + 3600,
            policy: ReusePolicy {
                origins: vec!["http://127.0.0.1:8080".into()],
                max_risk: RiskClass::ExternalSubmission,
            },
            login: None,
            key,
            nonce: [7; 12],
            sealed: Vec::new(),
        }
    }

    fn passphrase_source() -> KeySource {
        // Small parameters: the test is about the format, not the cost.
        KeySource::Passphrase {
            salt: [3; 16],
            memory_kib: 64,
            iterations: 1,
        }
    }

    fn sealed(secret: &CapsuleSecret, source: KeySource) -> SignedCapsule {
        let readable = readable(source);
        let key = derive_key(&readable.key, secret).expect("derived");
        sign_capsule(&user(1), readable.seal(&state(), &key).expect("sealed")).expect("signed")
    }

    #[test]
    fn rfc_6238_test_vectors() {
        // RFC 6238 appendix B, SHA-1, the 20-byte ASCII secret "12345678901234567890".
        let secret = b"12345678901234567890";
        for (time, code) in [
            (59, "94287082"),
            (1_111_111_109, "07081804"),
            (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"),
            (20_000_000_000, "65353130"),
        ] {
            assert_eq!(totp_code(secret, time, 8), code, "at {time}");
        }
        // The same secret in base32, as an authenticator app takes it: six digits.
        let base32 = "GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ";
        assert_eq!(totp(base32, 59).expect("code"), "287082");
        assert_eq!(totp(&base32.to_lowercase(), 59).expect("code"), "287082");
        assert!(matches!(totp("not base32!", 59), Err(TotpError::Base32(_))));
        assert_eq!(totp("  ", 59), Err(TotpError::Empty));
    }

    #[test]
    fn hmac_sha1_matches_rfc_2202() {
        let mac = hmac_sha1(&[0x0b; 20], b"Hi There");
        assert_eq!(
            data_encoding::HEXLOWER.encode(&mac),
            "b617318655057264e28bc0b6fb378c8ef146be00"
        );
        // A key longer than the block is hashed first.
        let mac = hmac_sha1(
            &[0xaa; 80],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            data_encoding::HEXLOWER.encode(&mac),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112"
        );
    }

    #[test]
    fn a_sealed_capsule_opens_with_its_secret_and_only_its_origins() {
        for (secret, source) in [
            (
                CapsuleSecret::Passphrase("correct horse".into()),
                passphrase_source(),
            ),
            (
                CapsuleSecret::KeyFile([9; 32]),
                KeySource::KeyFile {
                    key_id: key_file_id(&[9; 32]),
                },
            ),
        ] {
            let capsule = sealed(&secret, source);
            let opened = capsule.open(&secret, 2_000, &[]).expect("opens");
            assert_eq!(
                opened.cookies.len(),
                1,
                "the other host's cookie is dropped"
            );
            assert_eq!(opened.cookies[0].value, "s3cret-a");
            assert_eq!(opened.storage.len(), 1);
            // Neither the file nor a Debug print shows a secret in clear.
            let json = serde_json::to_string(&capsule).expect("json");
            assert!(!json.contains("s3cret"), "{json}");
            assert!(!format!("{opened:?}").contains("s3cret"));
            let back: SignedCapsule = serde_json::from_str(&json).expect("parsed");
            assert_eq!(back, capsule);
        }
    }

    #[test]
    fn tampering_wrong_secrets_expiry_and_revocation_are_refused_by_name() {
        let secret = CapsuleSecret::Passphrase("correct horse".into());
        let capsule = sealed(&secret, passphrase_source());
        let mut flipped = capsule.clone();
        flipped.value.sealed[3] ^= 1;
        assert_eq!(
            flipped.open(&secret, 2_000, &[]),
            Err(CapsuleError::BadSignature)
        );
        let mut widened = capsule.clone();
        widened
            .value
            .policy
            .origins
            .push("http://127.0.0.2:80".into());
        assert_eq!(
            widened.open(&secret, 2_000, &[]),
            Err(CapsuleError::BadSignature)
        );
        assert_eq!(
            capsule.open(&CapsuleSecret::Passphrase("wrong".into()), 2_000, &[]),
            Err(CapsuleError::WrongSecret)
        );
        assert!(matches!(
            capsule.open(&CapsuleSecret::KeyFile([0; 32]), 2_000, &[]),
            Err(CapsuleError::KeyKind { .. })
        ));
        assert!(matches!(
            capsule.open(&secret, 4_600, &[]),
            Err(CapsuleError::Expired { .. })
        ));
        let keyed = sealed(
            &CapsuleSecret::KeyFile([9; 32]),
            KeySource::KeyFile {
                key_id: key_file_id(&[9; 32]),
            },
        );
        assert_eq!(
            keyed.open(&CapsuleSecret::KeyFile([8; 32]), 2_000, &[]),
            Err(CapsuleError::WrongKeyFile)
        );
        // A revocation counts when its signer signed the capsule.
        let revocation = |key: &SigningKey| {
            Signed::new(
                key,
                Domain::Revocation,
                Revocation {
                    subject: capsule_digest(&capsule).expect("digest"),
                    revoked_at: 1_500,
                },
            )
            .expect("signed")
        };
        assert!(
            capsule
                .open(&secret, 2_000, &[revocation(&user(2))])
                .is_ok()
        );
        assert_eq!(
            capsule.open(&secret, 2_000, &[revocation(&user(1))]),
            Err(CapsuleError::Revoked(1_500))
        );
    }

    #[test]
    fn the_policy_bounds_the_ceiling_and_the_validity() {
        let capsule = readable(passphrase_source());
        assert!(capsule.allows(RiskClass::ExternalSubmission).is_ok());
        assert!(matches!(
            capsule.allows(RiskClass::Financial),
            Err(CapsuleError::Policy(_))
        ));
        let mut forever = readable(passphrase_source());
        forever.expires_at = forever.created_at + MAX_CAPSULE_SECS + 1;
        assert!(matches!(
            forever.seal(&state(), &[1; 32]),
            Err(CapsuleError::Validity(_))
        ));
    }

    #[test]
    fn cookie_domains_match_like_a_browser() {
        assert!(cookie_domain_matches("127.0.0.1", "127.0.0.1"));
        assert!(!cookie_domain_matches("127.0.0.1", "127.0.0.2"));
        assert!(cookie_domain_matches(".example.com", "www.example.com"));
        assert!(cookie_domain_matches("example.com", "example.com"));
        assert!(!cookie_domain_matches("example.com", "badexample.com"));
    }
}
