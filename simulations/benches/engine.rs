//! Engine throughput and memory, a bench program (`cargo bench -p forager-simulations`).
//!
//! Throughput: MCTS batches on one thread, repeated; reports simulated actions per second
//! (every action a simulated site executed, replays included), budgeted actions and search
//! iterations per second, as median, min and max over the repetitions.
//!
//! Memory: `-- --sweep-minutes M` runs weight-sweep points back to back for M minutes on one
//! thread and samples the resident set size every few seconds; flat means the last samples are
//! no higher than the first ones after warm-up.
//!
//! Outcomes: the warm-up batch's outcome figures are printed too, and `-- --check` runs a few
//! more configurations (nondeterminism, rollouts, known targets, no first-play urgency, small
//! sites) and prints theirs: a change meant only for speed must leave every figure as it was
//! (the searches are seeded, so any difference is a change of behaviour).
//!
//! Arguments (after `--`): `--reps N` (default 7), `--sites N` (default 50),
//! `--sweep-minutes M` (default 0: skip), `--check`, `--json`.

use forager_node::search::Evaluation;
use forager_simulations::batch::{BatchConfig, BatchSummary, generate_sites, run_sites};
use forager_simulations::site::SiteParams;
use forager_simulations::strategies::{RunConfig, Strategy};
use forager_simulations::sweep::Grid;
use std::time::{Duration, Instant};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn stats(mut values: Vec<f64>) -> (f64, f64, f64) {
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    (median, values[0], values[values.len() - 1])
}

/// A batch's outcome figures, timings left out: equal for equal behaviour.
fn outcome_line(summary: &BatchSummary) -> String {
    let iterations = (summary.iterations_per_sec * summary.search_secs).round();
    format!(
        "solved {}/{}, budgeted actions {}, replayed {}, iterations {iterations}, glitches {}, \
         approvals {}, unsafe {}, median path {:?}, mean path ratio {:?}, mean browser ms {}, \
         failures {:?}",
        summary.solved,
        summary.sites,
        summary.actions,
        summary.replayed_actions,
        summary.glitches,
        summary.approvals,
        summary.unsafe_actions,
        summary.median_actions,
        summary.mean_path_ratio,
        summary.mean_search_ms,
        summary.failures,
    )
}

/// Outcome figures of a few configurations that exercise the engine's other paths.
fn check(base: &BatchConfig) {
    let variants: Vec<(&str, BatchConfig)> = vec![
        ("nondeterminism 0.05, seed 5", {
            let mut c = base.clone();
            c.seed = 5;
            c.params.nondeterminism = 0.05;
            c
        }),
        ("rollouts of 3, seed 1", {
            let mut c = base.clone();
            c.seed = 1;
            c.run.evaluation = Evaluation::Rollout { depth: 3 };
            c
        }),
        ("known targets tried, max backup 0.5, seed 3", {
            let mut c = base.clone();
            c.seed = 3;
            c.run.try_known_targets = true;
            c.run.max_backup = 0.5;
            c
        }),
        ("no first-play urgency, whole budget, seed 11", {
            let mut c = base.clone();
            c.seed = 11;
            c.run.first_play_urgency = false;
            c.run.stop_at_first_success = false;
            c
        }),
        ("120 pages, 6 links, seed 42", {
            let mut c = base.clone();
            c.seed = 42;
            c.params.pages = 120;
            c.params.links_per_page = 6;
            c
        }),
    ];
    for (name, config) in variants {
        let sites = generate_sites(&config).expect("valid parameters");
        let summary = run_sites(&config, &sites, &mut |_, _| {});
        println!("  check, {name}: {}", outcome_line(&summary));
    }
}

fn main() {
    let reps: usize = arg("--reps").and_then(|v| v.parse().ok()).unwrap_or(7);
    let sites: u32 = arg("--sites").and_then(|v| v.parse().ok()).unwrap_or(50);
    let minutes: f64 = arg("--sweep-minutes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);

    let config = BatchConfig {
        sites,
        seed: 7,
        params: SiteParams::default(),
        strategy: Strategy::Mcts,
        run: RunConfig::default(),
        replay_memory: true,
    };
    let generated = generate_sites(&config).expect("default parameters are valid");
    // Warm-up.
    let warm_up = run_sites(&config, &generated, &mut |_, _| {});
    println!("outcomes, seed 7: {}", outcome_line(&warm_up));
    if std::env::args().any(|a| a == "--check") {
        check(&config);
    }
    let mut simulated = Vec::new();
    let mut budgeted = Vec::new();
    let mut iterations = Vec::new();
    for _ in 0..reps {
        let summary = run_sites(&config, &generated, &mut |_, _| {});
        let secs = summary.search_secs;
        let executed = summary.simulated_actions_per_sec * secs;
        simulated.push(executed / secs);
        budgeted.push(summary.actions as f64 / secs);
        iterations.push(summary.iterations_per_sec);
    }
    let (sim_med, sim_min, sim_max) = stats(simulated);
    let (bud_med, bud_min, bud_max) = stats(budgeted);
    let (it_med, it_min, it_max) = stats(iterations);
    println!(
        "engine throughput, one thread, {sites} sites x {reps} repetitions (median [min, max]):"
    );
    println!("  simulated actions/s (replays included): {sim_med:.0} [{sim_min:.0}, {sim_max:.0}]");
    println!("  budgeted actions/s:                     {bud_med:.0} [{bud_min:.0}, {bud_max:.0}]");
    println!("  search iterations/s:                    {it_med:.0} [{it_min:.0}, {it_max:.0}]");
    println!(
        "  target 200,000 simulated actions/s: {:.1}x the target",
        sim_med / 200_000.0
    );

    if minutes > 0.0 {
        let limit = Duration::from_secs_f64(minutes * 60.0);
        let started = Instant::now();
        let mut samples: Vec<(f64, u64)> = Vec::new();
        let mut last_sample = Instant::now() - Duration::from_secs(60);
        let points = Grid::default().points();
        let mut point = 0usize;
        let mut seed = 100u64;
        while started.elapsed() < limit {
            let mut batch = config.clone();
            batch.run.weights = points[point % points.len()];
            batch.seed = seed;
            let sites = generate_sites(&batch).expect("valid");
            let _ = run_sites(&batch, &sites, &mut |_, _| {});
            point += 1;
            seed += 1;
            if last_sample.elapsed() >= Duration::from_secs(5) {
                if let Some(kib) = rss_kib() {
                    samples.push((started.elapsed().as_secs_f64(), kib));
                }
                last_sample = Instant::now();
            }
        }
        let n = samples.len();
        let window = (n / 5).max(1);
        let head = &samples[n.min(window)..n.min(2 * window)];
        let tail = &samples[n.saturating_sub(window)..];
        let mean =
            |s: &[(f64, u64)]| s.iter().map(|x| x.1 as f64).sum::<f64>() / s.len().max(1) as f64;
        let peak = samples.iter().map(|s| s.1).max().unwrap_or(0);
        println!(
            "memory over a {minutes}-minute sweep ({point} batches of {sites} sites, {n} samples): \
             RSS after warm-up {:.0} KiB, at the end {:.0} KiB ({:+.1}%), peak {peak} KiB",
            mean(head),
            mean(tail),
            (mean(tail) / mean(head) - 1.0) * 100.0
        );
        for (t, kib) in samples.iter().step_by((n / 12).max(1)) {
            println!("  t={t:>6.0}s rss={kib} KiB");
        }
    }
}
