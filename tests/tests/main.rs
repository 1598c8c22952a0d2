//! forager's end-to-end tests, one binary: each file of this folder is a module of it (one
//! link instead of one per file: docs/build.md). Every test runs in a process of its own
//! under cargo-nextest, as it did when each file was a binary; `.config/nextest.toml` names
//! the groups by module (`test(/^hosts::/)`).

mod app;
mod browser;
mod capsule;
mod cluster;
mod consent;
mod dynamic;
mod explore;
mod hosts;
mod mdns;
mod memory;
mod model;
mod model_tier;
mod module_graph;
mod perception;
mod risk;
mod server_state;
mod simulate_cli;
mod workflow;
mod write_claims;
