//! `paige confine --policy '<JSON>' -- PROGRAM [ARGS...]` (hidden): applies a
//! `paige_confine::Policy` to this process (Landlock, seccomp, capabilities) and execs PROGRAM,
//! which inherits it with all it starts. The launcher puts it in front of Claude Code where
//! bubblewrap cannot run, and inside the jail where it can. Fails closed: anything the policy
//! asks for that cannot be applied exits 126 and PROGRAM is never started. In the jail's own
//! network it first starts `paige relay` to Paige's gate (`gate.rs`) and makes it PROGRAM's
//! HTTPS proxy; a gate that does not answer is refused the same way.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// Where the launcher wants the `Applied` JSON (0600, made new, never through a symlink).
const REPORT_ENV: &str = "PAIGE_CONFINE_REPORT";

#[derive(Debug, Args)]
pub(crate) struct ConfineArgs {
    /// The policy, as `paige_confine::Policy` JSON
    #[arg(long, value_name = "JSON")]
    policy: String,
    /// Paige's gate (in the jail's own network): start `paige relay` to it first
    #[arg(long, value_name = "PATH")]
    gate: Option<PathBuf>,
    /// With --gate: a loopback port passed on to the gate as it is
    #[arg(long, value_name = "PORT", requires = "gate")]
    forward: Vec<u16>,
    /// With --gate: the relay is also PROGRAM's HTTPS proxy
    #[arg(long, requires = "gate")]
    proxy: bool,
    /// The program and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    command: Vec<OsString>,
}

fn refuse(what: impl std::fmt::Display) -> ExitCode {
    eprintln!("paige confine: {what}; Claude Code was not started");
    ExitCode::from(126)
}

pub(crate) fn run(args: ConfineArgs) -> ExitCode {
    let mut policy: paige_confine::Policy = match serde_json::from_str(&args.policy) {
        Ok(policy) => policy,
        Err(e) => return refuse(format_args!("the policy is not valid: {e}")),
    };
    // The relay starts before the policy applies: seccomp may forbid it the gate's UNIX socket.
    let mut proxy_env: Vec<(&str, String)> = Vec::new();
    if let Some(gate) = &args.gate {
        match crate::gate::start_relay(gate, &args.forward, args.proxy) {
            Ok(port) if args.proxy => {
                let url = format!("http://127.0.0.1:{port}");
                for var in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
                    proxy_env.push((var, url.clone()));
                }
                for var in ["NO_PROXY", "no_proxy"] {
                    proxy_env.push((var, "127.0.0.1,localhost,::1".to_owned()));
                }
                if let Some(ports) = policy.tcp_connect.as_mut() {
                    ports.push(port);
                }
            }
            Ok(_) => {}
            Err(why) => return refuse(why),
        }
    }
    // Opened before the policy applies (the report's folder need not be writable under it).
    let report_path = std::env::var_os(REPORT_ENV).map(PathBuf::from);
    let mut report = match &report_path {
        Some(path) => match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
        {
            Ok(file) => Some(file),
            Err(e) => return refuse(format_args!("cannot make the report {}: {e}", path.display())),
        },
        None => None,
    };
    let applied = match paige_confine::apply(&policy) {
        Ok(applied) => applied,
        Err(e) => {
            if let Some(path) = &report_path {
                drop(report.take());
                let _ = std::fs::remove_file(path);
            }
            return refuse(e);
        }
    };
    if let Some(mut file) = report {
        let json = serde_json::to_vec(&applied).expect("Applied serializes");
        if let Err(e) = file.write_all(&json).and_then(|()| file.flush()) {
            return refuse(format_args!("cannot write the report: {e}"));
        }
    }
    let (program, rest) = args.command.split_first().expect("clap requires the program");
    // exec(3) looks PROGRAM up in PATH as execvp does; it returns only on failure.
    let err = std::process::Command::new(program).args(rest).envs(proxy_env).exec();
    eprintln!("paige confine: cannot run {}: {err}; Claude Code was not started", program.to_string_lossy());
    ExitCode::from(if err.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 })
}
