//! Hosts as network namespaces, for the cluster's fault tests and benches: every host is a
//! fresh network namespace with one interface (`eth0`, 10.77.0.N/24) on a bridge that lives in
//! a namespace of its own, so nothing of the machine's own network is touched. A link can be
//! cut and restored (`set_link`), and given delay, jitter and loss with `tc netem` where the
//! kernel has it (`netem`); loss alone also by an nftables rule that drops packets at random
//! (`loss`), which kernels without netem (this one) have.
//!
//! Each namespace is held by a process (`unshare -n`, a shell that ends with the test
//! process): when the holder dies, with the [`Lab`] or with the test process, the namespace
//! and its links go too, so a crashed test leaves nothing configured behind, and a long run
//! (the soak) keeps its lab as long as it needs. Where the machine refuses namespaces (no CAP_SYS_ADMIN,
//! no `ip`, no `nsenter`), [`Lab::create`] says why and the tests fail with that reason,
//! unless `FORAGER_TEST_SKIP=netns` says to skip them ([`crate::require`]).

use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The hosts' subnet: inside the lab's own namespaces only.
const SUBNET: [u8; 3] = [10, 77, 0];

/// A process holding a network namespace; killed (and waited for) on drop.
struct Holder(Child);

impl Holder {
    fn start() -> Result<Holder, String> {
        // The holder lives as long as this process: a crashed test leaves no namespace behind,
        // and a long one (the soak) keeps its lab.
        let child = Command::new("unshare")
            .args([
                "-n",
                "--",
                "sh",
                "-c",
                "while kill -0 \"$0\" 2>/dev/null; do sleep 1; done",
                &std::process::id().to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("unshare cannot start: {e}"))?;
        let holder = Holder(child);
        // The namespace exists once the holder runs `sleep` in it.
        for _ in 0..100 {
            if holder.in_own_namespace() {
                return Ok(holder);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err("unshare -n did not make a network namespace (no CAP_SYS_ADMIN?)".into())
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn in_own_namespace(&self) -> bool {
        let own = std::fs::read_link("/proc/self/ns/net");
        let held = std::fs::read_link(format!("/proc/{}/ns/net", self.pid()));
        matches!((own, held), (Ok(a), Ok(b)) if a != b)
    }

    /// `ip ARGS` inside the namespace.
    fn ip(&self, args: &[&str]) -> Result<(), String> {
        self.run("ip", args)
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let pid = self.pid().to_string();
        let output = Command::new("nsenter")
            .args(["-t", &pid, "-n", "--", program])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("nsenter cannot start: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A set of hosts on one bridge.
pub struct Lab {
    // Hosts first: dropped before the switch.
    hosts: Vec<Holder>,
    switch: Holder,
}

impl Lab {
    /// `count` hosts (at most 200), each with its address; or why this machine cannot.
    pub fn create(count: usize) -> Result<Lab, String> {
        if count == 0 || count > 200 {
            return Err(format!("a lab has 1 to 200 hosts, not {count}"));
        }
        let switch = Holder::start()?;
        switch.ip(&["link", "add", "br0", "type", "bridge"])?;
        switch.ip(&["link", "set", "br0", "up"])?;
        let mut hosts = Vec::with_capacity(count);
        for i in 0..count {
            let host = Holder::start()?;
            let link = format!("h{i}");
            let pid = host.pid().to_string();
            switch.ip(&[
                "link", "add", &link, "type", "veth", "peer", "name", "eth0", "netns", &pid,
            ])?;
            switch.ip(&["link", "set", &link, "master", "br0"])?;
            switch.ip(&["link", "set", &link, "up"])?;
            let address = format!("{}/24", Lab::address(i));
            host.ip(&["addr", "add", &address, "dev", "eth0"])?;
            host.ip(&["link", "set", "eth0", "up"])?;
            host.ip(&["link", "set", "lo", "up"])?;
            hosts.push(host);
        }
        // A bridge without STP forwards at once: no wait for its ports.
        Ok(Lab { hosts, switch })
    }

    /// Host `i`'s address.
    pub fn address(i: usize) -> Ipv4Addr {
        Ipv4Addr::new(SUBNET[0], SUBNET[1], SUBNET[2], (i + 1) as u8)
    }

    /// Host `i`'s address as a libp2p listen address on `port`.
    pub fn listen(i: usize, port: u16) -> String {
        format!("/ip4/{}/tcp/{port}", Lab::address(i))
    }

    /// A command that runs `program` on host `i` (in its namespace).
    pub fn command(&self, i: usize, program: &Path) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("nsenter");
        command
            .arg("-t")
            .arg(self.hosts[i].pid().to_string())
            .args(["-n", "--"])
            .arg(program);
        command
    }

    /// `forager KIND --data DATA --cluster-key KEY --listen <host i's address>:PORT` on host
    /// `i`: a queen or a node of a lab cluster (the caller adds its own flags).
    pub fn peer_command(
        &self,
        i: usize,
        binary: &Path,
        kind: &str,
        data: &Path,
        key: &Path,
        port: u16,
    ) -> tokio::process::Command {
        let mut command = self.command(i, binary);
        command
            .arg(kind)
            .arg("--data")
            .arg(data)
            .arg("--cluster-key")
            .arg(key)
            .arg("--listen")
            .arg(Lab::listen(i, port));
        command
    }

    /// Takes host `i`'s link down (a cut cable: nothing in, nothing out) or back up.
    pub fn set_link(&self, i: usize, up: bool) -> Result<(), String> {
        let state = if up { "up" } else { "down" };
        self.switch.ip(&["link", "set", &format!("h{i}"), state])
    }

    /// Delay (± jitter) and loss on host `i`'s link, both ways; `Err` says why not (this
    /// kernel without netem, for one).
    pub fn netem(
        &self,
        i: usize,
        delay_ms: u32,
        jitter_ms: u32,
        loss_percent: f64,
    ) -> Result<(), String> {
        let delay = format!("{delay_ms}ms");
        let jitter = format!("{jitter_ms}ms");
        let loss = format!("{loss_percent}%");
        let args = [
            "qdisc", "replace", "dev", "", "root", "netem", "delay", &delay, &jitter, "loss", &loss,
        ];
        let mut host_side = args;
        host_side[3] = "eth0";
        self.hosts[i].run("tc", &host_side)?;
        let link = format!("h{i}");
        let mut switch_side = args;
        switch_side[3] = &link;
        self.switch.run("tc", &switch_side)
    }

    /// Random loss of `per_mille` packets in 1,000 on host `i`'s link, each way: an
    /// nftables table in the host's namespace drops them as they leave and as they arrive on
    /// `eth0` (what netem's loss on both ends of the link does). `Err` says why not.
    pub fn loss(&self, i: usize, per_mille: u32) -> Result<(), String> {
        if per_mille > 1000 {
            return Err(format!("a loss of {per_mille} in 1,000"));
        }
        let rules = format!(
            "table inet lab_loss {{\n\
             chain outgoing {{ type filter hook output priority 0; policy accept; \
             oifname \"eth0\" numgen random mod 1000 < {per_mille} counter drop; }}\n\
             chain incoming {{ type filter hook input priority 0; policy accept; \
             iifname \"eth0\" numgen random mod 1000 < {per_mille} counter drop; }}\n\
             }}\n"
        );
        let path = std::env::temp_dir().join(format!(
            "forager-lab-loss-{}-{}-{i}.nft",
            std::process::id(),
            self.hosts[i].pid()
        ));
        std::fs::write(&path, rules).map_err(|e| format!("{}: {e}", path.display()))?;
        let path_text = path.to_string_lossy().into_owned();
        let applied = self.hosts[i].run("nft", &["-f", &path_text]);
        let _ = std::fs::remove_file(&path);
        applied
    }

    /// Packets host `i`'s loss rules dropped so far (both ways), from the rules' counters.
    pub fn lost_packets(&self, i: usize) -> Result<u64, String> {
        let pid = self.hosts[i].pid().to_string();
        let output = Command::new("nsenter")
            .args([
                "-t", &pid, "-n", "--", "nft", "list", "table", "inet", "lab_loss",
            ])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("nsenter cannot start: {e}"))?;
        if !output.status.success() {
            return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
        }
        let text = String::from_utf8_lossy(&output.stdout);
        // `... counter packets N bytes M drop`
        Ok(text
            .split_whitespace()
            .collect::<Vec<_>>()
            .windows(2)
            .filter(|w| w[0] == "packets")
            .filter_map(|w| w[1].parse::<u64>().ok())
            .sum())
    }

    /// Whether random loss can be set here (`nft` and the kernel's nftables): tried on a
    /// scratch namespace.
    pub fn loss_available() -> Result<(), String> {
        let probe = Lab::create(1)?;
        probe
            .loss(0, 10)
            .map_err(|e| format!("nftables loss is not available on this machine ({e})"))
    }

    /// A TCP listener on host `i`'s address (`port` 0: one the system picks), made from a
    /// thread that enters the host's namespace for the bind: a server of this process (a
    /// fixture website) that the other hosts reach.
    pub fn listen_on(&self, i: usize, port: u16) -> std::io::Result<std::net::TcpListener> {
        let namespace = std::fs::File::open(format!("/proc/{}/ns/net", self.hosts[i].pid()))?;
        let address = std::net::SocketAddr::from((Lab::address(i), port));
        std::thread::spawn(move || {
            use std::os::fd::AsFd;
            rustix::thread::move_into_link_name_space(
                namespace.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )?;
            let listener = std::net::TcpListener::bind(address)?;
            listener.set_nonblocking(true)?;
            Ok(listener)
        })
        .join()
        .map_err(|_| std::io::Error::other("the namespace thread panicked"))?
    }

    /// A relay on host `i` (its address, a port the system picks) to `target`, delaying
    /// every chunk by `delay` each way: link delay without netem (see
    /// [`crate::delay::ThreadRelay`]).
    pub fn delay_relay(
        &self,
        i: usize,
        target: std::net::SocketAddr,
        delay: crate::delay::Delay,
    ) -> std::io::Result<crate::delay::ThreadRelay> {
        let namespace = std::fs::File::open(format!("/proc/{}/ns/net", self.hosts[i].pid()))?;
        let bind = std::net::SocketAddr::from((Lab::address(i), 0));
        crate::delay::ThreadRelay::spawn(bind, target, delay, i as u64, move || {
            use std::os::fd::AsFd;
            rustix::thread::move_into_link_name_space(
                namespace.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )?;
            Ok(())
        })
    }

    /// The pid of the process holding host `i`'s namespace.
    pub fn holder_pid(&self, i: usize) -> u32 {
        self.hosts[i].pid()
    }

    /// Whether netem can be set here: tried on a scratch namespace.
    pub fn netem_available() -> Result<(), String> {
        let probe = Holder::start()?;
        probe.ip(&["link", "set", "lo", "up"])?;
        probe
            .run(
                "tc",
                &["qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms"],
            )
            .map_err(|e| format!("tc netem is not available on this machine ({e})"))
    }
}

/// Whether this machine can hold a lab; the reason when not (for the skip message).
pub fn unavailable() -> Option<String> {
    Lab::create(1).err()
}
