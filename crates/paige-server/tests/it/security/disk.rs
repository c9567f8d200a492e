//! What Paige leaves on disk and what it finds there: its private files' modes, and files
//! planted where it writes or reads its own (a symlink, a FIFO, a huge file).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use paige_core::Config;
use paige_fake_anthropic::FakeAnthropic;
use rmcp::model::{CallToolRequestParams, JsonObject};
use serde_json::{Value, json};

use super::{INTENTS, tempdir};
use crate::tools::stateless_client;
use crate::{Running, TOKEN};

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_instance_keeps_its_data_and_run_dirs_0700_and_run_file_settings_and_database_0600() {
    let project = tempdir();
    let parent = tempdir();
    let data = parent.path().join("fresh/paige");
    let config = Config::new(project.path().to_owned(), data.clone(), "key");
    let instance = paige_server::Instance::start(
        config,
        Arc::new(paige_core::SystemClock),
        paige_core::memory::Memory::disabled("not needed here"),
        None,
    )
    .await
    .expect("start");
    let mut settings = paige_core::settings::Settings::default();
    settings.set_api_key("sk-ant-secret");
    settings.save(&instance.core.config().data_dir).expect("settings saved");
    let data = instance.core.config().data_dir.clone();
    assert_eq!(instance.run_file(), data.join("run/server.json"));
    for dir in [&data, &data.join("run")] {
        assert_eq!(mode_of(dir), 0o700, "{}", dir.display());
    }
    for file in ["run/server.json", "settings.json", "paige.db"] {
        assert_eq!(mode_of(&data.join(file)), 0o600, "{file}");
    }
    instance.stop(Duration::from_secs(2)).await.expect("stop");
}

#[test]
fn the_run_file_is_private_even_where_a_symlink_or_an_open_run_dir_was_left() {
    let data = tempdir();
    let outside = tempdir();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep").expect("victim");
    std::fs::create_dir(data.path().join("run")).expect("run");
    std::fs::set_permissions(data.path().join("run"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // A link named as this process's temp files are: a live writer's, so never swept.
    let tmp = data.path().join(format!("run/.paige-tmp-{}-planted", std::process::id()));
    std::os::unix::fs::symlink(&victim, &tmp).expect("symlink among the temp names");
    std::os::unix::fs::symlink(&victim, data.path().join("run/server.json")).expect("symlink at the name");
    let info = paige_core::run_info::RunInfo {
        pid: std::process::id(),
        port: 1,
        token: Some("t".into()),
        agent_token: Some("a".into()),
        local_token: None,
        jail: None,
        landlock: None,
        no_jail_because: None,
        project_dir: "/p".into(),
        started_at: Utc::now(),
    };
    let written = paige_core::run_info::write(data.path(), &info).expect("written");
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep", "the link's target is untouched");
    let meta = std::fs::symlink_metadata(&written).expect("run file");
    assert!(meta.is_file(), "the run file is a regular file, not the planted link");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(mode_of(&data.path().join("run")), 0o700, "the run dir is made private");
    assert_eq!(paige_core::run_info::read(data.path()).expect("read"), Some(info));
}

#[test]
fn claude_codes_mcp_config_and_settings_hold_the_token_in_new_0600_files_in_a_0700_run_dir() {
    use paige_core::launch::{AgentMode, AgentServer, agent_command};
    let (project, data, bin, outside) = (tempdir(), tempdir(), tempdir(), tempdir());
    std::fs::write(bin.path().join("claude"), "#!/bin/sh\n").expect("fake claude");
    std::fs::set_permissions(bin.path().join("claude"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let run = data.path().join("run");
    let server = AgentServer { port: 1, token: TOKEN.into(), hook_command: Some("/usr/bin/paige".into()) };
    let mode = AgentMode::Coach { sandbox: false };
    let path = Some(bin.path().as_os_str());
    agent_command(project.path(), data.path(), &server, mode, None, path, None).expect("first command");
    assert_eq!(mode_of(&run), 0o700, "a run dir the terminal creates");
    // Leftovers of an earlier process with this pid: a readable file and a planted link.
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "keep").expect("victim");
    let id = std::process::id();
    std::fs::set_permissions(run.join(format!("mcp-{id}.json")), std::fs::Permissions::from_mode(0o644))
        .expect("chmod");
    std::fs::remove_file(run.join(format!("settings-{id}.json"))).expect("remove");
    std::os::unix::fs::symlink(&victim, run.join(format!("settings-{id}.json"))).expect("plant");
    agent_command(project.path(), data.path(), &server, mode, None, path, None).expect("second command");
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep", "written through a planted link");
    for name in ["mcp", "settings"] {
        let file = run.join(format!("{name}-{id}.json"));
        assert!(std::fs::symlink_metadata(&file).expect("file").is_file(), "{name}");
        assert_eq!(mode_of(&file), 0o600, "{name}");
    }
    assert!(std::fs::read_to_string(run.join(format!("mcp-{id}.json"))).expect("mcp").contains(TOKEN));
}

/// Makes each FIFO in `fifos` give way: a reader stuck on one sees end of file and a writer
/// stuck opening one gets a reader. A failed test must not leave a thread blocked inside the
/// governance lock for the rest of the suite.
fn release(fifos: &[std::path::PathBuf]) {
    use std::os::unix::fs::OpenOptionsExt;
    for _ in 0..3 {
        for fifo in fifos {
            let nonblocking = |read: bool| {
                std::fs::OpenOptions::new()
                    .read(read)
                    .write(!read)
                    .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                    .open(fifo)
            };
            let (reader, writer) = (nonblocking(true), nonblocking(false));
            drop((reader, writer));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    rustix::fs::mknodat(rustix::fs::CWD, path, rustix::fs::FileType::Fifo, 0o644.into(), 0).expect("mkfifo");
}

/// POSTs a hook payload; the status and body, or why not within 5 s.
async fn hook(server: &Running, event: &str, payload: Value) -> Result<(u16, Value), String> {
    let request = reqwest::Client::new()
        .post(format!("{}/hooks/{event}", server.base))
        .bearer_auth(TOKEN)
        .timeout(Duration::from_secs(5))
        .json(&payload)
        .send();
    let response = request.await.map_err(|e| format!("{event}: {e}"))?;
    Ok((response.status().as_u16(), response.json().await.unwrap_or(Value::Null)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn governance_files_that_are_fifos_huge_or_symlinks_out_never_hang_a_hook_or_tool_nor_leak_or_write_outside() {
    let fake = FakeAnthropic::start().await.expect("fake api");
    let (server, outer) = crate::fuzz_mcp::server(&fake).await;
    let root = server.fixture.core.project_root().path().to_owned();
    let secret = outer.join("sibling/secret.txt");
    let orchestration = root.join(".orchestration");
    std::fs::create_dir(&orchestration).expect("governed");
    std::fs::write(orchestration.join("active_intents.yaml"), INTENTS).expect("intents");
    std::os::unix::fs::symlink(&secret, root.join("AGENT.md")).expect("lessons link out");
    let fifos =
        [root.join("CLAUDE.md"), orchestration.join("agent_trace.jsonl"), orchestration.join("active_intents.yaml")];
    mkfifo(&fifos[0]);
    mkfifo(&fifos[1]);
    let client = stateless_client(&server).await;
    let select = |id: &str| {
        let args = JsonObject::from_iter([("intent_id".to_owned(), json!(id))]);
        client.call_tool(CallToolRequestParams::new("select_active_intent").with_arguments(args))
    };
    let text = |result: rmcp::model::CallToolResult| {
        result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<String>()
    };
    let mut failures = Vec::new();
    // The lessons and the ledger: a link out and two FIFOs.
    match tokio::time::timeout(Duration::from_secs(5), select("INT-001")).await {
        Ok(Ok(result)) => {
            let context = text(result);
            if !context.contains("INT-001") || context.contains("secret") {
                failures.push(format!("select_active_intent answered {context:?}"));
            }
        }
        Ok(Err(err)) => failures.push(format!("select_active_intent failed: {err}")),
        Err(_) => failures.push("select_active_intent hung on a FIFO".into()),
    }
    release(&fifos);
    // A denied write is ledgered; three failed calls in a row add a lesson to AGENT.md.
    let write = json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": root.join("src/main.rs"), "content": "x"}});
    match hook(&server, "PreToolUse", write).await {
        Ok((200, decision)) if decision["decision"] == "deny" => {}
        other => failures.push(format!("a PreToolUse Write with the ledger a FIFO: {other:?}")),
    }
    release(&fifos);
    for _ in 0..3 {
        let failed = json!({"session_id": "s", "hook_event_name": "PostToolUseFailure", "tool_name": "Bash",
            "tool_input": {"command": "make"}, "error": "exit 2"});
        if let Err(err) = hook(&server, "PostToolUseFailure", failed).await {
            failures.push(err);
        }
        release(&fifos);
    }
    // The intents themselves a FIFO: refused, and a mutating call fails safe.
    mkfifo(&fifos[2]);
    match tokio::time::timeout(Duration::from_secs(5), select("INT-001")).await {
        Ok(Ok(result)) if result.is_error == Some(true) => {}
        other => failures.push(format!("select_active_intent with the intents a FIFO: {other:?}")),
    }
    release(&fifos);
    let write = json!({"session_id": "t", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": root.join("src/main.rs"), "content": "x"}});
    match hook(&server, "PreToolUse", write).await {
        Ok((200, decision)) if decision["decision"] == "deny" => {}
        other => failures.push(format!("a PreToolUse Write with the intents a FIFO: {other:?}")),
    }
    release(&fifos);
    // A 1 GiB CLAUDE.md is not read into the context.
    for fifo in &fifos {
        std::fs::remove_file(fifo).expect("no FIFO");
    }
    std::fs::write(&fifos[2], INTENTS).expect("intents back");
    std::fs::File::create(&fifos[0]).expect("create").set_len(1 << 30).expect("sparse 1 GiB");
    match tokio::time::timeout(Duration::from_secs(5), select("INT-001")).await {
        Ok(Ok(result)) if !text(result.clone()).contains("From CLAUDE.md") && result.is_error != Some(true) => {}
        other => failures.push(format!("select_active_intent with a 1 GiB CLAUDE.md: {other:?}")),
    }
    release(&fifos);
    let outside = std::fs::read_to_string(&secret).expect("secret");
    if outside != "secret\n" {
        failures.push(format!("a lesson was written outside the project: {outside:?}"));
    }
    let failures: Vec<String> = failures.into_iter().map(|f| f.chars().take(400).collect()).collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orchestration_dir_linked_out_of_the_project_is_never_read_or_written_and_mutations_are_denied() {
    let fake = FakeAnthropic::start().await.expect("fake api");
    let (server, outer) = crate::fuzz_mcp::server(&fake).await;
    let root = server.fixture.core.project_root().path().to_owned();
    let elsewhere = outer.join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("elsewhere");
    std::fs::write(elsewhere.join("active_intents.yaml"), INTENTS).expect("intents");
    std::fs::write(elsewhere.join("agent_trace.jsonl"), "").expect("ledger");
    std::os::unix::fs::symlink(&elsewhere, root.join(".orchestration")).expect("orchestration link out");
    let client = stateless_client(&server).await;
    let args = JsonObject::from_iter([("intent_id".to_owned(), json!("INT-001"))]);
    let select = client.call_tool(CallToolRequestParams::new("select_active_intent").with_arguments(args));
    let mut failures = Vec::new();
    match tokio::time::timeout(Duration::from_secs(5), select).await {
        Ok(Ok(result)) if result.is_error == Some(true) => {}
        other => failures.push(format!("select_active_intent through a linked .orchestration: {other:?}")),
    }
    let write = json!({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": root.join("src/main.rs"), "content": "x"}});
    match hook(&server, "PreToolUse", write).await {
        Ok((200, decision))
            if decision["decision"] == "deny" && decision["reason"].as_str().is_some_and(|r| r.contains("symlink")) => {
        }
        other => failures.push(format!("a PreToolUse Write through a linked .orchestration: {other:?}")),
    }
    if let Ok(created) = paige_core::governance::Orchestration::new(&root).init() {
        failures.push(format!("init wrote through the link: {created:?}"));
    }
    let mut outside: Vec<_> =
        std::fs::read_dir(&elsewhere).expect("elsewhere").flatten().map(|e| e.file_name()).collect();
    outside.sort();
    if outside != ["active_intents.yaml", "agent_trace.jsonl"] {
        failures.push(format!("files appeared outside the project: {outside:?}"));
    }
    let ledger = std::fs::read_to_string(elsewhere.join("agent_trace.jsonl")).expect("ledger");
    if !ledger.is_empty() {
        failures.push(format!("the ledger outside the project was written: {ledger:?}"));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
