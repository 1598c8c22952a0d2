//! `forager demo`: serves the bundled demo site on 127.0.0.1 and explores a task on it.

use crate::cli::DemoArgs;
use crate::demo_site;
use crate::explore::report;
use crate::run::{RunOptions, default_out, run_task};
use forager_node::browser::BrowserOptions;
use forager_protocol::TaskSpec;
use forager_protocol::predicate::SuccessPredicate;
use std::io::IsTerminal;
use std::process::ExitCode;

/// The demo's task on a site served at `base`.
pub fn demo_task(base: &str, seed: u64) -> TaskSpec {
    let mut task = TaskSpec::new(
        base,
        "Reserve \"The Rust Programming Language\" for pickup at the Central branch",
        vec![
            SuccessPredicate::TextPresent("Reservation saved".into()),
            SuccessPredicate::TextPresent(
                "The Rust Programming Language, pickup at the central branch".into(),
            ),
        ],
    );
    task.inputs.insert("card".into(), "12345678".into());
    task.budget.actions = 200;
    task.budget.wall_time_secs = 300;
    task.seed = seed;
    // The demo site is our own sandbox: every browser context gets a fresh session, so
    // replaying a path with writes is harmless there.
    task.resettable = true;
    task
}

/// Runs the command.
pub fn run(args: &DemoArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let model = crate::embedder::load(&args.embedder, None)?;
    runtime.block_on(async {
        let server = demo_site::serve().await?;
        let base = format!("http://{}/", server.address);
        eprintln!("demo site on {base}");
        let task = demo_task(&base, args.seed);
        eprintln!("task: {}", task.goal);
        let outcome = run_task(
            task,
            RunOptions {
                nodes: 2,
                page_cache: 6,
                init_script: None,
                out: args.out.clone().unwrap_or_else(|| default_out("demo")),
                progress: std::io::stderr().is_terminal(),
                browser: BrowserOptions::default(),
                keep_all: false,
                model,
                // The demo shows a search from nothing, every time.
                memory: None,
            },
        )
        .await?;
        let code = report(&outcome, args.json);
        if args.serve {
            eprintln!("serving {base} until Ctrl-C");
            crate::stop_requested().await;
        }
        server.stop().await;
        Ok(code)
    })
}
