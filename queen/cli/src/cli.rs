//! The command line. Every flag says what it does and its default, so that `--help` teaches.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// forager: a peer-to-peer cluster that searches websites with Monte-Carlo tree search in
/// headless Chromium, and publishes the winning path as a signed, replayable workflow.
#[derive(Debug, Parser)]
#[command(name = "forager", version, propagate_version = true)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// How log lines on stderr are written: `text` for people, `json` (one object per line:
    /// timestamp, level, target, fields, spans) for log collectors.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// Worker threads of the async runtime that drives browsers and the network [default: the
    /// machine's cores].
    #[arg(long, global = true, value_name = "N")]
    pub runtime_threads: Option<std::num::NonZeroUsize>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search synthetic websites, where the optimal path is known: compare strategies, or
    /// sweep the score's weights.
    ///
    /// Each site is generated from the seed (a family of sites shares a skeleton), with decoy
    /// links, forms that need the right input, irreversible actions of risk classes 4–7, auth
    /// walls, latency and nondeterminism. Examples:
    ///
    ///   forager simulate --sites 200 --seed 7 --strategy mcts --budget 500 --json
    ///   forager simulate --strategy all
    ///   forager simulate --sweep --sites 60 --out sweep-results
    #[command(verbatim_doc_comment)]
    Simulate(SimulateArgs),
    /// Search a website in headless Chromium for a path to a goal, and report it.
    ///
    /// Success is decided by predicates (URL regex, text, selector, JavaScript, extraction),
    /// never by reading prose. Actions above the risk ceiling are never executed; they are
    /// reported as approval_required. Pages are read with the installed sentence model
    /// (--embedder). Verified passes are remembered on disk (--memory) as workflows with
    /// parameters: a later task of the same kind on the same site (the goal with other
    /// quoted values, words or inputs) is tried first as that workflow with its own values
    /// (`forager memory` lists them); alike goals' actions are tried first. Exit status:
    /// 0 pass, 1 failing, 2 bad input. Examples:
    ///
    ///   forager explore --url http://127.0.0.1:8080/ --goal 'Find the "Rust" book' \
    ///       --success-url '/book/' --input card=12345678
    ///   forager explore --task task.toml --json
    ///   forager explore --task task.toml --no-memory --embedder ngram
    #[command(verbatim_doc_comment)]
    Explore(ExploreArgs),
    /// Read a goal as a plan before any search, and say whether the task brings what it needs.
    ///
    /// The plan: the act (find, sort, open, create, edit, publish, delete, comment, log in),
    /// the object, every condition the goal states (field, operator, value: "French", "before
    /// 1900", "urgent priority", "titled …") and the preconditions (a login). Each
    /// precondition is judged against the task: a login needs credentials (--input) or a
    /// capsule. --read-start opens the start page once in Chromium (no action) and says
    /// whether it asks to log in. No success predicate is needed. Exit status: 0 every
    /// precondition can be met, 1 one cannot, 2 bad input. Examples:
    ///
    ///   forager plan --url http://127.0.0.1:8080/ --goal 'Log in as alice and report a bug titled "X"'
    ///   forager plan --task task.toml --read-start --json
    #[command(verbatim_doc_comment)]
    Plan(PlanArgs),
    /// Run a worker node of a cluster: it searches branches the queen assigns (in Chromium, or
    /// a simulated site with --sim), reproduces paths, and gossips what it learns. Prints its
    /// peer id and addresses, then runs until Ctrl-C.
    Node(NodeArgs),
    /// Run a queen: it accepts tasks (from `forager submit`), assigns branches to the
    /// connected nodes, has successes reproduced by a second node, and writes results under
    /// DATA/tasks/. Restarted on the same DATA, it resumes unfinished tasks.
    Queen(QueenArgs),
    /// Submit a task to a running queen and wait for its result. Same flags, result document
    /// and exit codes as `explore`.
    Submit(SubmitArgs),
    /// Show what a running queen is doing: its nodes (address, requests in flight, in how
    /// many tasks a success of theirs failed to reproduce, last seen) and its tasks (state,
    /// actions spent of the budget, the best branch value, age). Example:
    ///
    ///   forager status --queen /ip4/10.0.0.5/tcp/4001/p2p/12D3Koo… --cluster-key cluster.key
    #[command(verbatim_doc_comment)]
    Status(StatusArgs),
    /// Cancel a running task on a queen: it ends failing with the reason `cancelled`, its
    /// result and journal written as for any other end (a `forager submit` waiting for it
    /// gets that result). A finished task stays as it ended.
    Cancel(TaskOnQueenArgs),
    /// Fetch a finished task's folder from a queen (result, signed trajectory, workflow,
    /// report, screenshots, journal), then verify it as `forager verify` does. Exit status:
    /// 0 a pass, fetched and verified; 1 a failing task, or a check failed; 2 bad input or a
    /// task the queen does not know. Example:
    ///
    ///   forager result --queen /ip4/10.0.0.5/tcp/4001/p2p/12D3Koo… --cluster-key cluster.key \
    ///       3f9c… --out run-3f9c
    #[command(verbatim_doc_comment)]
    Result(ResultArgs),
    /// Write a new random key to a file: a cluster key (swarm.key format), or with --user
    /// your own signing key for consents (kept apart from peer keys; mode 0600).
    Key {
        /// Where.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// A user key (for `approve` and `revoke`) instead of a cluster key.
        #[arg(long)]
        user: bool,
    },
    /// Sign a consent for an action a run stopped at (approval_required): it lists what the
    /// run asked for and, in a terminal, asks which; otherwise give --action N. The consent
    /// names the task, the origin, the actions before it, the action and its risk class, and
    /// an expiry. Run the same task again with --consent FILE and exactly that action may run
    /// there; everything else above the ceiling still stops. Example:
    ///
    ///   forager key --user --out ~/.forager-user.key
    ///   forager approve forager-runs/explore-1795321507 --key ~/.forager-user.key --action 1
    ///   forager explore … --consent forager-runs/explore-1795321507/consent-1.json
    #[command(verbatim_doc_comment)]
    Approve(ApproveArgs),
    /// Revoke a consent: a revocation signed with the consent's key, kept in this machine's
    /// store (~/.local/share/forager/revocations). explore, submit, replay and every node on
    /// this machine then refuse the consent by name.
    Revoke {
        /// The consent file.
        #[arg(value_name = "CONSENT")]
        consent: PathBuf,
        /// The user key that signed it.
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
    },
    /// Session capsules: log in once, then let runs reuse the session, sealed.
    ///
    /// `capture` searches a login (credentials as --input, one-time codes from --totp
    /// secrets), takes the browser's session where the success predicates say "logged in"
    /// (cookies, HttpOnly ones included, and web storage) for the origins named, seals it
    /// (ChaCha20-Poly1305, the key from a passphrase by Argon2id or from a key file) and signs
    /// it with your user key. `explore`, `submit` and `replay --capsule FILE` mount it into
    /// every browser context of the run, for its origins only. Example:
    ///
    ///   forager key --user --out ~/.forager-user.key
    ///   forager capsule keygen --out ~/.forager-capsule.key
    ///   forager capsule capture --url http://127.0.0.1:8080/login --goal 'Sign in' \
    ///       --success-text 'Signed in as ada' --input username=ada --input password=… \
    ///       --totp code=JBSWY3DPEHPK3PXP --key ~/.forager-user.key \
    ///       --key-file ~/.forager-capsule.key --out ada.capsule
    ///   forager explore --url http://127.0.0.1:8080/inbox --goal '…' --capsule ada.capsule \
    ///       --key-file ~/.forager-capsule.key
    #[command(verbatim_doc_comment, subcommand)]
    Capsule(CapsuleCommand),
    /// The workflow memory: every verified pass is kept as a workflow with parameters (the
    /// goal's quoted values, the words of the goal its steps used, its inputs by name), and a
    /// later task of the same kind on the same site is tried first as that workflow with its
    /// own values. List it, forget part of it, or carry it to another installation as a
    /// signed bundle (never with an input's value or a capsule's secret). Examples:
    ///
    ///   forager memory list
    ///   forager memory export --key ~/.forager-user.key --out team.memory
    ///   forager memory import team.memory
    ///   forager memory forget 3f9c
    #[command(verbatim_doc_comment, subcommand)]
    Memory(MemoryCommand),
    /// Serve a bundled demo site on 127.0.0.1 and explore a task on it: search, a two-step
    /// form with a required input, a confirmation page. Prints where the artifacts are.
    Demo(DemoArgs),
    /// Run a compiled workflow (a run's workflow.json) in headless Chromium, without search.
    ///
    /// Each step's target is found along its locator chain (a fallback locator that finds it
    /// heals the step, and the result and report say which), each step's post-condition is
    /// checked (URL path, text, fingerprint family), and the task's success predicates after
    /// the last step. A failing step ends the run with the step, the reason and a screenshot
    /// (failure.jpg).
    ///
    /// Writes result.json (the same document as explore) and report.html to --out. Exit
    /// status: 0 pass, 1 failing, 2 bad input (an unreadable or malformed workflow, a missing or
    /// unknown --input: nothing is launched). Example:
    ///
    ///   forager replay forager-runs/demo-1795321507/workflow.json --input card=12345678
    #[command(verbatim_doc_comment)]
    Replay(ReplayArgs),
    /// Check a run directory's signed trajectory without trusting the directory: the queen's
    /// signature over trajectory.json, the finder's and the reproducer's signed reports (and
    /// that each key is the peer it is named as), that those reports hold exactly these steps,
    /// the hash chain from step to step, and the digest of every other file it names.
    ///
    /// Exit status: 0 verified, 1 a check failed (the file and the check are named), 2 the
    /// directory or its trajectory.json cannot be read. Example:
    ///
    ///   forager verify forager-runs/demo-1795321507
    #[command(verbatim_doc_comment)]
    Verify {
        /// The run directory (holding trajectory.json).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// Print the outcome as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Which strategy `simulate` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyChoice {
    /// forager's Monte-Carlo tree search.
    Mcts,
    /// Uniform random walks from the start.
    Random,
    /// Breadth-first search over states, URLs deduplicated as a crawler does.
    Bfs,
    /// Always the highest-prior action, no backtracking.
    Greedy,
    /// All four, side by side on the same sites.
    All,
}

/// Arguments of `forager simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Number of generated sites.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub sites: u32,
    /// Seed of the sites and the searches: the same seed gives the same run.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Strategy to run.
    #[arg(long, value_enum, default_value_t = StrategyChoice::Mcts)]
    pub strategy: StrategyChoice,
    /// Actions each search may execute per site (replays to restore states not counted).
    #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub budget: u32,
    /// Deepest path, in actions.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub max_depth: u32,
    /// Generator parameters as a JSON file (fields of `SiteParams`: pages, links_per_page,
    /// goal_depth, decoys, forms, irreversible, auth_wall_rate, latency_ms,
    /// latency_jitter_ms, nondeterminism, family_size, shortcut_rate); unset fields keep
    /// their defaults.
    #[arg(long, value_name = "FILE")]
    pub site_params: Option<PathBuf>,
    /// Pages per site family (overrides --site-params).
    #[arg(long)]
    pub pages: Option<u32>,
    /// Links on a typical page (overrides --site-params).
    #[arg(long)]
    pub links_per_page: Option<u32>,
    /// Depth of the goal page (overrides --site-params).
    #[arg(long)]
    pub goal_depth: Option<u32>,
    /// Probability an action lands on a transient error page (overrides --site-params).
    #[arg(long)]
    pub nondeterminism: Option<f64>,
    /// Score weight C, exploration (default from protocol's ScoreWeights).
    #[arg(long)]
    pub exploration: Option<f64>,
    /// Score weight w_R, replay bonus.
    #[arg(long)]
    pub replay_weight: Option<f64>,
    /// Score weight λ, risk penalty.
    #[arg(long)]
    pub risk_weight: Option<f64>,
    /// Score weight μ, cost penalty.
    #[arg(long)]
    pub cost_weight: Option<f64>,
    /// Score weight α, session-fragility penalty.
    #[arg(long)]
    pub auth_weight: Option<f64>,
    /// Value new leaves by a random rollout of this many actions instead of the page's
    /// value hint.
    #[arg(long, value_name = "DEPTH")]
    pub rollout: Option<u32>,
    /// Engine knob: children a node may have per visit, `ceil(C_w·(visits+1)^e)`; this sets
    /// C_w (default 2).
    #[arg(long, value_name = "C_W")]
    pub widening: Option<f64>,
    /// Engine knob: the exponent e of progressive widening (default 0.5).
    #[arg(long, value_name = "E")]
    pub widening_exponent: Option<f64>,
    /// Engine knob: scale of a non-success leaf's value hint (default 0.9).
    #[arg(long)]
    pub hint_weight: Option<f64>,
    /// Engine knob: weight of the best backed-up value against the mean in Q (default 0).
    #[arg(long)]
    pub max_backup: Option<f64>,
    /// Engine knob: also try links to already-known URLs before giving a node up (default:
    /// skip them, as a crawler does).
    #[arg(long)]
    pub try_known_targets: bool,
    /// Engine knob: open a fresh child whenever progressive widening allows, instead of first
    /// comparing it (as one visit worth the node's own value) with the children there are.
    #[arg(long)]
    pub no_first_play: bool,
    /// Turn off the replay memory (MCTS learns nothing from earlier sites of a family).
    #[arg(long)]
    pub no_replay_memory: bool,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Sweep the score's weights over a grid (MCTS) instead of one run; needs --out.
    #[arg(long)]
    pub sweep: bool,
    /// Directory for sweep results (sweep.csv, sweep.svg, best.json); created if missing.
    #[arg(long, value_name = "DIR", required_if_eq("sweep", "true"))]
    pub out: Option<PathBuf>,
    /// Threads for a sweep.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub threads: u32,
    /// A smaller grid (3 values of C and w_R, 2 of λ, μ, α) for quick checks.
    #[arg(long, requires = "sweep")]
    pub quick: bool,
}

/// The task, as flags or a file (shared by `explore` and `submit`).
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// A task file (TOML or JSON, the fields of a task: start_url, goal, success, failure,
    /// inputs, budget, risk_ceiling, weights, seed, allowed_origins, resettable, family,
    /// verify = { url, text }, reset_cmd).
    /// Flags given as well override the file.
    #[arg(long, value_name = "FILE")]
    pub task: Option<PathBuf>,
    /// Where to start (http or https).
    #[arg(long)]
    pub url: Option<String>,
    /// What to do, in words; quoted strings in it can be typed into fields.
    #[arg(long)]
    pub goal: Option<String>,
    /// Success when the page URL matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub success_url: Option<String>,
    /// Success when this text is on the page (or in one of its same-origin frames).
    #[arg(long, value_name = "TEXT")]
    pub success_text: Option<String>,
    /// Success when an element matches this CSS selector. `HOST >>> INNER` steps into the open
    /// shadow root of what HOST matches, or into the document of a same-origin frame.
    #[arg(long, value_name = "CSS")]
    pub success_selector: Option<String>,
    /// Success when this JavaScript expression is `true` in the page.
    #[arg(long, value_name = "EXPR")]
    pub success_js: Option<String>,
    /// Success when this JavaScript expression returns a meaningful value (not null, empty,
    /// `{}`, `[]` or a placeholder).
    #[arg(long, value_name = "EXPR")]
    pub extract: Option<String>,
    /// Failure when the page URL matches this regular expression: a dead end the search
    /// does not explore past (an error page). Repeatable; any one is enough.
    #[arg(long = "fail-url", value_name = "REGEX")]
    pub fail_urls: Vec<String>,
    /// Failure when this text is on the page ("Payment declined"). Repeatable.
    #[arg(long = "fail-text", value_name = "TEXT")]
    pub fail_texts: Vec<String>,
    /// Failure when this JavaScript expression is `true` in the page. Repeatable.
    #[arg(long = "fail-js", value_name = "EXPR")]
    pub fail_js: Vec<String>,
    /// A value the agent may type, by name: `--input email=ada@example.org`. Repeatable.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// Actions the search may execute.
    #[arg(long, value_name = "ACTIONS")]
    pub budget: Option<u32>,
    /// Deepest path, in actions.
    #[arg(long, value_name = "D")]
    pub max_depth: Option<u32>,
    /// Highest risk class executed without approval (1 read-only … 7 destructive; default 3).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u8).range(1..=7))]
    pub risk_ceiling: Option<u8>,
    /// Seed of every random choice (and of the pages' Math.random).
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// The task's family: what its memory is kept and recalled under (default the start
    /// URL's origin). Name one to share what was learned between hosts of one application
    /// (staging and production, or a server moved to another port).
    #[arg(long, value_name = "NAME")]
    pub family: Option<String>,
    /// Another origin navigation may reach. Repeatable.
    #[arg(long = "allow-origin", value_name = "URL")]
    pub allow_origins: Vec<String>,
    /// Declare the site resettable (a sandbox): paths with writes may be replayed.
    #[arg(long)]
    pub resettable: bool,
    /// A shell command that restores the site (a staging database snapshot, say), run before
    /// each replay of a path with writes; with it the site counts as resettable and the
    /// verification executes every step again. `forager node` runs it only when started
    /// with --allow-reset-cmd.
    #[arg(long, value_name = "CMD")]
    pub reset_cmd: Option<String>,
    /// A page that shows the task's effect (the list that now holds the new record): on a
    /// site whose writes are not repeated, the verification loads it, read-only, after the
    /// steps before the first write, and requires --verify-text there.
    #[arg(long, value_name = "URL", requires = "verify_text")]
    pub verify_url: Option<String>,
    /// The text --verify-url must show.
    #[arg(long, value_name = "TEXT", requires = "verify_url")]
    pub verify_text: Option<String>,
    /// Wall-clock limit in seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u32>,
    /// JavaScript added to every document before its own scripts.
    #[arg(long, value_name = "FILE")]
    pub init_script: Option<PathBuf>,
    /// A consent (from `forager approve`) for an action above the ceiling: it may then run,
    /// at the place it was approved for. Repeatable. Checked before anything starts
    /// (signature, task, origin, expiry, revocations).
    #[arg(long = "consent", value_name = "FILE")]
    pub consents: Vec<PathBuf>,
    /// A second factor for the capsule's login, should its session need capturing again:
    /// `--totp code=BASE32SECRET` (the RFC 6238 code is computed when the login runs).
    /// Repeatable.
    #[arg(long = "totp", value_name = "NAME=BASE32", requires = "capsule")]
    pub totp: Vec<String>,
    /// A session capsule (`forager capsule capture`) to mount into every browser context of
    /// the run, for its origins only; opened (signature, expiry, revocations, seal) before
    /// anything starts.
    #[arg(long, value_name = "FILE")]
    pub capsule: Option<PathBuf>,
    /// How to open the capsule.
    #[command(flatten)]
    pub capsule_secret: CapsuleSecretArgs,
    /// Your user key: with it, and the login's --input values and --totp secrets, a run whose
    /// capsule no longer logs in captures the session again (the capsule file is replaced)
    /// and retries once; without, it ends session_expired.
    #[arg(long = "key", value_name = "FILE", requires = "capsule")]
    pub user_key: Option<PathBuf>,
    /// The language-model tier.
    #[command(flatten)]
    pub model: ModelArgs,
}

/// The language-model tier: any OpenAI-compatible endpoint (a hosted API, Ollama, vLLM,
/// llama.cpp's server, or `scripts/local-model start` on this machine). Optional: without it
/// the rules and the sentence model decide alone, and no model is ever asked.
#[derive(Debug, Clone, Default, Args)]
pub struct ModelArgs {
    /// The small tier's base URL, up to its version (`http://127.0.0.1:8080/v1`): it ranks
    /// the candidates where the rules are unsure, and judges the goal when no --success-*
    /// is given (then `--goal` alone is a task; the result says `judged_by: model`).
    #[arg(long, value_name = "URL", requires = "model")]
    pub model_url: Option<String>,
    /// The small tier's model name, as the server lists it.
    #[arg(long, value_name = "NAME", requires = "model_url")]
    pub model: Option<String>,
    /// The environment variable holding the endpoints' API key (sent as a bearer token;
    /// never written into a task, a journal or a result). E.g. OPENAI_API_KEY.
    #[arg(long, value_name = "VAR", requires = "model_url")]
    pub model_key_env: Option<String>,
    /// The large tier's base URL (recovery when the search is stuck, confirming a verdict of
    /// success). Default: the small tier does both.
    #[arg(long, value_name = "URL", requires_all = ["planner", "model_url"])]
    pub planner_url: Option<String>,
    /// The large tier's model name.
    #[arg(long, value_name = "NAME", requires = "planner_url")]
    pub planner: Option<String>,
    /// Prices per 1,000 tokens, a TOML file: `[small]` and `[large]` tables with `prompt` and
    /// `completion` (e.g. `[small]\nprompt = 0.00015\ncompletion = 0.0006`). Default: 0.
    #[arg(long, value_name = "FILE", requires = "model_url")]
    pub model_prices: Option<PathBuf>,
    /// Most tokens the model tier may spend on the task (each process counts its own); then
    /// the rules decide alone, and the result says so.
    #[arg(long, value_name = "N", requires = "model_url")]
    pub max_tokens: Option<u64>,
    /// Most money (at --model-prices) the model tier may spend on the task.
    #[arg(long, value_name = "AMOUNT", requires = "model_url")]
    pub max_cost: Option<f64>,
    /// Seconds one model call may take.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 30,
        requires = "model_url"
    )]
    pub model_timeout: u32,
    /// What the model is asked for, comma-separated: `priors` (rank a flat shortlist),
    /// `verdict` (judge pages, for a task without a success predicate: always on there),
    /// `recovery` (when the search is stuck), `value` (how far each new page is from the
    /// goal: a call per page). Default: priors,verdict,recovery.
    #[arg(long, value_name = "LIST", requires = "model_url")]
    pub model_uses: Option<String>,
    /// A JSON Schema file: once the path is reproduced, the model reads the final page and
    /// extracts the goal's answer into that shape (`answer` in result.json, kept only when it
    /// is meaningful: not empty, no placeholder, every required property there).
    #[arg(long, value_name = "FILE", requires = "model_url")]
    pub answer_schema: Option<PathBuf>,
}

/// How a capsule is opened (or sealed): one of a passphrase file, a key file, or the
/// FORAGER_CAPSULE_PASSPHRASE environment variable.
#[derive(Debug, Clone, Default, Args)]
pub struct CapsuleSecretArgs {
    /// A file whose first line is the capsule's passphrase (the key comes from it by
    /// Argon2id). Default: $FORAGER_CAPSULE_PASSPHRASE.
    #[arg(long, value_name = "FILE", conflicts_with = "key_file")]
    pub passphrase_file: Option<PathBuf>,
    /// A capsule key file (`forager capsule keygen`).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
}

/// Where the memory lives and how goals are read, for `forager memory`.
#[derive(Debug, Args)]
pub struct MemoryArgs {
    /// The memory folder (as `explore --memory`): default the per-user data folder's
    /// `memory/` (~/.local/share/forager/memory). A `forager queen`'s is its DATA folder,
    /// whose goals it reads with n-grams: `--memory DATA --embedder ngram`.
    #[arg(long, value_name = "DIR")]
    pub memory: Option<PathBuf>,
    #[command(flatten)]
    pub embedder: EmbedderArgs,
}

/// The `forager memory` commands.
#[derive(Debug, Subcommand)]
pub enum MemoryCommand {
    /// List the remembered workflows: id, site, goal template, steps, how they fared.
    List {
        #[command(flatten)]
        memory: MemoryArgs,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Forget the workflows whose id starts with ID (hex, as `list` shows).
    Forget {
        /// The id or its start.
        id: String,
        #[command(flatten)]
        memory: MemoryArgs,
    },
    /// Write every workflow to a bundle signed with your user key (`forager key --user`).
    Export {
        /// Where.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Your user key.
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        #[command(flatten)]
        memory: MemoryArgs,
    },
    /// Check a bundle (size, signature, version, embedder, every workflow) and keep its
    /// workflows; a bundle that fails any check is refused whole, by name.
    Import {
        /// The bundle.
        file: PathBuf,
        #[command(flatten)]
        memory: MemoryArgs,
    },
}

/// The `forager capsule` commands.
#[derive(Debug, Subcommand)]
pub enum CapsuleCommand {
    /// Write a new random capsule key file (mode 0600), for --key-file.
    Keygen {
        /// Where.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Log in (a searched task) and capture the session into a sealed, signed capsule.
    Capture(CaptureArgs),
    /// Show what a capsule says about itself (origins, expiry, policy, signer, login); with
    /// its secret, also the names and domains of its cookies and storage keys, never values.
    Inspect {
        /// The capsule file.
        #[arg(value_name = "CAPSULE")]
        capsule: PathBuf,
        /// How to open it (optional).
        #[command(flatten)]
        secret: CapsuleSecretArgs,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a capsule: a revocation signed with its key in this machine's store; explore,
    /// submit, replay and every node on this machine then refuse it by name.
    Revoke {
        /// The capsule file.
        #[arg(value_name = "CAPSULE")]
        capsule: PathBuf,
        /// The user key that signed it.
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
    },
    /// Log in again with the capsule's login recipe and the credentials given, and replace
    /// the capsule file with the fresh session (same origins and policy).
    Refresh(RefreshArgs),
}

/// Arguments of `forager capsule capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The login page.
    #[arg(long)]
    pub url: String,
    /// The login, in words.
    #[arg(long, default_value = "Sign in")]
    pub goal: String,
    /// Logged in when the page URL matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub success_url: Option<String>,
    /// Logged in when this text is on the page.
    #[arg(long, value_name = "TEXT")]
    pub success_text: Option<String>,
    /// Logged in when an element matches this CSS selector.
    #[arg(long, value_name = "CSS")]
    pub success_selector: Option<String>,
    /// The credentials, your key, the secret and the validity.
    #[command(flatten)]
    pub login: LoginArgs,
    /// An origin whose session the capsule keeps and is mounted for. Repeatable; default
    /// the login page's origin.
    #[arg(long = "origin", value_name = "URL")]
    pub origins: Vec<String>,
    /// Another origin the login may reach (a single sign-on page). Repeatable.
    #[arg(long = "allow-origin", value_name = "URL")]
    pub allow_origins: Vec<String>,
    /// The highest risk ceiling of a task that mounts it (1 … 7): a session captured for
    /// reading need not buy things.
    #[arg(long, value_name = "K", default_value_t = 4, value_parser = clap::value_parser!(u8).range(1..=7))]
    pub max_risk: u8,
    /// Actions the login search may execute.
    #[arg(long, value_name = "ACTIONS", default_value_t = 60)]
    pub budget: u32,
    /// Wall-clock limit of the login in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u32,
    /// Where to write the capsule (mode 0600; an existing file is not overwritten).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Arguments of `forager capsule refresh`.
#[derive(Debug, Args)]
pub struct RefreshArgs {
    /// The capsule file (replaced atomically by the fresh one).
    #[arg(value_name = "CAPSULE")]
    pub capsule: PathBuf,
    /// The credentials (as at capture), your key, the secret (the capsule's) and the
    /// validity of the fresh capsule.
    #[command(flatten)]
    pub login: LoginArgs,
}

/// What a login for a capsule needs (shared by `capsule capture` and `refresh`).
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// A credential, by the name of its field: `--input username=ada`. Repeatable.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// A second factor: `--totp code=BASE32SECRET` types the RFC 6238 code of the moment.
    /// Repeatable.
    #[arg(long = "totp", value_name = "NAME=BASE32")]
    pub totp: Vec<String>,
    /// Your user key (`forager key --user`), which signs the capsule.
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// How the capsule is sealed.
    #[command(flatten)]
    pub secret: CapsuleSecretArgs,
    /// How long the capsule may be used: 30m, 12h, 7d (at most 90 days).
    #[arg(long, value_name = "DURATION", default_value = "12h")]
    pub valid_for: String,
}

/// Arguments of `forager approve`.
#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The run directory (result.json and events.jsonl of a run that stopped at
    /// approval_required).
    #[arg(value_name = "RUN_DIR")]
    pub run: PathBuf,
    /// Your user key (`forager key --user --out FILE`).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Which of the listed actions to approve (1-based); asked interactively in a terminal.
    #[arg(long, value_name = "N")]
    pub action: Option<usize>,
    /// How long the consent holds: 30m, 24h, 7d (at most 90 days).
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    pub valid_for: String,
    /// Where to write it (default RUN_DIR/consent-N.json).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Arguments of `forager explore`.
#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The task.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Nodes of the embedded cluster (a queen and this many nodes, each with its own
    /// Chromium, over libp2p on 127.0.0.1). A success wins only once a node other than its
    /// finder has reproduced it; with one node, the finder reproduces it from scratch in a
    /// fresh browser context.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub nodes: u32,
    /// Live pages kept per browser context so restoring a state needs no replay (0 turns the
    /// cache off).
    #[arg(long, default_value_t = 6)]
    pub page_cache: usize,
    /// Directory for the artifacts (default: forager-runs/explore-<time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the result document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Keep every finished trajectory (every path the search reached), as the nodes signed
    /// them, in rollouts.json.
    #[arg(long)]
    pub keep_all: bool,
    /// How the search reads pages.
    #[command(flatten)]
    pub embedder: EmbedderArgs,
    /// Where the memory of earlier runs' successes lives (read, and written with this run's):
    /// default the per-user data folder's `memory/` (~/.local/share/forager/memory).
    #[arg(long, value_name = "DIR", conflicts_with = "no_memory")]
    pub memory: Option<PathBuf>,
    /// Neither use nor keep a memory of earlier runs (this run's nodes still share theirs).
    #[arg(long)]
    pub no_memory: bool,
    /// Print the goal's plan and its preconditions (as `forager plan` does) and exit without
    /// a search: 0 every precondition can be met, 1 one cannot.
    #[arg(long)]
    pub dry_run: bool,
}

/// `forager plan`'s flags.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The task (success predicates may be left out).
    #[command(flatten)]
    pub task: TaskArgs,
    /// Open the start page once in Chromium (no action taken) and judge the preconditions
    /// against it too (a page that asks to log in).
    #[arg(long)]
    pub read_start: bool,
    /// Print the plan report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Also write the plan report (JSON) to this file.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The memory folder to look for a workflow of this kind of task in (default: the
    /// per-user data folder's `memory/`).
    #[arg(long, value_name = "DIR", conflicts_with = "no_memory")]
    pub memory: Option<PathBuf>,
    /// Do not look in a memory.
    #[arg(long)]
    pub no_memory: bool,
}

/// Which sentence-embedding model the search reads pages with (shared by `explore`, `demo`
/// and `node`).
#[derive(Debug, Clone, Args)]
pub struct EmbedderArgs {
    /// The sentence-embedding model: a sentence-transformers BERT folder (config.json,
    /// tokenizer.json, model.safetensors), or `ngram` for hashed n-grams only. Default: the
    /// model `scripts/install-model` installs ($FORAGER_MODEL_DIR, else
    /// ~/.local/share/forager/models/all-MiniLM-L6-v2); when it is missing, forager says so
    /// once and reads with n-grams.
    #[arg(long, value_name = "DIR|ngram")]
    pub embedder: Option<String>,
}

/// How a node or a queen joins the cluster network (shared by `forager node` and `queen`).
#[derive(Debug, Args)]
pub struct PeerNetworkArgs {
    /// Address to listen on. Repeatable.
    #[arg(
        long = "listen",
        value_name = "MULTIADDR",
        default_value = "/ip4/127.0.0.1/tcp/0"
    )]
    pub listen: Vec<String>,
    /// A peer to dial at start (the queen, other nodes), with its /p2p/ id. Repeatable.
    #[arg(long = "bootstrap", value_name = "MULTIADDR")]
    pub bootstrap: Vec<String>,
    /// The cluster key file (swarm.key format or 64 hex digits); default DATA/cluster.key,
    /// created if missing.
    #[arg(long, value_name = "FILE")]
    pub cluster_key: Option<PathBuf>,
    /// Only these peers may connect (peer ids). Repeatable; none means any peer with the
    /// cluster key.
    #[arg(long = "allow", value_name = "PEER_ID")]
    pub allow: Vec<String>,
    /// Discover peers on the local network by mDNS (multicast on every non-loopback
    /// interface) and dial them; they still need the cluster key. Off unless given.
    #[arg(long)]
    pub mdns: bool,
}

/// Arguments of `forager node`.
#[derive(Debug, Args)]
pub struct NodeArgs {
    /// Data directory: the node's key, its replica of the trajectory index.
    #[arg(long, value_name = "DIR", default_value = "forager-node")]
    pub data: PathBuf,
    /// How it joins the cluster network.
    #[command(flatten)]
    pub network: PeerNetworkArgs,
    /// Search a simulated site (batch seed SEED) instead of driving Chromium.
    #[arg(long, value_name = "SEED")]
    pub sim: Option<u64>,
    /// Which site of the simulated batch.
    #[arg(long, default_value_t = 0)]
    pub sim_site: u64,
    /// Simulated actions take their simulated latency in real time.
    #[arg(long)]
    pub sim_latency: bool,
    /// Every simulated action takes MS milliseconds of real time (instead of the site's
    /// latency): slow nodes for fault drills and cluster benchmarks.
    #[arg(long, value_name = "MS", requires = "sim")]
    pub sim_pace: Option<u64>,
    /// Branch searches at once.
    #[arg(long, default_value_t = 2)]
    pub concurrency: usize,
    /// Failed rollouts the replica keeps (the newest; in memory and in DATA/index, which is
    /// compacted as they are dropped). Successes, the memory searches recall, are all kept.
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub keep_failures: usize,
    /// Run the reset commands of tasks (`reset_cmd`, a shell command from whoever submits to
    /// the queen) on this machine. Off: such a task's replays of writes fail with a named
    /// reason.
    #[arg(long)]
    pub allow_reset_cmd: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics (actions, restores, gossip accepted
    /// and rejected by reason, replica size, browser restarts). Port 0 picks one; the
    /// address is printed.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
    /// How the search reads pages.
    #[command(flatten)]
    pub embedder: EmbedderArgs,
}

/// Arguments of `forager queen`.
#[derive(Debug, Args)]
pub struct QueenArgs {
    /// Data directory: the queen's key, task journals and results.
    #[arg(long, value_name = "DIR", default_value = "forager-queen")]
    pub data: PathBuf,
    /// How it joins the cluster network.
    #[command(flatten)]
    pub network: PeerNetworkArgs,
    /// Actions per assignment.
    #[arg(long, default_value_t = 20)]
    pub chunk: u32,
    /// Seconds a node may take for one assignment before its branch is reassigned.
    #[arg(long, default_value_t = 180)]
    pub assignment_deadline: u64,
    /// Keep every finished trajectory of every task, as the nodes signed them, in
    /// DATA/tasks/<id>/rollouts.json.
    #[arg(long)]
    pub keep_all: bool,
    /// Neither keep verified passes as workflows (DATA/workflows) nor try them first for
    /// later tasks of the same kind.
    #[arg(long)]
    pub no_memory: bool,
    /// Ended tasks kept in memory (the newest) for `forager status`; older ones are read
    /// back from DATA/tasks when asked for, so memory does not grow with every task run.
    #[arg(long, value_name = "N", default_value_t = forager_queen::config::DEFAULT_ENDED_IN_MEMORY)]
    pub ended_in_memory: usize,
    /// Serve Prometheus metrics at http://ADDR/metrics (tasks by state, nodes, assignments
    /// and their latency, reassignments, actions, restores, reproductions). Port 0 picks
    /// one; the address is printed.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<std::net::SocketAddr>,
}

/// How a client reaches a queen.
#[derive(Debug, Args)]
pub struct QueenAddressArgs {
    /// The queen's address, with its /p2p/ id (`forager queen` prints it).
    #[arg(long, value_name = "MULTIADDR")]
    pub queen: String,
    /// The cluster key file.
    #[arg(long, value_name = "FILE")]
    pub cluster_key: PathBuf,
}

/// Arguments of `forager status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The queen.
    #[command(flatten)]
    pub queen: QueenAddressArgs,
    /// Print the overview as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `forager cancel`.
#[derive(Debug, Args)]
pub struct TaskOnQueenArgs {
    /// The queen.
    #[command(flatten)]
    pub queen: QueenAddressArgs,
    /// The task id (32 hex digits, as `submit` and `status` print it).
    #[arg(value_name = "TASK")]
    pub task: String,
}

/// Arguments of `forager result`.
#[derive(Debug, Args)]
pub struct ResultArgs {
    /// The queen and the task.
    #[command(flatten)]
    pub target: TaskOnQueenArgs,
    /// Where the task's folder goes (default: forager-runs/result-<task>). Files already there
    /// are replaced.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the result document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `forager submit`.
#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The queen.
    #[command(flatten)]
    pub queen: QueenAddressArgs,
    /// The task.
    #[command(flatten)]
    pub task: TaskArgs,
    /// Directory for result.json (default: forager-runs/submit-<time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the result document on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `forager replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The workflow (workflow.json of a passing run).
    #[arg(value_name = "WORKFLOW")]
    pub workflow: PathBuf,
    /// A value for one of the workflow's parameters: `--input card=12345678`. Repeatable;
    /// every parameter the workflow lists must be given.
    #[arg(long = "input", value_name = "NAME=VALUE")]
    pub inputs: Vec<String>,
    /// Directory for result.json, report.html and screenshots (default:
    /// forager-runs/replay-<time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the result document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Take a screenshot after every step (step-NN.jpg, shown in the report); without it,
    /// only where a step fails.
    #[arg(long)]
    pub screenshots: bool,
    /// JavaScript added to every document before its own scripts (as given to explore).
    #[arg(long, value_name = "FILE")]
    pub init_script: Option<PathBuf>,
    /// Wall-clock limit in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
    /// A consent (from `forager approve`) for a step above the workflow's risk ceiling.
    /// Repeatable. Without one, such a step is refused before a browser starts.
    #[arg(long = "consent", value_name = "FILE")]
    pub consents: Vec<PathBuf>,
    /// A session capsule to mount into the replay's browser context, for its origins only.
    #[arg(long, value_name = "FILE")]
    pub capsule: Option<PathBuf>,
    /// How to open the capsule.
    #[command(flatten)]
    pub capsule_secret: CapsuleSecretArgs,
}

/// Arguments of `forager demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Directory for the artifacts (default: forager-runs/demo-<time>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the result document on stdout.
    #[arg(long)]
    pub json: bool,
    /// Seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Keep serving the demo site after the run (until Ctrl-C), to look at it in a browser.
    #[arg(long)]
    pub serve: bool,
    /// How the search reads pages.
    #[command(flatten)]
    pub embedder: EmbedderArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_global_runtime_threads_flag_does_not_shadow_a_command_flag() {
        let cli = Cli::try_parse_from(["forager", "simulate", "--threads", "3"])
            .expect("simulate --threads parses");
        assert!(cli.runtime_threads.is_none());
        match cli.command {
            Command::Simulate(args) => assert_eq!(args.threads, 3),
            other => panic!("parsed as {other:?}"),
        }
        let cli = Cli::try_parse_from(["forager", "--runtime-threads", "1", "verify", "some-dir"])
            .expect("--runtime-threads parses");
        assert_eq!(
            cli.runtime_threads.map(std::num::NonZeroUsize::get),
            Some(1)
        );
        assert!(Cli::try_parse_from(["forager", "--runtime-threads", "0", "verify", "d"]).is_err());
    }
}
