//! forager on the MiniWoB++ benchmark, a bench program
//! (`cargo bench -p forager-tests --bench miniwob`; see `docs/miniwob-benchmark.md`).
//!
//! Installs the `miniwob` package from PyPI into `target/miniwob` (pip download, no vendored
//! copy), serves its `html/` folder on 127.0.0.1, and runs `forager explore` (release build, the
//! embedded cluster with its default two nodes, so every success is reproduced by a second node)
//! on each episode of each task: seeds 1..=N, the goal being the episode's instruction (read
//! from the page after its START overlay is clicked, with forager's own seeded `Math.random`, so
//! it is the instruction forager's pages show), success the page's own raw reward > 0
//! (`WOB_RAW_REWARD_GLOBAL > 0`), an episode that ended without reward a dead end
//! (`--fail-js`). The page's own episode limit (10 s from START, `core.js`)
//! stays in force: a path slower than that earns the page's timeout reward, not a success.
//!
//! Flags: `--seeds N` (default 10), `--first-seed N` (default 1: seeds N..N+seeds; 1..=10 is
//! the training split the policy was tuned on, 1001.. the held-out one), `--tasks a,b,c`
//! (default: every supported task),
//! `--budget ACTIONS` (default 200), `--timeout SECS` per episode (default 120), `--memory DIR`
//! (the memory explore reads and keeps; default the per-user one, which a second run on the
//! same seeds would replay its own successes from) or `--no-memory`, `--out DIR`
//! (default `target/miniwob/results`), `--survey` (print each task's first instruction and
//! what forager sees after START, run nothing), `--all` (the excluded tasks too),
//! `--weights name=w,…` (the eyes' signal weights, `FORAGER_WEIGHTS`), `--sweep
//! "name=w1,w2;other=w3"` (each signal at each weight over `--weights`, one variant after the
//! other, each in `out/sweep/<variant>/` with its own memory, resumed where it stopped; the
//! report, `sweep.md`, chooses each signal's weight: `forager_tests::sweep`).
//! Every episode's result is appended to `episodes.jsonl` in the output directory, which a
//! later run with `--resume` skips; the table is printed and written as `table.md`.

use forager_node::browser::{BrowserOptions, BrowserPool, NetworkLog, OriginGuard, Tab, Timeouts};
use forager_node::environment::EnvError;
use forager_protocol::Target;
use forager_protocol::result::RunResult;
use forager_tests::bench::{arg, flag, median, no_result};
use forager_tests::{forager_binary, sites, sweep};
use serde_json::json;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Success: the page's own raw reward is positive.
const SUCCESS: &str = "WOB_RAW_REWARD_GLOBAL > 0";
/// A dead end: the episode ended without reward (a wrong click, a wrong answer, its time
/// limit); every MiniWoB++ agent is told as much by the environment's `done` flag.
const FAILURE: &str = "WOB_DONE_GLOBAL && WOB_RAW_REWARD_GLOBAL <= 0";

/// The PyPI release the benchmark runs.
const MINIWOB_VERSION: &str = "1.1.0";

/// Why a task is not run: forager has no action for what it asks.
#[derive(Debug, Clone, Copy)]
enum Support {
    Supported,
    Excluded(&'static str),
}

use Support::{Excluded, Supported};

const DRAG: Support = Excluded("drag and drop (no drag action)");
const DRAW: Support = Excluded("drawing with the mouse (no drag action)");
const CANVAS: Support = Excluded("clicks at coordinates on a canvas or SVG drawing");
const HOVER: Support = Excluded(
    "keeping the pointer on a shape that moves, scored over time (hover is for submenus only)",
);
const SELECT_TEXT: Support = Excluded("selecting text with the mouse (no drag action)");
const MOVING: Support = Excluded("moving targets tracked in real time");
const WAIT: Support = Excluded("a timed pause between two clicks (no wait action)");
const DRAG_RANGE: Support =
    Excluded("dragging across a day's half-hour slots to make an event (no drag action)");
const HOVER_POINT: Support =
    Excluded("hovering to find a hidden point, then a click at its coordinates (no free pointer)");

/// Every task of the package's `html/miniwob/` folder and whether forager has its actions.
const TASKS: &[(&str, Support)] = &[
    ("ascending-numbers", Supported),
    ("bisect-angle", CANVAS),
    ("book-flight", Supported),
    ("book-flight-nodelay", Supported),
    ("button-delay", WAIT),
    ("buy-ticket", Supported),
    ("chase-circle", MOVING),
    ("choose-date", Supported),
    ("choose-date-easy", Supported),
    ("choose-date-medium", Supported),
    ("choose-date-nodelay", Supported),
    ("choose-list", Supported),
    ("circle-center", CANVAS),
    ("click-button", Supported),
    ("click-button-sequence", Supported),
    ("click-checkboxes", Supported),
    ("click-checkboxes-large", Supported),
    ("click-checkboxes-soft", Supported),
    ("click-checkboxes-transfer", Supported),
    ("click-collapsible", Supported),
    ("click-collapsible-2", Supported),
    ("click-collapsible-2-nodelay", Supported),
    ("click-collapsible-nodelay", Supported),
    ("click-color", Supported),
    ("click-dialog", Supported),
    ("click-dialog-2", Supported),
    ("click-link", Supported),
    ("click-menu", Supported),
    ("click-menu-2", Supported),
    ("click-option", Supported),
    ("click-pie", CANVAS),
    ("click-pie-nodelay", CANVAS),
    ("click-scroll-list", Supported),
    ("click-shades", Supported),
    ("click-shape", CANVAS),
    ("click-tab", Supported),
    ("click-tab-2", Supported),
    ("click-tab-2-easy", Supported),
    ("click-tab-2-hard", Supported),
    ("click-tab-2-medium", Supported),
    ("click-test", Supported),
    ("click-test-2", Supported),
    ("click-test-transfer", Supported),
    ("click-widget", Supported),
    ("copy-paste", Supported),
    ("copy-paste-2", Supported),
    ("count-shape", Supported),
    ("count-sides", Supported),
    ("daily-calendar", DRAG_RANGE),
    ("drag-box", DRAG),
    ("drag-circle", DRAG),
    ("drag-cube", DRAG),
    ("drag-items", DRAG),
    ("drag-items-grid", DRAG),
    ("drag-shapes", DRAG),
    ("drag-shapes-2", DRAG),
    ("drag-single-shape", DRAG),
    ("drag-sort-numbers", DRAG),
    ("draw-circle", DRAW),
    ("draw-line", DRAW),
    ("email-inbox", Supported),
    ("email-inbox-delete", Supported),
    ("email-inbox-forward", Supported),
    ("email-inbox-forward-nl", Supported),
    ("email-inbox-forward-nl-turk", Supported),
    ("email-inbox-important", Supported),
    ("email-inbox-nl-turk", Supported),
    ("email-inbox-noscroll", Supported),
    ("email-inbox-reply", Supported),
    ("email-inbox-star-reply", Supported),
    ("enter-date", Supported),
    ("enter-password", Supported),
    ("enter-text", Supported),
    ("enter-text-2", Supported),
    ("enter-text-dynamic", Supported),
    ("enter-time", Supported),
    ("find-greatest", Supported),
    ("find-midpoint", CANVAS),
    ("find-word", Supported),
    ("focus-text", Supported),
    ("focus-text-2", Supported),
    ("form-sequence", Supported),
    ("form-sequence-2", Supported),
    ("form-sequence-3", Supported),
    ("generate-number", Supported),
    ("grid-coordinate", Supported),
    ("guess-number", Supported),
    ("highlight-text", SELECT_TEXT),
    ("highlight-text-2", SELECT_TEXT),
    ("hot-cold", HOVER_POINT),
    ("hover-shape", HOVER),
    ("identify-shape", Supported),
    ("login-user", Supported),
    ("login-user-popup", Supported),
    ("moving-items", MOVING),
    ("multi-layouts", Supported),
    ("multi-orderings", Supported),
    ("navigate-tree", Supported),
    ("number-checkboxes", Supported),
    ("odd-or-even", Supported),
    ("order-food", Supported),
    ("phone-book", Supported),
    ("read-table", Supported),
    ("read-table-2", Supported),
    ("resize-textarea", DRAG),
    ("right-angle", CANVAS),
    ("scroll-text", Supported),
    ("scroll-text-2", Supported),
    ("search-engine", Supported),
    ("sign-agreement", Supported),
    ("simon-says", MOVING),
    ("simple-algebra", Supported),
    ("simple-arithmetic", Supported),
    ("social-media", Supported),
    ("social-media-all", Supported),
    ("social-media-some", Supported),
    ("stock-market", MOVING),
    ("terminal", Supported),
    ("text-editor", SELECT_TEXT),
    ("text-transform", Supported),
    ("tic-tac-toe", Supported),
    ("unicode-test", Supported),
    ("use-autocomplete", Supported),
    ("use-autocomplete-nodelay", Supported),
    ("use-colorwheel", CANVAS),
    ("use-colorwheel-2", CANVAS),
    ("use-slider", Supported),
    ("use-slider-2", Supported),
    ("use-spinner", Supported),
    ("visual-addition", Supported),
];

/// `target/` of this workspace.
fn target_dir() -> PathBuf {
    let binary = forager_binary();
    binary
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .expect("the binary lives in target/<profile>/")
}

/// Downloads the package from PyPI (once) and unpacks it; returns its `html/` folder.
fn install(target: &Path) -> PathBuf {
    let root = target.join("miniwob");
    let unpacked = root.join(format!("miniwob-{MINIWOB_VERSION}"));
    let html = unpacked.join("miniwob").join("html");
    if html.join("miniwob").join("click-button.html").exists() {
        return html;
    }
    std::fs::create_dir_all(&root).expect("target/miniwob");
    eprintln!(
        "installing miniwob {MINIWOB_VERSION} from PyPI into {}",
        root.display()
    );
    let status = Command::new("python3")
        .args(["-m", "pip", "download", "--no-deps", "--quiet"])
        .arg(format!("miniwob=={MINIWOB_VERSION}"))
        .arg("-d")
        .arg(&root)
        .status()
        .expect("python3 runs");
    assert!(
        status.success(),
        "pip download miniwob=={MINIWOB_VERSION} failed"
    );
    let wheel = root.join(format!("miniwob-{MINIWOB_VERSION}-py3-none-any.whl"));
    let status = Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&wheel)
        .arg(&unpacked)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "unpacking {} failed", wheel.display());
    assert!(html.exists(), "{} has no html folder", wheel.display());
    html
}

/// The instruction of one episode: the page loaded in a tab with forager's determinism script
/// and this seed, its START overlay clicked, the query read.
async fn instruction(pool: &BrowserPool, url: &str, seed: u64) -> Result<(String, String), String> {
    let (browser, _) = pool.browser().await.map_err(|e| e.to_string())?;
    let guard = Arc::new(OriginGuard::new([url]));
    let mut tab = Tab::open(
        browser,
        guard,
        Arc::new(Mutex::new(NetworkLog::default())),
        seed,
        None,
        Timeouts::default(),
    )
    .await
    .map_err(|e| e.to_string())?;
    let read = async {
        tab.navigate(url).await?;
        tab.settle().await?;
        // START clicked as forager clicks it: real mouse events (a synthetic `.click()` is
        // not what every page's handlers answer the same way).
        let cover = tab
            .observation()
            .await?
            .elements
            .into_iter()
            .find(|e| e.name == "START")
            .ok_or_else(|| EnvError::TargetMissing("the START overlay".into()))?;
        let target = Target {
            locators: cover.locators,
            role: cover.role,
            name: cover.name,
            sends: Default::default(),
        };
        tab.click(&target, "START").await?;
        tab.settle().await?;
        let query = tab
            // The natural-language tasks answer an object (`utterance` and its fields), as
            // MiniWoB++'s own Python environment reads it.
            .evaluate(
                "(u => typeof u === 'string' ? u : u.utterance)(core.getUtterance())".into(),
                false,
            )
            .await?
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let observation = tab.observation().await?;
        let seen = observation
            .elements
            .iter()
            .map(|e| format!("{} {:?}", e.role, e.name))
            .chain(
                observation
                    .terminals
                    .iter()
                    .map(|t| format!("terminal {:?}", t.name)),
            )
            .collect::<Vec<_>>()
            .join(", ");
        Ok::<_, EnvError>((query, seen))
    }
    .await;
    tab.close().await;
    read.map_err(|e| e.to_string())
}

/// One episode's outcome.
#[derive(Debug, Clone)]
struct Episode {
    task: String,
    seed: u64,
    instruction: String,
    passed: bool,
    /// pass@1: passed with the policy's first choice at every step; `None` where the result
    /// does not say (a failure, or a run by a build that did not record ranks).
    first_choice: Option<bool>,
    reason: String,
    actions: u64,
    replayed: u64,
    steps: usize,
    wall_ms: u64,
}

impl Episode {
    fn to_json(&self) -> serde_json::Value {
        json!({
            "task": self.task, "seed": self.seed, "instruction": self.instruction,
            "passed": self.passed, "reason": self.reason, "actions": self.actions,
            "replayed": self.replayed, "steps": self.steps, "wall_ms": self.wall_ms,
            "first_choice": self.first_choice,
        })
    }

    fn from_json(value: &serde_json::Value) -> Option<Episode> {
        Some(Episode {
            task: value.get("task")?.as_str()?.to_owned(),
            seed: value.get("seed")?.as_u64()?,
            instruction: value.get("instruction")?.as_str()?.to_owned(),
            passed: value.get("passed")?.as_bool()?,
            first_choice: value
                .get("first_choice")
                .and_then(serde_json::Value::as_bool),
            reason: value.get("reason")?.as_str()?.to_owned(),
            actions: value.get("actions")?.as_u64()?,
            replayed: value.get("replayed")?.as_u64()?,
            steps: value.get("steps")?.as_u64()? as usize,
            wall_ms: value.get("wall_ms")?.as_u64()?,
        })
    }
}

struct Settings {
    budget: u32,
    timeout: u64,
    /// The memory explore reads and writes: `Some(dir)` for `--memory DIR`, `None` for the
    /// per-user default; `--no-memory` passes `--no-memory`.
    memory: Option<PathBuf>,
    no_memory: bool,
    /// The signals' weights (`FORAGER_WEIGHTS`, `name=weight,…`) explore runs with; `None`
    /// leaves the variable as the bench's environment has it.
    weights: Option<String>,
}

/// Runs `forager explore` on one episode.
fn explore(
    binary: &Path,
    url: &str,
    task: &str,
    seed: u64,
    goal: &str,
    settings: &Settings,
    out: &Path,
) -> Episode {
    let run_dir = out.join("runs").join(task).join(seed.to_string());
    let _ = std::fs::remove_dir_all(&run_dir);
    let started = Instant::now();
    let output = Command::new(binary)
        .arg("explore")
        .args(["--url", url, "--goal", goal])
        .args(["--success-js", SUCCESS, "--fail-js", FAILURE])
        .args(["--resettable", "--risk-ceiling", "7"])
        .args(["--seed", &seed.to_string()])
        .args(["--budget", &settings.budget.to_string()])
        .args(["--timeout", &settings.timeout.to_string()])
        .args(
            settings
                .memory
                .iter()
                .flat_map(|dir| [OsStr::new("--memory"), dir.as_os_str()]),
        )
        .args(settings.no_memory.then_some("--no-memory"))
        .envs(
            settings
                .weights
                .iter()
                .map(|w| (forager_node::policy::signals::WEIGHTS_VARIABLE, w)),
        )
        .arg("--json")
        .arg("--out")
        .arg(&run_dir)
        .output()
        .expect("forager runs");
    let wall_ms = started.elapsed().as_millis() as u64;
    let result: Option<RunResult> = serde_json::from_slice(&output.stdout).ok();
    match result {
        Some(result) => Episode {
            task: task.to_owned(),
            seed,
            instruction: goal.to_owned(),
            passed: result.status == forager_protocol::result::Status::Pass,
            first_choice: result.first_choice_path(),
            reason: result
                .error
                .as_ref()
                .map(|e| e.reason.as_str().to_owned())
                .unwrap_or_default(),
            actions: u64::from(result.metrics.actions),
            replayed: result.metrics.replayed_actions,
            steps: result.steps.len(),
            wall_ms,
        },
        None => Episode {
            task: task.to_owned(),
            seed,
            instruction: goal.to_owned(),
            passed: false,
            first_choice: None,
            reason: no_result(&output),
            actions: 0,
            replayed: 0,
            steps: 0,
            wall_ms,
        },
    }
}

fn table(episodes: &[Episode], tasks: &[&str]) -> String {
    let mut by_task: BTreeMap<&str, Vec<&Episode>> = BTreeMap::new();
    for e in episodes {
        by_task.entry(e.task.as_str()).or_default().push(e);
    }
    let mut out = String::from(
        "| task | success | pass@1 | median actions (executed / replayed) | median steps | median wall time |\n|---|---|---|---|---|---|\n",
    );
    let (mut passed, mut total, mut at_least_half, mut measured) = (0usize, 0usize, 0usize, 0usize);
    // pass@1 over the episodes whose result says (see `Episode::first_choice`).
    let (mut first, mut ranked) = (0usize, 0usize);
    for task in tasks {
        let Some(runs) = by_task.get(task) else {
            continue;
        };
        let wins = runs.iter().filter(|e| e.passed).count();
        let firsts = runs.iter().filter(|e| e.first_choice == Some(true)).count();
        let says = runs
            .iter()
            .filter(|e| e.first_choice.is_some() || !e.passed)
            .count();
        first += firsts;
        ranked += says;
        passed += wins;
        total += runs.len();
        measured += 1;
        if wins * 2 >= runs.len() {
            at_least_half += 1;
        }
        let won: Vec<&&Episode> = runs.iter().filter(|e| e.passed).collect();
        let med = |f: &dyn Fn(&Episode) -> f64| {
            median(&won.iter().map(|e| f(e)).collect::<Vec<_>>())
                .map_or("–".to_owned(), |m| format!("{m:.0}"))
        };
        let wall = median(
            &runs
                .iter()
                .map(|e| e.wall_ms as f64 / 1000.0)
                .collect::<Vec<_>>(),
        )
        .unwrap_or(0.0);
        out.push_str(&format!(
            "| {task} | {wins}/{} | {} | {} / {} | {} | {wall:.1} s |\n",
            runs.len(),
            if says == runs.len() {
                format!("{firsts}/{says}")
            } else {
                "–".to_owned()
            },
            med(&|e| e.actions as f64),
            med(&|e| e.replayed as f64),
            med(&|e| e.steps as f64),
        ));
    }
    out.push_str(&format!(
        "\nOverall: {passed}/{total} episodes ({:.1}%) over {measured} tasks; {at_least_half} tasks at ≥ 50%.\n",
        100.0 * passed as f64 / total.max(1) as f64
    ));
    if ranked > 0 {
        out.push_str(&format!(
            "pass@1 (the policy's first choice at every step): {first}/{ranked} episodes ({:.1}%) of those whose result says.\n",
            100.0 * first as f64 / ranked as f64
        ));
    }
    out
}

/// One split's episodes: every chosen task on every seed of the range.
struct Split<'a> {
    pool: &'a BrowserPool,
    fixture: &'a sites::Fixture,
    binary: &'a Path,
    tasks: &'a [&'a str],
    seeds: std::ops::Range<u64>,
}

impl Split<'_> {
    /// Runs the episodes not in `out/episodes.jsonl` yet (all of them unless `resume`),
    /// appending each to it as it ends; returns them all.
    async fn run(&self, settings: &Settings, out: &Path, resume: bool) -> Vec<Episode> {
        std::fs::create_dir_all(out).expect("the output directory");
        let journal = out.join("episodes.jsonl");
        let mut episodes: Vec<Episode> = Vec::new();
        if resume {
            if let Ok(text) = std::fs::read_to_string(&journal) {
                episodes = text
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .filter_map(|v| Episode::from_json(&v))
                    .collect();
            }
        } else {
            let _ = std::fs::remove_file(&journal);
        }
        let mut log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&journal)
            .expect("episodes.jsonl");
        let started = Instant::now();
        let total = self.tasks.len() as u64 * (self.seeds.end - self.seeds.start);
        let mut done = 0u64;
        for task in self.tasks {
            let url = self.fixture.url(&format!("/miniwob/{task}.html"));
            for seed in self.seeds.clone() {
                done += 1;
                if episodes.iter().any(|e| e.task == *task && e.seed == seed) {
                    continue;
                }
                let goal = match instruction(self.pool, &url, seed).await {
                    Ok((query, _)) => query,
                    Err(error) => {
                        eprintln!("{task} seed {seed}: no instruction: {error}");
                        continue;
                    }
                };
                let episode = tokio::task::block_in_place(|| {
                    explore(self.binary, &url, task, seed, &goal, settings, out)
                });
                eprintln!(
                    "[{done}/{total} {:.0}s] {task} seed {seed}: {} in {} actions, {:.1} s  ({goal})",
                    started.elapsed().as_secs_f64(),
                    if episode.passed {
                        "pass"
                    } else {
                        &episode.reason
                    },
                    episode.actions,
                    episode.wall_ms as f64 / 1000.0
                );
                writeln!(log, "{}", episode.to_json()).expect("episodes.jsonl is writable");
                episodes.push(episode);
            }
        }
        episodes
    }
}

/// A sweep (`--sweep`): every variant's episodes of the split, each in its own folder under
/// `out/sweep/` with its own memory (one variant's successes would otherwise be the next one's
/// recall), resumed where a folder holds some already; then the report (`forager_tests::sweep`).
async fn run_sweep(
    split: &Split<'_>,
    settings: &Settings,
    variants: &[sweep::Variant],
    out: &Path,
) -> String {
    let mut runs = Vec::new();
    for variant in variants {
        let folder = out.join("sweep").join(&variant.label);
        eprintln!(
            "sweep: {} (FORAGER_WEIGHTS={:?})",
            variant.label, variant.weights
        );
        let settings = Settings {
            memory: (!settings.no_memory).then(|| folder.join("memory")),
            weights: Some(variant.weights.clone()),
            ..*settings
        };
        let episodes = split.run(&settings, &folder, true).await;
        runs.push(
            episodes
                .iter()
                .map(|e| sweep::Outcome {
                    task: e.task.clone(),
                    seed: e.seed,
                    passed: e.passed,
                    actions: e.actions,
                })
                .collect::<Vec<_>>(),
        );
    }
    sweep::report(variants, &runs)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let target = target_dir();
    let html = install(&target);
    let fixture = sites::serve(
        axum::Router::new().fallback_service(tower_http::services::ServeDir::new(&html)),
    )
    .await;
    let seeds: u64 = arg("--seeds").map_or(10, |s| s.parse().expect("--seeds N"));
    // Seeds 1..=10 are what the eyes were tuned on; 1001.. is the held-out split.
    let first_seed: u64 = arg("--first-seed").map_or(1, |s| s.parse().expect("--first-seed N"));
    let settings = Settings {
        budget: arg("--budget").map_or(200, |s| s.parse().expect("--budget N")),
        timeout: arg("--timeout").map_or(120, |s| s.parse().expect("--timeout SECS")),
        memory: arg("--memory").map(PathBuf::from),
        no_memory: flag("--no-memory"),
        weights: arg("--weights"),
    };
    let out = arg("--out").map_or_else(|| target.join("miniwob").join("results"), PathBuf::from);
    std::fs::create_dir_all(&out).expect("the output directory");
    let chosen: Vec<&str> = match arg("--tasks") {
        Some(list) => list
            .split(',')
            .map(|t| {
                TASKS
                    .iter()
                    .find(|(name, _)| *name == t.trim())
                    .unwrap_or_else(|| panic!("unknown task {t}"))
                    .0
            })
            .collect(),
        None => TASKS
            .iter()
            .filter(|(_, s)| flag("--all") || matches!(s, Supported))
            .map(|(name, _)| *name)
            .collect(),
    };
    let pool = BrowserPool::new(BrowserOptions::default());

    if flag("--survey") {
        for task in &chosen {
            let url = fixture.url(&format!("/miniwob/{task}.html"));
            match instruction(&pool, &url, 1).await {
                Ok((query, seen)) => println!("{task}: {query}\n    sees: {seen}"),
                Err(error) => println!("{task}: ERROR {error}"),
            }
        }
        pool.shutdown().await;
        return;
    }

    let binary = forager_binary();
    let split = Split {
        pool: &pool,
        fixture: &fixture,
        binary: &binary,
        tasks: &chosen,
        seeds: first_seed..first_seed + seeds,
    };
    if let Some(sweep) = arg("--sweep") {
        let variants = sweep::variants(settings.weights.as_deref().unwrap_or(""), &sweep)
            .unwrap_or_else(|e| panic!("--sweep: {e}"));
        let text = run_sweep(&split, &settings, &variants, &out).await;
        pool.shutdown().await;
        println!("{text}");
        std::fs::write(out.join("sweep.md"), &text).expect("sweep.md");
        return;
    }
    let episodes = split.run(&settings, &out, flag("--resume")).await;
    pool.shutdown().await;
    let mut text = table(&episodes, &chosen);
    text.push_str("\nNot run (forager has no action for what they ask):\n\n");
    for (task, support) in TASKS {
        if let Excluded(reason) = support {
            text.push_str(&format!("- {task}: {reason}\n"));
        }
    }
    println!("{text}");
    std::fs::write(out.join("table.md"), &text).expect("table.md");
}
