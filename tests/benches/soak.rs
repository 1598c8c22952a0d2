//! The soak, a bench program: one queen and four nodes, each in a network namespace of its
//! own (`forager_tests::netns`), driven by waves of concurrent `forager submit`s from a fifth
//! host: first tasks on a simulated site (`forager node --sim`), then, with the same queen and
//! the nodes restarted as Chromium nodes, tasks on the documentation fixture site (served by
//! this program inside the client's namespace).
//!
//! It reports tasks lost (submitted without a result), duplicate results (a task whose journal
//! ends more than once), Chromium processes left after the nodes stop, the resident memory of
//! every forager process (and of each node's browsers) at the start, the middle and the end of
//! each phase, and the disk per task (the queen's journals and artifacts, the nodes' replicas).
//!
//!     cargo bench -p forager-tests --bench soak -- [--sim-tasks 200] [--web-tasks 30] \
//!         [--wave 20] [--web-wave 5] [--out DIR]
//!
//! Writes `soak.md` (the tables) and `soak.json` to `--out` (default `target/soak`); exits 1
//! when a task was lost or reported twice or a browser was left. Where the machine refuses
//! network namespaces it says so and exits 0.

use forager_protocol::result::{RunResult, Status};
use forager_simulations::cluster::{SimFactory, sim_task};
use forager_simulations::site::SiteParams;
use forager_tests::bench::arg;
use forager_tests::netns::Lab;
use forager_tests::{StartedPeer, finish, forager_binary, start_peer, terminate};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const QUEEN: usize = 0;
const NODES: [usize; 4] = [1, 2, 3, 4];
const CLIENT: usize = 5;
const PORT: u16 = 4001;
const SEED: u64 = 11;
const LIMIT: Duration = Duration::from_secs(900);

use forager_tests::sites::{CHAPTERS, PAGES, SECTIONS};

struct Soak {
    lab: Lab,
    dir: PathBuf,
    key: PathBuf,
    binary: PathBuf,
}

/// One sample of memory: who, and kB resident.
#[derive(Debug, Clone, serde::Serialize)]
struct Memory {
    moment: String,
    process: String,
    rss_kb: u64,
    browsers_rss_kb: u64,
    /// The browsers' proportional set size: memory they share counted once in all.
    browsers_pss_kb: u64,
}

#[derive(Debug, Default, serde::Serialize)]
struct Phase {
    name: String,
    submitted: usize,
    passed: usize,
    failing: usize,
    lost: usize,
    duplicates: usize,
    wall_secs: f64,
    memory: Vec<Memory>,
}

/// A `Name:   1234 kB` figure of a file under `/proc/<pid>/`, in kB (0 when unreadable).
fn proc_kb(pid: u32, file: &str, name: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/{file}"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    proc_kb(pid, "status", "VmRSS:")
}

/// A process's proportional set size (shared pages divided among their users), in kB.
fn pss_kb(pid: u32) -> u64 {
    proc_kb(pid, "smaps_rollup", "Pss:")
}

fn folder_bytes(path: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => folder_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

impl Soak {
    fn data(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    async fn queen(&self) -> StartedPeer {
        let command = self.lab.peer_command(
            QUEEN,
            &self.binary,
            "queen",
            &self.data("queen"),
            &self.key,
            PORT,
        );
        start_peer(command, "queen").await
    }

    async fn node(&self, host: usize, queen: &StartedPeer, sim: bool) -> StartedPeer {
        let data = self.data(&format!("node{host}"));
        let mut command = self
            .lab
            .peer_command(host, &self.binary, "node", &data, &self.key, PORT);
        command.arg("--bootstrap").arg(&queen.address);
        if sim {
            command.args(["--sim", &SEED.to_string(), "--sim-latency"]);
        } else {
            command.args(["--embedder", "ngram"]);
        }
        start_peer(command, "node").await
    }

    /// Memory of the queen, the nodes and the nodes' browsers now.
    fn memory(&self, moment: &str, queen: &StartedPeer, nodes: &[StartedPeer]) -> Vec<Memory> {
        let mut out = vec![Memory {
            moment: moment.into(),
            process: "queen".into(),
            rss_kb: queen.child.id().map_or(0, rss_kb),
            browsers_rss_kb: 0,
            browsers_pss_kb: 0,
        }];
        for (i, node) in nodes.iter().enumerate() {
            let profiles = self
                .data(&format!("node{}", NODES[i]))
                .join("browsers")
                .to_string_lossy()
                .into_owned();
            let pids = forager_tests::processes_with(&profiles);
            let browsers = pids.iter().map(|(pid, _)| rss_kb(*pid)).sum();
            let browsers_pss = pids.iter().map(|(pid, _)| pss_kb(*pid)).sum();
            out.push(Memory {
                moment: moment.into(),
                process: format!("node{}", NODES[i]),
                rss_kb: node.child.id().map_or(0, rss_kb),
                browsers_rss_kb: browsers,
                browsers_pss_kb: browsers_pss,
            });
        }
        out
    }

    /// Runs `tasks` (task files) in waves of `wave` concurrent submissions; returns their
    /// results (None: lost) and samples memory at the start, middle and end.
    async fn run(
        &self,
        name: &str,
        tasks: Vec<PathBuf>,
        wave: usize,
        queen: &StartedPeer,
        nodes: &[StartedPeer],
    ) -> Phase {
        let started = Instant::now();
        let mut phase = Phase {
            name: name.into(),
            submitted: tasks.len(),
            memory: self.memory("start", queen, nodes),
            ..Phase::default()
        };
        let middle = tasks.len() / wave.max(1) / 2;
        for (w, chunk) in tasks.chunks(wave.max(1)).enumerate() {
            if w == middle {
                phase.memory.extend(self.memory("middle", queen, nodes));
            }
            let mut running = Vec::new();
            for (i, task) in chunk.iter().enumerate() {
                let mut command = self.lab.command(CLIENT, &self.binary);
                command
                    .arg("submit")
                    .arg("--queen")
                    .arg(&queen.address)
                    .arg("--cluster-key")
                    .arg(&self.key)
                    .arg("--task")
                    .arg(task)
                    .arg("--out")
                    .arg(self.data(&format!("out-{name}-{w}-{i}")))
                    .arg("--json");
                running.push(tokio::spawn(finish(command, LIMIT)));
            }
            for handle in running {
                let result: Option<RunResult> = handle
                    .await
                    .ok()
                    .and_then(|(_, stdout, _)| serde_json::from_slice(&stdout).ok());
                match result.map(|r| r.status) {
                    Some(Status::Pass) => phase.passed += 1,
                    Some(Status::Failing) => phase.failing += 1,
                    None => phase.lost += 1,
                }
            }
            eprintln!(
                "{name}: wave {} done, {} passed, {} failing, {} lost, {:.0} s",
                w + 1,
                phase.passed,
                phase.failing,
                phase.lost,
                started.elapsed().as_secs_f64()
            );
        }
        phase.memory.extend(self.memory("end", queen, nodes));
        phase.wall_secs = started.elapsed().as_secs_f64();
        phase
    }

    /// Tasks whose journal on the queen ends more than once.
    fn duplicates(&self) -> (usize, usize) {
        let mut tasks = 0;
        let mut duplicates = 0;
        if let Ok(entries) = std::fs::read_dir(self.data("queen").join("tasks")) {
            for entry in entries.flatten() {
                tasks += 1;
                let journal =
                    std::fs::read_to_string(entry.path().join("events.jsonl")).unwrap_or_default();
                let ends = journal
                    .lines()
                    .filter(|l| l.contains("\"event\":\"finished\""))
                    .count();
                if ends > 1 {
                    duplicates += 1;
                }
            }
        }
        (tasks, duplicates)
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let count =
        |name: &str, default: usize| arg(name).and_then(|v| v.parse().ok()).unwrap_or(default);
    let sim_tasks = count("--sim-tasks", 200);
    let web_tasks = count("--web-tasks", 30).min(SECTIONS.len() * CHAPTERS.len() * PAGES.len());
    let wave = count("--wave", 20);
    let web_wave = count("--web-wave", 5);
    let out = arg("--out").map_or_else(|| PathBuf::from("target/soak"), PathBuf::from);
    let lab = match Lab::create(6) {
        Ok(lab) => lab,
        Err(why) => {
            eprintln!("soak: skipped, this machine cannot make network namespaces: {why}");
            return;
        }
    };
    let work = tempfile::tempdir().expect("a temp dir");
    let binary = tokio::task::spawn_blocking(forager_binary)
        .await
        .expect("build");
    let soak = Soak {
        lab,
        dir: work.path().to_path_buf(),
        key: work.path().join("cluster.key"),
        binary,
    };
    std::fs::write(&soak.key, forager_node::net::format_cluster_key(&[5u8; 32])).expect("key");

    // Phase 1: a simulated site, tasks differing by budget.
    let site = SimFactory::new(&SiteParams::default(), SEED, 0, false).expect("site");
    let sim_files: Vec<PathBuf> = (0..sim_tasks)
        .map(|i| {
            let task = sim_task(site.site(), 300 + i as u32);
            let path = soak.data(&format!("sim-{i}.json"));
            std::fs::write(&path, serde_json::to_vec(&task).expect("json")).expect("task");
            path
        })
        .collect();
    let mut queen = soak.queen().await;
    let mut nodes = Vec::new();
    for host in NODES {
        nodes.push(soak.node(host, &queen, true).await);
    }
    let sim = soak.run("simulated", sim_files, wave, &queen, &nodes).await;
    for node in &mut nodes {
        terminate(node).await;
    }

    // Phase 2: the documentation site in Chromium, served inside the client's namespace.
    let listener = soak
        .lab
        .listen_on(CLIENT, 0)
        .expect("a listener in the client's host");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let listener = tokio::net::TcpListener::from_std(listener).expect("tokio listener");
    let router = forager_tests::sites::docs().with_state(std::sync::Arc::new(
        forager_tests::sites::Counters::default(),
    ));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    let mut web_files = Vec::new();
    'combos: for section in SECTIONS {
        for chapter in CHAPTERS {
            for page in PAGES {
                if web_files.len() == web_tasks {
                    break 'combos;
                }
                let title = forager_tests::sites::docs_title(section, chapter, page);
                let task = serde_json::json!({
                    "start_url": format!("{base}/docs"),
                    "goal": format!("Find the page \"{title}\""),
                    "success": [{"url_matches": format!("/docs/{section}/{chapter}/{page}$")}],
                });
                let path = soak.data(&format!("web-{}.json", web_files.len()));
                std::fs::write(&path, task.to_string()).expect("task");
                web_files.push(path);
            }
        }
    }
    let mut nodes = Vec::new();
    for host in NODES {
        nodes.push(soak.node(host, &queen, false).await);
    }
    let web = soak
        .run("chromium", web_files, web_wave, &queen, &nodes)
        .await;
    for node in &mut nodes {
        terminate(node).await;
    }
    server.abort();
    let left: Vec<(u32, String)> = NODES
        .iter()
        .flat_map(|host| {
            let profiles = soak.data(&format!("node{host}")).join("browsers");
            forager_tests::processes_with(&profiles.to_string_lossy())
        })
        .collect();
    terminate(&mut queen).await;

    let (tasks, duplicates) = soak.duplicates();
    let queen_bytes = folder_bytes(&soak.data("queen").join("tasks"));
    let replica_bytes: Vec<u64> = NODES
        .iter()
        .map(|host| folder_bytes(&soak.data(&format!("node{host}")).join("index")))
        .collect();
    let mut phases = vec![sim, web];
    // Duplicates are counted over the queen's journals, which both phases share.
    phases[0].duplicates = duplicates;

    let mut md = String::new();
    let _ = writeln!(md, "| phase | submitted | passed | failing | lost | wall |");
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    for p in &phases {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.0} s |",
            p.name, p.submitted, p.passed, p.failing, p.lost, p.wall_secs
        );
    }
    let _ = writeln!(
        md,
        "\nTasks on the queen: {tasks}; reported more than once: {duplicates}; Chromium \
         processes left after the nodes stopped: {}.\n",
        left.len()
    );
    let _ = writeln!(
        md,
        "| phase | moment | process | RSS | its browsers (RSS sum) | its browsers (PSS) |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|");
    for p in &phases {
        for m in &p.memory {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {:.1} MB | {:.1} MB | {:.1} MB |",
                p.name,
                m.moment,
                m.process,
                m.rss_kb as f64 / 1024.0,
                m.browsers_rss_kb as f64 / 1024.0,
                m.browsers_pss_kb as f64 / 1024.0
            );
        }
    }
    let _ = writeln!(
        md,
        "\nDisk: the queen's task folders {:.1} MB ({:.1} kB per task); the nodes' replicas {} \
         (kB each).",
        queen_bytes as f64 / 1e6,
        queen_bytes as f64 / 1e3 / tasks.max(1) as f64,
        replica_bytes
            .iter()
            .map(|b| format!("{:.0}", *b as f64 / 1e3))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!("{md}");
    std::fs::create_dir_all(&out).expect("out");
    std::fs::write(out.join("soak.md"), &md).expect("soak.md");
    std::fs::write(
        out.join("soak.json"),
        serde_json::to_vec_pretty(&serde_json::json!({
            "phases": phases,
            "tasks": tasks,
            "duplicates": duplicates,
            "chromium_left": left.len(),
            "queen_task_bytes": queen_bytes,
            "replica_bytes": replica_bytes,
        }))
        .expect("json"),
    )
    .expect("soak.json");
    let lost: usize = phases.iter().map(|p| p.lost).sum();
    if lost > 0 || duplicates > 0 || !left.is_empty() {
        eprintln!(
            "soak: {lost} lost, {duplicates} reported twice, {} browsers left",
            left.len()
        );
        std::process::exit(1);
    }
}
