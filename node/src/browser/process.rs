//! One Chromium process: launched by us in its own process group with a fresh profile, driven
//! over CDP by chromiumoxide, killed as a group.
//!
//! We launch Chromium ourselves (rather than through chromiumoxide) to own the process: its
//! PID and process group, its stderr, and its profile directory. Chromium's helper processes
//! outlive a killed parent, so dropping a [`BrowserProcess`] kills the whole group.
//!
//! However forager dies (SIGKILL, the OOM killer, a crash), its browsers die with it: Chromium
//! starts with a parent-death signal (`PR_SET_PDEATHSIG` = SIGKILL), and once its main process
//! is gone its helpers (zygotes, renderers, GPU and utility processes, crash handlers) exit on
//! their own, within seconds (measured: none left 4 s after a SIGKILL of the main process).
//! What a killed forager cannot remove, its browsers' profile folders and Chromium's socket
//! folders, the next forager that launches a browser in the same place removes: each profile
//! holds `forager.lock`, locked (`flock`) by the process that owns it, and a profile whose lock
//! can be taken has no living owner ([`sweep_stale_profiles`]).
//!
//! A start that exits or stalls before it announces its DevTools endpoint is tried once more.
//! Shutting down (or dropping) a [`BrowserProcess`] waits, at most [`GROUP_EXIT_LIMIT`], until
//! every process of the group and of its profile (the crash handler leaves the group) is gone,
//! and removes the profile
//! and the directory of Chromium's single-instance socket, which Chromium makes under `$TMPDIR`
//! and removes only on a clean exit (`remove_singleton_dir`). The binary is a child subreaper
//! ([`adopt_orphans`]) and reaps what is left before it exits ([`reap_orphans`]). The
//! parent-death signal is set between fork and exec (`die_with_this_thread`), the workspace's
//! one `unsafe` block.

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
    /// Chromium did not announce its DevTools endpoint in time (or exited first), twice.
    #[error("Chromium did not start within {0:?} (tried twice): {1}")]
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
    /// `forager.lock` in the profile, locked while this process owns the profile.
    _owner: std::fs::File,
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
    /// Launches Chromium and connects to it. A Chromium that exits or stalls before it
    /// announces its DevTools endpoint is tried once more with a fresh profile: on a loaded
    /// machine one start in many crashes in its first second (seen in a test suite of 16
    /// concurrent browser tests on 2 cores), and the second start succeeds.
    pub async fn launch(options: &BrowserOptions) -> Result<BrowserProcess, LaunchError> {
        match Self::launch_once(options).await {
            Err(LaunchError::NoEndpoint(_, output)) => {
                tracing::warn!(%output, "Chromium did not start; launching it once more");
                Self::launch_once(options).await
            }
            other => other,
        }
    }

    async fn launch_once(options: &BrowserOptions) -> Result<BrowserProcess, LaunchError> {
        let root = options
            .profile_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        std::fs::create_dir_all(&root).map_err(LaunchError::Profile)?;
        sweep_once(&root, &options.profile_prefix);
        let profile = tempfile::Builder::new()
            .prefix(&options.profile_prefix)
            .tempdir_in(&root)
            .map_err(LaunchError::Profile)?;
        let owner = lock_profile(profile.path()).map_err(LaunchError::Profile)?;
        let mut command = tokio::process::Command::new(&options.executable);
        command
            .args(FLAGS)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            // Chromium's crash handler leaves the process group (it starts a session of its
            // own) and names its database after the configuration directory: put that in the
            // profile, so that the handler's command line says whose it is.
            .env("XDG_CONFIG_HOME", profile.path())
            .process_group(0)
            .kill_on_drop(true);
        die_with_this_thread(&mut command);
        let started = Instant::now();
        let mut child = command.spawn().map_err(|source| LaunchError::Spawn {
            path: options.executable.clone(),
            source,
        })?;
        let pid = child.id().unwrap_or(0);
        // Until the launch completes, dropping it (the program is stopping) kills the group.
        let mut guard = LaunchGuard {
            pid,
            profile: profile.path().to_path_buf(),
            armed: true,
        };
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
                remove_singleton_dir(profile.path());
                return Err(LaunchError::NoEndpoint(
                    options.launch_timeout,
                    seen.join(" | "),
                ));
            }
        };
        // Keep draining stderr so Chromium never blocks on a full pipe. Fire-and-forget: it
        // ends when the pipe closes, that is when the process group is killed.
        crate::actor::spawn_detached("chromium stderr", async move {
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::trace!(target: "chromium", "{line}");
            }
        });
        let (browser, mut handler) = match Browser::connect(endpoint).await {
            Ok(pair) => pair,
            Err(e) => {
                kill_group(pid);
                let _ = child.wait().await;
                remove_singleton_dir(profile.path());
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
        guard.armed = false;
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
            _owner: owner,
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

    /// Kills the process group (and the crash handler outside it) and waits, up to
    /// [`GROUP_EXIT_LIMIT`], until every one of its processes is gone.
    pub async fn shutdown(mut self) {
        kill_group(self.pid);
        let stragglers = kill_stragglers(self.profile.path());
        self.handler.abort();
        let started = Instant::now();
        if let Some(mut child) = self.child.take() {
            let _ = tokio::time::timeout(GROUP_EXIT_LIMIT, child.wait()).await;
        }
        while !all_gone(self.pid, &stragglers) && started.elapsed() < GROUP_EXIT_LIMIT {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tracing::debug!(
            pid = self.pid,
            ?stragglers,
            gone = all_gone(self.pid, &stragglers),
            "chromium stopped"
        );
    }
}

impl Drop for BrowserProcess {
    // Drop cannot await: the fallback when `shutdown` was not awaited waits here, bounded by
    // GROUP_EXIT_LIMIT, so that no browser outlives its handle.
    #[allow(clippy::disallowed_methods)]
    fn drop(&mut self) {
        kill_group(self.pid);
        let stragglers = kill_stragglers(self.profile.path());
        self.handler.abort();
        let started = Instant::now();
        if let Some(mut child) = self.child.take() {
            // Reap it so no zombie stays behind; it was just sent SIGKILL.
            while started.elapsed() < GROUP_EXIT_LIMIT {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }
        while !all_gone(self.pid, &stragglers) && started.elapsed() < GROUP_EXIT_LIMIT {
            std::thread::sleep(Duration::from_millis(10));
        }
        remove_singleton_dir(self.profile.path());
    }
}

/// Asks the kernel to SIGKILL the browser when the thread that starts it ends: with the
/// process, however it ends, or earlier if that thread ends first. Browsers are launched from
/// the runtime's worker threads (the pool's task), which live as long as the runtime.
#[allow(unsafe_code)]
fn die_with_this_thread(command: &mut tokio::process::Command) {
    let parent = rustix::process::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe work is allowed. It makes two raw system calls through rustix (prctl,
    // getppid) and builds its error from an errno: no allocation, no lock.
    unsafe {
        command.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // forager died between fork and prctl: the signal will never come.
            if rustix::process::getppid() != Some(parent) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            Ok(())
        });
    }
}

/// The file in a profile that its owner keeps locked.
const OWNER_LOCK: &str = "forager.lock";

/// A profile folder without a lock (made by an older forager, or one killed between making
/// the folder and its lock) is removed only when this old and no process names it.
const UNLOCKED_PROFILE_AGE: Duration = Duration::from_secs(60);

/// Creates and locks `forager.lock` in a new profile; the lock lasts as long as the file
/// stays open (it is not inherited by Chromium: the file is close-on-exec).
fn lock_profile(profile: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::File::create(profile.join(OWNER_LOCK))?;
    file.try_lock().map_err(|error| match error {
        std::fs::TryLockError::Error(error) => error,
        std::fs::TryLockError::WouldBlock => {
            std::io::Error::other("a fresh profile's lock is held by someone else")
        }
    })?;
    Ok(file)
}

/// Sweeps `root` once per process ([`sweep_stale_profiles`]), before the first browser this
/// process launches there.
fn sweep_once(root: &Path, prefix: &str) {
    static SWEPT: std::sync::Mutex<Vec<(PathBuf, String)>> = std::sync::Mutex::new(Vec::new());
    let key = (root.to_path_buf(), prefix.to_owned());
    {
        // No await under this lock.
        let Ok(mut swept) = SWEPT.lock() else {
            return;
        };
        if swept.contains(&key) {
            return;
        }
        swept.push(key);
    }
    let removed = sweep_stale_profiles(root, prefix);
    if removed > 0 {
        tracing::info!(
            removed,
            root = %root.display(),
            "removed the browser profiles of a forager that was killed"
        );
    }
}

/// Removes what killed forager processes left in `root`: every profile folder named with
/// `prefix` whose `forager.lock` no process holds (its owner is dead), with Chromium's socket
/// folder and any process still naming it (SIGKILL); a folder without a lock only when it is
/// older than [`UNLOCKED_PROFILE_AGE`] and no process names it. Profiles of living forager
/// processes are left alone, whoever they belong to. Returns how many folders were removed.
pub fn sweep_stale_profiles(root: &Path, prefix: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if !entry.file_name().to_string_lossy().starts_with(prefix) || !path.is_dir() {
            continue;
        }
        let stale = match std::fs::File::open(path.join(OWNER_LOCK)) {
            // Held (WouldBlock) means alive; an error locking is no proof of death either.
            Ok(lock) => lock.try_lock().is_ok(),
            Err(_) => {
                let old = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|modified| modified.elapsed().ok())
                    .is_some_and(|age| age >= UNLOCKED_PROFILE_AGE);
                old && processes_naming(&path).is_empty()
            }
        };
        if !stale {
            continue;
        }
        kill_stragglers(&path);
        remove_singleton_dir(&path);
        if std::fs::remove_dir_all(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The processes whose command line names `path`.
fn processes_naming(path: &Path) -> Vec<rustix::process::Pid> {
    let needle = path.display().to_string();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_string_lossy()
            .parse::<i32>()
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(&needle) {
            found.push(pid);
        }
    }
    found
}

/// Kills the processes outside the browser's group that belong to it (the crash handler:
/// its command line names the profile); returns their pids.
fn kill_stragglers(profile: &Path) -> Vec<rustix::process::Pid> {
    let killed = processes_naming(profile);
    for &pid in &killed {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
    killed
}

/// Whether the group and the stragglers are gone (reaping those that are this process's
/// children).
fn all_gone(pgid: u32, stragglers: &[rustix::process::Pid]) -> bool {
    let mut gone = group_gone(pgid);
    for &pid in stragglers {
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
        gone &= matches!(
            rustix::process::test_kill_process(pid),
            Err(rustix::io::Errno::SRCH)
        );
    }
    gone
}

/// Kills a browser whose launch was abandoned half-way.
struct LaunchGuard {
    pid: u32,
    profile: PathBuf,
    armed: bool,
}

impl Drop for LaunchGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group(self.pid);
            kill_stragglers(&self.profile);
            remove_singleton_dir(&self.profile);
        }
    }
}

/// How long shutting a browser down waits for its processes to be gone.
pub const GROUP_EXIT_LIMIT: Duration = Duration::from_secs(5);

/// Whether no process of the group is left. Reaps those of its (killed) processes that are
/// this process's children, which Chromium's helpers are once [`adopt_orphans`] was called:
/// an unreaped zombie still counts as a process.
fn group_gone(pgid: u32) -> bool {
    let Some(pgid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return true;
    };
    while let Ok(Some(_)) = rustix::process::waitpgid(pgid, rustix::process::WaitOptions::NOHANG) {}
    matches!(
        rustix::process::test_kill_process_group(pgid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// The last thing a program that called [`adopt_orphans`] does before it exits: kills every
/// process still its child (by then only what is left of browsers: a crash handler, a helper
/// that outlived its parent) and reaps them, until none is left or `limit` passes. Returns how
/// many it reaped. Call it once every runtime that owned a child process has been dropped, so
/// that nobody else is waiting for them.
// Synchronous by design (it runs after the runtimes are gone): the sleep is a poll interval.
#[allow(clippy::disallowed_methods)]
pub fn reap_orphans(limit: Duration) -> usize {
    let me = rustix::process::getpid().as_raw_nonzero().get().to_string();
    let started = Instant::now();
    let mut reaped = 0;
    loop {
        if let Ok(entries) = std::fs::read_dir("/proc") {
            for entry in entries.flatten() {
                let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
                // pid (comm) state ppid …
                let parent = stat
                    .rfind(')')
                    .and_then(|end| stat[end + 1..].split_whitespace().nth(1));
                if parent == Some(me.as_str())
                    && let Some(pid) = entry
                        .file_name()
                        .to_string_lossy()
                        .parse::<i32>()
                        .ok()
                        .and_then(rustix::process::Pid::from_raw)
                {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
        }
        loop {
            match rustix::process::wait(rustix::process::WaitOptions::NOHANG) {
                Ok(Some(_)) => reaped += 1,
                Ok(None) => break,
                // No child left at all.
                Err(_) => return reaped,
            }
        }
        if started.elapsed() >= limit {
            return reaped;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Makes this process the reaper of its orphaned descendants (Linux's child subreaper): when
/// Chromium's main process dies, its helpers become this process's children instead of
/// init's, so that shutting a browser down can wait for them and reap them before the
/// program exits. A program that launches browsers calls this once at start.
pub fn adopt_orphans() {
    if let Err(error) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        tracing::debug!(%error, "cannot become the subreaper of Chromium's helpers");
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
            remove_singleton_dir(&entry.path());
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    groups.len()
}

/// Removes the directory of a killed Chromium's single-instance socket. Chromium makes it
/// under the system's temporary directory (`org.chromium.Chromium.XXXXXX`), links it from the
/// profile's `SingletonSocket` and removes it only on a clean exit; every forager browser is
/// killed, and each left one behind (thousands in /tmp after a benchmark). Call it once the
/// browser's processes are gone and before its profile is removed.
fn remove_singleton_dir(profile: &Path) {
    let Ok(socket) = std::fs::read_link(profile.join("SingletonSocket")) else {
        return;
    };
    let Some(dir) = socket.parent() else {
        return;
    };
    // Only the directory Chromium made for the socket, whatever the link says.
    if dir
        .file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("org.chromium.Chromium."))
    {
        let _ = std::fs::remove_dir_all(dir);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_removes_only_the_profiles_nobody_holds() {
        let root = tempfile::tempdir().expect("a root");
        let prefix = "forager-sweep-test-";
        // A living owner's profile: its lock is held (here, by this test).
        let alive = root.path().join(format!("{prefix}alive"));
        std::fs::create_dir(&alive).expect("dir");
        let _held = lock_profile(&alive).expect("locked");
        // A dead owner's profile: the lock file is there, nobody holds it.
        let dead = root.path().join(format!("{prefix}dead"));
        std::fs::create_dir(&dead).expect("dir");
        drop(lock_profile(&dead).expect("locked, then released"));
        std::fs::write(dead.join("Preferences"), "{}").expect("a file in it");
        // A profile being made this instant: no lock yet, but young.
        let young = root.path().join(format!("{prefix}young"));
        std::fs::create_dir(&young).expect("dir");
        // Someone else's folder.
        let other = root.path().join("other-dead");
        std::fs::create_dir(&other).expect("dir");
        drop(lock_profile(&other).expect("locked, then released"));

        assert_eq!(sweep_stale_profiles(root.path(), prefix), 1);
        assert!(alive.exists(), "a held profile stays");
        assert!(!dead.exists(), "an unheld one goes");
        assert!(young.exists(), "a young one without a lock stays");
        assert!(other.exists(), "what the prefix does not name stays");
        // Held by another open file description of the same process: still held.
        assert_eq!(sweep_stale_profiles(root.path(), prefix), 0);
        assert!(alive.exists());
    }
}
