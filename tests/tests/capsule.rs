//! Session capsules end to end on the mail fixture (a login with a CSRF token, a TOTP second
//! factor, an HttpOnly session, a single sign-on hop through a second host): capture once,
//! reuse without typing credentials, for the capsule's origin only; nothing secret in any
//! artifact or log; tampered, wrongly opened, expired and revoked capsules refused by name
//! before a browser starts; a session that expires mid-run recovered (or named
//! `session_expired`); a class-4 "Send" approved, consented, verified, revoked.
//! Real binary, real Chromium, real HTTP on 127.0.0.1 and 127.0.0.2.

use forager_protocol::FailureReason;
use forager_protocol::consent::SignedConsent;
use forager_protocol::result::{RunResult, Status};
use forager_tests::app::{self, AdminApp};
use forager_tests::mail::{self, Mail};
use forager_tests::{LIMIT, assert_no_chromium_left, forager_binary, forager_env, unique_prefix};
use std::path::Path;
use std::process::{Command, Output};

/// Runs a `forager` subcommand (not an explore) with this test's data folder, checking that
/// no browser outlives it.
fn command(test: &str, data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let prefix = unique_prefix(test);
    // Built (if need be) before the clock starts: the limit is the command's.
    let binary = forager_binary();
    let started = std::time::Instant::now();
    let output = Command::new(binary)
        .args(args)
        .env("XDG_DATA_HOME", data)
        .env("FORAGER_PROFILE_PREFIX", &prefix)
        .envs(env.iter().copied())
        .output()
        .expect("forager runs");
    assert!(started.elapsed() < LIMIT);
    assert_no_chromium_left(&prefix);
    output
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files(&path));
        } else {
            found.push(path);
        }
    }
    found
}

/// Panics if any of `secrets` is in any file under `dirs` or in `logs`.
fn assert_no_secret(secrets: &[String], dirs: &[&Path], logs: &[&str]) {
    assert!(!secrets.is_empty(), "the fixture issued secrets");
    for dir in dirs {
        for file in files(dir) {
            let bytes = std::fs::read(&file).unwrap_or_default();
            let content = String::from_utf8_lossy(&bytes);
            for secret in secrets {
                assert!(
                    !content.contains(secret.as_str()),
                    "{} holds a secret",
                    file.display()
                );
            }
        }
    }
    for log in logs {
        for secret in secrets {
            assert!(!log.contains(secret.as_str()), "a log holds a secret");
        }
    }
}

struct Keys {
    user: String,
    capsule_key: String,
}

fn keys(test: &str, home: &Path, data: &Path) -> Keys {
    let user = home.join("user.key").to_string_lossy().into_owned();
    let made = command(test, data, &["key", "--user", "--out", &user], &[]);
    assert!(made.status.success(), "{}", text(&made.stderr));
    let capsule_key = home.join("capsule.key").to_string_lossy().into_owned();
    let made = command(
        test,
        data,
        &["capsule", "keygen", "--out", &capsule_key],
        &[],
    );
    assert!(made.status.success(), "{}", text(&made.stderr));
    Keys { user, capsule_key }
}

/// Ada's credentials as flags: `--input` username and password, `--totp` code.
fn credential_flags() -> Vec<String> {
    [
        "--input".to_owned(),
        format!("username={}", mail::USERNAME),
        "--input".to_owned(),
        format!("password={}", mail::PASSWORD),
        "--totp".to_owned(),
        format!("code={}", mail::TOTP_SECRET),
    ]
    .into()
}

/// `capsule capture` of ada's login, with `secret` (flags) sealing it.
fn capture(
    test: &str,
    mail: &Mail,
    data: &Path,
    keys: &Keys,
    secret: &[&str],
    env: &[(&str, &str)],
    out: &str,
) -> Output {
    let login = mail.url("/login");
    let credentials = credential_flags();
    let mut args = vec![
        "capsule",
        "capture",
        "--url",
        &login,
        "--goal",
        "Sign in",
        "--success-text",
        mail::SIGNED_IN,
        "--origin",
        &mail.base,
        "--allow-origin",
        &mail.portal,
        "--key",
        &keys.user,
        "--out",
        out,
    ];
    args.extend(credentials.iter().map(String::as_str));
    args.extend(secret);
    command(test, data, &args, env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_captured_session_logs_runs_in_for_its_origin_only_and_never_leaks() {
    let mail = Mail::start().await;
    let home = tempfile::tempdir().expect("a temporary folder");
    let data = home.path().join("data");
    let data_env = data.to_string_lossy().into_owned();
    let env = [("XDG_DATA_HOME", data_env.as_str())];
    let keys = keys("capsule-keys", home.path(), &data);
    let capsule = home.path().join("ada.capsule");
    let capsule_arg = capsule.to_string_lossy().into_owned();
    let secret = ["--key-file", keys.capsule_key.as_str()];
    let mut logs = Vec::new();

    // 1. Capture: the login is searched (username, password, the TOTP code of the moment).
    let captured = capture(
        "capsule-capture",
        &mail,
        &data,
        &keys,
        &secret,
        &[],
        &capsule_arg,
    );
    logs.push(text(&captured.stderr) + &text(&captured.stdout));
    assert!(captured.status.success(), "{}", logs[0]);
    // The search may submit the form more than once (a restore replays the login).
    let logins = mail.lock().logins;
    assert!(logins >= 1);
    assert!(
        !mail.lock().sso_issued.is_empty(),
        "the login passed through the portal, which set its own cookie"
    );

    // 2. Inspect: the session cookie (HttpOnly) and the device in storage, for the mail's
    // host only; the portal's cookie was not kept. Names, never values.
    let inspected = command(
        "capsule-inspect",
        &data,
        &[
            "capsule",
            "inspect",
            &capsule_arg,
            "--json",
            "--key-file",
            &keys.capsule_key,
        ],
        &[],
    );
    assert!(inspected.status.success(), "{}", text(&inspected.stderr));
    logs.push(text(&inspected.stdout) + &text(&inspected.stderr));
    let document: serde_json::Value =
        serde_json::from_slice(&inspected.stdout).expect("inspect --json");
    assert_eq!(document["status"], "valid");
    let cookies = document["contents"]["cookies"].as_array().expect("cookies");
    assert!(
        cookies
            .iter()
            .any(|c| c["name"] == "sid" && c["http_only"] == true),
        "{cookies:?}"
    );
    assert!(
        cookies.iter().all(|c| c["domain"] == "127.0.0.1"),
        "only the capsule's origin: {cookies:?}"
    );
    assert!(
        document["contents"]["storage"][0]["local"]
            .as_array()
            .is_some_and(|keys| keys.iter().any(|k| k == "mail.device")),
        "{document}"
    );

    // 3. A run that starts on the portal and reaches the inbox, logged in by the capsule
    // (no password typed: still one login), with the device name from the capsule's storage.
    let portal_seen = mail.lock().portal_cookies.len();
    let portal = format!("{}/", mail.portal);
    let reused = forager_env(
        "capsule-reuse",
        &[
            "--url",
            &portal,
            "--goal",
            "Open the mail inbox",
            "--success-text",
            "Device: trusted-laptop",
            "--allow-origin",
            &mail.base,
            "--capsule",
            &capsule_arg,
            "--key-file",
            &keys.capsule_key,
            "--budget",
            "40",
        ],
        &env,
    )
    .await;
    logs.push(reused.stderr.clone());
    reused.passed();
    assert_eq!(mail.lock().logins, logins, "no credentials were typed");
    // The portal (another host) saw requests, and none carried the capsule's session or
    // the portal cookie the login left in the capturing browser.
    let sent_to_portal: Vec<String> = mail.lock().portal_cookies[portal_seen..].to_vec();
    assert!(!sent_to_portal.is_empty());
    for header in &sent_to_portal {
        for secret in mail.secrets() {
            assert!(!header.contains(&secret), "the portal received {header}");
        }
    }

    // 4. Tampering and a wrong key file are refused before any browser starts.
    let mut document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&capsule).expect("the capsule")).expect("json");
    let sealed = document["value"]["sealed"]
        .as_str()
        .expect("sealed")
        .to_owned();
    let flipped_char = if sealed.starts_with('A') { "B" } else { "A" };
    document["value"]["sealed"] =
        serde_json::Value::String(format!("{flipped_char}{}", &sealed[1..]));
    let tampered = home.path().join("tampered.capsule");
    std::fs::write(&tampered, serde_json::to_vec(&document).expect("json")).expect("written");
    let tampered_arg = tampered.to_string_lossy().into_owned();
    let other_key = home.path().join("other.key").to_string_lossy().into_owned();
    let made = command(
        "capsule-keygen2",
        &data,
        &["capsule", "keygen", "--out", &other_key],
        &[],
    );
    assert!(made.status.success());
    let portal_seen = mail.lock().portal_cookies.len();
    for (name, file, key, expected) in [
        (
            "capsule-tampered",
            &tampered_arg,
            &keys.capsule_key,
            "signature",
        ),
        (
            "capsule-wrong-key",
            &capsule_arg,
            &other_key,
            "another key file",
        ),
    ] {
        let refused = forager_env(
            name,
            &[
                "--url",
                &portal,
                "--goal",
                "Open the mail inbox",
                "--success-text",
                "Inbox",
                "--allow-origin",
                &mail.base,
                "--capsule",
                file,
                "--key-file",
                key,
            ],
            &env,
        )
        .await;
        assert_eq!(refused.code, Some(2), "{}", refused.stderr);
        assert!(refused.stderr.contains(expected), "{}", refused.stderr);
        logs.push(refused.stderr);
    }
    assert_eq!(
        mail.lock().portal_cookies.len(),
        portal_seen,
        "no browser started"
    );

    // 5. A "Send" (class 4) stops for approval; approved and consented, it completes with
    // the capsule; verify passes; a revoked consent stops the replay.
    let compose = mail.url("/compose");
    let sent_page = mail.url("/sent");
    let send = [
        "--verify-url",
        sent_page.as_str(),
        "--verify-text",
        "To bob: hello",
        "--url",
        compose.as_str(),
        "--goal",
        "Send a message to \"bob\" saying \"hello\"",
        "--success-text",
        "was sent",
        "--capsule",
        capsule_arg.as_str(),
        "--key-file",
        keys.capsule_key.as_str(),
        "--budget",
        "60",
    ];
    let stopped = forager_env("capsule-send-stop", &send, &env).await;
    logs.push(stopped.stderr.clone());
    let result = stopped.result.as_ref().expect("a result");
    assert_eq!(result.status, Status::Failing, "{}", stopped.stderr);
    assert_eq!(mail.lock().sent, 0);
    let position = result
        .approval_required
        .iter()
        .filter(|a| !a.actions.is_empty())
        .position(|a| a.label.contains("Send") && a.label.contains("bob"))
        .unwrap_or_else(|| panic!("{:?}", result.approval_required));
    let run_dir = stopped.out.to_string_lossy().into_owned();
    let number = (position + 1).to_string();
    let approved = command(
        "capsule-approve",
        &data,
        &[
            "approve", &run_dir, "--key", &keys.user, "--action", &number,
        ],
        &[],
    );
    assert!(approved.status.success(), "{}", text(&approved.stderr));
    let consent_path = text(&approved.stdout).trim().to_owned();
    let consent: SignedConsent =
        serde_json::from_slice(&std::fs::read(&consent_path).expect("consent")).expect("json");
    assert!(consent.value.action.label.contains("Send"));
    let mut with_consent = send.to_vec();
    with_consent.extend(["--consent", consent_path.as_str()]);
    let done = forager_env("capsule-send-done", &with_consent, &env).await;
    logs.push(done.stderr.clone());
    done.passed();
    assert_eq!(mail.lock().sent, 1);
    let done_dir = done.out.to_string_lossy().into_owned();
    let verified = command("capsule-verify", &data, &["verify", &done_dir], &[]);
    assert!(verified.status.success(), "{}", text(&verified.stdout));
    let revoked = command(
        "capsule-revoke-consent",
        &data,
        &["revoke", &consent_path, "--key", &keys.user],
        &[],
    );
    assert!(revoked.status.success(), "{}", text(&revoked.stderr));
    let workflow = done
        .out
        .join("workflow.json")
        .to_string_lossy()
        .into_owned();
    let replayed = forager_env(
        "capsule-replay-revoked",
        &[
            "replay",
            &workflow,
            "--capsule",
            &capsule_arg,
            "--key-file",
            &keys.capsule_key,
            "--consent",
            &consent_path,
        ],
        &env,
    )
    .await;
    assert_eq!(replayed.code, Some(2), "{}", replayed.stderr);
    assert!(replayed.stderr.contains("revoked"), "{}", replayed.stderr);
    assert_eq!(mail.lock().sent, 1);

    // 6. No secret anywhere: not in the capsule file, the run directories, the data folder
    // or any log.
    let mut secrets = mail.secrets();
    secrets.push(mail::PASSWORD.to_owned());
    let log_refs: Vec<&str> = logs.iter().map(String::as_str).collect();
    assert_no_secret(
        &secrets,
        &[
            home.path(),
            &reused.out,
            &stopped.out,
            &done.out,
            &std::env::temp_dir().join(format!("{}data", reused.prefix)),
        ],
        &log_refs,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_session_is_recovered_with_credentials_or_named_without() {
    let mail = Mail::start().await;
    let home = tempfile::tempdir().expect("a temporary folder");
    let data = home.path().join("data");
    let data_env = data.to_string_lossy().into_owned();
    let passphrase = [("FORAGER_CAPSULE_PASSPHRASE", "a long passphrase for ada")];
    let env = [
        ("XDG_DATA_HOME", data_env.as_str()),
        ("FORAGER_CAPSULE_PASSPHRASE", "a long passphrase for ada"),
    ];
    let keys = keys("capsule-exp-keys", home.path(), &data);
    let capsule = home.path().join("ada.capsule");
    let capsule_arg = capsule.to_string_lossy().into_owned();
    let captured = capture(
        "capsule-exp-capture",
        &mail,
        &data,
        &keys,
        &[],
        &passphrase,
        &capsule_arg,
    );
    assert!(captured.status.success(), "{}", text(&captured.stderr));
    let first_id = capsule_id(&capsule);
    let logins = mail.lock().logins;

    let portal = format!("{}/", mail.portal);
    let task = [
        "--url",
        portal.as_str(),
        "--goal",
        "Open the mail inbox",
        "--success-text",
        "Inbox of ada",
        "--allow-origin",
        mail.base.as_str(),
        "--capsule",
        capsule_arg.as_str(),
        "--budget",
        "40",
    ];

    // A wrong passphrase: refused before any browser starts.
    let portal_seen = mail.lock().portal_cookies.len();
    let wrong_env = [
        ("XDG_DATA_HOME", data_env.as_str()),
        ("FORAGER_CAPSULE_PASSPHRASE", "not the passphrase"),
    ];
    let wrong = forager_env("capsule-exp-wrong", &task, &wrong_env).await;
    assert_eq!(wrong.code, Some(2), "{}", wrong.stderr);
    assert!(
        wrong.stderr.contains("wrong passphrase"),
        "{}",
        wrong.stderr
    );
    assert_eq!(mail.lock().portal_cookies.len(), portal_seen);

    // The server ends every session. Without credentials, the run ends session_expired
    // (the portal opens, the mail asks to log in again).
    mail.expire_sessions();
    let expired = forager_env("capsule-exp-named", &task, &env).await;
    let result = expired.result.as_ref().expect("a result");
    assert_eq!(result.status, Status::Failing, "{}", expired.stderr);
    assert_eq!(
        result.error.as_ref().map(|e| e.reason),
        Some(FailureReason::SessionExpired),
        "{:?}",
        result.error
    );
    assert_eq!(mail.lock().logins, logins);

    // With the credentials and the user key: one recovery, a new capsule, a pass.
    let credentials = credential_flags();
    let mut recovering = task.to_vec();
    recovering.extend(["--key", keys.user.as_str()]);
    recovering.extend(credentials.iter().map(String::as_str));
    let recovered = forager_env("capsule-exp-recovered", &recovering, &env).await;
    recovered.passed();
    assert!(
        recovered.stderr.contains("logging in again"),
        "{}",
        recovered.stderr
    );
    let recovered_logins = mail.lock().logins;
    assert!(recovered_logins > logins, "a login to recover");
    assert_ne!(capsule_id(&capsule), first_id, "the capsule was replaced");
    let mut secrets = mail.secrets();
    secrets.push(mail::PASSWORD.to_owned());
    assert_no_secret(
        &secrets,
        &[home.path(), &recovered.out, &expired.out],
        &[&recovered.stderr, &expired.stderr],
    );

    // refresh with a short validity, then the capsule expires: refused by name.
    let refreshed = command(
        "capsule-exp-refresh",
        &data,
        &[
            &[
                "capsule",
                "refresh",
                &capsule_arg,
                "--key",
                &keys.user,
                "--valid-for",
                "2s",
            ],
            &credentials.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ]
        .concat(),
        &passphrase,
    );
    assert!(refreshed.status.success(), "{}", text(&refreshed.stderr));
    assert!(mail.lock().logins > recovered_logins);
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let stale = forager_env("capsule-exp-stale", &task, &env).await;
    assert_eq!(stale.code, Some(2), "{}", stale.stderr);
    assert!(stale.stderr.contains("expired"), "{}", stale.stderr);

    // Revoked: refused by name (the revocation is checked before the expiry).
    let revoked = command(
        "capsule-exp-revoke",
        &data,
        &["capsule", "revoke", &capsule_arg, "--key", &keys.user],
        &[],
    );
    assert!(revoked.status.success(), "{}", text(&revoked.stderr));
    let refused = forager_env("capsule-exp-revoked", &task, &env).await;
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(refused.stderr.contains("revoked"), "{}", refused.stderr);
    assert_eq!(refused.result.as_ref().map(|r| r.status), None);
}

fn capsule_id(path: &Path) -> String {
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("the capsule")).expect("json");
    document["signature"].to_string()
}

/// The session rows of the admin fixture's database (their keys: compared, never printed).
fn admin_sessions(app: &AdminApp) -> std::collections::BTreeSet<String> {
    let db = rusqlite::Connection::open_with_flags(
        app.database(),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("the database opens");
    let mut statement = db
        .prepare("SELECT session_key FROM django_session")
        .expect("the session table");
    statement
        .query_map([], |row| row.get::<_, String>(0))
        .expect("the session table is readable")
        .collect::<Result<_, _>>()
        .expect("session rows")
}

/// Panics if a step of the path is a logout: by its label, the page it reached, or where
/// its action sends.
fn assert_no_logout(result: &RunResult) {
    for step in &result.steps {
        let action = serde_json::to_string(&step.action).expect("json");
        assert!(
            !forager_node::policy::ends_session(&step.label)
                && !step.url.contains("/admin/logout/")
                && !action.contains("/admin/logout/"),
            "step {} logs out: {} ({})",
            step.index,
            step.label,
            step.url
        );
    }
}

/// The prune counts and refused writes of a run's `result.json`, as written.
fn prunes_and_refused_writes(out: &Path) -> (serde_json::Value, Vec<String>) {
    let document: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("result.json")).expect("result.json"))
            .expect("json");
    let refused = document["network"]["refused_write_requests"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|r| r.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    (document["metrics"]["pruned"].clone(), refused)
}

/// Issue 35, "sessions that survive": with a capsule of the admin fixture (modelled on
/// Django's admin, where "Log out" on every page posts to `/admin/logout/`, which deletes the
/// session's row on the server) mounted, a search that adds a group passes without ever
/// logging out: no step of its path logs out, no session row of the server is gone, and the
/// same capsule still logs a second run in afterwards (a read-only run passes, not
/// `session_expired`, with no login typed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capsule_survives_a_search_on_an_admin_whose_logout_ends_the_session() {
    let started = std::time::Instant::now();
    let home = tempfile::tempdir().expect("a temporary folder");
    let app = AdminApp::start(&home.path().join("app")).await;
    let data = home.path().join("data");
    let data_env = data.to_string_lossy().into_owned();
    let env = [("XDG_DATA_HOME", data_env.as_str())];
    let keys = keys("capsule-admin-keys", home.path(), &data);
    let capsule = home.path().join("admin.capsule");
    let capsule_arg = capsule.to_string_lossy().into_owned();

    // 1. Capture the admin's login. "Recent actions" is the dashboard's alone (the login page
    // shows "Site administration" too, in its header).
    let login = app.url("/admin/login/");
    let username = format!("username={}", app::USERNAME);
    let password = format!("password={}", app::PASSWORD);
    let captured = command(
        "capsule-admin-capture",
        &data,
        &[
            "capsule",
            "capture",
            "--url",
            &login,
            "--goal",
            "Log in",
            "--success-text",
            "Recent actions",
            "--input",
            &username,
            "--input",
            &password,
            "--key",
            &keys.user,
            "--key-file",
            &keys.capsule_key,
            "--out",
            &capsule_arg,
        ],
        &[],
    );
    assert!(
        captured.status.success(),
        "{}{}",
        text(&captured.stderr),
        text(&captured.stdout)
    );
    let sessions = admin_sessions(&app);
    assert!(!sessions.is_empty(), "the capture logged in");
    eprintln!("captured in {:?}", started.elapsed());

    // 2. Add a group, logged in by the capsule: it passes, the group exists once, and nothing
    // logged out (the server still holds every session it held).
    let dashboard = app.url("/admin/");
    let added = forager_env(
        "capsule-admin-add",
        &[
            "--url",
            &dashboard,
            "--goal",
            "add a new group named \"reviewers\"",
            "--success-text",
            "was added successfully",
            "--capsule",
            &capsule_arg,
            "--key-file",
            &keys.capsule_key,
            "--budget",
            "150",
        ],
        &env,
    )
    .await;
    let (pruned, refused_writes) = prunes_and_refused_writes(&added.out);
    eprintln!(
        "added in {:?}: pruned {pruned}, refused writes {refused_writes:?}",
        started.elapsed()
    );
    let result = added.passed();
    eprintln!(
        "path: {:?}",
        result.steps.iter().map(|s| &s.label).collect::<Vec<_>>()
    );
    assert_eq!(app.groups_named("reviewers"), 1, "the group exists once");
    assert_no_logout(result);
    assert!(
        refused_writes.iter().all(|r| !r.contains("/admin/logout/")),
        "a logout was attempted: {refused_writes:?}"
    );
    assert_eq!(
        admin_sessions(&app),
        sessions,
        "no session ended (a logout deletes its row) and no login was typed"
    );

    // 3. The capsule still logs in: a read-only run on the groups list passes with it.
    let listed = forager_env(
        "capsule-admin-list",
        &[
            "--url",
            &dashboard,
            "--goal",
            "open the groups list",
            "--success-url",
            "/admin/auth/group/$",
            "--success-text",
            "reviewers",
            "--capsule",
            &capsule_arg,
            "--key-file",
            &keys.capsule_key,
            "--budget",
            "40",
        ],
        &env,
    )
    .await;
    eprintln!("listed in {:?}", started.elapsed());
    let result = listed.result.as_ref().expect("a result");
    assert_ne!(
        result.error.as_ref().map(|e| e.reason),
        Some(FailureReason::SessionExpired),
        "{}",
        listed.stderr
    );
    let result = listed.passed();
    assert_no_logout(result);
    assert_eq!(admin_sessions(&app), sessions, "no login was typed");
    app.stop().await;
}
