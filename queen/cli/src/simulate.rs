//! `forager simulate`: strategy comparisons and weight sweeps on synthetic websites.

use crate::BadInput;
use crate::cli::{SimulateArgs, StrategyChoice};
use anyhow::Context;
use forager_node::search::{Evaluation, Widening};
use forager_protocol::ScoreWeights;
use forager_simulations::batch::{BatchConfig, BatchSummary, generate_sites, run_sites};
use forager_simulations::site::SiteParams;
use forager_simulations::strategies::{RunConfig, Strategy};
use forager_simulations::sweep::{self, Grid};
use indicatif::{ProgressBar, ProgressStyle};
use std::process::ExitCode;

/// Runs the command.
pub fn run(args: &SimulateArgs) -> anyhow::Result<ExitCode> {
    let base = batch_config(args)?;
    if args.sweep {
        return run_sweep(args, &base);
    }
    let strategies: Vec<Strategy> = match args.strategy {
        StrategyChoice::Mcts => vec![Strategy::Mcts],
        StrategyChoice::Random => vec![Strategy::Random],
        StrategyChoice::Bfs => vec![Strategy::Bfs],
        StrategyChoice::Greedy => vec![Strategy::Greedy],
        StrategyChoice::All => Strategy::ALL.to_vec(),
    };
    // Every strategy searches the same sites, generated once.
    let sites = generate_sites(&base).map_err(|e| BadInput(e.to_string()))?;
    let mut summaries = Vec::new();
    for strategy in strategies {
        let config = BatchConfig {
            strategy,
            ..base.clone()
        };
        let bar = progress_bar(u64::from(args.sites), &format!("{strategy:>6}"));
        let summary = run_sites(&config, &sites, &mut |done, _| {
            bar.set_position(u64::from(done))
        });
        bar.finish_and_clear();
        summaries.push(summary);
    }
    if args.json {
        let json = if summaries.len() == 1 {
            serde_json::to_string_pretty(&summaries[0])?
        } else {
            serde_json::to_string_pretty(&serde_json::json!({ "results": summaries }))?
        };
        println!("{json}");
    } else {
        print_table(&summaries);
    }
    Ok(ExitCode::SUCCESS)
}

fn batch_config(args: &SimulateArgs) -> anyhow::Result<BatchConfig> {
    let mut params = match &args.site_params {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
            serde_json::from_str::<SiteParams>(&text)
                .map_err(|e| BadInput(format!("{}: {e}", path.display())))?
        }
        None => SiteParams::default(),
    };
    if let Some(v) = args.pages {
        params.pages = v;
    }
    if let Some(v) = args.links_per_page {
        params.links_per_page = v;
    }
    if let Some(v) = args.goal_depth {
        params.goal_depth = v;
    }
    if let Some(v) = args.nondeterminism {
        params.nondeterminism = v;
    }
    params.validate().map_err(|e| BadInput(e.to_string()))?;

    let defaults = ScoreWeights::DEFAULT;
    let weights = ScoreWeights {
        exploration: args.exploration.unwrap_or(defaults.exploration),
        replay: args.replay_weight.unwrap_or(defaults.replay),
        risk: args.risk_weight.unwrap_or(defaults.risk),
        cost: args.cost_weight.unwrap_or(defaults.cost),
        auth: args.auth_weight.unwrap_or(defaults.auth),
    };
    if let Err((name, value)) = weights.validate() {
        return Err(BadInput(format!(
            "score weight {name} = {value} is not a finite, non-negative number"
        ))
        .into());
    }
    let defaults = RunConfig::default();
    let knob = |name: &str, value: Option<f64>, default: f64| -> anyhow::Result<f64> {
        match value {
            Some(v) if !v.is_finite() || v < 0.0 => Err(BadInput(format!(
                "--{name} = {v} is not a finite, non-negative number"
            ))
            .into()),
            Some(v) => Ok(v),
            None => Ok(default),
        }
    };
    let run = RunConfig {
        budget: args.budget,
        max_depth: args.max_depth,
        weights,
        evaluation: match args.rollout {
            Some(depth) => Evaluation::Rollout { depth },
            None => Evaluation::Heuristic,
        },
        widening: Widening {
            coefficient: knob("widening", args.widening, defaults.widening.coefficient)?,
            exponent: knob(
                "widening-exponent",
                args.widening_exponent,
                defaults.widening.exponent,
            )?,
        },
        hint_weight: knob("hint-weight", args.hint_weight, defaults.hint_weight)?,
        max_backup: knob("max-backup", args.max_backup, defaults.max_backup)?.min(1.0),
        try_known_targets: args.try_known_targets,
        first_play_urgency: !args.no_first_play,
        ..defaults
    };
    Ok(BatchConfig {
        sites: args.sites,
        seed: args.seed,
        params,
        strategy: Strategy::Mcts,
        run,
        replay_memory: !args.no_replay_memory,
    })
}

fn progress_bar(len: u64, prefix: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    let style = ProgressStyle::with_template(
        "{prefix} [{elapsed_precise}] {bar:40} {pos}/{len} ({eta} left)",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(prefix.to_owned());
    bar
}

fn print_table(summaries: &[BatchSummary]) {
    println!(
        "{:<8} {:>6} {:>7} {:>8} {:>9} {:>9} {:>7} {:>8} {:>13}",
        "strategy",
        "sites",
        "solved",
        "success",
        "median",
        "optimal",
        "unsafe",
        "actions",
        "sim actions/s"
    );
    let opt = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
    for s in summaries {
        println!(
            "{:<8} {:>6} {:>7} {:>7.1}% {:>9} {:>9} {:>7} {:>8} {:>13.0}",
            s.strategy.name(),
            s.sites,
            s.solved,
            s.success_rate * 100.0,
            opt(s.median_actions),
            opt(s.median_optimal_actions),
            s.unsafe_actions,
            s.actions,
            s.simulated_actions_per_sec
        );
    }
}

fn run_sweep(args: &SimulateArgs, base: &BatchConfig) -> anyhow::Result<ExitCode> {
    let Some(out) = &args.out else {
        return Err(BadInput("--sweep needs --out DIR".into()).into());
    };
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let grid = if args.quick {
        Grid {
            exploration: vec![0.1, 0.3, 0.6],
            replay: vec![0.0, 0.25, 0.5],
            risk: vec![0.0, 0.5],
            cost: vec![0.0, 0.25],
            auth: vec![0.0, 0.1],
        }
    } else {
        Grid::default()
    };
    let total = grid.points().len() as u64;
    let bar = progress_bar(total, " sweep");
    let points = sweep::run_sweep(base, &grid, args.threads as usize, &|done, _| {
        bar.set_position(done as u64)
    })
    .map_err(|e| BadInput(e.to_string()))?;
    bar.finish_and_clear();
    let csv_path = out.join("sweep.csv");
    std::fs::write(&csv_path, sweep::to_csv(&points))
        .with_context(|| format!("writing {}", csv_path.display()))?;
    let svg_path = out.join("sweep.svg");
    sweep::plot(&points, &svg_path).with_context(|| format!("drawing {}", svg_path.display()))?;
    let best = sweep::best(&points).context("the sweep produced no points")?;
    let best_json = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "grid": grid,
        "best": best,
    });
    let best_path = out.join("best.json");
    std::fs::write(&best_path, serde_json::to_string_pretty(&best_json)?)
        .with_context(|| format!("writing {}", best_path.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&best_json)?);
    } else {
        let w = best.weights;
        println!(
            "best of {} points (objective {:.4}): C={} w_R={} λ={} μ={} α={}; success {:.1}%",
            points.len(),
            best.objective,
            w.exploration,
            w.replay,
            w.risk,
            w.cost,
            w.auth,
            best.summary.success_rate * 100.0
        );
        println!(
            "wrote {}, {}, {}",
            csv_path.display(),
            svg_path.display(),
            best_path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
