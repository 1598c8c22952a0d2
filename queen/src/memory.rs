//! The workflow memory: every verified success, kept on disk as a parametrized workflow
//! ([`RememberedWorkflow`]), recalled for a new task of the same kind on the same site so the
//! queen can try it first with the new task's values; exported and imported between
//! installations as signed bundles.
//!
//! One JSON file per workflow in the memory folder (`<id>.json`, written atomically): the
//! workflow, where it came from, and how it fared (tried, worked, failures since it last
//! worked). A workflow that failed [`RETIRE_AFTER_FAILURES`] times in a row is no longer
//! recalled. The folder is bounded ([`MemoryLimits`]): past the limits the least recently
//! used records go. The queen's actor recalls and notes outcomes; the artifact writer adds a
//! pass's workflow; each touches its own files (a rename makes every write whole), so no lock
//! is needed.
//!
//! The folder is `<memory>/workflows/` ([`WORKFLOWS_DIR`]: `explore`'s memory folder, or
//! `DATA/workflows` for `forager queen`). [`WorkflowMemory::recall`] takes a record of the task's
//! site, not retired, within the task's ceiling, whose template the goal fills (or that is alike,
//! [`ALIKE_COSINE`], and binds its quoted values): the one that worked most, then the newest. A
//! pass that is a recalled workflow's own steps is not remembered again. Bundles for `forager
//! memory export|import` are signed (`Domain::Memory`); an import checks size, signature,
//! version, the embedder and every workflow's shape, and refuses the whole bundle by name on the
//! first fault.

use forager_node::memory::GoalEmbedder;
use forager_protocol::action::Action;
use forager_protocol::digest::Digest32;
use forager_protocol::recall::{RecallError, RememberedWorkflow, site_key};
use forager_protocol::risk::RiskClass;
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::task::TaskSpec;
use forager_protocol::wire::EmbedderId;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The workflows' sub-folder of a memory folder (`explore --memory`; a queen's DATA).
pub const WORKFLOWS_DIR: &str = "workflows";
/// Failures in a row after which a workflow is no longer recalled (it loses its prior).
pub const RETIRE_AFTER_FAILURES: u32 = 2;
/// How alike (cosine of the template words' vectors) a goal must be to a workflow whose
/// template words differ, for its quoted values to be bound by position (with the n-gram
/// embedder, one added word of eight is 0.86; a reworded verb 0.77).
pub const ALIKE_COSINE: f32 = 0.85;
/// How alike a goal must be to a workflow for the steps before its first value to be offered
/// as a macro action (the goal is of another kind: only the way in is shared).
pub const PREFIX_COSINE: f32 = 0.4;
/// Largest bundle read, in bytes.
pub const MAX_BUNDLE_BYTES: u64 = 32 << 20;
/// Largest record file read, in bytes.
const MAX_RECORD_BYTES: u64 = 1 << 20;
/// The bundle format's version.
pub const BUNDLE_VERSION: u32 = 1;

/// How much the memory keeps.
#[derive(Debug, Clone, Copy)]
pub struct MemoryLimits {
    /// Workflows kept in all.
    pub records: usize,
    /// Workflows kept per site.
    pub per_site: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        MemoryLimits {
            records: 2000,
            per_site: 200,
        }
    }
}

/// Where a remembered workflow came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Source {
    /// A pass of this installation, reproduced by a second node.
    Verified,
    /// A bundle signed by this key (hex) was imported.
    Imported {
        /// The exporter's public key, hex.
        signer: String,
    },
}

/// How a workflow fared here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcomes {
    /// Times it was tried as a task's first branch.
    pub tried: u32,
    /// Times it reached a success.
    pub worked: u32,
    /// Failures since it last worked.
    pub failures_in_a_row: u32,
    /// When it was last learned or tried (Unix seconds).
    pub last_used: u64,
}

/// A record of the memory folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The workflow.
    pub workflow: RememberedWorkflow,
    /// Where it came from.
    pub source: Source,
    /// How it fared.
    #[serde(default)]
    pub outcomes: Outcomes,
}

impl Record {
    /// Whether it is still recalled.
    pub fn retired(&self) -> bool {
        self.outcomes.failures_in_a_row >= RETIRE_AFTER_FAILURES
    }
}

/// How a task matched a workflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Match {
    /// The goal is the template with other values.
    Template,
    /// The goal is alike (by vector) and its quoted values bind by position.
    Alike,
    /// The goal's plan has the workflow's goal's shape (act, object, conditions' fields and
    /// operators, how the record is named) with other values or wording: the plan's values
    /// are put in, and a record described otherwise is found by its description
    /// ([`RememberedWorkflow::bind_by_plan`]).
    Shape,
    /// No workflow fits the goal; the steps remembered workflows of the site share before
    /// their first value (logging in, reaching a section) are a macro action at the start
    /// page, after which the search goes on.
    Prefix,
    /// No workflow fits the goal, but one fits its first part ("Log in as bob" of "Log in
    /// as bob and mark issue 2 as resolved"): its steps, with the part's values, are a
    /// macro action at the start page, after which the search goes on.
    Part,
}

impl Match {
    /// As documents name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Match::Template => "template",
            Match::Alike => "alike",
            Match::Shape => "shape",
            Match::Prefix => "prefix",
            Match::Part => "part",
        }
    }

    /// Whether the recalled steps are a way in for the search to go on from, not a whole
    /// workflow for the goal.
    pub fn is_way_in(self) -> bool {
        matches!(self, Match::Prefix | Match::Part)
    }
}

/// A workflow recalled for a task, bound to its values.
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// The workflow's id.
    pub id: Digest32,
    /// How the goal matched.
    pub matched: Match,
    /// The steps with the task's values.
    pub steps: Vec<(Action, RiskClass)>,
    /// How many verified successes of the site began so (a prefix's support).
    pub support: u32,
}

/// What a bundle holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// [`BUNDLE_VERSION`].
    pub version: u32,
    /// The embedder every workflow's vector comes from.
    pub embedder: EmbedderId,
    /// The workflows (verified there, or imported there), with how they fared there: the
    /// exporter's word, which orders the importer's choice among workflows of one template
    /// until its own outcomes take over.
    pub workflows: Vec<(RememberedWorkflow, Outcomes)>,
}

/// Why the memory could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoryError {
    /// The folder or a file could not be read or written.
    #[error("cannot read or write {}", .path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A bundle is larger than [`MAX_BUNDLE_BYTES`].
    #[error("the bundle is {size} bytes; at most {MAX_BUNDLE_BYTES} are read")]
    TooLarge {
        /// Its size.
        size: u64,
    },
    /// A bundle is not a signed bundle document.
    #[error("not a memory bundle: {0}")]
    Format(String),
    /// A bundle's signature does not verify: it was changed after it was signed.
    #[error("the bundle's signature does not verify (changed after signing?)")]
    Signature,
    /// Another version of the bundle format.
    #[error("bundle version {0}; this build reads version {BUNDLE_VERSION}")]
    Version(u32),
    /// A bundle's vectors come from another embedder than this installation's.
    #[error(
        "the bundle's vectors come from {found}, this installation reads goals with {ours}: \
         import it where the same embedder runs (--embedder)"
    )]
    Embedder {
        /// The bundle's.
        found: String,
        /// Ours.
        ours: String,
    },
    /// A workflow of the bundle is not valid.
    #[error("workflow {index} of the bundle: {reason}")]
    Workflow {
        /// Its position (from 1).
        index: usize,
        /// Why.
        reason: String,
    },
    /// No remembered workflow has that id (or id prefix).
    #[error("no remembered workflow is named {0}")]
    Unknown(String),
    /// A success cannot be remembered.
    #[error(transparent)]
    Recall(#[from] RecallError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MemoryError + '_ {
    move |source| MemoryError::Io {
        path: path.to_owned(),
        source,
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The memory folder. See the module documentation.
#[derive(Debug, Clone)]
pub struct WorkflowMemory {
    dir: PathBuf,
    embedder: GoalEmbedder,
    limits: MemoryLimits,
}

impl WorkflowMemory {
    /// Opens (creating) the memory folder `dir`, whose goals are read with `embedder`.
    pub fn open(
        dir: &Path,
        embedder: GoalEmbedder,
        limits: MemoryLimits,
    ) -> Result<WorkflowMemory, MemoryError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        Ok(WorkflowMemory {
            dir: dir.to_owned(),
            embedder,
            limits,
        })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, id: &Digest32) -> PathBuf {
        self.dir.join(format!("{}.json", id.to_hex()))
    }

    fn write(&self, record: &Record) -> Result<Digest32, MemoryError> {
        let id = record.workflow.id();
        let path = self.path_of(&id);
        let temporary = path.with_extension("json.partial");
        let text = serde_json::to_vec_pretty(record).map_err(std::io::Error::other);
        text.and_then(|t| std::fs::write(&temporary, t))
            .and_then(|()| std::fs::rename(&temporary, &path))
            .map_err(io(&path))?;
        Ok(id)
    }

    /// Every readable record, with its id. A file that cannot be read or parsed is skipped
    /// with a warning (one bad file costs one memory, not all of them).
    pub fn records(&self) -> Vec<(Digest32, Record)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match read_record(&path) {
                Ok(record) => out.push((record.workflow.id(), record)),
                Err(why) => {
                    tracing::warn!(path = %path.display(), %why, "skipping an unreadable memory")
                }
            }
        }
        out.sort_by_key(|a| a.0.0);
        out
    }

    /// The vector of a text's words (with the memory's embedder), if it can be embedded.
    fn vector(&self, words: &str) -> Option<Vec<f32>> {
        self.embedder
            .embed(words)
            .ok()
            .map(|v| v.as_slice().to_vec())
    }

    /// Keeps a verified success as a workflow (a workflow kept already counts one more
    /// success), then applies the limits.
    pub fn remember(
        &self,
        workflow: RememberedWorkflow,
        source: Source,
    ) -> Result<Digest32, MemoryError> {
        workflow.check()?;
        let id = workflow.id();
        let mut record = Record {
            workflow,
            source,
            outcomes: Outcomes::default(),
        };
        if let Some(known) = self.read(&id) {
            record.outcomes = known.outcomes;
            record.outcomes.worked += 1;
            record.outcomes.failures_in_a_row = 0;
            if known.source == Source::Verified {
                record.source = Source::Verified;
            }
        }
        record.outcomes.last_used = now();
        self.write(&record)?;
        self.retain();
        Ok(id)
    }

    /// Builds and keeps the workflow of a verified pass of `task`.
    pub fn remember_pass(
        &self,
        task: &TaskSpec,
        steps: &[(Action, RiskClass)],
        found_by: String,
        verified_by: String,
    ) -> Result<Digest32, MemoryError> {
        let mut workflow = RememberedWorkflow::remember(
            &task.goal,
            &task.start_url,
            steps,
            &task.inputs,
            self.embedder.id(),
            Vec::new(),
            found_by,
            verified_by,
            now(),
        )?;
        workflow.vector = self.vector(&workflow.template.words()).unwrap_or_default();
        workflow.mounted = task.capsule.is_some();
        workflow.site = site_key(task);
        self.remember(workflow, Source::Verified)
    }

    /// Drops the least recently used records past the limits (per site, then in all).
    fn retain(&self) {
        let mut records = self.records();
        records.sort_by_key(|(_, r)| std::cmp::Reverse(r.outcomes.last_used));
        let mut per_site: std::collections::HashMap<String, usize> = Default::default();
        let mut kept = 0;
        for (id, record) in records {
            let site = per_site.entry(record.workflow.site.clone()).or_default();
            *site += 1;
            kept += 1;
            if *site > self.limits.per_site || kept > self.limits.records {
                kept -= 1;
                let path = self.path_of(&id);
                if let Err(error) = std::fs::remove_file(&path) {
                    tracing::warn!(path = %path.display(), %error, "cannot drop a memory");
                }
            }
        }
    }

    /// The workflow to try first for `task`, bound to its values: a record of the task's
    /// site, not retired, whose steps stay within the task's ceiling, whose goal template the
    /// task's goal fills (or, failing that, is alike and binds by its quoted values, or has
    /// the shape of the task's plan); the one that worked most, then the newest.
    pub fn recall(&self, task: &TaskSpec) -> Option<Recalled> {
        let site = site_key(task);
        // The site's workflows that may run for this task (read from disk once).
        let usable: Vec<(Digest32, Record)> = self
            .records()
            .into_iter()
            .filter(|(_, r)| {
                r.workflow.site == site
                    && r.workflow.mounted == task.capsule.is_some()
                    && !r.retired()
            })
            .collect();
        let mut candidates: Vec<&(Digest32, Record)> = usable
            .iter()
            .filter(|(_, r)| r.workflow.risk() <= task.risk_ceiling)
            .collect();
        candidates.sort_by_key(|(_, r)| {
            std::cmp::Reverse((
                r.outcomes.worked,
                r.workflow.learned_at,
                r.outcomes.last_used,
            ))
        });
        let ours = self.embedder.id();
        let mut goal_vector: Option<Option<Vec<f32>>> = None;
        let mut alike: Option<Recalled> = None;
        for (id, record) in candidates.iter().copied() {
            let template = &record.workflow.template;
            if let Some(values) = template.bind(&task.goal)
                && let Some(steps) = record.workflow.bind(&values, &task.inputs, &task.start_url)
            {
                return Some(Recalled {
                    id: *id,
                    matched: Match::Template,
                    steps,
                    support: record.outcomes.worked + 1,
                });
            }
            if alike.is_some() || record.workflow.embedder != ours {
                continue;
            }
            let Some(values) = template.bind_quoted(&task.goal) else {
                continue;
            };
            // Another number is another value, not another wording: steps that typed 5000000
            // for "5 million" would type it again for "10 million".
            if numbers(&goal_words(&task.goal)) != numbers(&template.words()) {
                continue;
            }
            let vector = goal_vector
                .get_or_insert_with(|| self.vector(&goal_words(&task.goal)))
                .as_deref();
            if vector.is_some_and(|v| cosine(v, &record.workflow.vector) >= ALIKE_COSINE)
                && let Some(steps) = record.workflow.bind(&values, &task.inputs, &task.start_url)
            {
                alike = Some(Recalled {
                    id: *id,
                    matched: Match::Alike,
                    steps,
                    support: record.outcomes.worked + 1,
                });
            }
        }
        if alike.is_some() {
            return alike;
        }
        if let Some(shaped) = candidates.iter().find_map(|(id, record)| {
            let steps = record
                .workflow
                .bind_by_plan(&task.goal, &task.inputs, &task.start_url)?;
            Some(Recalled {
                id: *id,
                matched: Match::Shape,
                steps,
                support: record.outcomes.worked + 1,
            })
        }) {
            return Some(shaped);
        }
        // Of the two ways in, the longer; the whole workflow of a first part on a tie.
        let part = self.first_part(task, &candidates);
        let prefix = self.shared_prefix(task, &usable);
        match (part, prefix) {
            (Some(part), Some(prefix)) if prefix.steps.len() > part.steps.len() => Some(prefix),
            (part, prefix) => part.or(prefix),
        }
    }

    /// The workflow whose template the goal's first part fills
    /// ([`forager_protocol::recall::GoalTemplate::bind_first_part`]: "Log in as bob" of
    /// "Log in as bob and mark issue 2 as resolved"), bound to the part's values, of
    /// `candidates` in their order; its support is how often it worked, plus one.
    fn first_part(&self, task: &TaskSpec, candidates: &[&(Digest32, Record)]) -> Option<Recalled> {
        candidates.iter().find_map(|(id, record)| {
            let values = record.workflow.template.bind_first_part(&task.goal)?;
            let steps = record
                .workflow
                .bind(&values, &task.inputs, &task.start_url)?;
            Some(Recalled {
                id: *id,
                matched: Match::Part,
                steps,
                support: record.outcomes.worked + 1,
            })
        })
    }

    /// The way in that the site's remembered workflows share: of the workflow most alike to
    /// the task (by its template words' vector, at least [`PREFIX_COSINE`]), the steps before
    /// its first step that uses a value of its goal the task does not name the same way, as
    /// far as another workflow of the site (of another template) begins with the same steps
    /// (the same controls, whatever they typed): a frequent prefix, not one success's guess.
    /// A value the task names by the same word before it ("issue 4" where the workflow had
    /// "issue 3") is set to the task's ([`forager_protocol::recall::GoalTemplate::bind_by_context`]). Its support is
    /// the number of the site's workflows that begin so. Steps that type an input need the
    /// task to have it.
    fn shared_prefix(&self, task: &TaskSpec, usable: &[(Digest32, Record)]) -> Option<Recalled> {
        let ours = self.embedder.id();
        let goal = self.vector(&goal_words(&task.goal))?;
        let records: Vec<&(Digest32, Record)> = usable
            .iter()
            .filter(|(_, r)| r.workflow.embedder == ours)
            .collect();
        let (id, best, _) = records
            .iter()
            .map(|(id, r)| (id, r, cosine(&goal, &r.workflow.vector)))
            .filter(|(_, _, c)| *c >= PREFIX_COSINE)
            .max_by(|a, b| a.2.total_cmp(&b.2))?;
        let parameters = &best.workflow.template.parameters;
        let rebound = best.workflow.template.bind_by_context(&task.goal);
        let usable = best
            .workflow
            .steps
            .iter()
            .take_while(|s| {
                s.uses.iter().all(|&u| {
                    parameters.get(u as usize).is_some_and(|p| {
                        p.kind == forager_protocol::recall::ParameterKind::Input
                            && task.inputs.contains_key(&p.value)
                            || rebound.get(u as usize).is_some_and(Option::is_some)
                    })
                })
            })
            .take_while(|s| s.risk <= task.risk_ceiling)
            .count();
        let prefix = best.workflow.first_steps(usable, &rebound, &task.start_url);
        let ways: Vec<String> = prefix.iter().map(|(a, _)| way(a)).collect();
        let shared = |r: &Record| {
            r.workflow
                .steps
                .iter()
                .zip(&ways)
                .take_while(|(s, w)| way(&s.action) == **w)
                .count()
        };
        let length = records
            .iter()
            .filter(|(_, r)| r.workflow.template.text != best.workflow.template.text)
            .map(|(_, r)| shared(r))
            .max()
            .unwrap_or(0);
        // A whole workflow is no prefix (it did not fit the goal), nor is nothing.
        if length == 0 || length == best.workflow.steps.len() {
            return None;
        }
        let mut prefix = prefix;
        prefix.truncate(length);
        let support = records.iter().filter(|(_, r)| shared(r) >= length).count() as u32;
        Some(Recalled {
            id: *id,
            matched: Match::Prefix,
            steps: prefix,
            support,
        })
    }

    /// The record `id`, if it is kept and readable.
    fn read(&self, id: &Digest32) -> Option<Record> {
        read_record(&self.path_of(id))
            .ok()
            .filter(|r| r.workflow.id() == *id)
    }

    /// Notes how a recalled workflow fared: `worked` when its steps reached a success.
    pub fn note(&self, id: &Digest32, worked: bool) {
        let Some(mut record) = self.read(id) else {
            return;
        };
        let outcomes = &mut record.outcomes;
        outcomes.tried += 1;
        outcomes.last_used = now();
        if worked {
            outcomes.worked += 1;
            outcomes.failures_in_a_row = 0;
        } else {
            outcomes.failures_in_a_row += 1;
        }
        if let Err(error) = self.write(&record) {
            tracing::warn!(%error, "cannot note a memory's outcome");
        }
    }

    /// Forgets the records whose id starts with `prefix` (hex); how many.
    pub fn forget(&self, prefix: &str) -> Result<usize, MemoryError> {
        let prefix = prefix.to_lowercase();
        let mut forgotten = 0;
        for (id, _) in self.records() {
            if id.to_hex().starts_with(&prefix) {
                let path = self.path_of(&id);
                std::fs::remove_file(&path).map_err(io(&path))?;
                forgotten += 1;
            }
        }
        if forgotten == 0 {
            return Err(MemoryError::Unknown(prefix));
        }
        Ok(forgotten)
    }

    /// Writes every record (retired ones too: the receiver decides by its own outcomes) as a
    /// bundle signed with `key` to `out`; how many workflows.
    pub fn export(
        &self,
        key: &ed25519_dalek::SigningKey,
        out: &Path,
    ) -> Result<usize, MemoryError> {
        let bundle = Bundle {
            version: BUNDLE_VERSION,
            embedder: self.embedder.id(),
            workflows: self
                .records()
                .into_iter()
                .filter(|(_, r)| r.workflow.embedder == self.embedder.id())
                .map(|(_, r)| (r.workflow, r.outcomes))
                .collect(),
        };
        let count = bundle.workflows.len();
        let signed = Signed::new(key, Domain::Memory, bundle)
            .map_err(|e| MemoryError::Format(e.to_string()))?;
        let text = serde_json::to_vec_pretty(&signed).map_err(std::io::Error::other);
        let temporary = out.with_extension("partial");
        text.and_then(|t| std::fs::write(&temporary, t))
            .and_then(|()| std::fs::rename(&temporary, out))
            .map_err(io(out))?;
        Ok(count)
    }

    /// Reads, checks and keeps the workflows of a bundle: its size, its signature, its
    /// version, its embedder (which must be this memory's), every workflow's shape and
    /// vector. Refuses the whole bundle on the first fault. Returns the signer (hex) and how
    /// many workflows were imported.
    pub fn import(&self, file: &Path) -> Result<(String, usize), MemoryError> {
        let size = std::fs::metadata(file).map_err(io(file))?.len();
        if size > MAX_BUNDLE_BYTES {
            return Err(MemoryError::TooLarge { size });
        }
        let bytes = std::fs::read(file).map_err(io(file))?;
        let signed: Signed<Bundle> =
            serde_json::from_slice(&bytes).map_err(|e| MemoryError::Format(e.to_string()))?;
        let bundle = signed
            .verify(Domain::Memory)
            .map_err(|_| MemoryError::Signature)?;
        if bundle.version != BUNDLE_VERSION {
            return Err(MemoryError::Version(bundle.version));
        }
        let ours = self.embedder.id();
        if bundle.embedder != ours {
            return Err(MemoryError::Embedder {
                found: bundle.embedder.to_string(),
                ours: ours.to_string(),
            });
        }
        for (i, (workflow, _)) in bundle.workflows.iter().enumerate() {
            let fault = |reason: String| MemoryError::Workflow {
                index: i + 1,
                reason,
            };
            workflow.check().map_err(|e| fault(e.to_string()))?;
            if workflow.embedder != ours {
                return Err(fault(format!(
                    "its vector comes from {}",
                    workflow.embedder
                )));
            }
            if !workflow.vector.is_empty()
                && (workflow.vector.len() != ours.dim as usize
                    || workflow.vector.iter().any(|x| !x.is_finite()))
            {
                return Err(fault(format!(
                    "its vector has {} values (not {} finite ones)",
                    workflow.vector.len(),
                    ours.dim
                )));
            }
        }
        let signer = data_encoding::HEXLOWER.encode(signed.signer.as_bytes());
        for (workflow, outcomes) in bundle.workflows.clone() {
            let known = self.read(&workflow.id());
            let record = Record {
                workflow,
                source: Source::Imported {
                    signer: signer.clone(),
                },
                outcomes: Outcomes {
                    last_used: now(),
                    ..outcomes
                },
            };
            // What this installation saw of a workflow it knew stands.
            match known {
                Some(known) => self.write(&Record {
                    outcomes: known.outcomes,
                    source: known.source,
                    ..record
                })?,
                None => self.write(&record)?,
            };
        }
        self.retain();
        Ok((signer, bundle.workflows.len()))
    }
}

/// A record file, or why it cannot be used.
fn read_record(path: &Path) -> Result<Record, String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_RECORD_BYTES {
        return Err(format!("{size} bytes, at most {MAX_RECORD_BYTES}"));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let record: Record = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    record.workflow.check().map_err(|e| e.to_string())?;
    Ok(record)
}

/// A step's way: its label with what it types and chooses set aside (the same controls sent
/// the same way), so that workflows that opened issue 3 and issue 1 by one box share it.
fn way(action: &Action) -> String {
    use forager_protocol::action::FillValue;
    let mut action = action.clone();
    match &mut action {
        Action::Fill { value, .. } => *value = FillValue::Literal(String::new()),
        Action::FillForm { fields, .. } => {
            for field in fields {
                field.value = FillValue::Literal(String::new());
            }
        }
        Action::Select { option, .. } => option.clear(),
        _ => {}
    }
    action.label()
}

/// The numbers a text names (runs of digits, with their separators), in order.
fn numbers(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map(|run| run.trim_matches(|c: char| !c.is_ascii_digit()))
        .filter(|run| !run.is_empty())
        .map(str::to_owned)
        .collect()
}

/// A goal's words with its quoted values left out (as [`GoalTemplate::words`] leaves out
/// slots).
///
/// [`GoalTemplate::words`]: forager_protocol::recall::GoalTemplate::words
pub fn goal_words(goal: &str) -> String {
    let mut out = String::new();
    let mut at = 0;
    let mut spans = forager_protocol::recall::quoted_spans(goal);
    spans.sort_by_key(|r| r.start);
    for range in spans {
        if range.start < at {
            continue;
        }
        out.push_str(&goal[at..range.start]);
        out.push(' ');
        at = range.end;
    }
    out.push_str(&goal[at..]);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::action::FillValue;
    use forager_protocol::action::{FieldValue, Locator, Sends, Target};

    fn target(role: &str, name: &str) -> Target {
        Target {
            locators: vec![Locator::Role {
                role: role.into(),
                name: name.into(),
            }],
            role: role.into(),
            name: name.into(),
            sends: Sends::Unknown,
        }
    }

    fn task(goal: &str) -> TaskSpec {
        let mut task = TaskSpec::new("http://127.0.0.1:8000/admin/", goal, Vec::new());
        task.inputs.insert("password".into(), "s3cret-value".into());
        task
    }

    fn steps(name: &str) -> Vec<(Action, RiskClass)> {
        vec![
            (
                Action::FillForm {
                    fields: vec![FieldValue {
                        target: target("textbox", "Password"),
                        value: FillValue::Input("password".into()),
                        select: false,
                    }],
                    submit: Some(target("button", "Log in")),
                },
                RiskClass::AuthenticatedRead,
            ),
            (
                Action::Click {
                    target: target("link", "Add group"),
                },
                RiskClass::ReadOnly,
            ),
            (
                Action::FillForm {
                    fields: vec![FieldValue {
                        target: target("textbox", "Name"),
                        value: FillValue::Literal(name.into()),
                        select: false,
                    }],
                    submit: Some(target("button", "Save")),
                },
                RiskClass::DraftWrite,
            ),
        ]
    }

    fn memory(dir: &Path) -> WorkflowMemory {
        WorkflowMemory::open(dir, GoalEmbedder::Ngram, MemoryLimits::default()).expect("open")
    }

    /// Keeps the pass of "Add a new group named "editors"".
    fn remember_editors(memory: &WorkflowMemory) {
        memory
            .remember_pass(
                &task("Add a new group named \"editors\""),
                &steps("editors"),
                String::new(),
                String::new(),
            )
            .expect("remembered");
    }

    #[test]
    fn a_pass_is_recalled_for_the_same_task_with_other_values_and_retires_after_two_failures() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = memory(dir.path());
        let original = task("Add a new group named \"editors\"");
        let id = memory
            .remember_pass(&original, &steps("editors"), "a".into(), "b".into())
            .expect("remembered");
        let variant = task("add a new group named \"reviewers\"");
        let recalled = memory.recall(&variant).expect("recalled");
        assert_eq!(recalled.id, id);
        assert_eq!(recalled.matched, Match::Template);
        assert_eq!(recalled.steps, steps("reviewers"));
        // Another site, another task, a lower ceiling: nothing.
        let mut elsewhere = variant.clone();
        elsewhere.start_url = "http://127.0.0.1:8001/admin/".into();
        assert!(memory.recall(&elsewhere).is_none());
        assert!(
            memory
                .recall(&task("delete the group \"reviewers\""))
                .is_none()
        );
        let mut careful = variant.clone();
        careful.risk_ceiling = RiskClass::AuthenticatedRead;
        assert!(memory.recall(&careful).is_none());
        // Without the input its steps type, it cannot run.
        let mut no_input = variant.clone();
        no_input.inputs.clear();
        assert!(memory.recall(&no_input).is_none());
        memory.note(&id, false);
        assert!(memory.recall(&variant).is_some(), "one failure keeps it");
        memory.note(&id, false);
        assert!(memory.recall(&variant).is_none(), "two in a row retire it");
        // The input's value is never on disk.
        for entry in std::fs::read_dir(dir.path()).expect("read") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("text");
            assert!(!text.contains("s3cret-value"));
        }
    }

    #[test]
    fn an_alike_goal_binds_its_quoted_values_by_position() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = memory(dir.path());
        remember_editors(&memory);
        let recalled = memory
            .recall(&task("Please add a new group named \"reviewers\" now"))
            .expect("alike");
        assert_eq!(recalled.matched, Match::Alike);
        assert_eq!(recalled.steps, steps("reviewers"));
        assert!(
            memory
                .recall(&task("Rename the site to \"reviewers\""))
                .is_none()
        );
    }

    #[test]
    fn a_goal_of_the_same_plan_in_other_words_is_recalled_by_its_shape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = memory(dir.path());
        let handed = |record: &str, who: &str| {
            vec![
                (
                    Action::Click {
                        target: target("link", record),
                    },
                    RiskClass::ReadOnly,
                ),
                (
                    Action::Select {
                        target: target("combobox", "Assigned to"),
                        option: who.into(),
                    },
                    RiskClass::DraftWrite,
                ),
            ]
        };
        let id = memory
            .remember_pass(
                &task("hand the duplex printing crash over to carol"),
                &handed("Duplex printing crashes the driver", "carol"),
                String::new(),
                String::new(),
            )
            .expect("remembered");
        let recalled = memory
            .recall(&task("assign the dark mode request to bob"))
            .expect("the same plan's shape");
        assert_eq!((recalled.id, recalled.matched), (id, Match::Shape));
        assert_eq!(
            recalled.steps[0].0.label(),
            "click the link about \"dark mode request\""
        );
        assert_eq!(recalled.steps[1], handed("", "bob")[1]);
        assert!(!Match::Shape.is_way_in(), "a whole workflow");
    }

    #[test]
    fn an_alike_goal_with_another_number_is_another_value_not_another_wording() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = memory(dir.path());
        // The issue was opened by its title, so its number is no slot of the template.
        let comment = |text: &str| {
            vec![
                (
                    Action::Click {
                        target: target("link", "Login page crashes on empty password"),
                    },
                    RiskClass::ReadOnly,
                ),
                (
                    Action::FillForm {
                        fields: vec![FieldValue {
                            target: target("textbox", "@note"),
                            value: FillValue::Literal(text.into()),
                            select: false,
                        }],
                        submit: Some(target("button", "Submit Changes")),
                    },
                    RiskClass::DraftWrite,
                ),
            ]
        };
        memory
            .remember_pass(
                &task("add a comment to issue 1 saying \"works here\""),
                &comment("works here"),
                String::new(),
                String::new(),
            )
            .expect("remembered");
        let reworded = memory
            .recall(&task(
                "please add a comment to issue 1 saying \"fails here\"",
            ))
            .expect("the same need reworded");
        assert_eq!(reworded.matched, Match::Alike);
        assert_eq!(reworded.steps, comment("fails here"));
        assert_eq!(
            memory.recall(&task(
                "please add a comment to issue 3 saying \"fails here\""
            )),
            None,
            "its first step would open issue 1 again"
        );
        assert_eq!(
            numbers("issue 4, 1,200 rows at 2.5 s."),
            ["4", "1,200", "2.5"]
        );
    }

    #[test]
    fn the_way_in_two_workflows_share_is_offered_to_a_task_of_a_third_kind() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = memory(dir.path());
        let first = task("log in and add a new group named \"editors\"");
        memory
            .remember_pass(&first, &steps("editors"), String::new(), String::new())
            .expect("remembered");
        // One workflow alone: its steps are no frequent prefix.
        let third = task("log in and add a new user named \"bob\" please");
        assert!(memory.recall(&third).is_none());
        let mut other = steps("x");
        other[1].0 = Action::Click {
            target: target("link", "Users"),
        };
        other.truncate(2);
        other.push((
            Action::Click {
                target: target("link", "Add user"),
            },
            RiskClass::ReadOnly,
        ));
        memory
            .remember_pass(
                &task("log in and open the list of users"),
                &other,
                String::new(),
                String::new(),
            )
            .expect("remembered");
        let recalled = memory.recall(&third).expect("a shared prefix");
        assert_eq!(recalled.matched, Match::Prefix);
        assert_eq!(
            recalled.steps,
            steps("x")[..1].to_vec(),
            "the login they share"
        );
        assert_eq!(recalled.support, 2);
    }

    #[test]
    fn a_task_the_goal_begins_with_is_its_way_in_unless_a_longer_one_is_shared() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = memory(dir.path());
        let login = vec![(
            Action::FillForm {
                fields: vec![
                    FieldValue {
                        target: target("textbox", "Username"),
                        value: FillValue::Input("username".into()),
                        select: false,
                    },
                    FieldValue {
                        target: target("textbox", "Password"),
                        value: FillValue::Input("password".into()),
                        select: false,
                    },
                ],
                submit: Some(target("button", "Log in")),
            },
            RiskClass::AuthenticatedRead,
        )];
        let mut alice = task("Log in as alice");
        alice.inputs.insert("username".into(), "alice".into());
        memory
            .remember_pass(&alice, &login, String::new(), String::new())
            .expect("remembered");
        // One workflow, of another kind: no shared prefix, but the goal begins with it.
        let mut mine = task("Log in as bob and show me the issues assigned to me");
        mine.inputs.insert("username".into(), "bob".into());
        let recalled = memory.recall(&mine).expect("the login as a way in");
        assert_eq!(recalled.matched, Match::Part);
        assert_eq!(recalled.steps, login);
        assert_eq!(recalled.support, 1);
        // Without the input its step types, the part is no way in.
        let mut no_username = mine.clone();
        no_username.inputs.remove("username");
        assert_eq!(memory.recall(&no_username), None);
        // A goal that begins otherwise has none.
        let mut later = task("Show me the issues assigned to me and log in as bob");
        later.inputs.insert("username".into(), "bob".into());
        assert_eq!(memory.recall(&later), None);
        // Two workflows that share more than the login: their longer way in is taken.
        let mut list = login.clone();
        list.push((
            Action::Click {
                target: target("link", "Your Issues"),
            },
            RiskClass::ReadOnly,
        ));
        for (goal, last) in [
            ("Log in as alice and show my issues \"late\"", "late"),
            ("Log in as alice and list my issues by \"title\"", "title"),
        ] {
            let mut steps = list.clone();
            steps.push((
                Action::Click {
                    target: target("link", last),
                },
                RiskClass::ReadOnly,
            ));
            let mut task = task(goal);
            task.inputs.insert("username".into(), "alice".into());
            memory
                .remember_pass(&task, &steps, String::new(), String::new())
                .expect("remembered");
        }
        let recalled = memory.recall(&mine).expect("a way in");
        assert_eq!(recalled.matched, Match::Prefix);
        assert_eq!(recalled.steps, list);
    }

    #[test]
    fn a_shared_way_in_carries_on_through_a_record_the_task_names_the_same_way() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = memory(dir.path());
        let open = |number: &str| {
            (
                Action::FillForm {
                    fields: vec![FieldValue {
                        target: target("textbox", "@number"),
                        value: FillValue::Literal(number.into()),
                        select: false,
                    }],
                    submit: Some(target("button", "Show issue:")),
                },
                RiskClass::ReadOnly,
            )
        };
        let send = |name: &str, value: &str| {
            (
                Action::FillForm {
                    fields: vec![FieldValue {
                        target: target("textbox", name),
                        value: FillValue::Literal(value.into()),
                        select: false,
                    }],
                    submit: Some(target("button", "Submit Changes")),
                },
                RiskClass::ExternalSubmission,
            )
        };
        let login = steps("x")[0].clone();
        for (goal, number, last) in [
            (
                "log in and add a comment to issue 1 saying \"works here\"",
                "1",
                send("@note", "works here"),
            ),
            (
                "log in and raise the priority of issue 3 to urgent",
                "3",
                send("priority", "urgent"),
            ),
        ] {
            memory
                .remember_pass(
                    &task(goal),
                    &[login.clone(), open(number), last],
                    String::new(),
                    String::new(),
                )
                .expect("remembered");
        }
        let mut deferred = task("log in and set the status of issue 4 to deferred");
        deferred.risk_ceiling = RiskClass::ExternalSubmission;
        let recalled = memory.recall(&deferred).expect("a shared prefix");
        assert_eq!(recalled.matched, Match::Prefix);
        // The login, then issue 4 opened as the others opened theirs; not their last steps.
        assert_eq!(recalled.steps, vec![login.clone(), open("4")]);
        assert_eq!(recalled.support, 2);
        // A task that names no issue shares the login only.
        let mut list = task("log in and set the status of every issue to deferred");
        list.risk_ceiling = RiskClass::ExternalSubmission;
        let recalled = memory.recall(&list).expect("a shared prefix");
        assert_eq!(recalled.steps, vec![login]);
    }

    #[test]
    fn bundles_travel_signed_and_a_tampered_or_foreign_one_is_refused() {
        let first = tempfile::tempdir().expect("tempdir");
        let second = tempfile::tempdir().expect("tempdir");
        let exporter = memory(first.path());
        remember_editors(&exporter);
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let bundle = first.path().join("team.memory");
        assert_eq!(exporter.export(&key, &bundle).expect("export"), 1);
        let text = std::fs::read_to_string(&bundle).expect("bundle");
        assert!(
            !text.contains("s3cret-value"),
            "an input's value in a bundle"
        );
        let importer = memory(second.path());
        let (signer, count) = importer.import(&bundle).expect("import");
        assert_eq!(count, 1);
        assert_eq!(
            signer,
            data_encoding::HEXLOWER.encode(key.verifying_key().as_bytes())
        );
        assert!(
            importer
                .recall(&task("Add a new group named \"reviewers\""))
                .is_some()
        );
        // Changed after signing.
        let tampered = first.path().join("tampered.memory");
        std::fs::write(&tampered, text.replace("Add group", "Delete group")).expect("write");
        assert!(matches!(
            importer.import(&tampered),
            Err(MemoryError::Signature)
        ));
        // Read with another embedder.
        let foreign = WorkflowMemory {
            embedder: GoalEmbedder::Ngram,
            ..importer.clone()
        };
        let mut signed: Signed<Bundle> = serde_json::from_str(&text).expect("json");
        signed.value.embedder.dim = 3;
        let resigned = Signed::new(&key, Domain::Memory, signed.value).expect("sign");
        let other = first.path().join("other.memory");
        std::fs::write(&other, serde_json::to_vec(&resigned).expect("json")).expect("write");
        assert!(matches!(
            foreign.import(&other),
            Err(MemoryError::Embedder { .. })
        ));
        // Not a bundle at all.
        std::fs::write(&other, b"{}").expect("write");
        assert!(matches!(
            foreign.import(&other),
            Err(MemoryError::Format(_))
        ));
    }

    #[test]
    fn the_memory_keeps_within_its_limits_dropping_the_least_recently_used() {
        let dir = tempfile::tempdir().expect("tempdir");
        let memory = WorkflowMemory::open(
            dir.path(),
            GoalEmbedder::Ngram,
            MemoryLimits {
                records: 3,
                per_site: 2,
            },
        )
        .expect("open");
        for (i, site) in [8000, 8000, 8000, 8001, 8002].iter().enumerate() {
            let mut t = task(&format!("open report {i}"));
            t.start_url = format!("http://127.0.0.1:{site}/");
            let steps = vec![(
                Action::Click {
                    target: target("link", &format!("Report {i}")),
                },
                RiskClass::ReadOnly,
            )];
            memory
                .remember_pass(&t, &steps, String::new(), String::new())
                .expect("remembered");
        }
        let records = memory.records();
        assert_eq!(records.len(), 3);
        let per_site = records
            .iter()
            .filter(|(_, r)| r.workflow.site == "http://127.0.0.1:8000/")
            .count();
        assert!(per_site <= 2);
        assert_eq!(
            goal_words("Add \"x\" to 'y' please"),
            "Add \" \" to ' ' please"
        );
    }
}
