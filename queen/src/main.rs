//! `forager`: the command-line program. Parses arguments, sets up logging, runs a command and
//! maps its outcome to an exit status (0 success, 1 failing, 2 bad input). Errors are
//! `anyhow` here, at the edge, and typed everywhere below.

use clap::Parser;
use forager_queen::cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    // Chromium's helpers outlive its main process by a moment; adopted, they can be waited for.
    forager_node::browser::adopt_orphans();
    let result = match cli.command {
        Command::Simulate(args) => forager_queen::simulate::run(&args),
        Command::Explore(args) => forager_queen::explore::run(&args),
        Command::Demo(args) => forager_queen::demo::run(&args),
        Command::Node(args) => forager_queen::peers::node(&args),
        Command::Queen(args) => forager_queen::peers::queen(&args),
        Command::Submit(args) => forager_queen::peers::submit(&args),
        Command::Key { out } => forager_queen::peers::key(&out),
        Command::Verify { dir, json } => forager_queen::artifacts::run_verify(&dir, json),
        Command::Replay(args) => forager_queen::replay::run(&args),
    };
    // Every runtime is gone by now; whatever is left of a browser dies with us, not after.
    let reaped = forager_node::browser::reap_orphans(forager_node::browser::GROUP_EXIT_LIMIT);
    if reaped > 0 {
        tracing::debug!(reaped, "reaped what was left of the browsers");
    }
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            match error.downcast_ref::<forager_queen::BadInput>() {
                Some(_) => ExitCode::from(2),
                None => ExitCode::from(1),
            }
        }
    }
}

/// Logs go to stderr; `-v` shows info, `-vv` debug; `RUST_LOG` overrides.
fn init_logging(verbose: u8) {
    // chromiumoxide warns about every CDP event its generated types do not know (harmless,
    // one per page load) and errors when we kill a browser: only shown at -vv.
    let default = match verbose {
        0 => "warn,chromiumoxide=off,libp2p_gossipsub=error,libp2p_swarm=error",
        1 => "info,chromiumoxide=off,libp2p_gossipsub=warn",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
