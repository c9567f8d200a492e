//! `Instance`: the one start/stop lifecycle `paige serve` and the desktop app share.

use std::sync::Arc;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_starts_serving_with_its_run_file_and_stops_without_a_trace() {
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    let config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "key");
    let instance = paige_server::Instance::start(
        config,
        Arc::new(paige_core::SystemClock),
        paige_core::memory::Memory::disabled("not needed here"),
        None,
    )
    .await
    .expect("start");
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(instance.run_file()).expect("run file")).expect("json");
    assert_eq!(info["port"], instance.port);
    assert_eq!(info["agentToken"], instance.agent_token.expose());
    let health = format!("http://127.0.0.1:{}/health", instance.port);
    assert_eq!(reqwest::get(&health).await.expect("health").status(), 200);
    instance.stop(Duration::from_secs(2)).await.expect("stop");
    instance.ended().await;
    assert!(!instance.run_file().exists(), "the run file is removed");
    assert!(reqwest::get(&health).await.is_err(), "nothing listens any more");
    instance.stop(Duration::from_secs(2)).await.expect("stopping twice is fine");
}
