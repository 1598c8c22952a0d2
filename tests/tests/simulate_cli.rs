//! `forager simulate` end to end: the real binary, its JSON, its files and its exit codes; and
//! the Kubernetes manifests (`deploy/kubernetes/`) against what the binary's help says.

use forager_tests::{forager_binary, run_forager};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(300);

#[test]
fn json_summary_has_the_promised_fields() {
    let out = run_forager(
        &[
            "simulate",
            "--sites",
            "12",
            "--seed",
            "7",
            "--strategy",
            "mcts",
            "--budget",
            "500",
            "--json",
        ],
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    for field in [
        "success_rate",
        "median_actions",
        "median_optimal_actions",
        "unsafe_actions",
        "iterations_per_sec",
    ] {
        assert!(summary.get(field).is_some(), "missing {field}: {summary}");
    }
    assert_eq!(summary["unsafe_actions"], 0);
    assert_eq!(summary["sites"], 12);
    assert!(summary["success_rate"].as_f64().is_some_and(|r| r > 0.5));
}

#[test]
fn all_strategies_side_by_side() {
    let out = run_forager(
        &["simulate", "--sites", "6", "--strategy", "all", "--json"],
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = doc["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["strategy"].as_str())
        .collect();
    assert_eq!(names, ["mcts", "random", "bfs", "greedy"]);
}

#[test]
fn a_quick_sweep_writes_csv_svg_and_the_best_weights() {
    let dir = std::env::temp_dir().join(format!("forager-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = run_forager(
        &[
            "simulate",
            "--sweep",
            "--quick",
            "--sites",
            "3",
            "--out",
            dir.to_str().expect("utf-8 temp dir"),
        ],
        LIMIT,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).expect("csv written");
    // Header plus one row per grid point (3·3·2·2·2 = 72).
    assert_eq!(csv.lines().count(), 73);
    let svg = std::fs::read_to_string(dir.join("sweep.svg")).expect("svg written");
    assert!(svg.starts_with("<svg") && svg.contains("success rate vs C"));
    let best: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("best.json")).expect("best"))
            .expect("JSON");
    assert!(best["best"]["weights"]["exploration"].is_number());
    assert!(
        best["command"]
            .as_str()
            .is_some_and(|c| c.contains("--sweep"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_exits_2_with_a_named_error() {
    let cases: &[(&[&str], &str)] = &[
        (&["simulate", "--nondeterminism", "1.5"], "nondeterminism"),
        (&["simulate", "--pages", "1"], "pages"),
        (&["simulate", "--exploration=-1"], "exploration"),
        (&["simulate", "--sites", "0"], "--sites"),
        (&["simulate", "--strategy", "dfs"], "--strategy"),
        (&["simulate", "--sweep"], "--out"),
        (
            &["simulate", "--site-params", "/nonexistent/params.json"],
            "/nonexistent/params.json",
        ),
    ];
    for (args, named) in cases {
        let out = run_forager(args, LIMIT);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(named),
            "{args:?} should name {named}: {stderr}"
        );
    }
}

#[test]
fn help_teaches() {
    let out = run_forager(&["simulate", "--help"], LIMIT);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--sweep",
        "--strategy",
        "forager simulate --sites 200",
        "bfs",
    ] {
        assert!(help.contains(needle), "help lacks {needle}");
    }
}

/// The Kubernetes manifests (`deploy/kubernetes/`), read as kubectl would (a YAML subset the
/// test parses itself, refusing anything outside it), hold only what the binary has: every
/// container's subcommand and flags are in `forager --help` and the subcommand's help (with a
/// value where the help shows one, one of its possible values where it lists them); every
/// port a container, probe, annotation or Service names is one a `--listen` or `--metrics`
/// flag binds, off loopback (the help's default, which no other pod reaches); the queen's
/// `--data` is its PersistentVolumeClaim; every Secret key a pod reads is in secret.yaml.
/// Then the cluster runs as the manifests say, each pod's volumes as folders and the kubelet's
/// variables set as it sets them: the Secret made as docs/deploy.md makes it, the queen (whose
/// peer id is the Secret's), its metrics holding the gauge the autoscaler names, and a node
/// (on a simulated site, `--sim`, instead of Chromium) that joins through the `forager-queen`
/// Service's variables and leaves on SIGTERM within its grace period.
#[test]
fn the_kubernetes_manifests_run_forager_as_its_help_describes() {
    let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let manifests = read_manifests(&deploy.join("kubernetes"));
    let of_kind = |kind: &str| -> Vec<&Value> {
        manifests
            .iter()
            .filter(|(_, m)| m["kind"] == kind)
            .map(|(_, m)| m)
            .collect()
    };

    // `kubectl apply -k` applies every manifest but secret.yaml, whose placeholders would
    // replace the real keys.
    let secret = single(&of_kind("Secret"), "Secret");
    let secret_name = text(&secret["metadata"]["name"]);
    let secret_file = manifests
        .iter()
        .find(|(_, m)| m["kind"] == "Secret")
        .map(|(f, _)| f.clone())
        .expect("a Secret");
    let kustomization = single(&of_kind("Kustomization"), "Kustomization");
    let listed: BTreeSet<String> = strings(&kustomization["resources"]).into_iter().collect();
    let expected: BTreeSet<String> = manifests
        .iter()
        .map(|(f, _)| f.clone())
        .filter(|f| f != "kustomization.yaml" && *f != secret_file)
        .collect();
    assert_eq!(listed, expected, "kustomization.yaml's resources");
    let secret_keys: BTreeSet<String> = ["stringData", "data"]
        .iter()
        .filter_map(|field| secret[*field].as_object())
        .flat_map(|data| data.keys().cloned())
        .collect();

    // The binary the image installs (deploy/Containerfile) is what every container runs.
    let containerfile =
        std::fs::read_to_string(deploy.join("Containerfile")).expect("deploy/Containerfile");
    let installed = containerfile
        .lines()
        .filter(|l| l.starts_with("COPY --from=build"))
        .filter_map(|l| l.split_whitespace().last())
        .find(|path| path.ends_with("/forager"))
        .expect("the Containerfile installs forager")
        .to_owned();
    let global = Help::of(&["--help"]);

    let services = of_kind("Service");
    let mut pods = Vec::new();
    for workload in of_kind("StatefulSet")
        .into_iter()
        .chain(of_kind("Deployment"))
    {
        let pod = Pod::of(workload, &global, &installed);
        for container in &pod.containers {
            check_container(container, &pod, &secret_name, &secret_keys);
        }
        pods.push(pod);
    }
    let pod_running = |subcommand: &str| -> &Pod {
        let found: Vec<&Pod> = pods
            .iter()
            .filter(|p| p.containers.iter().any(|c| c.subcommand == subcommand))
            .collect();
        assert_eq!(found.len(), 1, "one workload runs `forager {subcommand}`");
        found[0]
    };
    let queen = pod_running("queen");
    let node = pod_running("node");

    // The queen: one StatefulSet pod, its data folder (the journals) on its claim, governed
    // by a headless Service.
    assert_eq!(queen.kind, "StatefulSet");
    assert_eq!(queen.workload["spec"]["replicas"], 1, "one queen");
    let data = queen.containers[0]
        .value_of("--data")
        .expect("the queen's --data");
    let claim = queen.containers[0].mounts.get(data);
    assert!(
        claim.is_some_and(|volume| queen.claims.contains(volume)),
        "the queen's --data {data} is the mount of a volumeClaimTemplate"
    );
    let governing = text(&queen.workload["spec"]["serviceName"]);
    let headless = services
        .iter()
        .find(|s| s["metadata"]["name"] == governing.as_str())
        .unwrap_or_else(|| panic!("the queen's serviceName {governing} is a Service"));
    assert_eq!(
        headless["spec"]["clusterIP"], "None",
        "{governing} is headless"
    );

    // Every Service selects one pod, on ports its containers declare.
    let mut service_ports: BTreeMap<String, Vec<(String, u16)>> = BTreeMap::new();
    for service in &services {
        let name = text(&service["metadata"]["name"]);
        let selector = service["spec"]["selector"].as_object().expect("a selector");
        let selected: Vec<&Pod> = pods
            .iter()
            .filter(|p| selector.iter().all(|(k, v)| p.labels.get(k) == Some(v)))
            .collect();
        assert_eq!(selected.len(), 1, "Service {name} selects one workload");
        for port in service["spec"]["ports"].as_array().expect("ports") {
            let target = selected[0].containers[0].resolve_port(&port["targetPort"]);
            if service["spec"]["clusterIP"] != "None" {
                let port_name = text(&port["name"]);
                service_ports
                    .entry(name.clone())
                    .or_default()
                    .push((port_name, target));
            }
        }
    }

    // The nodes: a Deployment the autoscaler sizes, reading the queen's address from the
    // variables the kubelet sets for a Service (so service links stay on).
    assert_eq!(node.kind, "Deployment");
    assert!(
        node.workload["spec"].get("replicas").is_none(),
        "the autoscaler owns the nodes' count"
    );
    assert_ne!(node.spec["enableServiceLinks"], false);
    let autoscaler = single(
        &of_kind("HorizontalPodAutoscaler"),
        "HorizontalPodAutoscaler",
    );
    let target = &autoscaler["spec"]["scaleTargetRef"];
    assert_eq!(target["kind"], "Deployment");
    assert_eq!(target["name"], node.workload["metadata"]["name"]);
    assert!(
        autoscaler["spec"]["minReplicas"]
            .as_u64()
            .is_some_and(|n| n >= 2),
        "a success wins only when a second node reproduces it: at least two nodes"
    );
    let metrics: Vec<(String, BTreeMap<String, String>)> = autoscaler["spec"]["metrics"]
        .as_array()
        .expect("the autoscaler's metrics")
        .iter()
        .map(|m| {
            let source = &m[text(&m["type"]).to_lowercase()]["metric"];
            let labels = source["selector"]["matchLabels"]
                .as_object()
                .map(|l| l.iter().map(|(k, v)| (k.clone(), text(v))).collect())
                .unwrap_or_default();
            (text(&source["name"]), labels)
        })
        .collect();
    assert!(!metrics.is_empty());

    // The cluster, as the manifests run it. First the Secret, made as docs/deploy.md says.
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let keys = tmp.path().join("keys");
    let key_file = keys.join("cluster.key");
    std::fs::create_dir_all(&keys).expect("a folder for the keys");
    let made = run_forager(&["key", "--out", &path_text(&key_file)], LIMIT);
    assert!(
        made.status.success(),
        "forager key: {}",
        String::from_utf8_lossy(&made.stderr)
    );
    let mut first = Peer::start(
        Command::new(forager_binary())
            .args(["queen", "--data"])
            .arg(keys.join("queen-identity"))
            .arg("--cluster-key")
            .arg(&key_file),
        "queen",
        &tmp.path().join("identity.log"),
    );
    assert!(first.stop(LIMIT).success(), "{}", first.log());
    let values: BTreeMap<String, Vec<u8>> = [
        (
            "cluster.key",
            std::fs::read(&key_file).expect("the cluster key"),
        ),
        (
            "queen.key",
            std::fs::read(keys.join("queen-identity/node.key")).expect("the queen's identity"),
        ),
        ("queen-peer-id", first.id.clone().into_bytes()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(
        values.keys().cloned().collect::<BTreeSet<_>>(),
        secret_keys,
        "secret.yaml's keys are what docs/deploy.md puts in the Secret"
    );

    // The queen, with the identity the Secret gives it.
    let (argv, env) = queen.prepare(&tmp.path().join("queen"), &values, &BTreeMap::new());
    let mut queen_peer = Peer::start(
        Command::new(forager_binary()).args(&argv[1..]).envs(env),
        "queen",
        &tmp.path().join("queen.log"),
    );
    assert_eq!(
        queen_peer.id, first.id,
        "the queen runs as the identity in the Secret"
    );
    let metrics_url = queen_peer
        .metrics
        .clone()
        .expect("the queen serves --metrics");
    let bound: BTreeMap<u16, u16> = [
        (
            queen.containers[0].listen_port("--listen"),
            port_of(&queen_peer.address),
        ),
        (
            queen.containers[0].listen_port("--metrics"),
            port_of(&metrics_url),
        ),
    ]
    .into_iter()
    .collect();
    // The kubelet's variables for each Service with a cluster IP (here the queen's loopback).
    let mut kubelet = BTreeMap::new();
    for (service, ports) in &service_ports {
        let prefix = service.to_uppercase().replace('-', "_");
        kubelet.insert(format!("{prefix}_SERVICE_HOST"), "127.0.0.1".to_owned());
        for (i, (name, target)) in ports.iter().enumerate() {
            let actual = bound[target].to_string();
            if i == 0 {
                kubelet.insert(format!("{prefix}_SERVICE_PORT"), actual.clone());
            }
            let name = name.to_uppercase().replace('-', "_");
            kubelet.insert(format!("{prefix}_SERVICE_PORT_{name}"), actual);
        }
    }

    // What the autoscaler scales on is a gauge the queen exports, with those labels.
    let exported = http_get(&metrics_url);
    for (name, labels) in &metrics {
        assert!(
            exported
                .lines()
                .any(|l| l == format!("# TYPE {name} gauge")),
            "the queen exports {name} as a gauge:\n{exported}"
        );
        assert!(
            samples(&exported)
                .iter()
                .any(|(n, l, _)| n == name && labels.iter().all(|(k, v)| l.get(k) == Some(v))),
            "the queen exports {name}{labels:?}:\n{exported}"
        );
    }
    let nodes = || {
        samples(&http_get(&metrics_url))
            .into_iter()
            .find(|(n, _, _)| n == "forager_queen_nodes")
            .map(|(_, _, v)| v)
    };
    assert_eq!(nodes(), Some(0.0));

    // A node joins through the Service's variables (simulated, so no Chromium)...
    let (mut argv, env) = node.prepare(&tmp.path().join("node"), &values, &kubelet);
    assert!(Help::of(&["node", "--help"]).flags.contains_key("--sim"));
    argv.extend(["--sim".to_owned(), "1".to_owned()]);
    let mut node_peer = Peer::start(
        Command::new(forager_binary()).args(&argv[1..]).envs(env),
        "node",
        &tmp.path().join("node.log"),
    );
    assert!(
        wait_until(Duration::from_secs(30), || nodes() == Some(1.0)),
        "the node did not join the queen: {:?}\n{}\n{}",
        argv,
        node_peer.log(),
        queen_peer.log()
    );
    // ...and leaves as the kubelet stops a pod: SIGTERM, then the grace period.
    let status = node_peer.stop(node.grace);
    assert!(status.success(), "{status}: {}", node_peer.log());
    assert!(
        wait_until(Duration::from_secs(30), || nodes() == Some(0.0)),
        "the queen still counts the node that left"
    );
    let status = queen_peer.stop(queen.grace);
    assert!(status.success(), "{status}: {}", queen_peer.log());
}

/// Every `.yaml` file of `dir` (name and each of its documents), read by [`yaml_documents`].
fn read_manifests(dir: &Path) -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("deploy/kubernetes")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    let mut manifests = Vec::new();
    for file in files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .expect("a file name");
        let text = std::fs::read_to_string(&file).expect("readable");
        let documents = yaml_documents(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for document in documents {
            for field in ["apiVersion", "kind"] {
                assert!(document[field].is_string(), "{name}: no {field}");
            }
            manifests.push((name.clone(), document));
        }
    }
    assert!(!manifests.is_empty(), "no manifests in {}", dir.display());
    manifests
}

fn single<'a>(found: &[&'a Value], kind: &str) -> &'a Value {
    assert_eq!(found.len(), 1, "one {kind}");
    found[0]
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => panic!("not a string: {other}"),
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(text)
        .collect()
}

fn path_text(path: &Path) -> String {
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// A pod template of a StatefulSet or Deployment.
struct Pod<'a> {
    kind: String,
    workload: &'a Value,
    spec: &'a Value,
    labels: Map<String, Value>,
    /// The names of the StatefulSet's volumeClaimTemplates.
    claims: BTreeSet<String>,
    containers: Vec<Container>,
    /// terminationGracePeriodSeconds (Kubernetes' default, 30, when not given).
    grace: Duration,
}

/// A container: what it runs, read against forager's help.
struct Container {
    value: Value,
    /// command, then args.
    argv: Vec<String>,
    subcommand: String,
    /// The subcommand's flags and their values, in order.
    flags: Vec<(String, Option<String>)>,
    /// The subcommand's help.
    help: Help,
    /// Volume name by mount path.
    mounts: BTreeMap<String, String>,
    /// containerPort by name.
    ports: BTreeMap<String, u16>,
}

impl<'a> Pod<'a> {
    fn of(workload: &'a Value, global: &Help, installed: &str) -> Pod<'a> {
        let template = &workload["spec"]["template"];
        let spec = &template["spec"];
        let labels = template["metadata"]["labels"]
            .as_object()
            .cloned()
            .expect("the pod's labels");
        let selector = workload["spec"]["selector"]["matchLabels"]
            .as_object()
            .expect("matchLabels");
        assert!(
            selector.iter().all(|(k, v)| labels.get(k) == Some(v)),
            "the selector selects the template"
        );
        let claims = workload["spec"]["volumeClaimTemplates"]
            .as_array()
            .map(|c| c.iter().map(|c| text(&c["metadata"]["name"])).collect())
            .unwrap_or_default();
        let containers = ["initContainers", "containers"]
            .iter()
            .filter_map(|field| spec[*field].as_array())
            .flatten()
            .map(|c| Container::of(c, global, installed))
            .collect();
        let grace =
            Duration::from_secs(spec["terminationGracePeriodSeconds"].as_u64().unwrap_or(30));
        Pod {
            kind: text(&workload["kind"]),
            workload,
            spec,
            labels,
            claims,
            containers,
            grace,
        }
    }

    /// The volume a mount names: "claim", "emptyDir", or the Secret's items (key, path).
    fn volume(&self, name: &str) -> Option<(&'static str, Vec<(String, String)>)> {
        if self.claims.contains(name) {
            return Some(("claim", Vec::new()));
        }
        let volume = self.spec["volumes"]
            .as_array()?
            .iter()
            .find(|v| v["name"] == name)?;
        if volume.get("emptyDir").is_some() {
            return Some(("emptyDir", Vec::new()));
        }
        let items = volume["secret"]["items"].as_array()?;
        Some((
            "secret",
            items
                .iter()
                .map(|i| (text(&i["key"]), text(&i["path"])))
                .collect(),
        ))
    }

    /// The first container's command as the kubelet would run it, in `root`: each mount a
    /// folder under `root` (a Secret's items its files, from `secret`), `$(VAR)` expanded from
    /// the container's env and the kubelet's Service variables, every address on loopback
    /// and port 0 (the test's machine is not the pod's), paths moved under `root`. Returns
    /// the argv and the environment.
    fn prepare(
        &self,
        root: &Path,
        secret: &BTreeMap<String, Vec<u8>>,
        kubelet: &BTreeMap<String, String>,
    ) -> (Vec<String>, Vec<(String, String)>) {
        let container = &self.containers[0];
        let mut mounts: Vec<&Value> = container.value["volumeMounts"]
            .as_array()
            .map(|m| m.iter().collect())
            .unwrap_or_default();
        mounts.sort_by_key(|m| text(&m["mountPath"]).len());
        let mut moved = Vec::new();
        for mount in mounts {
            let path = text(&mount["mountPath"]);
            let name = text(&mount["name"]);
            let host = root.join(path.trim_start_matches('/'));
            let (kind, items) = self
                .volume(&name)
                .unwrap_or_else(|| panic!("volume {name}: a claim, an emptyDir or Secret items"));
            let file = |item: &str| -> &Vec<u8> {
                let key = items
                    .iter()
                    .find(|(_, p)| p == item)
                    .map(|(k, _)| k)
                    .unwrap_or_else(|| panic!("{name} has no item {item}"));
                &secret[key]
            };
            match (kind, mount.get("subPath")) {
                ("secret", Some(sub)) => {
                    std::fs::create_dir_all(host.parent().expect("a parent")).expect("mkdir");
                    std::fs::write(&host, file(&text(sub))).expect("the item");
                }
                ("secret", None) => {
                    std::fs::create_dir_all(&host).expect("mkdir");
                    for (_, item) in &items {
                        std::fs::write(host.join(item), file(item)).expect("the item");
                    }
                }
                _ => std::fs::create_dir_all(&host).expect("mkdir"),
            }
            moved.push((path, host));
        }
        moved.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        let mut env = Vec::new();
        let mut known: BTreeMap<String, String> = BTreeMap::new();
        for entry in container.value["env"].as_array().into_iter().flatten() {
            let name = text(&entry["name"]);
            let value = match entry.get("value") {
                Some(v) => expand(&text(v), &known, kubelet),
                None => {
                    let key = text(&entry["valueFrom"]["secretKeyRef"]["key"]);
                    String::from_utf8(secret[&key].clone()).expect("a UTF-8 secret")
                }
            };
            known.insert(name.clone(), value.clone());
            env.push((name, value));
        }
        env.extend(kubelet.iter().map(|(k, v)| (k.clone(), v.clone())));
        // The image points XDG_DATA_HOME into the data folder; here it stays in `root`.
        env.push(("XDG_DATA_HOME".into(), path_text(&root.join("xdg"))));
        let mut argv = Vec::new();
        let mut previous = String::new();
        for arg in &container.argv {
            let mut arg = expand(arg, &known, kubelet);
            assert!(!arg.contains("$("), "{arg}: a variable nothing sets");
            match previous.as_str() {
                "--listen" => arg = "/ip4/127.0.0.1/tcp/0".into(),
                "--metrics" => arg = "127.0.0.1:0".into(),
                _ => {}
            }
            for (path, host) in &moved {
                if let Some(rest) = arg.strip_prefix(path.as_str())
                    && (rest.is_empty() || rest.starts_with('/'))
                {
                    arg = format!("{}{rest}", path_text(host));
                    break;
                }
            }
            previous = arg.clone();
            argv.push(arg);
        }
        (argv, env)
    }
}

impl Container {
    fn of(value: &Value, global: &Help, installed: &str) -> Container {
        let mut argv = Vec::new();
        for field in ["command", "args"] {
            if !value[field].is_null() {
                argv.extend(strings(&value[field]));
            }
        }
        let (subcommand, flags, help) = parse_command(&argv, global, installed);
        let mounts = value["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| (text(&m["mountPath"]), text(&m["name"])))
            .collect();
        let ports = value["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let port = p["containerPort"].as_u64().expect("a containerPort");
                (
                    text(&p["name"]),
                    u16::try_from(port).expect("a port number"),
                )
            })
            .collect();
        Container {
            value: value.clone(),
            argv,
            subcommand,
            flags,
            help,
            mounts,
            ports,
        }
    }

    fn value_of(&self, flag: &str) -> Option<&str> {
        self.flags
            .iter()
            .find(|(f, _)| f == flag)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The port the one `flag` (`--listen` or `--metrics`) binds, as the manifest says.
    fn listen_port(&self, flag: &str) -> u16 {
        let values: Vec<&str> = self
            .flags
            .iter()
            .filter(|(f, _)| f == flag)
            .filter_map(|(_, v)| v.as_deref())
            .collect();
        assert_eq!(values.len(), 1, "one {flag}");
        bound_address(flag, values[0]).1
    }

    /// A port as a probe or a Service names it (a name or a number): a declared one.
    fn resolve_port(&self, port: &Value) -> u16 {
        let number = match port {
            Value::String(name) => *self
                .ports
                .get(name)
                .unwrap_or_else(|| panic!("no container port named {name}")),
            other => other
                .as_u64()
                .and_then(|n| u16::try_from(n).ok())
                .expect("a port number"),
        };
        assert!(
            self.ports.values().any(|p| *p == number),
            "port {number} is not a containerPort"
        );
        number
    }
}

/// The host and port a `--listen` multiaddr or a `--metrics` socket address binds.
fn bound_address(flag: &str, value: &str) -> (String, u16) {
    let (host, port) = match flag {
        "--listen" => {
            let parts: Vec<&str> = value.split('/').collect();
            assert!(
                parts.len() == 5 && parts[0].is_empty() && parts[1] == "ip4" && parts[3] == "tcp",
                "--listen {value}: /ip4/HOST/tcp/PORT"
            );
            (parts[2].to_owned(), parts[4].to_owned())
        }
        _ => {
            let address: std::net::SocketAddr = value
                .parse()
                .unwrap_or_else(|e| panic!("{flag} {value}: {e}"));
            (address.ip().to_string(), address.port().to_string())
        }
    };
    (host, port.parse().expect("a port number"))
}

/// Reads a container's command as forager's argument parser would, each word checked against
/// the help: the binary the image installs, global flags, a subcommand `forager --help` lists,
/// then only that subcommand's flags (a value after each that takes one, one of the listed
/// possible values where the help lists them; no positional words).
fn parse_command(
    argv: &[String],
    global: &Help,
    installed: &str,
) -> (String, Vec<(String, Option<String>)>, Help) {
    assert_eq!(
        argv.first().map(String::as_str),
        Some(installed),
        "{argv:?}: the image's forager"
    );
    let mut words = argv[1..].iter().map(String::as_str).peekable();
    let take = |help: &Help, flag: &str, words: &mut std::iter::Peekable<_>| {
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) => (f, Some(v.to_owned())),
            None => (flag, None),
        };
        let known = help
            .flags
            .get(flag)
            .unwrap_or_else(|| panic!("{argv:?}: {flag} is not in the help:\n{}", help.text));
        let value = match (known.value, inline) {
            (false, None) => None,
            (false, Some(v)) => panic!("{argv:?}: {flag} takes no value, given {v}"),
            (true, Some(v)) => Some(v),
            (true, None) => {
                let next: Option<&str> = Iterator::next(words);
                let value = next.unwrap_or_else(|| panic!("{argv:?}: {flag} without its value"));
                assert!(
                    !value.starts_with("--"),
                    "{argv:?}: {flag} without its value"
                );
                Some(value.to_owned())
            }
        };
        if let Some(v) = &value
            && !known.possible.is_empty()
        {
            assert!(
                known.possible.contains(v),
                "{argv:?}: {flag} {v} is none of {:?}",
                known.possible
            );
        }
        (flag.to_owned(), value)
    };
    while let Some(word) = words.next_if(|w| w.starts_with('-')) {
        take(global, word, &mut words);
    }
    let subcommand = words
        .next()
        .unwrap_or_else(|| panic!("{argv:?}: no subcommand"))
        .to_owned();
    assert!(
        global.commands.contains(&subcommand),
        "{argv:?}: {subcommand} is not a forager command: {:?}",
        global.commands
    );
    let help = Help::of(&[&subcommand, "--help"]);
    let mut flags = Vec::new();
    while let Some(word) = words.next() {
        assert!(
            word.starts_with("--"),
            "{argv:?}: {word}, a word forager {subcommand} takes none of"
        );
        flags.push(take(&help, word, &mut words));
    }
    (subcommand, flags, help)
}

/// Checks a container's ports against the flags that bind them (and probes, the Prometheus
/// annotations), its paths against its volumes, its Secret references against secret.yaml,
/// its variables against the binary.
fn check_container(
    container: &Container,
    pod: &Pod,
    secret_name: &str,
    secret_keys: &BTreeSet<String>,
) {
    let name = text(&container.value["name"]);
    // Every declared port is bound by a flag, and every bound port declared: off loopback
    // (the help's default --listen is loopback, which no other pod reaches), never port 0.
    let mut bound = BTreeMap::new();
    for (flag, value) in &container.flags {
        if flag == "--listen" || flag == "--metrics" {
            let value = value.as_deref().expect("a value");
            let (host, port) = bound_address(flag, value);
            assert_eq!(
                host, "0.0.0.0",
                "{name}: {flag} {value}: other pods reach only the pod's own interfaces"
            );
            assert_ne!(
                port, 0,
                "{name}: {flag} {value}: a Service needs a fixed port"
            );
            bound.insert(port, flag.clone());
        }
    }
    assert!(
        container
            .help
            .flags
            .get("--listen")
            .and_then(|f| f.default.as_deref())
            .is_some_and(|d| d.starts_with("/ip4/127.0.0.1/")),
        "the help's default --listen"
    );
    let declared: BTreeSet<u16> = container.ports.values().copied().collect();
    assert_eq!(
        declared,
        bound.keys().copied().collect::<BTreeSet<_>>(),
        "{name}: containerPorts are the ports its flags bind"
    );
    // Probes and the scrape annotations name the --metrics port and its path, the help's
    // http://ADDR/metrics.
    let metrics_port = bound
        .iter()
        .find(|(_, f)| *f == "--metrics")
        .map(|(p, _)| *p);
    assert!(container.help.text.contains("http://ADDR/metrics"));
    for probe in ["readinessProbe", "livenessProbe", "startupProbe"] {
        let probe = &container.value[probe];
        if let Some(get) = probe.get("httpGet") {
            assert_eq!(Some(container.resolve_port(&get["port"])), metrics_port);
            assert_eq!(get["path"], "/metrics");
        }
        if let Some(tcp) = probe.get("tcpSocket") {
            container.resolve_port(&tcp["port"]);
        }
    }
    let annotations = &pod.workload["spec"]["template"]["metadata"]["annotations"];
    if let Some(port) = annotations.get("prometheus.io/port") {
        assert_eq!(Some(text(port)), metrics_port.map(|p| p.to_string()));
        assert_eq!(annotations["prometheus.io/path"], "/metrics");
    }
    // Paths forager reads or writes are on the pod's volumes, not in the image.
    for flag in ["--data", "--cluster-key"] {
        if let Some(path) = container.value_of(flag) {
            let on = container
                .mounts
                .keys()
                .any(|m| path == m || path.starts_with(&format!("{m}/")));
            assert!(on, "{name}: {flag} {path} is on no volume");
        }
    }
    // The Secret's keys as the pod reads them.
    for volume in pod.spec["volumes"].as_array().into_iter().flatten() {
        if let Some(secret) = volume.get("secret") {
            assert_eq!(secret["secretName"], secret_name);
            for (key, _) in pod.volume(&text(&volume["name"])).expect("items").1 {
                assert!(secret_keys.contains(&key), "secret.yaml has no {key}");
            }
        }
    }
    for entry in container.value["env"].as_array().into_iter().flatten() {
        let variable = text(&entry["name"]);
        if let Some(reference) = entry["valueFrom"].get("secretKeyRef") {
            assert_eq!(reference["name"], secret_name);
            let key = text(&reference["key"]);
            assert!(secret_keys.contains(&key), "secret.yaml has no {key}");
        }
        // A variable the pod sets is one its command uses, or one forager reads.
        let used = container
            .argv
            .iter()
            .any(|a| a.contains(&format!("$({variable})")));
        assert!(
            used || binary_mentions(&variable),
            "{name}: {variable} is neither in its command nor read by forager"
        );
    }
}

/// Whether the forager binary holds `word` (a variable it reads is a string in it).
fn binary_mentions(word: &str) -> bool {
    let bytes = std::fs::read(forager_binary()).expect("the binary");
    bytes.windows(word.len()).any(|w| w == word.as_bytes())
}

/// `$(VAR)` expanded as Kubernetes expands a command and an env value: from the container's
/// variables declared so far, then the kubelet's; `$$` is `$`; an unknown one stays.
fn expand(
    text: &str,
    known: &BTreeMap<String, String>,
    kubelet: &BTreeMap<String, String>,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inner) = after.strip_prefix('(')
            && let Some(end) = inner.find(')')
        {
            let name = &inner[..end];
            match known.get(name).or_else(|| kubelet.get(name)) {
                Some(value) => out.push_str(value),
                None => out.push_str(&format!("$({name})")),
            }
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// What `forager … --help` says: its commands, its flags.
struct Help {
    text: String,
    commands: Vec<String>,
    flags: BTreeMap<String, HelpFlag>,
}

#[derive(Default)]
struct HelpFlag {
    /// Takes a value (`--data <DIR>`).
    value: bool,
    default: Option<String>,
    possible: Vec<String>,
}

impl Help {
    fn of(args: &[&str]) -> Help {
        let out = run_forager(args, LIMIT);
        assert!(out.status.success(), "forager {args:?}");
        let text = String::from_utf8(out.stdout).expect("UTF-8 help");
        let mut commands = Vec::new();
        let mut flags: BTreeMap<String, HelpFlag> = BTreeMap::new();
        let mut section = "";
        let mut current: Option<String> = None;
        let mut possible = false;
        for line in text.lines() {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            if trimmed.is_empty() {
                continue;
            }
            if indent == 0 {
                section = line;
                current = None;
                continue;
            }
            if section == "Commands:" && indent == 2 {
                commands.extend(trimmed.split_whitespace().next().map(str::to_owned));
                continue;
            }
            if section == "Options:" && indent <= 6 && trimmed.starts_with('-') {
                let words: Vec<&str> = trimmed.split_whitespace().collect();
                if let Some(at) = words.iter().position(|w| w.starts_with("--")) {
                    let name = words[at].trim_end_matches(',').trim_end_matches("...");
                    let value = words.get(at + 1).is_some_and(|w| w.starts_with('<'));
                    flags.insert(
                        name.to_owned(),
                        HelpFlag {
                            value,
                            ..HelpFlag::default()
                        },
                    );
                    current = Some(name.to_owned());
                    possible = false;
                }
                continue;
            }
            let Some(flag) = current.as_ref().and_then(|c| flags.get_mut(c)) else {
                continue;
            };
            if trimmed == "Possible values:" {
                possible = true;
            } else if possible && let Some(item) = trimmed.strip_prefix("- ") {
                flag.possible
                    .extend(item.split(':').next().map(str::to_owned));
            }
            if let Some(at) = trimmed.find("[default: ")
                && let Some(end) = trimmed.rfind(']')
            {
                flag.default = Some(trimmed[at + 10..end].to_owned());
            }
        }
        assert!(!flags.is_empty(), "no flags read from forager {args:?}");
        Help {
            text,
            commands,
            flags,
        }
    }
}

/// A `forager queen` or `node` process: what it printed about itself, its log in a file.
struct Peer {
    child: Child,
    id: String,
    /// Its listen address.
    address: String,
    metrics: Option<String>,
    log: PathBuf,
}

impl Peer {
    /// Starts `command` and reads what it prints (`KIND ID`, `metrics URL`, `listening
    /// ADDRESS`), at most a minute; its stderr goes to `log`.
    fn start(command: &mut Command, kind: &str, log: &Path) -> Peer {
        use std::io::BufRead;
        let stderr = std::fs::File::create(log).expect("a log file");
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("forager starts");
        let stdout = child.stdout.take().expect("stdout");
        let (lines, printed) = std::sync::mpsc::sync_channel(16);
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                // Only the first lines matter; the rest are drained.
                let _ = lines.try_send(line);
            }
        });
        let mut peer = Peer {
            child,
            id: String::new(),
            address: String::new(),
            metrics: None,
            log: log.to_owned(),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while peer.address.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = printed
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("{kind} did not start: {}", peer.log()));
            if let Some(id) = line.strip_prefix(&format!("{kind} ")) {
                peer.id = id.trim().to_owned();
            } else if let Some(url) = line.strip_prefix("metrics ") {
                peer.metrics = Some(url.trim().to_owned());
            } else if let Some(address) = line.strip_prefix("listening ") {
                peer.address = address.trim().to_owned();
            }
        }
        peer
    }

    /// Stops it as the kubelet stops a container: SIGTERM, then `grace` to exit.
    fn stop(&mut self, grace: Duration) -> ExitStatus {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(killed.success());
        let mut status = None;
        wait_until(grace, || {
            status = self.child.try_wait().expect("waitable");
            status.is_some()
        });
        status.unwrap_or_else(|| panic!("did not stop within {grace:?}: {}", self.log()))
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `done` every 100 ms until it holds (true) or `limit` passes (false).
// A synchronous test: a blocking sleep is its poll interval.
#[allow(clippy::disallowed_methods)]
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    loop {
        if done() {
            return true;
        }
        if started.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The port of a `/ip4/…/tcp/PORT/…` address or an `http://HOST:PORT/…` URL.
fn port_of(address: &str) -> u16 {
    let port = match address.strip_prefix("http://") {
        Some(rest) => rest
            .split('/')
            .next()
            .and_then(|host| host.rsplit(':').next()),
        None => address
            .split("/tcp/")
            .nth(1)
            .and_then(|r| r.split('/').next()),
    };
    port.and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {address}"))
}

/// The body of `GET url` (HTTP/1.0, plain TCP: the metrics endpoint).
fn http_get(url: &str) -> String {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let mut stream = std::net::TcpStream::connect(host).expect("the metrics endpoint");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("a timeout");
    write!(stream, "GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").expect("a request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    assert!(
        head.starts_with("HTTP/1") && head.contains(" 200 "),
        "{head}"
    );
    body.to_owned()
}

/// The samples of Prometheus text: name, labels, value.
fn samples(text: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let value = value.parse().ok()?;
            let (name, labels) = match series.split_once('{') {
                Some((name, labels)) => (name, labels.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split(',')
                .filter_map(|pair| {
                    let (k, v) = pair.split_once('=')?;
                    Some((k.to_owned(), v.trim_matches('"').to_owned()))
                })
                .collect();
            Some((name.to_owned(), labels, value))
        })
        .collect()
}

/// The documents of a manifest in the YAML subset the manifests keep to, so that this test
/// reads them as kubectl does: block mappings and sequences by their indentation (spaces),
/// `- key: value` items, comment lines, `---` between documents; scalars plain (a string; an
/// integer or a decimal; true, false, null) or double-quoted with JSON's escapes, `{}`, and
/// one-line flow sequences in JSON. Anything outside it is refused with its line: tabs,
/// trailing comments, anchors, tags, block scalars, single quotes, YAML 1.1's yes/no/on/off,
/// and plain words that start like a number without being one (`500m`, `0600`, `1Gi`:
/// quote them).
fn yaml_documents(text: &str) -> Result<Vec<Value>, String> {
    let mut documents = Vec::new();
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        if raw.contains('\t') {
            return Err(format!("line {number}: a tab"));
        }
        let content = raw.trim_start_matches(' ').trim_end();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        if raw.trim_end() == "---" {
            yaml_document(&mut lines, &mut documents)?;
            continue;
        }
        lines.push(YamlLine {
            number,
            indent: raw.len() - raw.trim_start_matches(' ').len(),
            text: content.to_owned(),
        });
    }
    yaml_document(&mut lines, &mut documents)?;
    Ok(documents)
}

/// A manifest's line: its number, its indentation and its text.
#[derive(Clone)]
struct YamlLine {
    number: usize,
    indent: usize,
    text: String,
}

fn yaml_document(lines: &mut Vec<YamlLine>, documents: &mut Vec<Value>) -> Result<(), String> {
    let Some(first) = lines.first() else {
        return Ok(());
    };
    if first.indent != 0 {
        return Err(format!("line {}: a document starts indented", first.number));
    }
    let mut at = 0;
    let value = yaml_block(lines, &mut at, 0)?;
    if let Some(line) = lines.get(at) {
        return Err(format!(
            "line {}: not where its indentation puts it",
            line.number
        ));
    }
    documents.push(value);
    lines.clear();
    Ok(())
}

fn yaml_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// `key: rest` with a plain key (letters, digits, `-_./`), or `None`.
fn yaml_entry(text: &str) -> Option<(&str, &str)> {
    let (key, rest) = match text.split_once(": ") {
        Some((key, rest)) => (key, rest.trim_start()),
        None => (text.strip_suffix(':')?, ""),
    };
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
    plain.then_some((key, rest))
}

/// The block (mapping or sequence) whose lines start at `at` with `indent`.
fn yaml_block(lines: &mut [YamlLine], at: &mut usize, indent: usize) -> Result<Value, String> {
    if yaml_item(&lines[*at].text) {
        let mut items = Vec::new();
        while *at < lines.len() && lines[*at].indent == indent && yaml_item(&lines[*at].text) {
            let line = lines[*at].clone();
            let rest = &line.text[1..];
            if rest.is_empty() {
                *at += 1;
                match lines.get(*at) {
                    Some(next) if next.indent > indent => {
                        let inner = next.indent;
                        items.push(yaml_block(lines, at, inner)?);
                    }
                    _ => return Err(format!("line {}: an empty item", line.number)),
                }
                continue;
            }
            let rest = &rest[1..];
            if rest.starts_with(' ') {
                return Err(format!("line {}: one space after `-`", line.number));
            }
            if yaml_entry(rest).is_some() {
                // `- key: value`: a mapping whose keys stand two columns in.
                lines[*at].indent = indent + 2;
                lines[*at].text = rest.to_owned();
                items.push(yaml_block(lines, at, indent + 2)?);
            } else {
                items.push(yaml_scalar(rest, line.number)?);
                *at += 1;
            }
        }
        return Ok(Value::Array(items));
    }
    let mut map = Map::new();
    while *at < lines.len() && lines[*at].indent == indent && !yaml_item(&lines[*at].text) {
        let line = lines[*at].clone();
        let (key, rest) = yaml_entry(&line.text)
            .ok_or_else(|| format!("line {}: neither `key: value` nor `- item`", line.number))?;
        *at += 1;
        let value = if rest.is_empty() {
            match lines.get(*at) {
                Some(next) if next.indent > indent => {
                    let inner = next.indent;
                    yaml_block(lines, at, inner)?
                }
                // A sequence may stand at its key's indentation.
                Some(next) if next.indent == indent && yaml_item(&next.text) => {
                    yaml_block(lines, at, indent)?
                }
                _ => return Err(format!("line {}: `{key}:` without a value", line.number)),
            }
        } else {
            yaml_scalar(rest, line.number)?
        };
        if map.insert(key.to_owned(), value).is_some() {
            return Err(format!("line {}: {key} twice", line.number));
        }
    }
    Ok(Value::Object(map))
}

fn yaml_scalar(text: &str, number: usize) -> Result<Value, String> {
    let refuse = |why: &str| Err(format!("line {number}: {text}: {why}"));
    if text.starts_with('"') {
        return serde_json::from_str::<String>(text)
            .map(Value::String)
            .or_else(|_| refuse("a double-quoted string with JSON's escapes, nothing after it"));
    }
    if text.starts_with('[') {
        return match serde_json::from_str::<Value>(text) {
            Ok(list @ Value::Array(_)) => Ok(list),
            _ => refuse("a one-line JSON list"),
        };
    }
    if text == "{}" {
        return Ok(Value::Object(Map::new()));
    }
    if text.starts_with(|c: char| "'&*!|>%@`{}[],?:#".contains(c))
        || text.contains(": ")
        || text.contains(" #")
        || text.ends_with(':')
    {
        return refuse("outside the YAML subset the manifests keep to");
    }
    match text {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        "null" | "~" => return Ok(Value::Null),
        _ => {}
    }
    if ["yes", "no", "on", "off", "y", "n"].contains(&text.to_ascii_lowercase().as_str()) {
        return refuse("a boolean to YAML 1.1: quote it, or write true or false");
    }
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.starts_with(|c: char| c.is_ascii_digit() || c == '.' || c == '+') {
        let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
        let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
        let leading_zero = whole.len() > 1 && whole.starts_with('0');
        if numeric(whole) && !leading_zero && (fraction.is_empty() || numeric(fraction)) {
            if digits.contains('.') {
                let float: f64 = text.parse().map_err(|e| format!("line {number}: {e}"))?;
                return Ok(serde_json::Number::from_f64(float)
                    .map(Value::Number)
                    .unwrap_or(Value::Null));
            }
            let integer: i64 = text.parse().map_err(|e| format!("line {number}: {e}"))?;
            return Ok(Value::from(integer));
        }
        return refuse("starts like a number without being one: quote it");
    }
    Ok(Value::String(text.to_owned()))
}
