//! `file:save` over the real `/ws` refuses `.git/`, Paige's own temp names and the audit
//! ledger: a `fs:save_error` that says why, and nothing written.

use serde_json::json;

use crate::running;
use crate::ws::{connect, next_of, send};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn saves_into_git_paige_temp_files_or_the_ledger_are_refused_and_write_nothing() {
    let server = running().await;
    let root = server.fixture.core.project_root().path().to_owned();
    for dir in [".git/hooks", "vendor/lib/.git", ".orchestration"] {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
    }
    std::fs::write(root.join(".git/config"), "[core]\n").expect("config");
    std::fs::write(root.join(".orchestration/agent_trace.jsonl"), "{}\n").expect("ledger");
    std::os::unix::fs::symlink(".git", root.join("g")).expect("an alias of .git");
    let refused = [
        (".git/config", "inside .git/"),
        (".git/hooks/pre-commit", "inside .git/"),
        ("./.git/config", "inside .git/"),
        ("vendor/lib/.git/config", "inside .git/"),
        (".GIT/config", "inside .git/"),
        (".git", "inside .git/"),
        ("g/config", "inside .git/"),
        ("src/.paige-save-a1b2c3", "Paige's own temp files"),
        (".paige-tmp-1-x", "Paige's own temp files"),
        (".orchestration/agent_trace.jsonl", "written by governance only"),
    ];
    let mut socket = connect(&server).await;
    for (path, why) in refused {
        send(
            &mut socket,
            json!({"type": "file:save", "payload": {"path": path, "content": "[core]\n\tfsmonitor = evil\n"}}),
        )
        .await;
        let error = next_of(&mut socket, "fs:save_error").await;
        assert_eq!(error["payload"]["path"], path);
        let message = error["payload"]["error"].as_str().expect("error text");
        assert!(message.contains(why), "{path}: {message}");
    }
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).expect("config"), "[core]\n");
    assert_eq!(std::fs::read_to_string(root.join(".orchestration/agent_trace.jsonl")).expect("ledger"), "{}\n");
    for never in [".git/hooks/pre-commit", "vendor/lib/.git/config", ".GIT", "src", ".paige-tmp-1-x"] {
        assert!(!root.join(never).exists(), "{never} was created");
    }
    // Names that only look alike are the learner's to save.
    for path in [".gitignore", ".github/workflows/ci.yml", "src/git.rs", ".orchestration/intents.yaml"] {
        send(&mut socket, json!({"type": "file:save", "payload": {"path": path, "content": "ok\n"}})).await;
        let ack = next_of(&mut socket, "fs:save_ack").await;
        assert_eq!(ack["payload"]["path"], path);
        assert_eq!(std::fs::read_to_string(root.join(path)).expect("saved"), "ok\n");
    }
}
