//! Building a task from command-line flags and task files (TOML or JSON).
//!
//! `build_task` reads the flags and the task file into a `TaskSpec` and validates it: a bad field
//! is `BadInput` (exit 2), named.

use crate::BadInput;
use crate::cli::TaskArgs;
use crate::inputs::{parse_inputs, parse_totp};
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::{RiskClass, TaskSpec};
use std::path::Path;

/// Reads a task file: `.toml` as TOML, `.json` as JSON, anything else tried as both.
pub fn read_task_file(path: &Path) -> Result<TaskSpec, BadInput> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read task file {}: {e}", path.display())))?;
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let parsed = match extension {
        "toml" => toml::from_str::<TaskSpec>(&text).map_err(|e| e.to_string()),
        "json" => serde_json::from_str::<TaskSpec>(&text).map_err(|e| e.to_string()),
        _ => serde_json::from_str::<TaskSpec>(&text)
            .or_else(|_| toml::from_str::<TaskSpec>(&text))
            .map_err(|e| e.to_string()),
    };
    parsed.map_err(|e| BadInput(format!("task file {}: {e}", path.display())))
}

/// The `--init-script FILE`'s text, if one was given.
pub fn read_init_script(path: Option<&Path>) -> Result<Option<String>, BadInput> {
    path.map(|path| {
        std::fs::read_to_string(path)
            .map_err(|e| BadInput(format!("cannot read init script {}: {e}", path.display())))
    })
    .transpose()
}

/// The task the flags (and the task file, if any) describe, validated.
pub fn build_task(args: &TaskArgs) -> Result<BuiltTask, BadInput> {
    let built = build_task_unchecked(args)?;
    built.task.validate().map_err(|e| BadInput(e.to_string()))?;
    Ok(built)
}

/// The same, not validated as a task to search (`forager plan` reads a goal without its
/// success predicates).
pub fn build_task_unchecked(args: &TaskArgs) -> Result<BuiltTask, BadInput> {
    let mut task = match &args.task {
        Some(path) => read_task_file(path)?,
        None => {
            let url = args.url.clone().ok_or_else(|| {
                BadInput("give the start URL with --url (or a task file with --task)".into())
            })?;
            let goal = args.goal.clone().ok_or_else(|| {
                BadInput("say what to do with --goal (or give a task file with --task)".into())
            })?;
            TaskSpec::new(url, goal, Vec::new())
        }
    };
    if let Some(url) = &args.url {
        task.start_url = url.clone();
    }
    if let Some(goal) = &args.goal {
        task.goal = goal.clone();
    }
    let flags = [
        args.success_url.clone().map(SuccessPredicate::UrlMatches),
        args.success_text.clone().map(SuccessPredicate::TextPresent),
        args.success_selector
            .clone()
            .map(SuccessPredicate::SelectorPresent),
        args.success_js.clone().map(SuccessPredicate::JavaScript),
        args.extract.clone().map(SuccessPredicate::Extraction),
    ];
    task.success.extend(flags.into_iter().flatten());
    task.failure.extend(
        (args
            .fail_urls
            .iter()
            .cloned()
            .map(SuccessPredicate::UrlMatches))
        .chain(
            args.fail_texts
                .iter()
                .cloned()
                .map(SuccessPredicate::TextPresent),
        )
        .chain(
            args.fail_js
                .iter()
                .cloned()
                .map(SuccessPredicate::JavaScript),
        ),
    );
    task.inputs.extend(parse_inputs(&args.inputs)?);
    if let Some(budget) = args.budget {
        task.budget.actions = budget;
    }
    if let Some(depth) = args.max_depth {
        task.budget.max_depth = depth;
    }
    if let Some(secs) = args.timeout {
        task.budget.wall_time_secs = secs;
    }
    if let Some(ceiling) = args.risk_ceiling {
        task.risk_ceiling = RiskClass::try_from(ceiling).map_err(|e| BadInput(e.to_string()))?;
    }
    if let Some(family) = &args.family {
        task.family = Some(family.clone());
    }
    if let Some(seed) = args.seed {
        task.seed = seed;
    }
    task.allowed_origins
        .extend(args.allow_origins.iter().cloned());
    task.resettable |= args.resettable;
    if let Some(command) = &args.reset_cmd {
        task.reset_cmd = Some(command.clone());
    }
    if let (Some(url), Some(text)) = (&args.verify_url, &args.verify_text) {
        task.verify = Some(forager_protocol::task::AfterCheck {
            url: url.clone(),
            text: text.clone(),
        });
    }
    if let Some(model) = model_settings(&args.model)? {
        task.model = Some(model);
    }
    // One-time codes are for a recovery's login only: a code in the task would change its
    // id every 30 seconds.
    let totp_secrets = parse_totp(&args.totp)?;
    // The capsule first: mounting sets the α weight, which is part of the task's id.
    let mounted = match &args.capsule {
        Some(path) => Some(crate::capsule::mount(
            &mut task,
            path,
            &args.capsule_secret,
        )?),
        None => None,
    };
    // Read against the task as the flags make it (a consent names the task's id).
    let consents = crate::consent::consents_for(&task, &args.consents)?;
    task.consents.extend(consents);
    if let Some(mounted) = &mounted {
        crate::capsule::check_consents(&task, mounted)?;
    }
    Ok(BuiltTask {
        task,
        mounted,
        totp: totp_secrets,
    })
}

/// Prices per 1,000 tokens, as `--model-prices` gives them.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Prices {
    #[serde(default)]
    small: TierPrices,
    #[serde(default)]
    large: TierPrices,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TierPrices {
    #[serde(default)]
    prompt: f64,
    #[serde(default)]
    completion: f64,
}

/// The model tier the flags ask for, if any.
fn model_settings(
    args: &crate::cli::ModelArgs,
) -> Result<Option<forager_protocol::llm::ModelSettings>, BadInput> {
    use forager_protocol::llm::{ModelEndpoint, ModelSettings};
    let (Some(url), Some(model)) = (&args.model_url, &args.model) else {
        return Ok(None);
    };
    let prices: Prices = match &args.model_prices {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                BadInput(format!(
                    "cannot read --model-prices {}: {e}",
                    path.display()
                ))
            })?;
            toml::from_str(&text)
                .map_err(|e| BadInput(format!("--model-prices {}: {e}", path.display())))?
        }
        None => Prices::default(),
    };
    let endpoint = |url: &str, model: &str, prices: &TierPrices| ModelEndpoint {
        url: url.to_owned(),
        model: model.to_owned(),
        api_key_env: args.model_key_env.clone(),
        prompt_price_per_1k: prices.prompt,
        completion_price_per_1k: prices.completion,
    };
    let uses = match &args.model_uses {
        Some(list) => list
            .split(',')
            .filter(|u| !u.trim().is_empty())
            .map(|u| {
                forager_protocol::llm::ModelUse::parse(u).ok_or_else(|| {
                    BadInput(format!(
                        "--model-uses: unknown use {u:?} (priors, verdict, recovery, value)"
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => forager_protocol::llm::ModelUse::DEFAULT.to_vec(),
    };
    let answer_schema = args
        .answer_schema
        .as_ref()
        .map(|path| {
            std::fs::read_to_string(path).map_err(|e| {
                BadInput(format!(
                    "cannot read --answer-schema {}: {e}",
                    path.display()
                ))
            })
        })
        .transpose()?;
    Ok(Some(ModelSettings {
        uses,
        answer_schema,
        small: endpoint(url, model, &prices.small),
        large: match (&args.planner_url, &args.planner) {
            (Some(url), Some(model)) => Some(endpoint(url, model, &prices.large)),
            _ => None,
        },
        max_tokens: args.max_tokens,
        max_cost: args.max_cost,
        call_timeout_secs: args.model_timeout,
    }))
}

/// A task as the flags describe it, with what a recovery of its capsule needs.
pub struct BuiltTask {
    /// The task (its session mounted, if a capsule was given).
    pub task: TaskSpec,
    /// The capsule, opened.
    pub mounted: Option<crate::capsule::Mounted>,
    /// The `--totp` secrets, by input name.
    pub totp: std::collections::BTreeMap<String, String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_task_files_parse_with_defaults() {
        let dir = tempfile_dir();
        let path = dir.join("task.toml");
        std::fs::write(
            &path,
            r#"
start_url = "http://127.0.0.1:8080/"
goal = "Find the cart"
success = [{ url_matches = "/cart$" }, { text_present = "Your cart" }]
risk_ceiling = 2
[inputs]
email = "ada@example.org"
[budget]
actions = 120
"#,
        )
        .expect("writable");
        let task = read_task_file(&path).expect("parses");
        assert_eq!(task.budget.actions, 120);
        assert_eq!(task.budget.max_depth, 12);
        assert_eq!(task.risk_ceiling, RiskClass::AuthenticatedRead);
        assert_eq!(
            task.inputs.get("email").map(String::as_str),
            Some("ada@example.org")
        );
        assert_eq!(task.validate(), Ok(()));
        std::fs::write(&path, "start_url = 3").expect("writable");
        let error = read_task_file(&path).expect_err("bad file");
        assert!(error.0.contains("task.toml"), "{error}");
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempfile_dir() -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("forager-task-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }
}
