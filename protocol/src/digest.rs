//! SHA-256 digests as they appear in documents and on the wire: raw bytes in the binary
//! encoding, lower-case hex in JSON. Below both [`crate::wire`] and [`crate::artifact`], which
//! name files and screenshots by their digests.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A SHA-256 digest, lower-case hex in documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest32(pub [u8; 32]);

impl Digest32 {
    /// SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest32 {
        Digest32(Sha256::digest(bytes).into())
    }

    /// Lower-case hex.
    pub fn to_hex(&self) -> String {
        data_encoding::HEXLOWER.encode(&self.0)
    }

    /// Parses lower-case hex.
    pub fn from_hex(text: &str) -> Option<Digest32> {
        let bytes = data_encoding::HEXLOWER.decode(text.as_bytes()).ok()?;
        Some(Digest32(bytes.try_into().ok()?))
    }
}

impl Serialize for Digest32 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.serialize_str(&self.to_hex())
        } else {
            self.0.serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Digest32 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            Digest32::from_hex(&text)
                .ok_or_else(|| serde::de::Error::custom("not a 64-digit lower-case hex digest"))
        } else {
            <[u8; 32]>::deserialize(deserializer).map(Digest32)
        }
    }
}
