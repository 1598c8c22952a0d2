//! Risk read from what an action sends, end to end in real Chromium: `GET` forms and
//! navigating links are reads whatever their words, a write hidden behind a read-rated control
//! is refused at the network (the gate), a link whose URL deletes is rated by its URL, and
//! credentials go only into the login form (`sites::records`); writes a page sends on its
//! own (a heartbeat, an autosave, a menu's state, a single-page application's list of open
//! items) are refused without being charged to an action (`sites::own_writes`).

use forager_protocol::RiskClass;
use forager_protocol::result::{RunResult, Status};
use forager_tests::forager;
use forager_tests::sites::{self, Fixture};

fn pruned(result: &RunResult, reason: &str) -> u32 {
    result.metrics.pruned.get(reason).copied().unwrap_or(0)
}

async fn records() -> Fixture {
    sites::serve(sites::records()).await
}

/// `forager explore` on the records fixture from `path`, one node, no memory, with `extra`
/// flags (success predicates, inputs) after the goal.
async fn explore(
    test: &str,
    site: &Fixture,
    path: &str,
    goal: &str,
    budget: &str,
    extra: &[&str],
) -> forager_tests::Run {
    let url = site.url(path);
    let mut args = vec![
        "--url",
        &url,
        "--goal",
        goal,
        "--budget",
        budget,
        "--no-memory",
    ];
    args.extend_from_slice(extra);
    forager(test, &args).await
}

/// "Show me only the cities that are in Peru" needs the filter form's button, a `GET` form:
/// with the button named Apply, Go, Submit or Filter it is a read, run at the default ceiling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_filter_forms_are_reads_whatever_their_button_says() {
    let site = records().await;
    for button in ["Apply", "Go", "Submit", "Filter"] {
        let run = explore(
            &format!("getform{button}"),
            &site,
            &format!("/cities?button={button}"),
            "Show me only the cities that are in Peru",
            "40",
            &[
                "--success-text",
                "Showing cities where country = Peru",
                "--nodes",
                "1",
            ],
        )
        .await;
        let result = run.passed();
        assert!(
            result.approval_required.is_empty(),
            "{button}: {:?}",
            result.approval_required
        );
        assert_eq!(pruned(result, "approval_required"), 0, "{button}");
        let last = result.steps.last().expect("a step");
        assert_eq!(last.risk, RiskClass::ReadOnly, "{button}: {}", last.label);
    }
    assert_eq!(site.orders(), 0, "nothing was written");
}

/// "Remove this filter" and "Clear" are links that navigate to the unfiltered list: reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remove_this_filter_is_a_read() {
    let site = records().await;
    let run = explore(
        "removefilter",
        &site,
        "/cities?country=Peru&button=Apply",
        "Remove the country filter so that every city shows",
        "30",
        &["--success-text", "8 rows", "--nodes", "1"],
    )
    .await;
    let result = run.passed();
    assert!(
        result.approval_required.is_empty(),
        "{:?}",
        result.approval_required
    );
    assert!(
        result.steps.iter().all(|s| s.risk == RiskClass::ReadOnly),
        "{:?}",
        result
            .steps
            .iter()
            .map(|s| (&s.label, s.risk))
            .collect::<Vec<_>>()
    );
}

/// "Show more" reads by its words, but its handler `fetch`es a POST: the network gate holds
/// the request, refuses it, prunes the branch `risk_underestimated`, counts and shows the
/// refusal, and the server never sees the write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_behind_a_read_rated_button_is_refused_at_the_network() {
    let site = records().await;
    let run = explore(
        "gate",
        &site,
        "/more",
        "Show more cities",
        "15",
        &["--success-text", "Montevideo", "--nodes", "1"],
    )
    .await;
    let result = run.result.as_ref().expect("a result document");
    assert_eq!(result.status, Status::Failing, "{}", run.stderr);
    assert_eq!(site.orders(), 0, "the POST never reached the server");
    assert!(
        !site.requests().iter().any(|r| r.starts_with("POST")),
        "{:?}",
        site.requests()
    );
    assert!(
        pruned(result, "risk_underestimated") >= 1,
        "{:?}",
        result.metrics.pruned
    );
    assert!(result.network.refused_writes >= 1, "{:?}", result.network);
    assert!(
        result
            .network
            .refused_write_requests
            .iter()
            .any(|r| r.starts_with("POST ") && r.ends_with("/more")),
        "{:?}",
        result.network.refused_write_requests
    );
    // Re-rated by what it tried to send: offered again, it is an approval, not an action.
    assert!(
        result
            .approval_required
            .iter()
            .any(|a| a.label.contains("Show more") && a.risk == RiskClass::ExternalSubmission),
        "{:?}",
        result.approval_required
    );
}

/// A link named "Tidy up the list" whose `href` deletes on `GET` is rated by its URL
/// (destructive): never followed at the default ceiling, listed for approval. "Sweep the old
/// rows" (`href="#"`) reads by its words, but its script loads the same URL: the network gate
/// refuses the page load, and the link is re-rated destructive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_whose_url_deletes_is_rated_by_its_url() {
    let site = records().await;
    let run = explore(
        "deletelink",
        &site,
        "/tidy",
        "Tidy up the list of cities",
        "15",
        &["--success-text", "the list is tidy", "--nodes", "1"],
    )
    .await;
    let result = run.result.as_ref().expect("a result document");
    assert_eq!(result.status, Status::Failing, "{}", run.stderr);
    assert_eq!(site.orders(), 0, "the delete never ran");
    assert!(
        result
            .approval_required
            .iter()
            .any(|a| a.label.contains("Tidy up the list") && a.risk == RiskClass::Destructive),
        "{:?}",
        result.approval_required
    );
    assert!(
        pruned(result, "risk_underestimated") >= 1,
        "{:?}",
        result.metrics.pruned
    );
    assert!(
        result
            .network
            .refused_write_requests
            .iter()
            .any(|r| r.starts_with("GET ") && r.ends_with("/cities/8/delete")),
        "{:?}",
        result.network
    );
    assert!(
        !site.requests().iter().any(|r| r.contains("/delete")),
        "{:?}",
        site.requests()
    );
}

/// A tracker's front page: "Show issue" and "Search" (GET forms) beside the login form with
/// "Remember me?". The password and the user name are typed into the login form only: no
/// request the server saw carries the password, and the checkbox is no approval.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_go_only_into_the_login_form() {
    let site = records().await;
    let run = explore(
        "credentials",
        &site,
        "/tracker",
        "Log in as alice",
        "40",
        &[
            "--success-text",
            "You are logged in",
            "--input",
            "username=alice",
            "--input",
            "password=wonder land",
        ],
    )
    .await;
    let result = run.passed();
    assert!(
        result.approval_required.is_empty(),
        "{:?}",
        result.approval_required
    );
    let requests = site.requests();
    for request in &requests {
        assert!(
            !request.contains("wonder"),
            "the password left in a URL: {request}"
        );
        assert!(
            !(request.starts_with("GET") && request.contains("alice")),
            "the user name left in a URL: {request}"
        );
    }
    assert!(site.orders() >= 1, "the login landed");
}

/// The editor's 500 ms heartbeat and its menu's `PATCH` of a "dismissible" are refused and
/// charged to no action: opening the menu and following its link passes, no branch pruned
/// `risk_underestimated`, both counted apart, and nothing reached the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_the_page_sends_on_its_own_prune_nothing() {
    let site = sites::serve(sites::own_writes()).await;
    let run = explore(
        "ownwrites",
        &site,
        "/editor",
        "Open the archive list",
        "20",
        &["--success-text", "The archive list", "--nodes", "1"],
    )
    .await;
    let result = run.passed();
    let network = &result.network;
    // The one write an action is charged for is the "Show more" button's hidden POST, if the
    // search tried it.
    let hidden = network
        .refused_write_requests
        .iter()
        .filter(|r| r.ends_with("/editor/more"))
        .count() as u32;
    assert!(
        pruned(result, "risk_underestimated") <= hidden,
        "{:?} {network:?}",
        result.metrics.pruned
    );
    assert!(
        network.background_refused >= 1,
        "the heartbeat: {network:?}"
    );
    assert!(
        network
            .background_requests
            .iter()
            .all(|r| r.ends_with("/editor/ping")),
        "{network:?}"
    );
    assert!(
        network.view_state_refused >= 1,
        "the menu's state: {network:?}"
    );
    assert_eq!(site.orders(), 0, "no write reached the server");
}

/// Beside the heartbeat, "Show more entries" `fetch`es a `POST`: that write is the action's,
/// refused and its branch pruned `risk_underestimated`, while the heartbeat is charged to
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_write_is_still_refused_beside_a_heartbeat() {
    let site = sites::serve(sites::own_writes()).await;
    let run = explore(
        "hiddenwrite",
        &site,
        "/editor",
        "Show more entries",
        "8",
        &["--success-text", "Entry two", "--nodes", "1"],
    )
    .await;
    let result = run.result.as_ref().expect("a result document");
    assert_eq!(result.status, Status::Failing, "{}", run.stderr);
    assert!(
        pruned(result, "risk_underestimated") >= 1,
        "{:?}",
        result.metrics.pruned
    );
    assert!(
        result
            .network
            .refused_write_requests
            .iter()
            .any(|r| r.starts_with("POST ") && r.ends_with("/editor/more")),
        "{:?}",
        result.network
    );
    assert!(
        !result
            .network
            .background_requests
            .iter()
            .any(|r| r.ends_with("/editor/more")),
        "the hidden write is the action's, not the page's: {:?}",
        result.network
    );
    assert_eq!(site.orders(), 0, "no write reached the server");
}

/// A single-page notes application `PUT`s the list of its open notes on every click: a read
/// ("open the note with the cabin's Wi-Fi password") still opens it, the `PUT` refused as the
/// page's own view and no branch pruned for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_page_app_saving_its_open_items_can_still_be_read() {
    let site = sites::serve(sites::own_writes()).await;
    let run = explore(
        "spaview",
        &site,
        "/notes",
        "Open the note with the cabin's Wi-Fi password",
        "15",
        &["--success-text", "pine-needle-77", "--nodes", "1"],
    )
    .await;
    let result = run.passed();
    assert_eq!(
        pruned(result, "risk_underestimated"),
        0,
        "{:?}",
        result.metrics.pruned
    );
    assert!(
        result.network.view_state_refused >= 1,
        "{:?}",
        result.network
    );
    assert_eq!(site.orders(), 0, "no write reached the server");
}
