//! The learning record (issue 31): export → verify round trips on a real database, every
//! tampering caught with the line named, and the signing key's file (missing, loose, odd).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use chrono::Duration;
use paige_core::db::{
    Author, Db, HintLevel, KataAttempt, KataConstraint, NewKataSpec, NewKnowledgeGap, NewQuestion, NewReview,
    NewReviewItem, NewSession, PhaseStatus, ReviewKind, SessionStatus, Severity,
};
use paige_core::record::{self, SigningKey, VerifyError, Writer};
use paige_core::{Clock, ManualClock};
use serde_json::{Value, json};

use super::clock;

const ANSWER: &str = "it returns the port as a u16";
const QUOTE: &str = "trimmed.parse::<u16>()";
const PROMPT: &str = "please just write the parser for me";

/// A database with two sessions: the first (issue 15) with two completed phases, two
/// comprehension questions (one graded, one skipped), a kata with two attempts, a review,
/// prompts and a solution shown; the second still active with one phase.
struct History {
    db: Db,
    clock: Arc<ManualClock>,
    _dir: tempfile::TempDir,
}

fn history() -> History {
    let dir = tempfile::tempdir().expect("dir");
    let clock = clock();
    let db = Db::open(&dir.path().join("paige.db"), clock.clone()).expect("db");
    let tick = || clock.advance(Duration::minutes(5));

    let first = db
        .create_session(NewSession {
            project_dir: dir.path().to_owned(),
            issue_number: Some(15),
            issue_title: Some("Read the port from the config".into()),
        })
        .expect("session");
    let mut one = super::new_phase(1, "src/config.rs", "parses_port");
    one.0.skill_area = Some("error handling".into());
    let mut two = super::new_phase(2, "src/main.rs", "uses_port");
    two.0.skill_area = Some("testing".into());
    let (_, phases) = db.create_plan_with_phases(&first.id, "1. parse\n2. use", vec![one, two]).expect("plan");
    let (p1, p2) = (&phases[0].0, &phases[1].0);
    tick();
    db.set_phase_status(&p1.id, PhaseStatus::Active).expect("active");
    db.set_phase_hint_level(&p1.id, HintLevel::Line).expect("hint up");
    tick();
    db.set_phase_status(&p1.id, PhaseStatus::Complete).expect("complete");
    let question = |kind: &str, concept: &str, phase_id: &str| {
        db.create_question(NewQuestion {
            session_id: first.id.clone(),
            phase_id: phase_id.to_owned(),
            skill_area: Some("error handling".into()),
            kind: kind.into(),
            question: "What does `parse_port(\" 80 \")` return?".into(),
            quote: QUOTE.into(),
            concept: concept.into(),
        })
        .expect("question")
    };
    let graded = question("predict_output", "parsing", &p1.id);
    tick();
    assert!(db.answer_question(&graded.id, ANSWER).expect("answer"));
    assert!(db.grade_question(&graded.id, "correct", "right", "str::parse").expect("grade"));
    question("edge_case", "empty input", &p1.id);
    db.skip_questions(&p1.id).expect("skip");
    tick();
    db.set_phase_status(&p2.id, PhaseStatus::Complete).expect("complete two");
    db.record_prompt(Some(&first.id), Some(&p2.id), PROMPT, "delegation", "rule", Author::Learner).expect("prompt");
    db.record_prompt(
        Some(&first.id),
        Some(&p2.id),
        "why is this a u16?",
        "conceptual_question",
        "rule",
        Author::Learner,
    )
    .expect("prompt");
    db.record_solution_shown(&first.id, Some(&p2.id), "src/main.rs", 0.82, 6).expect("solution");

    let gap = db
        .create_knowledge_gap(NewKnowledgeGap {
            session_id: first.id.clone(),
            topic: "Result and ?".into(),
            severity: Severity::Medium,
            evidence: "unwrapped every parse".into(),
            related_concepts: vec![],
        })
        .expect("gap");
    let constraint = |title: &str, min_level: u8| KataConstraint {
        title: title.into(),
        description: format!("{title}."),
        min_level,
    };
    let kata = db
        .create_kata(NewKataSpec {
            knowledge_gap_id: gap.id.clone(),
            title: "Parse without unwrap".into(),
            description: "d".into(),
            scaffolding_code: "fn main() {}".into(),
            instructor_notes: "n".into(),
            constraints: vec![constraint("No unwrap", 3), constraint("One match", 8)],
        })
        .expect("kata");
    let attempt = |level: u8, passed: bool, under: Vec<KataConstraint>| KataAttempt {
        code: "fn secret_kata_code() {}".into(),
        review: Some("good".into()),
        level: Some(level),
        passed: Some(passed),
        constraints: Some(under),
    };
    db.record_kata_attempt(&kata.id, &attempt(2, false, vec![])).expect("attempt 1");
    db.record_kata_attempt(&kata.id, &attempt(5, true, vec![constraint("No unwrap", 3)])).expect("attempt 2");

    db.add_review_item(&NewReviewItem {
        kind: ReviewKind::Gap,
        source_id: gap.id.clone(),
        topic: "Result and ?".into(),
        skill_area: Some("error handling".into()),
        context: json!({}),
        card: json!({}),
        due: clock.now(),
    })
    .expect("item");
    let item = db.review_item_of(ReviewKind::Gap, &gap.id).expect("item").expect("kept");
    tick();
    db.record_review(&NewReview {
        item_id: item.id,
        question: "When does ? return early?".into(),
        answer: "secret review answer".into(),
        grade: "partial".into(),
        rating: "hard".into(),
        elapsed_ms: 30_000,
        scheduled_days: 2,
    })
    .expect("review");
    db.end_session(&first.id, SessionStatus::Completed).expect("end");

    clock.advance(Duration::days(2));
    let second = db
        .create_session(NewSession { project_dir: dir.path().to_owned(), issue_number: None, issue_title: None })
        .expect("second");
    db.create_plan_with_phases(&second.id, "1. tests", vec![super::new_phase(1, "src/lib.rs", "t")]).expect("plan");
    History { db, clock, _dir: dir }
}

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn export(history: &History, key: &SigningKey) -> Vec<u8> {
    let mut out = Vec::new();
    record::export(&history.db, key, None, history.clock.now(), &mut out).expect("export");
    out
}

fn lines(record: &[u8]) -> Vec<String> {
    String::from_utf8(record.to_vec()).expect("utf-8").lines().map(str::to_owned).collect()
}

fn join(lines: &[String]) -> Vec<u8> {
    lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect()
}

fn verify(record: &[u8]) -> Result<record::Verified, VerifyError> {
    record::verify(record, None)
}

/// Verifying `record` fails at `line` with a problem mentioning `says`.
#[track_caller]
fn check_broken(record: &[u8], pinned: Option<&record::VerifyingKey>, line: u64, says: &str) {
    let err = record::verify(record, pinned).expect_err("the tampered record must not verify");
    assert_eq!(err.line, line, "wrong line named: {err}");
    assert!(err.to_string().contains(says), "{err:?} should say {says:?}");
}

#[test]
fn an_exported_record_verifies_and_holds_what_the_learner_did_but_not_what_they_typed() {
    let history = history();
    let signer = key(7);
    let record = export(&history, &signer);
    let verified = verify(&record).expect("valid");
    let lines = lines(&record);
    assert_eq!(verified.lines, lines.len() as u64);
    assert_eq!(verified.sessions, 2);
    assert_eq!(verified.public_key, hex::encode(signer.verifying_key().to_bytes()));
    assert!(record::verify(record.as_slice(), Some(&signer.verifying_key())).is_ok(), "pinned to its own key");

    let parsed: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).expect("json")).collect();
    let types: Vec<&str> = parsed.iter().map(|v| v["type"].as_str().expect("type")).collect();
    assert_eq!(
        types,
        [
            "header",
            "session",
            "session",
            "comprehension",
            "comprehension",
            "kata_attempt",
            "kata_attempt",
            "review",
            "reliance",
            "solutions_shown",
            "signature"
        ]
    );
    let first = &parsed[1];
    assert_eq!(first["issueNumber"], 15);
    assert_eq!(first["status"], "completed");
    let phases: Vec<(i64, &str, &str)> = first["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| {
            (p["number"].as_i64().expect("n"), p["hintLevel"].as_str().expect("h"), p["status"].as_str().expect("s"))
        })
        .collect();
    assert_eq!(phases, [(1, "line", "complete"), (2, "file", "complete")]);
    assert_eq!(parsed[2]["status"], "active");
    assert_eq!((parsed[3]["grade"].as_str(), parsed[3]["concept"].as_str()), (Some("correct"), Some("str::parse")));
    assert_eq!((parsed[4]["status"].as_str(), parsed[4]["grade"].as_str()), (Some("skipped"), None));
    assert_eq!(parsed[5]["unlocked"], json!([]));
    assert_eq!(parsed[6]["unlocked"], json!(["No unwrap"]));
    assert_eq!(parsed[6]["madeUnder"], json!(["No unwrap"]));
    assert_eq!((parsed[7]["rating"].as_str(), parsed[7]["scheduledDays"].as_i64()), (Some("hard"), Some(2)));
    assert_eq!(parsed[8]["classes"]["delegation"], 1);
    assert_eq!(parsed[8]["prompts"], 2);
    assert_eq!(parsed[9]["path"], "src/main.rs");
    let text = String::from_utf8(record).expect("utf-8");
    for private in [ANSWER, QUOTE, PROMPT, "secret_kata_code", "secret review answer"] {
        assert!(!text.contains(private), "the record must not hold {private:?}");
    }
}

#[test]
fn a_record_since_a_day_holds_only_what_came_after() {
    let history = history();
    let since = history.clock.now() - Duration::days(1);
    let mut out = Vec::new();
    let summary = record::export(&history.db, &key(1), Some(since), history.clock.now(), &mut out).expect("export");
    assert_eq!(summary.sessions, 1);
    let verified = verify(&out).expect("valid");
    assert_eq!((verified.sessions, verified.lines), (1, 4), "header, one session, reliance, signature");
    assert!(verified.since.is_some());
}

#[test]
fn a_record_with_no_sessions_is_valid() {
    let db = Db::open_in_memory(clock()).expect("db");
    let mut out = Vec::new();
    let summary = record::export(&db, &key(2), None, chrono::Utc::now(), &mut out).expect("export");
    assert_eq!((summary.lines, summary.sessions), (3, 0));
    let verified = verify(&out).expect("valid");
    assert_eq!((verified.lines, verified.sessions), (3, 0));
    let reliance: Value = serde_json::from_str(&lines(&out)[1]).expect("json");
    assert_eq!((reliance["type"].as_str(), reliance["prompts"].as_u64()), (Some("reliance"), Some(0)));
}

#[test]
fn a_truncated_record_fails_at_its_last_line() {
    let record = export(&history(), &key(3));
    let mut lines = lines(&record);
    lines.pop();
    let last = lines.len() as u64;
    check_broken(&join(&lines), None, last, "without its signature line");
    // Cut in the middle of line 4.
    let offset: usize = lines[..3].iter().map(|l| l.len() + 1).sum::<usize>() + 20;
    check_broken(&record[..offset], None, 4, "cut short");
}

#[test]
fn two_swapped_lines_fail_at_the_first_moved_one() {
    let mut lines = lines(&export(&history(), &key(3)));
    lines.swap(3, 4);
    check_broken(&join(&lines), None, 4, "moved, inserted or changed");
}

#[test]
fn an_edited_field_names_the_edited_line() {
    let mut lines = lines(&export(&history(), &key(3)));
    assert!(lines[3].contains("\"grade\":\"correct\""), "{}", lines[3]);
    lines[3] = lines[3].replace("\"grade\":\"correct\"", "\"grade\":\"incorrect\"");
    check_broken(&join(&lines), None, 4, "changed");
    // The line before the signature: the signature line is intact, so that line changed.
    let mut lines = self::lines(&export(&history(), &key(3)));
    let before_signature = lines.len() - 2;
    lines[before_signature] = lines[before_signature].replace("src/main.rs", "src/lib.rs");
    check_broken(&join(&lines), None, before_signature as u64 + 1, "changed");
    // The header.
    let mut lines = self::lines(&export(&history(), &key(3)));
    lines[0] = lines[0].replace("\"since\":null", "\"since\":\"2020-01-01T00:00:00.000Z\"");
    check_broken(&join(&lines), None, 1, "changed");
}

#[test]
fn a_removed_line_names_the_line_before_the_gap() {
    let mut lines = lines(&export(&history(), &key(3)));
    lines.remove(4);
    check_broken(&join(&lines), None, 4, "lines after this one were removed");
}

#[test]
fn a_record_signed_by_another_key_fails_when_the_key_is_pinned() {
    let history = history();
    let genuine = key(3);
    let record = export(&history, &genuine);
    let forger = key(4);
    // Someone edits the record and signs it again with a key of their own: the chain holds,
    // the header names their key, so only a pinned key catches it.
    let mut writer = Writer::new(Vec::new(), &forger, history.clock.now(), None).expect("writer");
    let body = lines(&record);
    for line in &body[1..body.len() - 1] {
        let mut value: Value = serde_json::from_str(line).expect("json");
        let object = value.as_object_mut().expect("object");
        object.remove("prev");
        if object.get("grade").is_some_and(|g| g == "partial") {
            object.insert("grade".into(), json!("correct"));
        }
        writer.push(&value).expect("push");
    }
    let (forged, _) = writer.finish().expect("finish");
    assert!(verify(&forged).is_ok(), "self-consistent: the header's key signed it");
    check_broken(&forged, Some(&genuine.verifying_key()), 1, "not the pinned key");
    // The genuine record against the wrong pinned key.
    check_broken(&record, Some(&forger.verifying_key()), 1, "not the pinned key");
}

#[test]
fn a_signature_by_another_key_than_the_headers_fails_at_the_signature() {
    let history = history();
    let genuine = export(&history, &key(3));
    let other = export(&history, &key(4));
    let (mut lines, other) = (lines(&genuine), self::lines(&other));
    let last = lines.len() - 1;
    let theirs: Value = serde_json::from_str(&other[last]).expect("json");
    let mut mine: Value = serde_json::from_str(&lines[last]).expect("json");
    mine["signature"] = theirs["signature"].clone();
    lines[last] = format!(
        r#"{{"type":"signature","lines":{},"head":{},"prev":{},"signature":{}}}"#,
        mine["lines"], mine["head"], mine["prev"], mine["signature"]
    );
    check_broken(&join(&lines), None, lines.len() as u64, "does not verify with the header's key");
}

#[test]
fn an_empty_file_fails_at_line_one() {
    check_broken(b"", None, 1, "empty");
}

#[test]
fn a_line_that_is_not_json_is_named() {
    let mut lines = lines(&export(&history(), &key(3)));
    lines[2] = "this is not json".into();
    check_broken(&join(&lines), None, 3, "not JSON");
    let mut lines = self::lines(&export(&history(), &key(3)));
    lines[2] = "[1, 2]".into();
    check_broken(&join(&lines), None, 3, "not a record line");
}

#[test]
fn an_over_long_line_is_refused_without_reading_it_all() {
    let mut lines = lines(&export(&history(), &key(3)));
    lines.insert(2, "x".repeat(record::MAX_LINE_BYTES + 10));
    check_broken(&join(&lines), None, 3, "longer than 16 MiB");
}

#[test]
fn anything_after_the_signature_is_refused() {
    let mut record = export(&history(), &key(3));
    let count = lines(&record).len() as u64;
    record.extend_from_slice(b"\n");
    check_broken(&record, None, count + 1, "nothing may follow");
}

#[test]
fn a_blank_line_or_an_unknown_type_is_named() {
    let mut lines = lines(&export(&history(), &key(3)));
    lines.insert(2, String::new());
    check_broken(&join(&lines), None, 3, "empty");
    let history = history();
    let mut writer = Writer::new(Vec::new(), &key(3), history.clock.now(), None).expect("writer");
    writer.push(&json!({"type": "diploma", "grade": "A+"})).expect("push");
    let (record, _) = writer.finish().expect("finish");
    check_broken(&record, None, 2, "unknown line type \"diploma\"");
}

#[test]
fn the_key_is_created_private_on_first_use_and_kept() {
    let dir = tempfile::tempdir().expect("dir");
    let data = dir.path().join("data");
    assert!(record::load_key(&data).expect("load").is_none());
    let made = record::load_or_create_key(&data).expect("created");
    let path = data.join(record::KEY_FILE);
    let meta = std::fs::symlink_metadata(&path).expect("key file");
    assert!(meta.is_file());
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let again = record::load_or_create_key(&data).expect("loaded");
    assert_eq!(made.to_bytes(), again.to_bytes());
    let leftovers: Vec<_> = std::fs::read_dir(&data).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(leftovers, [record::KEY_FILE], "no temp file left");
}

#[test]
fn a_key_file_others_may_read_is_refused_saying_why() {
    let dir = tempfile::tempdir().expect("dir");
    record::load_or_create_key(dir.path()).expect("created");
    let path = dir.path().join(record::KEY_FILE);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let err = record::load_or_create_key(dir.path()).expect_err("loose key");
    let text = err.to_string();
    assert!(text.contains("mode 0644") && text.contains("chmod 600"), "{text}");
    assert!(record::load_key(dir.path()).is_err(), "load refuses too");
    assert_eq!(std::fs::metadata(&path).expect("kept").permissions().mode() & 0o777, 0o644, "left as it was");
}

#[test]
fn a_key_file_that_is_a_symlink_a_directory_or_the_wrong_length_is_refused() {
    let check = |setup: &dyn Fn(&Path), says: &str| {
        let dir = tempfile::tempdir().expect("dir");
        setup(dir.path());
        let err = record::load_or_create_key(dir.path()).expect_err("refused").to_string();
        assert!(err.contains(says), "{err} should say {says:?}");
    };
    let private = |path: &Path, text: &str| {
        use std::os::unix::fs::OpenOptionsExt;
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path).expect("create");
        std::io::Write::write_all(&mut file, text.as_bytes()).expect("write");
    };
    check(
        &|dir| {
            private(&dir.join("elsewhere"), &"ab".repeat(32));
            std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join(record::KEY_FILE)).expect("symlink");
        },
        "symbolic link",
    );
    check(&|dir| std::fs::create_dir(dir.join(record::KEY_FILE)).expect("mkdir"), "not a regular file");
    check(&|dir| private(&dir.join(record::KEY_FILE), "abcd\n"), "holds 4 characters, not 64");
    check(&|dir| private(&dir.join(record::KEY_FILE), &"zz".repeat(32)), "not hex");
}

#[test]
fn a_public_key_given_by_hand_must_be_one() {
    assert!(record::parse_public_key(&hex::encode(key(5).verifying_key().to_bytes())).is_ok());
    let err = record::parse_public_key("abc").expect_err("short").to_string();
    assert!(err.contains("64 hex digits"), "{err}");
}
