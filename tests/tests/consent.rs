//! Human approval that resumes the work: a run stops at the shop's class-5 "Place order"
//! (`approval_required`), the user signs a consent for exactly that action (`forager key
//! --user`, `forager approve`), the same task with `--consent` places the order and passes,
//! `verify` accepts the trajectory, `replay` needs the consent too, and once the user revokes
//! it (`forager revoke`), `replay` and `explore` refuse it by name. Real binary, real Chromium,
//! real HTTP; the revocation store is a real folder (`XDG_DATA_HOME`).

use forager_protocol::consent::SignedConsent;
use forager_protocol::result::Status;
use forager_tests::sites;
use forager_tests::{LIMIT, forager_binary, forager_env};
use std::path::Path;
use std::process::{Command, Output};

/// Runs a `forager` subcommand with this test's data folder (the revocation store).
fn command(data: &Path, args: &[&str]) -> Output {
    // Built (if need be) before the clock starts: the limit is the command's.
    let binary = forager_binary();
    let started = std::time::Instant::now();
    let output = Command::new(binary)
        .args(args)
        .env("XDG_DATA_HOME", data)
        .output()
        .expect("forager runs");
    assert!(started.elapsed() < LIMIT);
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_then_consent_completes_the_run_and_revoke_stops_replays() {
    let shop = sites::serve(sites::shop()).await;
    let home = tempfile::tempdir().expect("a temporary folder");
    let data = home.path().join("data");
    let data_env = data.to_string_lossy().into_owned();
    let env = [("XDG_DATA_HOME", data_env.as_str())];
    let url = shop.url("/");
    let mut task = vec!["--url", url.as_str()];
    task.extend(sites::SHOP_PURCHASE);

    // 1. The run stops before the order.
    let stopped = forager_env("consent-stop", &task, &env).await;
    let result = stopped.result.as_ref().expect("a result document");
    assert_eq!(result.status, Status::Failing, "{}", stopped.stderr);
    let position = result
        .approval_required
        .iter()
        .filter(|a| !a.actions.is_empty())
        .position(|a| a.label.contains("Place order"))
        .unwrap_or_else(|| panic!("{:?}", result.approval_required));
    assert_eq!(shop.orders(), 0);
    // The failure names the approval nearest the goal.
    let detail = &result.error.as_ref().expect("a named reason").detail;
    assert!(detail.contains("Place order"), "{detail}");

    // 2. A user key; a cluster key is not one.
    let key = home.path().join("user.key");
    let key_arg = key.to_string_lossy().into_owned();
    let made = command(&data, &["key", "--user", "--out", &key_arg]);
    assert!(made.status.success(), "{}", text(&made.stderr));

    // 3. Approve it, outside a terminal: --action is required.
    let run_dir = stopped.out.to_string_lossy().into_owned();
    let unchosen = command(&data, &["approve", &run_dir, "--key", &key_arg]);
    assert_eq!(unchosen.status.code(), Some(2));
    assert!(text(&unchosen.stderr).contains("--action"));
    let number = (position + 1).to_string();
    let approved = command(
        &data,
        &["approve", &run_dir, "--key", &key_arg, "--action", &number],
    );
    assert!(approved.status.success(), "{}", text(&approved.stderr));
    let consent_path = text(&approved.stdout).trim().to_owned();
    let consent: SignedConsent =
        serde_json::from_slice(&std::fs::read(&consent_path).expect("the consent file"))
            .expect("a consent");
    assert!(consent.value.action.label.contains("Place order"));
    assert_eq!(consent.value.task_id, result.task_id);

    // A forged consent is refused before anything starts.
    let forged = home.path().join("forged.json");
    let mut tampered = consent.clone();
    tampered.value.risk = forager_protocol::RiskClass::Destructive;
    std::fs::write(&forged, serde_json::to_vec(&tampered).expect("json")).expect("written");
    let mut with_forged = task.clone();
    let forged_arg = forged.to_string_lossy().into_owned();
    with_forged.extend(["--consent", forged_arg.as_str()]);
    let refused = forager_env("consent-forged", &with_forged, &env).await;
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("signature"), "{}", refused.stderr);
    assert_eq!(shop.orders(), 0);

    // 4. The same task with the consent places the order and passes.
    let mut with_consent = task.clone();
    with_consent.extend(["--consent", consent_path.as_str()]);
    let done = forager_env("consent-done", &with_consent, &env).await;
    let passed = done.passed();
    assert!(
        passed.steps.iter().any(|s| s.label.contains("Place order")),
        "{:?}",
        passed.steps.iter().map(|s| &s.label).collect::<Vec<_>>()
    );
    assert!(shop.orders() >= 1);
    let journal = std::fs::read_to_string(done.out.join("events.jsonl")).expect("the journal");
    assert!(
        journal.contains("\"consents\":[{"),
        "the journal records the consent"
    );
    let report = std::fs::read_to_string(done.out.join("report.html")).expect("the report");
    assert!(
        report.contains("id=\"consents\""),
        "the report shows the consent"
    );
    let workflow_doc: forager_protocol::workflow::Workflow = serde_json::from_slice(
        &std::fs::read(done.out.join("workflow.json")).expect("the workflow"),
    )
    .expect("a workflow");
    assert_eq!(
        workflow_doc.consents.len(),
        1,
        "the workflow records the consent"
    );

    // 5. verify accepts the record, and names the consented step.
    let out_dir = done.out.to_string_lossy().into_owned();
    let verified = command(&data, &["verify", &out_dir]);
    assert!(verified.status.success(), "{}", text(&verified.stdout));
    assert!(
        text(&verified.stdout).contains("under a signed consent"),
        "{}",
        text(&verified.stdout)
    );

    // 6. Replay needs the consent as well.
    let workflow = done
        .out
        .join("workflow.json")
        .to_string_lossy()
        .into_owned();
    let inputs = [
        "--input",
        "name=Ada Lovelace",
        "--input",
        "address=12 Analytical Row",
    ];
    let mut bare = vec!["replay", workflow.as_str()];
    bare.extend(inputs);
    let without = forager_env("consent-replay-bare", &bare, &env).await;
    assert_eq!(without.code, Some(2), "{}", without.stderr);
    assert!(
        without.stderr.contains("no --consent covers it"),
        "{}",
        without.stderr
    );
    let mut consented = bare.clone();
    consented.extend(["--consent", consent_path.as_str()]);
    let orders = shop.orders();
    let replayed = forager_env("consent-replay", &consented, &env).await;
    assert_eq!(replayed.code, Some(0), "{}", replayed.stderr);
    assert_eq!(
        replayed.result.as_ref().map(|r| r.status),
        Some(Status::Pass)
    );
    assert_eq!(shop.orders(), orders + 1);

    // 7. Revoked: replay and explore refuse it by name, and nothing is ordered.
    let revoked = command(&data, &["revoke", &consent_path, "--key", &key_arg]);
    assert!(revoked.status.success(), "{}", text(&revoked.stderr));
    let orders = shop.orders();
    let refused = forager_env("consent-replay-revoked", &consented, &env).await;
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("revoked"), "{}", refused.stderr);
    let refused = forager_env("consent-explore-revoked", &with_consent, &env).await;
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("revoked"), "{}", refused.stderr);
    assert_eq!(shop.orders(), orders);

    // Another user cannot revoke it.
    let other = home.path().join("other.key");
    let other_arg = other.to_string_lossy().into_owned();
    assert!(
        command(&data, &["key", "--user", "--out", &other_arg])
            .status
            .success()
    );
    let stranger = command(&data, &["revoke", &consent_path, "--key", &other_arg]);
    assert_eq!(stranger.status.code(), Some(2));
    assert!(text(&stranger.stderr).contains("another key"));
}
