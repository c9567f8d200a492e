//! The change detector never touches the learner's work: a window whose call lost its end
//! (Claude Code interrupted or killed: no PostToolUse) is closed without undoing; files the
//! learner has open or saved in Paige are theirs; a new file is moved into the version store,
//! never deleted; the placeholders Claude Code's sandbox mounts over are left alone. Driven by
//! the exact payloads Claude Code 2.1.330 sends (`tests/fixtures/claude-code-hooks/`).

use paige_core::db::VersionKind;
use paige_core::governance::HookDecision;
use paige_core::protocol::ConnectionId;
use serde_json::json;

use super::governance::{A, Gov};

const B: &str = "session-b";
/// An unknown command: coach mode lets it run, watched.
const COMMAND: &str = "sleep 30; cargo build";

const FILES: &[(&str, &str)] = &[
    ("src/main.rs", "fn main() {}\n"),
    ("src/lib.rs", "pub fn add() {}\n"),
    ("run.sh", "#!/bin/sh\necho hi\n"),
    (".gitignore", "target/\n"),
];

impl Gov {
    /// Claude Code's PreToolUse for a Bash call.
    fn bash_starts(&self, session: &str, id: &str) -> HookDecision {
        let input = json!({"command": COMMAND, "description": "scripted"});
        self.hook("PreToolUse-Bash", session, json!({"tool_use_id": id, "tool_input": input}))
    }

    /// Claude Code's PostToolUse for it.
    fn bash_ends(&self, session: &str, id: &str) -> HookDecision {
        let input = json!({"command": COMMAND, "description": "scripted"});
        self.hook("PostToolUse-Bash", session, json!({"tool_use_id": id, "tool_input": input}))
    }

    /// A UI frame, as a `/ws` client sends it.
    fn ui(&self, frame: serde_json::Value) {
        let reply = self.core.handle_text(ConnectionId(7), &frame.to_string());
        assert_eq!(reply, None, "the UI frame was taken: {frame}");
    }

    fn save(&self, rel: &str, content: &str) {
        self.ui(json!({"type": "file:save", "payload": {"path": rel, "content": content}}));
    }

    /// The learner's own editor (or a file manager): a plain write Paige does not see.
    fn edit(&self, rel: &str, content: &str) {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, content).expect("write");
    }

    fn content(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root().join(rel)).ok()
    }
}

fn model_told(decision: &HookDecision) -> &str {
    match decision {
        HookDecision::Block { reason } => reason,
        other => panic!("expected the model to be told, got {other:?}"),
    }
}

/// Every notice the UI was sent, as text.
fn notices(events: &mut tokio::sync::broadcast::Receiver<paige_core::Event>) -> String {
    let mut all = String::new();
    while let Ok(event) = events.try_recv() {
        all.push_str(&format!("{event:?}\n"));
    }
    all
}

/// The learner's work after the interrupted command: a save through Paige's editor, an edit
/// and a new file from their own editor.
fn learner_works(gov: &Gov) {
    gov.save("src/main.rs", "fn main() { learner() }\n");
    gov.edit("run.sh", "#!/bin/sh\necho learner\n");
    gov.edit("src/new.rs", "// the learner's new file\n");
}

fn learners_work_is_there(gov: &Gov, when: &str) {
    assert_eq!(gov.content("src/main.rs").as_deref(), Some("fn main() { learner() }\n"), "{when}");
    assert_eq!(gov.content("run.sh").as_deref(), Some("#!/bin/sh\necho learner\n"), "{when}");
    assert_eq!(gov.content("src/new.rs").as_deref(), Some("// the learner's new file\n"), "{when}");
}

#[test]
fn a_command_that_lost_its_end_is_closed_without_undoing_the_learners_later_work() {
    // Esc then Stop of a later turn; Esc then the next prompt; Claude Code killed then a new
    // session; /clear or exit.
    let ends: [(&str, &str, serde_json::Value); 4] = [
        ("the next turn's end", "Stop", json!({})),
        ("the next prompt", "UserPromptSubmit", json!({})),
        ("a new session after a kill", "SessionStart", json!({"session_id": B, "source": "startup"})),
        ("the session's end", "SessionEnd", json!({"reason": "other"})),
    ];
    for (when, fixture, patch) in ends {
        let gov = Gov::coach(FILES);
        let mut events = gov.core.subscribe();
        assert_eq!(gov.bash_starts(A, "t1"), HookDecision::None, "{when}: an unknown command runs, watched");
        assert!(gov.core.watching());
        // What the command did before it was cut off; then no PostToolUse ever comes.
        gov.edit("src/lib.rs", "// the command, before the interrupt\n");
        learner_works(&gov);
        let session = patch.get("session_id").and_then(|s| s.as_str()).unwrap_or(A).to_owned();
        gov.hook(fixture, &session, patch);
        assert!(!gov.core.watching(), "{when}: the window that lost its end is closed");
        learners_work_is_there(&gov, when);
        assert_eq!(
            gov.content("src/lib.rs").as_deref(),
            Some("// the command, before the interrupt\n"),
            "{when}: nothing is undone"
        );
        let told = notices(&mut events);
        assert!(told.contains("interrupted command may still have been running"), "{when}: {told}");
        assert!(told.contains("nothing was undone") && told.contains("paige restore"), "{when}: {told}");
        // The earlier versions are kept.
        let versions = gov.core.db().file_versions(&gov.root(), Some("src/lib.rs")).expect("versions");
        let original = paige_core::governance::ledger::sha256_hex(b"pub fn add() {}\n");
        assert!(versions.iter().any(|v| v.sha256 == original), "{when}: {versions:?}");

        // The next call is watched as before, from the learner's files.
        assert_eq!(gov.bash_starts(A, "t2"), HookDecision::None);
        gov.edit("src/main.rs", "// the next command\n");
        model_told(&gov.bash_ends(A, "t2"));
        learners_work_is_there(&gov, when);
    }
}

#[test]
fn another_sessions_stop_leaves_a_running_calls_window_open() {
    let gov = Gov::coach(FILES);
    assert_eq!(gov.bash_starts(A, "t1"), HookDecision::None);
    gov.hook("Stop", B, json!({}));
    assert!(gov.core.watching(), "session A's call still runs");
    gov.edit("src/main.rs", "// the command\n");
    let told = model_told(&gov.bash_ends(A, "t1")).to_owned();
    assert!(told.contains("src/main.rs (changed): undone"), "{told}");
    assert_eq!(gov.content("src/main.rs").as_deref(), Some("fn main() {}\n"));
}

#[test]
fn a_lost_end_leaves_what_changed_so_far_and_another_sessions_running_call_is_still_watched() {
    let gov = Gov::coach(FILES);
    assert_eq!(gov.bash_starts(A, "a1"), HookDecision::None);
    assert_eq!(gov.bash_starts(B, "b1"), HookDecision::None);
    gov.edit("src/lib.rs", "// before session A was interrupted\n");
    gov.prompt(A);
    assert!(gov.core.watching(), "session B's call still runs, in a window from here");
    gov.edit("src/main.rs", "// session B's command\n");
    let told = model_told(&gov.bash_ends(B, "b1")).to_owned();
    assert!(told.contains("src/main.rs") && !told.contains("src/lib.rs"), "{told}");
    assert_eq!(gov.content("src/main.rs").as_deref(), Some("fn main() {}\n"));
    assert_eq!(gov.content("src/lib.rs").as_deref(), Some("// before session A was interrupted\n"));
    // Session A's call ending after all changes nothing.
    assert_eq!(gov.bash_ends(A, "a1"), HookDecision::None);
}

#[test]
fn a_file_open_or_unsaved_in_paiges_editor_is_the_learners_and_both_versions_are_kept() {
    let gov = Gov::coach(FILES);
    let mut events = gov.core.subscribe();
    gov.ui(json!({"type": "file:open", "payload": {"path": "src/main.rs"}}));
    let update = json!({"path": "src/lib.rs", "content": "pub fn add() { /* typing */ }\n",
                        "cursorPosition": {"line": 1, "column": 1}});
    gov.ui(json!({"type": "buffer:update", "payload": update}));
    assert_eq!(gov.bash_starts(A, "t1"), HookDecision::None);
    gov.edit("src/main.rs", "fn main() { from_another_editor() }\n");
    gov.edit("src/lib.rs", "pub fn add() { /* another editor */ }\n");
    gov.edit("run.sh", "# the command\n");
    let told = model_told(&gov.bash_ends(A, "t1")).to_owned();
    assert!(told.contains("run.sh (changed): undone"), "{told}");
    assert!(!told.contains("src/main.rs") && !told.contains("src/lib.rs"), "{told}");
    assert_eq!(gov.content("src/main.rs").as_deref(), Some("fn main() { from_another_editor() }\n"));
    assert_eq!(gov.content("src/lib.rs").as_deref(), Some("pub fn add() { /* another editor */ }\n"));
    let notice = notices(&mut events);
    assert!(notice.contains("left them as they are") && notice.contains("open in the learner's editor"), "{notice}");
    // The earlier version is one `paige restore` away.
    let id: i64 = notice
        .split("src/main.rs (changed)")
        .nth(1)
        .and_then(|rest| rest.split("paige restore ").nth(1))
        .and_then(|rest| rest.split('`').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("no version id for src/main.rs in {notice}"));
    gov.core.restore_version(id).expect("restore");
    assert_eq!(gov.content("src/main.rs").as_deref(), Some("fn main() {}\n"));
}

#[test]
fn a_command_that_overwrites_the_learners_save_is_undone_back_to_the_save() {
    let gov = Gov::coach(FILES);
    assert_eq!(gov.bash_starts(A, "t1"), HookDecision::None);
    gov.save("src/lib.rs", "pub fn add() { learner() }\n");
    gov.edit("src/lib.rs", "// the command, after the save\n");
    let told = model_told(&gov.bash_ends(A, "t1")).to_owned();
    assert!(told.contains("src/lib.rs (changed): undone"), "{told}");
    assert_eq!(gov.content("src/lib.rs").as_deref(), Some("pub fn add() { learner() }\n"));
}

#[test]
fn a_new_file_is_moved_into_the_version_store_not_deleted_and_restore_brings_it_back() {
    let gov = Gov::coach(FILES);
    assert_eq!(gov.bash_starts(A, "t1"), HookDecision::None);
    gov.edit("src/gen/new.rs", "// generated\n");
    let told = model_told(&gov.bash_ends(A, "t1")).to_owned();
    assert!(told.contains("src/gen/new.rs (created): undone"), "{told}");
    assert_eq!(gov.content("src/gen/new.rs"), None);
    let id: i64 = told
        .split("paige restore ")
        .nth(1)
        .and_then(|rest| rest.split('`').next())
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("the report names the version that brings it back: {told}"));
    let versions = gov.core.db().file_versions(&gov.root(), Some("src/gen/new.rs")).expect("versions");
    assert!(versions.iter().any(|v| v.id == id && v.kind == VersionKind::Replaced), "{versions:?}");
    std::fs::remove_dir(gov.root().join("src/gen")).expect("its folder is gone too");
    assert_eq!(gov.core.restore_version(id).expect("restore"), "src/gen/new.rs");
    assert_eq!(gov.content("src/gen/new.rs").as_deref(), Some("// generated\n"));
}

#[test]
fn a_file_too_large_to_keep_is_never_removed() {
    let project = tempfile::tempdir().expect("project");
    std::fs::write(project.path().join("main.rs"), "fn main() {}\n").expect("write");
    let data = tempfile::tempdir().expect("data");
    let mut config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test");
    config.limits.max_file_bytes = 64;
    let core = std::sync::Arc::new(paige_core::Core::open(config, super::clock()).expect("core"));
    let input = |id: &str| {
        let input = paige_core::governance::HookInput {
            session_id: A.into(),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": "cargo build"})),
            tool_use_id: Some(id.into()),
            ..Default::default()
        };
        super::governance::on_record(data.path(), input)
    };
    use paige_core::governance::HookEvent;
    assert_eq!(core.handle_hook(HookEvent::PreToolUse, &input("t1")), HookDecision::None);
    let big = "x".repeat(1000);
    std::fs::write(project.path().join("big.txt"), &big).expect("write");
    core.handle_hook(HookEvent::PostToolUse, &input("t1"));
    assert_eq!(std::fs::read_to_string(project.path().join("big.txt")).ok(), Some(big), "not kept, so not removed");
}

#[test]
fn the_sandboxs_placeholder_files_are_left_alone_whether_they_come_or_go() {
    let gov = Gov::coach(FILES);
    let placeholders = [".claude/settings.json", ".claude/settings.local.json", ".mcp.json", ".bashrc", ".gitconfig"];
    assert_eq!(gov.bash_starts(A, "t1"), HookDecision::None);
    for path in placeholders {
        gov.edit(path, "");
    }
    std::fs::create_dir_all(gov.root().join(".vscode")).expect("mkdir");
    std::fs::create_dir_all(gov.root().join(".claude/commands")).expect("mkdir");
    gov.edit("src/main.rs", "// the command\n");
    let told = model_told(&gov.bash_ends(A, "t1")).to_owned();
    assert!(told.contains("src/main.rs (changed): undone"), "{told}");
    for path in placeholders {
        assert!(!told.contains(path), "{path} in {told}");
        assert_eq!(gov.content(path).as_deref(), Some(""), "{path} is still there");
    }
    assert!(gov.root().join(".vscode").is_dir() && gov.root().join(".claude/commands").is_dir());

    // Present when the next call starts, then removed by Claude Code: not put back.
    assert_eq!(gov.bash_starts(A, "t2"), HookDecision::None);
    for path in placeholders {
        std::fs::remove_file(gov.root().join(path)).expect("rm");
    }
    assert_eq!(gov.bash_ends(A, "t2"), HookDecision::None, "nothing to report");
    for path in placeholders {
        assert_eq!(gov.content(path), None, "{path} is not written back");
    }
}

#[test]
fn a_guarded_path_is_not_written_while_a_background_command_may_still_run_and_the_learner_is_told() {
    let gov = Gov::coach(FILES);
    gov.edit(".mcp.json", "{\"mcpServers\": {}}\n");
    let mut events = gov.core.subscribe();
    let input = json!({"command": "cargo build --release", "description": "scripted", "run_in_background": true});
    assert_eq!(gov.hook("PreToolUse-Bash", A, json!({"tool_use_id": "bg", "tool_input": input})), HookDecision::None);
    assert_eq!(gov.hook("PostToolUse-Bash", A, json!({"tool_use_id": "bg", "tool_input": input})), HookDecision::None);
    gov.edit(".mcp.json", "{\"mcpServers\": {\"evil\": {}}}\n");
    gov.edit("src/main.rs", "// the server\n");
    gov.hook("Stop", A, json!({}));
    assert!(!gov.core.watching());
    assert_eq!(gov.content("src/main.rs").as_deref(), Some("fn main() {}\n"), "a learner file is undone");
    assert_eq!(gov.content(".mcp.json").as_deref(), Some("{\"mcpServers\": {\"evil\": {}}}\n"));
    let told = notices(&mut events);
    assert!(told.contains(".mcp.json (changed)") && told.contains("sandbox guards this path"), "{told}");
}

/// With Claude Code in the jail nothing it runs can write a learner file, so the detector
/// stands down in coach mode: no window opens, and whatever the learner changes while a
/// command runs — a save in Paige, an edit and a new file in their own editor — stays where
/// it is, never moved into the version store. Governed mode (never jailed) still watches.
#[test]
fn in_the_jail_no_window_opens_and_the_learners_new_file_stays_where_it_is() {
    let jailed = |c: &mut paige_core::Config| {
        c.agent_jail = paige_core::launch::jail::Confinement::Jail { bwrap: "/usr/bin/bwrap".into(), userns: true }
    };
    let gov = Gov::coach_with(FILES, jailed);
    assert!(gov.core.agent_jailed());
    let mut events = gov.core.subscribe();
    assert_eq!(gov.bash_starts(A, "t1"), HookDecision::None, "the call itself is the hooks' to decide");
    assert!(!gov.core.watching(), "no window: nothing the agent runs can write here");
    learner_works(&gov);
    assert_eq!(gov.bash_ends(A, "t1"), HookDecision::None, "nothing to tell the model");
    gov.hook("Stop", A, json!({}));
    learners_work_is_there(&gov, "after the call and the turn");
    let kept = gov.core.db().file_versions(&gov.root(), Some("src/new.rs")).expect("versions");
    assert!(kept.is_empty(), "the learner's new file was never moved: {kept:?}");
    let told = notices(&mut events);
    assert!(!told.contains("undid") && !told.contains("restore"), "{told}");

    let free = Gov::coach(FILES);
    assert!(!free.core.agent_jailed());
    assert_eq!(free.bash_starts(A, "t1"), HookDecision::None);
    assert!(free.core.watching(), "without the jail the same call is watched");
}

/// A PreToolUse Paige gets to only after `paige hook` stopped waiting (Paige was busy; Claude
/// Code was told the call is denied and never runs it) opens no window and joins none: no
/// PostToolUse would close it, and the next call's changes would be taken for an interrupted
/// call's and kept. One decided in time opens its window as before.
#[test]
fn a_pre_tool_use_answered_after_the_hook_stopped_waiting_opens_no_window() {
    use paige_core::governance::{HookEvent, HookInput};
    let gov = Gov::coach(FILES);
    let input = |id: &str, answer_by: std::time::Instant| {
        let input = HookInput {
            session_id: A.into(),
            tool_name: Some("Bash".into()),
            tool_input: Some(json!({"command": COMMAND})),
            tool_use_id: Some(id.into()),
            answer_by: Some(answer_by),
            ..Default::default()
        };
        super::governance::on_record(&gov.data_dir(), input)
    };
    let past = std::time::Instant::now() - std::time::Duration::from_millis(1);
    let decision = gov.core.handle_hook(HookEvent::PreToolUse, &input("late", past));
    assert!(matches!(&decision, HookDecision::Deny { reason } if reason.contains("stopped waiting")), "{decision:?}");
    assert!(!gov.core.watching(), "no window for a call that never runs");

    let soon = std::time::Instant::now() + std::time::Duration::from_secs(60);
    assert_eq!(gov.core.handle_hook(HookEvent::PreToolUse, &input("t1", soon)), HookDecision::None);
    assert!(gov.core.watching());
    // A late one joins no open window either.
    let decision = gov.core.handle_hook(HookEvent::PreToolUse, &input("late2", past));
    assert!(matches!(decision, HookDecision::Deny { .. }), "{decision:?}");
    gov.edit("src/main.rs", "// the command\n");
    let told = model_told(&gov.core.handle_hook(HookEvent::PostToolUse, &input("t1", soon))).to_owned();
    assert!(told.contains("src/main.rs (changed): undone"), "the window closed with its one call: {told}");
    assert_eq!(gov.content("src/main.rs").as_deref(), Some("fn main() {}\n"));
}

/// Without any OS layer (coach mode started unguarded), a pair of hook payloads forged around
/// the learner's save in their own editor — the agent token in hand — must not make Paige undo
/// it (issue 39, item 6): a window opens only for a call Claude Code's own transcript shows.
/// The same pair for a call the transcript does show still has its change undone.
#[test]
fn a_forged_hook_pair_around_the_learners_own_save_opens_no_window_and_undoes_nothing() {
    use paige_core::governance::{HookEvent, HookInput};
    let gov = Gov::coach(FILES);
    let transcript = gov.data_dir().join("transcript.jsonl");
    std::fs::write(&transcript, "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n").expect("transcript");
    let forged = |id: &str, path: Option<std::path::PathBuf>| HookInput {
        session_id: A.into(),
        transcript_path: path,
        tool_name: Some("Bash".into()),
        tool_input: Some(json!({"command": "cargo build"})),
        tool_use_id: Some(id.into()),
        ..Default::default()
    };
    for (case, input) in [
        ("a call the transcript does not show", forged("toolu_forged", Some(transcript.clone()))),
        ("no transcript named", forged("toolu_forged2", None)),
        ("a transcript that is not there", forged("toolu_forged3", Some(gov.data_dir().join("none.jsonl")))),
    ] {
        let pre = gov.core.handle_hook(HookEvent::PreToolUse, &input);
        assert!(matches!(&pre, HookDecision::Deny { reason } if reason.contains("transcript")), "{case}: {pre:?}");
        assert!(!gov.core.watching(), "{case}: no window opens");
        // The learner saves in their own editor; the forged PostToolUse follows.
        std::fs::write(gov.root().join("src/main.rs"), format!("// the learner's, {case}\n")).expect("save");
        gov.core.handle_hook(HookEvent::PostToolUse, &input);
        let kept = gov.content("src/main.rs");
        assert_eq!(kept, Some(format!("// the learner's, {case}\n")), "{case}: the learner's save stays");
    }
    // A call Claude Code did make (on its transcript): watched, and its change undone.
    let real = super::governance::on_record(&gov.data_dir(), forged("toolu_real", None));
    assert_eq!(gov.core.handle_hook(HookEvent::PreToolUse, &real), HookDecision::None);
    gov.edit("src/main.rs", "// the command\n");
    let told = model_told(&gov.core.handle_hook(HookEvent::PostToolUse, &real)).to_owned();
    assert!(told.contains("src/main.rs (changed): undone"), "{told}");
}
