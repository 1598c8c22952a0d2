//! The cluster key's file: the one `--cluster-key` names, or `cluster.key` in a peer's data
//! folder (created when missing). Read by the peers (`forager node`, `forager queen`) and by
//! the clients of a queen (`forager submit`, `status`, `cancel`, `result`) alike.

use crate::BadInput;
use forager_node::net::{format_cluster_key, parse_cluster_key};
use std::path::Path;

/// Reads a cluster key file.
pub fn read_cluster_key(path: &Path) -> Result<[u8; 32], BadInput> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| BadInput(format!("cannot read cluster key {}: {e}", path.display())))?;
    parse_cluster_key(&text).map_err(|e| BadInput(format!("cluster key {}: {e}", path.display())))
}

/// The cluster key given, or `data/cluster.key` (created when missing).
pub fn read_or_create_cluster_key(given: Option<&Path>, data: &Path) -> anyhow::Result<[u8; 32]> {
    if let Some(path) = given {
        return Ok(read_cluster_key(path)?);
    }
    let path = data.join("cluster.key");
    if path.exists() {
        return Ok(read_cluster_key(&path)?);
    }
    std::fs::create_dir_all(data)?;
    let key = forager_queen::cluster::random_cluster_key();
    std::fs::write(&path, format_cluster_key(&key))?;
    eprintln!(
        "created a cluster key at {}: every peer of this cluster needs it (--cluster-key)",
        path.display()
    );
    Ok(key)
}
