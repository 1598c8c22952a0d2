//! forager on real documentation sites, a bench program
//! (`cargo bench -p forager-tests --bench docsearch`; see `docs/search-benchmark.md`).
//!
//! The sites are Debian's documentation packages, installed with `apt-get install sqlite3-doc
//! apache2-doc git-doc debian-handbook postgresql-doc-15` (a site whose folder is missing is
//! skipped, said so); the first four are what the eyes were tuned on, PostgreSQL's is held out,
//! each served on 127.0.0.1. The tasks (`docsearch-tasks.json` beside this file) are goals
//! worded the way users ask, each with the page(s) that answer it; success is reaching one of
//! them (`location.pathname`). Per task and per reader, `forager explore` (release build, two
//! nodes, so every success is reproduced) runs with the 200-action budget: with the sentence
//! model, with hashed n-grams only (`--embedder ngram`), and a lexical best-first crawler
//! implemented here reads the same files. Actions are what the search executed (the crawler:
//! pages it opened after the start page).
//!
//! With `--memory`, a second pass asks the tasks' paraphrases (other words, same targets):
//! once against the memory the first pass left (`--memory DIR`), once with `--no-memory`.
//!
//! Reader `llm` is the sentence model with the language-model tier (`--model-url URL --model
//! NAME` given to the bench, e.g. `scripts/local-model start`'s URL): its runs also record
//! the tier's calls, cached answers, tokens and waiting (`docs/model-tier.md`).
//!
//! Flags: `--sites a,b` (default all five), `--readers model,ngram,crawler[,llm]`, `--budget N`
//! (default 200), `--timeout SECS` per run (default 180), `--limit N` tasks per site, `--out
//! DIR` (default `target/docsearch`), `--memory`. Every run is appended to `runs.jsonl` in the
//! output directory (`--resume` skips those done); the tables go to stdout and `table.md`.

use forager_protocol::result::{RunResult, Status};
use forager_tests::bench::{arg, flag, median, no_result};
use forager_tests::{forager_binary, sites};
use serde_json::json;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A documentation site: its folder and start page.
struct Site {
    name: &'static str,
    package: &'static str,
    root: &'static str,
    start: &'static str,
}

/// The sites whose tasks the eyes were tuned on; the others are held out (`postgres`, added
/// at stop 49 with its tasks written before any run on it).
const TUNING_SITES: &str = "sqlite,apache,git,handbook";

const SITES: [Site; 5] = [
    Site {
        name: "sqlite",
        package: "sqlite3-doc",
        root: "/usr/share/doc/sqlite3",
        start: "index.html",
    },
    Site {
        name: "apache",
        package: "apache2-doc",
        root: "/usr/share/doc/apache2-doc/manual",
        start: "en/index.html",
    },
    Site {
        name: "git",
        package: "git-doc",
        root: "/usr/share/doc/git-doc",
        start: "index.html",
    },
    Site {
        name: "handbook",
        package: "debian-handbook",
        root: "/usr/share/doc/debian-handbook/html",
        start: "en-US/index.html",
    },
    Site {
        name: "postgres",
        package: "postgresql-doc-15",
        root: "/usr/share/doc/postgresql-doc-15/html",
        start: "index.html",
    },
];

#[derive(Debug, Clone, serde::Deserialize)]
struct Task {
    site: String,
    goal: String,
    paraphrase: String,
    targets: Vec<String>,
}

/// One run of one reader on one task.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Run {
    site: String,
    task: usize,
    pass: String,
    reader: String,
    solved: bool,
    /// pass@1: solved by the policy's first choice at every step.
    #[serde(default)]
    first_choice: bool,
    actions: u64,
    steps: usize,
    wall_ms: u64,
    pages_read: u64,
    reading_ms: u64,
    reason: String,
    /// The model tier's questions answered by the server (reader `llm`).
    #[serde(default)]
    model_calls: u64,
    /// Its questions answered from the cache.
    #[serde(default)]
    model_cached: u64,
    /// Its tokens.
    #[serde(default)]
    model_tokens: u64,
    /// Milliseconds waited for its answers.
    #[serde(default)]
    model_wait_ms: u64,
    /// Decisions it changed from the rules' first choice.
    #[serde(default)]
    model_decided: u64,
}

/// Words that say nothing about a page's subject (and the sites' own names).
const STOPWORDS: &[&str] = &[
    "the",
    "and",
    "for",
    "with",
    "that",
    "this",
    "from",
    "are",
    "was",
    "were",
    "you",
    "your",
    "how",
    "what",
    "why",
    "who",
    "when",
    "where",
    "which",
    "can",
    "does",
    "did",
    "not",
    "but",
    "all",
    "any",
    "has",
    "have",
    "had",
    "its",
    "into",
    "out",
    "get",
    "got",
    "make",
    "just",
    "one",
    "our",
    "they",
    "them",
    "there",
    "then",
    "than",
    "will",
    "would",
    "should",
    "could",
    "some",
    "such",
    "only",
    "also",
    "more",
    "most",
    "other",
    "about",
    "over",
    "after",
    "before",
    "while",
    "each",
    "every",
    "same",
    "own",
    "way",
    "use",
    "using",
    "want",
    "need",
    "keep",
    "let",
    "like",
    "without",
    "again",
    "too",
    "very",
    "here",
    "it's",
    "i'm",
    "don't",
    "didn't",
    "sqlite",
    "apache",
    "git",
    "debian",
    "http",
    "server",
    "version",
    "manual",
    "page",
    "documentation",
    "handbook",
    "administrator",
    "postgresql",
    "postgres",
];

/// Content words, lower case, a plural `s` dropped.
fn content_words(text: &str) -> HashSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 3 && !STOPWORDS.contains(&w.as_str()))
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() >= 3 => stem.to_owned(),
            _ => w,
        })
        .collect()
}

/// A page's `<title>`.
fn title_of(html: &str) -> String {
    // ASCII only: byte offsets into `lower` must be offsets into `html`.
    let lower = html.to_ascii_lowercase();
    let Some(start) = lower.find("<title") else {
        return String::new();
    };
    let Some(open) = lower[start..].find('>') else {
        return String::new();
    };
    let from = start + open + 1;
    let to = lower[from..].find("</title").map_or(from, |e| from + e);
    decode(&html[from..to])
}

fn decode(text: &str) -> String {
    text.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
}

/// The links of a page: (resolved path inside the site, anchor text).
fn links_of(html: &str, page: &str) -> Vec<(String, String)> {
    // ASCII only: byte offsets into `lower` must be offsets into `html`.
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = lower[at..].find("<a ") {
        let start = at + found;
        let Some(tag_end) = lower[start..].find('>').map(|e| start + e) else {
            break;
        };
        let Some(close) = lower[tag_end..].find("</a").map(|e| tag_end + e) else {
            break;
        };
        let tag = &html[start..tag_end];
        let href = tag.find("href=").map(|i| &tag[i + 5..]).and_then(|rest| {
            let quote = rest.chars().next()?;
            if quote == '"' || quote == '\'' {
                rest[1..].find(quote).map(|e| rest[1..1 + e].to_owned())
            } else {
                Some(rest.split([' ', '>']).next().unwrap_or("").to_owned())
            }
        });
        let mut text = String::new();
        let mut in_tag = false;
        for c in html[tag_end + 1..close].chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        at = close;
        let Some(href) = href else { continue };
        if href.contains("://") || href.starts_with("javascript:") || href.starts_with("mailto:") {
            continue;
        }
        let href = href.split(['#', '?']).next().unwrap_or("");
        if href.is_empty() || !href.ends_with(".html") {
            continue;
        }
        if let Some(path) = resolve(page, href) {
            out.push((
                path,
                decode(
                    text.split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                        .as_str(),
                ),
            ));
        }
    }
    out
}

/// `href` relative to `page`, as a path inside the site (`None` if it climbs out).
fn resolve(page: &str, href: &str) -> Option<String> {
    let mut parts: Vec<&str> = if href.starts_with('/') {
        Vec::new()
    } else {
        page.split('/').collect()
    };
    if !href.starts_with('/') {
        parts.pop();
    }
    for part in href.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// A best-first crawler: the frontier is ordered by how many of the goal's content words
/// the link's text and its URL's words contain (ties: found first, first), as a focused
/// crawler orders it. Returns the pages opened after the start page until a target, or the
/// budget.
fn crawl(root: &Path, start: &str, goal: &str, targets: &[String], budget: u64) -> (bool, u64) {
    let goal_words = content_words(goal);
    let mut seen: HashSet<String> = HashSet::from([start.to_owned()]);
    // (score, -order, path)
    let mut frontier: BinaryHeap<(u64, i64, String)> = BinaryHeap::new();
    let mut order = 0i64;
    let mut open = |page: &str, frontier: &mut BinaryHeap<(u64, i64, String)>| {
        let Ok(html) = std::fs::read_to_string(root.join(page)) else {
            return;
        };
        for (path, text) in links_of(&html, page) {
            if !seen.insert(path.clone()) {
                continue;
            }
            let url_words = path.replace(['/', '_', '-', '.'], " ");
            let words = content_words(&format!("{text} {url_words}"));
            let score = goal_words.intersection(&words).count() as u64;
            order += 1;
            frontier.push((score, -order, path));
        }
    };
    open(start, &mut frontier);
    let mut opened = 0;
    while let Some((_, _, page)) = frontier.pop() {
        if opened >= budget {
            break;
        }
        opened += 1;
        if targets.contains(&page) {
            return (true, opened);
        }
        open(&page, &mut frontier);
    }
    (false, opened)
}

struct Settings {
    budget: u64,
    timeout: u64,
    /// The model tier of reader `llm`: base URL and model name.
    model: Option<(String, String)>,
}

/// Runs `forager explore` for one goal.
#[allow(clippy::too_many_arguments)]
fn explore(
    binary: &Path,
    base: &str,
    site: &Site,
    goal: &str,
    targets: &[String],
    reader: &str,
    memory: Option<&Path>,
    settings: &Settings,
    run_dir: &Path,
) -> Explored {
    let _ = std::fs::remove_dir_all(run_dir);
    let paths: Vec<String> = targets.iter().map(|t| format!("/{t}")).collect();
    let success = format!(
        "{}.includes(location.pathname)",
        serde_json::to_string(&paths).expect("paths")
    );
    let mut command = Command::new(binary);
    command
        .arg("explore")
        .args(["--url", &format!("{base}{}", site.start), "--goal", goal])
        .args(["--success-js", &success])
        .args(["--budget", &settings.budget.to_string()])
        .args(["--timeout", &settings.timeout.to_string()])
        .arg("--json")
        .arg("--out")
        .arg(run_dir);
    if reader == "ngram" {
        command.args(["--embedder", "ngram"]);
    }
    if reader == "llm" {
        let (url, model) = settings
            .model
            .as_ref()
            .expect("reader llm needs --model-url URL --model NAME");
        command.args(["--model-url", url, "--model", model]);
    }
    match memory {
        Some(dir) => {
            command.arg("--memory").arg(dir);
        }
        None => {
            command.arg("--no-memory");
        }
    }
    let output = command.output().expect("forager runs");
    match serde_json::from_slice::<RunResult>(&output.stdout) {
        Ok(result) => Explored {
            solved: result.status == Status::Pass,
            first_choice: result.first_choice_path() == Some(true),
            actions: u64::from(result.metrics.actions),
            steps: result.steps.len(),
            pages_read: result.metrics.pages_read,
            reading_ms: result.metrics.reading_ms,
            model: result.metrics.model.clone(),
            reason: result
                .error
                .as_ref()
                .map(|e| e.reason.as_str().to_owned())
                .unwrap_or_default(),
        },
        Err(_) => Explored {
            solved: false,
            first_choice: false,
            actions: settings.budget,
            steps: 0,
            pages_read: 0,
            reading_ms: 0,
            model: Default::default(),
            reason: no_result(&output),
        },
    }
}

/// What one `forager explore` run gave.
struct Explored {
    solved: bool,
    first_choice: bool,
    actions: u64,
    steps: usize,
    pages_read: u64,
    reading_ms: u64,
    model: forager_protocol::llm::ModelUsage,
    reason: String,
}

fn main() {
    let binary = forager_binary();
    let target = binary
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .expect("the binary lives in target/<profile>/");
    let out = arg("--out").map_or_else(|| target.join("docsearch"), PathBuf::from);
    std::fs::create_dir_all(&out).expect("the output directory");
    let settings = Settings {
        budget: arg("--budget").map_or(200, |s| s.parse().expect("--budget N")),
        timeout: arg("--timeout").map_or(180, |s| s.parse().expect("--timeout SECS")),
        model: arg("--model-url")
            .map(|url| (url, arg("--model").expect("--model-url needs --model NAME"))),
    };
    let limit: usize = arg("--limit").map_or(usize::MAX, |s| s.parse().expect("--limit N"));
    let readers: Vec<String> = arg("--readers")
        .unwrap_or_else(|| "model,ngram,crawler".into())
        .split(',')
        .map(str::to_owned)
        .collect();
    let chosen: Vec<String> = arg("--sites")
        .unwrap_or_else(|| format!("{TUNING_SITES},postgres"))
        .split(',')
        .map(str::to_owned)
        .collect();
    let tasks: Vec<Task> = serde_json::from_str(include_str!("docsearch-tasks.json"))
        .expect("docsearch-tasks.json is valid");
    let log_path = out.join("runs.jsonl");
    let mut done: Vec<Run> = if flag("--resume") {
        std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    } else {
        let _ = std::fs::remove_file(&log_path);
        Vec::new()
    };
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .expect("runs.jsonl");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let memory_pass = flag("--memory");
    let memory_root = out.join("memory");
    if memory_pass && !flag("--resume") {
        let _ = std::fs::remove_dir_all(&memory_root);
    }

    let mut shares = BTreeMap::new();
    for site in SITES.iter().filter(|s| chosen.iter().any(|c| c == s.name)) {
        let root = Path::new(site.root);
        if !root.join(site.start).is_file() {
            println!(
                "{}: skipped, {} is missing (apt-get install {})",
                site.name,
                root.join(site.start).display(),
                site.package
            );
            continue;
        }
        let fixture = runtime.block_on(sites::serve(
            axum::Router::new().fallback_service(tower_http::services::ServeDir::new(root)),
        ));
        let base = fixture.url("/");
        let site_tasks: Vec<(usize, &Task)> = tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.site == site.name)
            .take(limit)
            .collect();
        for (index, task) in &site_tasks {
            let title = std::fs::read_to_string(root.join(&task.targets[0]))
                .map(|html| title_of(&html))
                .unwrap_or_default();
            let shared = !content_words(&task.goal).is_disjoint(&content_words(&title));
            shares.insert(*index, shared);
        }
        let mut passes = vec![("goal", None::<&str>)];
        if memory_pass {
            passes = vec![
                ("goal", Some("memory")),
                ("paraphrase", Some("memory")),
                ("paraphrase", None),
            ];
        }
        for (pass, memory) in passes {
            let pass_name = match memory {
                Some(_) if pass == "paraphrase" => "paraphrase+memory".to_owned(),
                None if memory_pass => "paraphrase, no memory".to_owned(),
                _ => pass.to_owned(),
            };
            for reader in &readers {
                if memory_pass && reader == "crawler" {
                    continue;
                }
                for (index, task) in &site_tasks {
                    if done
                        .iter()
                        .any(|r| r.task == *index && r.reader == *reader && r.pass == pass_name)
                    {
                        continue;
                    }
                    let goal = if pass == "goal" {
                        &task.goal
                    } else {
                        &task.paraphrase
                    };
                    let started = Instant::now();
                    let Explored {
                        solved,
                        first_choice,
                        actions,
                        steps,
                        pages_read,
                        reading_ms,
                        model,
                        reason,
                    } = if reader == "crawler" {
                        let (solved, actions) =
                            crawl(root, site.start, goal, &task.targets, settings.budget);
                        Explored {
                            solved,
                            first_choice: false,
                            actions,
                            steps: 0,
                            pages_read: actions + 1,
                            reading_ms: 0,
                            model: Default::default(),
                            reason: String::new(),
                        }
                    } else {
                        let memory_dir = memory.map(|_| memory_root.join(reader));
                        let run_dir = out.join("runs").join(format!(
                            "{index}-{reader}-{}",
                            pass_name.replace([' ', ',', '+'], "_")
                        ));
                        explore(
                            &binary,
                            &base,
                            site,
                            goal,
                            &task.targets,
                            reader,
                            memory_dir.as_deref(),
                            &settings,
                            &run_dir,
                        )
                    };
                    let run = Run {
                        site: site.name.into(),
                        task: *index,
                        pass: pass_name.clone(),
                        reader: reader.clone(),
                        solved,
                        first_choice,
                        actions,
                        steps,
                        wall_ms: started.elapsed().as_millis() as u64,
                        pages_read,
                        reading_ms,
                        reason,
                        model_calls: model.calls(),
                        model_cached: model.tiers.values().map(|t| t.cached).sum(),
                        model_tokens: model.tokens(),
                        model_wait_ms: model.tiers.values().map(|t| t.wait_ms).sum(),
                        model_decided: model.model_decided,
                    };
                    eprintln!(
                        "{:>8} #{index:<2} {:<22} {:<7} {} in {:>3} actions, {:.1} s  {}",
                        site.name,
                        pass_name,
                        reader,
                        if run.solved { "solved" } else { "FAILED" },
                        run.actions,
                        run.wall_ms as f64 / 1000.0,
                        goal
                    );
                    let _ = writeln!(log, "{}", json!(run));
                    done.push(run);
                }
            }
        }
        drop(fixture);
    }
    let table = tables(&tasks, &done, &shares);
    println!("{table}");
    std::fs::write(out.join("table.md"), &table).expect("table.md");
}

/// The per-task table and the summary lines.
fn tables(tasks: &[Task], runs: &[Run], shares: &BTreeMap<usize, bool>) -> String {
    let mut passes: Vec<&str> = Vec::new();
    for r in runs {
        if !passes.contains(&r.pass.as_str()) {
            passes.push(&r.pass);
        }
    }
    let mut out = String::new();
    for pass in passes {
        let of_pass: Vec<&Run> = runs.iter().filter(|r| r.pass == pass).collect();
        let mut readers: Vec<&str> = Vec::new();
        for r in &of_pass {
            if !readers.contains(&r.reader.as_str()) {
                readers.push(&r.reader);
            }
        }
        let mut by_task: BTreeMap<usize, HashMap<&str, &Run>> = BTreeMap::new();
        for r in &of_pass {
            by_task.entry(r.task).or_default().insert(&r.reader, r);
        }
        out.push_str(&format!(
            "\n### Pass: {pass}\n\n| site | # | goal | shares a title word | {} |\n|---|---|---|---|{}\n",
            readers.join(" | "),
            "---|".repeat(readers.len())
        ));
        for (task, by_reader) in &by_task {
            let cells: Vec<String> = readers
                .iter()
                .map(|reader| match by_reader.get(reader) {
                    Some(r) if r.solved => r.actions.to_string(),
                    Some(r) => format!("✗ ({})", r.actions),
                    None => "–".into(),
                })
                .collect();
            let goal = if pass.starts_with("paraphrase") {
                &tasks[*task].paraphrase
            } else {
                &tasks[*task].goal
            };
            out.push_str(&format!(
                "| {} | {task} | {goal} | {} | {} |\n",
                tasks[*task].site,
                if shares.get(task).copied().unwrap_or(false) {
                    "yes"
                } else {
                    "no"
                },
                cells.join(" | ")
            ));
        }
        out.push('\n');
        for reader in &readers {
            let mine: Vec<&Run> = of_pass
                .iter()
                .filter(|r| r.reader == *reader)
                .copied()
                .collect();
            let solved = mine.iter().filter(|r| r.solved).count();
            let first_choice = mine.iter().filter(|r| r.first_choice).count();
            // Unsolved runs count with the budget they used (a lower bound on their cost).
            let actions: Vec<f64> = mine.iter().map(|r| r.actions as f64).collect();
            let total: f64 = actions.iter().sum();
            let pages: u64 = mine.iter().map(|r| r.pages_read).sum();
            let reading: u64 = mine.iter().map(|r| r.reading_ms).sum();
            let wall: u64 = mine.iter().map(|r| r.wall_ms).sum();
            out.push_str(&format!(
                "- {reader}: {solved}/{} solved (pass@1 {first_choice}); median actions {:.1} (unsolved counted at what they spent); total actions {total:.0}; median wall {:.1} s",
                mine.len(),
                median(&actions).unwrap_or(0.0),
                median(&mine.iter().map(|r| r.wall_ms as f64 / 1000.0).collect::<Vec<_>>())
                    .unwrap_or(0.0),
            ));
            let calls: u64 = mine.iter().map(|r| r.model_calls).sum();
            let cached: u64 = mine.iter().map(|r| r.model_cached).sum();
            if calls + cached > 0 {
                let tokens: u64 = mine.iter().map(|r| r.model_tokens).sum();
                let waited: u64 = mine.iter().map(|r| r.model_wait_ms).sum();
                let decided: u64 = mine.iter().map(|r| r.model_decided).sum();
                let fewer = mine.iter().filter(|r| r.model_calls < r.actions).count();
                out.push_str(&format!(
                    "; model: {calls} calls ({cached} cached), {tokens} tokens, {:.1} s waited ({:.1}% of wall), {decided} decisions changed, calls < actions on {fewer}/{} tasks",
                    waited as f64 / 1000.0,
                    100.0 * waited as f64 / wall.max(1) as f64,
                    mine.len()
                ));
            }
            if pages > 0 && reading > 0 {
                out.push_str(&format!(
                    "; reading {:.1} ms per page ({pages} pages), {:.1}% of wall time",
                    reading as f64 / pages as f64,
                    100.0 * reading as f64 / wall.max(1) as f64
                ));
            }
            out.push('\n');
        }
        if readers.contains(&"model") && readers.contains(&"crawler") {
            let (mut fewer, mut compared) = (0, 0);
            for by_reader in by_task.values() {
                if let (Some(m), Some(c)) = (by_reader.get("model"), by_reader.get("crawler")) {
                    compared += 1;
                    if m.solved && (!c.solved || m.actions < c.actions) {
                        fewer += 1;
                    }
                }
            }
            out.push_str(&format!(
                "- model needs fewer actions than the crawler on {fewer}/{compared} tasks\n"
            ));
        }
    }
    out
}
