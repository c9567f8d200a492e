//! `paige doctor --guard` through the real `claude` (PAIGE_TEST_CLAUDE), and the jail's own
//! process namespace: an interrupted `paige claude` leaves nothing running.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::claude::claude;
use crate::{PAIGE, World};

/// The doctor's PATH: the `claude` under test first, then the system's.
fn guard_path(claude: &str) -> String {
    let dir = PathBuf::from(claude).parent().expect("claude's dir").display().to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

/// Whether the jail can run here; says why not on stderr.
pub(crate) fn jail_runs() -> bool {
    match paige_core::launch::jail::probe(std::env::var_os("PATH").as_deref()) {
        Ok(_) => true,
        Err(why) => {
            crate::skipped(&format!("the jail cannot run here ({why}): the guard test that needs it is skipped"));
            false
        }
    }
}

/// `paige doctor --guard ARGS` as `user` (uid, gid) when given: (exit code, stdout).
fn doctor_guard(claude: &str, args: &[&str], user: Option<(u32, u32)>) -> (Option<i32>, String) {
    doctor_guard_on(args, user, &guard_path(claude))
}

/// [`doctor_guard`] with `path` as the machine's PATH (a failing `bwrap`, no `socat`).
fn doctor_guard_on(args: &[&str], user: Option<(u32, u32)>, path: &str) -> (Option<i32>, String) {
    let mut command = match user {
        Some((uid, gid)) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={uid}")).arg(format!("--regid={gid}")).args(["--clear-groups", "--", PAIGE]);
            c
        }
        None => Command::new(PAIGE),
    };
    let output = command
        .args(["doctor", "--guard"])
        .args(args)
        .env_clear()
        .env("PATH", path)
        .env("TMPDIR", std::env::temp_dir())
        .stdin(Stdio::null())
        .output()
        .expect("paige doctor runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    eprintln!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    (output.status.code(), stdout)
}

/// The attempt lines of a report: (verdict, name).
fn attempts(report: &str) -> Vec<(String, String)> {
    report
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let verdict = words.next()?;
            let name = words.next()?;
            matches!(verdict, "HELD" | "ESCAPED" | "SKIP" | "ERROR" | "FAIL").then(|| (verdict.into(), name.into()))
        })
        .collect()
}

/// The report names its configuration first, has a line per attempt with a known verdict,
/// the control held, and ends with the tally.
fn assert_well_formed(report: &str, jail: &str) -> Vec<(String, String)> {
    let first = report.lines().next().unwrap_or_default();
    let first = first.replace("governed, Claude Code started for INT-001 (agent/ writable) · ", "");
    assert!(first.starts_with(&format!("paige doctor --guard: jail {jail} · Claude Code sandbox ")), "{first}");
    assert!(first.contains(" · uid ") && first.contains("Claude Code 2."), "{first}");
    let lines = attempts(report);
    assert!(lines.len() >= 60, "the whole table ran: {} attempts", lines.len());
    let control = report.lines().find(|l| l.contains(" control-noop ")).expect("the control's line");
    assert!(control.trim_start().starts_with("HELD"), "a harmless command runs, so a HELD means something: {control}");
    let last = report.lines().rfind(|l| l.contains(" attempts in ")).expect("the tally");
    assert!(last.starts_with(&format!("{} attempts in ", lines.len())), "{last}");
    lines
}

#[test]
fn guard_check_as_root_with_the_jail_holds_every_attempt() {
    let Some(claude) = claude() else { return };
    if !jail_runs() {
        return;
    }
    // Late writers are looked for 30 s after the last attempt (the "30 s later"), and
    // the result is also written as the app keeps it per Claude Code version.
    let out = tempfile::tempdir().expect("dir");
    let file = out.path().join("report.json");
    let args = ["--guard-wait-secs", "30", "--guard-report", file.to_str().expect("utf-8")];
    let (code, report) = doctor_guard(&claude, &args, None);
    let lines = assert_well_formed(&report, "on");
    let escaped: Vec<_> = lines.iter().filter(|(v, _)| v != "HELD" && v != "SKIP").collect();
    assert!(escaped.is_empty(), "every attempt held: {escaped:?}");
    assert_eq!(code, Some(0), "the check passes");
    assert!(report.contains("  latency  20 `true` Bash calls: p50 "), "{report}");
    let kept = report_file(&file);
    assert!(kept.passed && kept.escaped == 0 && kept.failed_attempts.is_empty(), "{kept:?}");
    let held = lines.iter().filter(|(v, _)| v == "HELD").count();
    assert_eq!(kept.held, held, "{kept:?}");
    assert!(report.contains(&format!("Claude Code {} (", kept.claude_version)), "{kept:?}");
}

/// What `--guard-report` wrote.
fn report_file(path: &std::path::Path) -> paige_core::launch::verify::GuardReport {
    let text = std::fs::read_to_string(path).expect("the report file is written");
    serde_json::from_str(&text).expect("a GuardReport")
}

#[test]
fn guard_check_as_an_unprivileged_user_with_the_jail_holds_every_attempt() {
    let Some(claude) = claude() else { return };
    let Some(user) = unprivileged_user() else { return };
    if !jail_runs() {
        return;
    }
    let (code, report) = doctor_guard_on(&[], Some(user), &users_path(&guard_path(&claude)));
    let lines = assert_well_formed(&report, "on");
    assert!(report.lines().next().unwrap_or_default().contains(&format!(" · uid {} · ", user.0)), "{report}");
    let past_hook = lines.iter().filter(|(v, name)| v == "HELD" && name.starts_with("os-")).count();
    assert!(past_hook >= 6, "the attempts past the hook ran as this user too: {lines:?}");
    let escaped: Vec<_> = lines.iter().filter(|(v, _)| v != "HELD" && v != "SKIP").collect();
    assert!(escaped.is_empty(), "every attempt held: {escaped:?}");
    assert_eq!(code, Some(0), "the check passes");
}

/// With three layers switched off — the jail, Landlock and Paige's hooks — what is left (Claude Code's own
/// Bash sandbox, the detector) is known to leak (issue 27): the check fails and says which
/// attempt got through and what it changed. (Without the jail alone, the hooks now hold the
/// whole table.)
#[test]
fn guard_check_without_the_jail_and_the_hooks_fails_naming_the_attempts_that_escaped() {
    let Some(claude) = claude() else { return };
    let out = tempfile::tempdir().expect("dir");
    let file = out.path().join("report.json");
    let args = [
        "--guard-without",
        "jail",
        "--guard-without",
        "landlock",
        "--guard-without",
        "hooks",
        "--guard-report",
        file.to_str().expect("utf-8"),
    ];
    let (code, report) = doctor_guard(&claude, &args, None);
    let lines = assert_well_formed(&report, "off");
    let kept = report_file(&file);
    assert!(!kept.passed && kept.escaped > 0, "{kept:?}");
    assert!(report.lines().next().unwrap_or_default().contains(" · hooks off · "), "{report}");
    let escaped: Vec<&(String, String)> = lines.iter().filter(|(v, _)| v == "ESCAPED").collect();
    assert!(!escaped.is_empty(), "something escaped without the jail");
    assert_eq!(code, Some(1), "the check fails");
    let names: Vec<&String> = escaped.iter().map(|(_, name)| name).collect();
    assert!(names.iter().all(|name| kept.failed_attempts.contains(name)), "{names:?} in {kept:?}");
    for (_, name) in escaped {
        let line = report.lines().find(|l| l.contains(&format!("ESCAPED  {name} "))).expect("its line");
        assert!(
            line.contains("project/") || line.contains("home/") || line.contains("data/"),
            "names the path: {line}"
        );
    }
}

/// The cells of issue 39's matrix beyond the full jail: each runs the whole table through the
/// real `claude`, and every attempt — those past the hook included — must hold.
fn assert_cell_holds(user: Option<(u32, u32)>, path: &str, jail: &str, expect: &[&str]) {
    assert_cell_holds_with(&[], user, path, jail, expect);
}

fn assert_cell_holds_with(args: &[&str], user: Option<(u32, u32)>, path: &str, jail: &str, expect: &[&str]) {
    let (code, report) = doctor_guard_on(&[&["--guard-jobs", "2"][..], args].concat(), user, path);
    let lines = assert_well_formed(&report, jail);
    for line in expect {
        assert!(report.lines().any(|l| l.contains(line)), "the report names {line:?}:\n{report}");
    }
    let past_hook = lines.iter().filter(|(v, name)| v == "HELD" && name.starts_with("os-")).count();
    assert!(past_hook >= 6, "the attempts past the hook ran and held: {lines:?}");
    let escaped: Vec<_> = lines.iter().filter(|(v, _)| v != "HELD" && v != "SKIP").collect();
    assert!(escaped.is_empty(), "every attempt held: {escaped:?}");
    assert_eq!(code, Some(0), "the check passes");
}

/// A `bwrap` as Ubuntu 24.04's AppArmor default leaves it, first on a PATH: no user namespace
/// for anyone (root may still run it without one), failing with AppArmor's own words.
fn apparmor_path(claude: &str, bin: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(bin).expect("bin");
    let script = "#!/bin/sh\n\
        for a in \"$@\"; do [ \"$a\" = --unshare-user ] && { echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1; }; done\n\
        [ \"$(id -u)\" = 0 ] || { echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1; }\n\
        exec /usr/bin/bwrap \"$@\"\n";
    std::fs::write(bin.join("bwrap"), script).expect("bwrap");
    for dir in [bin, bin.parent().expect("parent")] {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    std::fs::set_permissions(bin.join("bwrap"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    format!("{}:{}", bin.display(), guard_path(claude))
}

/// Cell: root, the jail without Claude Code's sandbox (no `socat`): the jail and Landlock's
/// file rules inside it hold alone.
#[test]
fn guard_cell_root_jail_alone_without_socat_holds_every_attempt() {
    let claude = claude().expect("PAIGE_TEST_CLAUDE");
    let bin = tempfile::tempdir().expect("bin");
    let path = path_without(&guard_path(&claude), "socat", &bin.path().join("bin"));
    assert_cell_holds(None, &path, "on", &["Claude Code's sandbox  off", "Landlock               on"]);
}

/// Cell: an ordinary user, the jail alone (no `socat`).
#[test]
fn guard_cell_user_jail_alone_without_socat_holds_every_attempt() {
    let claude = claude().expect("PAIGE_TEST_CLAUDE");
    let user = unprivileged_user().expect("root with setpriv (scripts/test.sh runs as root)");
    let bin = tempfile::tempdir().expect("bin");
    let path = path_without(&users_path(&guard_path(&claude)), "socat", &bin.path().join("bin"));
    std::fs::set_permissions(bin.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    assert_cell_holds(Some(user), &path, "on", &["Claude Code's sandbox  off", "user namespace         on"]);
}

/// Cell: root where AppArmor forbids user namespaces: the jail runs without one, with every
/// capability dropped, and Claude Code's sandbox cannot run.
#[test]
fn guard_cell_root_without_user_namespaces_holds_every_attempt() {
    let claude = claude().expect("PAIGE_TEST_CLAUDE");
    let bin = tempfile::tempdir().expect("bin");
    let path = apparmor_path(&claude, &bin.path().join("bin"));
    assert_cell_holds(None, &path, "on", &["user namespace         off", "capabilities           on"]);
}

/// Cell: an ordinary user where AppArmor forbids user namespaces: no jail at all, Landlock and
/// seccomp alone (`paige confine`) hold.
#[test]
fn guard_cell_user_without_user_namespaces_landlock_alone_holds_every_attempt() {
    let claude = claude().expect("PAIGE_TEST_CLAUDE");
    let user = unprivileged_user().expect("root with setpriv (scripts/test.sh runs as root)");
    let bin = tempfile::tempdir().expect("bin");
    let path = users_path(&apparmor_path(&claude, &bin.path().join("bin")));
    assert_cell_holds(Some(user), &path, "off", &["jail                   off", "Landlock               on"]);
}

/// Issue 42: governed mode in the guard's matrix. Each sample project has an intent owning
/// `agent/`; Claude Code, started for it (`paige claude --intent INT-001`), selects it and
/// then runs the whole attack table: nothing outside `agent/` may change. Cell: root, the jail.
#[test]
fn guard_cell_governed_root_jail_holds_every_attempt() {
    let Some(claude) = claude() else { return };
    if !jail_runs() {
        return;
    }
    let governed = ["--guard-governed"];
    let expect = ["governed, Claude Code started for INT-001 (agent/ writable)", "Scope Violation"];
    assert_cell_holds_with(&governed, None, &guard_path(&claude), "on", &expect);
}

/// Governed cell: an ordinary user, the jail (governed mode never runs Claude Code's sandbox).
#[test]
fn guard_cell_governed_user_jail_holds_every_attempt() {
    let claude = claude().expect("PAIGE_TEST_CLAUDE");
    let user = unprivileged_user().expect("root with setpriv (scripts/test.sh runs as root)");
    let path = users_path(&guard_path(&claude));
    let expect = ["governed, Claude Code started for INT-001", "user namespace         on"];
    assert_cell_holds_with(&["--guard-governed"], Some(user), &path, "on", &expect);
}

/// Governed cell: root where AppArmor forbids user namespaces (the jail without one, every
/// capability dropped).
#[test]
fn guard_cell_governed_root_without_user_namespaces_holds_every_attempt() {
    let claude = claude().expect("PAIGE_TEST_CLAUDE");
    let bin = tempfile::tempdir().expect("bin");
    let path = apparmor_path(&claude, &bin.path().join("bin"));
    let expect = ["governed, Claude Code started for INT-001", "user namespace         off"];
    assert_cell_holds_with(&["--guard-governed"], None, &path, "on", &expect);
}

/// Governed cell: an ordinary user where AppArmor forbids user namespaces — Landlock and
/// seccomp alone keep everything but the intent's folder read-only.
#[test]
fn guard_cell_governed_user_landlock_alone_holds_every_attempt() {
    let claude = claude().expect("PAIGE_TEST_CLAUDE");
    let user = unprivileged_user().expect("root with setpriv (scripts/test.sh runs as root)");
    let bin = tempfile::tempdir().expect("bin");
    let path = users_path(&apparmor_path(&claude, &bin.path().join("bin")));
    let expect =
        ["governed, Claude Code started for INT-001", "jail                   off", "Landlock               on"];
    assert_cell_holds_with(&["--guard-governed"], Some(user), &path, "off", &expect);
}

/// `path` without the folders an ordinary user cannot enter (root's pyenv shims): their
/// programs would be found and fail to run, where the system's own serve that user.
fn users_path(path: &str) -> String {
    let users = std::env::split_paths(path).filter(|dir| !dir.starts_with("/root"));
    std::env::join_paths(users).expect("PATH").to_string_lossy().into_owned()
}

/// `path` as one folder, `bin` (created), of links to what its folders hold but `left_out`.
fn path_without(path: &str, left_out: &str, bin: &std::path::Path) -> String {
    std::fs::create_dir_all(bin).expect("bin");
    for dir in std::env::split_paths(path) {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let link = bin.join(entry.file_name());
            if entry.file_name() != left_out && !link.exists() {
                let _ = std::os::unix::fs::symlink(entry.path(), link);
            }
        }
    }
    bin.display().to_string()
}

/// The unprivileged user (nobody) when this process is root and has `setpriv`.
pub(crate) fn unprivileged_user() -> Option<(u32, u32)> {
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
        crate::skipped("not root: the unprivileged guard test is skipped");
        return None;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|dir| dir.join("setpriv").is_file()) {
        crate::skipped("no setpriv on PATH (util-linux): the unprivileged guard test is skipped");
        return None;
    }
    Some((65534, 65534))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_paige_claude_leaves_no_process_behind() {
    orphan_check(libc::SIGINT).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_paige_claude_leaves_no_process_behind() {
    orphan_check(libc::SIGKILL).await;
}

/// `paige claude` runs a model turn whose Bash call never ends (`tail -f`, read-only, so
/// every layer lets it run); the test sends `signal` to `paige claude` (Paige's gate,
/// which it became, with the jail as its child) once the command runs: every process of the jail is gone at once.
/// Claude Code's own sandbox is kept off (no `socat` on PATH), since it would end the
/// command too: this is the jail's doing alone (with `PAIGE_JAIL=0` the `tail` lives on).
async fn orphan_check(signal: i32) {
    use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
    let Some(claude) = claude() else { return };
    if !jail_runs() {
        return;
    }
    let mut world = World::ready();
    // Paige decides at its start that Claude Code runs in the jail: bwrap must be on its PATH.
    world.set("PATH", &std::env::var("PATH").unwrap_or_default());
    let nonce = format!("guard-orphan-{}-{signal}", std::process::id());
    std::fs::write(world.project().join(&nonce), "watched\n").expect("file");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let fake = FakeAnthropic::start().await.expect("fake");
    let agent_loop =
        || Matcher::custom(|r| r.body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()));
    let call = json!({"type": "tool_use", "id": "toolu_orphan", "name": "Bash",
        "input": {"command": format!("tail -f {nonce}"), "description": "follow"}});
    fake.once(agent_loop(), Reply::message(vec![call], "tool_use"));
    fake.always(Matcher::Any, Reply::text("done"));
    let home = world.root.path().join("home");
    // Not under /tmp, which is empty in the jail; one per test (each removes its own at the end).
    let bin = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("guard-bin-without-socat-{}-{signal}", std::process::id()));
    let mut child = Command::new(PAIGE)
        .args(["claude", "-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"])
        .current_dir(world.project())
        .env_clear()
        .env("PATH", path_without(&guard_path(&claude), "socat", &bin))
        .env("HOME", &home)
        .env("DATA_DIR", world.data_dir())
        .env("ANTHROPIC_BASE_URL", fake.base_url())
        .env("ANTHROPIC_API_KEY", "sk-guard")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("paige claude starts");
    // Every process whose command line names the file; `tail` itself among them once it runs.
    let running = |nonce: &str| -> Vec<(u32, String)> {
        let procs = std::fs::read_dir("/proc").expect("/proc").flatten();
        procs
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(nonce))
            })
            .map(|pid| {
                (pid, std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim().to_owned())
            })
            .collect()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !running(&nonce).iter().any(|(_, comm)| comm == "tail") {
        assert!(Instant::now() < deadline, "the model's `tail -f` never started");
        assert!(child.try_wait().expect("wait").is_none(), "paige claude ended before the command ran");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // SAFETY: kill(2) on our own unreaped child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let _ = child.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !running(&nonce).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let left = running(&nonce);
    for (pid, _) in &left {
        // SAFETY: a leftover of this test, found by its unique name; killed so it does not linger.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    let _ = std::fs::remove_dir_all(&bin);
    assert!(left.is_empty(), "processes left running after the signal: {left:?}");
    drop(paige);
}
