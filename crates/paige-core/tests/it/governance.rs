//! The hook engine over Claude Code's recorded payloads (`tests/fixtures/claude-code-hooks/`):
//! every acceptance scenario and edge case of the hook-engine spec in governed mode, and the
//! harness the other hook tests share (`coach_hooks.rs`: coach mode).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use paige_core::governance::intents::{Orchestration, is_broad_glob};
use paige_core::governance::ledger::{self, TraceEntry, TraceKind};
use paige_core::governance::{HookDecision, HookEvent, HookInput, IntentStatus, IntentsFile, SELECT_TOOL};
use paige_core::{Core, ManualClock};
use serde_json::{Value, json};

pub(crate) const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/claude-code-hooks");
pub(crate) const A: &str = "session-a";
const B: &str = "session-b";

pub(crate) const INTENTS: &str = r#"
active_intents:
  - id: INT-001
    name: Build the weather widget
    status: IN_PROGRESS
    owned_scope: ["src/weather/**"]
    constraints: ["no new dependencies"]
    acceptance_criteria: ["widget renders"]
  - id: INT-002
    name: Sign-in form
    status: IN_PROGRESS
    owned_scope: ["src/auth/**"]
  - id: INT-003
    name: Old work
    status: COMPLETED
    owned_scope: ["src/old/**"]
  - id: INT-004
    name: Small budget
    status: PENDING
    owned_scope: ["src/budget/**"]
    budget: {turns: 2}
  - id: INT-005
    name: Token budget
    status: IN_PROGRESS
    owned_scope: ["src/tokens/**"]
    budget: {tokens: 1000}
"#;

pub(crate) struct Gov {
    pub(crate) core: Arc<Core>,
    pub(crate) clock: Arc<ManualClock>,
    project: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Gov {
    pub(crate) fn coach(files: &[(&str, &str)]) -> Gov {
        Gov::coach_with(files, |_| {})
    }

    /// Coach mode with `adjust` applied to the core's config.
    pub(crate) fn coach_with(files: &[(&str, &str)], adjust: impl FnOnce(&mut paige_core::Config)) -> Gov {
        let t = super::test_core_with(files, adjust);
        let data = tempfile::tempdir().expect("data");
        Gov { core: t.core, clock: t.clock, project: t.project, data }
    }

    pub(crate) fn governed(yaml: &str, files: &[(&str, &str)]) -> Gov {
        Gov::governed_with(yaml, files, |_| {})
    }

    /// Governed mode with `adjust` applied to the core's config.
    pub(crate) fn governed_with(
        yaml: &str,
        files: &[(&str, &str)],
        adjust: impl FnOnce(&mut paige_core::Config),
    ) -> Gov {
        let project = tempfile::tempdir().expect("project");
        for (path, content) in files {
            let full = project.path().join(path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(full, content).expect("write");
        }
        let orch = Orchestration::new(project.path());
        orch.init().expect("init");
        std::fs::write(orch.intents_path(), yaml).expect("yaml");
        let data = tempfile::tempdir().expect("data");
        let clock = super::clock();
        let mut config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test");
        adjust(&mut config);
        let core = Arc::new(Core::open(config, clock.clone()).expect("core"));
        Gov { core, clock, project, data }
    }

    /// Coach mode over a project the caller made, with its git repository when it has one
    /// (as `paige serve` opens it).
    pub(crate) fn coach_over(project: tempfile::TempDir) -> Gov {
        let data = tempfile::tempdir().expect("data");
        let clock = super::clock();
        let config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test");
        let core = Core::open(config, clock.clone()).expect("core");
        let repo = paige_git::Repo::for_project(core.project_root().path());
        let core = Arc::new(core.with_git(repo));
        Gov { core, clock, project, data }
    }

    /// Paige's data folder.
    pub(crate) fn data_dir(&self) -> PathBuf {
        self.data.path().to_owned()
    }

    /// A new `Core` over the same project and database: Paige restarted.
    pub(crate) fn restart(self) -> Gov {
        let Gov { core, clock, project, data } = self;
        drop(core);
        let core = open(&project, &data, &clock);
        Gov { core, clock, project, data }
    }

    pub(crate) fn root(&self) -> PathBuf {
        self.core.project_root().path().to_owned()
    }

    pub(crate) fn orch(&self) -> Orchestration {
        Orchestration::new(&self.root())
    }

    /// A recorded payload with the project path rewritten, the session set, and `patch`'s
    /// top-level keys replacing the recorded ones.
    pub(crate) fn payload(&self, fixture: &str, session: &str, patch: Value) -> (HookEvent, HookInput) {
        let text = std::fs::read_to_string(format!("{FIXTURES}/{fixture}.json")).expect("fixture");
        let text = text.replace("/home/learner/project", &self.root().display().to_string());
        let mut value: Value = serde_json::from_str(&text).expect("fixture json");
        value["session_id"] = json!(session);
        let patch_names_transcript = patch.get("transcript_path").is_some();
        if let Value::Object(patch) = patch {
            for (k, v) in patch {
                value[k] = v;
            }
        }
        let event = HookEvent::parse(value["hook_event_name"].as_str().expect("event")).expect("known event");
        if !patch_names_transcript {
            value["transcript_path"] = json!(self.data.path().join(format!("transcript-{session}.jsonl")));
        }
        if event == HookEvent::PreToolUse {
            record_call(&value);
        }
        (event, serde_json::from_value(value).expect("hook input"))
    }

    pub(crate) fn hook(&self, fixture: &str, session: &str, patch: Value) -> HookDecision {
        let (event, input) = self.payload(fixture, session, patch);
        self.core.handle_hook(event, &input)
    }

    pub(crate) fn pre(&self, session: &str, tool: &str, input: Value) -> HookDecision {
        self.hook("PreToolUse-Write", session, json!({"tool_name": tool, "tool_input": input}))
    }

    pub(crate) fn post(&self, session: &str, tool: &str, input: Value) -> HookDecision {
        self.hook("PostToolUse-Write-create", session, json!({"tool_name": tool, "tool_input": input}))
    }

    pub(crate) fn prompt(&self, session: &str) -> HookDecision {
        self.hook("UserPromptSubmit", session, json!({}))
    }

    /// The handshake as Claude Code runs it: PreToolUse, the MCP call, PostToolUse.
    pub(crate) fn select(&self, session: &str, id: &str) -> HookDecision {
        let input = json!({"intent_id": id});
        let patch = json!({"tool_name": SELECT_TOOL, "tool_input": input, "mcp_server": {"name": "paige"}});
        let pre = self.hook("PreToolUse-mcp-check", session, patch.clone());
        if pre == HookDecision::None {
            self.core.select_active_intent(id).expect("the MCP tool agrees");
            self.hook("PostToolUse-mcp-check", session, patch);
        }
        pre
    }

    pub(crate) fn abs(&self, rel: &str) -> String {
        self.root().join(rel).display().to_string()
    }

    /// A Write through the hooks: PreToolUse; when not denied, the file is written and
    /// PostToolUse runs.
    pub(crate) fn write(&self, session: &str, rel: &str, content: &str) -> HookDecision {
        let input = json!({"file_path": self.abs(rel), "content": content});
        let decision = self.pre(session, "Write", input.clone());
        if decision == HookDecision::None {
            let path = self.root().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, content).expect("write");
            self.post(session, "Write", input);
        }
        decision
    }

    pub(crate) fn intents(&self) -> IntentsFile {
        self.orch().load().expect("intents")
    }

    pub(crate) fn status(&self, id: &str) -> IntentStatus {
        self.intents().get(id).expect("intent").status
    }

    pub(crate) fn trace(&self) -> Vec<TraceEntry> {
        ledger::read_all(&self.orch().trace_path()).expect("trace")
    }
}

/// Writes the call a PreToolUse `payload` names into its transcript, as Claude Code does
/// before it runs the hook: Paige watches only calls its transcript shows. Not through
/// anything but a regular file (a test's FIFO or device stays as it is).
pub(crate) fn record_call(payload: &Value) {
    use std::io::Write;
    let (Some(path), Some(id)) = (payload["transcript_path"].as_str(), payload["tool_use_id"].as_str()) else {
        return;
    };
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.is_file()) {
        return;
    }
    let line = json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": id, "name": payload["tool_name"], "input": payload["tool_input"]}
    ]}});
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).expect("transcript");
    writeln!(file, "{line}").expect("transcript line");
}

/// `input` with a transcript in `dir` that shows its call, as Claude Code writes one.
pub(crate) fn on_record(dir: &Path, mut input: HookInput) -> HookInput {
    let transcript = dir.join("transcript.jsonl");
    record_call(&json!({"transcript_path": transcript, "tool_use_id": input.tool_use_id,
        "tool_name": input.tool_name, "tool_input": input.tool_input}));
    input.transcript_path = Some(transcript);
    input
}

fn open(project: &tempfile::TempDir, data: &tempfile::TempDir, clock: &Arc<ManualClock>) -> Arc<Core> {
    let config = paige_core::Config::new(project.path().to_owned(), data.path().to_owned(), "test");
    Arc::new(Core::open(config, clock.clone()).expect("core"))
}

pub(crate) fn denied(decision: &HookDecision) -> &str {
    match decision {
        HookDecision::Deny { reason } => reason,
        other => panic!("expected a deny, got {other:?}"),
    }
}

pub(crate) fn context(decision: &HookDecision) -> &str {
    match decision {
        HookDecision::Context { context } => context,
        other => panic!("expected context, got {other:?}"),
    }
}

// ---- payloads ------------------------------------------------------------------------

#[test]
fn in_state_1_every_tool_but_select_is_a_state_violation() {
    let g = Gov::governed(INTENTS, &[("src/weather/a.rs", "")]);
    for (tool, input) in [
        ("Write", json!({"file_path": g.abs("src/weather/a.rs"), "content": "x"})),
        ("Read", json!({"file_path": g.abs("src/weather/a.rs")})),
        ("Bash", json!({"command": "ls"})),
        ("mcp__paige__get_buffer", json!({})),
    ] {
        let reason = denied(&g.pre(A, tool, input)).to_owned();
        assert!(reason.starts_with("State Violation: Reasoning Intercept Required"), "{tool}: {reason}");
    }
    // After the prompt (state 2) too.
    g.prompt(A);
    denied(&g.write(A, "src/weather/a.rs", "x"));
    let denials = g.trace().iter().filter(|e| e.kind == TraceKind::Denial).count();
    assert_eq!(denials, 5, "every denial is a ledger line");
}

#[test]
fn session_start_and_prompt_list_the_available_intents() {
    let g = Gov::governed(INTENTS, &[]);
    for decision in [g.hook("SessionStart", A, json!({})), g.prompt(A)] {
        let text = context(&decision).to_owned();
        assert!(text.contains("Reasoning Intercept") && text.contains("select_active_intent"), "{text}");
        assert!(text.contains("INT-001") && text.contains("INT-002") && text.contains("INT-004"), "{text}");
        assert!(!text.contains("INT-003"), "completed intents are not offered: {text}");
    }
}

#[test]
fn selecting_an_unknown_or_completed_intent_fails_and_stays_in_state_2() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    for (id, expected) in [("INT-404", "unknown intent INT-404"), ("INT-003", "COMPLETED")] {
        let reason = denied(&g.select(A, id)).to_owned();
        assert!(reason.contains("Intent Validation Error") && reason.contains(expected), "{reason}");
        assert!(g.core.select_active_intent(id).is_err(), "the MCP tool refuses {id} too");
    }
    let reason = denied(&g.write(A, "src/weather/a.rs", "x")).to_owned();
    assert!(reason.starts_with("State Violation"), "still in state 2: {reason}");
}

// ---- Story 2: context enrichment ----------------------------------------------------------

#[test]
fn selection_returns_scope_constraints_history_and_shared_brain() {
    let g = Gov::governed(INTENTS, &[("AGENT.md", "# Shared Brain\n- always run the tests\n")]);
    g.prompt(A);
    assert_eq!(g.select(A, "INT-001"), HookDecision::None);
    assert_eq!(g.write(A, "src/weather/widget.rs", "pub fn widget() {}\n"), HookDecision::None);
    let ctx = g.core.select_active_intent("INT-001").expect("context");
    assert_eq!(ctx.owned_scope, vec!["src/weather/**".to_owned()]);
    assert_eq!(ctx.constraints, vec!["no new dependencies".to_owned()]);
    assert_eq!(ctx.acceptance_criteria, vec!["widget renders".to_owned()]);
    assert!(ctx.recent_history.contains("src/weather/widget.rs lines 1-1"), "{}", ctx.recent_history);
    assert!(ctx.shared_brain.contains("always run the tests"), "{}", ctx.shared_brain);
    let text = ctx.to_text();
    assert!(text.contains("src/weather/**") && text.contains("no new dependencies") && text.contains("always run"));
}

#[test]
fn in_state_3_the_prompt_shows_the_bound_scope_and_constraints() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let text = context(&g.hook("SessionStart", A, json!({"source": "resume"}))).to_owned();
    assert!(
        text.contains("State 3") && text.contains("src/weather/**") && text.contains("no new dependencies"),
        "{text}"
    );
}

// ---- scope, ownership, staleness ---------------------------------------------------------

#[test]
fn a_write_outside_the_owned_scope_is_a_scope_violation() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let reason = denied(&g.write(A, "src/secret.ts", "x")).to_owned();
    assert!(reason.starts_with("Scope Violation: src/secret.ts"), "{reason}");
    let reason = denied(&g.pre(A, "Write", json!({"file_path": "/etc/passwd", "content": "x"}))).to_owned();
    assert!(reason.starts_with("Scope Violation"), "{reason}");
    let last = g.trace().pop().expect("denial line");
    assert_eq!((last.kind, last.intent_id.as_deref()), (TraceKind::Denial, Some("INT-001")));
}

#[test]
fn a_file_owned_by_another_in_progress_intent_is_a_governance_violation() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let reason = denied(&g.write(A, "src/auth/login.rs", "x")).to_owned();
    assert_eq!(reason, "Governance Violation: File owned by Intent [INT-002]");
}

#[test]
fn a_file_last_written_by_another_in_progress_intent_is_owned_by_it() {
    let yaml = INTENTS.replace("owned_scope: [\"src/auth/**\"]", "owned_scope: [\"src/auth/**\", \"src/shared/**\"]");
    let yaml =
        yaml.replacen("owned_scope: [\"src/weather/**\"]", "owned_scope: [\"src/weather/**\", \"src/shared/**\"]", 1);
    let g = Gov::governed(&yaml, &[]);
    g.prompt(B);
    g.select(B, "INT-002");
    assert_eq!(g.write(B, "src/shared/util.rs", "x\n"), HookDecision::None);
    g.prompt(A);
    g.select(A, "INT-001");
    assert_eq!(
        denied(&g.write(A, "src/shared/util.rs", "y\n")),
        "Governance Violation: File owned by Intent [INT-002]"
    );
}

#[test]
fn broad_scopes_are_rejected_at_selection() {
    for glob in ["*", "**/*", "src/**/*", "**/*.ts", "*.rs"] {
        assert!(is_broad_glob(glob), "{glob} is broad");
        let yaml = INTENTS.replace("[\"src/weather/**\"]", &format!("[\"{glob}\"]"));
        let g = Gov::governed(&yaml, &[]);
        g.prompt(A);
        let reason = denied(&g.select(A, "INT-001")).to_owned();
        assert!(reason.contains("too broad"), "{glob}: {reason}");
    }
    for glob in ["src/weather/**", "src/weather/**/*.rs", "docs/README.md"] {
        assert!(!is_broad_glob(glob), "{glob} is narrow");
    }
}

#[test]
fn a_scope_covering_more_than_20_files_is_rejected() {
    let files: Vec<(String, &str)> = (0..21).map(|i| (format!("src/weather/f{i}.rs"), "")).collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    let g = Gov::governed(INTENTS, &refs);
    g.prompt(A);
    let reason = denied(&g.select(A, "INT-001")).to_owned();
    assert!(reason.contains("more than 20 files"), "{reason}");
    std::fs::remove_file(g.root().join("src/weather/f0.rs")).expect("rm");
    assert_eq!(g.select(A, "INT-001"), HookDecision::None, "20 files is fine");
}

#[test]
fn a_write_to_a_file_changed_since_the_agent_read_it_is_denied() {
    let g = Gov::governed(INTENTS, &[("src/weather/a.rs", "v1\n")]);
    g.prompt(A);
    g.select(A, "INT-001");
    g.post(A, "Read", json!({"file_path": g.abs("src/weather/a.rs")}));
    std::fs::write(g.root().join("src/weather/a.rs"), "v2 by the human\n").expect("human edit");
    let reason = denied(&g.write(A, "src/weather/a.rs", "v3\n")).to_owned();
    assert!(reason.starts_with("Stale File: src/weather/a.rs"), "{reason}");
    g.post(A, "Read", json!({"file_path": g.abs("src/weather/a.rs")}));
    assert_eq!(g.write(A, "src/weather/a.rs", "v3\n"), HookDecision::None, "after reading again");
    assert_eq!(g.write(A, "src/weather/a.rs", "v4\n"), HookDecision::None, "its own write counts as seen");
}

#[test]
fn a_completed_intent_still_in_use_blocks_and_returns_to_state_2() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    g.write(A, "src/weather/a.rs", "a\n");
    let mut file = g.intents();
    file.get_mut("INT-001").expect("intent").status = IntentStatus::Completed;
    g.orch().save(&file).expect("save");
    let reason = denied(&g.write(A, "src/weather/b.rs", "b\n")).to_owned();
    assert!(reason.starts_with("Stale Intent: INT-001 is COMPLETED"), "{reason}");
    let reason = denied(&g.pre(A, "Read", json!({"file_path": g.abs("src/weather/a.rs")}))).to_owned();
    assert!(reason.starts_with("State Violation"), "back in state 2: {reason}");
    let brain = std::fs::read_to_string(g.root().join("AGENT.md")).expect("AGENT.md created");
    assert!(brain.contains("- 2026-11-22: INT-001 completed"), "{brain}");
}

#[test]
fn two_sessions_never_share_an_intent() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    g.prompt(B);
    let reason = denied(&g.select(B, "INT-001")).to_owned();
    assert!(reason.contains("held by another Claude Code session"), "{reason}");
    assert!(denied(&g.write(B, "src/weather/a.rs", "x")).starts_with("State Violation"));
    assert_eq!(g.write(A, "src/weather/a.rs", "x"), HookDecision::None);
    g.hook("SessionEnd", A, json!({}));
    assert_eq!(g.select(B, "INT-001"), HookDecision::None, "free once A ended");
}

#[test]
fn the_post_hook_of_another_session_cannot_bind_an_intent() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.prompt(B);
    let input = json!({"intent_id": "INT-001"});
    let patch = json!({"tool_name": SELECT_TOOL, "tool_input": input});
    assert_eq!(g.hook("PreToolUse-mcp-check", A, patch.clone()), HookDecision::None);
    g.hook("PostToolUse-mcp-check", B, patch);
    assert!(denied(&g.write(B, "src/weather/a.rs", "x")).starts_with("State Violation"));
}

#[test]
fn selecting_a_pending_intent_sets_it_in_progress() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    assert_eq!(g.status("INT-004"), IntentStatus::Pending);
    g.select(A, "INT-004");
    assert_eq!(g.status("INT-004"), IntentStatus::InProgress);
}

#[test]
fn the_session_state_survives_a_restart() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    let g = g.restart();
    assert_eq!(g.write(A, "src/weather/a.rs", "x"), HookDecision::None, "still in state 3");
    assert!(denied(&g.write(B, "src/weather/a.rs", "y")).starts_with("State Violation"));
}

// ---- fail-safe ------------------------------------------------------------------------------

#[test]
fn a_deleted_orchestration_dir_denies_every_mutation_within_100ms() {
    let g = Gov::governed(INTENTS, &[("src/weather/a.rs", "")]);
    g.hook("SessionStart", A, json!({}));
    std::fs::remove_dir_all(g.orch().dir()).expect("rm");
    let started = Instant::now();
    let decision = g.hook("PreToolUse-Write", A, json!({}));
    assert!(started.elapsed().as_millis() < 100, "took {:?}", started.elapsed());
    let reason = denied(&decision).to_owned();
    assert!(reason.starts_with("Fail-Safe") && reason.contains("paige intents init"), "{reason}");
    denied(&g.pre(A, "Bash", json!({"command": "touch x"})));
    assert_eq!(g.pre(A, "Read", json!({"file_path": g.abs("src/weather/a.rs")})), HookDecision::None);
    match g.prompt(A) {
        HookDecision::Block { reason } => assert!(reason.contains("paige intents init"), "{reason}"),
        other => panic!("a new prompt is blocked while the state is missing, got {other:?}"),
    }
    assert!(context(&g.hook("SessionStart", A, json!({}))).contains("paige intents init"));
    // Still governed after a restart: the database remembers.
    let g = g.restart();
    denied(&g.hook("PreToolUse-Write", A, json!({})));
}

#[test]
fn corrupt_intents_yaml_denies_every_mutation() {
    let g = Gov::governed(INTENTS, &[]);
    g.prompt(A);
    g.select(A, "INT-001");
    std::fs::write(g.orch().intents_path(), "active_intents: [ {id: : }").expect("corrupt");
    let reason = denied(&g.write(A, "src/weather/a.rs", "x")).to_owned();
    assert!(reason.contains("not valid intents YAML") && reason.contains("paige intents init"), "{reason}");
}

#[test]
fn intents_init_keeps_existing_files_and_round_trips_extra_keys() {
    let dir = tempfile::tempdir().expect("dir");
    let orch = Orchestration::new(dir.path());
    assert_eq!(orch.init().expect("init").len(), 3);
    let file = orch.load().expect("example parses");
    assert_eq!(file.active_intents[0].id, "INT-001");
    std::fs::write(
        orch.intents_path(),
        "active_intents:\n  - id: X\n    name: x\n    status: PENDING\n    owner: ana\n",
    )
    .expect("w");
    assert!(orch.init().expect("init").is_empty(), "existing files are kept");
    let file = orch.load().expect("load");
    orch.save(&file).expect("save");
    assert!(std::fs::read_to_string(orch.intents_path()).expect("read").contains("owner: ana"));
}

#[test]
fn generated_claude_settings_wire_every_event_to_paige_hook() {
    let settings = paige_core::governance::claude_settings("/opt/paige");
    for event in HookEvent::ALL {
        let command = &settings["hooks"][event.name()][0]["hooks"][0];
        assert_eq!(command["type"], "command");
        assert_eq!(command["command"], format!("/opt/paige hook {}", event.slug()));
        // A PreToolUse answers in seconds; events that may undo a call's changes get a minute.
        let expected = match event {
            HookEvent::PreToolUse | HookEvent::PreCompact => 5,
            _ => 60,
        };
        assert_eq!(command["timeout"], expected, "{}", event.name());
    }
    assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "*");
    assert_eq!(settings["permissions"]["allow"], json!(["mcp__paige__*"]));
}
