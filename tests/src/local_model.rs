//! The local model server (`scripts/local-model serve`: node-llama-cpp and SmolLM2-135M from
//! the package registries) as a test's child process, on a free port of 127.0.0.1, logging
//! every request body it receives. Stopped when dropped.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// How long the server may take to answer its first health check (an install, if the
/// machine has none yet, included).
const START_LIMIT: Duration = Duration::from_secs(240);

/// The model's name, as the server lists it.
pub const MODEL_NAME: &str = "smollm2-135m-instruct";

/// A running local model server.
pub struct LocalModel {
    child: tokio::process::Child,
    /// Its base URL (`http://127.0.0.1:PORT/v1`).
    pub url: String,
    /// The file it appends every request body to, one line each.
    pub log: PathBuf,
}

impl LocalModel {
    /// Starts the server, or returns `None` when the machine lacks Node.js and
    /// `FORAGER_TEST_SKIP=local-model` says the test may be skipped (else the test fails,
    /// naming what is missing).
    pub async fn start(test: &str) -> Option<LocalModel> {
        let node = std::process::Command::new("node")
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success());
        let missing = node
            .is_none()
            .then(|| "Node.js (`node`) is not installed".to_owned());
        if !crate::require("local-model", test, missing) {
            return None;
        }
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/local-model");
        // Not named by the test's profile prefix: the check for leftover Chromium processes
        // looks for that prefix in command lines, and this server's names its log.
        let log = std::env::temp_dir().join(format!(
            "local-model-{}-{test}-requests.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&log);
        let mut child = tokio::process::Command::new("bash")
            .arg(&script)
            .arg("serve")
            .arg("0")
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("bash runs scripts/local-model");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let url = tokio::time::timeout(START_LIMIT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(url) = line.strip_prefix("listening ") {
                    return Some(url.trim().to_owned());
                }
            }
            None
        })
        .await
        .unwrap_or_else(|_| panic!("the local model did not start within {START_LIMIT:?}"))
        .expect("scripts/local-model serve exited before listening (see its stderr above)");
        // Keep reading its stdout so that it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Some(LocalModel { child, url, log })
    }

    /// The `forager explore` flags that use this server as the model tier. A CPU model beside
    /// two browsers on a loaded machine: a call must not time out (a failed call is not
    /// cached, and the cache test counts on every answer).
    pub fn explore_args(&self) -> Vec<String> {
        vec![
            "--model-url".into(),
            self.url.clone(),
            "--model".into(),
            MODEL_NAME.into(),
            "--model-timeout".into(),
            "120".into(),
        ]
    }

    /// Every request body the server received so far.
    pub fn requests(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Stops the server now (as a crash would: SIGKILL).
    pub async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }
}
