//! `paige confine` (hidden): the built `paige` applies a policy to itself and execs the
//! program, which runs confined; a policy that cannot be applied exits 126 and runs nothing.

use std::os::unix::fs::PermissionsExt;

use crate::World;

fn world_with_path() -> World {
    let mut world = World::empty();
    world.set("PATH", "/usr/local/bin:/usr/bin:/bin");
    world
}

#[test]
fn confine_runs_the_program_with_a_read_only_project_and_a_writable_scratch_dir() {
    let mut world = world_with_path();
    let project = world.project();
    std::fs::write(project.join("main.rs"), "fn main() {}\n").expect("write");
    let scratch = world.root.path().join("scratch");
    std::fs::create_dir(&scratch).expect("mkdir");
    let report = world.root.path().join("applied.json");
    world.set("PAIGE_CONFINE_REPORT", &report.display().to_string());
    let policy = serde_json::json!({
        "fs": true, "read": ["/"], "write": [scratch], "devices": ["/dev/null"],
        "seccomp": true, "deny_mounts": true, "drop_caps": true,
    });
    let script = format!(
        "if echo changed > {p}/main.rs 2>/dev/null; then echo WROTE; else echo project-read-only; fi; \
         touch {p}/new.rs 2>/dev/null && echo CREATED; cat {p}/main.rs; echo ran > {s}/out; echo done",
        p = project.display(),
        s = scratch.display()
    );
    let (status, stdout, stderr) = world.run(&["confine", "--policy", &policy.to_string(), "--", "sh", "-c", &script]);
    assert!(status.success(), "status {status}; stdout {stdout}; stderr {stderr}");
    assert_eq!(stdout, "project-read-only\nfn main() {}\ndone\n", "stderr: {stderr}");
    assert_eq!(std::fs::read_to_string(project.join("main.rs")).unwrap(), "fn main() {}\n");
    assert!(!project.join("new.rs").exists());
    assert_eq!(std::fs::read_to_string(scratch.join("out")).unwrap(), "ran\n");
    let applied: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).expect("report")).expect("JSON");
    assert_eq!(applied["fs"], true, "{applied}");
    assert_eq!(applied["seccomp"], true, "{applied}");
    assert_eq!(applied["caps_dropped"], true, "{applied}");
    assert_eq!(applied["net"], false, "{applied}");
    assert_eq!(std::fs::metadata(&report).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn confine_exits_126_naming_what_could_not_be_applied_and_runs_nothing() {
    let world = world_with_path();
    let marker = world.root.path().join("started");
    let script = format!("touch {}", marker.display());
    for (policy, says) in [
        ("{\"fs\": true, \"read\": [\"/\"], \"scope_signal\": true}", "unknown field `scope_signal`"),
        ("not json", "the policy is not valid"),
        ("{\"fs\": true, \"read\": [\"relative/dir\"]}", "must be absolute"),
    ] {
        let (status, stdout, stderr) = world.run(&["confine", "--policy", policy, "--", "sh", "-c", &script]);
        assert_eq!(status.code(), Some(126), "{policy}: stdout {stdout}; stderr {stderr}");
        assert!(stderr.starts_with("paige confine: "), "{stderr}");
        assert!(stderr.contains(says) && stderr.trim_end().ends_with("; Claude Code was not started"), "{stderr}");
        assert!(stdout.is_empty());
        assert!(!marker.exists(), "the program ran under {policy}");
    }
}

#[test]
fn confine_refuses_a_report_path_that_is_a_planted_symlink() {
    let mut world = world_with_path();
    let target = world.root.path().join("elsewhere");
    let report = world.root.path().join("applied.json");
    std::os::unix::fs::symlink(&target, &report).expect("symlink");
    world.set("PAIGE_CONFINE_REPORT", &report.display().to_string());
    let (status, _, stderr) = world.run(&["confine", "--policy", "{\"seccomp\": true}", "--", "true"]);
    assert_eq!(status.code(), Some(126), "{stderr}");
    assert!(stderr.contains("cannot make the report"), "{stderr}");
    assert!(!target.exists());
}

/// Issue 39, item 2: bubblewrap's view is a slave of the machine's mounts, so a mount made
/// outside once the jail runs (an autofs or NFS remount, a new bind under the project)
/// arrived in it writable. As an ordinary user in a jail with a user namespace — the cell
/// where Claude Code's own sandbox runs and Landlock's file rules cannot — `paige confine`'s
/// private mounts keep it out. The control, the same jail without them, writes through it.
/// Needs root (to mount outside and to run the jail as nobody with `setpriv`).
#[test]
fn in_the_jail_a_mount_made_outside_later_never_arrives_writable() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let user = match crate::guard::unprivileged_user() {
        Some(user) if crate::guard::jail_runs() => user,
        _ => panic!("this test needs root, setpriv and bubblewrap (scripts/test.sh runs as root and installs them)"),
    };
    // A shared mount of the test's own, so that mounts under it propagate (as under / on a
    // systemd machine); not under /tmp, which the jail replaces.
    let base =
        std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("later-mount-{}", std::process::id()));
    let (project, data) = (base.join("project"), base.join("data"));
    let config = data.join("claude");
    for dir in [&project.join("later"), &config] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    for dir in [&base, &project, &data] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    std::os::unix::fs::chown(&config, Some(user.0), Some(user.1)).expect("chown");
    let sh = |script: &str| {
        let status = Command::new("sh").args(["-c", script]).status().expect("sh");
        assert!(status.success(), "{script}");
    };
    let b = base.display();
    sh(&format!("mount --bind {b} {b} && mount --make-shared {b}"));
    struct Unmount(String);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("sh").args(["-c", &format!("umount -R -l {0}; rm -rf {0}", self.0)]).status();
        }
    }
    let _unmount = Unmount(b.to_string());
    let bwrap = paige_core::launch::jail::probe(std::env::var_os("PATH").as_deref()).expect("probe").bwrap;
    let spec = paige_core::launch::jail::JailSpec {
        bwrap: bwrap.clone(),
        userns: true,
        project_dir: project.clone(),
        data_dir: data.clone(),
        claude_config_dir: config.clone(),
        run_files: vec![],
        keep_under_tmp: vec![],
        gate: None,
        writable: Vec::new(),
    };
    let (ready, go) = (config.join("ready"), config.join("go"));
    let script = format!(
        "touch {ready}; while [ ! -e {go} ]; do sleep 0.05; done; echo x > {p}/later/f 2>/dev/null && echo WROTE; echo done",
        ready = ready.display(),
        go = go.display(),
        p = project.display()
    );
    for (private, writes) in [(false, true), (true, false)] {
        let policy = serde_json::json!({ "private_mounts": private }).to_string();
        let mut command = Command::new("setpriv");
        command.arg(format!("--reuid={}", user.0)).arg(format!("--regid={}", user.1)).args(["--clear-groups", "--"]);
        command.arg(&bwrap).args(paige_core::launch::jail::args(&spec)).arg("--");
        command.args([crate::PAIGE, "confine", "--policy", &policy, "--", "sh", "-c", &script]);
        let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("the jail starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !ready.exists() {
            assert!(Instant::now() < deadline, "the jail never started (private mounts: {private})");
            std::thread::sleep(Duration::from_millis(20));
        }
        // Outside, once the jail runs: a writable mount under the project.
        let later = project.join("later");
        sh(&format!("mount -t tmpfs -o mode=0777 later {}", later.display()));
        std::fs::write(&go, "").expect("go");
        let out = child.wait_with_output().expect("the jail ends");
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        sh(&format!("umount {}", later.display()));
        for marker in [&ready, &go] {
            std::fs::remove_file(marker).expect("marker");
        }
        assert!(stdout.contains("done"), "the script ran to its end: {stdout} {stderr}");
        assert_eq!(stdout.contains("WROTE"), writes, "private mounts {private}: {stdout} {stderr}");
    }
}
