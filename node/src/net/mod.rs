//! The cluster network: identity, the swarm actor, the request-response codec and gossip
//! validation.
//!
//! ```text
//! owner (node worker / queen) ──Network (commands)──▶ swarm actor ──▶ libp2p Swarm
//!            ▲                                           │
//!            └──────── NetworkEvent (bounded) ───────────┘
//! ```

pub mod codec;
pub mod identity;
pub mod swarm;
pub mod validate;

pub use identity::NodeIdentity;
pub use swarm::{GossipCounters, NetError, Network, NetworkConfig, NetworkEvent, Responder, Role};
pub use validate::{Accepted, Rejection, Validator};

/// Reads a cluster key: 64 hex digits, or the `swarm.key` format (`/key/swarm/psk/1.0.0/`,
/// `/base16/`, then the 64 hex digits).
pub fn parse_cluster_key(text: &str) -> Result<[u8; 32], String> {
    let hex = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('/'))
        .collect::<String>();
    if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err("a cluster key is 64 hexadecimal digits (32 bytes)".into());
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|e| e.to_string())?;
    }
    Ok(key)
}

/// A cluster key in the `swarm.key` format.
pub fn format_cluster_key(key: &[u8; 32]) -> String {
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    format!("/key/swarm/psk/1.0.0/\n/base16/\n{hex}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_keys_round_trip_and_bad_ones_are_named() {
        let key = [7u8; 32];
        assert_eq!(parse_cluster_key(&format_cluster_key(&key)), Ok(key));
        assert_eq!(parse_cluster_key(&"07".repeat(32)), Ok(key));
        assert!(parse_cluster_key("abc").is_err());
        assert!(parse_cluster_key(&"zz".repeat(32)).is_err());
    }
}
