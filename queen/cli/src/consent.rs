//! The user's side of consent: `forager key --user` (a signing key kept apart from peer
//! keys), `forager approve RUN_DIR` (a signed consent for an action a run stopped at),
//! `forager revoke CONSENT` (a signed revocation in this machine's store), and the
//! `--consent FILE` flags of `explore`, `submit` and `replay` (read, then checked whole before
//! anything starts).

use crate::BadInput;
use crate::cli::ApproveArgs;
use data_encoding::HEXLOWER;
use ed25519_dalek::SigningKey;
use forager_node::consent::{RevocationStore, read_consent, step_of, unix_now};
use forager_protocol::TaskSpec;
use forager_protocol::consent::{
    CONSENT_VERSION, Consent, MAX_CONSENT_SECS, SignedConsent, consent_digest, revoke, sign_consent,
};
use forager_protocol::result::RunResult;
use forager_protocol::wire::TaskId;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The first line of a user key file.
const USER_KEY_HEADER: &str = "forager user key v1";

/// Writes a new user key (mode 0600) and prints its public half.
pub fn create_user_key(out: &Path) -> anyhow::Result<ExitCode> {
    if out.exists() {
        return Err(BadInput(format!("{} exists; not overwriting a key", out.display())).into());
    }
    let mut secret = [0u8; 32];
    rand::fill(&mut secret);
    let key = SigningKey::from_bytes(&secret);
    let text = format!("{USER_KEY_HEADER}\n{}\n", HEXLOWER.encode(&key.to_bytes()));
    write_private(out, text.as_bytes())?;
    eprintln!(
        "wrote a user key to {} (public key {})",
        out.display(),
        HEXLOWER.encode(key.verifying_key().as_bytes())
    );
    Ok(ExitCode::SUCCESS)
}

/// Creates `path` with mode 0600 and writes `bytes`; never overwrites.
pub fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", path.display()))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}

/// Reads a user key file.
pub fn read_user_key(path: &Path) -> Result<SigningKey, BadInput> {
    let secret = read_key_file(
        path,
        USER_KEY_HEADER,
        "a forager user key (make one with `forager key --user --out FILE`)",
    )?;
    Ok(SigningKey::from_bytes(&secret))
}

/// Reads a 32-byte key from a file whose first line is `header` and second the key in hex;
/// `what` names the kind of file, and how to make one, in errors.
pub fn read_key_file(path: &Path, header: &str, what: &str) -> Result<[u8; 32], BadInput> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?;
    let mut lines = text.lines();
    if lines.next() != Some(header) {
        return Err(BadInput(format!("{} is not {what}", path.display())));
    }
    lines
        .next()
        .and_then(|hex| HEXLOWER.decode(hex.trim().as_bytes()).ok())
        .and_then(|bytes| bytes.try_into().ok())
        .ok_or_else(|| BadInput(format!("{}: the key is not 64 hex digits", path.display())))
}

/// Parses a duration such as `30m`, `24h`, `7d` or a number of seconds.
pub fn parse_validity(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, "s"),
    };
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration (say 30m, 24h or 7d)"))?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{text:?}: the unit is s, m, h or d")),
    };
    let secs = number.saturating_mul(scale);
    if secs == 0 || secs > MAX_CONSENT_SECS {
        return Err(format!(
            "a consent lasts between 1 s and {} days",
            MAX_CONSENT_SECS / 86_400
        ));
    }
    Ok(secs)
}

/// `forager approve RUN_DIR`: lists what the run asked approval for, and signs a consent for
/// the chosen one.
pub fn approve(args: &ApproveArgs) -> anyhow::Result<ExitCode> {
    let (task, result) = read_run(&args.run)?;
    let key = read_user_key(&args.key)?;
    let asked: Vec<_> = result
        .approval_required
        .iter()
        .filter(|a| !a.actions.is_empty())
        .collect();
    if asked.is_empty() {
        return Err(BadInput(format!(
            "{} asked no approval (its result lists no approval_required action)",
            args.run.display()
        ))
        .into());
    }
    for (i, approval) in asked.iter().enumerate() {
        let path = if approval.prefix.is_empty() {
            "at the start page".to_owned()
        } else {
            format!("after {}", approval.prefix.join(" → "))
        };
        eprintln!(
            "{:>3}. {} (risk class {}), {path}",
            i + 1,
            approval.label,
            approval.risk.level()
        );
    }
    let chosen = match args.action {
        Some(n) => n,
        None if std::io::stdin().is_terminal() => {
            eprint!(
                "approve which (1-{}, anything else to cancel)? ",
                asked.len()
            );
            std::io::stderr().flush()?;
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            match line.trim().parse::<usize>() {
                Ok(n) => n,
                Err(_) => {
                    eprintln!("nothing approved");
                    return Ok(ExitCode::from(1));
                }
            }
        }
        None => {
            return Err(BadInput(
                "not in a terminal: say which action with --action N (the numbers above)".into(),
            )
            .into());
        }
    };
    let approval = chosen
        .checked_sub(1)
        .and_then(|i| asked.get(i))
        .ok_or_else(|| BadInput(format!("--action {chosen}: choose 1 to {}", asked.len())))?;
    let Some((action, prefix)) = approval.actions.split_last() else {
        return Err(BadInput("the approval names no action".into()).into());
    };
    let origin = url::Url::parse(&task.start_url)
        .map(|u| u.origin().ascii_serialization())
        .map_err(|e| BadInput(format!("the run's start URL: {e}")))?;
    let now = unix_now();
    let valid = parse_validity(&args.valid_for).map_err(BadInput)?;
    let task_id = TaskId::of(&task)?.to_string();
    if task_id != result.task_id {
        return Err(BadInput(format!(
            "{}: the journal's task is {task_id}, the result's {}",
            args.run.display(),
            result.task_id
        ))
        .into());
    }
    let consent = sign_consent(
        &key,
        Consent {
            version: CONSENT_VERSION,
            task_id,
            origin,
            prefix: prefix.iter().cloned().map(step_of).collect(),
            action: step_of(action.clone()),
            risk: approval.risk,
            issued_at: now,
            expires_at: now + valid,
        },
    )?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.run.join(format!("consent-{chosen}.json")));
    crate::run::write_json(&out, &consent)?;
    eprintln!(
        "approved {} (risk class {}) for task {}, until {} (Unix time); consent in {}",
        approval.label,
        approval.risk.level(),
        result.task_id,
        now + valid,
        out.display()
    );
    println!("{}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// The task (from the journal's `submitted` event, inputs redacted) and the result of a run
/// directory.
fn read_run(dir: &Path) -> Result<(TaskSpec, RunResult), BadInput> {
    let result_path = dir.join(forager_queen::journal::RESULT_FILE);
    let bytes = std::fs::read(&result_path)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", result_path.display())))?;
    let result: RunResult = serde_json::from_slice(&bytes)
        .map_err(|e| BadInput(format!("{}: {e}", result_path.display())))?;
    let journal = dir.join("events.jsonl");
    let text = std::fs::read_to_string(&journal)
        .map_err(|e| BadInput(format!("cannot read {}: {e}", journal.display())))?;
    let task = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["event"] == "submitted")
        .and_then(|event| serde_json::from_value::<TaskSpec>(event["task"].clone()).ok())
        .ok_or_else(|| BadInput(format!("{}: no submitted task", journal.display())))?;
    Ok((task, result))
}

/// `forager revoke CONSENT`: a signed revocation in this machine's store.
pub fn revoke_consent(
    consent: &Path,
    key: &Path,
    store: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let signed = read_consent(consent).map_err(BadInput)?;
    let key = read_user_key(key)?;
    if key.verifying_key() != signed.signer {
        return Err(BadInput(format!(
            "{} was signed by another key: only its signer can revoke it",
            consent.display()
        ))
        .into());
    }
    let store = revocation_store(store)?;
    let path = store.add(&revoke(&key, &signed, unix_now())?)?;
    eprintln!(
        "revoked consent {} ({}); revocation in {}",
        consent_digest(&signed)?.to_hex(),
        signed.value.action.label,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn revocation_store(dir: Option<&Path>) -> Result<RevocationStore, BadInput> {
    match dir {
        Some(dir) => Ok(RevocationStore::new(dir)),
        None => RevocationStore::for_user().ok_or_else(|| {
            BadInput("no home folder for the revocation store: set HOME or XDG_DATA_HOME".into())
        }),
    }
}

/// Reads `--consent` files for `task` and checks each whole (signature, task, origin,
/// expiry, this machine's revocations): a consent that cannot be used is bad input.
pub fn consents_for(task: &TaskSpec, files: &[PathBuf]) -> Result<Vec<SignedConsent>, BadInput> {
    let task_id = TaskId::of(task)
        .map_err(|e| BadInput(e.to_string()))?
        .to_string();
    checked_consents(&task_id, &task.origins(), files)
}

/// Reads `--consent` files for a workflow's replay: each must hold (signature, the
/// workflow's task, expiry, revocations); which steps they cover is the replayer's check.
pub fn consents_for_replay(
    task_id: &str,
    origins: &[String],
    files: &[PathBuf],
) -> Result<Vec<forager_protocol::consent::Consent>, BadInput> {
    Ok(checked_consents(task_id, origins, files)?
        .into_iter()
        .map(|signed| signed.value)
        .collect())
}

/// The consents in `files`, each checked whole for task `task_id` on `origins`, now.
fn checked_consents(
    task_id: &str,
    origins: &[String],
    files: &[PathBuf],
) -> Result<Vec<SignedConsent>, BadInput> {
    if files.is_empty() {
        return Ok(Vec::new());
    }
    let revocations = revocation_store(None)?
        .load()
        .map_err(|e| BadInput(e.to_string()))?;
    let now = unix_now();
    files
        .iter()
        .map(|file| {
            let signed = read_consent(file).map_err(BadInput)?;
            signed
                .check(task_id, origins, now, &revocations)
                .map_err(|e| BadInput(format!("consent {}: {e}", file.display())))?;
            Ok(signed)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_with_units_and_bounded() {
        assert_eq!(parse_validity("90"), Ok(90));
        assert_eq!(parse_validity("30m"), Ok(1800));
        assert_eq!(parse_validity("24h"), Ok(86_400));
        assert_eq!(parse_validity("7d"), Ok(7 * 86_400));
        assert!(parse_validity("0").is_err());
        assert!(parse_validity("1y").is_err());
        assert!(parse_validity("soon").is_err());
        assert!(parse_validity("365d").is_err());
    }

    #[test]
    fn a_user_key_round_trips_and_a_cluster_key_is_not_one() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("user.key");
        create_user_key(&path).expect("written");
        let key = read_user_key(&path).expect("read");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).expect("metadata").permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
        assert!(create_user_key(&path).is_err(), "never overwritten");
        let other = dir.path().join("swarm.key");
        std::fs::write(&other, "/key/swarm/psk/1.0.0/\n/base16/\n00").expect("written");
        assert!(read_user_key(&other).is_err());
        assert_eq!(
            read_user_key(&path).expect("read").to_bytes(),
            key.to_bytes()
        );
    }
}
