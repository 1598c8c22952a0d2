//! A task's journal: every decision the queen makes, one JSON object a line, appended and
//! flushed as it happens (`<data>/tasks/<task id>/events.jsonl`). It is the task's event log
//! for users (assignments, reassignments, reports, successes, verifications) and what a
//! restarted queen resumes from. A torn last line (a crash mid-write) is ignored.
//!
//! Input values are never in the journal: they go to `inputs.json` beside it (mode 0600), which a
//! resuming queen reads. The result is written atomically beside it ([`RESULT_FILE`]); [`TaskDir`]
//! is the task's folder as a handle the artifact job writes through off the actor. The events are
//! documented for users in `docs/events.md`.

use forager_protocol::artifact::Attestation;
use forager_protocol::result::RunResult;
use forager_protocol::wire::{FoundPath, KnownLocation, KnownState, WireCandidate};
use forager_protocol::{Fingerprint, TaskSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// File name of a journal in its task directory.
pub const JOURNAL_FILE: &str = "events.jsonl";

/// The result document's file name in a run directory (written beside the journal).
pub const RESULT_FILE: &str = "result.json";

/// One entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum JournalEvent {
    /// The task, as accepted.
    Submitted {
        /// The task.
        task: Box<TaskSpec>,
    },
    /// A remembered workflow, bound to the task's values, is its first branch (journaled
    /// before `Branches`, so a resumed queen numbers the branches as before).
    Recalled {
        /// The workflow's id (hex).
        workflow: String,
        /// How the goal matched it.
        matched: crate::memory::Match,
        /// Its steps with the task's values, and their risk classes.
        steps: Vec<(forager_protocol::Action, forager_protocol::risk::RiskClass)>,
        /// How many verified successes of the site began with these steps.
        #[serde(default)]
        support: u32,
    },
    /// A node was granted a write of the task (`Message::ClaimWrite`): it is granted once,
    /// across restarts too.
    WriteClaimed {
        /// The node.
        node: String,
        /// The write's key.
        key: u64,
    },
    /// The start state's actions, one branch each.
    Branches {
        /// The node that opened the start page.
        node: String,
        /// The start state's fingerprint.
        root: Fingerprint,
        /// The actions.
        candidates: Vec<WireCandidate>,
    },
    /// A branch given to a node.
    Assigned {
        /// The node.
        node: String,
        /// The branch.
        branch: u64,
        /// Its first action.
        action: String,
        /// Actions granted.
        actions: u32,
    },
    /// A node's report on a branch.
    Report {
        /// The node.
        node: String,
        /// The branch.
        branch: u64,
        /// Search iterations below the branch root.
        visits: u32,
        /// Sum of the values those iterations backed up to the branch root (absent in version 1
        /// journals).
        #[serde(default)]
        value_sum: f64,
        /// The best value reached below the branch root.
        best_value: f64,
        /// Actions spent.
        actions: u32,
        /// Whether the branch is exhausted.
        exhausted: bool,
        /// Fingerprints of the branch prefix.
        prefix_fingerprints: Vec<Fingerprint>,
        /// What went wrong, if anything.
        error: Option<String>,
        /// Locations first reached, with their depth from the start URL (absent in version 1).
        #[serde(default)]
        locations: Vec<KnownLocation>,
        /// States the branch owns, with their depth from the start URL (absent before
        /// version 4).
        #[serde(default)]
        states: Vec<KnownState>,
        /// Actions replayed to restore states (absent before version 3).
        #[serde(default)]
        replayed: u64,
        /// Browser milliseconds the assignment cost (absent before version 3).
        #[serde(default)]
        cost_ms: u64,
        /// The branch's search tree: the nodes new or changed since this node's last report on
        /// it (absent before version 3).
        #[serde(default)]
        tree: Option<JournalTree>,
    },
    /// A success took a detour off the start page: its shorter path is tried as one more
    /// branch (`crate::shortcut`), numbered after the others.
    Shortcut {
        /// The shorter path's steps and their risk classes.
        steps: Vec<(forager_protocol::Action, forager_protocol::risk::RiskClass)>,
    },
    /// A node's assignment was lost (dead node, missed deadline) and its branch went back to
    /// the pool.
    Reassigned {
        /// The node.
        node: String,
        /// The branch.
        branch: u64,
        /// Why.
        reason: String,
    },
    /// A node reported a success.
    Success {
        /// The node.
        finder: String,
        /// Labels of its actions.
        actions: Vec<String>,
        /// The path.
        path: FoundPath,
        /// The finder's signed report holding the path (what the trajectory's `found_by` is).
        #[serde(default)]
        claim: Option<Attestation>,
    },
    /// A second node was asked to reproduce a success.
    Verifying {
        /// The verifying node.
        node: String,
        /// The node that found it.
        finder: String,
        /// Labels of its actions.
        actions: Vec<String>,
    },
    /// The success was reproduced.
    Verified {
        /// Who found it.
        finder: String,
        /// Who reproduced it.
        verifier: String,
        /// Labels of its actions.
        actions: Vec<String>,
        /// How each step is known: `reproduced` (executed again) or `attested` (a write, or
        /// after one, on a site that must not see it twice: the finder's signed evidence).
        #[serde(default)]
        steps: Vec<forager_protocol::result::StepVerification>,
        /// Whether the task's read-only after-check held, when one was loaded.
        #[serde(default)]
        after_check: Option<bool>,
    },
    /// The success was not reproduced.
    NotReproduced {
        /// Who reported it.
        finder: String,
        /// Who tried to reproduce it.
        verifier: String,
        /// Labels of its actions.
        actions: Vec<String>,
        /// What went wrong.
        reason: String,
        /// Whether the path is rejected for good (false: another replay will be tried); version 1
        /// journals rejected at the first failure.
        #[serde(default = "rejected_by_default")]
        rejected: bool,
    },
    /// Something went wrong that the queen worked around.
    Problem {
        /// What.
        what: String,
    },
    /// A restarted queen picked the task up again.
    Resumed {
        /// Actions spent before the restart.
        actions: u32,
    },
    /// The result.
    Finished {
        /// The result document.
        result: Box<RunResult>,
    },
}

/// Part of a branch's search tree, as the journal keeps it for the report: node labels and
/// numbers, no locators.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalTree {
    /// Which tree (see `TreeSnapshot::instance`): node ids are its own.
    pub instance: u64,
    /// Nodes new or changed since the last report on this tree.
    pub nodes: Vec<JournalTreeNode>,
    /// Nodes the reporting node left out of its snapshot (its tree was larger than a report
    /// carries).
    pub omitted: u32,
}

/// A node of a search tree in the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalTreeNode {
    /// Its id in its tree (the branch root is 0).
    pub id: u32,
    /// Its parent's id.
    pub parent: Option<u32>,
    /// The action's label (none at the branch root).
    pub label: Option<String>,
    /// `open`, `success`, `exhausted`, or the reason it was pruned (`no_progress`, `loop`,
    /// `transposition`, `approval_required`, `action_failed`, `nondeterministic`,
    /// `depth_limit`, `replay_unsafe`).
    pub status: String,
    /// Search iterations through it.
    pub visits: u32,
    /// Their mean value.
    pub value: f64,
    /// The action's risk class (1–7).
    pub risk: u8,
    /// What the action cost, in browser milliseconds.
    pub cost_ms: u64,
    /// The memory's vote for the action (the replay bonus R), when it voted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replay: f64,
    /// For an action that failed, what the environment said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

#[derive(Serialize, Deserialize)]
struct Line {
    /// Unix milliseconds.
    at_ms: u64,
    #[serde(flatten)]
    event: JournalEvent,
}

/// An entry as read back, with its time.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Unix milliseconds.
    pub at_ms: u64,
    /// The entry.
    pub event: JournalEvent,
}

/// Every entry of a journal file; a torn last line ends it.
pub fn read_entries(path: &Path) -> std::io::Result<Vec<Entry>> {
    let file = std::fs::File::open(path)?;
    let mut entries = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let Ok(parsed) = serde_json::from_str::<Line>(&line) else {
            break;
        };
        entries.push(Entry {
            at_ms: parsed.at_ms,
            event: parsed.event,
        });
    }
    Ok(entries)
}

/// An open journal.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    file: Option<std::fs::File>,
}

/// A journal found on disk for an unfinished task.
#[derive(Debug)]
pub struct Recovered {
    /// The task.
    pub task: TaskSpec,
    /// The journal, open for appending.
    pub journal: Journal,
    /// Its entries after `Submitted`.
    pub events: Vec<JournalEvent>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Journal {
    /// Creates a task's directory and journal, starting with the task itself, its input
    /// values redacted: they go to `inputs.json` beside it (owner-only), which a resuming queen
    /// reads and no artifact copies. A task with a session capsule cannot be resumed (its
    /// session is never written), so its inputs (often the login's credentials) are not kept.
    pub fn create(dir: &Path, task: &TaskSpec) -> std::io::Result<Journal> {
        std::fs::create_dir_all(dir)?;
        if !task.inputs.is_empty() && task.capsule.is_none() {
            write_private(
                &dir.join(INPUTS_FILE),
                &serde_json::to_vec(&task.inputs).map_err(std::io::Error::other)?,
            )?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(JOURNAL_FILE))?;
        let mut journal = Journal {
            dir: dir.to_path_buf(),
            file: Some(file),
        };
        journal.append(&JournalEvent::Submitted {
            task: Box::new(task.redacted()),
        });
        Ok(journal)
    }

    /// The task's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends an entry and flushes it. A journal that cannot be written is reported once and
    /// then skipped: the task goes on. `Finished` closes the journal: nothing is appended after
    /// it (the trajectory's digest of the journal must stay true).
    pub fn append(&mut self, event: &JournalEvent) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let line = Line {
            at_ms: now_ms(),
            event: event.clone(),
        };
        let written = serde_json::to_string(&line)
            .map_err(std::io::Error::other)
            .and_then(|text| writeln!(file, "{text}"))
            .and_then(|()| file.flush());
        if let Err(error) = written {
            tracing::error!(%error, dir = %self.dir.display(), "cannot write the journal");
            self.file = None;
        }
        if matches!(event, JournalEvent::Finished { .. }) {
            self.file = None;
        }
    }

    /// The task's directory as a handle that writes files into it, for work done elsewhere
    /// (the artifacts are written off the queen's actor).
    pub fn task_dir(&self) -> TaskDir {
        TaskDir {
            dir: self.dir.clone(),
        }
    }

    /// Writes a file into the task's directory atomically (a temporary file, then a rename).
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.task_dir().write_file(name, bytes)
    }

    /// Writes `result.json` next to the journal (atomically).
    pub fn write_result(&self, result: &RunResult) {
        self.task_dir().write_result(result)
    }

    /// Unfinished tasks under `tasks_dir`, with their journals reopened.
    pub fn recover_all(tasks_dir: &Path) -> Vec<Recovered> {
        let Ok(entries) = std::fs::read_dir(tasks_dir) else {
            return Vec::new();
        };
        let mut recovered = Vec::new();
        for entry in entries.flatten() {
            let dir = entry.path();
            let Ok(file) = std::fs::File::open(dir.join(JOURNAL_FILE)) else {
                continue;
            };
            let mut task = None;
            let mut events = Vec::new();
            let mut finished = false;
            for line in std::io::BufReader::new(file).lines() {
                let Ok(line) = line else { break };
                // A torn last line does not parse: everything before it stands.
                let Ok(parsed) = serde_json::from_str::<Line>(&line) else {
                    break;
                };
                match parsed.event {
                    JournalEvent::Submitted { task: t } => task = Some(*t),
                    JournalEvent::Finished { .. } => finished = true,
                    other => events.push(other),
                }
            }
            let (Some(mut task), false) = (task, finished) else {
                continue;
            };
            // A capsule's session is never written to disk, so its task cannot go on logged
            // in: it must be submitted again (with the capsule).
            if task.capsule.is_some() {
                tracing::error!(dir = %dir.display(), "the task mounted a session capsule, which is never written to disk; it cannot be resumed: submit it again");
                continue;
            }
            // Version 1 journals hold inputs in clear: such a task is whole already.
            let redacted = !task.inputs.is_empty() && task.redacted() == task;
            if redacted {
                let inputs = std::fs::read(dir.join(INPUTS_FILE))
                    .ok()
                    .and_then(|b| serde_json::from_slice::<BTreeMap<String, String>>(&b).ok());
                match inputs {
                    Some(inputs) if task.inputs.keys().eq(inputs.keys()) => task.inputs = inputs,
                    _ => {
                        tracing::error!(dir = %dir.display(), "{INPUTS_FILE} is missing or does not match the task; the task cannot be resumed");
                        continue;
                    }
                }
            }
            let Ok(file) = std::fs::OpenOptions::new()
                .append(true)
                .open(dir.join(JOURNAL_FILE))
            else {
                continue;
            };
            recovered.push(Recovered {
                task,
                journal: Journal {
                    dir,
                    file: Some(file),
                },
                events,
            });
        }
        recovered
    }
}

/// A task's input values, beside its journal (never copied into a run directory).
pub const INPUTS_FILE: &str = "inputs.json";

/// Writes a file only its owner can read.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}

fn rejected_by_default() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use forager_protocol::predicate::SuccessPredicate;

    #[test]
    fn unfinished_journals_are_recovered_and_torn_lines_ignored() {
        let root = tempfile::tempdir().expect("dir");
        let task = TaskSpec::new(
            "http://127.0.0.1:1/",
            "goal",
            vec![SuccessPredicate::TextPresent("x".into())],
        );
        let dir = root.path().join("a");
        let mut journal = Journal::create(&dir, &task).expect("creates");
        journal.append(&JournalEvent::Resumed { actions: 3 });
        drop(journal);
        std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(JOURNAL_FILE))
            .and_then(|mut f| f.write_all(b"{\"at_ms\":1,\"event\":\"rep"))
            .expect("torn line");
        let recovered = Journal::recover_all(root.path());
        assert_eq!(recovered.len(), 1);
        assert_eq!(recovered[0].task, task);
        assert_eq!(
            recovered[0].events,
            vec![JournalEvent::Resumed { actions: 3 }]
        );
    }

    #[test]
    fn input_values_stay_out_of_the_journal_and_come_back_on_resume() {
        let root = tempfile::tempdir().expect("dir");
        let mut task = TaskSpec::new(
            "http://127.0.0.1:1/",
            "goal",
            vec![SuccessPredicate::TextPresent("x".into())],
        );
        task.inputs.insert("card".into(), "secret-12345678".into());
        let dir = root.path().join("b");
        let mut journal = Journal::create(&dir, &task).expect("creates");
        let result = RunResult {
            version: forager_protocol::result::RESULT_VERSION,
            status: forager_protocol::result::Status::Failing,
            task_id: String::new(),
            goal: task.goal.clone(),
            start_url: task.start_url.clone(),
            seed: 0,
            steps: Vec::new(),
            error: None,
            approval_required: Vec::new(),
            metrics: Default::default(),
            network: Default::default(),
            judged_by: Default::default(),
            answer: None,
        };
        journal.append(&JournalEvent::Finished {
            result: Box::new(result),
        });
        // Closed by `finished`: nothing more is appended.
        journal.append(&JournalEvent::Resumed { actions: 1 });
        let text = std::fs::read_to_string(dir.join(JOURNAL_FILE)).expect("journal");
        assert!(!text.contains("secret-12345678"), "{text}");
        assert_eq!(text.lines().count(), 2, "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(INPUTS_FILE))
                .expect("inputs file")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }

        // An unfinished one resumes with its values; without its inputs file, it does not.
        let dir = root.path().join("c");
        drop(Journal::create(&dir, &task).expect("creates"));
        let recovered = Journal::recover_all(root.path());
        assert_eq!(recovered.len(), 1);
        assert_eq!(recovered[0].task, task);
        drop(recovered);
        std::fs::remove_file(dir.join(INPUTS_FILE)).expect("remove");
        assert!(Journal::recover_all(root.path()).is_empty());
    }
}

/// A task's directory: where its journal, result and artifacts are written.
#[derive(Debug, Clone)]
pub struct TaskDir {
    dir: PathBuf,
}

impl TaskDir {
    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `bytes` as `name` in the task's directory, atomically (a temporary file renamed).
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.dir.join(name);
        let temporary = self.dir.join(format!("{name}.partial"));
        std::fs::write(&temporary, bytes)?;
        std::fs::rename(&temporary, &path)
    }

    /// Writes `result.json` next to the journal (atomically).
    pub fn write_result(&self, result: &RunResult) {
        let path = self.dir.join(RESULT_FILE);
        let temporary = self.dir.join("result.json.partial");
        let written = serde_json::to_string_pretty(result)
            .map_err(std::io::Error::other)
            .and_then(|text| std::fs::write(&temporary, text))
            .and_then(|()| std::fs::rename(&temporary, &path));
        if let Err(error) = written {
            tracing::error!(%error, path = %path.display(), "cannot write the result");
        }
    }
}
