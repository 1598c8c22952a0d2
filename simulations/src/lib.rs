//! Synthetic websites for forager's search, where the best possible answer is known.
//!
//! # Layout
//!
//! - [`site`]: the generator (families of sites with decoys, forms, irreversible actions, auth
//!   walls, latency and nondeterminism) and each site's optimal path length.
//! - [`env`]: a site as a [`forager_node::Environment`], counting unsafe actions.
//! - [`strategies`]: MCTS and the `random`, `bfs` and `greedy` baselines.
//! - [`batch`]: a strategy over many sites, summarised.
//! - [`sweep`]: a grid over the score's weights, written as CSV and an SVG plot.
//! - [`cluster`]: simulated sites for the real cluster (`forager node --sim SEED`), through the
//!   same worker, queen and network code.

pub mod batch;
pub mod cluster;
pub mod env;
pub mod site;
pub mod strategies;
pub mod sweep;
