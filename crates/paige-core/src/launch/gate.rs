//! The jail's only way out: it has a network namespace of its own (`bwrap --unshare-net`),
//! where nothing of the learner's machine listens — not the X display's abstract socket, not
//! a local web service, not another program's debug port. Claude Code still needs three
//! things, and reaches each through Paige's gate, a UNIX socket bound into the jail:
//! - Paige's hooks and MCP, and a model API on loopback (a local gateway, the tests' fake):
//!   `paige relay` inside listens on the same `127.0.0.1` ports and passes each connection on;
//! - the model API elsewhere: `paige relay` is Claude Code's `HTTPS_PROXY`, and the gate
//!   admits `CONNECT` only to the hosts named here (the learner's own proxy, when they have
//!   one, is the gate's upstream).
//!
//! `paige gate` runs outside the jail, as its parent, for as long as Claude Code runs; what
//! it admits is decided here, from the launching environment, before anything starts.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Where the gate's socket is in the jail (its `/run` is a private tmpfs).
pub const SOCKET_IN_JAIL: &str = "/run/paige/gate.sock";

/// Hosts Claude Code signs in and refreshes its login with, beside the model API.
const SIGN_IN: [&str; 3] = ["api.anthropic.com:443", "console.anthropic.com:443", "claude.ai:443"];

/// What the gate lets through for one launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destinations {
    /// Loopback ports forwarded as they are: Paige's, a model API on loopback.
    pub loopback: Vec<u16>,
    /// `host:port` the proxy may `CONNECT` to.
    pub hosts: Vec<String>,
    /// The learner's own HTTPS proxy, which the gate connects through.
    pub upstream: Option<String>,
}

impl Destinations {
    /// Paige on `paige_port`, and the model API `env` names (`ANTHROPIC_BASE_URL`, Bedrock,
    /// Vertex), else Anthropic's.
    pub fn for_launch(paige_port: u16, env: &HashMap<String, String>) -> Destinations {
        let var = |name: &str| env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
        let mut loopback = vec![paige_port];
        let mut hosts: Vec<String> = SIGN_IN.iter().map(|h| (*h).to_owned()).collect();
        if let Some(url) = var("ANTHROPIC_BASE_URL").and_then(|u| reqwest::Url::parse(u).ok())
            && let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default())
        {
            match is_loopback(host) {
                true => loopback.push(port),
                false => hosts.push(format!("{}:{port}", host.trim_matches(['[', ']']))),
            }
        }
        if var("CLAUDE_CODE_USE_BEDROCK").is_some_and(|v| v != "0") {
            let region = var("AWS_REGION").unwrap_or("us-east-1");
            hosts.push(format!("bedrock-runtime.{region}.amazonaws.com:443"));
            hosts.push(format!("sts.{region}.amazonaws.com:443"));
        }
        if var("CLAUDE_CODE_USE_VERTEX").is_some_and(|v| v != "0") {
            let region = var("CLOUD_ML_REGION").unwrap_or("us-east5");
            hosts.push(format!("{region}-aiplatform.googleapis.com:443"));
            hosts.extend(["aiplatform.googleapis.com:443".to_owned(), "oauth2.googleapis.com:443".to_owned()]);
        }
        loopback.sort_unstable();
        loopback.dedup();
        hosts.dedup();
        let upstream = ["HTTPS_PROXY", "https_proxy"].into_iter().find_map(var).map(str::to_owned);
        Destinations { loopback, hosts, upstream }
    }

    /// What the learner is told the jail can reach.
    pub fn describe(&self) -> String {
        let model: Vec<&str> = self.hosts.iter().skip(SIGN_IN.len()).map(String::as_str).collect();
        let model = match model.is_empty() {
            true => "Anthropic's API".to_owned(),
            false => model.join(", "),
        };
        let ports: Vec<String> = self.loopback.iter().map(u16::to_string).collect();
        format!(
            "a network of its own: only Paige and {model} (127.0.0.1 ports {}), through Paige's gate",
            ports.join(", ")
        )
    }

    /// `paige gate` … `--`: the gate's own arguments, before the jail's command.
    pub fn gate_args(&self, socket: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["gate".into(), "--socket".into(), socket.into()];
        for port in &self.loopback {
            args.extend(["--allow".into(), format!("127.0.0.1:{port}").into()]);
        }
        for host in &self.hosts {
            args.extend(["--allow".into(), host.into()]);
        }
        if let Some(upstream) = &self.upstream {
            args.extend(["--upstream".into(), upstream.into()]);
        }
        args.push("--".into());
        args
    }

    /// `paige confine`'s arguments for the relay inside the jail.
    pub fn relay_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--gate".into(), SOCKET_IN_JAIL.into(), "--proxy".into()];
        for port in &self.loopback {
            args.extend(["--forward".into(), port.to_string().into()]);
        }
        args
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_matches(['[', ']']);
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A path for the gate's socket outside the jail: in the run dir (0700) when its path fits a
/// UNIX socket's 107 bytes, else in a private folder of the temp dir.
pub fn socket_path(run_dir: &Path) -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!("gate-{}-{}.sock", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let in_run = run_dir.join(&name);
    if in_run.as_os_str().len() < 100 {
        std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700).create(run_dir)?;
        return Ok(in_run);
    }
    let dir = tempfile::Builder::new().prefix("paige-gate-").tempdir()?.keep();
    Ok(dir.join(name))
}
