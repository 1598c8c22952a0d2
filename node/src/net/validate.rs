//! Validation of gossiped trajectory announcements, before anything is accepted into the
//! replica or forwarded: size, version, decoding, signature (strict, and by the peer that
//! authored the gossip message), dimension, finite values, unit norm, reward range, a rate
//! limit per peer, and replays (an origin's sequence number seen before). Every rejection is
//! counted by its named reason; the swarm turns rejections into peer-score penalties.
//!
//! A vector of another dimension is `wrong_dimension`, one of another model of the same dimension
//! `other_embedder`; a node asked to sync by a peer with another embedder refuses with
//! `RefusalReason::OtherEmbedder` (in the worker).

use super::identity::peer_id_of;
use forager_protocol::codec::CodecError;
use forager_protocol::signing::Domain;
use forager_protocol::signing::Signed;
use forager_protocol::trajectory::{TrajectoryVector, VectorError};
use forager_protocol::wire::{Announcement, EmbedderId, MAX_GOSSIP_BYTES, Message};
use libp2p::PeerId;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

/// Why an announcement was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rejection {
    /// Larger than [`MAX_GOSSIP_BYTES`].
    TooLarge,
    /// Not a valid frame (magic, length, encoding, trailing bytes).
    Malformed,
    /// A wire version this build does not speak.
    WrongVersion,
    /// A valid message, but not an announcement.
    NotAnnouncement,
    /// The signature does not verify.
    BadSignature,
    /// Signed by a key that is not the author of the gossip message.
    SignerMismatch,
    /// Not 256 values.
    WrongDimension,
    /// Another embedder of the same dimension (another model).
    OtherEmbedder,
    /// A NaN or infinite value.
    NotFinite,
    /// Not unit norm.
    NotUnitNorm,
    /// Reward outside [0, 1] (or not finite).
    RewardOutOfRange,
    /// The peer sent more than its rate allows.
    RateLimited,
    /// This origin's sequence number was seen before.
    Replayed,
}

impl Rejection {
    /// The snake_case name counters use.
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::TooLarge => "too_large",
            Rejection::Malformed => "malformed",
            Rejection::WrongVersion => "wrong_version",
            Rejection::NotAnnouncement => "not_announcement",
            Rejection::BadSignature => "bad_signature",
            Rejection::SignerMismatch => "signer_mismatch",
            Rejection::WrongDimension => "wrong_dimension",
            Rejection::OtherEmbedder => "other_embedder",
            Rejection::NotFinite => "not_finite",
            Rejection::NotUnitNorm => "not_unit_norm",
            Rejection::RewardOutOfRange => "reward_out_of_range",
            Rejection::RateLimited => "rate_limited",
            Rejection::Replayed => "replayed",
        }
    }
}

/// An accepted announcement.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    /// The signed announcement, as received.
    pub signed: Signed<Announcement>,
    /// Its validated vector.
    pub vector: TrajectoryVector,
    /// Its origin.
    pub origin: PeerId,
}

/// Keeps the state validation needs: rate windows per peer, sequence numbers seen per origin,
/// and counters.
#[derive(Debug)]
pub struct Validator {
    rate: u32,
    window: Duration,
    windows: HashMap<PeerId, (Instant, u32)>,
    seen: HashSet<([u8; 32], u64)>,
    accepted: u64,
    rejected: BTreeMap<&'static str, u64>,
    embedder: EmbedderId,
}

impl Default for Validator {
    fn default() -> Self {
        Validator::new(500, Duration::from_secs(1))
    }
}

impl Validator {
    /// A validator allowing `rate` announcements per peer per `window`.
    pub fn new(rate: u32, window: Duration) -> Validator {
        Validator {
            rate,
            window,
            windows: HashMap::new(),
            seen: HashSet::new(),
            accepted: 0,
            rejected: BTreeMap::new(),
            embedder: crate::memory::ngram_id(),
        }
    }

    /// Accepts only vectors of this embedder (the n-gram one by default).
    pub fn for_embedder(mut self, embedder: EmbedderId) -> Validator {
        self.embedder = embedder;
        self
    }

    /// Accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted
    }

    /// Rejections so far, by reason.
    pub fn rejected(&self) -> &BTreeMap<&'static str, u64> {
        &self.rejected
    }

    /// Marks an announcement as already known (one this node published, or loaded from disk),
    /// so that a copy coming back counts as a replay.
    pub fn remember(&mut self, signed: &Signed<Announcement>) {
        self.seen
            .insert((*signed.signer.as_bytes(), signed.value.sequence));
    }

    /// Checks gossip data authored by `author` and relayed by `relayer`.
    pub fn check(
        &mut self,
        author: Option<PeerId>,
        relayer: PeerId,
        data: &[u8],
        now: Instant,
    ) -> Result<Accepted, Rejection> {
        let result = self.check_inner(author, relayer, data, now);
        match &result {
            Ok(_) => self.accepted += 1,
            Err(rejection) => *self.rejected.entry(rejection.as_str()).or_default() += 1,
        }
        result
    }

    fn check_inner(
        &mut self,
        author: Option<PeerId>,
        relayer: PeerId,
        data: &[u8],
        now: Instant,
    ) -> Result<Accepted, Rejection> {
        let (started, count) = self.windows.entry(relayer).or_insert((now, 0));
        if now.duration_since(*started) >= self.window {
            *started = now;
            *count = 0;
        }
        *count += 1;
        if *count > self.rate {
            return Err(Rejection::RateLimited);
        }
        if data.len() > MAX_GOSSIP_BYTES {
            return Err(Rejection::TooLarge);
        }
        let message = Message::decode(data, MAX_GOSSIP_BYTES).map_err(|e| match e {
            CodecError::TooLarge { .. } => Rejection::TooLarge,
            CodecError::UnsupportedVersion { .. } => Rejection::WrongVersion,
            _ => Rejection::Malformed,
        })?;
        let Message::Announce(signed) = message else {
            return Err(Rejection::NotAnnouncement);
        };
        signed
            .verify(Domain::Announcement)
            .map_err(|_| Rejection::BadSignature)?;
        let origin = peer_id_of(&signed.signer).ok_or(Rejection::BadSignature)?;
        if author.is_some_and(|author| author != origin) {
            return Err(Rejection::SignerMismatch);
        }
        let announcement = &signed.value;
        if !(announcement.reward.is_finite() && (0.0..=1.0).contains(&announcement.reward)) {
            return Err(Rejection::RewardOutOfRange);
        }
        let dim = self.embedder.dim as usize;
        if announcement.embedder.dim as usize != dim || announcement.vector.len() != dim {
            return Err(Rejection::WrongDimension);
        }
        if announcement.embedder != self.embedder {
            return Err(Rejection::OtherEmbedder);
        }
        if announcement.trace.len() > forager_protocol::wire::MAX_TRACE_STEPS {
            return Err(Rejection::Malformed);
        }
        let vector = TrajectoryVector::with_dimension(announcement.vector.clone(), dim).map_err(
            |e| match e {
                VectorError::WrongDimension { .. } => Rejection::WrongDimension,
                VectorError::NotFinite { .. } => Rejection::NotFinite,
                _ => Rejection::NotUnitNorm,
            },
        )?;
        if !self
            .seen
            .insert((*signed.signer.as_bytes(), announcement.sequence))
        {
            return Err(Rejection::Replayed);
        }
        Ok(Accepted {
            signed,
            vector,
            origin,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::identity::NodeIdentity;
    use forager_protocol::trajectory::{Cost, VECTOR_DIM};
    use forager_protocol::wire::TaskId;

    fn announcement(sequence: u64, vector: Vec<f32>, reward: f32) -> Announcement {
        Announcement {
            task: TaskId([1; 16]),
            family: "f".into(),
            embedder: crate::memory::ngram_id(),
            vector,
            trace: Vec::new(),
            reward,
            success: true,
            cost: Cost::default(),
            steps: 3,
            sequence,
        }
    }

    fn unit() -> Vec<f32> {
        let mut v = vec![0.0; VECTOR_DIM];
        v[0] = 1.0;
        v
    }

    fn frame(identity: &NodeIdentity, value: Announcement) -> Vec<u8> {
        let signed =
            Signed::new(identity.signing_key(), Domain::Announcement, value).expect("signs");
        Message::Announce(signed).encode().expect("encodes")
    }

    #[test]
    fn each_fault_is_rejected_by_name_and_counted() {
        let honest = NodeIdentity::generate();
        let other = NodeIdentity::generate();
        let me = honest.peer_id();
        let now = Instant::now();
        let mut v = Validator::default();

        let good = frame(&honest, announcement(1, unit(), 1.0));
        assert!(v.check(Some(me), me, &good, now).is_ok());
        assert_eq!(
            v.check(Some(me), me, &good, now).err(),
            Some(Rejection::Replayed)
        );

        let mut forged = frame(&honest, announcement(2, unit(), 1.0));
        let last = forged.len() - 1;
        forged[last] ^= 1;
        assert_eq!(
            v.check(Some(me), me, &forged, now).err(),
            Some(Rejection::BadSignature)
        );
        let theirs = frame(&other, announcement(3, unit(), 1.0));
        assert_eq!(
            v.check(Some(me), me, &theirs, now).err(),
            Some(Rejection::SignerMismatch)
        );
        let cases = [
            (
                announcement(4, vec![1.0; 3], 1.0),
                Rejection::WrongDimension,
            ),
            (
                {
                    let mut nan = unit();
                    nan[5] = f32::NAN;
                    announcement(5, nan, 1.0)
                },
                Rejection::NotFinite,
            ),
            (
                announcement(6, vec![1.0; VECTOR_DIM], 1.0),
                Rejection::NotUnitNorm,
            ),
            (announcement(7, unit(), 1.5), Rejection::RewardOutOfRange),
            (
                {
                    // The sentence model's 384 dimensions, offered to an n-gram node.
                    let mut other = announcement(9, vec![0.0; 384], 1.0);
                    other.vector[0] = 1.0;
                    other.embedder.dim = 384;
                    other.embedder.name = "all-MiniLM-L6-v2".into();
                    other
                },
                Rejection::WrongDimension,
            ),
            (
                {
                    let mut other = announcement(10, unit(), 1.0);
                    other.embedder.digest = forager_protocol::digest::Digest32([7; 32]);
                    other
                },
                Rejection::OtherEmbedder,
            ),
            (
                announcement(8, unit(), f32::NAN),
                Rejection::RewardOutOfRange,
            ),
        ];
        for (value, expected) in cases {
            let data = frame(&honest, value);
            assert_eq!(v.check(Some(me), me, &data, now).err(), Some(expected));
        }
        let oversized = vec![0u8; MAX_GOSSIP_BYTES + 1];
        assert_eq!(
            v.check(Some(me), me, &oversized, now).err(),
            Some(Rejection::TooLarge)
        );
        assert_eq!(
            v.check(Some(me), me, b"garbage", now).err(),
            Some(Rejection::Malformed)
        );
        let not_announcement = Message::from(forager_protocol::wire::Refusal::new(
            forager_protocol::wire::RefusalReason::NotServed,
            "x",
        ))
        .encode()
        .expect("encodes");
        assert_eq!(
            v.check(Some(me), me, &not_announcement, now).err(),
            Some(Rejection::NotAnnouncement)
        );
        assert_eq!(v.accepted(), 1);
        for name in [
            "replayed",
            "bad_signature",
            "signer_mismatch",
            "wrong_dimension",
            "other_embedder",
            "not_finite",
            "not_unit_norm",
            "too_large",
            "malformed",
            "not_announcement",
        ] {
            assert!(v.rejected().get(name).is_some_and(|&n| n >= 1), "{name}");
        }
        assert_eq!(v.rejected().get("reward_out_of_range"), Some(&2));
    }

    #[test]
    fn a_flooding_peer_is_rate_limited() {
        let identity = NodeIdentity::generate();
        let peer = identity.peer_id();
        let mut v = Validator::new(5, Duration::from_secs(60));
        let now = Instant::now();
        for sequence in 0..5 {
            let data = frame(&identity, announcement(sequence, unit(), 1.0));
            assert!(v.check(Some(peer), peer, &data, now).is_ok());
        }
        let data = frame(&identity, announcement(99, unit(), 1.0));
        assert_eq!(
            v.check(Some(peer), peer, &data, now).err(),
            Some(Rejection::RateLimited)
        );
        // A new window lets it through again.
        let later = now + Duration::from_secs(61);
        assert!(v.check(Some(peer), peer, &data, later).is_ok());
    }
}
