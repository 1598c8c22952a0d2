//! The search against its baselines on generated sites, and the simulator's own honesty.

use forager_node::environment::Environment;
use forager_protocol::RiskClass;
use forager_simulations::batch::{BatchConfig, BatchSummary, run_batch};
use forager_simulations::env::SimEnvironment;
use forager_simulations::site::{Effect, SiteParams, generate};
use forager_simulations::strategies::{RunConfig, Strategy};
use std::sync::Arc;

fn batch(strategy: Strategy, sites: u32, seed: u64, params: SiteParams) -> BatchSummary {
    let config = BatchConfig {
        sites,
        seed,
        params,
        strategy,
        run: RunConfig::default(),
        replay_memory: true,
    };
    run_batch(&config, &mut |_, _| {}).expect("valid parameters")
}

#[test]
fn mcts_solves_more_sites_than_every_baseline_with_near_optimal_paths() {
    let params = SiteParams::default();
    let mcts = batch(Strategy::Mcts, 40, 3, params.clone());
    for baseline in [Strategy::Random, Strategy::Bfs, Strategy::Greedy] {
        let other = batch(baseline, 40, 3, params.clone());
        assert!(
            mcts.solved > other.solved,
            "mcts solved {} but {baseline} solved {}",
            mcts.solved,
            other.solved
        );
        assert_eq!(
            other.unsafe_actions, 0,
            "{baseline} executed an unsafe action"
        );
    }
    assert_eq!(mcts.unsafe_actions, 0);
    let found = mcts.median_actions.expect("mcts solved some sites");
    let optimal = mcts.median_optimal_actions.expect("optimal known");
    assert!(
        found <= 1.5 * optimal,
        "median path {found} vs optimal {optimal}"
    );
    assert!(mcts.approvals > 0, "traps were offered and refused");
}

#[test]
fn the_same_seed_gives_the_same_batch() {
    let params = SiteParams {
        nondeterminism: 0.05,
        ..SiteParams::default()
    };
    let strip = |mut s: BatchSummary| {
        s.iterations_per_sec = 0.0;
        s.simulated_actions_per_sec = 0.0;
        s.search_secs = 0.0;
        s
    };
    let first = strip(batch(Strategy::Mcts, 10, 5, params.clone()));
    let second = strip(batch(Strategy::Mcts, 10, 5, params));
    assert_eq!(first, second);
    assert!(first.glitches > 0, "the nondeterminism was exercised");
}

#[test]
fn the_environment_counts_unsafe_actions_it_executes() {
    // A zero in `unsafe_actions` means something only if executing one would count.
    let site = Arc::new(generate(&SiteParams::default(), 9, 0).expect("valid"));
    let (trap_page, trap) = site
        .pages
        .iter()
        .enumerate()
        .find_map(|(p, page)| {
            page.actions
                .iter()
                .find(|&&a| matches!(site.actions[a as usize].effect, Effect::Irreversible(_)))
                .map(|&a| (p as u32, a))
        })
        .expect("the site has traps");
    assert!(site.actions[trap as usize].risk > RiskClass::DEFAULT_CEILING);
    // Walk to the trap's page by breadth-first search over links, then press it.
    let path = path_to(&site, trap_page).expect("reachable");
    let mut env = SimEnvironment::new(site.clone(), 0, RiskClass::DEFAULT_CEILING);
    futures::executor::block_on(async {
        env.restore(&[]).await.expect("start");
        for action in path {
            env.act(&action).await.expect("link works");
        }
        env.act(&trap).await.expect("trap works");
    });
    assert_eq!(env.counters().unsafe_actions, 1);
}

fn path_to(site: &forager_simulations::site::Site, page: u32) -> Option<Vec<u32>> {
    use std::collections::{HashMap, VecDeque};
    let start = site.start();
    let mut came: HashMap<_, (forager_simulations::site::SimState, u32)> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    let mut seen = std::collections::HashSet::from([start]);
    while let Some(state) = queue.pop_front() {
        if state.page == page {
            let mut path = Vec::new();
            let mut cursor = state;
            while let Some(&(prev, action)) = came.get(&cursor) {
                path.push(action);
                cursor = prev;
            }
            path.reverse();
            return Some(path);
        }
        for &a in &site.pages[state.page as usize].actions {
            if site.actions[a as usize].risk > RiskClass::DEFAULT_CEILING {
                continue;
            }
            if let Some(next) = site.transition(state, a)
                && seen.insert(next)
            {
                came.insert(next, (state, a));
                queue.push_back(next);
            }
        }
    }
    None
}

#[test]
fn heavy_nondeterminism_is_survived_by_retries() {
    let params = SiteParams {
        nondeterminism: 0.10,
        ..SiteParams::default()
    };
    let mcts = batch(Strategy::Mcts, 20, 11, params);
    assert!(mcts.glitches > 20, "{}", mcts.glitches);
    assert!(mcts.success_rate >= 0.6, "{}", mcts.success_rate);
    assert_eq!(
        mcts.failures.get("approval_required"),
        None,
        "{:?}",
        mcts.failures
    );
}
