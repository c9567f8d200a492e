//! `paige doctor` as a real process, its key check against the fake Messages API.

use std::process::ExitStatus;

use paige_fake_anthropic::FakeAnthropic;

use crate::World;

const KEY: &str = "sk-ant-e2e-good-key";

/// Runs `paige doctor` off the async runtime, so the fake server keeps serving meanwhile.
/// Hands the world back so its directories outlive the run.
async fn doctor(world: World) -> (World, ExitStatus, String, String) {
    tokio::task::spawn_blocking(move || {
        let (status, stdout, stderr) = world.run(&["doctor"]);
        (world, status, stdout, stderr)
    })
    .await
    .expect("doctor ran")
}

fn world_against(base_url: &str, key: &str) -> World {
    let mut world = World::ready();
    world.set("ANTHROPIC_BASE_URL", base_url).set("ANTHROPIC_API_KEY", key);
    world
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reports_config_data_dir_database_and_an_accepted_key() {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    fake.require_api_key(KEY);
    let world = world_against(&fake.base_url(), KEY);
    let (world, status, stdout, stderr) = doctor(world).await;
    assert!(status.success(), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for line in
        ["ok    config", "ok    data dir", "ok    database", "ok    anthropic  key accepted by http://127.0.0.1:"]
    {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    assert!(stdout.contains("all checks passed"), "{stdout}");
    // No OS layer in this world: the UI token is said to be kept off disk.
    assert!(stdout.contains("WARN  ui token   never written to disk"), "{stdout}");
    assert!(!stdout.contains(KEY), "the key is never printed:\n{stdout}");
    assert!(world.data_dir().join("paige.db").exists(), "the database was opened (created)");

    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "one minimal request");
    assert_eq!((requests[0].method.as_str(), requests[0].path.as_str()), ("GET", "/v1/models?limit=1"));
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    assert!(fake.message_requests().is_empty(), "no model was run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_fails_clearly_with_exit_1_when_the_key_is_rejected() {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    fake.require_api_key(KEY);
    let (_world, status, stdout, _) = doctor(world_against(&fake.base_url(), "sk-ant-wrong-key")).await;
    assert_eq!(status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL  anthropic  the Anthropic API rejected the key (HTTP 401): authentication_error"),
        "{stdout}"
    );
    assert!(stdout.contains("ok    database"), "the other checks still run:\n{stdout}");
    assert!(stdout.contains("1 check failed"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_fails_clearly_with_exit_1_when_the_api_is_unreachable() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let (_world, status, stdout, _) = doctor(world_against(&url, KEY)).await;
    assert_eq!(status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  anthropic  cannot reach the Anthropic API"), "{stdout}");
}

#[test]
fn doctor_without_a_key_names_the_missing_variable_and_exits_1() {
    let mut world = World::ready();
    world.unset("ANTHROPIC_API_KEY");
    let (status, stdout, _) = world.run(&["doctor"]);
    assert_eq!(status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  config     missing required environment variable: ANTHROPIC_API_KEY"), "{stdout}");
}

#[test]
fn doctor_help_says_what_it_checks() {
    let (status, stdout, _) = World::ready().run(&["doctor", "--help"]);
    assert!(status.success());
    assert!(stdout.contains("Anthropic API key") && stdout.contains("ANTHROPIC_BASE_URL"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_warns_when_data_dir_is_readable_by_others_without_failing() {
    use std::os::unix::fs::PermissionsExt;
    let fake = FakeAnthropic::start().await.expect("fake starts");
    fake.require_api_key(KEY);
    let world = world_against(&fake.base_url(), KEY);
    std::fs::create_dir_all(world.data_dir()).expect("data dir");
    std::fs::set_permissions(world.data_dir(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (world, status, stdout, _) = doctor(world).await;
    assert!(status.success(), "a warning is not a failure:\n{stdout}");
    assert!(stdout.contains("WARN  data dir") && stdout.contains("readable by other users (mode 755)"), "{stdout}");
    std::fs::set_permissions(world.data_dir(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let (_world, _, stdout, _) = doctor(world).await;
    assert!(stdout.contains("ok    data dir") && stdout.contains("private"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_warns_that_coach_mode_runs_without_the_os_sandbox_when_bubblewrap_is_missing() {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    let mut world = world_against(&fake.base_url(), KEY);
    // A PATH without bwrap and socat (the doctor itself needs nothing from it).
    let empty = world.root.path().join("empty-bin");
    std::fs::create_dir_all(&empty).expect("dir");
    world.set("PATH", &empty.display().to_string());
    let (_world, status, stdout, _) = doctor(world).await;
    assert!(status.success(), "a warning, not a failure:\n{stdout}");
    assert!(
        stdout.contains("WARN  sandbox") && stdout.contains("bwrap and socat not installed"),
        "missing the sandbox warning in:\n{stdout}"
    );
    assert!(
        stdout.contains("WARN  read-only ") && stdout.contains("bubblewrap is not installed"),
        "missing the read-only view's warning in:\n{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reports_which_memory_store_and_model_are_in_use_and_warns_without_the_model() {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    let models = std::env::var("PAIGE_MODEL_DIR").expect("PAIGE_MODEL_DIR is not set: run scripts/test.sh");
    let mut world = world_against(&fake.base_url(), KEY);
    world.set("PAIGE_MODEL_DIR", &models);
    let (mut world, status, stdout, _) = doctor(world).await;
    assert!(status.success(), "{stdout}");
    let line = stdout.lines().find(|l| l.contains("memory")).unwrap_or_default().to_owned();
    assert!(line.starts_with("  ok    memory     the embedded store at "), "{stdout}");
    assert!(line.contains("all-MiniLM-L6-v2 (384-d) from") && line.contains("loaded and embedding"), "{line}");
    world.set("PAIGE_MODEL_DIR", "/nonexistent/models");
    let (_world, status, stdout, _) = doctor(world).await;
    assert!(status.success(), "memory without the model is a warning, not a failure:\n{stdout}");
    assert!(stdout.contains("WARN  memory") && stdout.contains("ranking by keywords only"), "{stdout}");
}

/// The live processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let running = state.rsplit(')').next().and_then(|r| r.split_whitespace().next()).is_some_and(|s| s != "Z");
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            running && String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(needle)
        })
        .collect()
}

/// A `claude` in the world's `bin/` that answers `--version` as Claude Code 9.9.9 and
/// otherwise runs `then`; returns the folder, for `PATH`.
fn stand_in_claude(world: &World, then: &str) -> std::path::PathBuf {
    let bin = world.root.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let claude = bin.join("claude");
    let script = format!("#!/bin/sh\ncase \"$1\" in --version) echo '9.9.9 (Claude Code)'; exit 0;; esac\n{then}\n");
    std::fs::write(&claude, script).expect("claude");
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    bin
}

/// `paige doctor` says whether the guard's self-check passed against the installed Claude
/// Code on these layers, and names the report the app keeps (the one a passing check writes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_names_the_guard_report_for_the_installed_claude_code_and_reads_it() {
    let fake = FakeAnthropic::start().await.expect("fake starts");
    let mut world = world_against(&fake.base_url(), KEY);
    let bin = stand_in_claude(&world, "exit 0");
    world.set("PATH", &format!("{}:/usr/bin:/bin", bin.display()));
    let (world, _, stdout, _) = doctor(world).await;
    let line = stdout.lines().find(|l| l.contains("guard")).unwrap_or_else(|| panic!("no guard line:\n{stdout}"));
    assert!(line.contains("not checked against Claude Code 9.9.9 on these layers yet"), "{line}");
    let kept = line.rsplit("(report: ").next().and_then(|r| r.strip_suffix(')')).expect("the report's path");
    assert!(kept.starts_with(&world.data_dir().join("guard").display().to_string()), "{kept}");
    let report = serde_json::json!({"claude_version": "9.9.9", "passed": true, "held": 42, "escaped": 0,
        "skipped": 0, "errors": 0, "failed_attempts": [], "seconds": 1.0});
    std::fs::create_dir_all(std::path::Path::new(kept).parent().expect("dir")).expect("mkdir");
    std::fs::write(kept, report.to_string()).expect("report");
    let (_world, _, stdout, _) = doctor(world).await;
    assert!(stdout.contains("checked against Claude Code 9.9.9 on these layers: 42 attempts, all held"), "{stdout}");
}

/// `paige doctor --guard` killed outright (the app that started it killed, say) takes along
/// the Claude Code and the `paige serve` it started: each dies with it (PR_SET_PDEATHSIG),
/// even the server a job thread started and handed on. Claude Code here is a stand-in that
/// only sleeps, so the check is mid-attempt when it is killed; no jail, so Claude Code is
/// the doctor's own child.
#[test]
fn a_killed_guard_check_leaves_neither_its_claude_code_nor_its_server_running() {
    let mut world = World::ready();
    let marker = format!("{}", 3000 + std::process::id() % 1000);
    let bin = stand_in_claude(&world, &format!("exec sleep {marker}.5"));
    world.set("PATH", &format!("{}:/usr/bin:/bin", bin.display())).set("PAIGE_JAIL", "0");
    let mut doctor = world.spawn(&["doctor", "--guard", "--guard-jobs", "1"]);
    let sleeper = format!("sleep {marker}.5");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while processes_with(&sleeper).is_empty() {
        assert!(std::time::Instant::now() < deadline, "Claude Code never started:\n{}", doctor.output());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // This check's own servers: its children.
    let parent = |pid: &u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        stat.rsplit(')').next().and_then(|rest| rest.split_whitespace().nth(1)).and_then(|p| p.parse::<u32>().ok())
    };
    let servers: Vec<u32> =
        processes_with("serve --project").into_iter().filter(|pid| parent(pid) == Some(doctor.child.id())).collect();
    assert!(!servers.is_empty(), "no `paige serve` of the check runs");
    doctor.signal("KILL");
    let _ = doctor.child.wait();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let left = || {
        let mut left = processes_with(&sleeper);
        left.extend(servers.iter().filter(|pid| processes_with("serve --project").contains(pid)));
        left
    };
    while !left().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(left(), Vec::<u32>::new(), "still running after the check was killed");
}
