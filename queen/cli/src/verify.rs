//! `forager verify DIR [--json]`: checks a run directory's signed trajectory and everything it
//! names, and prints the outcome for a person or, with `--json`, for a program.

use forager_queen::artifacts::{VerifyError, verify_run_dir};
use std::path::Path;

/// `forager verify DIR [--json]`: prints the outcome; exit 0 verified, 1 not, 2 unreadable.
pub fn run(dir: &Path, json: bool) -> anyhow::Result<std::process::ExitCode> {
    let outcome = verify_run_dir(dir);
    if json {
        let value = match &outcome {
            Ok(v) => serde_json::json!({
                "verified": true,
                "task_id": v.task_id,
                "steps": v.steps,
                "found_by": v.found_by,
                "reproduced_by": v.reproduced_by,
                "reproduced_steps": v.reproduced_steps,
                "after_check": v.after_check,
                "consented_steps": v.consented_steps,
                "queen": v.queen,
                "files": v.files,
            }),
            Err(VerifyError::Failed {
                file,
                check,
                detail,
            }) => serde_json::json!({
                "verified": false,
                "file": file,
                "check": check,
                "detail": detail,
            }),
            Err(e @ VerifyError::Unreadable { .. }) => serde_json::json!({
                "verified": false,
                "unreadable": e.to_string(),
            }),
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
    }
    Ok(match outcome {
        Ok(v) => {
            if !json {
                let attested = if v.reproduced_steps < v.steps {
                    let check = match v.after_check {
                        Some(true) => "; the after-check page showed the effect",
                        _ => "; no after-check: the finder's word",
                    };
                    format!(
                        " (steps 1-{}; steps {}-{} attested by the finder's signed evidence{check})",
                        v.reproduced_steps,
                        v.reproduced_steps + 1,
                        v.steps
                    )
                } else {
                    String::new()
                };
                let consented = match v.consented_steps {
                    0 => String::new(),
                    n => format!(
                        "\n  {n} step(s) above the risk ceiling, each under a signed consent"
                    ),
                };
                println!(
                    "verified: {} ({} steps)\n  task {}\n  found by {}\n  reproduced by {}{attested}{consented}\n  signed by queen {}\n  files: {}",
                    v.goal,
                    v.steps,
                    v.task_id,
                    v.found_by,
                    v.reproduced_by,
                    v.queen,
                    v.files.join(", ")
                );
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e @ VerifyError::Failed { .. }) => {
            if !json {
                println!("NOT verified: {e}");
            }
            std::process::ExitCode::from(1)
        }
        Err(e @ VerifyError::Unreadable { .. }) => {
            if !json {
                eprintln!("error: {e}");
            }
            std::process::ExitCode::from(2)
        }
    })
}
