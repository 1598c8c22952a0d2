//! The Chromium environment under faults: a browser killed mid-search, and the page cache's
//! refusal to replay writes; controlled timers; a state generated in script restored alike by
//! replay and by walking a live tab. Library level, real Chromium, fixture sites on 127.0.0.1.

use forager_node::Environment;
use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumEnv, EnvOptions, kill_group};
use forager_node::environment::{Candidate, EnvError, StateInfo, Step};
use forager_node::search::{Finish, NoObserver, SearchConfig, run};
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::{Action, Fingerprint, TaskSpec};
use forager_tests::sites;
use forager_tests::{assert_no_chromium_left, assert_reaped, killing_on_purpose, unique_prefix};
use std::sync::Arc;

/// Delegates to a Chromium environment, and kills the whole browser on the n-th action.
struct KillOnAct {
    inner: ChromiumEnv,
    pool: BrowserPool,
    kill_on: u32,
    acts: u32,
    killed_pid: Option<u32>,
}

impl Environment for KillOnAct {
    type Action = Action;

    async fn observe(&mut self) -> Result<StateInfo, EnvError> {
        self.inner.observe().await
    }

    async fn candidates(&mut self) -> Result<Vec<Candidate<Action>>, EnvError> {
        self.inner.candidates().await
    }

    async fn act(&mut self, action: &Action) -> Result<Step, EnvError> {
        self.acts += 1;
        if self.acts == self.kill_on
            && let Some(pid) = self.pool.pid().await
        {
            killing_on_purpose(pid);
            kill_group(pid);
            self.killed_pid = Some(pid);
        }
        self.inner.act(action).await
    }

    async fn restore(&mut self, prefix: &[(Action, Fingerprint)]) -> Result<Step, EnvError> {
        self.inner.restore(prefix).await
    }

    async fn recover(&mut self) -> Result<(), EnvError> {
        self.inner.recover().await
    }

    fn describe(&self, action: &Action) -> String {
        self.inner.describe(action)
    }
}

/// From the configuration section, two levels above the page: a search of about 7 actions
/// (66 from the index, past its decoys). The test is about the crash, not the search.
fn docs_task(base: &str) -> TaskSpec {
    let mut task = TaskSpec::new(
        format!("{base}/docs/configuration"),
        "Find how to configure the frobnicator timeout",
        vec![SuccessPredicate::UrlMatches(
            "/docs/configuration/frobnicator/timeout$".into(),
        )],
    );
    task.budget.actions = 150;
    task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_browser_is_restarted_and_the_search_still_passes() {
    let docs = sites::serve(sites::docs()).await;
    let prefix = unique_prefix("crash");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let task = docs_task(&docs.base);
    let env = ChromiumEnv::new(pool.clone(), Arc::new(task.clone()), EnvOptions::default())
        .expect("valid task");
    let mut workers = [KillOnAct {
        inner: env,
        pool: pool.clone(),
        kill_on: 2,
        acts: 0,
        killed_pid: None,
    }];
    let (report, _) = run(
        &mut workers,
        SearchConfig::for_task(&task),
        None,
        &mut NoObserver,
    )
    .await
    .expect("the search starts");
    assert_eq!(report.finish, Finish::Solved, "{:?}", report.metrics);
    assert!(report.metrics.crashes >= 1, "{:?}", report.metrics);
    let killed = workers[0].killed_pid.expect("the browser was killed");
    let restarted = pool.pid().await.expect("a browser runs again");
    assert_ne!(killed, restarted);
    workers[0].inner.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
    assert_reaped(killed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_never_replayed_on_a_site_not_declared_resettable() {
    let shop = sites::serve(sites::shop()).await;
    let prefix = unique_prefix("replay");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let mut task = TaskSpec::new(
        shop.url("/product/x1-carbon"),
        "Add the ThinkPad X1 Carbon to the cart",
        vec![SuccessPredicate::TextPresent("never".into())],
    );
    task.validate().expect("valid");
    let options = EnvOptions {
        reuse_pages: false,
        ..EnvOptions::default()
    };
    let mut env =
        ChromiumEnv::new(pool.clone(), Arc::new(task.clone()), options).expect("valid task");
    env.restore(&[]).await.expect("the product page loads");
    let add = env
        .candidates()
        .await
        .expect("candidates")
        .into_iter()
        .find(|c| c.action.label().contains("Add to cart"))
        .expect("an add-to-cart button");
    assert_eq!(add.risk.level(), 3);
    let step = env.act(&add.action).await.expect("adds to the cart");
    let prefix_with_write = vec![(add.action.clone(), step.state.fingerprint)];
    let refused = env.restore(&prefix_with_write).await;
    assert!(
        matches!(refused, Err(EnvError::ReplayUnsafe(_))),
        "{refused:?}"
    );
    // Declared resettable, the same replay is allowed.
    task.resettable = true;
    let options = EnvOptions {
        reuse_pages: false,
        ..EnvOptions::default()
    };
    let mut resettable = ChromiumEnv::new(pool.clone(), Arc::new(task), options).expect("valid");
    resettable.restore(&[]).await.expect("loads");
    let candidates = resettable.candidates().await.expect("candidates");
    let add = candidates
        .into_iter()
        .find(|c| c.action.label().contains("Add to cart"))
        .expect("button");
    let step = resettable.act(&add.action).await.expect("adds");
    resettable
        .restore(&[(add.action.clone(), step.state.fingerprint)])
        .await
        .expect("replay allowed");
    env.close().await;
    resettable.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// A tab of a fresh context of `pool`, at `url`, with `seed`.
async fn open_tab(pool: &BrowserPool, url: &str, seed: u64) -> forager_node::browser::Tab {
    use forager_node::browser::{NetworkLog, OriginGuard, Tab, Timeouts};
    let (browser, _) = pool.browser().await.expect("Chromium starts");
    let guard = Arc::new(OriginGuard::new([url]));
    let network = Arc::new(std::sync::Mutex::new(NetworkLog::default()));
    let tab = Tab::open(browser, guard, network, seed, None, Timeouts::default())
        .await
        .expect("a tab");
    tab.navigate(url).await.expect("loads");
    tab
}

/// Opens `url` in a fresh context of `pool` with `seed`, waits for the element `#id` to appear,
/// and returns its text and the page's fingerprint then.
async fn reading(
    pool: &BrowserPool,
    url: &str,
    seed: u64,
    ids: &[&str],
) -> (Vec<String>, Fingerprint) {
    let mut tab = open_tab(pool, url, seed).await;
    let script = format!(
        "{:?}.map((id) => document.getElementById(id)).every(Boolean)",
        ids
    );
    let mut present = false;
    for _ in 0..200 {
        if tab.evaluate(script.clone(), false).await == Ok(serde_json::Value::Bool(true)) {
            present = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(present, "the page's timers never ran");
    let mut texts = Vec::new();
    for id in ids {
        let text = tab
            .evaluate(
                format!("document.getElementById({id:?}).textContent"),
                false,
            )
            .await
            .expect("text");
        texts.push(text.as_str().unwrap_or_default().to_owned());
    }
    let fingerprint = tab.observation().await.expect("observes").fingerprint;
    tab.close().await;
    (texts, fingerprint)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timers_and_clocks_are_controlled_so_two_loads_agree() {
    let site = sites::serve(sites::random()).await;
    let prefix = unique_prefix("timers");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let url = site.url("/timers");
    let ids = ["reading", "frame"];
    let (first, first_fingerprint) = reading(&pool, &url, 3, &ids).await;
    let (second, second_fingerprint) = reading(&pool, &url, 3, &ids).await;
    // Seven 7 ms ticks fit before the 50 ms timeout; the clocks read exactly the virtual time
    // (one microsecond per reading: the timeout was set two readings after t0, so it is due at
    // t0 + 50.002); a frame is 16 ms. Real timers would give other, varying numbers.
    assert_eq!(
        first,
        vec![
            "ticks 7, waited 50.002 ms, date +50".to_owned(),
            "frame 16.000".to_owned()
        ]
    );
    assert_eq!(first, second);
    assert_eq!(first_fingerprint, second_fingerprint);
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// Two pages with the same controls and different text are two states (one email open or
/// another: before, the second was pruned as a transposition of the first); a counter's digits
/// changing is not a new state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_text_tells_apart_pages_with_the_same_controls() {
    let site = sites::serve(sites::dynamic()).await;
    let prefix = unique_prefix("text-states");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let mut tab = open_tab(&pool, &site.url("/read-to-top"), 1).await;
    // A second control, so the page's application (the box) is told from what sits beside it.
    tab.evaluate(
        "(() => { const b = document.createElement('button'); b.textContent = 'Cancel'; \
         document.getElementById('box').appendChild(b); return true; })()"
            .to_string(),
        false,
    )
    .await
    .expect("adds a control");
    let write = |id: &str, parent: &str, text: &str| {
        format!(
            "(() => {{ const p = document.getElementById({id:?}) || document.querySelector({parent:?})\
             .appendChild(Object.assign(document.createElement('p'), {{id: {id:?}}})); \
             p.textContent = {text:?}; return true; }})()"
        )
    };
    let mut fingerprints = Vec::new();
    for (id, parent, text) in [
        ("shown", "#box", "From Wilhelmina: 3 new"),
        ("shown", "#box", "From Marlena: 3 new"),
        ("shown", "#box", "From Marlena: 14 new"),
        ("score", "body", "Last reward: -1.00"),
        ("score", "body", "Last reward: - Episodes done: 4"),
    ] {
        tab.evaluate(write(id, parent, text), false)
            .await
            .expect("writes");
        fingerprints.push(tab.observation().await.expect("observes").fingerprint);
    }
    assert_ne!(
        fingerprints[0], fingerprints[1],
        "another sender, another state"
    );
    assert_eq!(
        fingerprints[1], fingerprints[2],
        "a counter is no new state"
    );
    assert_eq!(
        fingerprints[2], fingerprints[3],
        "a scoreboard beside the application is no part of its state"
    );
    assert_eq!(
        fingerprints[3], fingerprints[4],
        "a scoreboard that changes beside the application is no new state"
    );
    tab.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_menu_item_and_the_box_around_it_are_one_control() {
    let site = sites::serve(sites::dynamic()).await;
    let prefix = unique_prefix("menu");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let mut task = TaskSpec::new(
        site.url("/menu"),
        "Click on the item labeled \"Prev\".",
        vec![SuccessPredicate::JavaScript("window.REWARD === 1".into())],
    );
    task.resettable = true;
    task.validate().expect("valid");
    let mut env =
        ChromiumEnv::new(pool.clone(), Arc::new(task), EnvOptions::default()).expect("valid");
    env.restore(&[]).await.expect("loads");
    let candidates = env.candidates().await.expect("candidates");
    for name in ["Save", "Prev", "Zoom In"] {
        let clicks = candidates
            .iter()
            .filter(|c| matches!(&c.action, Action::Click { target } if target.name == name))
            .count();
        assert_eq!(clicks, 1, "one click on {name:?}");
    }
    let prev = candidates
        .iter()
        .find(|c| matches!(&c.action, Action::Click { target } if target.name == "Prev"))
        .expect("a click on Prev");
    let step = env.act(&prev.action).await.expect("clicks");
    assert!(step.state.success, "the menu item's own handler ran");
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// A browser and an environment on one of `sites::dynamic`'s sandboxed pages (a resettable
/// task that succeeds when the page sets `window.REWARD`), with the profile prefix to check.
async fn widget_env(
    site: &sites::Fixture,
    path: &str,
    goal: &str,
) -> (BrowserPool, ChromiumEnv, String) {
    let mut task = TaskSpec::new(
        site.url(path),
        goal,
        vec![SuccessPredicate::JavaScript("window.REWARD === 1".into())],
    );
    task.resettable = true;
    env_for(task, path.trim_start_matches('/'))
}

/// A browser (profiles named after `name`) and an environment for `task`, with the profile
/// prefix to check.
fn env_for(task: TaskSpec, name: &str) -> (BrowserPool, ChromiumEnv, String) {
    task.validate().expect("valid");
    let prefix = unique_prefix(name);
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let env = ChromiumEnv::new(pool.clone(), Arc::new(task), EnvOptions::default()).expect("valid");
    (pool, env, prefix)
}

/// A click on the button `css` finds.
fn click_css(css: &str) -> Action {
    Action::Click {
        target: forager_protocol::Target {
            locators: vec![forager_protocol::Locator::Css(css.into())],
            role: "button".into(),
            name: css.into(),
            sends: Default::default(),
        },
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_the_page_refuses_is_no_change_and_one_it_remembers_is() {
    let site = sites::serve(sites::dynamic()).await;
    let (pool, mut env, prefix) = widget_env(&site, "/board", "Fire once armed").await;
    let start = env.restore(&[]).await.expect("loads").state;
    let marked = env
        .act(&click_css(".cell"))
        .await
        .expect("marks a cell")
        .state;
    assert_ne!(
        marked.fingerprint, start.fingerprint,
        "a marked cell is a new state"
    );
    let again = env
        .act(&click_css(".cell"))
        .await
        .expect("clicks it again")
        .state;
    assert_eq!(again.fingerprint, marked.fingerprint);
    assert!(
        !again.hidden_change,
        "the cell's handler answered false: it refused the click"
    );
    let armed = env.act(&click_css("#arm")).await.expect("arms").state;
    assert_eq!(armed.fingerprint, marked.fingerprint, "nothing to see");
    assert!(armed.hidden_change, "but the page remembers it");
    assert!(!armed.rolled, "its handler drew no random number");
    let fired = env.act(&click_css("#fire")).await.expect("fires").state;
    assert!(fired.success);
    env.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_whose_handler_draws_a_random_number_is_a_roll() {
    let site = sites::serve(sites::dynamic()).await;
    let goal = "Roll the die until it shows a six, then press Submit";
    let (pool, mut env, prefix) = widget_env(&site, "/dice", goal).await;
    let start = env.restore(&[]).await.expect("loads").state;
    let first = env.act(&click_css("#roll")).await.expect("rolls").state;
    assert_ne!(first.fingerprint, start.fingerprint, "the face says so");
    let second = env
        .act(&click_css("#roll"))
        .await
        .expect("rolls again")
        .state;
    assert_eq!(second.fingerprint, first.fingerprint, "the same face");
    assert!(second.hidden_change && second.rolled, "{second:?}");
    env.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// The names of the page's controls, in document order: what generated content looks like.
fn control_names(env: &ChromiumEnv) -> Vec<String> {
    env.observation()
        .expect("a page")
        .elements
        .iter()
        .map(|e| e.name.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_state_is_restored_alike_by_replay_and_by_walking_a_live_tab() {
    let site = sites::serve(sites::dynamic()).await;
    let prefix = unique_prefix("generated");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let task = |seed: u64| {
        let mut task = TaskSpec::new(
            site.url("/overlay"),
            "Click the \"Blue\" button",
            vec![SuccessPredicate::JavaScript("window.REWARD === 1".into())],
        );
        task.seed = seed;
        task.resettable = true;
        task.validate().expect("valid");
        Arc::new(task)
    };
    // The overlay's click generates four buttons in an order drawn from Math.random.
    // No page cache: the tab left at the start is walked forward by replaying on it.
    let walk_only = EnvOptions {
        cache_capacity: 0,
        ..EnvOptions::default()
    };
    let mut live = ChromiumEnv::new(pool.clone(), task(5), walk_only).expect("valid");
    live.restore(&[]).await.expect("loads");
    let begin = live
        .candidates()
        .await
        .expect("candidates")
        .into_iter()
        .find(|c| c.action.label() == "click \"Begin\"")
        .expect("the overlay");
    let generated = live.act(&begin.action).await.expect("generates").state;
    let order = control_names(&live);
    assert_eq!(order.len(), 4, "{order:?}");
    let path = vec![(begin.action.clone(), generated.fingerprint)];

    // Back to the start: a generated page is no history entry, so the tab cannot go back; a
    // fresh context replays the empty prefix. Then forward again by walking that live tab.
    let stats = live.stats();
    live.restore(&[]).await.expect("back at the start");
    let walked = live.restore(&path).await.expect("walked forward").state;
    let after = live.stats();
    assert_eq!(
        after.back_hits, stats.back_hits,
        "no history back over a generated page"
    );
    assert_eq!(after.cache_hits, stats.cache_hits + 1, "{after:?}");
    assert_eq!(
        after.replayed_actions,
        stats.replayed_actions + 1,
        "{after:?}"
    );
    assert_eq!(walked.fingerprint, generated.fingerprint);
    assert_eq!(control_names(&live), order);

    // By replay alone, in a fresh context: the same generated state.
    let mut replayed_env = ChromiumEnv::new(
        pool.clone(),
        task(5),
        EnvOptions {
            reuse_pages: false,
            ..EnvOptions::default()
        },
    )
    .expect("valid");
    let replayed = replayed_env.restore(&path).await.expect("replayed").state;
    assert_eq!(replayed_env.stats().cache_misses, 1);
    assert_eq!(replayed.fingerprint, generated.fingerprint);
    assert_eq!(control_names(&replayed_env), order);

    // Another seed draws another order: the state is generated, and the seed is what fixes it.
    let mut other = ChromiumEnv::new(pool.clone(), task(6), EnvOptions::default()).expect("valid");
    other.restore(&[]).await.expect("loads");
    other.act(&begin.action).await.expect("generates");
    assert_ne!(control_names(&other), order);

    for env in [&mut live, &mut replayed_env, &mut other] {
        env.close().await;
    }
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// A slider with no ARIA is moved by the keyboard to a value, read back from the number that
/// moves with it (in the slider's own steps); a value it cannot take is a named failure, and
/// two moves to one value are one state.
/// Icons a page adds after it has loaded are waited for before the page is looked at: a look
/// before they are in sees another page than a replay, which has them from the cache at once
/// (MiniWoB++'s order-food was pruned as nondeterministic). And an item carries what its icons
/// say.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_a_page_adds_are_waited_for_and_their_words_are_their_items() {
    let site = sites::serve(sites::dynamic()).await;
    let prefix = unique_prefix("images");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let mut tab = open_tab(&pool, &site.url("/dishes"), 1).await;
    tab.settle().await.expect("settles");
    let observation = tab.observation().await.expect("observes");
    let icons = observation
        .snapshot
        .iter()
        .filter(|line| line.starts_with("img "))
        .count();
    assert_eq!(icons, 8, "every icon is in: {:#?}", observation.snapshot);
    let pluses: Vec<&str> = observation
        .elements
        .iter()
        .filter(|e| e.name == "+")
        .map(|e| e.record.as_str())
        .collect();
    assert_eq!(pluses.len(), 6, "{pluses:?}");
    assert!(pluses[0].starts_with("Caesar Salad") && pluses[0].contains("vegan gluten-free"));
    tab.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slider_is_moved_to_a_value_by_the_number_that_moves_with_it() {
    use forager_protocol::{Locator, Target};
    let site = sites::serve(sites::dynamic()).await;
    let prefix = unique_prefix("slider");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let mut tab = open_tab(&pool, &site.url("/sliders"), 1).await;
    let handle = |id: &str| Target {
        locators: vec![Locator::Css(format!("#{id} > .slider-handle"))],
        role: "slider".into(),
        name: "slider handle".into(),
        sends: Default::default(),
    };
    let shown = |id: &str| format!("document.getElementById('{id}-val').textContent");
    let (a, b) = (handle("a"), handle("b"));

    tab.slide(&a, "a", "-3").await.expect("-3 is in a's range");
    let first = tab.observation().await.expect("observes").fingerprint;
    assert_eq!(tab.evaluate(shown("a"), false).await.expect("reads"), "-3");
    tab.slide(&b, "b", "35")
        .await
        .expect("35 is one of b's steps");
    assert_eq!(tab.evaluate(shown("b"), false).await.expect("reads"), "35");
    let both = tab.observation().await.expect("observes").fingerprint;
    assert_ne!(first, both, "where a slider stands is part of the state");
    tab.slide(&b, "b", "35").await.expect("again");
    let again = tab.observation().await.expect("observes").fingerprint;
    assert_eq!(both, again, "moved to where it stood, it is the same state");

    // Past its end, between its steps, not a number: named failures, never a hang.
    for (target, value) in [(&a, "41"), (&b, "33")] {
        match tab.slide(target, "slider", value).await {
            Err(EnvError::TargetHidden(why)) => assert!(why.contains("stops at"), "{why}"),
            other => panic!("{value}: {other:?}"),
        }
    }
    assert!(matches!(
        tab.slide(&a, "a", "half way").await,
        Err(EnvError::Other(_))
    ));
    tab.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// A form whose POST answers slowly (a login that hashes a password, on a loaded machine):
/// the old page stays loaded and still until the answer commits. The step waits for the page
/// the answer leads to, and reads it, not the form's page or a blank document.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_post_is_waited_for_and_the_page_it_leads_to_is_the_steps_result() {
    let site = sites::serve(sites::dynamic()).await;
    let mut task = TaskSpec::new(
        site.url("/slow-login"),
        "Log in",
        vec![SuccessPredicate::TextPresent("never on these pages".into())],
    );
    task.risk_ceiling = forager_protocol::RiskClass::Destructive;
    let (pool, mut env, prefix) = env_for(task, "slow-post");
    let start = env.restore(&[]).await.expect("loads").state;
    // The page's own candidate: its target says what the click sends (a POST), which the
    // network gate checks against the task's ceiling.
    let submit = env
        .candidates()
        .await
        .expect("candidates")
        .into_iter()
        .map(|c| c.action)
        .find(|a| a.label() == "click \"Log in\"")
        .expect("the form's button is a candidate");
    let began = std::time::Instant::now();
    let after = env.act(&submit).await.expect("posts").state;
    assert!(
        began.elapsed().as_millis() >= u128::from(sites::SLOW_POST_MS),
        "the step waited for the answer"
    );
    assert_ne!(
        after.fingerprint, start.fingerprint,
        "the answer's page is a new state"
    );
    let names = control_names(&env);
    assert!(
        names.iter().any(|n| n == "Groups") && names.iter().any(|n| n == "Users"),
        "the page the POST led to is read: {names:?}"
    );
    env.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// A single-page app's shell ("Loading…") is complete and still while its data is on the
/// way: the page is read once the requests its script sent (fetch or XMLHttpRequest) have
/// been answered, not as the shell (Directus's answer pages were read as "Loading…").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_data_comes_by_script_is_read_once_it_has_come() {
    let site = sites::serve(sites::dynamic()).await;
    let prefix = unique_prefix("slow-data");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    for path in ["/slow-data", "/slow-data?xhr"] {
        let began = std::time::Instant::now();
        let mut tab = open_tab(&pool, &site.url(path), 1).await;
        tab.settle().await.expect("settles");
        let observation = tab.observation().await.expect("observes");
        let text = observation.snapshot.join("\n");
        assert!(
            !text.contains("Loading"),
            "{path}: read as the shell: {text}"
        );
        let rows: Vec<&str> = observation
            .elements
            .iter()
            .map(|e| e.name.as_str())
            .filter(|n| ["Rust", "Debian", "Chromium"].contains(n))
            .collect();
        assert_eq!(rows, ["Rust", "Debian", "Chromium"], "{path}");
        assert!(
            began.elapsed().as_millis() >= u128::from(sites::SLOW_DATA_MS),
            "{path}: the rows came after the answer"
        );
        tab.close().await;
    }
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}

/// A press and a release on two elements make no click: a page that replaces its button as
/// it is pressed (a list rendered again between the two) gets the click on the new button,
/// once; a button that stays is clicked once, never twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_button_replaced_between_press_and_release_is_clicked_once_all_the_same() {
    let site = sites::serve(sites::dynamic()).await;
    let prefix = unique_prefix("replaced-on-press");
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    let mut tab = open_tab(&pool, &site.url("/replaced-on-press"), 1).await;
    use forager_protocol::{Locator, Target};
    let go = Target {
        locators: vec![Locator::Css("#list > button".into())],
        role: "button".into(),
        name: "Go".into(),
        sends: Default::default(),
    };
    let read = |name: &str| tab.evaluate(format!("window.{name}"), false);
    tab.click(&go, "Go").await.expect("clicks");
    // The first press made no click (its button was gone at the release): pressed again.
    assert_eq!(read("PRESSES").await.expect("reads"), 2);
    assert_eq!(
        read("CLICKS").await.expect("reads"),
        1,
        "the click arrived once"
    );
    // The next press replaces nothing: one press, one click.
    tab.click(&go, "Go").await.expect("clicks");
    assert_eq!(read("PRESSES").await.expect("reads"), 3);
    assert_eq!(read("CLICKS").await.expect("reads"), 2);
    tab.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(&prefix);
}
