//! Trajectories (finished rollouts) and their vectors.
//!
//! A [`TrajectoryVector`] can only be built valid: a bounded dimension (the embedder's: 384
//! for the sentence model, [`VECTOR_DIM`] for hashed n-grams; peers check it against their
//! own with [`TrajectoryVector::with_dimension`]), finite values, unit L2 norm. Decoding one from bytes runs the same checks, so an index never holds a vector
//! that would poison its distance computations.

use crate::action::Action;
use crate::fingerprint::Fingerprint;
use crate::risk::RiskClass;
use serde::{Deserialize, Serialize};

/// Dimension of the hashed n-gram vectors.
pub const VECTOR_DIM: usize = 256;
/// Largest dimension a trajectory vector may have.
pub const MAX_VECTOR_DIM: usize = 4096;
/// Largest deviation of a vector's L2 norm from 1 that is accepted.
pub const NORM_TOLERANCE: f32 = 1e-3;

/// What an action (or a path) cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Cost {
    /// Browser (or simulated) time, in milliseconds.
    pub browser_ms: u64,
    /// Model tokens spent.
    pub tokens: u64,
}

impl Cost {
    /// The sum of two costs, saturating.
    pub fn plus(self, other: Cost) -> Cost {
        Cost {
            browser_ms: self.browser_ms.saturating_add(other.browser_ms),
            tokens: self.tokens.saturating_add(other.tokens),
        }
    }

    /// The cost in milliseconds, tokens priced at `ms_per_token`.
    pub fn priced_ms(self, ms_per_token: f64) -> f64 {
        self.browser_ms as f64 + self.tokens as f64 * ms_per_token
    }
}

/// One step of a trajectory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrajectoryStep {
    /// What was done.
    pub action: Action,
    /// The fingerprint of the state it led to.
    pub fingerprint: Fingerprint,
    /// Reward observed at that state, in [0, 1] (1 = success predicates hold).
    pub reward: f32,
    /// What the step cost.
    pub cost: Cost,
    /// The action's risk class.
    pub risk: RiskClass,
}

/// A rollout from the start URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    /// The task family (for the replay bonus).
    pub family: String,
    /// The task's goal text.
    pub goal: String,
    /// The fingerprint of the start state.
    pub start: Fingerprint,
    /// The steps, in order.
    pub steps: Vec<TrajectoryStep>,
    /// Whether the last state satisfied the success predicates.
    pub success: bool,
}

/// Why a vector was refused.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum VectorError {
    /// Not the expected number of values (or none, or more than [`MAX_VECTOR_DIM`]).
    #[error("vector has {found} dimensions, expected {expected}")]
    WrongDimension {
        /// The dimension expected (the embedder's, or [`MAX_VECTOR_DIM`] as a bound).
        expected: usize,
        /// What was given.
        found: usize,
    },
    /// A NaN or infinite value.
    #[error("vector value {index} is not finite")]
    NotFinite {
        /// Position of the first bad value.
        index: usize,
    },
    /// The L2 norm is not 1.
    #[error("vector norm is {norm}, expected 1 ± {NORM_TOLERANCE}")]
    NotUnitNorm {
        /// The norm found.
        norm: f32,
    },
    /// All zeros: cannot be normalised.
    #[error("vector is all zeros")]
    Zero,
}

/// An L2-normalised embedding of a trajectory (of its goal: see `forager_node::memory`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<f32>", into = "Vec<f32>")]
pub struct TrajectoryVector(Vec<f32>);

impl TrajectoryVector {
    /// Normalises raw values into a vector; fails on a wrong dimension, non-finite values or
    /// all zeros.
    pub fn normalise(mut values: Vec<f32>) -> Result<TrajectoryVector, VectorError> {
        check_shape(&values)?;
        let norm = l2_norm(&values);
        if norm == 0.0 || !norm.is_finite() {
            return Err(VectorError::Zero);
        }
        for v in &mut values {
            *v /= norm;
        }
        TrajectoryVector::try_from(values)
    }

    /// A valid vector of exactly `dim` values (the local embedder's dimension).
    pub fn with_dimension(values: Vec<f32>, dim: usize) -> Result<TrajectoryVector, VectorError> {
        if values.len() != dim {
            return Err(VectorError::WrongDimension {
                expected: dim,
                found: values.len(),
            });
        }
        TrajectoryVector::try_from(values)
    }

    /// Its dimension.
    pub fn dim(&self) -> usize {
        self.0.len()
    }

    /// The values.
    pub fn as_slice(&self) -> &[f32] {
        &self.0
    }

    /// Cosine similarity (the dot product, both being unit vectors), in [-1, 1].
    pub fn cosine(&self, other: &TrajectoryVector) -> f32 {
        let dot: f32 = self.0.iter().zip(&other.0).map(|(a, b)| a * b).sum();
        dot.clamp(-1.0, 1.0)
    }
}

fn check_shape(values: &[f32]) -> Result<(), VectorError> {
    if values.is_empty() || values.len() > MAX_VECTOR_DIM {
        return Err(VectorError::WrongDimension {
            expected: MAX_VECTOR_DIM,
            found: values.len(),
        });
    }
    if let Some(index) = values.iter().position(|v| !v.is_finite()) {
        return Err(VectorError::NotFinite { index });
    }
    Ok(())
}

fn l2_norm(values: &[f32]) -> f32 {
    values.iter().map(|v| v * v).sum::<f32>().sqrt()
}

impl TryFrom<Vec<f32>> for TrajectoryVector {
    type Error = VectorError;
    fn try_from(values: Vec<f32>) -> Result<Self, Self::Error> {
        check_shape(&values)?;
        let norm = l2_norm(&values);
        if (norm - 1.0).abs() > NORM_TOLERANCE {
            return Err(VectorError::NotUnitNorm { norm });
        }
        Ok(TrajectoryVector(values))
    }
}

impl From<TrajectoryVector> for Vec<f32> {
    fn from(vector: TrajectoryVector) -> Vec<f32> {
        vector.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn validation_names_each_fault() {
        assert_eq!(
            TrajectoryVector::with_dimension(vec![1.0; 3], VECTOR_DIM),
            Err(VectorError::WrongDimension {
                expected: VECTOR_DIM,
                found: 3
            })
        );
        assert_eq!(
            TrajectoryVector::try_from(vec![0.0; MAX_VECTOR_DIM + 1]),
            Err(VectorError::WrongDimension {
                expected: MAX_VECTOR_DIM,
                found: MAX_VECTOR_DIM + 1
            })
        );
        assert!(TrajectoryVector::try_from(Vec::new()).is_err());
        let unit384 = TrajectoryVector::normalise(vec![1.0; 384]).expect("valid");
        assert_eq!(unit384.dim(), 384);
        assert!(TrajectoryVector::with_dimension(unit384.clone().into(), 384).is_ok());
        assert!(TrajectoryVector::with_dimension(unit384.into(), VECTOR_DIM).is_err());
        let mut nan = vec![0.0; VECTOR_DIM];
        nan[0] = 1.0;
        nan[7] = f32::NAN;
        assert_eq!(
            TrajectoryVector::try_from(nan.clone()),
            Err(VectorError::NotFinite { index: 7 })
        );
        assert_eq!(
            TrajectoryVector::normalise(nan),
            Err(VectorError::NotFinite { index: 7 })
        );
        assert!(matches!(
            TrajectoryVector::try_from(vec![1.0; VECTOR_DIM]),
            Err(VectorError::NotUnitNorm { .. })
        ));
        assert_eq!(
            TrajectoryVector::normalise(vec![0.0; VECTOR_DIM]),
            Err(VectorError::Zero)
        );
    }

    #[test]
    fn decoding_validates() {
        let bad = serde_json::to_string(&vec![2.0f32; VECTOR_DIM]).expect("json");
        assert!(serde_json::from_str::<TrajectoryVector>(&bad).is_err());
        let good = TrajectoryVector::normalise(vec![2.0; VECTOR_DIM]).expect("valid");
        let json = serde_json::to_string(&good).expect("json");
        assert_eq!(
            serde_json::from_str::<TrajectoryVector>(&json).expect("decodes"),
            good
        );
    }

    proptest! {
        #[test]
        fn normalised_vectors_have_unit_norm_and_self_similarity_one(
            values in prop::collection::vec(-100.0f32..100.0, VECTOR_DIM)
        ) {
            if let Ok(v) = TrajectoryVector::normalise(values) {
                prop_assert!((l2_norm(v.as_slice()) - 1.0).abs() <= NORM_TOLERANCE);
                prop_assert!((v.cosine(&v) - 1.0).abs() <= 1e-3);
            }
        }
    }
}
