//! The change detector (layer 3): whatever a watched call changed in the learner's files is
//! undone in coach mode — and in governed mode outside the intent's scope — with every
//! replaced version kept; the learner's own saves through Paige and lockfiles are kept.

use std::os::unix::fs::PermissionsExt;

use paige_core::db::VersionKind;
use paige_core::governance::HookDecision;
use paige_core::governance::ledger::TraceKind;
use serde_json::json;

use super::governance::{A, Gov, INTENTS, denied};

impl Gov {
    pub(crate) fn bash_pre(&self, id: &str, command: &str) -> HookDecision {
        self.bash_pre_with(id, json!({"command": command}))
    }

    pub(crate) fn bash_pre_with(&self, id: &str, input: serde_json::Value) -> HookDecision {
        self.hook("PreToolUse-Write", A, json!({"tool_name": "Bash", "tool_input": input, "tool_use_id": id}))
    }

    pub(crate) fn bash_post(&self, id: &str, command: &str) -> HookDecision {
        let patch = json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": id,
                           "tool_response": {"stdout": "", "stderr": "", "interrupted": false}});
        self.hook("PostToolUse-Write-create", A, patch)
    }

    /// A watched call that changes nothing (it primes the baseline and the re-walk), then
    /// the PreToolUse of the next one, `id`.
    fn quiet_call_then_open(&self, id: &str) {
        assert_eq!(self.bash_pre("quiet", "cargo build"), HookDecision::None);
        assert_eq!(self.bash_post("quiet", "cargo build"), HookDecision::None, "nothing changed");
        assert_eq!(self.bash_pre(id, "cargo build"), HookDecision::None);
    }

    pub(crate) fn stop(&self) -> HookDecision {
        self.hook("Stop", A, json!({}))
    }

    pub(crate) fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root().join(rel)).ok()
    }

    pub(crate) fn put(&self, rel: &str, content: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, content).expect("write");
    }
}

fn blocked(decision: &HookDecision) -> &str {
    match decision {
        HookDecision::Block { reason } => reason,
        other => panic!("expected the model to be told, got {other:?}"),
    }
}

const FILES: &[(&str, &str)] = &[
    ("src/main.rs", "fn main() {}\n"),
    ("src/lib.rs", "pub fn add() {}\n"),
    ("run.sh", "#!/bin/sh\necho hi\n"),
    ("Cargo.lock", "# lock v1\n"),
    (".gitignore", "target/\n"),
];

#[test]
fn coach_mode_undoes_every_change_a_watched_command_made_and_tells_the_model_why() {
    let gov = Gov::coach(FILES);
    std::fs::set_permissions(gov.root().join("run.sh"), std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert_eq!(
        gov.bash_pre("t1", "cargo build"),
        HookDecision::None,
        "a read-only command runs, watched: `cargo build` runs the learner's build scripts"
    );
    assert!(gov.core.watching());
    // What `make` did: edit, create, delete, chmod, a lockfile and an ignored build output.
    gov.put("src/main.rs", "fn main() { hacked() }\n");
    gov.put("src/new.rs", "// new\n");
    std::fs::remove_file(gov.root().join("src/lib.rs")).expect("rm");
    std::fs::set_permissions(gov.root().join("run.sh"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    gov.put("Cargo.lock", "# lock v2\n");
    gov.put("target/debug/app", "binary");

    let reason = blocked(&gov.bash_post("t1", "cargo build")).to_owned();
    assert!(reason.contains("coach mode"), "{reason}");
    for path in ["src/main.rs (changed): undone", "src/new.rs (created): undone", "src/lib.rs (deleted): undone"] {
        assert!(reason.contains(path), "{path} in {reason}");
    }
    assert!(reason.contains("run.sh (re-permissioned): undone"), "{reason}");
    assert!(!reason.contains("Cargo.lock"), "a lockfile is kept, not undone: {reason}");
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() {}\n"));
    assert_eq!(gov.read("src/lib.rs").as_deref(), Some("pub fn add() {}\n"));
    assert_eq!(gov.read("src/new.rs"), None);
    let mode = std::fs::metadata(gov.root().join("run.sh")).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    assert_eq!(gov.read("Cargo.lock").as_deref(), Some("# lock v2\n"));
    assert_eq!(gov.read("target/debug/app").as_deref(), Some("binary"), "ignored paths are not the learner's");
    assert!(!gov.core.watching());

    // Nothing is lost: what the call left is kept, and can be brought back.
    let versions = gov.core.db().file_versions(&gov.root(), Some("src/main.rs")).expect("versions");
    let replaced = versions.iter().find(|v| v.kind == VersionKind::Replaced).expect("the replaced version is kept");
    assert_eq!(gov.core.restore_version(replaced.id).expect("restore"), "src/main.rs");
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() { hacked() }\n"));
}

#[test]
fn the_learners_save_through_paige_during_a_call_is_not_undone_but_an_outside_change_is() {
    let gov = Gov::coach(FILES);
    assert_eq!(gov.bash_pre("t1", "cargo test"), HookDecision::None);
    gov.core.write_file("src/main.rs", "fn main() { learner() }\n".into()).expect("learner saves");
    gov.put("src/lib.rs", "// an editor outside Paige, or the command\n");
    let reason = blocked(&gov.bash_post("t1", "cargo test")).to_owned();
    assert!(!reason.contains("src/main.rs"), "{reason}");
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() { learner() }\n"));
    assert_eq!(gov.read("src/lib.rs").as_deref(), Some("pub fn add() {}\n"));
    // The next call's baseline is the learner's save: undoing goes back to it, not before.
    assert_eq!(gov.bash_pre("t2", "cargo build"), HookDecision::None);
    gov.put("src/main.rs", "x\n");
    blocked(&gov.bash_post("t2", "cargo build"));
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() { learner() }\n"));
}

#[test]
fn a_same_size_write_with_its_mtime_put_back_is_caught_by_ctime() {
    let gov = Gov::coach(FILES);
    let path = gov.root().join("src/main.rs");
    let before = std::fs::metadata(&path).expect("meta").modified().expect("mtime");
    assert_eq!(gov.bash_pre("t1", "cargo build"), HookDecision::None);
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&path, "fn main() {X}\n").expect("same size");
    std::fs::File::options().write(true).open(&path).expect("open").set_modified(before).expect("touch -r");
    blocked(&gov.bash_post("t1", "cargo build"));
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() {}\n"));
}

#[test]
fn parallel_calls_share_one_window_that_closes_with_the_last_and_background_ones_at_stop() {
    let gov = Gov::coach(FILES);
    assert_eq!(gov.bash_pre("a", "cargo build -p one"), HookDecision::None);
    assert_eq!(gov.bash_pre("b", "cargo build -p two"), HookDecision::None);
    gov.put("src/main.rs", "changed by a\n");
    assert_eq!(gov.bash_post("a", "cargo build -p one"), HookDecision::None, "b still runs: the window stays open");
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("changed by a\n"));
    blocked(&gov.bash_post("b", "cargo build -p two"));
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() {}\n"));

    assert_eq!(
        gov.bash_pre_with("c", json!({"command": "cargo build -p serve", "run_in_background": true})),
        HookDecision::None
    );
    assert_eq!(
        gov.bash_post("c", "cargo build -p serve"),
        HookDecision::None,
        "a background call is watched until Stop"
    );
    gov.put("src/lib.rs", "written later by the server\n");
    assert!(gov.core.watching());
    assert_eq!(gov.stop(), HookDecision::None);
    assert_eq!(gov.read("src/lib.rs").as_deref(), Some("pub fn add() {}\n"));
    assert!(!gov.core.watching());
}

#[test]
fn coach_mode_denies_other_servers_mcp_tools_unless_the_learner_allowed_them() {
    let gov = Gov::coach(FILES);
    let call = |tool: &str| gov.pre(A, tool, json!({"path": "src/main.rs"}));
    assert!(denied(&call("mcp__files__write_file")).contains("coach.allowedMcpTools"));
    let mut settings = paige_core::settings::Settings::load(&gov.core.config().data_dir).expect("settings");
    settings.coach.allowed_mcp_tools = vec!["mcp__files__*".into()];
    settings.save(&gov.core.config().data_dir).expect("save");
    assert_eq!(call("mcp__files__write_file"), HookDecision::None, "allowed, and watched");
    assert!(gov.core.watching());
    assert!(denied(&call("mcp__other__write_file")).contains("another server's tool"));
}

/// A command that names no file it writes (`cargo build`, read-only by its words) runs; what
/// its build script then wrote beyond the scope is undone — the detector stays behind the
/// check of what a command names.
#[test]
fn governed_mode_ledgers_bash_writes_inside_the_scope_with_their_hash_and_undoes_the_rest() {
    let gov = Gov::governed(INTENTS, &[("src/weather/w.rs", "w1\n"), ("src/auth/a.rs", "a1\n")]);
    gov.prompt(A);
    assert_eq!(gov.select(A, "INT-001"), HookDecision::None);
    assert_eq!(gov.bash_pre("g1", "cargo build"), HookDecision::None);
    gov.put("src/weather/w.rs", "w2\n");
    gov.put("src/auth/a.rs", "a2\n");
    let reason = blocked(&gov.bash_post("g1", "cargo build")).to_owned();
    assert!(reason.contains("src/auth/a.rs"), "{reason}");
    assert!(!reason.contains("src/weather/w.rs"), "{reason}");
    assert_eq!(gov.read("src/weather/w.rs").as_deref(), Some("w2\n"));
    assert_eq!(gov.read("src/auth/a.rs").as_deref(), Some("a1\n"));
    let trace = gov.trace();
    let kept = trace.iter().find(|e| e.file.as_deref() == Some("src/weather/w.rs")).expect("ledgered");
    assert_eq!(kept.kind, TraceKind::Mutation);
    assert_eq!(kept.file_hash.as_deref(), Some(paige_core::governance::ledger::sha256_hex(b"w2\n").as_str()));
    assert_eq!(kept.tool, "Bash");
    let undone = trace.iter().find(|e| e.file.as_deref() == Some("src/auth/a.rs")).expect("recorded");
    assert_eq!(undone.kind, TraceKind::Denial);
    assert!(undone.reason.as_deref().unwrap_or("").contains("Scope Violation"), "{undone:?}");
}

#[test]
fn the_version_store_stays_under_its_cap_without_dropping_a_files_latest_version() {
    let t = {
        let project = tempfile::tempdir().expect("project");
        std::fs::create_dir_all(project.path().join("src")).expect("mkdir");
        std::fs::write(project.path().join("src/a.txt"), "0".repeat(600 << 10)).expect("write");
        let data = tempfile::tempdir().expect("data");
        let mut config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test");
        config.limits.max_version_store_bytes = 1 << 20;
        let core = std::sync::Arc::new(paige_core::Core::open(config, super::clock()).expect("core"));
        (core, project, data)
    };
    let (core, project, _data) = &t;
    let root = core.project_root().path().to_owned();
    let transcript = _data.path().join("transcript.jsonl");
    let input = |id: &str| {
        let call = json!({"transcript_path": transcript, "tool_use_id": id, "tool_name": "Bash",
            "tool_input": {"command": "cargo build"}});
        super::governance::record_call(&call);
        paige_core::governance::HookInput {
            session_id: A.into(),
            transcript_path: Some(transcript.clone()),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": "cargo build"})),
            tool_use_id: Some(id.into()),
            ..Default::default()
        }
    };
    use paige_core::governance::HookEvent;
    for round in 1..=4u8 {
        // The learner changes the file between calls: each version is 600 KiB.
        std::fs::write(project.path().join("src/a.txt"), round.to_string().repeat(600 << 10)).expect("write");
        core.handle_hook(HookEvent::PreToolUse, &input(&format!("r{round}")));
        core.handle_hook(HookEvent::PostToolUse, &input(&format!("r{round}")));
    }
    let total = core.db().file_versions_bytes().expect("total");
    assert!(total <= 1 << 20, "the store holds {total} bytes, over its 1 MiB cap");
    let latest = &core.db().file_versions(&root, Some("src/a.txt")).expect("versions")[0];
    assert_eq!(latest.sha256, paige_core::governance::ledger::sha256_hex("4".repeat(600 << 10).as_bytes()));
}

#[test]
fn the_terminal_mode_follows_the_project_and_the_ui_is_told_when_the_os_sandbox_is_missing() {
    use paige_core::launch::AgentMode;
    let coach = Gov::coach(FILES);
    let mut events = coach.core.subscribe();
    let empty = tempfile::tempdir().expect("empty PATH");
    assert_eq!(coach.core.agent_mode(Some(empty.path().as_os_str())), AgentMode::Coach { sandbox: false });
    let told = format!("{:?}", events.try_recv().expect("a notice"));
    assert!(told.contains("WITHOUT an operating-system guard") && told.contains("Error"), "{told}");

    let governed = Gov::governed(INTENTS, &[("src/weather/w.rs", "w\n")]);
    assert_eq!(governed.core.agent_mode(Some(empty.path().as_os_str())), AgentMode::Governed);
    // Switching takes effect on the next terminal start: the mode is read each time.
    std::fs::create_dir_all(coach.root().join(".orchestration")).expect("mkdir");
    assert_eq!(coach.core.agent_mode(Some(empty.path().as_os_str())), AgentMode::Governed);
}

#[test]
fn with_the_watcher_running_changes_between_calls_are_the_learners_and_stay() {
    let gov = Gov::coach(FILES);
    gov.core.start_watcher().expect("watcher");
    assert_eq!(gov.bash_pre("t1", "cargo build"), HookDecision::None);
    assert_eq!(gov.bash_post("t1", "cargo build"), HookDecision::None, "nothing changed");
    // Between calls the learner edits in another editor, adds a folder and deletes a file.
    gov.put("src/lib.rs", "pub fn add() { /* learner */ }\n");
    gov.put("src/new/mod.rs", "// learner\n");
    std::fs::remove_file(gov.root().join("run.sh")).expect("rm");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(gov.bash_pre("t2", "cargo build"), HookDecision::None);
    gov.put("src/main.rs", "// the command\n");
    let reason = blocked(&gov.bash_post("t2", "cargo build")).to_owned();
    assert!(reason.contains("src/main.rs") && !reason.contains("src/lib.rs") && !reason.contains("run.sh"), "{reason}");
    assert_eq!(gov.read("src/lib.rs").as_deref(), Some("pub fn add() { /* learner */ }\n"));
    assert_eq!(gov.read("src/new/mod.rs").as_deref(), Some("// learner\n"));
    assert_eq!(gov.read("run.sh"), None);
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() {}\n"));
    // The learner's versions are kept too: the one before the edit is restorable.
    let versions = gov.core.db().file_versions(&gov.root(), Some("src/lib.rs")).expect("versions");
    assert_eq!(versions.len(), 2, "{versions:?}");
}

#[test]
fn a_call_that_rewrites_gitignore_to_hide_its_edits_is_undone_whole() {
    let gov = Gov::coach(FILES);
    gov.quiet_call_then_open("t1");
    gov.put(".gitignore", "target/\nsrc/\n");
    gov.put("src/main.rs", "// hidden edit\n");
    gov.put("src/new/deep.rs", "// new in a new folder\n");
    let reason = blocked(&gov.bash_post("t1", "cargo build")).to_owned();
    assert!(reason.contains(".gitignore (changed): undone"), "{reason}");
    assert_eq!(gov.read(".gitignore").as_deref(), Some("target/\n"));
    assert_eq!(gov.read("src/main.rs").as_deref(), Some("fn main() {}\n"));
    // The next call sees the restored rules: src/new/deep.rs is a learner path again, and new.
    assert_eq!(gov.bash_pre("t2", "cargo build"), HookDecision::None);
    assert_eq!(gov.bash_post("t2", "cargo build"), HookDecision::None, "nothing else changed");
    let kept = gov.core.db().file_versions(&gov.root(), Some("src/main.rs")).expect("versions");
    assert!(kept.iter().any(|v| v.kind == VersionKind::Replaced), "the hidden edit is kept: {kept:?}");
}

#[test]
fn the_closing_re_walk_finds_new_folders_files_and_deletions_like_a_full_walk() {
    let gov = Gov::coach(FILES);
    gov.quiet_call_then_open("t1");
    gov.put("src/a/b/c.rs", "// deep\n");
    gov.put("target/debug/out", "ignored\n");
    gov.put("node_modules/x/index.js", "excluded\n");
    std::fs::remove_file(gov.root().join("src/lib.rs")).expect("rm");
    std::os::unix::fs::symlink("/etc/passwd", gov.root().join("src/link")).expect("symlink");
    let reason = blocked(&gov.bash_post("t1", "cargo build")).to_owned();
    assert!(reason.contains("src/a/b/c.rs (created): undone"), "{reason}");
    assert!(reason.contains("src/lib.rs (deleted): undone"), "{reason}");
    assert!(
        !reason.contains("target/") && !reason.contains("node_modules") && !reason.contains("src/link"),
        "{reason}"
    );
    assert_eq!(gov.read("src/a/b/c.rs"), None);
    assert_eq!(gov.read("target/debug/out").as_deref(), Some("ignored\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_is_taken_in_when_it_is_watched_so_the_first_call_stores_nothing() {
    let gov = Gov::coach(FILES);
    gov.core.start_watcher().expect("watcher");
    let root = gov.root();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while gov.core.db().file_versions(&root, None).expect("versions").len() < FILES.len() {
        assert!(std::time::Instant::now() < deadline, "the detector was not primed");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = gov.core.db().file_versions(&root, None).expect("versions").len();
    let core = gov.core.clone();
    let gov = tokio::task::spawn_blocking(move || {
        assert_eq!(gov.bash_pre("t1", "cargo build"), HookDecision::None);
        gov
    })
    .await
    .expect("hook");
    assert_eq!(gov.core.db().file_versions(&root, None).expect("versions").len(), before);
    core.shutdown().await.expect("shutdown");
}
