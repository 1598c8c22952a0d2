//! Simulated sites for the real cluster: `forager node --sim SEED` searches a generated site
//! instead of driving Chromium, through the same worker, queen and network code.
//!
//! Simulated actions travel the wire as [`forager_protocol::Action`] clicks whose CSS locator
//! names the action (`#sim-action-<id>`). With `realtime`, every executed action (replays
//! included) sleeps its simulated latency, so wall-clock speedups are measurable.

use crate::env::SimEnvironment;
use crate::site::{Site, SiteParams, generate};
use forager_node::environment::WriteEvidence;
use forager_node::environment::{Candidate, EnvError, Environment, StateInfo, Step};
use forager_node::factory::EnvFactory;
use forager_protocol::result::NetworkSummary;
use forager_protocol::wire::PageInfo;
use forager_protocol::{Action, Fingerprint, Locator, RiskClass, Target, TaskSpec};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PREFIX: &str = "#sim-action-";

/// The wire form of a simulated action.
pub fn to_action(site: &Site, id: u32) -> Action {
    let def = &site.actions[id as usize];
    Action::Click {
        target: Target {
            locators: vec![Locator::Css(format!("{PREFIX}{id}"))],
            role: def.role.to_owned(),
            name: def.label.clone(),
            sends: Default::default(),
        },
    }
}

/// The simulated action a wire action names.
pub fn from_action(action: &Action) -> Option<u32> {
    let Action::Click { target } = action else {
        return None;
    };
    target.locators.iter().find_map(|l| match l {
        Locator::Css(css) => css.strip_prefix(PREFIX)?.parse().ok(),
        _ => None,
    })
}

/// A simulated site speaking [`forager_protocol::Action`].
pub struct SimBrowser {
    env: SimEnvironment,
    realtime: bool,
    /// A fixed real time per executed action instead of the site's latency.
    pace: Option<Duration>,
    pages: HashMap<Fingerprint, PageInfo>,
}

impl SimBrowser {
    /// A session on `site`.
    pub fn new(site: Arc<Site>, seed: u64, realtime: bool) -> SimBrowser {
        SimBrowser {
            env: SimEnvironment::new(site, seed, RiskClass::DEFAULT_CEILING),
            realtime,
            pace: None,
            pages: HashMap::new(),
        }
    }

    async fn wait(&self, step: &Step) {
        if let Some(pace) = self.pace {
            tokio::time::sleep(pace).await;
        } else if self.realtime {
            tokio::time::sleep(Duration::from_millis(step.cost.browser_ms)).await;
        }
    }

    fn note_page(&mut self, fingerprint: Fingerprint) {
        let site = self.env.site();
        let page = &site.pages[self.env.state().page as usize];
        self.pages.entry(fingerprint).or_insert_with(|| PageInfo {
            url: format!("sim://{}{}", site.family, page.path),
            title: page.title.clone(),
            verdict: None,
            healed_locator: None,
            healed_by: None,
            // A simulated page's kind is its place in the site.
            family: Some(Fingerprint::of_bytes("sim-family", page.path.as_bytes())),
            heading: Some(page.title.clone()),
            cost_ms: 0,
            value_hint: 0.0,
            why: None,
        });
    }
}

impl Environment for SimBrowser {
    type Action = Action;

    async fn observe(&mut self) -> Result<StateInfo, EnvError> {
        self.env.observe().await
    }

    async fn candidates(&mut self) -> Result<Vec<Candidate<Action>>, EnvError> {
        let site = self.env.site().clone();
        Ok(self
            .env
            .candidates()
            .await?
            .into_iter()
            .map(|c| Candidate {
                action: to_action(&site, c.action),
                prior: c.prior,
                risk: c.risk,
                key: c.key,
                target: c.target,
                refused: None,
                why: Default::default(),
            })
            .collect())
    }

    async fn act(&mut self, action: &Action) -> Result<Step, EnvError> {
        let id = from_action(action)
            .ok_or_else(|| EnvError::TargetMissing(format!("not a simulated action: {action}")))?;
        let step = self.env.act(&id).await?;
        self.wait(&step).await;
        self.note_page(step.state.fingerprint);
        Ok(step)
    }

    async fn restore(&mut self, prefix: &[(Action, Fingerprint)]) -> Result<Step, EnvError> {
        let ids: Vec<(u32, Fingerprint)> = prefix
            .iter()
            .map(|(a, f)| {
                from_action(a)
                    .map(|id| (id, *f))
                    .ok_or_else(|| EnvError::TargetMissing(format!("not a simulated action: {a}")))
            })
            .collect::<Result<_, _>>()?;
        let step = self.env.restore(&ids).await?;
        match self.pace {
            // Every replayed action takes its time.
            Some(pace) => tokio::time::sleep(pace * ids.len().max(1) as u32).await,
            None => self.wait(&step).await,
        }
        self.note_page(step.state.fingerprint);
        Ok(step)
    }

    fn describe(&self, action: &Action) -> String {
        action.label()
    }
}

/// Makes [`SimBrowser`]s: every task is searched on site `index` of batch `seed` (the same
/// site on every node of the cluster).
#[derive(Debug)]
pub struct SimFactory {
    site: Arc<Site>,
    realtime: bool,
    pace: Option<Duration>,
    sessions: Mutex<u64>,
}

impl SimFactory {
    /// A factory for one generated site.
    pub fn new(
        params: &SiteParams,
        seed: u64,
        index: u64,
        realtime: bool,
    ) -> Result<SimFactory, crate::site::ParamError> {
        Ok(SimFactory {
            site: Arc::new(generate(params, seed, index)?),
            realtime,
            pace: None,
            sessions: Mutex::new(0),
        })
    }

    /// Every executed (or replayed) action takes `pace` of real time, whatever the site's
    /// latency: slow nodes for fault tests and cluster benchmarks.
    pub fn with_pace(mut self, pace: Duration) -> SimFactory {
        self.pace = Some(pace);
        self
    }

    /// The site.
    pub fn site(&self) -> &Arc<Site> {
        &self.site
    }
}

impl EnvFactory for SimFactory {
    type Env = SimBrowser;

    fn create(&self, task: &TaskSpec, _for_replay: bool) -> Result<SimBrowser, EnvError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        *sessions += 1;
        let mut browser = SimBrowser::new(
            self.site.clone(),
            task.seed ^ sessions.wrapping_mul(0x9e37_79b9),
            self.realtime,
        );
        browser.pace = self.pace;
        Ok(browser)
    }

    fn step_info(env: &SimBrowser, _before: Fingerprint, after: Fingerprint) -> PageInfo {
        env.pages.get(&after).cloned().unwrap_or_default()
    }

    fn counters(_env: &SimBrowser) -> forager_protocol::wire::BranchCounters {
        // A simulated site restores by replaying its (free) actions: there is no page cache,
        // and its pages are read from tables.
        forager_protocol::wire::BranchCounters::default()
    }

    fn network(_env: &SimBrowser) -> NetworkSummary {
        NetworkSummary::default()
    }

    /// A simulated page has no pixels.
    async fn screenshot(_env: &SimBrowser) -> Option<Vec<u8>> {
        None
    }

    /// A simulated page is its identity: its digest is the evidence.
    fn evidence(env: &SimBrowser, after: Fingerprint) -> Option<WriteEvidence> {
        env.pages.contains_key(&after).then(|| WriteEvidence {
            page_digest: forager_protocol::digest::Digest32::of(&after.0),
            screenshot: None,
        })
    }

    async fn after_check(
        _env: &mut SimBrowser,
        _check: &forager_protocol::task::AfterCheck,
    ) -> Result<bool, EnvError> {
        Err(EnvError::Other(
            "a simulated site has no pages to load by URL".into(),
        ))
    }

    /// A simulated site keeps no state between sessions: nothing to reset.
    async fn reset_site(_env: &mut SimBrowser) -> Result<(), EnvError> {
        Ok(())
    }
}

/// The task a simulated site stands for (the URL is nominal; success is the site's goal page).
pub fn sim_task(site: &Site, budget: u32) -> TaskSpec {
    let mut task = TaskSpec::new(
        format!("http://sim.invalid/{:016x}", site.family),
        site.goal.clone(),
        vec![forager_protocol::predicate::SuccessPredicate::UrlMatches(
            format!(
                "^sim://.*{}$",
                regex_escape(&site.pages[site.goal_page as usize].path)
            ),
        )],
    );
    task.budget.actions = budget;
    task.seed = site.seed;
    task
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_round_trip_through_the_wire_form() {
        let site = generate(&SiteParams::default(), 1, 0).expect("valid");
        for id in [0u32, 5, 42] {
            assert_eq!(from_action(&to_action(&site, id)), Some(id));
        }
        assert_eq!(from_action(&Action::Back), None);
    }
}
