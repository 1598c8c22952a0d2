//! Helpers for forager's end-to-end tests: finding (and if need be building) the `forager`
//! binary of the current profile, and running it with a timeout.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `forager` binary built with the same profile as the running test, building it first if
/// it is missing (as when only this package's tests were asked for).
pub fn forager_binary() -> PathBuf {
    // target/<profile>/deps/<test binary> → target/<profile>/forager
    let exe = std::env::current_exe().expect("the test knows its own path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("tests run from target/<profile>/deps")
        .to_path_buf();
    let binary = profile_dir.join("forager");
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let mut build = Command::new(env!("CARGO"));
    build.args([
        "build",
        "--quiet",
        "-p",
        "forager-queen",
        "--bin",
        "forager",
    ]);
    if release {
        build.arg("--release");
    }
    // Always ask cargo: it is a no-op when the binary is fresh, and a stale one would test
    // old code.
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "building forager failed");
    binary
}

/// Runs `forager` with arguments, failing the test if it takes longer than `limit`.
pub fn run_forager(args: &[&str], limit: Duration) -> Output {
    let mut child = Command::new(forager_binary())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("forager starts");
    let started = Instant::now();
    loop {
        match child.try_wait().expect("waitable") {
            Some(_) => break,
            None if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("forager {args:?} did not finish within {limit:?}");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    child.wait_with_output().expect("output readable")
}
