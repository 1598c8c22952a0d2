//! Weight sweeps: a grid over the score's weights (C, w_R, λ, μ, α), each point an MCTS batch
//! on the same sites, written as CSV and an SVG plot, with the best point named.
//!
//! Points are ranked by one objective, which encodes what a user of the search wants:
//!
//! ```text
//! objective = success_rate − 0.25·(mean_path_ratio − 1) − 0.2·mean_path_risk
//!             − 0.1·login_share − 0.1·mean_search_ms / cost_budget_ms
//! ```
//!
//! (success first; then short paths; then paths that write less, log in less, and searches
//! that spend less browser time). Sites are generated once and shared by every point; points
//! run on several threads, each point alone being deterministic.

use crate::batch::{BatchConfig, BatchSummary, generate_sites, run_sites};
use crate::site::{ParamError, Site};
use forager_protocol::ScoreWeights;
use plotters::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The values tried for each weight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grid {
    /// C.
    pub exploration: Vec<f64>,
    /// w_R.
    pub replay: Vec<f64>,
    /// λ.
    pub risk: Vec<f64>,
    /// μ.
    pub cost: Vec<f64>,
    /// α.
    pub auth: Vec<f64>,
}

impl Default for Grid {
    fn default() -> Self {
        Grid {
            exploration: vec![0.1, 0.3, 0.6, 1.0],
            replay: vec![0.0, 0.25, 0.5, 1.0],
            risk: vec![0.0, 0.5, 1.0],
            cost: vec![0.0, 0.25, 1.0],
            auth: vec![0.0, 0.1, 0.5],
        }
    }
}

impl Grid {
    /// Every combination, in a fixed order.
    pub fn points(&self) -> Vec<ScoreWeights> {
        let mut points = Vec::new();
        for &exploration in &self.exploration {
            for &replay in &self.replay {
                for &risk in &self.risk {
                    for &cost in &self.cost {
                        for &auth in &self.auth {
                            points.push(ScoreWeights {
                                exploration,
                                replay,
                                risk,
                                cost,
                                auth,
                            });
                        }
                    }
                }
            }
        }
        points
    }
}

/// One grid point's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// The weights.
    pub weights: ScoreWeights,
    /// The batch summary.
    pub summary: BatchSummary,
    /// The objective (higher is better).
    pub objective: f64,
}

/// The objective of a batch; see the module documentation.
pub fn objective(summary: &BatchSummary, cost_budget_ms: f64) -> f64 {
    summary.success_rate
        - 0.25 * (summary.mean_path_ratio.unwrap_or(2.0) - 1.0)
        - 0.2 * summary.mean_path_risk.unwrap_or(1.0)
        - 0.1 * summary.login_share.unwrap_or(1.0)
        - 0.1 * summary.mean_search_ms / cost_budget_ms.max(1.0)
}

/// The cost budget the objective normalises search time by (the task default).
pub const COST_BUDGET_MS: f64 = 120_000.0;

/// Runs every grid point on the same sites. `progress` gets (done, total) after each point.
pub fn run_sweep(
    base: &BatchConfig,
    grid: &Grid,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<SweepPoint>, ParamError> {
    let sites: Vec<Arc<Site>> = generate_sites(base)?;
    let points = grid.points();
    let total = points.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<SweepPoint>>> = Mutex::new(vec![None; total]);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&weights) = points.get(i) else {
                        break;
                    };
                    let mut config = base.clone();
                    config.run.weights = weights;
                    let summary = run_sites(&config, &sites, &mut |_, _| {});
                    let point = SweepPoint {
                        weights,
                        objective: objective(&summary, COST_BUDGET_MS),
                        summary,
                    };
                    // No await and no panic under this lock: a plain mutex is right.
                    if let Ok(mut slots) = results.lock() {
                        slots[i] = Some(point);
                    }
                    progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                }
            });
        }
    });
    let slots = results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    Ok(slots.into_iter().flatten().collect())
}

/// The best point: highest objective, ties to the earlier point.
pub fn best(points: &[SweepPoint]) -> Option<&SweepPoint> {
    points
        .iter()
        .fold(None, |best: Option<&SweepPoint>, p| match best {
            Some(b) if b.objective >= p.objective => Some(b),
            _ => Some(p),
        })
}

/// The CSV of a sweep, one row per point.
pub fn to_csv(points: &[SweepPoint]) -> String {
    let mut csv = String::from(
        "exploration,replay,risk,cost,auth,sites,success_rate,median_actions,\
         median_optimal_actions,mean_path_ratio,mean_path_risk,login_share,mean_search_ms,\
         unsafe_actions,actions,objective\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
    for p in points {
        let s = &p.summary;
        let w = &p.weights;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{:.4},{},{},{},{},{},{:.1},{},{},{:.5}",
            w.exploration,
            w.replay,
            w.risk,
            w.cost,
            w.auth,
            s.sites,
            s.success_rate,
            opt(s.median_actions),
            opt(s.median_optimal_actions),
            opt(s.mean_path_ratio),
            opt(s.mean_path_risk),
            opt(s.login_share),
            s.mean_search_ms,
            s.unsafe_actions,
            s.actions,
            p.objective
        );
    }
    csv
}

/// Why a plot could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the plot: {0}")]
pub struct PlotError(String);

/// Draws two panels to an SVG file: success rate against C (one line per w_R) and the
/// objective against λ (one line per α), the other weights held at the best point's values.
pub fn plot(points: &[SweepPoint], path: &Path) -> Result<(), PlotError> {
    let Some(best) = best(points) else {
        return Err(PlotError("no points".into()));
    };
    let b = best.weights;
    let err = |e: &dyn std::fmt::Display| PlotError(e.to_string());
    let root = SVGBackend::new(path, (1200, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(600);

    let series = |x_of: fn(&ScoreWeights) -> f64,
                  line_of: fn(&ScoreWeights) -> f64,
                  fixed: &dyn Fn(&ScoreWeights) -> bool,
                  y_of: fn(&SweepPoint) -> f64| {
        let mut lines: Vec<(f64, Vec<(f64, f64)>)> = Vec::new();
        for p in points.iter().filter(|p| fixed(&p.weights)) {
            let key = line_of(&p.weights);
            let point = (x_of(&p.weights), y_of(p));
            match lines.iter_mut().find(|(k, _)| *k == key) {
                Some((_, pts)) => pts.push(point),
                None => lines.push((key, vec![point])),
            }
        }
        for (_, pts) in &mut lines {
            pts.sort_by(|a, c| a.0.total_cmp(&c.0));
        }
        lines
    };
    let success_lines = series(
        |w| w.exploration,
        |w| w.replay,
        &|w| w.risk == b.risk && w.cost == b.cost && w.auth == b.auth,
        |p| p.summary.success_rate,
    );
    let objective_lines = series(
        |w| w.risk,
        |w| w.auth,
        &|w| w.exploration == b.exploration && w.replay == b.replay && w.cost == b.cost,
        |p| p.objective,
    );
    draw_panel(
        &left,
        "success rate vs C (lines: w_R)",
        "C (exploration)",
        "w_R",
        &success_lines,
    )?;
    draw_panel(
        &right,
        "objective vs λ (lines: α)",
        "λ (risk)",
        "α",
        &objective_lines,
    )?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

fn draw_panel(
    area: &Area<'_>,
    caption: &str,
    x_label: &str,
    line_label: &str,
    lines: &[(f64, Vec<(f64, f64)>)],
) -> Result<(), PlotError> {
    let err = |e: &dyn std::fmt::Display| PlotError(e.to_string());
    let xs = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0));
    let ys = lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.1));
    let (x_min, x_max) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let (y_min, y_max) = ys.fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(y), b.max(y)));
    if x_min > x_max {
        return Err(PlotError("nothing to draw".into()));
    }
    let pad = ((y_max - y_min) * 0.1).max(0.01);
    let mut chart = ChartBuilder::on(area)
        .caption(caption, ("sans-serif", 18))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(x_min..x_max.max(x_min + 1e-9), (y_min - pad)..(y_max + pad))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .draw()
        .map_err(|e| err(&e))?;
    for (i, (key, points)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(
                points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?
            .label(format!("{line_label} = {key}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
            .map_err(|e| err(&e))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    Ok(())
}
