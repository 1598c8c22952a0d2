//! The replica of the cluster's trajectory index: every accepted announcement, in an HNSW
//! graph (hnsw_rs, dot product on unit vectors, i.e. cosine) with its metadata in a concurrent
//! map, and in an append-only log on disk.
//!
//! The log is the source of truth: each entry is one codec frame of the signed announcement,
//! length-prefixed; at start the replica is rebuilt from it, and a torn last record (a crash
//! mid-write) is cut off. Entries are numbered in insertion order; those numbers are the
//! watermarks a late-joining peer pages through (`Sync` requests). An origin's sequence number
//! is stored once, so replicas that exchange everything converge to the same entries.
//!
//! A replica belongs to one embedder (its vectors' space): announcements of another are
//! refused (`IndexError::OtherEmbedder`), and entries of another found in an old log are
//! skipped. Only successes enter the HNSW graph, since the memory recalls successes (every
//! rollout of a task shares its goal's vector, so failures would crowd them out).
//!
//! Retention: successes are the memory and are all kept; failed rollouts are kept for peers
//! that sync only up to [`Retention::failures`], the oldest dropped first (from memory at
//! once, from the log when it is compacted; `forager node --keep-failures`, default 4,096).
//! The log is rewritten with what is held (beside, synced, renamed) when its dropped part
//! passes its live part plus 4 MiB (at open, and while running), so neither memory nor disk
//! grows with the failures of every task a node ever ran; the counter
//! `forager_node_replica_dropped_total` counts what was dropped.

use crate::memory::{Recall, Recalled};
use dashmap::DashMap;
use forager_protocol::codec::{self, MAX_FRAME_BYTES};
use forager_protocol::signing::Signed;
use forager_protocol::trajectory::TrajectoryVector;
use forager_protocol::wire::{Announcement, EmbedderId, SyncPage, SyncRequest, TraceStep};
use hnsw_rs::anndists::dist::DistDot;
use hnsw_rs::hnsw::Hnsw;
use std::collections::{BTreeSet, VecDeque};
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// File name of the log in a data directory.
pub const LOG_FILE: &str = "index.log";
/// Entries per sync page (about 1.3 KB each, well under the frame limit).
pub const SYNC_PAGE: u32 = 256;

/// What a replica keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Failed rollouts held at most (the newest); successes are all kept.
    pub failures: usize,
    /// Dropped bytes the log may hold before it is compacted, beyond as many as it holds
    /// live (a small log is not rewritten for a few dropped entries).
    pub slack_bytes: u64,
}

impl Default for Retention {
    /// 4,096 failed rollouts (about 6 MB of memory with 384-d vectors); compaction once the
    /// dropped part passes the live part plus 4 MiB.
    fn default() -> Retention {
        Retention {
            failures: 4096,
            slack_bytes: 4 << 20,
        }
    }
}

/// Why the replica could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// Reading or writing the log failed.
    #[error("index log {path}: {source}")]
    Io {
        /// The log.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The announcement's vector is of another embedder than this replica's.
    #[error("the announcement was embedded with {found}, this replica holds {expected}")]
    OtherEmbedder {
        /// This replica's embedder.
        expected: Box<EmbedderId>,
        /// The announcement's.
        found: Box<EmbedderId>,
    },
}

/// What the replica keeps per entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The announcement, as signed by its origin (served to peers that sync).
    pub signed: Signed<Announcement>,
    /// Its vector.
    pub vector: TrajectoryVector,
    /// Its record's size in the log (length prefix included).
    record_bytes: u64,
}

/// The log on disk and what of it is live.
#[derive(Debug)]
struct Log {
    path: PathBuf,
    file: std::fs::File,
    /// Bytes of the file.
    bytes: u64,
    /// Bytes of records no longer held (dropped failures, other embedders' entries).
    dead_bytes: u64,
}

/// Which entries are held, in local order, and which of them are failures (oldest first).
#[derive(Debug, Default)]
struct Held {
    ids: BTreeSet<u64>,
    failures: VecDeque<u64>,
}

/// The replica. Shared (`Arc`) between the task inserting gossip and the searches querying it;
/// HNSW insertion and search both take `&self`.
pub struct Replica {
    graph: Hnsw<'static, f32, DistDot>,
    entries: DashMap<u64, Entry>,
    seen: DashMap<([u8; 32], u64), u64>,
    next: AtomicU64,
    // Plain mutexes: nothing awaits under them. Lock order: `log`, then `held`.
    held: Mutex<Held>,
    log: Option<Mutex<Log>>,
    retention: Retention,
    dropped: AtomicU64,
    embedder: EmbedderId,
}

impl std::fmt::Debug for Replica {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replica")
            .field("entries", &self.len())
            .finish()
    }
}

fn graph(capacity: usize) -> Hnsw<'static, f32, DistDot> {
    // M = 16, ef_construction = 100: the measured sweet spot on 2 cores (recall 1.0 on
    // clustered data; see the index benchmark).
    Hnsw::new(16, capacity.max(1024), 16, 100, DistDot {})
}

/// One log record: the length prefix and the frame.
fn record(signed: &Signed<Announcement>) -> Result<Vec<u8>, codec::CodecError> {
    let frame = codec::encode(signed)?;
    let mut record = Vec::with_capacity(frame.len() + 4);
    record.extend_from_slice(&(frame.len() as u32).to_be_bytes());
    record.extend_from_slice(&frame);
    Ok(record)
}

impl Replica {
    /// An in-memory replica (nothing persisted) of `embedder`'s vectors.
    pub fn in_memory(capacity: usize, embedder: EmbedderId) -> Replica {
        Replica {
            graph: graph(capacity),
            entries: DashMap::new(),
            seen: DashMap::new(),
            next: AtomicU64::new(1),
            held: Mutex::new(Held::default()),
            log: None,
            retention: Retention::default(),
            dropped: AtomicU64::new(0),
            embedder,
        }
    }

    /// The same replica, keeping what `retention` says from now on.
    pub fn with_retention(mut self, retention: Retention) -> Replica {
        self.retention = retention;
        self.enforce_retention();
        self
    }

    /// The embedder whose vectors it holds.
    pub fn embedder(&self) -> &EmbedderId {
        &self.embedder
    }

    /// Opens (or creates) the replica persisted in `dir`, rebuilding it from its log with the
    /// default [`Retention`]; see [`Replica::open_with`].
    pub fn open(dir: &Path, capacity: usize, embedder: EmbedderId) -> Result<Replica, IndexError> {
        Replica::open_with(dir, capacity, embedder, Retention::default())
    }

    /// Opens (or creates) the replica persisted in `dir`, rebuilding it from its log; entries
    /// of another embedder and failures beyond `retention` are not loaded, and the log is
    /// compacted when they are more than half of it.
    pub fn open_with(
        dir: &Path,
        capacity: usize,
        embedder: EmbedderId,
        retention: Retention,
    ) -> Result<Replica, IndexError> {
        let path = dir.join(LOG_FILE);
        let io = |source| IndexError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        let mut replica = Replica::in_memory(capacity, embedder);
        replica.retention = retention;
        let mut good = 0u64;
        {
            let mut reader = BufReader::new(&mut file);
            loop {
                let mut length = [0u8; 4];
                if reader.read_exact(&mut length).is_err() {
                    break;
                }
                let length = u32::from_be_bytes(length) as usize;
                if length > MAX_FRAME_BYTES {
                    break;
                }
                let mut frame = vec![0u8; length];
                if reader.read_exact(&mut frame).is_err() {
                    break;
                }
                let Ok(signed) = codec::decode::<Signed<Announcement>>(&frame, MAX_FRAME_BYTES)
                else {
                    break;
                };
                let record_bytes = 4 + length as u64;
                good += record_bytes;
                if signed.value.embedder != replica.embedder {
                    continue;
                }
                let Ok(vector) = TrajectoryVector::with_dimension(
                    signed.value.vector.clone(),
                    replica.embedder.dim as usize,
                ) else {
                    continue;
                };
                replica.insert_unlogged(signed, vector, record_bytes);
            }
        }
        // Cut a torn tail so that the next append starts on a record boundary.
        if file.metadata().map_err(io)?.len() > good {
            tracing::warn!(path = %path.display(), "cutting a torn record off the index log");
            file.set_len(good).map_err(io)?;
            file.seek(SeekFrom::End(0)).map_err(io)?;
        }
        let live: u64 = replica.entries.iter().map(|e| e.record_bytes).sum();
        replica.log = Some(Mutex::new(Log {
            path,
            file,
            bytes: good,
            dead_bytes: good - live,
        }));
        replica.compact_if_due()?;
        Ok(replica)
    }

    /// Failed rollouts dropped so far by the retention (this process).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The log's size on disk, if it has one.
    pub fn log_bytes(&self) -> Option<u64> {
        let log = self.log.as_ref()?;
        Some(log.lock().unwrap_or_else(|p| p.into_inner()).bytes)
    }

    /// Drops the oldest failures beyond the retention; returns the bytes their records held.
    fn enforce_retention(&self) -> u64 {
        let mut freed = 0;
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while held.failures.len() > self.retention.failures {
            let Some(id) = held.failures.pop_front() else {
                break;
            };
            held.ids.remove(&id);
            if let Some((_, entry)) = self.entries.remove(&id) {
                // Forgotten whole: a peer that sends it again adds it as new.
                self.seen
                    .remove(&(*entry.signed.signer.as_bytes(), entry.signed.value.sequence));
                freed += entry.record_bytes;
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        freed
    }

    /// Rewrites the log with the entries held, when the dropped ones are more than the live
    /// ones plus the slack: a new file beside it, synced, then renamed over it.
    fn compact_if_due(&self) -> Result<(), IndexError> {
        let Some(log) = &self.log else {
            return Ok(());
        };
        let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
        let live = log.bytes - log.dead_bytes;
        if log.dead_bytes <= live + self.retention.slack_bytes {
            return Ok(());
        }
        let path = log.path.clone();
        let io = |source| IndexError::Io {
            path: path.clone(),
            source,
        };
        let ids: Vec<u64> = {
            let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            held.ids.iter().copied().collect()
        };
        let partial = path.with_extension("log.partial");
        let mut bytes = 0u64;
        {
            let file = std::fs::File::create(&partial).map_err(io)?;
            let mut writer = std::io::BufWriter::new(file);
            for id in ids {
                let Some(entry) = self.entries.get(&id) else {
                    continue;
                };
                let record = record(&entry.signed).map_err(|e| {
                    io(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        e.to_string(),
                    ))
                })?;
                writer.write_all(&record).map_err(io)?;
                bytes += record.len() as u64;
            }
            let file = writer.into_inner().map_err(|e| io(e.into_error()))?;
            file.sync_all().map_err(io)?;
        }
        std::fs::rename(&partial, &path).map_err(io)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io)?;
        tracing::info!(path = %path.display(), before = log.bytes, after = bytes, "compacted the index log");
        log.file = file;
        log.bytes = bytes;
        log.dead_bytes = 0;
        Ok(())
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether an origin's announcement is already held.
    pub fn contains(&self, signed: &Signed<Announcement>) -> bool {
        self.seen
            .contains_key(&(*signed.signer.as_bytes(), signed.value.sequence))
    }

    /// Holds an entry; returns its number (`None`: held already) and the log bytes the
    /// retention freed.
    fn insert_unlogged(
        &self,
        signed: Signed<Announcement>,
        vector: TrajectoryVector,
        record_bytes: u64,
    ) -> (Option<u64>, u64) {
        let key = (*signed.signer.as_bytes(), signed.value.sequence);
        if self.seen.contains_key(&key) {
            return (None, 0);
        }
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.seen.insert(key, id);
        let success = signed.value.success;
        if success {
            self.graph.insert_slice((vector.as_slice(), id as usize));
        }
        self.entries.insert(
            id,
            Entry {
                signed,
                vector,
                record_bytes,
            },
        );
        {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            held.ids.insert(id);
            if !success {
                held.failures.push_back(id);
            }
        }
        (Some(id), self.enforce_retention())
    }

    /// Inserts a validated announcement (persisting it first); returns its local number, or
    /// `None` if it was already held.
    pub fn insert(
        &self,
        signed: Signed<Announcement>,
        vector: TrajectoryVector,
    ) -> Result<Option<u64>, IndexError> {
        if self.contains(&signed) {
            return Ok(None);
        }
        if signed.value.embedder != self.embedder || vector.dim() != self.embedder.dim as usize {
            return Err(IndexError::OtherEmbedder {
                expected: Box::new(self.embedder.clone()),
                found: Box::new(signed.value.embedder.clone()),
            });
        }
        let Some(log) = &self.log else {
            return Ok(self.insert_unlogged(signed, vector, 0).0);
        };
        let inserted = {
            // No await under this lock: a plain mutex serialises appends, and an entry is
            // held only once its record is in the log.
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            let record = record(&signed).map_err(|e| IndexError::Io {
                path: log.path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            })?;
            if let Err(source) = log.file.write_all(&record) {
                return Err(IndexError::Io {
                    path: log.path.clone(),
                    source,
                });
            }
            log.bytes += record.len() as u64;
            let (inserted, freed) = self.insert_unlogged(signed, vector, record.len() as u64);
            // A copy that raced in meanwhile leaves its record dead at once.
            log.dead_bytes += freed
                + if inserted.is_none() {
                    record.len() as u64
                } else {
                    0
                };
            inserted
        };
        self.compact_if_due()?;
        Ok(inserted)
    }

    /// The `k` successful entries nearest to a unit query vector: (local number, cosine
    /// similarity).
    pub fn nearest(&self, query: &[f32], k: usize, ef: usize) -> Vec<(u64, f32)> {
        if self.is_empty() || query.len() != self.embedder.dim as usize {
            return Vec::new();
        }
        self.graph
            .search(query, k, ef.max(k))
            .into_iter()
            .map(|n| (n.d_id as u64, 1.0 - n.distance))
            .collect()
    }

    /// An entry by local number.
    pub fn get(&self, id: u64) -> Option<Entry> {
        self.entries.get(&id).map(|e| e.clone())
    }

    /// A page of entries after a watermark, in local order.
    pub fn page(&self, request: &SyncRequest) -> SyncPage {
        let limit = request.limit.clamp(1, SYNC_PAGE) as usize;
        // One more than the page, to tell whether there is a next one.
        let ids: Vec<u64> = {
            let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            held.ids
                .range(request.after.saturating_add(1)..)
                .take(limit + 1)
                .copied()
                .collect()
        };
        let more = ids.len() > limit;
        let mut entries = Vec::with_capacity(limit);
        let mut last = request.after;
        for id in ids.into_iter().take(limit) {
            last = id;
            if let Some(entry) = self.entries.get(&id) {
                entries.push(entry.signed.clone());
            }
        }
        SyncPage {
            entries,
            next: more.then_some(last),
        }
    }
}

impl Recall for Replica {
    fn recall(&self, family: &str, goal: &TrajectoryVector, k: usize) -> Vec<Recalled> {
        // Other families share the graph: ask for more and keep this family's.
        self.nearest(goal.as_slice(), 4 * k, 16 * k)
            .into_iter()
            .filter_map(|(id, similarity)| {
                let entry = self.entries.get(&id)?;
                let a = &entry.signed.value;
                (a.success && a.family == family).then(|| Recalled {
                    similarity,
                    trace: std::sync::Arc::from(a.trace.as_slice()),
                })
            })
            .take(k)
            .collect()
    }
}

/// Bounds a trace to what an announcement may carry.
pub fn bounded_trace(mut trace: Vec<TraceStep>) -> Vec<TraceStep> {
    trace.truncate(forager_protocol::wire::MAX_TRACE_STEPS);
    trace
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::identity::NodeIdentity;
    use forager_protocol::signing::Domain;
    use forager_protocol::trajectory::Cost;
    use forager_protocol::trajectory::VECTOR_DIM;
    use forager_protocol::wire::TaskId;

    fn ngram() -> EmbedderId {
        crate::memory::ngram_id()
    }

    fn entry(
        identity: &NodeIdentity,
        sequence: u64,
        seed: usize,
    ) -> (Signed<Announcement>, TrajectoryVector) {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed as u64);
        let values: Vec<f32> = (0..VECTOR_DIM)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let vector = TrajectoryVector::normalise(values).expect("valid");
        let announcement = Announcement {
            task: TaskId([0; 16]),
            family: "shop".into(),
            embedder: ngram(),
            vector: vector.as_slice().to_vec(),
            trace: vec![TraceStep {
                location: 1,
                page_family: 2,
                key: seed as u64,
            }],
            reward: 1.0,
            success: true,
            cost: Cost::default(),
            steps: 2,
            sequence,
        };
        let signed =
            Signed::new(identity.signing_key(), Domain::Announcement, announcement).expect("signs");
        (signed, vector)
    }

    #[test]
    fn persists_reloads_dedups_and_cuts_a_torn_tail() {
        let dir = tempfile::tempdir().expect("dir");
        let identity = NodeIdentity::generate();
        {
            let replica = Replica::open(dir.path(), 100, ngram()).expect("opens");
            for i in 0..10 {
                let (signed, vector) = entry(&identity, i, i as usize);
                assert!(replica.insert(signed, vector).expect("inserts").is_some());
            }
            let (again, vector) = entry(&identity, 3, 3);
            assert_eq!(replica.insert(again, vector).expect("no error"), None);
            assert_eq!(replica.len(), 10);
        }
        // A crash mid-append leaves half a record.
        let path = dir.path().join(LOG_FILE);
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("log");
        file.write_all(&[0, 0, 4, 0, 1, 2]).expect("torn");
        drop(file);
        let reloaded = Replica::open(dir.path(), 100, ngram()).expect("reopens");
        assert_eq!(reloaded.len(), 10);
        let (more, vector) = entry(&identity, 10, 10);
        reloaded
            .insert(more, vector)
            .expect("appends after the cut");
        drop(reloaded);
        assert_eq!(
            Replica::open(dir.path(), 100, ngram())
                .expect("again")
                .len(),
            11
        );
    }

    fn failure(
        identity: &NodeIdentity,
        sequence: u64,
        seed: usize,
    ) -> (Signed<Announcement>, TrajectoryVector) {
        let (signed, vector) = entry(identity, sequence, seed);
        let mut announcement = signed.value;
        announcement.success = false;
        announcement.reward = 0.2;
        let signed =
            Signed::new(identity.signing_key(), Domain::Announcement, announcement).expect("signs");
        (signed, vector)
    }

    #[test]
    fn failures_beyond_the_retention_leave_memory_and_the_log() {
        let dir = tempfile::tempdir().expect("dir");
        let identity = NodeIdentity::generate();
        let retention = Retention {
            failures: 50,
            slack_bytes: 0,
        };
        let log = dir.path().join(LOG_FILE);
        {
            let replica = Replica::open_with(dir.path(), 100, ngram(), retention).expect("opens");
            // 10 successes among 400 failures, interleaved.
            for i in 0..410u64 {
                let (signed, vector) = if i % 41 == 0 {
                    entry(&identity, i, i as usize)
                } else {
                    failure(&identity, i, i as usize)
                };
                replica.insert(signed, vector).expect("inserts");
            }
            assert_eq!(replica.len(), 60, "10 successes and the newest 50 failures");
            assert_eq!(replica.dropped(), 350);
            // Compacted while running: the log holds about what is held, not 410 records.
            let bytes = std::fs::metadata(&log).expect("log").len();
            assert_eq!(replica.log_bytes(), Some(bytes));
            let one = record(&failure(&identity, 409, 409).0)
                .expect("encodes")
                .len() as u64;
            // Compaction starts when the dropped part passes the live part: at most twice the
            // live records (and one more) stay on disk, against 410 appended.
            assert!(bytes <= (2 * 60 + 1) * one, "{bytes} bytes, {one} a record");
            // The newest failure is held, the oldest is not; every success is.
            let held: Vec<u64> = {
                let mut after = 0;
                let mut sequences = Vec::new();
                loop {
                    let page = replica.page(&SyncRequest {
                        after,
                        limit: 7,
                        embedder: ngram(),
                    });
                    sequences.extend(page.entries.iter().map(|e| e.value.sequence));
                    match page.next {
                        Some(next) => after = next,
                        None => break,
                    }
                }
                sequences
            };
            assert_eq!(held.len(), 60);
            assert!(
                held.windows(2).all(|w| w[0] < w[1]),
                "local order: {held:?}"
            );
            assert!(held.contains(&409) && !held.contains(&1));
            assert!((0..410).step_by(41).all(|s| held.contains(&s)));
            // A dropped failure sent again is new to it (and the oldest goes instead).
            let (again, vector) = failure(&identity, 1, 1);
            assert!(replica.insert(again, vector).expect("inserts").is_some());
            assert_eq!(replica.len(), 60);
        }
        let reopened = Replica::open_with(dir.path(), 100, ngram(), retention).expect("reopens");
        assert_eq!(reopened.len(), 60);
        // A smaller retention at open drops more, and compacts the log at once.
        drop(reopened);
        let before = std::fs::metadata(&log).expect("log").len();
        let smaller = Retention {
            failures: 5,
            slack_bytes: 0,
        };
        let reopened = Replica::open_with(dir.path(), 100, ngram(), smaller).expect("reopens");
        assert_eq!(reopened.len(), 15);
        let after = std::fs::metadata(&log).expect("log").len();
        assert!(after * 3 < before, "{before} -> {after}");
        drop(reopened);
        assert_eq!(
            Replica::open_with(dir.path(), 100, ngram(), smaller)
                .expect("again")
                .len(),
            15
        );
    }

    #[test]
    fn nearest_and_pages() {
        let identity = NodeIdentity::generate();
        let replica = Replica::in_memory(1000, ngram());
        for i in 0..600 {
            let (signed, vector) = entry(&identity, i, i as usize);
            replica.insert(signed, vector).expect("inserts");
        }
        // The vector inserted from seed 7 (local number 8) is its own nearest neighbour.
        let (_, probe) = entry(&identity, 999, 7);
        let nearest = replica.nearest(probe.as_slice(), 3, 64);
        assert_eq!(nearest[0].0, 8, "{nearest:?}");
        assert!(nearest[0].1 > 0.999, "{nearest:?}");
        let mut after = 0;
        let mut total = 0;
        loop {
            let page = replica.page(&SyncRequest {
                after,
                limit: 1000,
                embedder: ngram(),
            });
            assert!(page.entries.len() <= SYNC_PAGE as usize);
            total += page.entries.len();
            match page.next {
                Some(next) => after = next,
                None => break,
            }
        }
        assert_eq!(total, 600);
    }

    #[test]
    fn another_embedder_is_refused_and_recall_finds_successes_of_the_family() {
        let identity = NodeIdentity::generate();
        let replica = Replica::in_memory(100, ngram());
        let (mut signed, vector) = entry(&identity, 1, 1);
        signed.value.embedder.name = "other".into();
        let error = replica
            .insert(signed, vector)
            .expect_err("another embedder");
        assert!(matches!(error, IndexError::OtherEmbedder { .. }), "{error}");
        for i in 0..5 {
            let (signed, vector) = entry(&identity, 10 + i, 3);
            replica.insert(signed, vector).expect("inserts");
        }
        let (_, goal) = entry(&identity, 99, 3);
        let recalled = replica.recall("shop", &goal, 3);
        assert_eq!(recalled.len(), 3, "{recalled:?}");
        assert!(recalled[0].similarity > 0.999);
        assert_eq!(recalled[0].trace[0].key, 3);
        assert!(replica.recall("blog", &goal, 3).is_empty());
    }
}
