//! One Chromium process: launched by us in its own process group with a fresh profile, driven
//! over CDP by chromiumoxide, killed as a group.
//!
//! We launch Chromium ourselves (rather than through chromiumoxide) to own the process: its
//! PID and process group, its stderr, and its profile directory. Chromium's helper processes
//! outlive a killed parent, so dropping a [`BrowserProcess`] kills the whole group.

use chromiumoxide::Browser;
use futures::StreamExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::AsyncBufReadExt;

/// Where Debian installs the real Chromium binary (`/usr/bin/chromium` is a shell wrapper).
pub const DEBIAN_CHROMIUM: &str = "/usr/lib/chromium/chromium";

/// Flags every forager Chromium gets: headless, no sandbox (we run as root in containers), and
/// nothing that reaches for the network on its own.
pub const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--disable-domain-reliability",
    "--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication",
    "--metrics-recording-only",
    "--mute-audio",
    "--password-store=basic",
    "--use-mock-keychain",
    "--hide-scrollbars",
    "--window-size=1280,900",
];

/// How to launch Chromium.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserOptions {
    /// The Chromium binary; default: `FORAGER_CHROMIUM`, else Debian's, else `chromium` on PATH.
    pub executable: PathBuf,
    /// How long to wait for the DevTools endpoint.
    pub launch_timeout: Duration,
    /// Prefix of the temporary profile directory (tests look for leftovers by it); default
    /// `FORAGER_PROFILE_PREFIX`, else `forager-chromium-`.
    pub profile_prefix: String,
    /// Where profile directories go (default: the system's temporary directory). A node puts
    /// them in its data directory so that it can find and kill the browsers of a previous
    /// incarnation that was killed before it could.
    pub profile_dir: Option<PathBuf>,
}

impl Default for BrowserOptions {
    fn default() -> Self {
        let executable = std::env::var_os("FORAGER_CHROMIUM")
            .map(PathBuf::from)
            .or_else(|| {
                Path::new(DEBIAN_CHROMIUM)
                    .exists()
                    .then(|| PathBuf::from(DEBIAN_CHROMIUM))
            })
            .unwrap_or_else(|| PathBuf::from("chromium"));
        BrowserOptions {
            executable,
            launch_timeout: Duration::from_secs(20),
            profile_prefix: std::env::var("FORAGER_PROFILE_PREFIX")
                .unwrap_or_else(|_| "forager-chromium-".into()),
            profile_dir: None,
        }
    }
}

/// Why Chromium could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// The binary could not be executed.
    #[error(
        "cannot start Chromium at {path}: {source} (install it with `apt-get install -y chromium`, \
         or set FORAGER_CHROMIUM)"
    )]
    Spawn {
        /// The binary tried.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No profile directory could be made.
    #[error("cannot create a Chromium profile directory: {0}")]
    Profile(std::io::Error),
    /// Chromium did not announce its DevTools endpoint in time (or exited first).
    #[error("Chromium did not start within {0:?}: {1}")]
    NoEndpoint(Duration, String),
    /// The DevTools connection failed.
    #[error("cannot connect to Chromium's DevTools endpoint: {0}")]
    Connect(String),
}

/// A running Chromium. Dropping it kills the process group and removes the profile.
pub struct BrowserProcess {
    browser: Arc<Browser>,
    pid: u32,
    child: Option<tokio::process::Child>,
    handler: tokio::task::JoinHandle<()>,
    // Declared last: removed after the processes are gone.
    profile: tempfile::TempDir,
}

impl std::fmt::Debug for BrowserProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserProcess")
            .field("pid", &self.pid)
            .field("profile", &self.profile.path())
            .finish()
    }
}

impl BrowserProcess {
    /// Launches Chromium and connects to it.
    pub async fn launch(options: &BrowserOptions) -> Result<BrowserProcess, LaunchError> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(&options.profile_prefix);
        let profile = match &options.profile_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(LaunchError::Profile)?;
                builder.tempdir_in(dir)
            }
            None => builder.tempdir(),
        }
        .map_err(LaunchError::Profile)?;
        let mut command = tokio::process::Command::new(&options.executable);
        command
            .args(FLAGS)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let started = Instant::now();
        let mut child = command.spawn().map_err(|source| LaunchError::Spawn {
            path: options.executable.clone(),
            source,
        })?;
        let pid = child.id().unwrap_or(0);
        let Some(stderr) = child.stderr.take() else {
            kill_group(pid);
            return Err(LaunchError::NoEndpoint(
                options.launch_timeout,
                "no stderr".into(),
            ));
        };
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        let mut seen = Vec::new();
        let endpoint = tokio::time::timeout(options.launch_timeout, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("ws://") {
                    return Some(line[at..].trim().to_owned());
                }
                if seen.len() < 20 {
                    seen.push(line);
                }
            }
            None
        })
        .await;
        let endpoint = match endpoint {
            Ok(Some(endpoint)) => endpoint,
            Ok(None) | Err(_) => {
                kill_group(pid);
                let _ = child.wait().await;
                return Err(LaunchError::NoEndpoint(
                    options.launch_timeout,
                    seen.join(" | "),
                ));
            }
        };
        // Keep draining stderr so Chromium never blocks on a full pipe.
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::trace!(target: "chromium", "{line}");
            }
        });
        let (browser, mut handler) = match Browser::connect(endpoint).await {
            Ok(pair) => pair,
            Err(e) => {
                kill_group(pid);
                let _ = child.wait().await;
                return Err(LaunchError::Connect(e.to_string()));
            }
        };
        // The handler must be polled for as long as the browser lives, errors or not.
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(error) = event {
                    tracing::debug!(%error, "chromium handler");
                }
            }
        });
        tracing::info!(
            pid,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "chromium started"
        );
        Ok(BrowserProcess {
            browser: Arc::new(browser),
            pid,
            child: Some(child),
            handler,
            profile,
        })
    }

    /// The CDP client.
    pub fn browser(&self) -> &Arc<Browser> {
        &self.browser
    }

    /// The browser process's PID (its process group id too).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The profile directory.
    pub fn profile(&self) -> &Path {
        self.profile.path()
    }

    /// Whether the process is still running and its CDP connection alive.
    pub fn is_alive(&mut self) -> bool {
        let running = self
            .child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)));
        running && !self.handler.is_finished()
    }

    /// Kills the process group and waits (briefly) for the browser to exit.
    pub async fn shutdown(mut self) {
        kill_group(self.pid);
        if let Some(mut child) = self.child.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
        }
        self.handler.abort();
    }
}

impl Drop for BrowserProcess {
    fn drop(&mut self) {
        kill_group(self.pid);
        self.handler.abort();
        if let Some(mut child) = self.child.take() {
            // Reap it so no zombie stays behind; it was just sent SIGKILL.
            for _ in 0..50 {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }
    }
}

/// Kills every Chromium process group whose command line names a profile under `dir` (the
/// browsers of a previous incarnation of this node that died without cleaning up), and removes
/// their profile directories. Returns how many process groups were killed.
pub fn reap_stale_browsers(dir: &Path) -> usize {
    let needle = format!("--user-data-dir={}", dir.display());
    let mut groups = std::collections::BTreeSet::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(&needle) {
                // The group leader is the browser we launched: its pid is the group id.
                let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
                let pgid = stat
                    .rfind(')')
                    .and_then(|end| stat[end + 1..].split_whitespace().nth(2))
                    .and_then(|g| g.parse::<u32>().ok())
                    .unwrap_or(pid);
                groups.insert(pgid);
            }
        }
    }
    for pgid in &groups {
        kill_group(*pgid);
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    groups.len()
}

/// SIGKILL to a whole process group; Chromium's helpers die with it.
pub fn kill_group(pid: u32) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
}
