//! Headless Chromium: the production [`crate::Environment`].
//!
//! - `process`: one Chromium process, launched in its own process group, killed as a group.
//! - `pool`: the task that owns the node's browser; environments share it through a handle and
//!   ask it to restart after a crash.
//! - `tab`: an isolated browser context with one page, forager's scripts and guards (seeded
//!   randomness, fixed-epoch clock, non-blocking dialogs, origin-restricted requests), and the
//!   primitives: observe, click, fill, select, press, navigate, back, settle, screenshot.
//! - `steps`: what every user of a tab does: carry out an action (locator chains, inputs by
//!   name, settling) and check success predicates.
//! - `env`: [`ChromiumEnv`], the environment: the page cache, replay with fingerprint checks,
//!   the refusal to replay writes, success predicates, the validator's pre-pass.
//! - `assist`: the model tier's help to an environment: verdicts for tasks without a
//!   predicate, a ranking of flat shortlists, recovery when stuck.
//! - `replay`: [`replay_workflow`], a compiled workflow run without search: every step's
//!   post-condition checked, healed locators recorded, a screenshot where it fails.
//!
//! Page scripts live in `js/`: `observe.js` (the DOM walk behind every observation),
//! `act.js` (locator resolution and field helpers), `prelude.js` (roles, accessible names, CSS
//! paths), `init.js` (determinism), `settle.js`, `predicates.js`.
//!
//! The scripts run in chromiumoxide's isolated world (the page cannot tamper with them), except
//! `init.js`, which must replace the page's own `Math.random`, clock and timers. `observe.js`
//! generates and `act.js` resolves the `Near` and `InItem` locators with the same walks
//! (`prelude.js`'s `ANCHORS`, `anchorText`, `nearTarget`, `keyedItemOf`, `itemKeys`): change one,
//! change the other. Every script walks the same trees (`prelude.js`'s `ROOTS`: the document, each
//! open shadow root, each same-origin frame's document); a closed shadow root and a cross-origin
//! frame are not ours to read. What each reading of a page does (terminals, scrolling boxes, the
//! text digest of the application's part of the page, names from class words and colours,
//! labels, items and columns, click points) is written beside it in the scripts.

mod assist;
mod env;
mod pool;
mod process;
mod replay;
mod steps;
mod tab;

pub use env::{ChromiumEnv, ChromiumFactory, EnvOptions, EnvStats, ModelValidator, PageSummary};
pub use pool::{BrowserPool, PoolError};
pub use process::{
    BrowserOptions, BrowserProcess, DEBIAN_CHROMIUM, FLAGS, GROUP_EXIT_LIMIT, LaunchError,
    adopt_orphans, kill_group, reap_orphans, reap_stale_browsers,
};
pub use replay::{ReplayFailure, ReplayOptions, ReplayRun, ReplayedStep, replay_workflow};
pub use steps::Heal;
pub use tab::{NetworkLog, OriginGuard, Tab, Timeouts};
