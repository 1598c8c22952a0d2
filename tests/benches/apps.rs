//! forager on real open-source web applications, a bench program
//! (`cargo bench -p forager-tests --bench apps`; see `docs/real-apps-benchmark.md`).
//!
//! The applications (`apps-tasks.json` beside this file names them and their tasks) are
//! installed from PyPI by their scripts (`scripts/datasette-site`, `scripts/roundup-site`,
//! `scripts/django-admin-site`: `install DIR`, `serve DIR PORT`, `reset DIR` and count
//! commands), each in its own folder of the work directory, served on a free port of
//! 127.0.0.1 with its request log captured to `server.log`. Before every run the application
//! is reset to its snapshot. Every run is one `forager explore` (two nodes, `--no-memory`,
//! the budget), whose `result.json` gives the status, the actions and the prunes; a task that
//! writes has a count command, read before and after, so the table says whether the write
//! landed exactly once. Every credential an application knows (the `secrets` of the tasks
//! file) is searched for in the server's log lines written during the run (as typed, and
//! URL-encoded with `+` and `%20` for spaces): a hit is a credential that left a credential
//! field (typed into a search box, a filter, a URL) and is counted as a leak.
//!
//! With `--capsules`, each task marked `capsule` runs a second time with a session capsule:
//! after the reset, `forager capsule capture` logs in once (the app's `login` recipe), and
//! the task runs with `--capsule` and without the credentials.
//!
//! Flags: `--apps a,b` (default all), `--tasks a,b` (task ids or `app/id`, default all),
//! `--budget N` (default 150), `--timeout SECS` per run (default 300), `--nodes N` (default
//! 2), `--work DIR` (default `<target>/apps`: the applications' folders), `--out DIR` (default
//! `<target>/apps-bench`), `--resume` (skip runs already in `runs.jsonl`), `--capsules`,
//! `--check` (instead of searching, open each read task's hand-made answer page with a
//! one-action budget: its predicate must hold there). The binary is `$FORAGER_BIN` when set.
//! Every run is appended to `runs.jsonl` in the output directory; the table goes to stdout
//! and `table.md`.
//!
//! The workflow memory (`docs/memory-benchmark.md`): `--memory DIR` runs every task with that
//! memory folder (shared by the runs, in the order of the tasks file: an original task, then
//! its variants with other values, `family` naming the original) instead of `--no-memory`;
//! `--baseline FILE`, a `runs.jsonl` of the same tasks without memory, adds the comparison
//! (per task, per family of variants, in total) to stdout and `memory.md`.
// Synchronous program: a blocking sleep is its poll interval.
#![allow(clippy::disallowed_methods)]

use forager_tests::bench::{arg, flag, median};
use forager_tests::forager_binary;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, serde::Deserialize)]
struct Tasks {
    apps: Vec<App>,
    tasks: Vec<Task>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct App {
    name: String,
    /// The install/serve/reset script, from the repository root.
    script: String,
    /// A page that answers once the server is up.
    ready: String,
    /// Every password the application knows: none may appear in a request line.
    secrets: Vec<String>,
    /// How a session capsule logs in.
    login: Option<Login>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct Login {
    path: String,
    goal: String,
    success_text: String,
    inputs: BTreeMap<String, String>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct Task {
    app: String,
    id: String,
    kind: String,
    start: String,
    goal: String,
    #[serde(default)]
    inputs: BTreeMap<String, String>,
    success: Success,
    #[allow(dead_code)]
    predicate: String,
    /// A page where the goal is reached, made by hand (read tasks): `--check` opens it.
    answer: Option<String>,
    /// The count command's arguments after DIR, read before and after a write.
    count: Option<Vec<String>>,
    /// The change of the count a correct run makes.
    expect: Option<i64>,
    #[serde(default)]
    capsule: bool,
    verify: Option<Verify>,
    /// The task's risk ceiling when it is not the default (3): a task whose write sends
    /// something to others (filing an issue, a comment) is class 4, and its user says so.
    risk_ceiling: Option<u8>,
    /// The family of tasks with other values it belongs to (the original's id), for the
    /// memory comparison.
    family: Option<String>,
    /// `held-out` for a task written before its first run and never tuned on; absent for
    /// the tuning split.
    split: Option<String>,
    /// The actions of the shortest path a careful person takes from `start` (a navigation,
    /// a click, a field typed, a submit: one each), written with the task.
    optimal: Option<u64>,
    /// How many conditions the goal states ("drafts in the Travel category": two).
    conditions: Option<u64>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
struct Success {
    url: Option<String>,
    text: Option<String>,
    js: Option<String>,
}

#[derive(Debug, Clone, serde::Deserialize)]
struct Verify {
    url: String,
    text: String,
}

/// One run of one task.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Run {
    app: String,
    task: String,
    kind: String,
    capsule: bool,
    pass: bool,
    /// pass@1: passed with the policy's first choice at every step.
    #[serde(default)]
    first_choice: bool,
    status: String,
    reason: String,
    detail: String,
    actions: u64,
    replayed: u64,
    steps: Vec<String>,
    wall_ms: u64,
    capture_ms: u64,
    capture_ok: bool,
    writes_landed: Option<i64>,
    writes_expected: Option<i64>,
    approvals: u64,
    approval_labels: Vec<String>,
    refused_writes: Option<u64>,
    leaks: u64,
    leak_lines: Vec<String>,
    pruned: BTreeMap<String, u64>,
    binary: String,
    /// With `--memory`: the result's `metrics.memory` (the remembered workflow tried first).
    #[serde(default)]
    memory: Value,
}

struct Settings {
    budget: u64,
    timeout: u64,
    nodes: u64,
    /// The memory folder the runs share (`--memory`); none: `--no-memory`.
    memory: Option<PathBuf>,
}

/// A program run with a time limit, its output in files; `None` when it overran (killed).
fn run_with_limit(mut command: Command, limit: Duration, log: &Path) -> Option<i32> {
    let file = std::fs::File::create(log).expect("a log file");
    let err = file.try_clone().expect("a log file");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .expect("the program starts");
    let started = Instant::now();
    loop {
        match child.try_wait().expect("waitable") {
            Some(status) => return Some(status.code().unwrap_or(-1)),
            None if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// The repository's root (this package is `tests/`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// An application's server, in its own process group (killed whole on drop).
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    fn start(script: &Path, dir: &Path, log: PathBuf, ready: &str) -> Server {
        use std::os::unix::process::CommandExt;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("server.log");
        let child = Command::new(script)
            .arg("serve")
            .arg(dir)
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("server.log"))
            .stderr(file)
            .process_group(0)
            .spawn()
            .expect("the server starts");
        let server = Server { child, port, log };
        let started = Instant::now();
        while !server.answers(ready) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{} serve {} did not answer on 127.0.0.1:{port} within 60 s (see {})",
                script.display(),
                dir.display(),
                server.log.display()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        server
    }

    /// Whether `GET path` gets an HTTP status line (within 5 s).
    fn answers(&self, path: &str) -> bool {
        let Ok(mut stream) = std::net::TcpStream::connect_timeout(
            &std::net::SocketAddr::from(([127, 0, 0, 1], self.port)),
            Duration::from_secs(5),
        ) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        );
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.")
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log_len(&self) -> u64 {
        std::fs::metadata(&self.log).map_or(0, |m| m.len())
    }

    /// The log's lines written since `offset`.
    fn log_since(&self, offset: u64) -> Vec<String> {
        let bytes = std::fs::read(&self.log).unwrap_or_default();
        let from = (offset as usize).min(bytes.len());
        String::from_utf8_lossy(&bytes[from..])
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl Server {
    /// Signals the server's whole process group (the script exec'd the server, which may
    /// fork workers, as roundup-server does).
    fn signal(&self, signal: rustix::process::Signal) {
        if let Some(group) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(group, signal);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.signal(rustix::process::Signal::TERM);
        let started = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if started.elapsed() > Duration::from_secs(10) => {
                    self.signal(rustix::process::Signal::KILL);
                    let _ = self.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            }
        }
    }
}

/// Runs the app's script; its stdout, trimmed (panics, naming the command, on failure).
fn script(app_script: &Path, args: &[&str]) -> String {
    let output = Command::new(app_script)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the script runs");
    assert!(
        output.status.success(),
        "{} {args:?} failed: {}",
        app_script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// The value's forms a request line may carry it in.
fn encodings(secret: &str) -> Vec<String> {
    let mut forms = vec![
        secret.to_owned(),
        secret.replace(' ', "+"),
        secret.replace(' ', "%20"),
    ];
    forms.dedup();
    forms
}

/// The success predicates and inputs of a task as `forager explore` flags.
fn task_flags(task: &Task, base: &str, with_credentials: bool) -> Vec<String> {
    let mut flags = vec!["--goal".to_owned(), task.goal.clone()];
    if let Some(url) = &task.success.url {
        flags.extend(["--success-url".into(), url.clone()]);
    }
    if let Some(text) = &task.success.text {
        flags.extend(["--success-text".into(), text.clone()]);
    }
    if let Some(js) = &task.success.js {
        flags.extend(["--success-js".into(), js.clone()]);
    }
    if with_credentials {
        for (name, value) in &task.inputs {
            flags.extend(["--input".into(), format!("{name}={value}")]);
        }
    }
    if let Some(ceiling) = task.risk_ceiling {
        flags.extend(["--risk-ceiling".into(), ceiling.to_string()]);
    }
    if let Some(verify) = &task.verify {
        flags.extend([
            "--verify-url".into(),
            format!("{base}{}", verify.url),
            "--verify-text".into(),
            verify.text.clone(),
        ]);
    }
    flags
}

/// A number from a value, leniently (`u64` or a float).
fn number(value: &Value) -> u64 {
    value
        .as_u64()
        .or_else(|| value.as_f64().map(|f| f as u64))
        .unwrap_or(0)
}

/// A field of the result's network summary that counts refused writes, if there is one
/// (its name is read leniently: `refused_writes`, `refused_requests`, any `refused…`).
fn refused_writes(result: &Value) -> Option<u64> {
    let network = result.get("network")?.as_object()?;
    for name in ["refused_writes", "refused_non_get", "refused_requests"] {
        if let Some(v) = network.get(name) {
            return Some(number(v));
        }
    }
    network
        .iter()
        .find(|(k, v)| k.starts_with("refused") && v.is_number())
        .map(|(_, v)| number(v))
}

struct Keys {
    user: PathBuf,
    capsule: PathBuf,
}

/// The user key and capsule key the capsule runs sign and seal with (made once).
fn keys(binary: &Path, work: &Path) -> Keys {
    let dir = work.join("keys");
    std::fs::create_dir_all(&dir).expect("the keys folder");
    let keys = Keys {
        user: dir.join("user.key"),
        capsule: dir.join("capsule.key"),
    };
    if !keys.user.is_file() {
        let status = Command::new(binary)
            .args(["key", "--user", "--out"])
            .arg(&keys.user)
            .status()
            .expect("forager key runs");
        assert!(status.success(), "forager key --user failed");
    }
    if !keys.capsule.is_file() {
        let status = Command::new(binary)
            .args(["capsule", "keygen", "--out"])
            .arg(&keys.capsule)
            .status()
            .expect("forager capsule keygen runs");
        assert!(status.success(), "forager capsule keygen failed");
    }
    keys
}

struct Context<'a> {
    binary: &'a Path,
    binary_label: &'a str,
    settings: &'a Settings,
    out: &'a Path,
    keys: Option<&'a Keys>,
}

/// One run: reset, count, (capture,) explore, count, read the log.
fn run_task(
    cx: &Context,
    app: &App,
    app_script: &Path,
    dir: &Path,
    server: &Server,
    task: &Task,
    with_capsule: bool,
) -> Run {
    let dir_arg = dir.to_string_lossy().into_owned();
    script(app_script, &["reset", &dir_arg]);
    let count = |args: &Vec<String>| -> i64 {
        let mut all = vec![args[0].as_str(), dir_arg.as_str()];
        all.extend(args[1..].iter().map(String::as_str));
        script(app_script, &all)
            .parse()
            .expect("a count is a number")
    };
    let before = task.count.as_ref().map(count);
    let offset = server.log_len();
    let base = server.base();
    let run_dir = cx.out.join("runs").join(format!(
        "{}-{}{}",
        app.name,
        task.id,
        if with_capsule { "-capsule" } else { "" }
    ));
    let _ = std::fs::remove_dir_all(&run_dir);
    std::fs::create_dir_all(&run_dir).expect("the run's folder");
    let started = Instant::now();

    let mut capsule_flags: Vec<String> = Vec::new();
    let (mut capture_ms, mut capture_ok) = (0, false);
    if with_capsule {
        let keys = cx.keys.expect("keys for capsule runs");
        let login = app.login.as_ref().expect("the app has a login recipe");
        let capsule = run_dir.join("session.capsule");
        let mut capture = Command::new(cx.binary);
        capture
            .args(["capsule", "capture", "--url"])
            .arg(format!("{base}{}", login.path))
            .args(["--goal", &login.goal, "--success-text", &login.success_text])
            .arg("--key")
            .arg(&keys.user)
            .arg("--key-file")
            .arg(&keys.capsule)
            .arg("--out")
            .arg(&capsule);
        for (name, value) in &login.inputs {
            capture.args(["--input", &format!("{name}={value}")]);
        }
        let code = run_with_limit(
            capture,
            Duration::from_secs(180),
            &run_dir.join("capture.log"),
        );
        capture_ms = started.elapsed().as_millis() as u64;
        capture_ok = code == Some(0) && capsule.is_file();
        capsule_flags = vec![
            "--capsule".into(),
            capsule.to_string_lossy().into_owned(),
            "--key-file".into(),
            keys.capsule.to_string_lossy().into_owned(),
        ];
    }

    let explored = Instant::now();
    let (result, exit) = if with_capsule && !capture_ok {
        (Value::Null, None)
    } else {
        let mut explore = Command::new(cx.binary);
        explore
            .arg("explore")
            .args(["--url", &format!("{base}{}", task.start)])
            .args(task_flags(task, &base, !with_capsule))
            .args(&capsule_flags)
            .args(["--budget", &cx.settings.budget.to_string()])
            .args(["--timeout", &cx.settings.timeout.to_string()])
            .args(["--nodes", &cx.settings.nodes.to_string()])
            // One family per application: what is learned on one port serves on another.
            .args(["--family", &app.name]);
        match &cx.settings.memory {
            Some(dir) => explore.arg("--memory").arg(dir),
            None => explore.arg("--no-memory"),
        };
        explore.arg("--out").arg(run_dir.join("explore"));
        let exit = run_with_limit(
            explore,
            Duration::from_secs(cx.settings.timeout + 120),
            &run_dir.join("explore.log"),
        );
        let result = std::fs::read_to_string(run_dir.join("explore").join("result.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .unwrap_or(Value::Null);
        (result, exit)
    };
    let wall_ms = explored.elapsed().as_millis() as u64;
    let after = task.count.as_ref().map(count);

    let mut leak_lines = Vec::new();
    for line in server.log_since(offset) {
        if app
            .secrets
            .iter()
            .flat_map(|s| encodings(s))
            .any(|form| line.contains(&form))
        {
            leak_lines.push(line.chars().take(300).collect());
        }
    }
    let status = result["status"].as_str().unwrap_or("").to_owned();
    let (reason, detail) = if result.is_null() {
        let why = if with_capsule && !capture_ok {
            "capture_failed"
        } else if exit.is_none() {
            "killed_after_timeout"
        } else {
            "no_result"
        };
        (
            why.to_owned(),
            std::fs::read_to_string(run_dir.join(if with_capsule && !capture_ok {
                "capture.log"
            } else {
                "explore.log"
            }))
            .unwrap_or_default()
            .lines()
            .last()
            .unwrap_or("")
            .to_owned(),
        )
    } else {
        (
            result["error"]["reason"].as_str().unwrap_or("").to_owned(),
            result["error"]["detail"].as_str().unwrap_or("").to_owned(),
        )
    };
    let approvals = result["approval_required"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Run {
        app: app.name.clone(),
        task: task.id.clone(),
        kind: task.kind.clone(),
        capsule: with_capsule,
        pass: status == "pass",
        first_choice: status == "pass"
            && result["steps"].as_array().is_some_and(|steps| {
                !steps.is_empty() && steps.iter().all(|step| step["why"]["rank"] == 1)
            }),
        status,
        reason,
        detail,
        actions: number(&result["metrics"]["actions"]),
        replayed: number(&result["metrics"]["replayed_actions"]),
        steps: result["steps"]
            .as_array()
            .map(|s| {
                s.iter()
                    .map(|step| step["label"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default(),
        wall_ms,
        capture_ms,
        capture_ok,
        writes_landed: before.zip(after).map(|(b, a)| a - b),
        writes_expected: task.expect,
        approvals: approvals.len() as u64,
        approval_labels: approvals
            .iter()
            .map(|a| {
                format!(
                    "{} (risk {})",
                    a["label"].as_str().unwrap_or(""),
                    a["risk"]
                        .as_u64()
                        .map_or_else(|| a["risk"].to_string(), |r| r.to_string())
                )
            })
            .collect(),
        refused_writes: refused_writes(&result),
        leaks: leak_lines.len() as u64,
        leak_lines,
        pruned: result["metrics"]["pruned"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), number(v))).collect())
            .unwrap_or_default(),
        binary: cx.binary_label.to_owned(),
        memory: result["metrics"]["memory"].clone(),
    }
}

/// `--check`: the predicate must hold on the task's hand-made answer page.
fn check_answer(cx: &Context, server: &Server, task: &Task) -> bool {
    let Some(answer) = &task.answer else {
        return true;
    };
    let base = server.base();
    let dir = cx
        .out
        .join("check")
        .join(format!("{}-{}", task.app, task.id));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the check's folder");
    let mut explore = Command::new(cx.binary);
    explore
        .arg("explore")
        .args(["--url", &format!("{base}{answer}")])
        .args(task_flags(task, &base, true))
        .args(["--budget", "1", "--timeout", "120", "--no-memory", "--out"])
        .arg(dir.join("explore"));
    let _ = run_with_limit(explore, Duration::from_secs(180), &dir.join("explore.log"));
    std::fs::read_to_string(dir.join("explore").join("result.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .is_some_and(|r| r["status"] == "pass")
}

/// What `--help` prints.
const USAGE: &str = "\
forager on real open-source web applications (docs/real-apps-benchmark.md)

USAGE: cargo bench -p forager-tests --bench apps -- [FLAGS]

  --apps a,b          applications to run (datasette, roundup, django, wordpress, mediawiki,
                      oscar, directus; default all)
  --tasks a,b         task ids or app/id from apps-tasks.json (default all)
  --tasks-file FILE   read the applications and tasks from FILE instead of apps-tasks.json
                      (a script path in it is the repository's unless absolute)
  --split NAME        only the tasks of this split (held-out, or tuning: those without one)
  --budget N          actions per run (default 150)
  --timeout SECS      wall-clock limit per run (default 300)
  --nodes N           nodes per run (default 2)
  --work DIR          where the applications are installed (default <target>/apps)
  --out DIR           runs.jsonl, table.md and each run's folder (default <target>/apps-bench)
  --resume            skip the runs already in DIR/runs.jsonl
  --capsules          also run each capsule task with a captured session
  --check             open each read task's answer page instead of searching
  --memory DIR        run every task with this workflow memory (shared, in file order)
  --baseline FILE     a runs.jsonl without memory: adds memory.md, the comparison

The forager binary is $FORAGER_BIN when set, else target/release/forager.
";

fn main() {
    if flag("--help") || flag("-h") {
        print!("{USAGE}");
        return;
    }
    let binary = forager_binary();
    let target = binary
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .expect("the binary lives in target/<profile>/");
    let out = arg("--out").map_or_else(|| target.join("apps-bench"), PathBuf::from);
    let work = arg("--work").map_or_else(|| target.join("apps"), PathBuf::from);
    std::fs::create_dir_all(&out).expect("the output directory");
    std::fs::create_dir_all(&work).expect("the work directory");
    // The scripts change directory (oscar-site serves from its project): a relative --work
    // would name another folder there.
    let work = std::fs::canonicalize(&work).expect("the work directory");
    let settings = Settings {
        budget: arg("--budget").map_or(150, |s| s.parse().expect("--budget N")),
        timeout: arg("--timeout").map_or(300, |s| s.parse().expect("--timeout SECS")),
        nodes: arg("--nodes").map_or(2, |s| s.parse().expect("--nodes N")),
        memory: arg("--memory").map(PathBuf::from),
    };
    let all: Tasks = match arg("--tasks-file") {
        Some(file) => {
            let text = std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("--tasks-file {file}: {e}"));
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("--tasks-file {file}: {e}"))
        }
        None => {
            serde_json::from_str(include_str!("apps-tasks.json")).expect("apps-tasks.json is valid")
        }
    };
    let chosen_split = arg("--split");
    let chosen_apps: Option<Vec<String>> =
        arg("--apps").map(|s| s.split(',').map(str::to_owned).collect());
    let chosen_tasks: Option<Vec<String>> =
        arg("--tasks").map(|s| s.split(',').map(str::to_owned).collect());
    let capsules = flag("--capsules");
    let checking = flag("--check");
    let binary_label = Command::new(&binary)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();

    let log_path = out.join("runs.jsonl");
    let mut done: Vec<Run> = if flag("--resume") {
        std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    } else {
        if !checking {
            let _ = std::fs::remove_file(&log_path);
        }
        Vec::new()
    };
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .expect("runs.jsonl");
    let keys = capsules.then(|| keys(&binary, &work));
    let cx = Context {
        binary: &binary,
        binary_label: &binary_label,
        settings: &settings,
        out: &out,
        keys: keys.as_ref(),
    };
    let mut check_failures = 0;

    for app in &all.apps {
        if chosen_apps.as_ref().is_some_and(|c| !c.contains(&app.name)) {
            continue;
        }
        let tasks: Vec<&Task> = all
            .tasks
            .iter()
            .filter(|t| t.app == app.name)
            .filter(|t| {
                chosen_split
                    .as_deref()
                    .is_none_or(|s| t.split.as_deref().unwrap_or("tuning") == s)
            })
            .filter(|t| {
                chosen_tasks.as_ref().is_none_or(|c| {
                    c.iter()
                        .any(|n| *n == t.id || *n == format!("{}/{}", t.app, t.id))
                })
            })
            .collect();
        if tasks.is_empty() {
            continue;
        }
        // A relative script is the repository's; an absolute one is anyone's (a task file
        // being written outside the repository).
        let app_script = repo_root().join(&app.script);
        let dir = work.join(&app.name);
        eprintln!("{}: {} install {}", app.name, app.script, dir.display());
        let installed = Command::new(&app_script)
            .arg("install")
            .arg(&dir)
            .status()
            .expect("the install script runs");
        assert!(installed.success(), "{} install failed", app.script);
        let server = Server::start(&app_script, &dir, dir.join("server.log"), &app.ready);
        eprintln!("{}: serving on {}", app.name, server.base());

        for task in tasks {
            if checking {
                let ok = check_answer(&cx, &server, task);
                if !ok {
                    check_failures += 1;
                }
                eprintln!(
                    "check {:>9}/{:<15} {}",
                    app.name,
                    task.id,
                    match (&task.answer, ok) {
                        (None, _) => "no answer page",
                        (Some(_), true) => "holds on the answer page",
                        (Some(_), false) => "DOES NOT HOLD on the answer page",
                    }
                );
                continue;
            }
            let mut modes = vec![false];
            if capsules && task.capsule && app.login.is_some() {
                modes.push(true);
            }
            for with_capsule in modes {
                if done
                    .iter()
                    .any(|r| r.app == app.name && r.task == task.id && r.capsule == with_capsule)
                {
                    continue;
                }
                let run = run_task(&cx, app, &app_script, &dir, &server, task, with_capsule);
                eprintln!(
                    "{:>9} {:<15} {:<8} {} in {:>3} actions, {:.1} s, writes {}/{} {} {}",
                    app.name,
                    task.id,
                    if with_capsule { "capsule" } else { "" },
                    if run.pass { "pass" } else { "FAIL" },
                    run.actions,
                    run.wall_ms as f64 / 1000.0,
                    run.writes_landed.map_or("-".into(), |w| w.to_string()),
                    run.writes_expected.map_or("-".into(), |w| w.to_string()),
                    run.reason,
                    if run.leaks > 0 { "LEAK" } else { "" }
                );
                let _ = writeln!(log, "{}", json!(run));
                done.push(run);
            }
        }
        drop(server);
    }
    if checking {
        eprintln!("check: {check_failures} predicate(s) do not hold on their answer page");
        std::process::exit(i32::from(check_failures > 0));
    }
    let table = table(&all.tasks, &done, settings.budget);
    println!("{table}");
    std::fs::write(out.join("table.md"), &table).expect("table.md");
    if let Some(baseline) = arg("--baseline") {
        let without: Vec<Run> = std::fs::read_to_string(&baseline)
            .unwrap_or_else(|e| panic!("--baseline {baseline}: {e}"))
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let compared = memory_table(&all.tasks, &done, &without);
        println!("{compared}");
        std::fs::write(out.join("memory.md"), &compared).expect("memory.md");
    }
}

/// `--baseline FILE` (the `runs.jsonl` of the same tasks run with `--no-memory`): these runs
/// (with `--memory`) beside those, per task; per family of tasks with other values, the
/// variants' actions with memory over without (the original is what fills the memory); and
/// over all the tasks both ran, in the order run, the total.
fn memory_table(tasks: &[Task], with: &[Run], without: &[Run]) -> String {
    let mut out = String::from(
        "| app | task | family | capsule | memory | pass with / without | actions with / without | wall s with / without |\n|---|---|---|---|---|---|---|---|\n",
    );
    let pair = |r: &Run| {
        without
            .iter()
            .find(|b| b.app == r.app && b.task == r.task && b.capsule == r.capsule)
    };
    let mut families: BTreeMap<(String, bool), (u64, u64, usize)> = BTreeMap::new();
    let (mut total_with, mut total_without) = (0u64, 0u64);
    for r in with {
        let Some(b) = pair(r) else { continue };
        let family = tasks
            .iter()
            .find(|t| t.app == r.app && t.id == r.task)
            .and_then(|t| t.family.clone());
        let memory = if r.memory.is_null() {
            "–".to_owned()
        } else if r.memory["worked"] == true {
            format!("worked ({} steps)", r.memory["steps"])
        } else if r.memory["matched"] == "prefix" {
            format!(
                "shared prefix, {} of {} steps",
                r.memory["reached"], r.memory["steps"]
            )
        } else if r.memory["matched"] == "part" {
            format!(
                "first part's workflow, {} of {} steps",
                r.memory["reached"], r.memory["steps"]
            )
        } else {
            format!(
                "diverged after {} of {}",
                r.memory["reached"], r.memory["steps"]
            )
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} / {} | {} / {} | {:.1} / {:.1} |\n",
            r.app,
            r.task,
            family.as_deref().unwrap_or("–"),
            if r.capsule { "yes" } else { "no" },
            memory,
            if r.pass { "✓" } else { "✗" },
            if b.pass { "✓" } else { "✗" },
            r.actions,
            b.actions,
            r.wall_ms as f64 / 1000.0,
            b.wall_ms as f64 / 1000.0,
        ));
        total_with += r.actions;
        total_without += b.actions;
        if let Some(family) = family
            && family != r.task
        {
            let f = families.entry((family, r.capsule)).or_default();
            f.0 += r.actions;
            f.1 += b.actions;
            f.2 += 1;
        }
    }
    out.push('\n');
    let mut ratios = Vec::new();
    for ((family, capsule), (w, wo, n)) in &families {
        let ratio = *w as f64 / (*wo).max(1) as f64;
        ratios.push(ratio);
        out.push_str(&format!(
            "- family {family}{}: {n} variants, {w} actions with memory, {wo} without: {ratio:.2}×\n",
            if *capsule { " (capsule)" } else { "" }
        ));
    }
    if let Some(median) = median(&ratios) {
        out.push_str(&format!("- median over families: {median:.2}×\n"));
    }
    out.push_str(&format!(
        "- all tasks both ran, in order: {total_with} actions with memory, {total_without} without: {:.2}×\n",
        total_with as f64 / total_without.max(1) as f64
    ));
    out
}

/// The per-run table and the summary lines.
fn table(tasks: &[Task], runs: &[Run], budget: u64) -> String {
    let mut out = String::from(
        "| app | task | split | kind | conditions | capsule | pass | actions | optimal | wall s | writes landed/expected | approvals | refused writes | leaks | reason |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let task_of = |r: &Run| tasks.iter().find(|t| t.app == r.app && t.id == r.task);
    for r in runs {
        let task = task_of(r);
        let goal = task.map_or("", |t| t.goal.as_str());
        out.push_str(&format!(
            "| {} | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} |\n",
            r.app,
            r.task,
            goal.replace('|', "\\|"),
            task.map_or("tuning", split_of),
            r.kind,
            task.and_then(|t| t.conditions).map_or("–".into(), |n| n.to_string()),
            if r.capsule { "yes" } else { "no" },
            if r.pass { "✓" } else { "✗" },
            r.actions,
            task.and_then(|t| t.optimal).map_or("–".into(), |n| n.to_string()),
            r.wall_ms as f64 / 1000.0,
            match (r.writes_landed, r.writes_expected) {
                (Some(l), Some(e)) => format!("{l}/{e}{}", if l == e { "" } else { " ✗" }),
                _ => "–".into(),
            },
            r.approvals,
            r.refused_writes.map_or("–".into(), |n| n.to_string()),
            r.leaks,
            if r.pass {
                String::new()
            } else {
                format!(
                    "{}: {}",
                    r.reason,
                    r.detail.chars().take(140).collect::<String>()
                )
                .replace('|', "\\|")
            },
        ));
    }
    out.push('\n');
    let mut apps: Vec<&str> = Vec::new();
    for r in runs {
        if !apps.contains(&r.app.as_str()) {
            apps.push(&r.app);
        }
    }
    for app in apps {
        for capsule in [false, true] {
            let mine: Vec<&Run> = runs
                .iter()
                .filter(|r| r.app == app && r.capsule == capsule)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let passed = mine
                .iter()
                .filter(|r| r.pass && r.actions <= budget)
                .count();
            let writes: Vec<&&Run> = mine
                .iter()
                .filter(|r| r.writes_expected.is_some())
                .collect();
            let exact = writes
                .iter()
                .filter(|r| r.writes_landed == r.writes_expected)
                .count();
            let actions: Vec<f64> = mine.iter().map(|r| r.actions as f64).collect();
            let first_choice = mine.iter().filter(|r| r.first_choice).count();
            out.push_str(&format!(
                "- {app}, {}: {passed}/{} pass within {budget} actions ({:.0}%), pass@1 {first_choice}; writes landed exactly once {exact}/{}; median actions {:.0}; median wall {:.1} s; approvals {}; leaks {}\n",
                if capsule { "with a capsule" } else { "without a capsule" },
                mine.len(),
                100.0 * passed as f64 / mine.len() as f64,
                writes.len(),
                median(&actions).unwrap_or(0.0),
                median(&mine.iter().map(|r| r.wall_ms as f64 / 1000.0).collect::<Vec<_>>())
                    .unwrap_or(0.0),
                mine.iter().map(|r| r.approvals).sum::<u64>(),
                mine.iter().map(|r| r.leaks).sum::<u64>(),
            ));
        }
    }
    out.push('\n');
    for split in ["tuning", "held-out"] {
        for (label, wanted) in [
            ("all", None),
            ("one condition", Some(false)),
            ("two or more", Some(true)),
        ] {
            let mine: Vec<(&Run, &Task)> = runs
                .iter()
                .filter(|r| !r.capsule)
                .filter_map(|r| task_of(r).map(|t| (r, t)))
                .filter(|(_, t)| split_of(t) == split)
                .filter(|(_, t)| {
                    wanted.is_none_or(|several| (t.conditions.unwrap_or(1) >= 2) == several)
                })
                .collect();
            if mine.is_empty() {
                continue;
            }
            let passed: Vec<&(&Run, &Task)> = mine
                .iter()
                .filter(|(r, _)| r.pass && r.actions <= budget)
                .collect();
            // Over the passed runs whose task says its optimal path: actions ÷ optimal.
            let ratios: Vec<f64> = passed
                .iter()
                .filter_map(|(r, t)| {
                    t.optimal
                        .filter(|&o| o > 0)
                        .map(|o| r.actions as f64 / o as f64)
                })
                .collect();
            out.push_str(&format!(
                "- {split}, {label}: {}/{} pass ({:.0}%); median actions {:.0} against a median optimal path of {:.0} (median ratio {} over {} passed tasks that say their optimal path)\n",
                passed.len(),
                mine.len(),
                100.0 * passed.len() as f64 / mine.len() as f64,
                median(&mine.iter().map(|(r, _)| r.actions as f64).collect::<Vec<_>>()).unwrap_or(0.0),
                median(&mine.iter().filter_map(|(_, t)| t.optimal.map(|o| o as f64)).collect::<Vec<_>>()).unwrap_or(0.0),
                median(&ratios).map_or("–".into(), |m| format!("{m:.2}×")),
                ratios.len(),
            ));
        }
    }
    out
}

/// A task's split: `held-out`, or `tuning` for one without a split.
fn split_of(task: &Task) -> &str {
    task.split.as_deref().unwrap_or("tuning")
}
