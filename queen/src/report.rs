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
//! Every text that a page or a peer wrote (labels quote accessible names, titles, URLs) is
//! escaped: a hostile page cannot inject markup into the report.

use crate::artifacts::{RESULT_FILE, screenshot_name};
use crate::journal::{Entry, JOURNAL_FILE, JournalEvent, read_entries};
use forager_protocol::result::{ResultStep, RunResult, Status};
use forager_protocol::verdict::VerdictOutcome;
use forager_protocol::wire::branch_candidates;
use forager_protocol::workflow::Workflow;
use forager_protocol::{Action, FillValue, TaskSpec};
use std::collections::{BTreeMap, HashMap};
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

/// HTML-escapes text for element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// A peer id shortened for display (its last 8 characters).
fn short_peer(peer: &str) -> String {
    let n = peer.chars().count();
    peer.chars().skip(n.saturating_sub(8)).collect()
}

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:20px}
header .goal{opacity:.85}
main{padding:8px 28px 40px;max-width:1400px}
section{background:#fff;border:1px solid #e1e4ea;border-radius:8px;margin:18px 0;padding:14px 18px}
h2{font-size:16px;margin:0 0 10px}
.badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;font-size:13px}
.pass{background:#d7f5df;color:#11642c}.failing{background:#fde2e0;color:#9b1c13}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #e1e4ea;border-radius:6px;padding:8px 12px;min-width:120px}
.card b{display:block;font-size:18px}
.card span{color:#5b6475;font-size:12px}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{font-size:12px;color:#5b6475;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
img.shot{width:280px;border:1px solid #d5d9e0;border-radius:4px}
.muted{color:#5b6475}.small{font-size:12px}
code{background:#f0f2f5;padding:0 3px;border-radius:3px;font-size:12px;word-break:break-all}
.bar{background:#e9ecf1;border-radius:3px;height:8px;position:relative;min-width:80px}
.bar i{position:absolute;left:0;top:0;bottom:0;background:#4c78a8;border-radius:3px}
.phases{display:flex;height:22px;border-radius:4px;overflow:hidden;margin:6px 0}
.phases div{color:#fff;font-size:11px;padding:3px 6px;white-space:nowrap;overflow:hidden}
.tree{overflow:auto;border:1px solid #eef0f3;border-radius:6px;max-height:640px}
.legend span{display:inline-block;margin-right:14px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:4px;vertical-align:middle}
.verdict-advanced{color:#11642c}.verdict-rejected{color:#9b1c13}.verdict-inconclusive{color:#7a5b00}
.healed{color:#7a3e9d;font-weight:600}
.fail{border-left:4px solid #d93025;padding-left:10px}
"#;

const PEER_COLOURS: &[&str] = &[
    "#1f77b4", "#9467bd", "#e377c2", "#17becf", "#8c564b", "#bcbd22", "#ff7f0e", "#7f7f7f",
];

/// A colour for a value in [0, 1]: red (0) through amber to green (1).
fn value_colour(value: f64) -> String {
    let v = if value.is_finite() {
        value.clamp(0.0, 1.0)
    } else {
        0.0
    };
    format!("hsl({:.0},70%,42%)", v * 120.0)
}

fn page_head(title: &str) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width,initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        escape(title)
    )
}

fn outcome_header(out: &mut String, kind: &str, result: &RunResult) {
    let (class, status) = match result.status {
        Status::Pass => ("pass", "pass"),
        Status::Failing => ("failing", "failing"),
    };
    let _ = write!(
        out,
        "<header><h1>forager {kind} <span class=\"badge {class}\" id=status>{status}</span></h1>\
         <div class=goal>{}</div><div class=\"small muted\">start {} · task {} · seed {}</div></header><main>",
        escape(&result.goal),
        escape(&result.start_url),
        escape(&result.task_id),
        result.seed
    );
    if let Some(error) = &result.error {
        let _ = write!(
            out,
            "<section class=fail id=error><h2>Why it is failing: <code>{}</code></h2><p>{}</p></section>",
            escape(error.reason.as_str()),
            escape(&error.detail)
        );
    }
}

fn card(out: &mut String, value: &str, label: &str) {
    let _ = write!(
        out,
        "<div class=card><b>{}</b><span>{}</span></div>",
        escape(value),
        escape(label)
    );
}

fn seconds(ms: u64) -> String {
    if ms >= 10_000 {
        format!("{:.0} s", ms as f64 / 1000.0)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

fn bar(fraction: f64) -> String {
    let pct = if fraction.is_finite() {
        (fraction * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    };
    format!("<div class=bar><i style=\"width:{pct:.1}%\"></i></div>")
}

/// What a fill types, said without its value.
fn typed(value: &FillValue) -> String {
    match value {
        FillValue::Literal(text) => format!("“{}”", escape(text)),
        FillValue::Input(name) => format!("the input <code>{}</code>", escape(name)),
    }
}

fn path_of(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| {
            let mut p = u.path().to_owned();
            if let Some(q) = u.query() {
                p.push('?');
                p.push_str(q);
            }
            p
        })
        .unwrap_or_else(|_| url.to_owned())
}

/// One sentence on what a step did and where it led.
pub fn narrate(step: &ResultStep) -> String {
    let what = match &step.action {
        Action::Click { target } => format!(
            "Clicked the {} “{}”",
            escape(&target.role),
            escape(&clip(&target.name, 80))
        ),
        Action::Fill {
            target,
            value,
            enter,
        } => format!(
            "Typed {} into “{}”{}",
            typed(value),
            escape(&clip(&target.name, 80)),
            if *enter { " and pressed Enter" } else { "" }
        ),
        Action::FillForm { fields, submit } => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| {
                    if f.select {
                        format!(
                            "chose {} in “{}”",
                            typed(&f.value),
                            escape(&clip(&f.target.name, 60))
                        )
                    } else {
                        format!(
                            "typed {} into “{}”",
                            typed(&f.value),
                            escape(&clip(&f.target.name, 60))
                        )
                    }
                })
                .collect();
            let send = match submit {
                Some(target) => format!("clicked “{}”", escape(&clip(&target.name, 60))),
                None => "pressed Enter".to_owned(),
            };
            let mut sentence = format!("Filled the form: {}, then {send}", fields.join(", "));
            if let Some(first) = sentence.get_mut(0..1) {
                first.make_ascii_uppercase();
            }
            sentence
        }
        Action::Select { target, option } => format!(
            "Chose “{}” in “{}”",
            escape(option),
            escape(&clip(&target.name, 80))
        ),
        Action::Press { key } => format!("Pressed {}", escape(key)),
        Action::Navigate { url } => format!("Went to {}", escape(url)),
        Action::Back => "Went back".to_owned(),
        Action::Done => "Declared the task done".to_owned(),
    };
    let title = if step.title.is_empty() {
        String::new()
    } else {
        format!(" “{}”", escape(&clip(&step.title, 80)))
    };
    format!(
        "{what}, and reached{title} at <code>{}</code>.",
        escape(&clip(&path_of(&step.url), 120))
    )
}

fn step_rows(out: &mut String, steps: &[ResultStep], screenshots: &[Option<Vec<u8>>]) {
    let total: u64 = steps.iter().map(|s| s.cost_ms).sum::<u64>().max(1);
    out.push_str(
        "<table id=steps><tr><th>#</th><th>page after the step</th><th>what happened</th>\
         <th>verdict</th><th>risk</th><th>cost</th></tr>",
    );
    for (i, step) in steps.iter().enumerate() {
        let shot = match screenshots.get(i).and_then(Option::as_ref) {
            Some(bytes) => format!(
                "<img class=shot alt=\"step {} screenshot\" src=\"data:image/jpeg;base64,{}\">",
                step.index,
                data_encoding::BASE64.encode(bytes)
            ),
            None => "<span class=muted>no screenshot</span>".to_owned(),
        };
        let verdict = match &step.verdict {
            Some(v) => {
                let outcome = match v.outcome {
                    VerdictOutcome::Advanced => "advanced",
                    VerdictOutcome::Rejected => "rejected",
                    VerdictOutcome::Inconclusive => "inconclusive",
                };
                format!(
                    "<span class=verdict-{outcome}>{outcome}</span><div class=\"small muted\">{}</div>",
                    escape(&v.reasons.join("; "))
                )
            }
            None => "<span class=muted>not submit-shaped</span>".to_owned(),
        };
        let heal = match (&step.healed_by, step.healed_locator) {
            (Some(locator), Some(index)) => format!(
                "<div class=\"healed small\">healed: the target was found by locator {} of its chain, <code>{}</code></div>",
                index + 1,
                escape(locator)
            ),
            _ => String::new(),
        };
        let _ = write!(
            out,
            "<tr class=step-row data-step={idx}><td>{idx}</td><td>{shot}</td><td>{narration}\
             <div class=\"small muted\"><code>{label}</code></div>{heal}</td><td>{verdict}</td>\
             <td class=num>{risk}</td><td class=num>{cost} ms{bar}</td></tr>",
            idx = step.index,
            narration = narrate(step),
            label = escape(&clip(&step.label, 200)),
            risk = step.risk.level(),
            cost = step.cost_ms,
            bar = bar(step.cost_ms as f64 / total as f64),
        );
    }
    out.push_str("</table>");
}

// ---------------------------------------------------------------------------------------------
// The search tree.

#[derive(Debug, Clone)]
struct Vertex {
    label: String,
    status: String,
    detail: Option<String>,
    value: f64,
    visits: u32,
    /// Index into the run's peers, for the outline colour.
    peer: Option<usize>,
    children: Vec<usize>,
    winner: bool,
    depth: u32,
}

impl Vertex {
    fn new(label: String, status: &str, depth: u32) -> Vertex {
        Vertex {
            label,
            status: status.to_owned(),
            detail: None,
            value: 0.0,
            visits: 0,
            peer: None,
            children: Vec::new(),
            winner: false,
            depth,
        }
    }
}

/// A merged tree of one peer on one branch (the journal holds deltas).
#[derive(Debug, Default)]
struct MergedTree {
    nodes: BTreeMap<u32, crate::journal::JournalTreeNode>,
    omitted: u32,
}

/// What the journal says about the run, gathered for drawing.
#[derive(Debug, Default)]
struct RunView {
    task: Option<TaskSpec>,
    peers: Vec<String>,
    vertices: Vec<Vertex>,
    /// Per branch: label, reports' visits and value sum, actions, exhausted, peers.
    branches: Vec<BranchView>,
    approvals: usize,
    omitted: u32,
    expander: Option<String>,
    finder: Option<String>,
    verifier: Option<String>,
    per_peer: BTreeMap<String, PeerView>,
    problems: Vec<String>,
    phases: Vec<(String, u64)>,
}

#[derive(Debug, Default, Clone)]
struct BranchView {
    label: String,
    visits: u32,
    value_sum: f64,
    actions: u32,
    exhausted: bool,
    peers: Vec<String>,
    vertex: usize,
    nodes: usize,
}

#[derive(Debug, Default, Clone)]
struct PeerView {
    assignments: u32,
    actions: u32,
    replayed: u64,
    browser_ms: u64,
    roles: Vec<&'static str>,
}

impl RunView {
    fn peer(&mut self, peer: &str) -> usize {
        match self.peers.iter().position(|p| p == peer) {
            Some(i) => i,
            None => {
                self.peers.push(peer.to_owned());
                self.peers.len() - 1
            }
        }
    }

    fn role(&mut self, peer: &str, role: &'static str) {
        let view = self.per_peer.entry(peer.to_owned()).or_default();
        if !view.roles.contains(&role) {
            view.roles.push(role);
        }
    }

    fn build(entries: &[Entry], result: &RunResult) -> RunView {
        let mut view = RunView::default();
        let mut trees: BTreeMap<(u64, usize, u64), MergedTree> = BTreeMap::new();
        let mut marks: Vec<(&'static str, u64)> = Vec::new();
        view.vertices.push(Vertex::new(
            format!("start page {}", result.start_url),
            "root",
            0,
        ));
        for entry in entries {
            match &entry.event {
                JournalEvent::Submitted { task } => {
                    view.task = Some((**task).clone());
                    marks.push(("submitted", entry.at_ms));
                }
                JournalEvent::Branches {
                    node, candidates, ..
                } => {
                    marks.push(("start page opened", entry.at_ms));
                    view.expander = Some(node.clone());
                    view.peer(node);
                    view.role(node, "opened the start page");
                    let ceiling = view
                        .task
                        .as_ref()
                        .map_or(forager_protocol::RiskClass::DEFAULT_CEILING, |t| {
                            t.risk_ceiling
                        });
                    let (branches, approvals) = branch_candidates(candidates.clone(), ceiling);
                    view.approvals = approvals.len();
                    for candidate in branches {
                        let vertex = view.vertices.len();
                        let mut v = Vertex::new(candidate.action.label(), "unexplored", 1);
                        v.detail = Some(format!("prior {:.2}", candidate.prior));
                        view.vertices.push(v);
                        view.vertices[0].children.push(vertex);
                        view.branches.push(BranchView {
                            label: candidate.action.label(),
                            vertex,
                            ..BranchView::default()
                        });
                    }
                    for candidate in approvals {
                        let vertex = view.vertices.len();
                        let mut v = Vertex::new(candidate.action.label(), "approval_required", 1);
                        v.detail = Some(format!(
                            "risk class {} is above the ceiling: never executed",
                            candidate.risk.level()
                        ));
                        view.vertices.push(v);
                        view.vertices[0].children.push(vertex);
                    }
                }
                JournalEvent::Assigned { node, branch, .. } => {
                    view.peer(node);
                    view.role(node, "searched branches");
                    let peer = view.per_peer.entry(node.clone()).or_default();
                    peer.assignments += 1;
                    if let Some(b) = view.branches.get_mut(*branch as usize)
                        && !b.peers.contains(node)
                    {
                        b.peers.push(node.clone());
                    }
                }
                JournalEvent::Report {
                    node,
                    branch,
                    visits,
                    value_sum,
                    actions,
                    exhausted,
                    replayed,
                    cost_ms,
                    tree,
                    error,
                    ..
                } => {
                    let index = view.peer(node);
                    let peer = view.per_peer.entry(node.clone()).or_default();
                    peer.actions += actions;
                    peer.replayed += replayed;
                    peer.browser_ms += cost_ms;
                    if let Some(b) = view.branches.get_mut(*branch as usize) {
                        b.visits += visits;
                        b.value_sum += value_sum.clamp(0.0, f64::from(*visits));
                        b.actions += actions;
                        b.exhausted |= exhausted;
                    }
                    if let Some(error) = error {
                        view.problems
                            .push(format!("branch {branch} on …{}: {error}", short_peer(node)));
                    }
                    if let Some(tree) = tree {
                        let merged = trees.entry((*branch, index, tree.instance)).or_default();
                        merged.omitted = tree.omitted;
                        for n in &tree.nodes {
                            merged.nodes.insert(n.id, n.clone());
                        }
                    }
                }
                JournalEvent::Reassigned {
                    node,
                    branch,
                    reason,
                } => view.problems.push(format!(
                    "branch {branch} taken from …{}: {reason}",
                    short_peer(node)
                )),
                JournalEvent::Success { finder, .. } => {
                    if !marks.iter().any(|(m, _)| *m == "first success") {
                        marks.push(("first success", entry.at_ms));
                    }
                    view.peer(finder);
                    view.role(finder, "found a success");
                }
                JournalEvent::Verified {
                    finder, verifier, ..
                } => {
                    marks.push(("reproduced", entry.at_ms));
                    view.finder = Some(finder.clone());
                    view.verifier = Some(verifier.clone());
                    view.peer(verifier);
                    view.role(finder, "found the winner");
                    view.role(verifier, "reproduced the winner");
                }
                JournalEvent::NotReproduced {
                    finder,
                    verifier,
                    reason,
                    ..
                } => view.problems.push(format!(
                    "a success of …{} was not reproduced by …{}: {reason}",
                    short_peer(finder),
                    short_peer(verifier)
                )),
                JournalEvent::Problem { what } => view.problems.push(what.clone()),
                JournalEvent::Finished { .. } => marks.push(("finished", entry.at_ms)),
                JournalEvent::Verifying { .. } | JournalEvent::Resumed { .. } => {}
            }
        }
        for b in &mut view.branches {
            if b.visits > 0 {
                let v = &mut view.vertices[b.vertex];
                v.visits = b.visits;
                v.value = b.value_sum / f64::from(b.visits);
                v.status = if b.exhausted { "exhausted" } else { "open" }.to_owned();
            }
        }
        // The trees under their branches.
        for ((branch, peer, _), tree) in &trees {
            view.omitted += tree.omitted;
            let Some(b) = view.branches.get(*branch as usize) else {
                continue;
            };
            let anchor = b.vertex;
            let mut ids: HashMap<u32, usize> = HashMap::new();
            ids.insert(0, anchor);
            let mut added = 0;
            for n in tree.nodes.values() {
                let Some(parent) = n.parent.and_then(|p| ids.get(&p).copied()) else {
                    continue;
                };
                let vertex = view.vertices.len();
                let depth = view.vertices[parent].depth + 1;
                let mut v = Vertex::new(n.label.clone().unwrap_or_default(), &n.status, depth);
                v.value = n.value;
                v.visits = n.visits;
                v.peer = Some(*peer);
                v.detail = n.detail.clone();
                view.vertices.push(v);
                view.vertices[parent].children.push(vertex);
                ids.insert(n.id, vertex);
                added += 1;
            }
            if let Some(b) = view.branches.get_mut(*branch as usize) {
                b.nodes += added;
            }
        }
        view.mark_winner(result);
        // Phases: from each mark to the next.
        for pair in marks.windows(2) {
            let name = match pair[1].0 {
                "start page opened" => "opening the start page",
                "first success" => "searching",
                "reproduced" => "reproducing",
                "finished" if pair[0].0 == "reproduced" => "writing artifacts",
                "finished" => "searching",
                other => other,
            };
            view.phases
                .push((name.to_owned(), pair[1].1.saturating_sub(pair[0].1)));
        }
        view
    }

    /// Highlights the winning path: the branch whose action is the first step, then in its
    /// trees the child whose label is the next step (in the finder's tree when it has one).
    fn mark_winner(&mut self, result: &RunResult) {
        if result.status != Status::Pass || result.steps.is_empty() {
            return;
        }
        let finder = self
            .finder
            .as_ref()
            .and_then(|f| self.peers.iter().position(|p| p == f));
        self.vertices[0].winner = true;
        let mut at = 0;
        for step in &result.steps {
            let children = &self.vertices[at].children;
            let matching: Vec<usize> = children
                .iter()
                .copied()
                .filter(|&c| self.vertices[c].label == step.label)
                .collect();
            let Some(&next) = matching
                .iter()
                .find(|&&c| self.vertices[c].peer.is_some() && self.vertices[c].peer == finder)
                .or(matching.first())
            else {
                break;
            };
            self.vertices[next].winner = true;
            at = next;
        }
    }
}

/// Whether a vertex status is a prune reason (anything but the live states).
fn is_pruned(status: &str) -> bool {
    !matches!(
        status,
        "root" | "open" | "success" | "exhausted" | "unexplored"
    )
}

/// Lays the tree out (leaves left to right, parents over their children) and draws it.
fn tree_svg(view: &RunView) -> String {
    const DX: f64 = 14.0;
    const DY: f64 = 64.0;
    const MARGIN: f64 = 30.0;
    let count = view.vertices.len();
    let mut x = vec![0.0f64; count];
    let mut next_leaf = 0.0f64;
    // Iterative post-order, so that a deep tree cannot overflow the stack.
    let mut stack: Vec<(usize, bool)> = vec![(0, false)];
    let mut max_depth = 0;
    while let Some((v, expanded)) = stack.pop() {
        let vertex = &view.vertices[v];
        max_depth = max_depth.max(vertex.depth);
        if vertex.children.is_empty() {
            x[v] = next_leaf;
            next_leaf += 1.0;
        } else if expanded {
            let first = x[vertex.children[0]];
            let last = x[vertex.children[vertex.children.len() - 1]];
            x[v] = (first + last) / 2.0;
        } else {
            stack.push((v, true));
            for &c in vertex.children.iter().rev() {
                stack.push((c, false));
            }
        }
    }
    let width = (next_leaf * DX + 2.0 * MARGIN).max(600.0);
    let height = f64::from(max_depth) * DY + 2.0 * MARGIN + 90.0;
    let pos = |v: usize| {
        (
            MARGIN + x[v] * DX,
            MARGIN + f64::from(view.vertices[v].depth) * DY,
        )
    };
    let mut svg = format!(
        "<svg id=search-tree xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         viewBox=\"0 0 {width:.0} {height:.0}\" role=img aria-label=\"search tree\">"
    );
    // Edges first, winners last (on top).
    for pass in [false, true] {
        for (v, vertex) in view.vertices.iter().enumerate() {
            for &c in &vertex.children {
                let winner = vertex.winner && view.vertices[c].winner;
                if winner != pass {
                    continue;
                }
                let (x1, y1) = pos(v);
                let (x2, y2) = pos(c);
                let style = if winner {
                    "stroke=\"#f5a623\" stroke-width=\"3.5\""
                } else {
                    "stroke=\"#c5cad3\" stroke-width=\"1\""
                };
                let _ = write!(
                    svg,
                    "<line class=tree-edge x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" {style}/>"
                );
            }
        }
    }
    for (v, vertex) in view.vertices.iter().enumerate() {
        let (cx, cy) = pos(v);
        let pruned = is_pruned(&vertex.status);
        let radius = 4.0 + (f64::from(vertex.visits) + 1.0).log2().min(5.0);
        let fill = if pruned {
            "#b9bec8".to_owned()
        } else if vertex.status == "unexplored" {
            "#ffffff".to_owned()
        } else if vertex.status == "root" {
            "#1d2330".to_owned()
        } else {
            value_colour(if vertex.status == "success" {
                1.0
            } else {
                vertex.value
            })
        };
        let outline = match vertex.peer {
            Some(p) => PEER_COLOURS[p % PEER_COLOURS.len()],
            None => "#5b6475",
        };
        let dash = if pruned {
            " stroke-dasharray=\"2 2\""
        } else {
            ""
        };
        let mut tip = format!(
            "{} — {}",
            clip(&vertex.label, 160),
            vertex.status.replace('_', " ")
        );
        if vertex.visits > 0 {
            let _ = write!(tip, ", {} visits, value {:.2}", vertex.visits, vertex.value);
        }
        if let Some(detail) = &vertex.detail {
            let _ = write!(tip, " ({})", clip(detail, 200));
        }
        if let Some(p) = vertex.peer {
            let _ = write!(tip, ", searched by …{}", short_peer(&view.peers[p]));
        }
        let _ = write!(
            svg,
            "<g class=\"tree-node{}\" data-status=\"{}\"><title>{}</title>",
            if vertex.winner { " winner" } else { "" },
            escape(&vertex.status),
            escape(&tip)
        );
        if vertex.winner {
            let _ = write!(
                svg,
                "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{:.1}\" fill=\"none\" stroke=\"#f5a623\" stroke-width=\"3\"/>",
                radius + 4.0
            );
        }
        let _ = write!(
            svg,
            "<circle cx=\"{cx:.1}\" cy=\"{cy:.1}\" r=\"{radius:.1}\" fill=\"{fill}\" stroke=\"{outline}\" stroke-width=\"2\"{dash}/>"
        );
        if pruned {
            let d = radius * 0.6;
            let _ = write!(
                svg,
                "<path d=\"M{:.1} {:.1}L{:.1} {:.1}M{:.1} {:.1}L{:.1} {:.1}\" stroke=\"#5b6475\" stroke-width=\"1.5\"/>",
                cx - d,
                cy - d,
                cx + d,
                cy + d,
                cx - d,
                cy + d,
                cx + d,
                cy - d
            );
        }
        // The start page and the branches are labelled; deeper nodes say it on hover.
        if vertex.depth == 1 {
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" fill=\"#1d2330\" transform=\"rotate(35 {:.1} {:.1})\">{}</text>",
                cx + 8.0,
                cy + 4.0,
                cx + 8.0,
                cy + 4.0,
                escape(&clip(&vertex.label, 28))
            );
        } else if vertex.depth == 0 {
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" fill=\"#1d2330\">start page</text>",
                cx + 10.0,
                cy + 4.0
            );
        }
        svg.push_str("</g>");
    }
    svg.push_str("</svg>");
    svg
}

fn tree_section(out: &mut String, view: &RunView) {
    let nodes = view.vertices.len();
    let pruned: usize = view
        .vertices
        .iter()
        .filter(|v| is_pruned(&v.status))
        .count();
    let _ = write!(
        out,
        "<section id=tree-section><h2>The search tree</h2><p class=\"small muted\">{nodes} states drawn \
         ({} branches from the start page, {pruned} pruned{}). Fill: the node's mean value, from red (0) to green (1); \
         grey with a cross: pruned (hover for the reason); white: a branch never searched; \
         gold: the winning path. Outline: the peer that searched it.</p><div class=legend>",
        view.branches.len() + view.approvals,
        if view.omitted > 0 {
            format!(", {} more left out of the nodes' reports", view.omitted)
        } else {
            String::new()
        }
    );
    for (i, peer) in view.peers.iter().enumerate() {
        let _ = write!(
            out,
            "<span><i class=swatch style=\"background:{}\"></i><code>…{}</code></span>",
            PEER_COLOURS[i % PEER_COLOURS.len()],
            escape(&short_peer(peer))
        );
    }
    let _ = write!(
        out,
        "</div><div class=tree>{}</div></section>",
        tree_svg(view)
    );
}

fn time_section(out: &mut String, view: &RunView, result: &RunResult) {
    let m = &result.metrics;
    out.push_str("<section id=time><h2>Where the time and the budget went</h2><div class=cards>");
    let budget = view.task.as_ref().map(|t| t.budget.actions);
    card(
        out,
        &match budget {
            Some(b) => format!("{} / {b}", m.actions),
            None => m.actions.to_string(),
        },
        "actions of the budget",
    );
    card(
        out,
        &m.replayed_actions.to_string(),
        "actions replayed to restore states",
    );
    card(out, &seconds(m.browser_ms), "browser time (all nodes)");
    card(out, &seconds(m.wall_ms), "wall time");
    card(out, &m.workers.to_string(), "nodes that took part");
    card(out, &m.tokens.to_string(), "model tokens");
    out.push_str("</div>");
    let total: u64 = view.phases.iter().map(|(_, ms)| ms).sum::<u64>().max(1);
    if !view.phases.is_empty() {
        out.push_str("<div class=phases>");
        let colours = ["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d"];
        for (i, (name, ms)) in view.phases.iter().enumerate() {
            let _ = write!(
                out,
                "<div title=\"{name} {ms} ms\" style=\"width:{:.2}%;background:{}\">{name} {}</div>",
                *ms as f64 * 100.0 / total as f64,
                colours[i % colours.len()],
                seconds(*ms),
                name = escape(name)
            );
        }
        out.push_str("</div>");
    }
    if !view.per_peer.is_empty() {
        out.push_str(
            "<h2>Peers</h2><table id=peers><tr><th>peer</th><th>what it did</th><th>assignments</th>\
             <th>actions</th><th>replayed</th><th>browser time</th><th></th></tr>",
        );
        let all: u64 = view
            .per_peer
            .values()
            .map(|p| p.browser_ms)
            .sum::<u64>()
            .max(1);
        for (peer, p) in &view.per_peer {
            let colour = view
                .peers
                .iter()
                .position(|q| q == peer)
                .map_or("#5b6475", |i| PEER_COLOURS[i % PEER_COLOURS.len()]);
            let _ = write!(
                out,
                "<tr><td><i class=swatch style=\"background:{colour}\"></i><code title=\"{full}\">…{short}</code></td>\
                 <td>{roles}</td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>\
                 <td class=num>{}</td><td>{}</td></tr>",
                p.assignments,
                p.actions,
                p.replayed,
                seconds(p.browser_ms),
                bar(p.browser_ms as f64 / all as f64),
                full = escape(peer),
                short = escape(&short_peer(peer)),
                roles = escape(&p.roles.join(", ")),
            );
        }
        out.push_str("</table>");
    }
    if !view.branches.is_empty() {
        out.push_str(
            "<h2>Branches</h2><table id=branches><tr><th>#</th><th>first action</th><th>searched by</th>\
             <th>visits</th><th>mean value</th><th>actions</th><th>states drawn</th><th></th></tr>",
        );
        for (i, b) in view.branches.iter().enumerate() {
            let mean = if b.visits > 0 {
                b.value_sum / f64::from(b.visits)
            } else {
                0.0
            };
            let peers: Vec<String> = b
                .peers
                .iter()
                .map(|p| format!("…{}", short_peer(p)))
                .collect();
            let _ = write!(
                out,
                "<tr><td>{i}</td><td>{}</td><td><code>{}</code></td><td class=num>{}</td>\
                 <td class=num>{mean:.2}</td><td class=num>{}</td><td class=num>{}</td><td>{}</td></tr>",
                escape(&clip(&b.label, 120)),
                escape(&peers.join(" ")),
                b.visits,
                b.actions,
                b.nodes,
                if b.exhausted { "exhausted" } else { "" },
            );
        }
        out.push_str("</table>");
    }
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &view.vertices {
        if is_pruned(&v.status) {
            *reasons.entry(v.status.as_str()).or_default() += 1;
        }
    }
    if !reasons.is_empty() {
        out.push_str("<h2>Pruned, by reason</h2><p id=pruned>");
        let parts: Vec<String> = reasons
            .iter()
            .map(|(r, n)| format!("<code>{}</code> {n}", escape(r)))
            .collect();
        out.push_str(&parts.join(" · "));
        out.push_str("</p>");
    }
    if !view.problems.is_empty() {
        out.push_str("<h2>Problems worked around</h2><ul id=problems>");
        for p in view.problems.iter().take(50) {
            let _ = write!(out, "<li>{}</li>", escape(&clip(p, 300)));
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
}

/// The report of a search run (explore, demo, a queen's task).
pub fn render_run(
    entries: &[Entry],
    result: &RunResult,
    screenshots: &[Option<Vec<u8>>],
) -> String {
    let view = RunView::build(entries, result);
    let mut out = page_head(&format!("forager: {}", clip(&result.goal, 80)));
    outcome_header(&mut out, "run", result);
    out.push_str("<section id=summary><h2>Outcome</h2><div class=cards>");
    card(
        &mut out,
        &result.steps.len().to_string(),
        "steps in the path",
    );
    card(
        &mut out,
        &result.metrics.actions.to_string(),
        "actions searched",
    );
    card(&mut out, &seconds(result.metrics.wall_ms), "wall time");
    out.push_str("</div>");
    if let (Some(finder), Some(verifier)) = (&view.finder, &view.verifier) {
        let _ = write!(
            out,
            "<p class=small>Found by <code>{}</code>, reproduced by <code>{}</code>.</p>",
            escape(finder),
            escape(verifier)
        );
    }
    if !result.approval_required.is_empty() {
        out.push_str("<p>Not executed for lack of a human's approval:</p><ul id=approvals>");
        for a in &result.approval_required {
            let _ = write!(
                out,
                "<li><code>{}</code> (risk class {}) after {}</li>",
                escape(&a.label),
                a.risk.level(),
                if a.prefix.is_empty() {
                    "the start page".to_owned()
                } else {
                    escape(&a.prefix.join(" → "))
                }
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
    tree_section(&mut out, &view);
    out.push_str("<section id=path><h2>The winning path</h2>");
    if result.steps.is_empty() {
        out.push_str("<p class=muted>No path: the run did not pass.</p>");
    } else {
        step_rows(&mut out, &result.steps, screenshots);
    }
    out.push_str("</section>");
    time_section(&mut out, &view, result);
    out.push_str("</main></body></html>\n");
    out
}

/// The report of a workflow replay.
pub fn render_replay(
    workflow: &Workflow,
    result: &RunResult,
    screenshots: &[Option<Vec<u8>>],
    failure_screenshot: Option<&[u8]>,
    failed_step: Option<u32>,
) -> String {
    let mut out = page_head(&format!("forager replay: {}", clip(&result.goal, 80)));
    outcome_header(&mut out, "replay", result);
    let healed = result
        .steps
        .iter()
        .filter(|s| s.healed_by.is_some())
        .count();
    out.push_str("<section id=summary><h2>Outcome</h2><div class=cards>");
    card(
        &mut out,
        &format!("{} / {}", result.steps.len(), workflow.steps.len()),
        "steps run",
    );
    card(
        &mut out,
        &healed.to_string(),
        "steps healed by a fallback locator",
    );
    card(&mut out, &seconds(result.metrics.wall_ms), "wall time");
    card(
        &mut out,
        &seconds(result.metrics.browser_ms),
        "browser time",
    );
    out.push_str("</div>");
    let _ = write!(
        out,
        "<p class=small>Workflow compiled from task <code>{}</code>; no search: each step's \
         post-condition (URL path, text, fingerprint family) was checked.</p></section>",
        escape(&workflow.task_id)
    );
    if let Some(bytes) = failure_screenshot {
        let _ = write!(
            out,
            "<section class=fail id=failure-shot><h2>Where it stopped{}</h2>\
             <img class=shot style=\"width:560px\" alt=\"failure screenshot\" src=\"data:image/jpeg;base64,{}\"></section>",
            failed_step.map_or(String::new(), |s| format!(" (step {s})")),
            data_encoding::BASE64.encode(bytes)
        );
    }
    out.push_str("<section id=path><h2>The steps</h2>");
    step_rows(&mut out, &result.steps, screenshots);
    out.push_str("</section></main></body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{JournalTree, JournalTreeNode};
    use forager_protocol::result::{Metrics, RESULT_VERSION};
    use forager_protocol::task::SuccessPredicate;
    use forager_protocol::wire::WireCandidate;
    use forager_protocol::{Fingerprint, Locator, RiskClass, Target};

    fn click(name: &str) -> Action {
        Action::Click {
            target: Target {
                locators: vec![Locator::Css(format!("#{name}"))],
                role: "link".into(),
                name: name.into(),
            },
        }
    }

    fn candidate(name: &str, prior: f64, risk: RiskClass) -> WireCandidate {
        WireCandidate {
            action: click(name),
            prior,
            risk,
            key: 0,
            target: None,
        }
    }

    fn tree_node(
        id: u32,
        parent: Option<u32>,
        name: &str,
        status: &str,
        visits: u32,
    ) -> JournalTreeNode {
        JournalTreeNode {
            id,
            parent,
            label: parent.map(|_| click(name).label()),
            status: status.into(),
            visits,
            value: 0.5,
            risk: 1,
            cost_ms: 10,
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
        }
    }

    #[test]
    fn the_tree_merges_reports_marks_approvals_and_follows_one_winning_path() {
        let task = TaskSpec::new(
            "http://127.0.0.1:1/",
            "goal",
            vec![SuccessPredicate::TextPresent("x".into())],
        );
        let entry = |at_ms, event| Entry { at_ms, event };
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
                        candidate("low", 0.2, RiskClass::ReadOnly),
                        candidate("high", 0.9, RiskClass::ReadOnly),
                        candidate("pay", 0.5, RiskClass::Financial),
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
                        tree_node(0, None, "", "open", 1),
                        tree_node(1, Some(0), "x", "open", 1),
                    ],
                ),
            ),
            entry(
                1900,
                report(
                    "peer-a",
                    vec![
                        tree_node(1, Some(0), "x", "open", 3),
                        tree_node(2, Some(1), "y", "success", 1),
                    ],
                ),
            ),
            entry(
                2000,
                JournalEvent::Verified {
                    finder: "peer-a".into(),
                    verifier: "peer-b".into(),
                    actions: Vec::new(),
                },
            ),
        ];
        let result = RunResult {
            version: RESULT_VERSION,
            status: Status::Pass,
            task_id: "00".into(),
            goal: "goal".into(),
            start_url: "http://127.0.0.1:1/".into(),
            seed: 0,
            steps: vec![
                step(1, click("high")),
                step(2, click("x")),
                step(3, click("y")),
            ],
            error: None,
            approval_required: Vec::new(),
            metrics: Metrics::default(),
            network: Default::default(),
        };
        let view = RunView::build(&entries, &result);
        // The branches in prior order, the approval apart, the tree merged under branch 0.
        let labels: Vec<&str> = view.vertices.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels[1], click("high").label());
        assert_eq!(labels[2], click("low").label());
        assert_eq!(view.vertices[3].status, "approval_required");
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
        assert!(html.contains("data-status=\"approval_required\""));
        assert_eq!(html.matches("<tr class=step-row").count(), 3);
        assert!(!html.contains("<script>"), "page text is escaped");
    }

    #[test]
    fn page_text_cannot_inject_markup() {
        assert_eq!(
            escape("<img src=x onerror=\"alert('x')\">&"),
            "&lt;img src=x onerror=&quot;alert(&#39;x&#39;)&quot;&gt;&amp;"
        );
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(short_peer("12D3KooWabcdefghij"), "cdefghij");
    }
}
