//! `forager replay` against Playwright, a bench program
//! (`cargo bench -p forager-tests --bench replay -- --reps 10`).
//!
//! Explores the ten-step tour fixture once to compile its workflow, then runs the same ten
//! steps, repetition after repetition, alternating: `forager replay workflow.json` (release
//! build), and a Node script driving `playwright-core` (installed from the npm registry into
//! `target/playwright-bench` when missing) on the same Debian Chromium with the same flags. The
//! script uses each step's first CSS locator and checks what a careful script checks: the URL
//! after each step, the page's heading text, and the success text at the end (forager also
//! checks each page's fingerprint family and observes every page). Both are whole processes,
//! browser launch included; medians and the ratio are printed, with each run's own figures.

use forager_protocol::workflow::Workflow;
use forager_protocol::{Action, FillValue, Locator, Target};
use forager_tests::{forager_binary, sites};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

const INPUTS: &[(&str, &str)] = &[("name", "Ada"), ("colour", "teal")];

fn css(target: &Target) -> String {
    target
        .locators
        .iter()
        .find_map(|l| match l {
            Locator::Css(css) => Some(css.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{} has no CSS locator", target.name))
}

fn value(value: &FillValue) -> String {
    match value {
        FillValue::Literal(text) => text.clone(),
        FillValue::Input(name) => INPUTS
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| (*v).to_owned())
            .unwrap_or_else(|| panic!("no value for input {name}")),
    }
}

fn js(text: &str) -> String {
    serde_json::to_string(text).expect("a JSON string")
}

/// The Playwright script doing the workflow's steps.
fn playwright_script(workflow: &Workflow, success_text: &str) -> String {
    let mut body = String::new();
    for step in &workflow.steps {
        match &step.action {
            Action::Click { target } => {
                body.push_str(&format!("  await page.click({});\n", js(&css(target))));
            }
            Action::FillForm { fields, submit } => {
                for field in fields {
                    body.push_str(&format!(
                        "  await page.fill({}, {});\n",
                        js(&css(&field.target)),
                        js(&value(&field.value))
                    ));
                }
                match submit {
                    Some(target) => {
                        body.push_str(&format!("  await page.click({});\n", js(&css(target))))
                    }
                    None => body.push_str("  await page.keyboard.press('Enter');\n"),
                }
            }
            other => panic!("the tour has no {other:?} step"),
        }
        // forager matches the URL's path; Playwright the whole URL (the query may follow).
        let path = step
            .expect
            .url_path
            .trim_start_matches('^')
            .trim_end_matches('$');
        body.push_str(&format!(
            "  await page.waitForURL(new RegExp({}));\n",
            js(&format!("^https?://[^/]+{path}(?:[?#].*)?$"))
        ));
        if let Some(text) = &step.expect.text {
            body.push_str(&format!(
                "  await page.getByText({}).first().waitFor();\n",
                js(text)
            ));
        }
    }
    let flags: Vec<String> = forager_node::browser::FLAGS
        .iter()
        .filter(|f| **f != "--headless")
        .map(|f| js(f))
        .collect();
    format!(
        "import {{ chromium }} from 'playwright-core';\n\
         const started = performance.now();\n\
         const browser = await chromium.launch({{ executablePath: {exe}, headless: true, args: [{flags}] }});\n\
         const context = await browser.newContext();\n\
         const page = await context.newPage();\n\
         const launched = performance.now();\n\
         await page.goto({start});\n\
         const loaded = performance.now();\n\
         {body}\
         await page.getByText({success}).first().waitFor();\n\
         const done = performance.now();\n\
         await browser.close();\n\
         console.log(JSON.stringify({{ launch_ms: launched - started, steps_ms: done - loaded }}));\n",
        exe = js(forager_node::browser::DEBIAN_CHROMIUM),
        flags = flags.join(", "),
        start = js(&workflow.start_url),
        success = js(success_text),
    )
}

/// Installs playwright-core into `dir` unless it is there.
fn playwright(dir: &Path) -> bool {
    if dir
        .join("node_modules/playwright-core/package.json")
        .exists()
    {
        return true;
    }
    std::fs::create_dir_all(dir).expect("bench directory");
    eprintln!("installing playwright-core into {}", dir.display());
    Command::new("npm")
        .args(["install", "--silent", "--no-audit", "--no-fund", "--prefix"])
        .arg(dir)
        .arg("playwright-core@1")
        .status()
        .is_ok_and(|s| s.success())
}

fn timed(command: &mut Command) -> (f64, String) {
    let started = Instant::now();
    let output = command.output().expect("runs");
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (
        elapsed,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn main() {
    let reps: usize = arg("--reps").and_then(|v| v.parse().ok()).unwrap_or(10);
    let forager = forager_binary();
    let target_dir = forager
        .parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("target"));
    let bench_dir = target_dir.join("playwright-bench");
    assert!(
        playwright(&bench_dir),
        "playwright-core could not be installed (npm and the registry are needed)"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let tour = runtime.block_on(sites::serve(sites::tour_site()));
    let run_dir = bench_dir.join("explore");
    let _ = std::fs::remove_dir_all(&run_dir);
    let success_text = "You finished the tour";
    let explored = Command::new(&forager)
        .args(["explore", "--url", &tour.url("/tour/1"), "--goal"])
        .arg("Continue the tour to the finish")
        .args(["--success-text", success_text, "--budget", "300"])
        .args(["--input", "name=Ada", "--input", "colour=teal", "--out"])
        .arg(&run_dir)
        .output()
        .expect("explore runs");
    assert!(
        explored.status.success(),
        "explore failed: {}",
        String::from_utf8_lossy(&explored.stderr)
    );
    let workflow_path = run_dir.join("workflow.json");
    let workflow =
        Workflow::from_json(&std::fs::read(&workflow_path).expect("workflow")).expect("valid");
    assert_eq!(
        workflow.steps.len(),
        10,
        "the tour's workflow has ten steps"
    );
    let script = bench_dir.join("replay.mjs");
    std::fs::write(&script, playwright_script(&workflow, success_text)).expect("script");

    let replay_out = bench_dir.join("replay-out");
    let mut forager_ms = Vec::new();
    let mut forager_steps_ms = Vec::new();
    let mut playwright_ms = Vec::new();
    let mut playwright_steps_ms = Vec::new();
    let mut ratios = Vec::new();
    for rep in 0..reps {
        // Alternate which goes first, so that neither always gets the warmer machine.
        let mut order = [0, 1];
        if rep % 2 == 1 {
            order.reverse();
        }
        let mut this = [0.0f64; 2];
        for which in order {
            if which == 0 {
                let (ms, stdout) = timed(
                    Command::new(&forager)
                        .arg("replay")
                        .arg(&workflow_path)
                        .args(["--input", "name=Ada", "--input", "colour=teal", "--json"])
                        .arg("--out")
                        .arg(&replay_out),
                );
                let result: serde_json::Value = serde_json::from_str(&stdout).expect("result");
                let steps: f64 = result["steps"]
                    .as_array()
                    .map(|s| s.iter().filter_map(|s| s["cost_ms"].as_f64()).sum())
                    .unwrap_or(0.0);
                forager_steps_ms.push(steps);
                forager_ms.push(ms);
                this[0] = ms;
            } else {
                let (ms, stdout) = timed(
                    Command::new("node")
                        .arg(&script)
                        .env("NODE_PATH", bench_dir.join("node_modules"))
                        .current_dir(&bench_dir),
                );
                let timing: serde_json::Value =
                    serde_json::from_str(stdout.trim()).expect("timing");
                playwright_steps_ms.push(timing["steps_ms"].as_f64().unwrap_or(0.0));
                playwright_ms.push(ms);
                this[1] = ms;
            }
        }
        ratios.push(this[0] / this[1]);
        eprintln!(
            "rep {}: forager {:.0} ms, playwright {:.0} ms, ratio {:.2}",
            rep + 1,
            this[0],
            this[1],
            this[0] / this[1]
        );
        // A synchronous bench: the pause lets the machine settle between repetitions.
        #[allow(clippy::disallowed_methods)]
        std::thread::sleep(Duration::from_millis(200));
    }
    println!("forager replay vs Playwright, a 10-step workflow, {reps} repetitions (medians):");
    println!("| | forager replay | Playwright |");
    println!("|---|---|---|");
    println!(
        "| whole process (launch, 10 steps, checks, exit) | {:.0} ms | {:.0} ms |",
        median(forager_ms.clone()),
        median(playwright_ms.clone())
    );
    println!(
        "| the 10 steps (after the start page) | {:.0} ms | {:.0} ms |",
        median(forager_steps_ms),
        median(playwright_steps_ms)
    );
    println!(
        "ratio forager / Playwright, whole process: median {:.2} (per repetition: {})",
        median(ratios.clone()),
        ratios
            .iter()
            .map(|r| format!("{r:.2}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
}
