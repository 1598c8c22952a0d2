//! The sentence-embedding model's cost on this machine: one short text, and per text in
//! batches of 16 and 100 (texts like a page's link names, never seen before, so no cache),
//! then the same batch again (served by the cache). Medians of repetitions, in one run.
//!
//!   cargo bench -p forager-tests --bench embed -- [--reps N] [--model DIR]

use forager_node::model::SentenceModel;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let reps: usize = value("--reps").and_then(|v| v.parse().ok()).unwrap_or(5);
    let dir = value("--model")
        .map(std::path::PathBuf::from)
        .or_else(SentenceModel::default_dir)
        .expect("a model folder");
    let started = Instant::now();
    let model = SentenceModel::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    // Link-like texts: a few words each, all distinct across repetitions and sizes.
    let words = [
        "install",
        "configure",
        "table",
        "index",
        "backup",
        "restore",
        "column",
        "query",
        "server",
        "module",
        "proxy",
        "rewrite",
        "commit",
        "branch",
        "merge",
        "remote",
    ];
    let mut counter = 0usize;
    let mut texts = |n: usize| -> Vec<String> {
        (0..n)
            .map(|_| {
                counter += 1;
                let a = words[counter % words.len()];
                let b = words[(counter / words.len()) % words.len()];
                format!("How to {a} the {b} ({counter})")
            })
            .collect()
    };
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut per_text = |n: usize| {
        let runs: Vec<f64> = (0..reps)
            .map(|_| {
                let batch = texts(n);
                let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
                let t = Instant::now();
                model.embed(&refs).expect("embedded");
                t.elapsed().as_secs_f64() * 1000.0 / n as f64
            })
            .collect();
        median(runs)
    };
    let one = per_text(1);
    let sixteen = per_text(16);
    let hundred = per_text(100);
    let batch = texts(100);
    let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
    model.embed(&refs).expect("embedded");
    let cached = median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                model.embed(&refs).expect("embedded");
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect(),
    );
    println!(
        "{} ({} dims), loaded in {load_ms:.0} ms; medians of {reps} repetitions:",
        model.name(),
        model.dim()
    );
    println!("| texts per call | ms per text |");
    println!("|---|---|");
    println!("| 1 | {one:.2} |");
    println!("| 16 | {sixteen:.2} |");
    println!("| 100 | {hundred:.2} |");
    println!("| 100, all cached | {:.4} |", cached / 100.0);
}
