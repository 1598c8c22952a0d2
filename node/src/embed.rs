//! Hashed n-gram vectors for text, and the stable keys of actions.
//!
//! Everything here is deterministic and offline: features are hashed with 64-bit FNV-1a into
//! [`VECTOR_DIM`] signed buckets (the hashing trick). Text similarity (the default policy's
//! priors beside the sentence model, and the goal vectors of the memory without one) compares
//! word and character-trigram features.
//!
//! An action's key ([`action_key`]) is computed from its label alone, so the policy, the memory's
//! traces and a branch's prefix all compute the same key for the same action.

use forager_protocol::trajectory::{TrajectoryVector, VECTOR_DIM};

/// 64-bit FNV-1a: stable across runs, platforms and versions (unlike `DefaultHasher`).
pub fn stable_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Mixes two hashes (for bigrams and namespaces).
fn combine(a: u64, b: u64) -> u64 {
    stable_hash(&[a.to_le_bytes(), b.to_le_bytes()].concat())
}

/// The stable key of an action description: its words, lower-cased, in order.
pub fn action_key(description: &str) -> u64 {
    let words: Vec<String> = words(description).collect();
    stable_hash(words.join(" ").as_bytes())
}

/// Lower-cased alphanumeric words.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// A sparse vector over [`VECTOR_DIM`] buckets, entries sorted by bucket.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SparseVector {
    entries: Vec<(u16, f32)>,
}

impl SparseVector {
    /// Builds a vector from hashed features and weights; colliding features add up.
    pub fn from_features(features: impl IntoIterator<Item = (u64, f32)>) -> SparseVector {
        let mut entries: Vec<(u16, f32)> = features
            .into_iter()
            .map(|(hash, weight)| {
                let bucket = (hash % VECTOR_DIM as u64) as u16;
                let sign = if hash >> 63 == 1 { -1.0 } else { 1.0 };
                (bucket, sign * weight)
            })
            .collect();
        entries.sort_unstable_by_key(|&(bucket, _)| bucket);
        let mut merged: Vec<(u16, f32)> = Vec::with_capacity(entries.len());
        for (bucket, value) in entries {
            match merged.last_mut() {
                Some((last, sum)) if *last == bucket => *sum += value,
                _ => merged.push((bucket, value)),
            }
        }
        SparseVector { entries: merged }
    }

    /// The L2 norm.
    pub fn norm(&self) -> f32 {
        self.entries.iter().map(|(_, v)| v * v).sum::<f32>().sqrt()
    }

    /// Whether no feature is set.
    pub fn is_empty(&self) -> bool {
        self.entries.iter().all(|&(_, v)| v == 0.0)
    }

    /// Dot product with another sparse vector.
    pub fn dot(&self, other: &SparseVector) -> f32 {
        let (mut i, mut j, mut sum) = (0, 0, 0.0);
        while i < self.entries.len() && j < other.entries.len() {
            let (a, b) = (self.entries[i], other.entries[j]);
            match a.0.cmp(&b.0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    sum += a.1 * b.1;
                    i += 1;
                    j += 1;
                }
            }
        }
        sum
    }

    /// Cosine similarity with another sparse vector; 0 if either is empty.
    pub fn cosine(&self, other: &SparseVector) -> f32 {
        let denominator = self.norm() * other.norm();
        if denominator > 0.0 {
            (self.dot(other) / denominator).clamp(-1.0, 1.0)
        } else {
            0.0
        }
    }

    /// Cosine similarity with a unit dense vector.
    pub fn cosine_dense(&self, dense: &TrajectoryVector) -> f32 {
        let norm = self.norm();
        if norm == 0.0 {
            return 0.0;
        }
        let values = dense.as_slice();
        let dot: f32 = self
            .entries
            .iter()
            .map(|&(bucket, v)| v * values[usize::from(bucket)])
            .sum();
        (dot / norm).clamp(-1.0, 1.0)
    }

    /// The dense form, unnormalised.
    pub fn to_dense(&self) -> Vec<f32> {
        let mut dense = vec![0f32; VECTOR_DIM];
        for &(bucket, value) in &self.entries {
            dense[usize::from(bucket)] += value;
        }
        dense
    }
}

const TEXT_NAMESPACE: u64 = 0x7465_7874; // "text"

/// Word unigrams (weight 1) and character trigrams of each word (weight 0.5), so that
/// "laptops" is close to "laptop".
pub fn text_features(text: &str) -> SparseVector {
    let mut features = Vec::new();
    for word in words(text) {
        features.push((combine(TEXT_NAMESPACE, stable_hash(word.as_bytes())), 1.0));
        let padded: Vec<char> = format!("^{word}$").chars().collect();
        for trigram in padded.windows(3) {
            let s: String = trigram.iter().collect();
            features.push((combine(TEXT_NAMESPACE + 1, stable_hash(s.as_bytes())), 0.5));
        }
    }
    SparseVector::from_features(features)
}

/// Cosine similarity of two texts' features, in [-1, 1] (0 for empty text).
pub fn text_similarity(a: &str, b: &str) -> f32 {
    text_features(a).cosine(&text_features(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn similar_texts_score_higher() {
        let goal = "find the ThinkPad laptop specifications";
        let close = text_similarity(goal, "ThinkPad laptops");
        let far = text_similarity(goal, "Gardening tools");
        assert!(close > 0.3, "{close}");
        assert!(far < close / 2.0, "{far} vs {close}");
        assert_eq!(text_similarity("", "anything"), 0.0);
        assert!((text_similarity("Same words", "same WORDS") - 1.0).abs() < 1e-5);
    }

    #[test]
    fn stable_hash_is_fnv1a() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(stable_hash(b""), 0xcbf29ce484222325);
        assert_eq!(stable_hash(b"a"), 0xaf63dc4c8601ec8c);
        assert_eq!(stable_hash(b"foobar"), 0x85944171f73967e8);
    }

    proptest! {
        #[test]
        fn cosine_is_symmetric_and_bounded(a in "[a-z ]{0,20}", b in "[a-z ]{0,20}") {
            let (fa, fb) = (text_features(&a), text_features(&b));
            let ab = fa.cosine(&fb);
            prop_assert!((ab - fb.cosine(&fa)).abs() < 1e-5);
            prop_assert!((-1.0..=1.0).contains(&ab));
        }
    }
}
