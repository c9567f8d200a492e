//! The day's flows, in the order a learner meets them; each waits for the frames and log
//! entries it causes, so the next starts from a settled state.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use paige_core::db::ActionType;
use paige_core::observer::ObserverSettings;
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};

use super::{Day, PATIENCE};
use crate::TOKEN;
use crate::coaching::{args, coach_reply};
use crate::dashboard::{gh_stand_in, materials, ranking, search_blocks, two_issues, write_script};
use crate::tools::{call, ok, session_client};

/// What the learner types into `src/auth.rs` (more than half again its size: a significant change).
const EDITED: &str =
    "fn login() {}\nfn callback() {\n    // wait for the token before the redirect\n}\nfn token() {}\n";

/// The fake model's answer to every call type the flows make.
fn script(fake: &FakeAnthropic) {
    let json_reply = |call: &str, value: Value| fake.always(Matcher::call_type(call), Reply::json(&value));
    // A plan the coach model refuses: the pipeline fails and the panel is told.
    fake.once(
        Matcher::custom(|r| r.call_type() == Some("coach_agent") && r.body.to_string().contains("REFUSED-PLAN")),
        Reply::error(400, "invalid_request_error", "the plan is malformed"),
    );
    json_reply("coach_agent", coach_reply());
    json_reply("memory_retrieval_filter", json!({"relevant_memories": [], "discarded": []}));
    json_reply(
        "observer_triage",
        json!({"should_nudge": true, "confidence": 0.9, "signal": "wrong_file", "reasoning": "the callback waits elsewhere",
               "suggested_context": {"current_file": "src/auth.rs", "expected_file": "src/auth.rs", "time_in_file": "1m", "phase_description": "Find where the callback runs"}}),
    );
    json_reply(
        "explain_this",
        json!({"explanation": "login() is declared but does nothing yet.", "key_concepts": ["stubs"], "analogy": "An empty box.",
               "related_files": ["src/auth.rs"], "phase_connection": null}),
    );
    json_reply(
        "worked_example",
        json!({"title": "Waiting for a parcel", "explanation": "Await what you depend on.", "language": "rust",
               "example_code": "async fn open(p: Parcel) { p.arrived().await.open() }\n", "steps": ["Find it", "Await it"]}),
    );
    json_reply(
        "practice_review",
        json!({"correct": true, "feedback": "The retry waits.", "level": 4, "passed": true,
               "follow_up": {"type": "constraint_escalation", "constraint": "No sleep", "reason": "Ready."}, "dreyfus_signal": "advancing"}),
    );
    let pillar = json!({"score": 60, "rationale": "\"rewrote its cache twice\""});
    json_reply(
        "intake_control",
        json!({"adaptability": pillar, "creativity": pillar, "reasoning": pillar, "new_project": false, "project_name": null}),
    );
    fake.always(
        Matcher::call_type("intake_interviewer"),
        Reply::text_deltas(&["That sounds tough. ", "Why did it go stale?"]),
    );
    json_reply("issue_assessment", ranking());
    // Issue 30's checks answer from the request: a question quoting the first line the learner
    // added, a grade from what the answer says; issue 31's review question names its topic.
    let user = |r: &paige_fake_anthropic::RecordedRequest| -> Value {
        serde_json::from_str(r.user_message().unwrap_or("{}")).unwrap_or(Value::Null)
    };
    fake.always(
        Matcher::call_type("comprehension_check"),
        Reply::computed(move |r| {
            let diff = user(r)["learner_diff"].as_str().unwrap_or_default().to_owned();
            let added = diff.lines().find(|l| l.starts_with('+') && !l.starts_with("+++") && l.len() > 4);
            let questions: Vec<Value> = added
                .map(|l| json!({"kind": "explain_line", "question": "Why?", "quote": l[1..].trim(), "concept": "waiting"}))
                .into_iter()
                .collect();
            Reply::json(&json!({ "questions": questions }))
        }),
    );
    fake.always(
        Matcher::call_type("comprehension_grade"),
        Reply::computed(move |r| {
            let right = user(r)["learner_answer"].as_str().unwrap_or_default().contains("because");
            let grade = if right { "correct" } else { "incorrect" };
            Reply::json(&json!({"grade": grade, "why": "from the answer", "concept": "waiting"}))
        }),
    );
    fake.always(
        Matcher::call_type("review_question"),
        Reply::computed(move |r| {
            let topic = user(r)["item"]["topic"].as_str().unwrap_or_default().to_owned();
            Reply::json(&json!({"question": format!("When does {topic} bite?"), "concept": topic}))
        }),
    );
    // The first materials call answers; later ones fail (`dashboard:materials_error`).
    let found = ["https://doc.rust-lang.org/book/ch16-00-concurrency.html"];
    fake.once(
        Matcher::call_type("learning_materials"),
        Reply::json(&materials(&found)).with_blocks_before(search_blocks(&found)),
    );
    fake.always(
        Matcher::call_type("learning_materials"),
        Reply::error(400, "invalid_request_error", "no research today"),
    );
    json_reply(
        "knowledge_gap_extraction",
        json!({
            "knowledge_gaps": [{"topic": "Async ordering", "evidence": "redirected before the token arrived", "severity": "medium", "related_concepts": ["await"]}],
            "kata_specs": [{"gap_topic": "Async ordering", "title": "Wait for it", "description": "Await two tasks in order",
                            "scaffolding_code": "async fn both() {}\n", "test_cases": ["first finishes first"], "instructor_notes": "No sleeps",
                            "constraints": [{"title": "No sleep", "description": "no timers", "min_level": 3}], "follow_up_constraint": null}],
            "session_summary": {"phases_completed": 1, "total_time_minutes": 12, "hints_used": 1, "independent_completions": 0}
        }),
    );
    json_reply(
        "dreyfus_assessment",
        json!({"assessments": [{"skill_area": "Async Rust", "stage": "novice", "previous_stage": null, "confidence": 0.5,
                                "evidence": "needed the ordering explained", "recommendation": "line hints"}]}),
    );
    json_reply(
        "memory_summarisation",
        json!({"memories": [{"content": "The OAuth callback raced the redirect", "tags": ["oauth"], "importance": "high"}]}),
    );
}

/// The coaching server (watcher running, fast Observer ticks, a `gh` stand-in) and a UI.
pub(super) async fn morning() -> Day {
    let fake = FakeAnthropic::start().await.expect("fake");
    script(&fake);
    let bin = tempfile::tempdir().expect("bin");
    let gh = gh_stand_in(bin.path(), &two_issues());
    let server = crate::coaching_server_with(&fake, move |config| {
        config.gh_program = Some(gh);
        config.limits.intake_timebox = Duration::from_secs(240);
        config.limits.observer = ObserverSettings {
            idle_check: Duration::from_millis(50),
            quiet_output: Duration::from_millis(200),
            stale_after: Duration::from_secs(2),
            ..ObserverSettings::default()
        };
    })
    .await;
    server.fixture.core.start_watcher().expect("watcher");
    let ui = crate::tools::ui(&server).await;
    Day { _fake: fake, server, ui, bin, sent: BTreeSet::new(), seen: BTreeSet::new(), errors: BTreeSet::new() }
}

fn hello() -> Value {
    json!({"version": "test", "platform": "linux", "windowSize": {"width": 1280, "height": 800}})
}

fn explain(path: &str) -> Value {
    json!({"path": path, "language": "rust", "selection": {"startLine": 1, "startCol": 1, "endLine": 1, "endCol": 14},
           "selectedText": "fn login() {}", "surroundingContext": "fn login() {}\n"})
}

/// No session yet: the launch screen, and every refusal a panel shows without one.
pub(super) async fn launch_screen(day: &mut Day) {
    day.ask("connection:hello", hello(), &["connection:init", "fs:tree", "observer:status"]).await;
    day.send_raw("{not json").await;
    day.until(&["connection:error"]).await;
    day.ask("coaching:show_me", json!({}), &["coaching:worked_example_error"]).await;
    day.ask("intake:answer", json!({"text": "hello"}), &["intake:error"]).await;
    day.ask("practice:list", json!({}), &["practice:katas"]).await;
    day.ask("practice:kata_request", json!({"kataId": "no-such-kata"}), &["practice:kata_error"]).await;
    day.ask("user:review", json!({"kataId": "no-such-kata", "userCode": "x"}), &["review:error"]).await;
    day.ask("user:explain", explain("src/missing.rs"), &["explain:error"]).await;
    day.ask("user:explain", explain("src/auth.rs"), &["explain:response"]).await;
    day.ask("dashboard:request", json!({}), &["dashboard:state", "dashboard:issues"]).await;
    day.logged(ActionType::DashboardLoaded).await;
    day.ask("session:list", json!({}), &["session:options"]).await;
}

/// The first session opens with the intake interview; the timebox hands over to coding.
pub(super) async fn interview(day: &mut Day) {
    let title = json!({"title": "Fix the login race"});
    day.ask("session:start", title, &["session:started", "intake:state", "intake:sentence", "intake:reply_done"]).await;
    day.send("intake:typing", json!({"typing": true})).await;
    day.send("intake:typing", json!({"typing": false})).await;
    let answer = json!({"text": "A weather app; I rewrote its cache twice because it went stale."});
    day.ask("intake:answer", answer, &["intake:reply_done"]).await;
    day.logged(ActionType::IntakeTurn).await;
    day.server.fixture.clock.advance(chrono::Duration::seconds(240));
    day.until(&["intake:transition"]).await;
    day.logged(ActionType::IntakeTransition).await;
    // The panel rejoins the interview (after a reload): its state, handed over.
    let frames = day.ask("intake:start", json!({}), &["intake:state"]).await;
    let state = frames.iter().find(|f| f["type"] == "intake:state").expect("state");
    assert_eq!(state["payload"]["phase"], "coding", "{state}");
    // Over: nothing left to skip.
    day.ask("intake:skip", json!({}), &["intake:error"]).await;
}

/// Claude Code, over MCP, fills the issue panel, plans, starts phase 1 and steers the editor.
pub(super) async fn claude_code_plans(day: &mut Day) {
    let client = session_client(&day.server).await;
    let issue = json!({"number": 7, "title": "Login fails", "summary": "The OAuth callback races the redirect."});
    ok(&call(&client, "paige_show_issue_context", issue).await);
    // Planless: Claude Code's calls show in the panel, and the learner may ask for a plan again.
    day.until(&["coaching:issue_context", "coaching:agent_activity"]).await;
    day.ask("coaching:replan", json!({}), &["coaching:message"]).await;
    let mut refused = args();
    refused["planText"] = json!("REFUSED-PLAN");
    let _ = call(&client, "paige_run_coaching_pipeline", refused).await;
    day.until(&["coaching:plan_failed"]).await;
    ok(&call(&client, "paige_run_coaching_pipeline", args()).await);
    day.until(&["coaching:plan_ready", "explorer:hint_files", "editor:highlight_lines"]).await;
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "active"})).await);
    day.until(&["editor:clear_highlights", "explorer:clear_hints", "coaching:phase_update"]).await;
    ok(&call(&client, "paige_show_message", json!({"message": "Start from the callback.", "type": "info"})).await);
    day.until(&["coaching:message"]).await;
    ok(&call(&client, "paige_open_file", json!({"path": "src/auth.rs"})).await);
    day.until(&["editor:open_file"]).await;
    let line =
        json!({"path": "src/auth.rs", "start": 2, "end": 2, "style": "focus", "hoverText": "What does it wait for?"});
    ok(&call(&client, "paige_highlight_lines", line).await);
    ok(&call(&client, "paige_clear_highlights", json!({"path": "src/auth.rs"})).await);
    ok(&call(&client, "paige_hint_files", json!({"hints": [{"path": "src/auth.rs", "style": "important"}]})).await);
    ok(&call(&client, "paige_clear_hints", json!({})).await);
    day.until(&["editor:highlight_lines", "editor:clear_highlights", "explorer:hint_files", "explorer:clear_hints"])
        .await;
    ok(&call(&client, "paige_get_session_state", json!({})).await);
    ok(&call(&client, "paige_get_diff", json!({})).await);
    client.cancel().await.expect("close");
    // Phase 1 started: the Observer evaluated it and nudged.
    day.logged(ActionType::NudgeSent).await;
}

/// The learner edits, saves, looks around and asks to be shown.
pub(super) async fn learner_works(day: &mut Day) {
    day.ask("file:open", json!({"path": "src/auth.rs"}), &["fs:content"]).await;
    // Within the nudge's cooldown this open is suppressed, not evaluated.
    day.logged(ActionType::NudgeSuppressed).await;
    let update =
        json!({"path": "src/auth.rs", "content": EDITED, "cursorPosition": {"line": 3, "column": 5}, "selections": []});
    day.send("buffer:update", update).await;
    day.send("editor:tab_switch", json!({"fromPath": null, "toPath": "src/auth.rs"})).await;
    let range = json!({"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 16});
    day.send("editor:selection", json!({"path": "src/auth.rs", "range": range, "textLength": 15})).await;
    day.send("explorer:expand_dir", json!({"path": "src"})).await;
    day.ask("fs:list", json!({"path": "src"}), &["fs:children"]).await;
    day.ask("fs:list", json!({"path": "../outside"}), &["fs:list_error"]).await;
    day.send("explorer:collapse_dir", json!({"path": "src"})).await;
    day.send("user:idle_start", json!({"lastActionTimestamp": 0})).await;
    day.send("user:idle_end", json!({})).await;
    day.send("terminal:resize", json!({"cols": 100, "rows": 30})).await;
    day.ask("hints:level_change", json!({"level": "file", "previousLevel": "line"}), &["coaching:phase_update"]).await;
    day.ask("observer:mute", json!({"muted": true}), &["observer:status"]).await;
    day.ask("observer:mute", json!({"muted": false}), &["observer:status"]).await;
    use ActionType::*;
    for kind in [BufferSignificantChange, TabSwitch, Selection, IdleStart, IdleEnd, HintLevelChange, ObserverMuted] {
        day.logged(kind).await;
    }
    let save = json!({"path": "src/auth.rs", "content": EDITED});
    day.ask("file:save", save, &["fs:save_ack", "coaching:step_check"]).await;
    day.ask("file:save", json!({"path": "src", "content": "not a file"}), &["fs:save_error"]).await;
    std::fs::write(day.server.fixture.core.project_root().path().join("src/notes.md"), "notes\n").expect("write");
    day.until(&["fs:tree_update"]).await;
    day.send("file:close", json!({"path": "src/auth.rs"})).await;
    day.logged(FileClose).await;
    day.ask("coaching:show_me", json!({}), &["coaching:worked_example"]).await;
    day.logged(WorkedExample).await;
}

/// The desktop window's path: a connection with a PTY (as `src-tauri` opens one) says hello
/// and types into its terminal through the same dispatcher.
pub(super) async fn desktop_terminal(day: &mut Day) {
    let core = day.server.fixture.core.clone();
    let conn = core.connect();
    let command = paige_core::terminal::AgentCommand {
        program: "cat".into(),
        args: Vec::new(),
        cwd: core.project_root().path().to_owned(),
        banner: None,
        env: Vec::new(),
        accepts_nudges: false,
        clear_env: false,
    };
    let mut output = core.open_terminal(conn, &command).expect("terminal");
    let frame = |kind: &str, payload: Value| json!({"type": kind, "payload": payload}).to_string();
    let init: Value = serde_json::from_str(&core.handle_text(conn, &frame("connection:hello", hello())).expect("init"))
        .expect("json");
    day.record(&init);
    let capabilities = init["payload"]["capabilities"].as_array().expect("capabilities");
    assert!(capabilities.contains(&json!("terminal:input")), "a window with a terminal may type into it: {init}");
    assert_eq!(init["payload"]["featureFlags"]["terminal"], true);
    day.sent.insert("terminal:input".to_owned());
    assert_eq!(core.handle_text(conn, &frame("terminal:input", json!({"input": "echo-me\r"}))), None);
    let mut echoed = String::new();
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while !echoed.contains("echo-me") {
        match tokio::time::timeout_at(deadline, output.recv()).await {
            Ok(Some(chunk)) => echoed.push_str(&chunk),
            other => panic!("the terminal never echoed the input: {other:?}, got {echoed:?}"),
        }
    }
    core.disconnect(conn);
}

/// `POST /hooks/{event}` with a recorded Claude Code payload, `patch`ed; the decision.
async fn hook(day: &Day, event: &str, fixture: &str, patch: Value) -> Value {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code-hooks");
    let text = std::fs::read_to_string(fixtures.join(format!("{fixture}.json"))).expect("fixture");
    let mut body: Value = serde_json::from_str(&text).expect("fixture is JSON");
    body["cwd"] = json!(day.server.fixture.core.project_root().path());
    body["transcript_path"] = json!(fixtures.join("transcript-bash-session.jsonl"));
    for (key, value) in patch.as_object().expect("patch is an object") {
        body[key] = value.clone();
    }
    let response = reqwest::Client::new()
        .post(format!("{}/hooks/{event}", day.server.base))
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .expect("hook answered");
    assert!(response.status().is_success(), "{event}: {}", response.status());
    response.json().await.expect("decision is JSON")
}

/// Claude Code's Bash changes a learner file (undone), the UI resumes its session, the phase
/// completes, Claude Code exits (the session stays open) and the learner ends the session.
pub(super) async fn claude_code_hooks(day: &mut Day) {
    // Claude Code writes the call to its transcript before it runs the hook: Paige watches
    // only calls the transcript shows.
    let transcript = day.server.fixture.core.config().data_dir.join("transcript-make.jsonl");
    let line = json!({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_make", "name": "Bash", "input": {"command": "cargo build"}}]}});
    std::fs::write(&transcript, format!("{line}\n")).expect("transcript");
    let bash = |id: &str| {
        json!({"tool_name": "Bash", "tool_input": {"command": "cargo build"}, "tool_use_id": id,
            "transcript_path": transcript})
    };
    assert_eq!(hook(day, "PreToolUse", "PreToolUse-Write", bash("toolu_make")).await["decision"], "none");
    let auth = day.server.fixture.core.project_root().path().join("src/auth.rs");
    std::fs::write(&auth, "fn login() { hacked() }\n").expect("write");
    let mut post = bash("toolu_make");
    post["tool_response"] = json!({"stdout": "", "stderr": "", "interrupted": false});
    let decision = hook(day, "PostToolUse", "PostToolUse-Write-create", post).await;
    assert_eq!(decision["decision"], "block", "{decision}");
    assert_eq!(std::fs::read_to_string(&auth).expect("read"), EDITED, "the learner's save is back");
    day.logged(ActionType::ChangeReverted).await;
    day.until(&["coaching:message"]).await;

    let session = day.server.fixture.core.active_session().expect("session").id;
    day.ask("session:resume", json!({"sessionId": session}), &["session:resumed"]).await;
    // The learner marks phase 2 done from the panel.
    day.ask("coaching:phase_done", json!({"phase": 2}), &["coaching:phase_update"]).await;
    let client = session_client(&day.server).await;
    ok(&call(&client, "paige_update_phase", json!({"phase": 1, "status": "complete"})).await);
    day.until(&["coaching:phase_update"]).await;
    client.cancel().await.expect("close");
    learning_signals(day).await;

    // Claude Code exits: the session stays open (a notice says so); the learner ends it.
    assert_eq!(hook(day, "SessionEnd", "SessionEnd", json!({"reason": "other"})).await["decision"], "none");
    day.until(&["coaching:message"]).await;
    assert!(day.server.fixture.core.active_session().is_some(), "Claude Code exiting does not end the session");
    day.ask("session:end", json!({}), &["session:wrapping_up", "session:ended", "session:completed"]).await;
}

/// Issue 30: the completed phases' comprehension checks (answered, skipped, a refused retry),
/// the learner's prompt to Claude Code on the gauge, and a code block Claude Code showed that
/// the learner types.
async fn learning_signals(day: &mut Day) {
    // The checks started when the phases completed; their frames may have passed while the
    // flow above waited for others, so the question is read where it is kept.
    let core = day.server.fixture.core.clone();
    let session = core.active_session().expect("session").id;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    let question = loop {
        let open = core.db().questions_for_session(&session).expect("questions");
        if let Some(q) = open.into_iter().find(|q| q.status == paige_core::db::QuestionStatus::Open) {
            break q;
        }
        assert!(tokio::time::Instant::now() < deadline, "no comprehension question was asked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let answer = json!({"questionId": question.id, "answer": "because the token comes later"});
    day.ask("learning:answer", answer, &["learning:check"]).await;
    day.logged(ActionType::ComprehensionCheck).await;
    let phase = core.db().phase(&question.phase_id).expect("its phase").number;
    day.send("learning:skip", json!({"phase": phase})).await;
    day.ask("learning:retry", json!({"phase": 99}), &["learning:error"]).await;
    let prompt = json!({"prompt": "write the callback for me", "session_id": session});
    assert_eq!(hook(day, "UserPromptSubmit", "UserPromptSubmit", prompt).await["decision"], "context");
    day.until(&["learning:signals"]).await;
    let shown = "fn callback(token: Token, store: &mut Store) -> Result<(), AuthError> {\n    let session = exchange(&token).await?;\n    if session.expired() {\n        return Err(AuthError::Expired);\n    }\n    store.insert(session.id(), session.clone());\n    redirect(\"/home\");\n    Ok(())\n}";
    let stop = json!({"last_assistant_message": format!("Like this:\n```rust\n{shown}\n```"), "transcript_path": "/nonexistent/t.jsonl"});
    assert_eq!(hook(day, "Stop", "Stop", stop).await["decision"], "none");
    day.ask("file:open", json!({"path": "src/auth.rs"}), &["fs:content"]).await;
    let typed = format!("{EDITED}{}\n", shown.replace("session", "s"));
    let update = json!({"path": "src/auth.rs", "content": typed, "cursorPosition": {"line": 9, "column": 1}});
    day.send("buffer:update", update).await;
    day.logged(ActionType::SolutionShown).await;
    day.send("file:close", json!({"path": "src/auth.rs"})).await;
}

/// Issue 31: the reviews due after the session (its gap), one answered, one refused; the
/// learning record exported, and a bad day refused.
async fn reviews_and_record(day: &mut Day) {
    let frames = day.ask("reviews:list", json!({}), &["reviews:due"]).await;
    let due = frames.iter().find(|f| f["type"] == "reviews:due").expect("due");
    let item = due["payload"]["items"][0]["id"].as_str().expect("an item due").to_owned();
    day.ask("reviews:answer", json!({"itemId": item, "answer": "because"}), &["reviews:error"]).await;
    day.ask("reviews:start", json!({"itemId": item}), &["reviews:question"]).await;
    let answer = json!({"itemId": item, "answer": "because it resolves later"});
    day.ask("reviews:answer", answer, &["reviews:graded", "reviews:due"]).await;
    let frames = day.ask("record:export", json!({}), &["record:exported"]).await;
    let exported = frames.iter().find(|f| f["type"] == "record:exported").expect("exported");
    let content = exported["payload"]["content"].as_str().expect("content");
    let verified = paige_core::record::verify(std::io::Cursor::new(content.as_bytes()), None).expect("verifies");
    assert!(verified.sessions >= 1, "{verified:?}");
    day.ask("record:export", json!({"since": "yesterday"}), &["record:error"]).await;
}

/// The wrap-up's gap and kata on the dashboard and in practice; a second session the UI ends.
pub(super) async fn after_the_session(day: &mut Day) {
    day.ask("dashboard:request", json!({}), &["dashboard:state", "dashboard:issues", "dashboard:materials"]).await;
    reviews_and_record(day).await;
    let gh = day.bin.path().join("gh");
    write_script(&gh, "#!/bin/sh\necho 'gh: authentication required' >&2\nexit 1\n");
    day.ask("dashboard:refresh_issues", json!({}), &["dashboard:issues_error"]).await;
    // The materials answer is kept (issue 28): a refresh asks the model again, which fails now.
    let refresh = json!({"statsPeriod": "7d", "refresh": true});
    day.ask("dashboard:request", refresh, &["dashboard:state", "dashboard:issues_error", "dashboard:materials_error"])
        .await;

    let frames = day.ask("practice:list", json!({}), &["practice:katas"]).await;
    let listed = frames.iter().find(|f| f["type"] == "practice:katas").expect("katas");
    let kata = listed["payload"]["katas"][0]["id"].as_str().expect("the wrap-up's kata").to_owned();
    day.ask("practice:kata_request", json!({"kataId": kata}), &["practice:kata_load"]).await;
    let code = "async fn both() { first().await; second().await }";
    day.ask("user:review", json!({"kataId": kata, "userCode": code}), &["review:response"]).await;
    let submit = json!({"kataId": kata, "code": code, "activeConstraints": ["No sleep"]});
    day.ask("practice:submit_solution", submit, &["practice:solution_review"]).await;

    day.ask("session:start", json!({"title": "Add a --quiet flag"}), &["session:started"]).await;
    // Unsaved when the session ends: summarised in it.
    let update =
        json!({"path": "src/notes.md", "content": "notes\n--quiet\n", "cursorPosition": {"line": 2, "column": 8}});
    day.send("buffer:update", update).await;
    day.ask("session:end", json!({}), &["session:ended", "session:completed"]).await;
    use ActionType::*;
    for kind in [ReviewCompleted, ExplainCompleted, BufferSummary, SessionEnded] {
        day.logged(kind).await;
    }
}
