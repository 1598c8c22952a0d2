//! The named values a task types, from the command line: `--input NAME=VALUE` and
//! `--totp NAME=SECRET`, read into maps. Shared by the commands that build a task, log in for
//! a capsule and replay a workflow, so it sits below all three.

use crate::BadInput;
use forager_protocol::capsule::totp;
use std::collections::BTreeMap;

/// `--input NAME=VALUE` flags as a map.
pub fn parse_inputs(pairs: &[String]) -> Result<BTreeMap<String, String>, BadInput> {
    let mut inputs = BTreeMap::new();
    for pair in pairs {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| BadInput(format!("--input expects NAME=VALUE, got {pair:?}")))?;
        inputs.insert(name.trim().to_owned(), value.to_owned());
    }
    Ok(inputs)
}

/// `--totp NAME=BASE32` pairs, each secret checked.
pub fn parse_totp(pairs: &[String]) -> Result<BTreeMap<String, String>, BadInput> {
    let mut secrets = BTreeMap::new();
    for pair in pairs {
        let (name, secret) = pair
            .split_once('=')
            .ok_or_else(|| BadInput(format!("--totp {pair:?}: write NAME=BASE32SECRET")))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(BadInput(format!("--totp {pair:?}: the name is empty")));
        }
        totp(secret, 0).map_err(|e| BadInput(format!("--totp {name}: {e}")))?;
        secrets.insert(name.to_owned(), secret.to_owned());
    }
    Ok(secrets)
}
