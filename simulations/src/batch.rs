//! Batches: one strategy over many generated sites, summarised.
//!
//! Sites are searched in order; with the replay memory on, MCTS remembers each solved site's
//! path for its family, so later sites of the family get a replay bonus (and only from
//! earlier ones: nothing leaks from the future).

use crate::site::{ParamError, Site, SiteParams, generate};
use crate::strategies::{RunConfig, SiteOutcome, Strategy, family_name, remember, run_site};
use forager_node::memory::{FlatMemory, GoalEmbedder, ReplayMemory, TaskMemory};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// A batch to run.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchConfig {
    /// Number of sites.
    pub sites: u32,
    /// Seed of the sites (and of the searches, combined with each site).
    pub seed: u64,
    /// Generator parameters.
    pub params: SiteParams,
    /// The strategy.
    pub strategy: Strategy,
    /// How each site is searched.
    pub run: RunConfig,
    /// Whether MCTS keeps a replay memory across the batch.
    pub replay_memory: bool,
}

/// The summary of a batch: what `forager simulate --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchSummary {
    /// The strategy.
    pub strategy: Strategy,
    /// Sites searched.
    pub sites: u32,
    /// Batch seed.
    pub seed: u64,
    /// Action budget per site.
    pub budget: u32,
    /// Sites solved.
    pub solved: u32,
    /// Solved over searched.
    pub success_rate: f64,
    /// Median length of the path found, over solved sites.
    pub median_actions: Option<f64>,
    /// Median optimal path length, over the same solved sites.
    pub median_optimal_actions: Option<f64>,
    /// Mean of found/optimal path length, over solved sites.
    pub mean_path_ratio: Option<f64>,
    /// Executed actions above the risk ceiling, counted by the environments (must be 0).
    pub unsafe_actions: u64,
    /// Search iterations per second of search time (MCTS jobs; for baselines, actions).
    pub iterations_per_sec: f64,
    /// Simulated actions (replays included) per second of search time.
    pub simulated_actions_per_sec: f64,
    /// Budgeted actions spent, all sites.
    pub actions: u64,
    /// Actions replayed to restore states, all sites.
    pub replayed_actions: u64,
    /// Actions that landed on a transient error page.
    pub glitches: u64,
    /// Actions reported as needing approval (MCTS).
    pub approvals: u64,
    /// Mean path cost in ms over solved sites.
    pub mean_path_cost_ms: Option<f64>,
    /// Share of solved paths that pass a login.
    pub login_share: Option<f64>,
    /// Mean over solved paths of their highest risk class, normalised to [0, 1].
    pub mean_path_risk: Option<f64>,
    /// Mean browser time a search spent per site (replays included), in ms.
    pub mean_search_ms: f64,
    /// Failures by reason.
    pub failures: BTreeMap<String, u32>,
    /// Seconds spent searching (site generation excluded).
    pub search_secs: f64,
}

/// Median of values (the mean of the middle two for an even count).
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Generates the sites of a batch.
pub fn generate_sites(config: &BatchConfig) -> Result<Vec<Arc<Site>>, ParamError> {
    config.params.validate()?;
    (0..u64::from(config.sites))
        .map(|index| generate(&config.params, config.seed, index).map(Arc::new))
        .collect()
}

/// Runs a batch; `progress` is called after each site with (done, total).
pub fn run_batch(
    config: &BatchConfig,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<BatchSummary, ParamError> {
    let sites = generate_sites(config)?;
    Ok(run_sites(config, &sites, progress))
}

/// Runs a batch on sites generated beforehand (so a sweep generates them once).
pub fn run_sites(
    config: &BatchConfig,
    sites: &[Arc<Site>],
    progress: &mut dyn FnMut(u32, u32),
) -> BatchSummary {
    let memory = FlatMemory::default();
    let mut outcomes: Vec<SiteOutcome> = Vec::with_capacity(sites.len());
    for (index, site) in sites.iter().enumerate() {
        let run = RunConfig {
            seed: config.seed ^ (index as u64).wrapping_mul(0x2545_f491_4f6c_dd1d),
            ..config.run.clone()
        };
        // The successes of the family's earlier sites, recalled for this site's goal.
        let shared: Option<Arc<dyn ReplayMemory + Send + Sync>> = (config.replay_memory
            && config.strategy == Strategy::Mcts)
            .then(|| GoalEmbedder::Ngram.embed(&site.goal).ok())
            .flatten()
            .map(|goal| {
                Arc::new(TaskMemory::recall(&memory, &family_name(site), &goal))
                    as Arc<dyn ReplayMemory + Send + Sync>
            });
        let outcome = run_site(site, config.strategy, &run, shared);
        if config.replay_memory
            && let Some(path) = &outcome.path
        {
            remember(&memory, site, path);
        }
        outcomes.push(outcome);
        progress(index as u32 + 1, sites.len() as u32);
    }
    summarise(config, &outcomes)
}

/// Summarises outcomes.
pub fn summarise(config: &BatchConfig, outcomes: &[SiteOutcome]) -> BatchSummary {
    let solved: Vec<&SiteOutcome> = outcomes.iter().filter(|o| o.solved()).collect();
    let mut found: Vec<f64> = solved
        .iter()
        .filter_map(|o| o.path.as_ref().map(|p| p.len() as f64))
        .collect();
    let mut optimal: Vec<f64> = solved
        .iter()
        .filter_map(|o| o.optimal.map(f64::from))
        .collect();
    let ratios: Vec<f64> = solved
        .iter()
        .filter_map(|o| {
            let len = o.path.as_ref()?.len() as f64;
            let best = f64::from(o.optimal?);
            (best > 0.0).then(|| len / best)
        })
        .collect();
    let costs: Vec<f64> = solved.iter().map(|o| o.path_cost_ms as f64).collect();
    let logins: Vec<f64> = solved
        .iter()
        .map(|o| if o.path_logs_in { 1.0 } else { 0.0 })
        .collect();
    let risks: Vec<f64> = solved.iter().map(|o| o.path_risk.normalised()).collect();
    let search_ms: Vec<f64> = outcomes
        .iter()
        .map(|o| o.counters.browser_ms as f64)
        .collect();
    let secs: f64 = outcomes.iter().map(|o| o.elapsed.as_secs_f64()).sum();
    let iterations: u64 = outcomes.iter().map(|o| o.iterations).sum();
    let executed: u64 = outcomes.iter().map(|o| o.counters.executed).sum();
    let mut failures = BTreeMap::new();
    for outcome in outcomes {
        if let Some(reason) = outcome.failure.filter(|_| !outcome.solved()) {
            *failures.entry(reason.as_str().to_owned()).or_insert(0) += 1;
        }
    }
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    BatchSummary {
        strategy: config.strategy,
        sites: outcomes.len() as u32,
        seed: config.seed,
        budget: config.run.budget,
        solved: solved.len() as u32,
        success_rate: if outcomes.is_empty() {
            0.0
        } else {
            solved.len() as f64 / outcomes.len() as f64
        },
        median_actions: median(&mut found),
        median_optimal_actions: median(&mut optimal),
        mean_path_ratio: mean(&ratios),
        unsafe_actions: outcomes.iter().map(|o| o.counters.unsafe_actions).sum(),
        iterations_per_sec: per_sec(iterations),
        simulated_actions_per_sec: per_sec(executed),
        actions: outcomes.iter().map(|o| u64::from(o.actions)).sum(),
        replayed_actions: outcomes.iter().map(|o| o.counters.replayed).sum(),
        glitches: outcomes.iter().map(|o| o.counters.glitches).sum(),
        approvals: outcomes.iter().map(|o| o.approvals as u64).sum(),
        mean_path_cost_ms: mean(&costs),
        login_share: mean(&logins),
        mean_path_risk: mean(&risks),
        mean_search_ms: mean(&search_ms).unwrap_or(0.0),
        failures,
        search_secs: secs,
    }
}

/// Wall-clock helper for callers that time whole batches.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&mut []), None);
        assert_eq!(median(&mut [3.0]), Some(3.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
    }
}
