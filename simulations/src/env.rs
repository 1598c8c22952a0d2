//! A generated site as an [`Environment`]: the same interface the browser implements.
//!
//! The environment is the world, not a guard: it executes whatever it is asked to, and counts
//! each executed action above the task's ceiling in [`Counters::unsafe_actions`], so that a
//! search that let one through would be caught. Nondeterminism and latency are drawn from a
//! seeded generator, so a run is repeatable.
//!
//! A site's lookup tables (`SiteTables`) are built once and shared by every environment on it.

use crate::site::{SimState, Site, SiteTables};
use forager_node::environment::{Candidate, EnvError, Environment, StateInfo, Step};
use forager_protocol::trajectory::Cost;
use forager_protocol::{Fingerprint, RiskClass};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

/// What the environment saw happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Actions executed, replays included.
    pub executed: u64,
    /// Of which while replaying a prefix.
    pub replayed: u64,
    /// Restores asked for.
    pub restores: u64,
    /// Executed actions above the ceiling.
    pub unsafe_actions: u64,
    /// Actions that landed on the transient error page.
    pub glitches: u64,
    /// Browser milliseconds spent, replays included.
    pub browser_ms: u64,
}

/// A simulated browsing session on one site.
pub struct SimEnvironment {
    site: Arc<Site>,
    tables: Arc<SiteTables>,
    state: SimState,
    rng: ChaCha8Rng,
    ceiling: RiskClass,
    counters: Counters,
}

impl SimEnvironment {
    /// A session on `site`; `seed` drives nondeterminism and latency, `ceiling` is what counts
    /// as unsafe.
    pub fn new(site: Arc<Site>, seed: u64, ceiling: RiskClass) -> SimEnvironment {
        let tables = site.tables();
        let state = site.start();
        SimEnvironment {
            rng: ChaCha8Rng::seed_from_u64(site.seed ^ seed.rotate_left(17)),
            tables,
            site,
            state,
            ceiling,
            counters: Counters::default(),
        }
    }

    /// What happened so far.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The site.
    pub fn site(&self) -> &Arc<Site> {
        &self.site
    }

    /// The current state.
    pub fn state(&self) -> SimState {
        self.state
    }

    fn info(&self, state: SimState) -> StateInfo {
        let page = &self.tables.pages[state.page as usize];
        StateInfo {
            fingerprint: page.fingerprints[usize::from(state.logged_in)],
            success: self.site.is_success(state),
            dead_end: false,
            hidden_change: false,
            rolled: false,
            wordless: false,
            value_hint: page.hint,
            auth: page.auth,
            location: page.location,
            // Sites of a family share their page tree: a path is a kind of page.
            page_family: page.location.rotate_left(17),
            logged_in: false,
            session_lost: false,
            session_expired: false,
            transient: page.transient,
        }
    }

    fn step(&mut self, action: u32) -> Result<Step, EnvError> {
        let Some(mut next) = self.tables.transition(&self.site, self.state, action) else {
            return Err(EnvError::TargetMissing(format!(
                "action {action} is not on page {}",
                self.site.pages[self.state.page as usize].path
            )));
        };
        self.counters.executed += 1;
        if self.tables.moves[action as usize].risk > self.ceiling {
            self.counters.unsafe_actions += 1;
        }
        let p = self.site.params.nondeterminism;
        if p > 0.0 && self.rng.random_bool(p) {
            self.counters.glitches += 1;
            next.page = self.site.glitch_page;
        }
        let params = &self.site.params;
        let jitter = if params.latency_jitter_ms > 0 {
            let j = i64::from(params.latency_jitter_ms);
            self.rng.random_range(-j..=j)
        } else {
            0
        };
        let slowness = self.tables.pages[next.page as usize].slowness;
        let ms = ((f64::from(params.latency_ms) * slowness) as i64 + jitter).max(1) as u64;
        self.state = next;
        self.counters.browser_ms += ms;
        Ok(Step {
            state: self.info(next),
            cost: Cost {
                browser_ms: ms,
                tokens: 0,
            },
            executed: 1,
        })
    }
}

impl Environment for SimEnvironment {
    type Action = u32;

    async fn observe(&mut self) -> Result<StateInfo, EnvError> {
        Ok(self.info(self.state))
    }

    async fn candidates(&mut self) -> Result<Vec<Candidate<u32>>, EnvError> {
        let listed = &self.tables.pages[self.state.page as usize].candidates;
        Ok(self.tables.candidates[listed.start as usize..listed.end as usize].to_vec())
    }

    async fn act(&mut self, action: &u32) -> Result<Step, EnvError> {
        self.step(*action)
    }

    async fn restore(&mut self, prefix: &[(u32, Fingerprint)]) -> Result<Step, EnvError> {
        self.counters.restores += 1;
        self.state = self.site.start();
        let mut cost = Cost::default();
        for (i, (action, expected)) in prefix.iter().enumerate() {
            let step = self.step(*action)?;
            self.counters.replayed += 1;
            cost = cost.plus(step.cost);
            if step.state.fingerprint != *expected {
                return Err(EnvError::Diverged {
                    step: i,
                    expected: *expected,
                    found: step.state.fingerprint,
                });
            }
        }
        Ok(Step {
            state: self.info(self.state),
            cost,
            executed: prefix.len() as u32,
        })
    }

    fn describe(&self, action: &u32) -> String {
        self.site
            .actions
            .get(*action as usize)
            .map_or_else(|| format!("action {action}"), |a| a.label.clone())
    }
}
