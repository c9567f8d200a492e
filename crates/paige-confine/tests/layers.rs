//! Each layer proven on this kernel with a real process: the probe applies a policy to itself,
//! tries one thing and reports the errno. No mocks; a kernel without Landlock or seccomp fails
//! these tests loudly. They run as root here: every denial below holds for root too.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

const PROBE: &str = env!("CARGO_BIN_EXE_paige-confine-probe");

/// The probe's report: `ok`, `errno N (…)`, `apply: …`.
fn probe(policy: &Value, what: &str, arg: &str) -> String {
    let out = Command::new(PROBE).arg(policy.to_string()).arg(what).arg(arg).output().expect("run the probe");
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        !stdout.starts_with("prepare:") && out.status.code().is_some(),
        "probe {what} {arg} crashed: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn assert_ok(policy: &Value, what: &str, arg: &str) {
    let got = probe(policy, what, arg);
    assert_eq!(got, "ok", "{what} {arg} under {policy} should work");
}

fn assert_errno(policy: &Value, what: &str, arg: &str, errno: i32) {
    let got = probe(policy, what, arg);
    assert!(got.starts_with(&format!("errno {errno} ")), "{what} {arg} under {policy}: want errno {errno}, got {got}");
}

fn landlock_abi() -> u32 {
    paige_confine::support().landlock_abi.expect("this kernel has no Landlock: these tests need it, they do not skip")
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn support_reports_landlock_with_scopes_and_seccomp_filters() {
    let support = paige_confine::support();
    assert!(landlock_abi() >= 6, "scopes need Landlock ABI 6; this kernel offers {:?}", support.landlock_abi);
    assert!(support.seccomp, "this kernel cannot install seccomp filters");
}

#[test]
fn landlock_denies_writes_into_a_read_only_hierarchy_while_the_writable_dir_works() {
    landlock_abi();
    let dir = tempfile::tempdir().unwrap();
    let (project, scratch) = (dir.path().join("project"), dir.path().join("scratch"));
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::create_dir(&scratch).unwrap();
    std::fs::write(project.join("src/main.rs"), "fn main() {}").unwrap();
    let policy = json!({"fs": true, "read": [project], "write": [scratch]});
    assert_errno(&policy, "write", &path(&project.join("src/main.rs")), libc::EACCES);
    assert_errno(&policy, "write", &path(&project.join("new.rs")), libc::EACCES);
    assert_ok(&policy, "read", &path(&project.join("src/main.rs")));
    assert_ok(&policy, "write", &path(&scratch.join("out.txt")));
    // Outside every grant: not even readable.
    std::fs::write(dir.path().join("elsewhere"), "x").unwrap();
    assert_errno(&policy, "read", &path(&dir.path().join("elsewhere")), libc::EACCES);
    assert_eq!(std::fs::read_to_string(project.join("src/main.rs")).unwrap(), "fn main() {}");
}

#[test]
fn landlock_hides_a_dir_inside_a_read_hierarchy_but_keeps_grants_inside_it() {
    landlock_abi();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let data = home.join(".paige");
    for d in [home.join("code"), data.join("run"), data.join("claude")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(home.join(".gitconfig"), "[user]").unwrap();
    std::fs::write(home.join("code/lib.rs"), "").unwrap();
    std::fs::write(data.join("record-key"), "secret").unwrap();
    std::fs::write(data.join("run/server.json"), "{\"token\":1}").unwrap();
    std::fs::write(data.join("run/mcp-1.json"), "{}").unwrap();
    let policy = json!({
        "fs": true, "read": [home, data.join("run/mcp-1.json")], "write": [data.join("claude")], "hide": [data],
    });
    assert_errno(&policy, "read", &path(&data.join("record-key")), libc::EACCES);
    assert_errno(&policy, "read", &path(&data.join("run/server.json")), libc::EACCES);
    assert_ok(&policy, "read", &path(&data.join("run/mcp-1.json")));
    assert_ok(&policy, "write", &path(&data.join("claude/settings.json")));
    assert_ok(&policy, "read", &path(&home.join(".gitconfig")));
    assert_ok(&policy, "read", &path(&home.join("code/lib.rs")));
    assert_errno(&policy, "write", &path(&home.join("code/lib.rs")), libc::EACCES);
}

#[test]
fn landlock_refuses_a_write_grant_through_a_planted_symlink() {
    landlock_abi();
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let planted = dir.path().join("claude");
    std::os::unix::fs::symlink(&home, &planted).unwrap();
    let got = probe(&json!({"fs": true, "write": [planted]}), "read", "/");
    assert!(got.starts_with("apply:") && got.contains("symlink"), "{got}");
    // A symlink higher up the path is refused too.
    let got = probe(&json!({"fs": true, "write": [planted.join("sub")]}), "read", "/");
    assert!(got.starts_with("apply:") && got.contains("symlink"), "{got}");
}

#[test]
fn landlock_skips_grants_that_do_not_exist_and_refuses_a_hidden_path_in_a_write_grant() {
    landlock_abi();
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({"fs": true, "read": [dir.path().join("no-cargo")], "write": [dir.path(), "/nonexistent/x"]});
    assert_ok(&policy, "write", &path(&dir.path().join("f")));
    let policy = json!({"fs": true, "write": [dir.path()], "hide": [dir.path().join("secret")]});
    let got = probe(&policy, "read", "/");
    assert!(got.starts_with("apply:") && got.contains("cannot be hidden"), "{got}");
}

#[test]
fn landlock_allows_tcp_connect_only_to_the_listed_ports() {
    assert!(landlock_abi() >= 4);
    let allowed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (allowed, other) = (allowed.local_addr().unwrap().port(), other.local_addr().unwrap().port());
    let policy = json!({"tcp_connect": [allowed]});
    assert_ok(&policy, "tcp", &allowed.to_string());
    assert_errno(&policy, "tcp", &other.to_string(), libc::EACCES);
    assert_ok(&json!({}), "tcp", &other.to_string());
}

#[test]
fn landlock_scope_refuses_an_abstract_unix_socket_bound_outside_the_domain() {
    assert!(landlock_abi() >= 6);
    use std::os::linux::net::SocketAddrExt;
    let name = format!("paige-confine-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    assert_ok(&json!({}), "abstract", &name);
    assert_errno(&json!({"scope_abstract_unix": true}), "abstract", &name, libc::EPERM);
}

struct Sleeper(Child);
impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn landlock_scope_refuses_signals_to_a_process_outside_the_domain_even_as_root() {
    assert!(landlock_abi() >= 6);
    let mut sleeper = Sleeper(Command::new("sleep").arg("60").stdin(Stdio::null()).spawn().unwrap());
    let pid = sleeper.0.id().to_string();
    assert_errno(&json!({"scope_signals": true}), "kill", &pid, libc::EPERM);
    assert!(sleeper.0.try_wait().unwrap().is_none(), "the process outside the domain was killed");
    assert_ok(&json!({}), "kill", &pid);
}

#[test]
fn seccomp_refuses_unix_sockets_but_keeps_socketpair() {
    let policy = json!({"deny_unix_sockets": true});
    assert_errno(&policy, "unix-socket", "", libc::EPERM);
    assert_ok(&policy, "socketpair", "");
    assert_ok(&json!({}), "unix-socket", "");
}

#[test]
fn seccomp_refuses_tiocsti_on_a_pty_even_with_high_bits_in_the_command() {
    // As root TIOCSTI works without the filter (CAP_SYS_ADMIN passes the kernel's own check).
    assert_ok(&json!({}), "tiocsti", "");
    let policy = json!({"seccomp": true});
    assert_errno(&policy, "tiocsti", "", libc::EPERM);
    assert_errno(&policy, "tiocsti-high-bits", "", libc::EPERM);
}

#[test]
fn seccomp_refuses_ptrace_and_process_vm_access() {
    assert_ok(&json!({}), "ptrace-traceme", "");
    assert_ok(&json!({}), "process-vm-readv", "");
    let policy = json!({"seccomp": true});
    assert_errno(&policy, "ptrace-traceme", "", libc::EPERM);
    assert_errno(&policy, "process-vm-readv", "", libc::EPERM);
}

#[test]
fn deny_mounts_refuses_mount_as_root_alone_and_with_caps_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let target = path(dir.path());
    assert_ok(&json!({}), "mount", &target);
    assert_errno(&json!({"deny_mounts": true}), "mount", &target, libc::EPERM);
    assert_errno(&json!({"deny_mounts": true, "drop_caps": true}), "mount", &target, libc::EPERM);
}

#[test]
fn deny_mounts_refuses_a_new_user_namespace_while_programs_still_start() {
    assert_ok(&json!({}), "unshare-user", "");
    let policy = json!({"deny_mounts": true});
    assert_errno(&policy, "unshare-user", "", libc::EPERM);
    // clone3 answers ENOSYS: libc falls back to clone, which is allowed without CLONE_NEWUSER.
    assert_ok(&policy, "spawn", "true");
    let full = json!({"seccomp": true, "deny_mounts": true, "deny_unix_sockets": true, "drop_caps": true});
    assert_ok(&full, "spawn", "true");
}

#[test]
fn drop_caps_empties_every_capability_set_and_mknod_fails_as_root() {
    let dir = tempfile::tempdir().unwrap();
    assert_ok(&json!({}), "mknod", &path(&dir.path().join("null-before")));
    let policy = json!({"drop_caps": true});
    assert_errno(&policy, "mknod", &path(&dir.path().join("null-after")), libc::EPERM);
    let status = probe(&policy, "status", "");
    for field in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        let line = status.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("{field} in {status}"));
        assert!(line.ends_with("0000000000000000"), "{line}");
    }
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
}

#[test]
fn every_layer_together_is_reported_applied_and_leaves_the_grants_usable() {
    let dir = tempfile::tempdir().unwrap();
    let policy = json!({
        "fs": true, "read": ["/usr", "/etc"], "write": [dir.path()], "devices": ["/dev/null"],
        "tcp_connect": [443], "scope_abstract_unix": true, "scope_signals": true,
        "seccomp": true, "deny_unix_sockets": true, "deny_mounts": true, "drop_caps": true,
    });
    assert_ok(&policy, "write", &path(&dir.path().join("f")));
    assert_ok(&policy, "write", "/dev/null");
    assert_errno(&policy, "write", "/etc/paige-confine-test", libc::EACCES);
    let out = Command::new(PROBE).arg(policy.to_string()).args(["read", "/etc/hostname"]).output().unwrap();
    let applied: paige_confine::Applied = serde_json::from_slice(&out.stderr).expect("Applied on stderr");
    let want = paige_confine::Applied {
        landlock_abi: Some(landlock_abi()),
        fs: true,
        net: true,
        scopes: true,
        seccomp: true,
        caps_dropped: true,
    };
    assert_eq!(applied, want);
    let out = Command::new(PROBE).arg("{}").args(["read", "/etc/hostname"]).output().unwrap();
    let nothing: paige_confine::Applied = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(
        nothing,
        paige_confine::Applied {
            landlock_abi: None,
            fs: false,
            net: false,
            scopes: false,
            seccomp: false,
            caps_dropped: false
        }
    );
}
