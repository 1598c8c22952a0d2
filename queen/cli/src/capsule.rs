//! `forager capsule`: log in once and keep the session sealed; open it for a run.
//!
//! `capture` runs a login as a searched task on one local browser (credentials as inputs,
//! one-time codes computed from TOTP secrets at the moment they are needed), and the
//! environment takes the context's session at the first state where the success predicates
//! hold. The session is restricted to the capsule's origins, sealed and signed
//! ([`forager_protocol::capsule`]) and written with mode 0600; `refresh` does the login again
//! from the recipe the capsule keeps. `mount` opens a capsule for a task: everything is
//! checked before a browser starts, and the session goes into the task only (never a file).
//!
//! `capture` searches the login on one local `ChromiumEnv` with `search::run` (no cluster);
//! `recapture` is the one recovery of an `explore` that ended `session_expired`.

use crate::BadInput;
use crate::cli::{CapsuleSecretArgs, CaptureArgs, LoginArgs, RefreshArgs};
use crate::consent::{parse_validity, read_key_file, read_user_key, write_private};
use crate::inputs::{parse_inputs, parse_totp};
use anyhow::Context;
use data_encoding::HEXLOWER;
use ed25519_dalek::SigningKey;
use forager_node::browser::{BrowserOptions, BrowserPool, ChromiumEnv, EnvOptions};
use forager_node::consent::{RevocationStore, unix_now};
use forager_node::search::{Finish, NoObserver, SearchConfig};
use forager_protocol::RiskClass;
use forager_protocol::capsule::{
    ARGON2_ITERATIONS, ARGON2_MEMORY_KIB, CAPSULE_VERSION, Capsule, CapsuleSecret, KeySource,
    LoginRecipe, ReusePolicy, SessionState, SignedCapsule, capsule_digest, key_file_id, origin_of,
    sign_capsule, totp,
};
use forager_protocol::consent::SignedRevocation;
use forager_protocol::predicate::SuccessPredicate;
use forager_protocol::signing::{Domain, Signed};
use forager_protocol::{ScoreWeights, TaskSpec};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// The first line of a capsule key file.
const KEY_FILE_HEADER: &str = "forager capsule key v1";

/// The environment variable that holds a capsule passphrase.
pub const PASSPHRASE_VAR: &str = "FORAGER_CAPSULE_PASSPHRASE";

/// Largest capsule file read.
const MAX_CAPSULE_FILE: u64 = 1024 * 1024;

/// The α weight a run with a mounted capsule uses when the task sets none: a page that asks
/// to log in again costs its branch.
const CAPSULE_AUTH_WEIGHT: f64 = 0.5;

/// `forager capsule keygen`.
pub fn keygen(out: &Path) -> anyhow::Result<ExitCode> {
    let mut key = [0u8; 32];
    rand::fill(&mut key);
    let text = format!("{KEY_FILE_HEADER}\n{}\n", HEXLOWER.encode(&key));
    write_private(out, text.as_bytes())?;
    eprintln!(
        "wrote a capsule key to {} (key id {})",
        out.display(),
        key_file_id(&key).to_hex()
    );
    Ok(ExitCode::SUCCESS)
}

/// Replaces `path` atomically (a temporary file with mode 0600 beside it, then a rename): a
/// crash leaves the old capsule or the new one.
fn replace_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("capsule");
    let temporary = path.with_file_name(format!(".{name}.tmp"));
    let _ = std::fs::remove_file(&temporary);
    write_private(&temporary, bytes)?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// The secret the flags name, read.
pub fn read_secret(args: &CapsuleSecretArgs) -> Result<CapsuleSecret, BadInput> {
    if let Some(path) = &args.key_file {
        let key = read_key_file(
            path,
            KEY_FILE_HEADER,
            "a capsule key file (make one with `forager capsule keygen --out FILE`)",
        )?;
        return Ok(CapsuleSecret::KeyFile(key));
    }
    let passphrase = match &args.passphrase_file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| BadInput(format!("cannot read {}: {e}", path.display())))?
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
        None => std::env::var(PASSPHRASE_VAR).map_err(|_| {
            BadInput(format!(
                "a capsule needs its secret: --key-file FILE, --passphrase-file FILE or \
                 ${PASSPHRASE_VAR}"
            ))
        })?,
    };
    if passphrase.chars().count() < 8 {
        return Err(BadInput(
            "a capsule passphrase has at least 8 characters".into(),
        ));
    }
    Ok(CapsuleSecret::Passphrase(passphrase))
}

/// A fresh key source for `secret` (a random salt for a passphrase).
fn key_source(secret: &CapsuleSecret) -> KeySource {
    match secret {
        CapsuleSecret::Passphrase(_) => {
            let mut salt = [0u8; 16];
            rand::fill(&mut salt);
            KeySource::Passphrase {
                salt,
                memory_kib: ARGON2_MEMORY_KIB,
                iterations: ARGON2_ITERATIONS,
            }
        }
        CapsuleSecret::KeyFile(key) => KeySource::KeyFile {
            key_id: key_file_id(key),
        },
    }
}

/// Reads a capsule file (bounded).
pub fn read_capsule(path: &Path) -> Result<SignedCapsule, BadInput> {
    let size = std::fs::metadata(path)
        .map_err(|e| BadInput(format!("cannot read capsule {}: {e}", path.display())))?
        .len();
    if size > MAX_CAPSULE_FILE {
        return Err(BadInput(format!(
            "{}: {size} bytes is too large for a capsule",
            path.display()
        )));
    }
    let bytes = std::fs::read(path)
        .map_err(|e| BadInput(format!("cannot read capsule {}: {e}", path.display())))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| BadInput(format!("{} is not a capsule: {e}", path.display())))
}

fn revocations() -> Result<Vec<SignedRevocation>, BadInput> {
    RevocationStore::for_user()
        .ok_or_else(|| {
            BadInput("no home folder for the revocation store: set HOME or XDG_DATA_HOME".into())
        })?
        .load()
        .map_err(|e| BadInput(e.to_string()))
}

/// The codes of the moment for `secrets`, as inputs.
pub fn totp_inputs(secrets: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let now = unix_now();
    secrets
        .iter()
        .filter_map(|(name, secret)| Some((name.clone(), totp(secret, now).ok()?)))
        .collect()
}

/// The login task of a recipe, with credentials.
fn login_task(
    recipe: &LoginRecipe,
    inputs: &BTreeMap<String, String>,
    totp_secrets: &BTreeMap<String, String>,
    budget: u32,
    timeout: u32,
) -> Result<TaskSpec, BadInput> {
    let mut task = TaskSpec::new(
        recipe.url.clone(),
        recipe.goal.clone(),
        recipe.success.clone(),
    );
    task.inputs = inputs.clone();
    task.inputs.extend(totp_inputs(totp_secrets));
    task.allowed_origins = recipe.allowed_origins.clone();
    task.budget.actions = budget;
    task.budget.max_depth = 8;
    task.budget.wall_time_secs = timeout;
    // A login's forms post (a second factor's "Verify" reads as a submission, class 4);
    // nothing that spends or changes the account belongs in a login.
    task.risk_ceiling = RiskClass::ExternalSubmission;
    task.validate()
        .map_err(|e| BadInput(format!("the login: {e}")))?;
    Ok(task)
}

/// Searches the login on one local browser and returns the session where it succeeded.
async fn log_in(task: TaskSpec) -> anyhow::Result<SessionState> {
    let pool = BrowserPool::new(BrowserOptions::default());
    let options = EnvOptions {
        capture_session: true,
        ..EnvOptions::default()
    };
    let config = SearchConfig::for_task(&task);
    let started = std::time::Instant::now();
    let outcome = async {
        let env = ChromiumEnv::new(pool.clone(), Arc::new(task), options)
            .map_err(|e| anyhow::anyhow!("the login: {e}"))?;
        let mut workers = [env];
        let mut observer = NoObserver;
        let searched = tokio::select! {
            searched = forager_node::search::run(&mut workers, config, None, &mut observer) => searched,
            _ = crate::stop_requested() => anyhow::bail!("interrupted"),
        };
        let [mut env] = workers;
        let captured = env.take_captured();
        env.close().await;
        let (report, _) = searched.map_err(|e| anyhow::anyhow!("the login did not start: {e}"))?;
        match (report.finish, captured) {
            (Finish::Solved, Some(session)) => Ok((session, report.metrics.actions)),
            (Finish::Solved, None) => {
                anyhow::bail!("the login succeeded but its session could not be read")
            }
            (Finish::Failed(reason), _) => anyhow::bail!(
                "the login failed: {reason} after {} actions; check the credentials and the \
                 success predicate",
                report.metrics.actions
            ),
        }
    }
    .await;
    pool.shutdown().await;
    let (session, actions) = outcome?;
    eprintln!(
        "logged in with {actions} actions in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(session)
}

/// Seals and signs `session` (restricted to `policy.origins`).
fn seal(
    session: &SessionState,
    policy: ReusePolicy,
    login: LoginRecipe,
    validity: u64,
    secret: &CapsuleSecret,
    user: &SigningKey,
) -> anyhow::Result<SignedCapsule> {
    let session = session.restrict(&policy.origins);
    if session.is_empty() {
        anyhow::bail!(
            "the login left no cookie or storage for {}: nothing to keep",
            policy.origins.join(", ")
        );
    }
    let now = unix_now();
    let mut nonce = [0u8; 12];
    rand::fill(&mut nonce);
    let source = key_source(secret);
    let key = forager_protocol::capsule::derive_key(&source, secret)?;
    let readable = Capsule {
        version: CAPSULE_VERSION,
        created_at: now,
        expires_at: now + validity,
        policy,
        login: Some(login),
        key: source,
        nonce,
        sealed: Vec::new(),
    };
    Ok(sign_capsule(user, readable.seal(&session, &key)?)?)
}

fn capsule_json(capsule: &SignedCapsule) -> anyhow::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(capsule)?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn predicates(
    url: &Option<String>,
    text: &Option<String>,
    selector: &Option<String>,
) -> Vec<SuccessPredicate> {
    [
        url.clone().map(SuccessPredicate::UrlMatches),
        text.clone().map(SuccessPredicate::TextPresent),
        selector.clone().map(SuccessPredicate::SelectorPresent),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What a login's flags say, read and checked.
struct Login {
    user: SigningKey,
    secret: CapsuleSecret,
    validity: u64,
    inputs: BTreeMap<String, String>,
    totp_secrets: BTreeMap<String, String>,
}

impl Login {
    fn read(args: &LoginArgs) -> Result<Login, BadInput> {
        Ok(Login {
            user: read_user_key(&args.key)?,
            secret: read_secret(&args.secret)?,
            validity: parse_validity(&args.valid_for).map_err(BadInput)?,
            inputs: parse_inputs(&args.inputs)?,
            totp_secrets: parse_totp(&args.totp)?,
        })
    }
}

/// `forager capsule capture`.
pub fn capture(args: &CaptureArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    if args.out.exists() {
        return Err(BadInput(format!("{} exists; not overwriting it", args.out.display())).into());
    }
    let success = predicates(
        &args.success_url,
        &args.success_text,
        &args.success_selector,
    );
    if success.is_empty() {
        return Err(BadInput(
            "say what \"logged in\" looks like: --success-text, --success-url or \
             --success-selector"
                .into(),
        )
        .into());
    }
    let Login {
        user,
        secret,
        validity,
        inputs,
        totp_secrets,
    } = Login::read(&args.login)?;
    let origins: Vec<String> = if args.origins.is_empty() {
        vec![args.url.clone()]
    } else {
        args.origins.clone()
    };
    let origins = origins
        .iter()
        .map(|o| origin_of(o).ok_or_else(|| BadInput(format!("--origin {o:?} is not a web URL"))))
        .collect::<Result<Vec<_>, _>>()?;
    let recipe = LoginRecipe {
        url: args.url.clone(),
        goal: args.goal.clone(),
        success,
        allowed_origins: args.allow_origins.clone(),
        inputs: inputs.keys().cloned().collect(),
        totp: totp_secrets.keys().cloned().collect(),
    };
    let max_risk = RiskClass::try_from(args.max_risk).map_err(|e| BadInput(e.to_string()))?;
    let task = login_task(&recipe, &inputs, &totp_secrets, args.budget, args.timeout)?;
    let session = runtime.block_on(log_in(task))?;
    let policy = ReusePolicy { origins, max_risk };
    let capsule = seal(&session, policy, recipe, validity, &secret, &user)?;
    write_private(&args.out, &capsule_json(&capsule)?)?;
    describe(&capsule, None);
    eprintln!("wrote capsule {}", args.out.display());
    Ok(ExitCode::SUCCESS)
}

/// Logs in again from `capsule`'s recipe with the credentials given and returns the fresh
/// capsule (same origins and policy, sealed with the same secret, signed by `user`).
pub async fn recapture(
    capsule: &SignedCapsule,
    inputs: &BTreeMap<String, String>,
    totp_secrets: &BTreeMap<String, String>,
    secret: &CapsuleSecret,
    user: &SigningKey,
    validity: u64,
) -> anyhow::Result<SignedCapsule> {
    let recipe = capsule
        .value
        .login
        .clone()
        .ok_or_else(|| BadInput("the capsule keeps no login recipe to refresh from".into()))?;
    let missing: Vec<&String> = recipe
        .inputs
        .iter()
        .filter(|name| !inputs.contains_key(*name))
        .chain(
            recipe
                .totp
                .iter()
                .filter(|name| !totp_secrets.contains_key(*name)),
        )
        .collect();
    if !missing.is_empty() {
        return Err(BadInput(format!(
            "the login needs {} (as --input NAME=VALUE or --totp NAME=BASE32)",
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .into());
    }
    let inputs: BTreeMap<String, String> = inputs
        .iter()
        .filter(|(name, _)| recipe.inputs.contains(name))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let task = login_task(&recipe, &inputs, totp_secrets, 60, 120)?;
    let session = log_in(task).await?;
    seal(
        &session,
        capsule.value.policy.clone(),
        recipe,
        validity,
        secret,
        user,
    )
}

/// Whether the credentials a refresh of `capsule` needs are all given.
pub fn credentials_present(
    capsule: &SignedCapsule,
    inputs: &BTreeMap<String, String>,
    totp_secrets: &BTreeMap<String, String>,
) -> bool {
    capsule.value.login.as_ref().is_some_and(|recipe| {
        recipe.inputs.iter().all(|n| inputs.contains_key(n))
            && recipe.totp.iter().all(|n| totp_secrets.contains_key(n))
    })
}

/// Replaces a capsule file with `capsule`, atomically.
pub fn replace(path: &Path, capsule: &SignedCapsule) -> anyhow::Result<()> {
    replace_private(path, &capsule_json(capsule)?)
}

/// `forager capsule refresh`.
pub fn refresh(args: &RefreshArgs, runtime: &tokio::runtime::Runtime) -> anyhow::Result<ExitCode> {
    let old = read_capsule(&args.capsule)?;
    let Login {
        user,
        secret,
        validity,
        inputs,
        totp_secrets,
    } = Login::read(&args.login)?;
    // The old one must still be the user's and open with this secret (expiry aside: an
    // expired capsule is what a refresh is for).
    let opened = old.check(0, &revocations()?);
    match opened {
        Ok(_) | Err(forager_protocol::capsule::CapsuleError::Expired { .. }) => {}
        Err(e) => return Err(BadInput(format!("{}: {e}", args.capsule.display())).into()),
    }
    if user.verifying_key() != old.signer {
        return Err(BadInput(format!(
            "{} was signed by another key: refresh it with its signer's",
            args.capsule.display()
        ))
        .into());
    }
    let key = forager_protocol::capsule::derive_key(&old.value.key, &secret)
        .map_err(|e| BadInput(format!("{}: {e}", args.capsule.display())))?;
    old.value
        .unseal(&key)
        .map_err(|e| BadInput(format!("{}: {e}", args.capsule.display())))?;
    let fresh = runtime.block_on(recapture(
        &old,
        &inputs,
        &totp_secrets,
        &secret,
        &user,
        validity,
    ))?;
    replace_private(&args.capsule, &capsule_json(&fresh)?)?;
    describe(&fresh, None);
    eprintln!("refreshed {}", args.capsule.display());
    Ok(ExitCode::SUCCESS)
}

/// `forager capsule inspect`.
pub fn inspect(path: &Path, secret: &CapsuleSecretArgs, json: bool) -> anyhow::Result<ExitCode> {
    let capsule = read_capsule(path)?;
    let status = match capsule.check(unix_now(), &revocations()?) {
        Ok(_) => "valid".to_owned(),
        Err(e) => e.to_string(),
    };
    let opened = if secret.key_file.is_some() || secret.passphrase_file.is_some() {
        let secret = read_secret(secret)?;
        let key = forager_protocol::capsule::derive_key(&capsule.value.key, &secret)
            .map_err(|e| BadInput(format!("{}: {e}", path.display())))?;
        Some(
            capsule
                .value
                .unseal(&key)
                .map_err(|e| BadInput(format!("{}: {e}", path.display())))?,
        )
    } else {
        None
    };
    if json {
        let contents = opened.as_ref().map(|s| {
            serde_json::json!({
                "cookies": s.cookies.iter().map(|c| serde_json::json!({
                    "name": c.name, "domain": c.domain, "path": c.path,
                    "http_only": c.http_only, "secure": c.secure, "expires": c.expires,
                })).collect::<Vec<_>>(),
                "storage": s.storage.iter().map(|o| serde_json::json!({
                    "origin": o.origin,
                    "local": o.local.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                    "session": o.session.iter().map(|(k, _)| k).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        });
        let document = serde_json::json!({
            "id": capsule_digest(&capsule)?.to_hex(),
            "signer": HEXLOWER.encode(capsule.signer.as_bytes()),
            "status": status,
            "created_at": capsule.value.created_at,
            "expires_at": capsule.value.expires_at,
            "policy": capsule.value.policy,
            "login": capsule.value.login,
            "sealed_with": match capsule.value.key {
                KeySource::Passphrase { .. } => "passphrase",
                KeySource::KeyFile { .. } => "key file",
            },
            "contents": contents,
        });
        println!("{}", serde_json::to_string_pretty(&document)?);
    } else {
        describe(&capsule, opened.as_ref());
        println!("status: {status}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what a capsule says about itself (and, opened, the names in it; never a value).
fn describe(capsule: &SignedCapsule, opened: Option<&SessionState>) {
    let c = &capsule.value;
    let id = capsule_digest(capsule).map_or_else(|_| "?".into(), |d| d.to_hex());
    println!("capsule {id}");
    println!("  signer: {}", HEXLOWER.encode(capsule.signer.as_bytes()));
    println!("  origins: {}", c.policy.origins.join(", "));
    println!(
        "  created {}, expires {} ({} s)",
        c.created_at,
        c.expires_at,
        c.expires_at.saturating_sub(c.created_at)
    );
    println!("  tasks up to risk class {}", c.policy.max_risk.level());
    if let Some(login) = &c.login {
        println!(
            "  login: {} ({:?}; inputs {}; one-time codes {})",
            login.url,
            login.goal,
            login.inputs.join(", "),
            login.totp.join(", ")
        );
    }
    if let Some(state) = opened {
        for cookie in &state.cookies {
            println!(
                "  cookie {} for {}{}{}",
                cookie.name,
                cookie.domain,
                cookie.path,
                if cookie.http_only { " (HttpOnly)" } else { "" }
            );
        }
        for storage in &state.storage {
            let keys: Vec<&str> = storage
                .local
                .iter()
                .chain(&storage.session)
                .map(|(k, _)| k.as_str())
                .collect();
            println!("  storage of {}: {}", storage.origin, keys.join(", "));
        }
    }
}

/// `forager capsule revoke`.
pub fn revoke(path: &Path, key: &Path) -> anyhow::Result<ExitCode> {
    let capsule = read_capsule(path)?;
    let key = read_user_key(key)?;
    if key.verifying_key() != capsule.signer {
        return Err(BadInput(format!(
            "{} was signed by another key: only its signer can revoke it",
            path.display()
        ))
        .into());
    }
    let subject = capsule_digest(&capsule)?;
    let revocation = Signed::new(
        &key,
        Domain::Revocation,
        forager_protocol::consent::Revocation {
            subject,
            revoked_at: unix_now(),
        },
    )?;
    let store = RevocationStore::for_user().ok_or_else(|| {
        BadInput("no home folder for the revocation store: set HOME or XDG_DATA_HOME".into())
    })?;
    let file = store.add(&revocation)?;
    eprintln!(
        "revoked capsule {} ({}); revocation in {}",
        subject.to_hex(),
        capsule.value.policy.origins.join(", "),
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether the consents a task carries stay within the policy of the capsule it mounts.
pub fn check_consents(task: &TaskSpec, mounted: &Mounted) -> Result<(), BadInput> {
    let max = mounted.capsule.value.policy.max_risk;
    match task.consents.iter().find(|c| c.value.risk > max) {
        Some(consent) => Err(BadInput(format!(
            "capsule {}: its policy allows up to risk class {}, a consent is for class {} ({})",
            mounted.path.display(),
            max.level(),
            consent.value.risk.level(),
            consent.value.action.label
        ))),
        None => Ok(()),
    }
}

/// A capsule opened for a run: what recovery needs besides the task.
pub struct Mounted {
    /// The file (replaced by a recovery).
    pub path: PathBuf,
    /// The capsule.
    pub capsule: SignedCapsule,
    /// Its secret.
    pub secret: CapsuleSecret,
}

/// Opens the capsule at `path` for `task` (before anything starts: signature, expiry,
/// revocations, the seal, the policy against the task's ceiling and consents) and mounts
/// its session, restricted to the origins both allow.
pub fn mount(
    task: &mut TaskSpec,
    path: &Path,
    secret: &CapsuleSecretArgs,
) -> Result<Mounted, BadInput> {
    let capsule = read_capsule(path)?;
    let secret = read_secret(secret)?;
    let session = capsule
        .open(&secret, unix_now(), &revocations()?)
        .map_err(|e| BadInput(format!("capsule {}: {e}", path.display())))?;
    mount_session(task, &capsule, session)
        .map_err(|e| BadInput(format!("capsule {}: {e}", path.display())))?;
    Ok(Mounted {
        path: path.to_owned(),
        capsule,
        secret,
    })
}

/// Puts an opened session into a task (its policy checked).
pub fn mount_session(
    task: &mut TaskSpec,
    capsule: &SignedCapsule,
    session: SessionState,
) -> Result<(), String> {
    capsule
        .value
        .allows(task.risk_ceiling)
        .map_err(|e| e.to_string())?;
    let origins: Vec<String> = task
        .origins()
        .into_iter()
        .filter(|o| capsule.value.policy.origins.contains(o))
        .collect();
    if origins.is_empty() {
        return Err(format!(
            "it is for {}, which this task does not act on",
            capsule.value.policy.origins.join(", ")
        ));
    }
    let reference = capsule.reference().map_err(|e| e.to_string())?;
    task.capsule = Some(forager_protocol::capsule::CapsuleRef {
        origins: origins.clone(),
        ..reference
    });
    task.session = Some(session.restrict(&origins));
    if task.weights.auth == ScoreWeights::DEFAULT.auth {
        task.weights.auth = CAPSULE_AUTH_WEIGHT;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totp_flags_are_checked_and_never_become_task_inputs_by_themselves() {
        let secrets = parse_totp(&["code=JBSWY3DPEHPK3PXP".into()]).expect("valid");
        assert_eq!(secrets.len(), 1);
        let codes = totp_inputs(&secrets);
        assert_eq!(codes["code"].len(), 6);
        assert!(codes["code"].chars().all(|c| c.is_ascii_digit()));
        assert!(parse_totp(&["code".into()]).is_err(), "no secret");
        assert!(parse_totp(&["=JBSWY3DP".into()]).is_err(), "no name");
        let error = parse_totp(&["code=not base32!".into()]).expect_err("bad secret");
        assert!(error.0.contains("base32"), "{error}");
    }

    #[test]
    fn a_session_is_mounted_for_the_origins_the_task_and_the_capsule_share() {
        use forager_protocol::capsule::{SessionCookie, sign_capsule};
        let user = SigningKey::from_bytes(&[5; 32]);
        let cookie = |domain: &str| SessionCookie {
            name: "sid".into(),
            value: "secret".into(),
            domain: domain.into(),
            path: "/".into(),
            expires: None,
            http_only: true,
            secure: false,
            same_site: None,
        };
        let session = SessionState {
            cookies: vec![cookie("127.0.0.1"), cookie("127.0.0.2")],
            storage: Vec::new(),
        };
        let capsule = Capsule {
            version: CAPSULE_VERSION,
            created_at: 1,
            expires_at: 100,
            policy: ReusePolicy {
                origins: vec!["http://127.0.0.1:8080".into(), "http://127.0.0.2:9".into()],
                max_risk: RiskClass::DraftWrite,
            },
            login: None,
            key: KeySource::KeyFile {
                key_id: key_file_id(&[1; 32]),
            },
            nonce: [0; 12],
            sealed: Vec::new(),
        };
        let signed = sign_capsule(&user, capsule).expect("signed");
        let mut task = TaskSpec::new(
            "http://127.0.0.1:8080/inbox",
            "Read the inbox",
            vec![SuccessPredicate::TextPresent("Inbox".into())],
        );
        mount_session(&mut task, &signed, session.clone()).expect("mounted");
        let mounted = task.session.as_ref().expect("a session");
        assert_eq!(mounted.cookies.len(), 1, "only the task's origin");
        assert_eq!(mounted.cookies[0].domain, "127.0.0.1");
        assert_eq!(
            task.capsule.as_ref().map(|c| c.origins.clone()),
            Some(vec!["http://127.0.0.1:8080".to_owned()])
        );
        assert_eq!(task.weights.auth, CAPSULE_AUTH_WEIGHT);
        assert_eq!(task.validate(), Ok(()));
        assert!(task.redacted().session.is_none(), "artifacts never hold it");
        // A ceiling above the policy, or a task on none of its origins: refused.
        let mut risky = TaskSpec::new("http://127.0.0.1:8080/", "Buy", Vec::new());
        risky.risk_ceiling = RiskClass::Financial;
        assert!(mount_session(&mut risky, &signed, session.clone()).is_err());
        let mut elsewhere = TaskSpec::new("http://127.0.0.3:1/", "Read", Vec::new());
        assert!(mount_session(&mut elsewhere, &signed, session).is_err());
    }
}
