//! The one place forager uses bincode.
//!
//! A frame is `b"FRGR"`, a big-endian `u16` wire version, then the bincode body. Decoding
//! checks, in order and before any allocation the input controls: the size limit, the magic,
//! the version, then decodes with bincode's own allocation limit, and finally refuses trailing
//! bytes (so that one value has exactly one encoding, which signatures rely on).
//!
//! Moving to another format later means changing this file only.

use bincode::config::{self, Configuration, Limit, LittleEndian, Varint};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Leading bytes of every frame.
pub const MAGIC: [u8; 4] = *b"FRGR";
/// The wire version this build speaks.
pub const WIRE_VERSION: u16 = 17;
/// The largest frame any forager message may have, in bytes.
pub const MAX_FRAME_BYTES: usize = 1 << 20;
/// Bytes before the body.
pub const HEADER_BYTES: usize = MAGIC.len() + 2;

type Config = Configuration<LittleEndian, Varint, Limit<MAX_FRAME_BYTES>>;

fn config() -> Config {
    config::standard().with_limit::<MAX_FRAME_BYTES>()
}

/// Why bytes could not become a value, or a value bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input is larger than the limit; nothing was decoded.
    #[error("message of {size} bytes exceeds the limit of {limit}")]
    TooLarge {
        /// Size of the input (or of the encoding).
        size: usize,
        /// The limit in force.
        limit: usize,
    },
    /// Shorter than a frame header.
    #[error("message of {size} bytes is shorter than the {HEADER_BYTES}-byte header")]
    Truncated {
        /// Size of the input.
        size: usize,
    },
    /// Does not start with the forager magic.
    #[error("not a forager message (bad magic)")]
    BadMagic,
    /// A wire version this build does not speak.
    #[error("wire version {found} is not supported (this build speaks {supported})")]
    UnsupportedVersion {
        /// The version in the frame.
        found: u16,
        /// [`WIRE_VERSION`].
        supported: u16,
    },
    /// The body is not a valid encoding of the expected type.
    #[error("malformed message: {0}")]
    Malformed(String),
    /// A valid but non-canonical encoding (for example an over-long varint).
    #[error("message is not in canonical encoding")]
    NonCanonical,
    /// Bytes left over after the value.
    #[error("{0} unexpected bytes after the message")]
    TrailingBytes(usize),
    /// The value could not be encoded.
    #[error("cannot encode: {0}")]
    Encode(String),
}

/// Encodes a value into a versioned frame no larger than [`MAX_FRAME_BYTES`].
pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    let body = canonical_bytes(value)?;
    let size = HEADER_BYTES + body.len();
    if size > MAX_FRAME_BYTES {
        return Err(CodecError::TooLarge {
            size,
            limit: MAX_FRAME_BYTES,
        });
    }
    let mut frame = Vec::with_capacity(size);
    frame.extend_from_slice(&MAGIC);
    frame.extend_from_slice(&WIRE_VERSION.to_be_bytes());
    frame.extend_from_slice(&body);
    Ok(frame)
}

/// Decodes a frame, refusing anything over `limit` bytes (capped at [`MAX_FRAME_BYTES`])
/// before looking inside.
pub fn decode<T: DeserializeOwned + Serialize>(
    frame: &[u8],
    limit: usize,
) -> Result<T, CodecError> {
    let limit = limit.min(MAX_FRAME_BYTES);
    if frame.len() > limit {
        return Err(CodecError::TooLarge {
            size: frame.len(),
            limit,
        });
    }
    if frame.len() < HEADER_BYTES {
        return Err(CodecError::Truncated { size: frame.len() });
    }
    if frame[..MAGIC.len()] != MAGIC {
        return Err(CodecError::BadMagic);
    }
    let version = u16::from_be_bytes([frame[4], frame[5]]);
    if version != WIRE_VERSION {
        return Err(CodecError::UnsupportedVersion {
            found: version,
            supported: WIRE_VERSION,
        });
    }
    decode_body(&frame[HEADER_BYTES..])
}

/// The canonical (unframed) encoding of a value: what signatures and content hashes cover.
pub fn canonical_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>, CodecError> {
    // bincode's limit applies to decoding only; `encode` checks the size of the result.
    bincode::serde::encode_to_vec(value, config()).map_err(|e| CodecError::Encode(e.to_string()))
}

/// Decodes an unframed canonical encoding (as stored on disk next to its own header).
///
/// Only the canonical encoding is accepted: bincode would also read, say, a small integer
/// written in a longer varint form, and such a second encoding of the same value could carry a
/// valid signature on different bytes. Re-encoding and comparing closes that door.
pub fn decode_body<T: DeserializeOwned + Serialize>(body: &[u8]) -> Result<T, CodecError> {
    let (value, used) = bincode::serde::decode_from_slice(body, config())
        .map_err(|e| CodecError::Malformed(e.to_string()))?;
    if used != body.len() {
        return Err(CodecError::TrailingBytes(body.len() - used));
    }
    if canonical_bytes(&value)? != body {
        return Err(CodecError::NonCanonical);
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_header_checks() {
        let value = (42u32, "hello".to_owned(), vec![1.5f32, -2.0]);
        let frame = encode(&value).expect("encodes");
        assert_eq!(&frame[..4], b"FRGR");
        let back: (u32, String, Vec<f32>) = decode(&frame, 1024).expect("decodes");
        assert_eq!(back, value);

        assert_eq!(
            decode::<(u32, String, Vec<f32>)>(&frame, 10),
            Err(CodecError::TooLarge {
                size: frame.len(),
                limit: 10
            })
        );
        assert_eq!(
            decode::<u32>(&frame[..3], 1024),
            Err(CodecError::Truncated { size: 3 })
        );
        let mut bad_magic = frame.clone();
        bad_magic[0] = b'X';
        assert_eq!(decode::<u32>(&bad_magic, 1024), Err(CodecError::BadMagic));
        let mut future = frame.clone();
        future[5] = 99;
        assert_eq!(
            decode::<u32>(&future, 1024),
            Err(CodecError::UnsupportedVersion {
                found: 99,
                supported: WIRE_VERSION
            })
        );
        let mut trailing = frame.clone();
        trailing.push(0);
        assert_eq!(
            decode::<(u32, String, Vec<f32>)>(&trailing, 1024),
            Err(CodecError::TrailingBytes(1))
        );
    }

    #[test]
    fn a_hostile_length_prefix_does_not_allocate() {
        // A Vec<u8> claiming u64::MAX elements in a 20-byte frame.
        let mut frame = MAGIC.to_vec();
        frame.extend_from_slice(&WIRE_VERSION.to_be_bytes());
        frame.push(0xFF); // varint marker for a u64
        frame.extend_from_slice(&u64::MAX.to_le_bytes());
        let result = decode::<Vec<u8>>(&frame, MAX_FRAME_BYTES);
        assert!(
            matches!(result, Err(CodecError::Malformed(_))),
            "{result:?}"
        );
    }

    #[test]
    fn non_canonical_varints_are_refused() {
        // 5u32 written as a u16 varint (marker 251, then 5u16) instead of the single byte 5.
        let mut frame = MAGIC.to_vec();
        frame.extend_from_slice(&WIRE_VERSION.to_be_bytes());
        frame.extend_from_slice(&[251, 5, 0]);
        assert_eq!(decode::<u32>(&frame, 1024), Err(CodecError::NonCanonical));
    }

    #[test]
    fn oversized_values_refuse_to_encode() {
        let huge = vec![0u8; MAX_FRAME_BYTES];
        assert!(matches!(encode(&huge), Err(CodecError::TooLarge { .. })));
    }
}
