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
