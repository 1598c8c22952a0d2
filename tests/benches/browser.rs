//! Chromium latencies, a bench program (`cargo bench -p forager-tests --bench browser`).
//!
//! Per-action latency (observe, with and without names from the accessibility tree, fingerprint,
//! click, fill) and the cost of restoring a state with page reuse (walking live tabs, the page
//! cache) against without it (a fresh context and a replay from the start URL each time), on
//! the 370-page documentation fixture. Medians over repetitions, both variants in one run.
//! Arguments after `--`: `--reps N` (default 5).

use forager_node::Environment;
use forager_node::browser::{
    BrowserOptions, BrowserPool, ChromiumEnv, EnvOptions, NetworkLog, OriginGuard, Tab, Timeouts,
};
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::{Action, Fingerprint, TaskSpec};
use forager_tests::sites;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

async fn click_by_label(env: &mut ChromiumEnv, label: &str) -> (Action, Fingerprint, Duration) {
    let candidates = env.candidates().await.expect("candidates");
    let candidate = candidates
        .into_iter()
        .find(|c| c.action.label() == format!("click {label:?}"))
        .unwrap_or_else(|| panic!("no link {label:?}"));
    let started = Instant::now();
    let step = env.act(&candidate.action).await.expect("click works");
    (candidate.action, step.state.fingerprint, started.elapsed())
}

/// Restores to each chapter of a section, then clicks each of its pages from there: the
/// sibling expansions MCTS does. Returns the restore durations (ms).
async fn sibling_expansions(env: &mut ChromiumEnv, chapters: &[&str]) -> Vec<f64> {
    let mut restores = Vec::new();
    env.restore(&[]).await.expect("start");
    let (section, section_fp, _) = click_by_label(env, "Configuration").await;
    for chapter in chapters {
        env.restore(&[(section.clone(), section_fp)])
            .await
            .expect("section");
        let (chapter_action, chapter_fp, _) = click_by_label(env, chapter).await;
        let prefix = vec![(section.clone(), section_fp), (chapter_action, chapter_fp)];
        for page in ["overview", "timeout", "retries", "tuning", "examples"] {
            let started = Instant::now();
            env.restore(&prefix).await.expect("restore");
            restores.push(ms(started.elapsed()));
            let chapter_slug = chapter.to_lowercase();
            let label = format!("{chapter} {page} (configuration)");
            let _ = chapter_slug;
            click_by_label(env, &label).await;
        }
    }
    restores
}

fn main() {
    let reps: usize = arg("--reps").and_then(|v| v.parse().ok()).unwrap_or(5);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let docs = sites::serve(sites::docs()).await;
        let shop = sites::serve(sites::shop()).await;
        let started = Instant::now();
        let pool = BrowserPool::new(BrowserOptions::default());
        let (browser, _) = pool.browser().await.expect("chromium starts");
        let launch = started.elapsed();

        // Primitive latencies on one tab.
        let guard = Arc::new(OriginGuard::new([docs.base.as_str(), shop.base.as_str()]));
        let network = Arc::new(Mutex::new(NetworkLog::default()));
        let mut open_ms = Vec::new();
        let mut goto_ms = Vec::new();
        let mut observe_ms = Vec::new();
        let mut with_tree_ms = Vec::new();
        let mut without_tree_ms = Vec::new();
        let mut fingerprint_us = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            let mut tab = Tab::open(
                browser.clone(),
                guard.clone(),
                network.clone(),
                7,
                None,
                Timeouts::default(),
            )
            .await
            .expect("tab");
            open_ms.push(ms(t.elapsed()));
            let t = Instant::now();
            tab.navigate(&docs.url("/docs/configuration/frobnicator"))
                .await
                .expect("navigate");
            tab.settle().await.expect("settle");
            goto_ms.push(ms(t.elapsed()));
            // The accessibility tree's cost: a look with the page script's names only, the
            // first look with the tree (asked about every element), then again (the tab keeps
            // the readings of the document), interleaved with looks without it.
            let t = Instant::now();
            tab.observation_without_accessibility()
                .await
                .expect("observe");
            without_tree_ms.push(ms(t.elapsed()));
            let t = Instant::now();
            let observation = tab.observation().await.expect("observe");
            observe_ms.push(ms(t.elapsed()));
            for _ in 0..5 {
                let t = Instant::now();
                tab.observation().await.expect("observe");
                with_tree_ms.push(ms(t.elapsed()));
                let t = Instant::now();
                tab.observation_without_accessibility()
                    .await
                    .expect("observe");
                without_tree_ms.push(ms(t.elapsed()));
            }
            let t = Instant::now();
            for _ in 0..100 {
                std::hint::black_box(forager_protocol::fingerprint::fingerprint(
                    &observation.url,
                    &observation.snapshot.join("\n"),
                    &observation.forms,
                ));
            }
            fingerprint_us.push(t.elapsed().as_secs_f64() * 1e6 / 100.0);
            tab.close().await;
        }

        // Actions through the environment (each includes settling and the next observation).
        let mut task = TaskSpec::new(
            shop.url("/"),
            "Find \"ThinkPad X1 Carbon\"",
            vec![SuccessPredicate::TextPresent("never".into())],
        );
        task.inputs.insert("q".into(), "ThinkPad".into());
        let mut shop_env =
            ChromiumEnv::new(pool.clone(), Arc::new(task), EnvOptions::default()).expect("task");
        let mut click_ms = Vec::new();
        let mut fill_ms = Vec::new();
        for _ in 0..reps {
            shop_env.restore(&[]).await.expect("start");
            let (_, _, d) = click_by_label(&mut shop_env, "Laptops").await;
            click_ms.push(ms(d));
            shop_env.restore(&[]).await.expect("start");
            let fill = shop_env
                .candidates()
                .await
                .expect("candidates")
                .into_iter()
                .find(|c| matches!(c.action, Action::FillForm { .. }))
                .expect("the search form");
            let t = Instant::now();
            shop_env.act(&fill.action).await.expect("search");
            fill_ms.push(ms(t.elapsed()));
        }
        shop_env.close().await;

        // Restores with and without page reuse, alternating runs.
        let task = TaskSpec::new(
            docs.url("/docs"),
            "browse",
            vec![SuccessPredicate::TextPresent("never".into())],
        );
        let task = Arc::new(task);
        let chapters = ["Frobnicator", "Scheduler"];
        let mut with_reuse = Vec::new();
        let mut without = Vec::new();
        for _ in 0..reps.div_ceil(2).max(1) {
            for reuse in [true, false] {
                let options = EnvOptions {
                    reuse_pages: reuse,
                    ..EnvOptions::default()
                };
                let mut env = ChromiumEnv::new(pool.clone(), task.clone(), options).expect("task");
                let restores = sibling_expansions(&mut env, &chapters).await;
                env.close().await;
                if reuse {
                    with_reuse.extend(restores);
                } else {
                    without.extend(restores);
                }
            }
        }
        pool.shutdown().await;

        println!("Chromium latencies, {reps} repetitions, medians:");
        println!("  launch (first browser)            {:>8.1} ms", ms(launch));
        println!(
            "  open a tab (context, page, guards) {:>7.1} ms",
            median(open_ms)
        );
        println!(
            "  navigate + settle                 {:>8.1} ms",
            median(goto_ms)
        );
        let (first, again, without_tree) = (
            median(observe_ms),
            median(with_tree_ms),
            median(without_tree_ms),
        );
        println!("  observe, page script's names only {without_tree:>8.1} ms");
        println!(
            "  observe, first look, AX tree names {first:>7.1} ms ({:.2}×)",
            first / without_tree
        );
        println!(
            "  observe again, AX readings kept   {again:>8.1} ms ({:.2}×)",
            again / without_tree
        );
        println!(
            "  fingerprint (hash of a snapshot)  {:>8.1} µs",
            median(fingerprint_us)
        );
        println!(
            "  click action (settle + observe)   {:>8.1} ms",
            median(click_ms)
        );
        println!(
            "  fill-form action (settle + obs.)  {:>8.1} ms",
            median(fill_ms)
        );
        let (a, b) = (median(with_reuse.clone()), median(without.clone()));
        println!(
            "restore of a depth-2 state on the docs site ({} restores each):",
            with_reuse.len()
        );
        println!("  with page reuse                   {a:>8.1} ms");
        println!("  fresh context + replay            {b:>8.1} ms");
        println!("  page reuse cuts restore cost {:.1}x", b / a.max(0.001));
    });
}
