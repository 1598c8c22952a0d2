//! `report.html`: what a run did, in one self-contained page (styles inline, the search tree an
//! inline SVG, screenshots as `data:` URIs; nothing is fetched from anywhere).
//!
//! It is drawn from the run's own files: the journal (`events.jsonl`), the result and the step
//! screenshots; a replay's report from its workflow and result. Sections: the outcome; the
//! search tree (branches coloured by value, pruned nodes marked with their reason, the winning
//! path highlighted, each node's subtree outlined in the colour of the peer that searched it);
//! the winning path, one row per step (screenshot, narration, verdict, heal, cost); where the
//! time and the budget went (phases, peers, branches, prune reasons, problems).
//!
//! This module reads and writes the files; `view.rs` gathers the journal and the result into
//! plain data, `tree.rs` lays out and draws the search tree's SVG, and `html.rs` holds the
//! maud templates (with the stylesheet, `style.css`). Every text that a page or a peer wrote (labels
//! quote accessible names, titles, URLs) is spliced into the templates and so escaped by maud:
//! a hostile page cannot inject markup into the report. [`escape`] is the workspace's one
//! escaping function for HTML written by hand.

mod html;
mod tree;
mod view;

use crate::artifacts::screenshot_name;
use crate::journal::RESULT_FILE;
use crate::journal::{Entry, JOURNAL_FILE, read_entries};
use forager_protocol::result::{ResultStep, RunResult};
use forager_protocol::workflow::Workflow;
use std::fmt::Write as _;
use std::path::Path;

/// The report's file name in a run directory.
pub const REPORT_FILE: &str = "report.html";

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file of the run directory could not be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

fn io(path: &Path, error: impl std::fmt::Display) -> ReportError {
    ReportError::Io {
        path: path.display().to_string(),
        reason: error.to_string(),
    }
}

/// Writes `report.html` into a finished task's directory (journal and result written).
pub fn write_run_report(dir: &Path) -> Result<(), ReportError> {
    let journal = dir.join(JOURNAL_FILE);
    let entries = read_entries(&journal).map_err(|e| io(&journal, e))?;
    let result_path = dir.join(RESULT_FILE);
    let result: RunResult = std::fs::read(&result_path)
        .map_err(|e| io(&result_path, e))
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| io(&result_path, e)))?;
    let screenshots: Vec<Option<Vec<u8>>> = (1..=result.steps.len())
        .map(|i| std::fs::read(dir.join(screenshot_name(i))).ok())
        .collect();
    write_atomically(dir, &render_run(&entries, &result, &screenshots))
}

/// Writes `html` as the directory's `report.html` (a temporary file renamed into place).
pub fn write_atomically(dir: &Path, html: &str) -> Result<(), ReportError> {
    let path = dir.join(REPORT_FILE);
    let temporary = dir.join(format!("{REPORT_FILE}.partial"));
    std::fs::write(&temporary, html).map_err(|e| io(&temporary, e))?;
    std::fs::rename(&temporary, &path).map_err(|e| io(&path, e))
}

/// HTML-escapes text for element content and attribute values, double- or single-quoted:
/// `&`, `<`, `>` and `"` by maud's escaper (the one the report's templates use), and `'`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('\'').enumerate() {
        if i > 0 {
            // maud leaves `'` alone (its attributes are always double-quoted); hand-written
            // HTML may quote with it.
            out.push_str("&#39;");
        }
        // Writing into a `String` cannot fail.
        let _ = maud::Escaper::new(&mut out).write_str(part);
    }
    out
}

/// One sentence on what a step did and where it led, as HTML (page text escaped).
pub fn narrate(step: &ResultStep) -> String {
    html::narration(step).into_string()
}

/// The report of a search run (explore, demo, a queen's task).
pub fn render_run(
    entries: &[Entry],
    result: &RunResult,
    screenshots: &[Option<Vec<u8>>],
) -> String {
    let view = view::RunView::build(entries, result);
    let mut page = html::run_page(&view, result, screenshots).into_string();
    page.push('\n');
    page
}

/// The report of a workflow replay.
pub fn render_replay(
    workflow: &Workflow,
    result: &RunResult,
    screenshots: &[Option<Vec<u8>>],
    failure_screenshot: Option<&[u8]>,
    failed_step: Option<u32>,
) -> String {
    let mut page = html::replay_page(
        workflow,
        result,
        screenshots,
        failure_screenshot,
        failed_step,
    )
    .into_string();
    page.push('\n');
    page
}

#[cfg(test)]
mod tests {
    use super::view::{NodeState, RunView, clip, short_peer};
    use super::*;
    use crate::journal::{JournalEvent, JournalTree, JournalTreeNode};
    use forager_protocol::predicate::SuccessPredicate;
    use forager_protocol::result::{ApprovalNeeded, Metrics, RESULT_VERSION, RunError, Status};
    use forager_protocol::verdict::{Verdict, VerdictOutcome, VerdictTier};
    use forager_protocol::wire::{TreeStatus, WireCandidate};
    use forager_protocol::workflow::WORKFLOW_VERSION;
    use forager_protocol::{
        Action, FailureReason, Fingerprint, Locator, PruneReason, RiskClass, Target, TaskSpec,
    };

    fn click(name: &str) -> Action {
        Action::Click {
            target: Target {
                locators: vec![Locator::Css(format!("#{name}"))],
                role: "link".into(),
                name: name.into(),
                sends: Default::default(),
            },
        }
    }

    fn candidate(action: Action, prior: f64, risk: RiskClass) -> WireCandidate {
        WireCandidate {
            action,
            prior,
            risk,
            key: 0,
            target: None,
        }
    }

    fn tree_node(
        id: u32,
        parent: Option<u32>,
        action: Action,
        status: &str,
        visits: u32,
    ) -> JournalTreeNode {
        JournalTreeNode {
            id,
            parent,
            label: parent.map(|_| action.label()),
            status: status.into(),
            visits,
            value: 0.5,
            risk: 1,
            cost_ms: 10,
            replay: 0.0,
            detail: None,
        }
    }

    fn report(node: &str, nodes: Vec<JournalTreeNode>) -> JournalEvent {
        JournalEvent::Report {
            node: node.into(),
            branch: 0,
            visits: 2,
            value_sum: 1.0,
            best_value: 1.0,
            actions: 3,
            exhausted: false,
            prefix_fingerprints: Vec::new(),
            error: None,
            locations: Vec::new(),
            states: Vec::new(),
            replayed: 1,
            cost_ms: 300,
            tree: Some(JournalTree {
                instance: 7,
                nodes,
                omitted: 0,
            }),
        }
    }

    fn step(index: u32, action: Action) -> ResultStep {
        ResultStep {
            index,
            label: action.label(),
            action,
            url: "http://127.0.0.1:1/x".into(),
            title: "<script>alert(1)</script>".into(),
            fingerprint: Fingerprint([index as u8; 16]),
            risk: RiskClass::ReadOnly,
            reward: 0.0,
            cost_ms: 5,
            verdict: None,
            healed_locator: None,
            healed_by: None,
            verification: Default::default(),
            why: None,
        }
    }

    fn entry(at_ms: u64, event: JournalEvent) -> Entry {
        Entry { at_ms, event }
    }

    fn result(goal: &str, start_url: &str, steps: Vec<ResultStep>) -> RunResult {
        RunResult {
            version: RESULT_VERSION,
            status: Status::Pass,
            task_id: "00".into(),
            goal: goal.into(),
            start_url: start_url.into(),
            seed: 0,
            steps,
            error: None,
            approval_required: Vec::new(),
            metrics: Metrics::default(),
            network: Default::default(),
            judged_by: Default::default(),
            answer: None,
        }
    }

    #[test]
    fn the_tree_merges_reports_marks_approvals_and_follows_one_winning_path() {
        let task = TaskSpec::new(
            "http://127.0.0.1:1/",
            "goal",
            vec![SuccessPredicate::TextPresent("x".into())],
        );
        let entries = vec![
            entry(
                0,
                JournalEvent::Submitted {
                    task: Box::new(task),
                },
            ),
            entry(
                100,
                JournalEvent::Branches {
                    node: "peer-a".into(),
                    root: Fingerprint([0; 16]),
                    candidates: vec![
                        candidate(click("low"), 0.2, RiskClass::ReadOnly),
                        candidate(click("high"), 0.9, RiskClass::ReadOnly),
                        candidate(click("pay"), 0.5, RiskClass::Financial),
                    ],
                },
            ),
            entry(
                110,
                JournalEvent::Assigned {
                    node: "peer-a".into(),
                    branch: 0,
                    action: click("high").label(),
                    actions: 20,
                },
            ),
            // The first report has the child; the second updates it and adds a grandchild.
            entry(
                900,
                report(
                    "peer-a",
                    vec![
                        tree_node(0, None, click(""), "open", 1),
                        tree_node(1, Some(0), click("x"), "open", 1),
                    ],
                ),
            ),
            entry(
                1900,
                report(
                    "peer-a",
                    vec![
                        tree_node(1, Some(0), click("x"), "open", 3),
                        tree_node(2, Some(1), click("y"), "success", 1),
                    ],
                ),
            ),
            entry(
                2000,
                JournalEvent::Verified {
                    finder: "peer-a".into(),
                    verifier: "peer-b".into(),
                    actions: Vec::new(),
                    steps: Vec::new(),
                    after_check: None,
                },
            ),
        ];
        let result = result(
            "goal",
            "http://127.0.0.1:1/",
            vec![
                step(1, click("high")),
                step(2, click("x")),
                step(3, click("y")),
            ],
        );
        let view = RunView::build(&entries, &result);
        // The branches in prior order, the approval apart, the tree merged under branch 0.
        let labels: Vec<&str> = view.vertices.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels[1], click("high").label());
        assert_eq!(labels[2], click("low").label());
        assert_eq!(
            view.vertices[3].state,
            NodeState::Pruned("approval_required".into())
        );
        assert_eq!(view.vertices[1].state, NodeState::Open, "reported on");
        assert_eq!(view.vertices[2].state, NodeState::Unexplored);
        assert_eq!(view.vertices.len(), 6, "{labels:?}");
        let x = view
            .vertices
            .iter()
            .find(|v| v.label == click("x").label())
            .expect("x");
        assert_eq!(x.visits, 3, "the later report's numbers");
        let winners = view.vertices.iter().filter(|v| v.winner).count();
        assert_eq!(winners, 4, "start, branch, x, y");
        let peer = &view.per_peer["peer-a"];
        assert_eq!((peer.actions, peer.replayed, peer.browser_ms), (6, 2, 600));
        let html = render_run(&entries, &result, &[None, None, None]);
        assert!(html.starts_with("<!DOCTYPE html><html lang=\"en\">"));
        assert!(html.ends_with("</main></body></html>\n"));
        assert!(html.contains("data-status=\"approval_required\""));
        assert_eq!(html.matches("<tr class=\"step-row\"").count(), 3);
        assert_eq!(html.matches("<g class=\"tree-node winner\"").count(), 4);
        assert!(html.contains("<p id=\"pruned\"><code>approval_required</code> 1</p>"));
        assert!(!html.contains("<script>"), "page text is escaped");
    }

    #[test]
    fn node_states_are_the_protocols_names() {
        let reasons = [
            PruneReason::NoProgress,
            PruneReason::Loop,
            PruneReason::Transposition,
            PruneReason::ApprovalRequired {
                class: RiskClass::Financial,
            },
            PruneReason::ActionFailed {
                reason: "gone".into(),
            },
            PruneReason::Nondeterministic,
            PruneReason::DepthLimit,
            PruneReason::ReplayUnsafe,
            PruneReason::DeadEnd,
        ];
        let statuses = [TreeStatus::Open, TreeStatus::Success, TreeStatus::Exhausted]
            .into_iter()
            .chain(reasons.into_iter().map(TreeStatus::Pruned));
        for status in statuses {
            let state = NodeState::from_journal(status.kind());
            assert_eq!(state.name(), status.kind());
            assert_eq!(
                state.is_pruned(),
                matches!(status, TreeStatus::Pruned(_)),
                "{status:?}"
            );
        }
        assert_eq!(NodeState::from_journal("open"), NodeState::Open);
        assert_eq!(NodeState::from_journal("success"), NodeState::Success);
        assert_eq!(NodeState::from_journal("exhausted"), NodeState::Exhausted);
        assert_eq!(NodeState::from_journal("loop").prune_reason(), Some("loop"));
        assert_eq!(NodeState::Root.name(), "root");
        assert_eq!(NodeState::Unexplored.name(), "unexplored");
        assert!(!NodeState::Root.is_pruned() && !NodeState::Unexplored.is_pruned());
    }

    #[test]
    fn page_text_cannot_inject_markup() {
        assert_eq!(
            escape("<img src=x onerror=\"alert('x')\">&"),
            "&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;"
        );
        assert_eq!(escape("'"), "&#39;");
        assert_eq!(escape("plain · “text”"), "plain · “text”");
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(short_peer("12D3KooWabcdefghij"), "cdefghij");
    }

    /// Text a hostile page (or peer) wrote, and how the report must show it: maud writes `&`,
    /// `<`, `>` and `"` as entities and leaves `'`, which cannot end a double-quoted attribute.
    const HOSTILE: &str = "<script>\"'";
    const SHOWN: &str = "&lt;script&gt;&quot;'";

    #[test]
    fn page_text_is_escaped_wherever_the_report_shows_it() {
        let press = || Action::Press {
            key: HOSTILE.into(),
        };
        let peer = format!("12D3Koo{HOSTILE}");
        let peer_shown = format!("12D3Koo{SHOWN}");
        let entries = vec![
            entry(
                0,
                JournalEvent::Submitted {
                    task: Box::new(TaskSpec::new(HOSTILE, HOSTILE, Vec::new())),
                },
            ),
            entry(
                100,
                JournalEvent::Branches {
                    node: peer.clone(),
                    root: Fingerprint([0; 16]),
                    candidates: vec![
                        candidate(press(), 0.9, RiskClass::ReadOnly),
                        candidate(click(HOSTILE), 0.5, RiskClass::Financial),
                    ],
                },
            ),
            entry(
                110,
                JournalEvent::Assigned {
                    node: peer.clone(),
                    branch: 0,
                    action: press().label(),
                    actions: 20,
                },
            ),
            entry(900, {
                let mut deep = tree_node(1, Some(0), press(), "no_progress", 1);
                deep.detail = Some(HOSTILE.into());
                report(&peer, vec![tree_node(0, None, press(), "open", 1), deep])
            }),
            entry(
                950,
                JournalEvent::Problem {
                    what: HOSTILE.into(),
                },
            ),
            entry(
                2000,
                JournalEvent::Verified {
                    finder: peer.clone(),
                    verifier: peer.clone(),
                    actions: Vec::new(),
                    steps: Vec::new(),
                    after_check: None,
                },
            ),
        ];
        let mut first = step(1, press());
        first.title = HOSTILE.into();
        first.url = HOSTILE.into();
        first.verdict = Some(Verdict {
            outcome: VerdictOutcome::Rejected,
            tier: VerdictTier::PrePass,
            reasons: vec![HOSTILE.into()],
        });
        first.healed_by = Some(HOSTILE.into());
        first.healed_locator = Some(1);
        first.why = Some(forager_protocol::result::StepWhy {
            rank: 2,
            candidates: 7,
            prior: 0.25,
            signals: vec![forager_protocol::result::SignalLift {
                signal: HOSTILE.into(),
                lift: -0.5,
            }],
        });
        let mut result = result(HOSTILE, HOSTILE, vec![first]);
        result.task_id = HOSTILE.into();
        result.error = Some(RunError {
            reason: FailureReason::Timeout,
            detail: HOSTILE.into(),
        });
        result.approval_required = vec![ApprovalNeeded {
            prefix: vec![HOSTILE.into()],
            label: HOSTILE.into(),
            risk: RiskClass::Financial,
            actions: Vec::new(),
        }];
        result.network.refused_writes = 1;
        result.network.refused_write_requests = vec![format!("POST {HOSTILE}")];
        let html = render_run(&entries, &result, &[None]);
        let places = [
            // A write the network gate refused, shown (its URL is the page's, escaped).
            "<h2>Writes refused at the network</h2>".to_owned(),
            format!("<li><code>POST {SHOWN}</code></li>"),
            // The title and the header: goal, start URL, task id; the failure's sentence.
            format!("<title>forager: {SHOWN}</title>"),
            format!("<div class=\"goal\">{SHOWN}</div>"),
            format!("start {SHOWN} · task {SHOWN} · seed 0"),
            format!("<p>{SHOWN}</p>"),
            // Who found and reproduced it; what awaits approval.
            format!("Found by <code>{peer_shown}</code>"),
            format!("<li><code>{SHOWN}</code> (risk class 5) after {SHOWN}</li>"),
            // The step: narration (key, title, URL), label, verdict, heal.
            format!("Pressed {SHOWN}, and reached “{SHOWN}” at <code>{SHOWN}</code>."),
            format!("<code>press {SHOWN}</code>"),
            format!("<div class=\"small muted\">{SHOWN}</div>"),
            format!("of its chain, <code>{SHOWN}</code>"),
            // Why it was taken: a signal's name a peer wrote, escaped (and clipped).
            "why: the policy's choice 2 of 7 (prior 0.25): <code>".to_owned(),
            "</code> -0.50".to_owned(),
            "Not the policy's first choice at every step".to_owned(),
            // The tree: a branch's label, a node's tooltip with its detail.
            format!(">press {SHOWN}</text>"),
            format!("<title>press {SHOWN} — no progress, 1 visits, value 0.50 ({SHOWN})"),
            // The time section: the peers, the branches, the problems.
            format!("<code title=\"{peer_shown}\">"),
            format!("<td>press {SHOWN}</td>"),
            format!("<li>{SHOWN}</li>"),
        ];
        for place in &places {
            assert!(html.contains(place.as_str()), "{place} not in the report");
        }
        assert!(!html.contains("<script"), "no page text as markup");
        assert!(!html.contains("='"), "no attribute a quote could end");

        let workflow = Workflow {
            version: WORKFLOW_VERSION,
            task_id: HOSTILE.into(),
            goal: HOSTILE.into(),
            start_url: HOSTILE.into(),
            allowed_origins: Vec::new(),
            seed: 0,
            parameters: Vec::new(),
            success: Vec::new(),
            steps: Vec::new(),
            risk_ceiling: RiskClass::DEFAULT_CEILING,
            consents: Vec::new(),
        };
        let html = render_replay(&workflow, &result, &[None], Some(&[0xff, 0xd8]), Some(1));
        for place in [
            format!("<title>forager replay: {SHOWN}</title>"),
            format!("task <code>{SHOWN}</code>; no search"),
            format!("Pressed {SHOWN}, and reached “{SHOWN}” at <code>{SHOWN}</code>."),
            "<h2>Where it stopped (step 1)</h2>".to_owned(),
        ] {
            assert!(
                html.contains(place.as_str()),
                "{place} not in the replay's report"
            );
        }
        assert!(!html.contains("<script"), "no page text as markup");
    }

    #[test]
    fn narration_says_what_a_form_typed_without_its_values() {
        let target = |name: &str| Target {
            locators: vec![Locator::Css("#f".into())],
            role: "textbox".into(),
            name: name.into(),
            sends: Default::default(),
        };
        let mut form = step(
            1,
            Action::FillForm {
                fields: vec![
                    forager_protocol::action::FieldValue {
                        target: target("Postcode"),
                        value: forager_protocol::FillValue::Input("postcode".into()),
                        select: false,
                    },
                    forager_protocol::action::FieldValue {
                        target: target("Plan"),
                        value: forager_protocol::FillValue::Literal("Gold".into()),
                        select: true,
                    },
                ],
                submit: None,
            },
        );
        form.title = String::new();
        assert_eq!(
            narrate(&form),
            "Filled the form: typed the input <code>postcode</code> into “Postcode”, chose \
             “Gold” in “Plan”, then pressed Enter, and reached at <code>/x</code>."
        );
    }
}
