//! The report's HTML, as maud templates over the view model and the result document: the page
//! frame (head, styles, the outcome header), the run page's sections (outcome, search tree,
//! winning path, time and budget), the replay page's, and the step rows with their narration.
//! maud escapes every spliced string, so page text cannot become markup; `PreEscaped` is used
//! only for our own constant stylesheet.

use super::tree::{peer_colour, tree_svg};
use super::view::{RunView, clip, short_peer};
use forager_protocol::result::{ResultStep, RunResult, Status, StepVerification, StepWhy};
use forager_protocol::verdict::VerdictOutcome;
use forager_protocol::workflow::Workflow;
use forager_protocol::{Action, FillValue};
use maud::{DOCTYPE, Markup, PreEscaped, html};

/// The page's styles.
const STYLE: &str = include_str!("style.css");

/// The phases' colours, by index (repeating).
const PHASE_COLOURS: &[&str] = &["#4c78a8", "#f58518", "#54a24b", "#b279a2", "#9d755d"];

/// A peer's colour where it has none of its own.
const NO_PEER_COLOUR: &str = "#5b6475";

/// Milliseconds as seconds, one decimal under ten.
fn seconds(ms: u64) -> String {
    if ms >= 10_000 {
        format!("{:.0} s", ms as f64 / 1000.0)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// A URL's path and query (the whole text when it is no URL).
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

/// A whole page: head, styles, the outcome header, then `body` in `<main>`.
fn page(title: &str, kind: &str, result: &RunResult, body: Markup) -> Markup {
    let (class, status) = match result.status {
        Status::Pass => ("pass", "pass"),
        Status::Failing => ("failing", "failing"),
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                meta http-equiv="Content-Security-Policy"
                    content="default-src 'none'; img-src data:; style-src 'unsafe-inline'";
                title { (title) }
                // Safe unescaped: our own constant stylesheet, no page text in it.
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    h1 { "forager " (kind) " " span.badge.(class)#status { (status) } }
                    div.goal { (result.goal) }
                    div.small.muted {
                        "start " (result.start_url) " · task " (result.task_id)
                        " · seed " (result.seed)
                    }
                    @if let Some(answer) = &result.answer {
                        div.small #answer { "answer (extracted by the model tier): " code { (answer.0) } }
                    }
                    @if let Some(memory) = &result.metrics.memory {
                        div.small #memory {
                            "memory (R): remembered workflow " code { (memory.workflow.get(..12).unwrap_or(&memory.workflow)) }
                            " (" (memory.matched) " match) tried first: " (memory.reached) " of " (memory.steps) " steps taken, "
                            @if memory.worked { "and they reached the success" } @else { "then the search went on" }
                        }
                    }
                    @if result.judged_by == forager_protocol::llm::Judge::Model {
                        div.small #judged {
                            "judged by the model tier's verdict: the task gives no success predicate (weaker than a predicate)"
                        }
                    }
                }
                main {
                    @if let Some(error) = &result.error {
                        section.fail #error {
                            h2 { "Why it is failing: " code { (error.reason.as_str()) } }
                            p { (error.detail) }
                        }
                    }
                    (body)
                }
            }
        }
    }
}

/// A number with its caption.
fn card(value: &str, label: &str) -> Markup {
    html! { div.card { b { (value) } span { (label) } } }
}

/// A horizontal bar filled to `fraction`.
fn bar(fraction: f64) -> Markup {
    let pct = if fraction.is_finite() {
        (fraction * 100.0).clamp(0.0, 100.0)
    } else {
        0.0
    };
    html! { div.bar { i style=(format_args!("width:{pct:.1}%")) {} } }
}

/// A screenshot as an inline JPEG image.
fn jpeg_src(bytes: &[u8]) -> String {
    format!(
        "data:image/jpeg;base64,{}",
        data_encoding::BASE64.encode(bytes)
    )
}

/// What a fill types, said without its value.
fn typed(value: &FillValue) -> Markup {
    match value {
        FillValue::Literal(text) => html! { "“" (text) "”" },
        FillValue::Input(name) => html! { "the input " code { (name) } },
    }
}

/// One sentence on what a step did and where it led.
pub(super) fn narration(step: &ResultStep) -> Markup {
    html! {
        @match &step.action {
            Action::Click { target } => {
                "Clicked the " (target.role) " “" (clip(&target.name, 80)) "”"
            }
            Action::Fill { target, value, enter } => {
                "Typed " (typed(value)) " into “" (clip(&target.name, 80)) "”"
                @if *enter { " and pressed Enter" }
            }
            Action::FillForm { fields, submit } => {
                "Filled the form: "
                @for (i, field) in fields.iter().enumerate() {
                    @if i > 0 { ", " }
                    @if field.select {
                        "chose " (typed(&field.value)) " in “" (clip(&field.target.name, 60)) "”"
                    } @else {
                        "typed " (typed(&field.value)) " into “" (clip(&field.target.name, 60)) "”"
                    }
                }
                ", then "
                @match submit {
                    Some(target) => { "clicked “" (clip(&target.name, 60)) "”" }
                    None => { "pressed Enter" }
                }
            }
            Action::Select { target, option } => {
                "Chose “" (option) "” in “" (clip(&target.name, 80)) "”"
            }
            Action::Check { targets } => {
                "Checked "
                @for (i, target) in targets.iter().enumerate() {
                    @if i > 0 { ", " }
                    "“" (clip(&target.name, 60)) "”"
                }
            }
            Action::Scroll { target, to } => {
                "Scrolled “" (clip(&target.name, 80)) "” to the " (to.as_str())
            }
            Action::Repeat { target, times } => {
                "Clicked “" (clip(&target.name, 80)) "” " (times) " times"
            }
            Action::Hover { target } => { "Pointed at “" (clip(&target.name, 80)) "”" }
            Action::Slide { moves } => {
                "Slid "
                @for (i, m) in moves.iter().enumerate() {
                    @if i > 0 { ", " }
                    "“" (clip(&m.target.name, 60)) "” to " (m.value)
                }
            }
            Action::Press { key } => { "Pressed " (key) }
            Action::Navigate { url } => { "Went to " (url) }
            Action::Back => { "Went back" }
            Action::Done => { "Declared the task done" }
        }
        ", and reached"
        @if !step.title.is_empty() { " “" (clip(&step.title, 80)) "”" }
        " at " code { (clip(&path_of(&step.url), 120)) } "."
    }
}

/// Why a step was taken: its rank among its page's candidates, its prior, its top signals.
fn why_line(why: &StepWhy) -> Markup {
    html! {
        "why: "
        @if why.rank == 1 {
            "the policy's first choice"
        } @else {
            "the policy's choice " (why.rank)
        }
        " of " (why.candidates) " (prior " (format!("{:.2}", why.prior)) ")"
        @for (i, signal) in why.signals.iter().enumerate() {
            (if i == 0 { ": " } else { ", " })
            code { (clip(&signal.signal, 40)) }
            " " (format!("{:+.2}", signal.lift))
        }
    }
}

/// The steps' table, one `tr.step-row` per step.
/// `verified`: the steps of a cluster's verified path (each says whether it was reproduced or
/// attested); a replay's steps were all executed by the replay itself.
fn step_rows(steps: &[ResultStep], screenshots: &[Option<Vec<u8>>], verified: bool) -> Markup {
    let total: u64 = steps.iter().map(|s| s.cost_ms).sum::<u64>().max(1);
    html! {
        table #steps {
            tr {
                th { "#" } th { "page after the step" } th { "what happened" }
                th { "verdict" } th { "risk" } th { "cost" }
            }
            @for (i, step) in steps.iter().enumerate() {
                tr.step-row data-step=(step.index) {
                    td { (step.index) }
                    td {
                        @match screenshots.get(i).and_then(Option::as_ref) {
                            Some(bytes) => {
                                img.shot alt={ "step " (step.index) " screenshot" }
                                    src=(jpeg_src(bytes));
                            }
                            None => { span.muted { "no screenshot" } }
                        }
                    }
                    td {
                        (narration(step))
                        div.small.muted { code { (clip(&step.label, 200)) } }
                        @if let (Some(locator), Some(index)) = (&step.healed_by, step.healed_locator) {
                            div.healed.small {
                                "healed: the target was found by locator " (index + 1)
                                " of its chain, " code { (locator) }
                            }
                        }
                        @if let Some(why) = &step.why {
                            div.small.why { (why_line(why)) }
                        }
                        @if verified {
                            @match step.verification {
                                StepVerification::Reproduced => {
                                    div.small.verification { "reproduced: executed again by another node" }
                                }
                                StepVerification::Attested => {
                                    div.small.verification.attested {
                                        "attested: not executed again (a write, or after one, on \
                                         a site that must not see it twice); the finder's signed \
                                         evidence stands for it"
                                    }
                                }
                            }
                        }
                    }
                    td {
                        @match &step.verdict {
                            Some(verdict) => {
                                @let outcome = match verdict.outcome {
                                    VerdictOutcome::Advanced => "advanced",
                                    VerdictOutcome::Rejected => "rejected",
                                    VerdictOutcome::Inconclusive => "inconclusive",
                                };
                                span class={ "verdict-" (outcome) } { (outcome) }
                                div.small.muted { (verdict.reasons.join("; ")) }
                            }
                            None => { span.muted { "not submit-shaped" } }
                        }
                    }
                    td.num { (step.risk.level()) }
                    td.num { (step.cost_ms) " ms" (bar(step.cost_ms as f64 / total as f64)) }
                }
            }
        }
    }
}

/// The run's outcome: counts, who found and reproduced the winner, what awaits approval.
fn summary_section(view: &RunView, result: &RunResult) -> Markup {
    html! {
        section #summary {
            h2 { "Outcome" }
            div.cards {
                (card(&result.steps.len().to_string(), "steps in the path"))
                (card(&result.metrics.actions.to_string(), "actions searched"))
                (card(&seconds(result.metrics.wall_ms), "wall time"))
            }
            @if let (Some(finder), Some(verifier)) = (&view.finder, &view.verifier) {
                p.small { "Found by " code { (finder) } ", reproduced by " code { (verifier) } "." }
            }
            @match result.first_choice_path() {
                Some(true) => p.small #first-choice {
                    "The policy's first choice at every step: its first rollout alone solves the task (pass@1)."
                },
                Some(false) => p.small #first-choice {
                    "Not the policy's first choice at every step: the search found the path."
                },
                None => {},
            }
            @if !result.approval_required.is_empty() {
                p { "Not executed for lack of a human's approval:" }
                ul #approvals {
                    @for approval in &result.approval_required {
                        li {
                            code { (approval.label) } " (risk class " (approval.risk.level()) ") after "
                            @if approval.prefix.is_empty() {
                                "the start page"
                            } @else {
                                (approval.prefix.join(" → "))
                            }
                        }
                    }
                }
            }
            @if let Some(task) = view.task.as_ref().filter(|t| !t.consents.is_empty()) {
                p { "Allowed above the risk ceiling (" (task.risk_ceiling.level()) ") by a user's signed consent:" }
                ul #consents {
                    @for consent in &task.consents {
                        li {
                            code { (consent.value.action.label) } " (risk class " (consent.value.risk.level()) ") after "
                            @if consent.value.prefix.is_empty() {
                                "the start page"
                            } @else {
                                (consent.value.prefix.iter().map(|s| s.label.as_str()).collect::<Vec<_>>().join(" → "))
                            }
                            ", until " (consent.value.expires_at) " (Unix time), signed by "
                            code { (data_encoding::HEXLOWER.encode(&consent.signer.as_bytes()[..8])) "…" }
                        }
                    }
                }
            }
        }
    }
}

/// The search tree: what it shows, the peers' legend, the picture.
fn tree_section(view: &RunView) -> Markup {
    let pruned = view.vertices.iter().filter(|v| v.state.is_pruned()).count();
    html! {
        section #tree-section {
            h2 { "The search tree" }
            p.small.muted {
                (view.vertices.len()) " states drawn (" (view.branches.len() + view.approvals)
                " branches from the start page, " (pruned) " pruned"
                @if view.omitted > 0 {
                    ", " (view.omitted) " more left out of the nodes' reports"
                }
                "). Fill: the node's mean value, from red (0) to green (1); grey with a cross: \
                 pruned (hover for the reason); white: a branch never searched; gold: the \
                 winning path. Outline: the peer that searched it."
            }
            div.legend {
                @for (i, peer) in view.peers.iter().enumerate() {
                    span {
                        i.swatch style={ "background:" (peer_colour(i)) } {}
                        code { "…" (short_peer(peer)) }
                    }
                }
            }
            div.tree { (tree_svg(view)) }
        }
    }
}

/// Where the time and the budget went: totals, phases, peers, branches, prunes, problems.
fn time_section(view: &RunView, result: &RunResult) -> Markup {
    let m = &result.metrics;
    let budget = match view.task.as_ref().map(|t| t.budget.actions) {
        Some(b) => format!("{} / {b}", m.actions),
        None => m.actions.to_string(),
    };
    let phases_total: u64 = view.phases.iter().map(|(_, ms)| ms).sum::<u64>().max(1);
    let peers_total: u64 = view
        .per_peer
        .values()
        .map(|p| p.browser_ms)
        .sum::<u64>()
        .max(1);
    let reasons = view.pruned_by_reason();
    html! {
        section #time {
            h2 { "Where the time and the budget went" }
            div.cards {
                (card(&budget, "actions of the budget"))
                (card(&m.replayed_actions.to_string(), "actions replayed to restore states"))
                (card(&seconds(m.browser_ms), "browser time (all nodes)"))
                (card(&seconds(m.wall_ms), "wall time"))
                (card(&m.workers.to_string(), "nodes that took part"))
                (card(&m.tokens.to_string(), "model tokens"))
                @if !m.model.is_empty() {
                    (card(&m.model.calls().to_string(), "model calls (cached answers apart)"))
                    (card(&format!("{:.4}", m.model.cost()), "model cost"))
                    (card(&m.model.model_decided.to_string(), "decisions the model changed"))
                    (card(&m.model.rules_decided.to_string(), "decisions left to the rules"))
                }
                (card(&m.remembered.to_string(), "pages where the memory voted"))
                (card(
                    &view.vertices.iter().filter(|v| v.replay > 0.0).count().to_string(),
                    "actions tried on the memory's vote"
                ))
            }
            @if !view.phases.is_empty() {
                div.phases {
                    @for (i, (name, ms)) in view.phases.iter().enumerate() {
                        div title={ (name) " " (ms) " ms" }
                            style=(format_args!(
                                "width:{:.2}%;background:{}",
                                *ms as f64 * 100.0 / phases_total as f64,
                                PHASE_COLOURS[i % PHASE_COLOURS.len()]
                            )) {
                            (name) " " (seconds(*ms))
                        }
                    }
                }
            }
            @if !view.per_peer.is_empty() {
                h2 { "Peers" }
                table #peers {
                    tr {
                        th { "peer" } th { "what it did" } th { "assignments" } th { "actions" }
                        th { "replayed" } th { "browser time" } th {}
                    }
                    @for (peer, p) in &view.per_peer {
                        tr {
                            td {
                                i.swatch style={
                                    "background:"
                                    (view.peer_index(peer).map_or(NO_PEER_COLOUR, peer_colour))
                                } {}
                                code title=(peer) { "…" (short_peer(peer)) }
                            }
                            td { (p.roles.join(", ")) }
                            td.num { (p.assignments) }
                            td.num { (p.actions) }
                            td.num { (p.replayed) }
                            td.num { (seconds(p.browser_ms)) }
                            td { (bar(p.browser_ms as f64 / peers_total as f64)) }
                        }
                    }
                }
            }
            @if !view.branches.is_empty() {
                h2 { "Branches" }
                table #branches {
                    tr {
                        th { "#" } th { "first action" } th { "searched by" } th { "visits" }
                        th { "mean value" } th { "actions" } th { "states drawn" } th {}
                    }
                    @for (i, b) in view.branches.iter().enumerate() {
                        tr {
                            td { (i) }
                            td { (clip(&b.label, 120)) }
                            td {
                                code {
                                    @for (j, peer) in b.peers.iter().enumerate() {
                                        @if j > 0 { " " }
                                        "…" (short_peer(peer))
                                    }
                                }
                            }
                            td.num { (b.visits) }
                            td.num { (format_args!("{:.2}", b.mean())) }
                            td.num { (b.actions) }
                            td.num { (b.nodes) }
                            td { @if b.exhausted { "exhausted" } }
                        }
                    }
                }
            }
            @if !reasons.is_empty() {
                h2 { "Pruned, by reason" }
                p #pruned {
                    @for (i, (reason, n)) in reasons.iter().enumerate() {
                        @if i > 0 { " · " }
                        code { (reason) } " " (n)
                    }
                }
            }
            @if !view.problems.is_empty() {
                h2 { "Problems worked around" }
                ul #problems {
                    @for problem in view.problems.iter().take(50) {
                        li { (clip(problem, 300)) }
                    }
                }
            }
        }
    }
}

/// The writes the network gate refused: requests other than GET/HEAD/OPTIONS sent while an
/// action rated a read ran (or between actions). Empty when there were none.
fn refused_section(result: &RunResult) -> Markup {
    let network = &result.network;
    html! {
        @if network.refused_writes > 0 {
            section #refused {
                h2 { "Writes refused at the network" }
                p {
                    (network.refused_writes)
                    " request(s) that write were held in the browser and refused. Of them, "
                    (network.background_refused)
                    " the page sent on its own (a timer, a heartbeat, a beacon, between actions) \
                     and "
                    (network.view_state_refused)
                    " only saved the page's own view after an action that commits nothing: \
                     neither was charged to an action. Any other was sent by an action rated \
                     below what it does (its branch pruned risk_underestimated)."
                }
                ul {
                    @for request in network.refused_write_requests.iter().take(20) {
                        li { code { (clip(request, 200)) } }
                    }
                }
            }
        }
    }
}

/// The report of a search run.
pub(super) fn run_page(
    view: &RunView,
    result: &RunResult,
    screenshots: &[Option<Vec<u8>>],
) -> Markup {
    let body = html! {
        (summary_section(view, result))
        (tree_section(view))
        (refused_section(result))
        section #path {
            h2 { "The winning path" }
            @if result.steps.is_empty() {
                p.muted { "No path: the run did not pass." }
            } @else {
                (step_rows(&result.steps, screenshots, true))
            }
        }
        (time_section(view, result))
    };
    page(
        &format!("forager: {}", clip(&result.goal, 80)),
        "run",
        result,
        body,
    )
}

/// The report of a workflow replay.
pub(super) fn replay_page(
    workflow: &Workflow,
    result: &RunResult,
    screenshots: &[Option<Vec<u8>>],
    failure_screenshot: Option<&[u8]>,
    failed_step: Option<u32>,
) -> Markup {
    let healed = result
        .steps
        .iter()
        .filter(|s| s.healed_by.is_some())
        .count();
    let body = html! {
        section #summary {
            h2 { "Outcome" }
            div.cards {
                (card(&format!("{} / {}", result.steps.len(), workflow.steps.len()), "steps run"))
                (card(&healed.to_string(), "steps healed by a fallback locator"))
                (card(&seconds(result.metrics.wall_ms), "wall time"))
                (card(&seconds(result.metrics.browser_ms), "browser time"))
            }
            p.small {
                "Workflow compiled from task " code { (workflow.task_id) } "; no search: each \
                 step's post-condition (URL path, text, fingerprint family) was checked."
            }
        }
        @if let Some(bytes) = failure_screenshot {
            section.fail #failure-shot {
                h2 {
                    "Where it stopped"
                    @if let Some(step) = failed_step { " (step " (step) ")" }
                }
                img.shot style="width:560px" alt="failure screenshot" src=(jpeg_src(bytes));
            }
        }
        section #path {
            h2 { "The steps" }
            (step_rows(&result.steps, screenshots, false))
        }
    };
    page(
        &format!("forager replay: {}", clip(&result.goal, 80)),
        "replay",
        result,
        body,
    )
}
