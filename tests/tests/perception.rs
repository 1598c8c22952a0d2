//! Perception in real Chromium: controls inside open shadow roots (a component nested in
//! another) and inside a same-origin frame set off from the corner are observed, named, typed
//! into and clicked, and a search finds the way through them end to end; names and roles come
//! from the browser's accessibility tree; a table row's control is found again by the row's
//! name; a field its form does not send is known as such (`sites::components`).

use forager_node::Environment;
use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumEnv, EnvOptions};
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::{Action, FillValue, Locator, TaskSpec};
use forager_tests::sites::{self, Fixture};
use forager_tests::{assert_no_chromium_left, forager, unique_prefix};
use std::sync::Arc;

async fn components() -> Fixture {
    sites::serve(sites::components()).await
}

/// A browser of the test's own, and the profile prefix that tells its processes.
fn browser_for(test: &str) -> (BrowserPool, String) {
    let prefix = unique_prefix(test);
    let pool = BrowserPool::new(BrowserOptions {
        profile_prefix: prefix.clone(),
        ..BrowserOptions::default()
    });
    (pool, prefix)
}

/// Closes the environment and the browser, and checks that no Chromium process is left.
async fn done(mut env: ChromiumEnv, pool: BrowserPool, prefix: &str) {
    env.close().await;
    pool.shutdown().await;
    assert_no_chromium_left(prefix);
}

/// An environment on `url` whose task succeeds when the top page reaches `/found` with `query`.
async fn env_at(pool: &BrowserPool, url: String, query: &str) -> ChromiumEnv {
    env_for(pool, url, "Use the form", query).await
}

/// [`env_at`] with the task's goal.
async fn env_for(pool: &BrowserPool, url: String, goal: &str, query: &str) -> ChromiumEnv {
    let mut task = TaskSpec::new(
        url,
        goal,
        vec![SuccessPredicate::UrlMatches(format!("/found\\?{query}$"))],
    );
    task.resettable = true;
    task.validate().expect("valid");
    let mut env =
        ChromiumEnv::new(pool.clone(), Arc::new(task), EnvOptions::default()).expect("valid");
    env.restore(&[]).await.expect("loads");
    env
}

/// The observed control named `name` with role `role`, which must be reached through a
/// shadow root or a frame: its CSS locator steps in with ` >>> `.
fn control(env: &ChromiumEnv, role: &str, name: &str) -> forager_protocol::Target {
    let observation = env.observation().expect("a page");
    let element = observation
        .elements
        .iter()
        .find(|e| e.role == role && e.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no {role} {name:?} among {:?}",
                observation
                    .elements
                    .iter()
                    .map(|e| format!("{} {:?}", e.role, e.name))
                    .collect::<Vec<_>>()
            )
        });
    let css = element
        .locators
        .iter()
        .find_map(|l| match l {
            Locator::Css(css) => Some(css.clone()),
            _ => None,
        })
        .expect("a CSS locator");
    assert!(css.contains(" >>> "), "{name}: {css} steps into its tree");
    forager_protocol::Target {
        locators: element.locators.clone(),
        role: element.role.clone(),
        name: element.name.clone(),
        sends: element.sends.clone(),
    }
}

async fn fill_check_and_click(
    env: &mut ChromiumEnv,
    field: &str,
    value: &str,
    check: &str,
    button: &str,
) -> bool {
    let target = control(env, "textbox", field);
    env.act(&Action::Fill {
        target,
        value: FillValue::Literal(value.into()),
        enter: false,
    })
    .await
    .expect("types into the field");
    let target = control(env, "checkbox", check);
    let checked = env
        .act(&Action::Click { target })
        .await
        .expect("checks the box");
    assert!(!checked.state.success);
    let target = control(env, "button", button);
    let step = env
        .act(&Action::Click { target })
        .await
        .expect("clicks the button");
    step.state.success
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controls_inside_nested_open_shadow_roots_are_seen_and_acted_on() {
    let site = components().await;
    let (pool, prefix) = browser_for("shadow");
    let mut env = env_at(&pool, site.url("/shadow"), "q=bolts&exact=1").await;
    let snapshot = env.observation().expect("a page").snapshot.join("\n");
    assert!(snapshot.contains("heading \"Find a part\""), "{snapshot}");
    let passed =
        fill_check_and_click(&mut env, "Search term", "bolts", "Exact match", "Search").await;
    assert!(passed, "the top page went to /found?q=bolts&exact=1");
    done(env, pool, &prefix).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controls_inside_a_same_origin_frame_are_seen_and_clicked_where_they_are() {
    let site = components().await;
    let (pool, prefix) = browser_for("frame");
    let mut env = env_at(&pool, site.url("/frame"), "q=ada%40example.org&exact=1").await;
    let passed = fill_check_and_click(
        &mut env,
        "Email address",
        "ada@example.org",
        "I agree to the terms",
        "Join",
    )
    .await;
    assert!(passed, "the frame's form sent the top page to /found");
    done(env, pool, &prefix).await;
}

/// Names and roles come from Chromium's accessibility tree: a button named by CSS generated
/// content, a close button whose glyph the tree leaves out, a number field that is a spin
/// button. The locators still find the element at their first try (no healed step).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_and_roles_come_from_the_accessibility_tree() {
    let site = components().await;
    let (pool, prefix) = browser_for("axnames");
    let mut env = env_at(&pool, site.url("/named"), "q=continued").await;
    let observation = env.observation().expect("a page");
    let seen: Vec<(String, String)> = observation
        .elements
        .iter()
        .map(|e| (e.role.clone(), e.name.clone()))
        .collect();
    for (role, name) in [
        ("spinbutton", "Quantity"),
        ("button", "Close dialog"),
        ("button", "Continue"),
    ] {
        assert!(
            seen.contains(&(role.to_owned(), name.to_owned())),
            "{role} {name:?} among {seen:?}"
        );
    }
    let before = observation.fingerprint;
    let target = observation
        .elements
        .iter()
        .find(|e| e.name == "Continue")
        .map(|e| forager_protocol::Target {
            locators: e.locators.clone(),
            role: e.role.clone(),
            name: e.name.clone(),
            sends: e.sends.clone(),
        })
        .expect("the Continue button");
    let step = env.act(&Action::Click { target }).await.expect("clicks");
    assert!(
        step.state.success,
        "the button named by its CSS was clicked"
    );
    assert!(
        env.healed(&before, &step.state.fingerprint).is_none(),
        "found by its first locator"
    );
    done(env, pool, &prefix).await;
}

/// A field its form does not send (no name, beside named ones: a list's filter box) is
/// observed as such and takes no value that does not fit it; a field of a form none of whose
/// fields has a name (a script reads it) is not marked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_its_form_does_not_send_is_seen_so_and_takes_only_a_value_that_fits_it() {
    let site = components().await;
    let (pool, prefix) = browser_for("unsent");
    let mut env = env_for(
        &pool,
        site.url("/group"),
        "add a new group named \"editors\"",
        "q=saved",
    )
    .await;
    let observation = env.observation().expect("a page");
    let unsent = |name: &str| {
        observation
            .elements
            .iter()
            .find(|e| e.name == name)
            .map(|e| e.unsent)
            .unwrap_or_else(|| panic!("no field {name:?}"))
    };
    assert!(!unsent("Name:"));
    assert!(unsent("Filter the available permissions"));
    assert!(!unsent("Look up"), "a script's form sends nothing by name");

    let fills: Vec<String> = env
        .candidates()
        .await
        .expect("candidates")
        .iter()
        .filter(|c| matches!(c.action, Action::FillForm { .. }))
        .map(|c| env.describe(&c.action))
        .collect();
    assert!(
        fills.iter().any(|f| f.contains("\"Name:\"=\"editors\"")),
        "{fills:#?}"
    );
    assert!(
        fills.iter().all(|f| !f.contains("Filter the available")),
        "{fills:#?}"
    );
    done(env, pool, &prefix).await;
}

/// `forager explore` finds the way through a nested component and through a frame from the
/// goal's words alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explore_reaches_through_shadow_roots_and_frames() {
    let site = components().await;
    let cases = [
        (
            "/shadow",
            "Search the catalogue for \"bolts\", exact match only",
            "Results for bolts (exact)",
        ),
        (
            "/frame",
            "Sign up with the email \"ada@example.org\" and agree to the terms",
            "Results for ada@example.org (exact)",
        ),
    ];
    for (path, goal, text) in cases {
        let url = site.url(path);
        let run = forager(
            &format!("components{}", path.trim_start_matches('/')),
            &[
                "--url",
                &url,
                "--goal",
                goal,
                "--success-text",
                text,
                "--budget",
                "40",
                "--nodes",
                "1",
                "--no-memory",
            ],
        )
        .await;
        let result = run.passed();
        assert!(!result.steps.is_empty(), "{path}: a path");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rows_control_is_found_by_the_rows_name_and_an_ambiguous_name_finds_none() {
    let site = components().await;
    let (pool, prefix) = browser_for("in-item");
    let mut env = env_at(&pool, site.url("/cities"), "q=DE").await;
    let observation = env.observation().expect("a page");
    let kenya = observation
        .elements
        .iter()
        .find(|e| e.name == "Kenya")
        .expect("Kenya's link");
    let in_item = |key: &str, nth: u32| Locator::InItem {
        key: key.into(),
        role: "link".into(),
        nth,
    };
    assert_eq!(kenya.column, "country", "the header of its column");
    // The country link is the row's second link; the row is known by the city's name.
    assert!(
        kenya.locators.contains(&in_item("Mombasa", 2)),
        "{:?}",
        kenya.locators
    );
    // Springfield is in two rows: no control is known by it.
    for e in &observation.elements {
        assert!(
            e.locators
                .iter()
                .all(|l| !matches!(l, Locator::InItem { key, .. } if key == "Springfield")),
            "{:?}",
            e.locators
        );
    }
    let click = |key: &str| Action::Click {
        target: forager_protocol::Target {
            locators: vec![in_item(key, 2)],
            role: "link".into(),
            name: String::new(),
            sends: forager_protocol::Sends::Unknown,
        },
    };
    assert!(
        env.act(&click("Springfield")).await.is_err(),
        "two rows read Springfield: no control is guessed"
    );
    let step = env.act(&click("hamburg")).await.expect("Hamburg's row");
    assert!(step.state.success, "Germany's page: /found?q=DE");
    done(env, pool, &prefix).await;
}
