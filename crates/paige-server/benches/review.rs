//! A practice review's own cost, the model excluded: over `/ws`, with a session (both actions
//! logged), a kata with 3 constraints and 20 earlier attempts, the fake Messages API answering
//! at once. Each run sends `user:review` and waits for `review:response`: kata read, gap and
//! stage lookup, same-constraint attempts, the call, the attempt appended in its transaction,
//! the unlock, two actions, the frame. The baseline, in the same run: the same prompt (system
//! and user message) sent directly through the client. Paige's overhead is the difference of
//! the medians.
//!   cargo bench -p paige-server --bench review

mod common;
use common::percentile;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use paige_core::api::CallOptions;
use paige_core::db::{KataAttempt, KataConstraint, NewKataSpec, NewKnowledgeGap, Severity};
use paige_core::practice::{resolve_constraints, same_constraint_attempts};
use paige_core::prompts::practice_review::{self as prompt, ActiveConstraint, PracticeReviewResponse};
use paige_core::{Config, Core, SystemClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

const RUNS: usize = 100;

#[tokio::main]
async fn main() {
    let fake = FakeAnthropic::start().await.expect("fake");
    let answer = json!({
        "correct": true, "feedback": "Sound: the delay doubles and the last error is rethrown.", "level": 6,
        "passed": true, "follow_up": {"type": "retry_hint", "reason": "Try it without a loop."},
        "dreyfus_signal": "stable"
    });
    fake.always(Matcher::call_type("practice_review"), Reply::json(&answer));
    let project = tempfile::tempdir().expect("project");
    let data = tempfile::tempdir().expect("data");
    let config = Config {
        anthropic_base_url: Some(fake.base_url()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "bench")
    };
    let core = Arc::new(Core::open(config, Arc::new(SystemClock)).expect("core"));
    let session = core.coaching().start_session(None, Some("bench".into())).expect("session").id;
    core.mute_observer(true);
    let gap = core
        .db()
        .create_knowledge_gap(NewKnowledgeGap {
            session_id: session,
            topic: "async error handling".into(),
            severity: Severity::Medium,
            evidence: "bench".into(),
            related_concepts: vec![],
        })
        .expect("gap");
    let constraints: Vec<KataConstraint> = [("No loops", 3), ("One await", 5), ("No mutation", 7)]
        .into_iter()
        .map(|(title, min_level)| KataConstraint { title: title.into(), description: format!("{title}."), min_level })
        .collect();
    let kata = core
        .db()
        .create_kata(NewKataSpec {
            knowledge_gap_id: gap.id,
            title: "Retry with backoff".into(),
            description: "Write fetchWithRetry(url, tries) that waits 2^n × 100 ms between tries.".into(),
            scaffolding_code: "export async function fetchWithRetry(url, tries) {\n}\n".into(),
            instructor_notes: "Tests: fails twice then succeeds; gives up after `tries`; rethrows the last error."
                .into(),
            constraints: constraints.clone(),
        })
        .expect("kata");
    let code: String = (0..40).map(|i| format!("  // line {i} of a plausible solution\n")).collect();
    for n in 0..20u8 {
        let attempt = KataAttempt {
            code: code.clone(),
            review: Some("earlier review".into()),
            level: Some(1 + n % 6),
            passed: Some(n % 2 == 0),
            constraints: Some(if n % 2 == 0 { vec![constraints[0].clone()] } else { vec![] }),
        };
        core.db().append_kata_attempt(&kata.id, &attempt).expect("attempt");
    }
    let (mut socket, served) = common::serve(core.clone()).await;
    let request = json!({"type": "user:review", "payload": {
        "kataId": kata.id, "userCode": code, "activeConstraintTitles": ["No loops"]}})
    .to_string();
    let mut totals = Vec::new();
    for run in 0..=RUNS {
        let started = Instant::now();
        socket.send(Message::Text(request.clone().into())).await.expect("send");
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), socket.next()).await.expect("an answer in time");
            let Some(Ok(Message::Text(text))) = frame else { continue };
            let frame: Value = serde_json::from_str(text.as_str()).expect("json");
            match frame["type"].as_str() {
                Some("review:response") => break,
                Some("review:error") => panic!("review failed: {frame}"),
                _ => {}
            }
        }
        if run > 0 {
            totals.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let attempts = core.db().kata(&kata.id).expect("kata").user_attempts.len();
    assert_eq!(attempts, 20 + RUNS + 1, "every review appended its attempt");
    // The baseline: the same prompt (as the last review built it), straight through the client.
    let stored = core.db().kata(&kata.id).expect("kata");
    let active = resolve_constraints(&stored.constraints, &["No loops".to_owned()]);
    let previous = same_constraint_attempts(&stored.user_attempts, &active);
    let active: Vec<ActiveConstraint> = active
        .iter()
        .map(|c| ActiveConstraint { title: c.title.clone(), description: c.description.clone() })
        .collect();
    let system = prompt::system_prompt("novice");
    let message =
        prompt::assemble_user_message(&stored.description, &stored.instructor_notes, &active, &code, &previous);
    let options = CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, &system, &message);
    let mut model = Vec::new();
    for run in 0..=RUNS {
        let started = Instant::now();
        core.api().call_with_retry::<PracticeReviewResponse>(core.db(), &options).await.expect("direct call");
        if run > 0 {
            model.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let (total_p50, model_p50) = (percentile(&mut totals, 0.5), percentile(&mut model, 0.5));
    println!("practice review, {RUNS} submissions over /ws (fake model answering at once)");
    println!("  whole review      p50 {:6.2} ms  p99 {:6.2} ms", total_p50, percentile(&mut totals, 0.99));
    println!(
        "  direct call       p50 {:6.2} ms  p99 {:6.2} ms (the baseline)",
        model_p50,
        percentile(&mut model, 0.99)
    );
    println!("  Paige's overhead  p50 {:6.2} ms (whole review − direct call)", total_p50 - model_p50);
    drop(socket);
    served.stop().await;
    let _ = core.shutdown().await;
}
