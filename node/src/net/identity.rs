//! A node's identity: one Ed25519 key, persisted in its data directory, that is both its
//! libp2p peer identity and the key that signs its trajectories and reports.

use ed25519_dalek::SigningKey;
use libp2p::PeerId;
use libp2p::identity::Keypair;
use std::path::{Path, PathBuf};

/// File name of the secret key in a data directory.
pub const KEY_FILE: &str = "node.key";

/// Why an identity could not be loaded or made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentityError {
    /// The key file could not be read or written.
    #[error("key file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The key file does not hold a 32-byte Ed25519 secret.
    #[error("key file {0} is not a 32-byte Ed25519 secret key")]
    Malformed(PathBuf),
}

/// A node's keys.
#[derive(Clone)]
pub struct NodeIdentity {
    keypair: Keypair,
    signing: SigningKey,
}

impl std::fmt::Debug for NodeIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeIdentity({})", self.peer_id())
    }
}

impl NodeIdentity {
    /// An identity from a 32-byte secret.
    pub fn from_secret(secret: [u8; 32]) -> NodeIdentity {
        let signing = SigningKey::from_bytes(&secret);
        let mut bytes = secret;
        // The secret is valid by construction (any 32 bytes are an Ed25519 secret).
        let keypair =
            Keypair::ed25519_from_bytes(&mut bytes).unwrap_or_else(|_| Keypair::generate_ed25519());
        NodeIdentity { keypair, signing }
    }

    /// A fresh random identity (not persisted).
    pub fn generate() -> NodeIdentity {
        let mut secret = [0u8; 32];
        rand::fill(&mut secret);
        NodeIdentity::from_secret(secret)
    }

    /// Loads the identity from `dir/node.key`, creating the directory and a new key (readable
    /// by the owner only) when there is none.
    pub fn load_or_create(dir: &Path) -> Result<NodeIdentity, IdentityError> {
        let path = dir.join(KEY_FILE);
        let io = |source| IdentityError::Io {
            path: path.clone(),
            source,
        };
        match std::fs::read(&path) {
            Ok(bytes) => {
                let secret: [u8; 32] = bytes
                    .try_into()
                    .map_err(|_| IdentityError::Malformed(path.clone()))?;
                Ok(NodeIdentity::from_secret(secret))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).map_err(io)?;
                let mut secret = [0u8; 32];
                rand::fill(&mut secret);
                write_private(&path, &secret).map_err(io)?;
                Ok(NodeIdentity::from_secret(secret))
            }
            Err(e) => Err(io(e)),
        }
    }

    /// The libp2p keypair.
    pub fn keypair(&self) -> &Keypair {
        &self.keypair
    }

    /// The signing key for trajectories and reports.
    pub fn signing_key(&self) -> &SigningKey {
        &self.signing
    }

    /// The peer id.
    pub fn peer_id(&self) -> PeerId {
        self.keypair.public().to_peer_id()
    }
}

/// The peer id that belongs to an Ed25519 verifying key (to check that a signed message's
/// signer is the peer it claims to come from).
pub fn peer_id_of(key: &ed25519_dalek::VerifyingKey) -> Option<PeerId> {
    let public = libp2p::identity::ed25519::PublicKey::try_from_bytes(key.as_bytes()).ok()?;
    Some(libp2p::identity::PublicKey::from(public).to_peer_id())
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persisted_identity_is_stable_and_signing_matches_peer_id() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = NodeIdentity::load_or_create(dir.path()).expect("created");
        let again = NodeIdentity::load_or_create(dir.path()).expect("loaded");
        assert_eq!(first.peer_id(), again.peer_id());
        let verifying = first.signing_key().verifying_key();
        assert_eq!(peer_id_of(&verifying), Some(first.peer_id()));
        std::fs::write(dir.path().join(KEY_FILE), b"short").expect("write");
        assert!(matches!(
            NodeIdentity::load_or_create(dir.path()),
            Err(IdentityError::Malformed(_))
        ));
    }
}
