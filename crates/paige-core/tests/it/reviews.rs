//! Spaced review (issue 31) on the virtual clock, against the fake Messages API answering
//! from each request: what the learner found hard becomes review items, FSRS schedules them
//! (Good three times moves an item out; Again brings it back the next day), a stable interval
//! or an understood phase of the skill area addresses a gap, and the dashboard counts both.

use std::sync::Arc;
use std::time::Duration;

use chrono::Duration as Days;
use paige_core::db::{GapFilter, NewKnowledgeGap, Severity};
use paige_core::protocol::{ConnectionId, Period};
use paige_core::{Clock, Config, Core, ManualClock};
use paige_fake_anthropic::{FakeAnthropic, Matcher, RecordedRequest, Reply};
use serde_json::{Value, json};

struct World {
    /// Review questions to fail before answering (a model that errors).
    fail_questions: Arc<std::sync::atomic::AtomicUsize>,
    _fake: FakeAnthropic,
    core: Arc<Core>,
    clock: Arc<ManualClock>,
    session: String,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn message(request: &RecordedRequest) -> Value {
    serde_json::from_str(request.user_message().unwrap_or("{}")).unwrap_or(Value::Null)
}

/// A core on the manual clock talking to the fake, which writes review questions naming the
/// item's topic and grades an answer with "because" in it correct, anything else incorrect.
async fn world() -> World {
    let fake = FakeAnthropic::start().await.expect("fake");
    let fail_questions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let failing = fail_questions.clone();
    fake.always(
        Matcher::call_type("review_question"),
        Reply::computed(move |r| {
            use std::sync::atomic::Ordering::SeqCst;
            if failing.fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1)).is_ok() {
                return Reply::server_error();
            }
            let topic = message(r)["item"]["topic"].as_str().unwrap_or_default().to_owned();
            Reply::json(&json!({"question": format!("What goes wrong with {topic} here?"), "concept": topic}))
        }),
    );
    fake.always(
        Matcher::call_type("comprehension_grade"),
        Reply::computed(|r| {
            let answer = message(r)["learner_answer"].as_str().unwrap_or_default().to_owned();
            let grade = if answer.contains("because") { "correct" } else { "incorrect" };
            Reply::json(&json!({"grade": grade, "why": "graded from the answer", "concept": "c"}))
        }),
    );
    let (project, data) = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
    let config = Config {
        anthropic_base_url: Some(fake.base_url()),
        ..Config::new(project.path().to_owned(), data.path().to_owned(), "sk-test")
    };
    let clock = super::clock();
    let core = Arc::new(Core::open(config, clock.clone()).expect("core"));
    let session = core.coaching().start_session(Some(31), Some("Review".into())).expect("session").id;
    assert!(core.mute_observer(true));
    World { fail_questions, _fake: fake, core, clock, session, _dirs: (project, data) }
}

impl World {
    fn gap(&self, topic: &str) -> String {
        let new = NewKnowledgeGap {
            session_id: self.session.clone(),
            topic: topic.into(),
            severity: Severity::Medium,
            evidence: format!("struggled with {topic}"),
            related_concepts: Vec::new(),
        };
        self.core.db().create_knowledge_gap(new).expect("gap").id
    }

    fn item_of(&self, gap: &str) -> paige_core::db::ReviewItem {
        self.core.db().review_item_of(paige_core::db::ReviewKind::Gap, gap).expect("read").expect("an item")
    }

    /// Opens the item's review and answers it `took` after the question came.
    async fn review(&self, item: &str, answer: &str, took: Duration) -> paige_core::protocol::ReviewGraded {
        let question = self.core.reviews().start(item).await.expect("question");
        assert!(question.question.starts_with("What goes wrong with"), "{question:?}");
        self.clock.advance(Days::from_std(took).expect("duration"));
        self.core.reviews().answer(item, answer).await.expect("graded")
    }

    fn due_now(&self) -> Vec<String> {
        self.core.reviews().due().expect("due").items.into_iter().map(|i| i.id).collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_answered_good_three_times_moves_out_and_addresses_its_gap_and_again_brings_one_back_the_next_day() {
    let w = world().await;
    let (kept, missed) = (w.gap("Promise rejection"), w.gap("Off-by-one loops"));
    assert_eq!(w.core.reviews().sync().expect("sync"), 2);
    assert_eq!(w.core.reviews().sync().expect("sync again"), 0, "once per source");
    let (good, again) = (w.item_of(&kept).id, w.item_of(&missed).id);
    assert_eq!(w.due_now().len(), 2, "new items are due at once");

    // Good (right, not fast) three times, each when due: the interval grows past 7 days.
    let mut intervals = Vec::new();
    for _ in 0..3 {
        let graded = w.review(&good, "it is swallowed because nothing awaits it", Duration::from_secs(60)).await;
        assert_eq!((graded.grade.as_str(), graded.rating.as_str()), ("correct", "good"), "{graded:?}");
        assert!(!w.due_now().contains(&good), "not due right after a Good");
        intervals.push(graded.interval_days);
        let due = chrono::DateTime::parse_from_rfc3339(&graded.next_due).expect("iso").with_timezone(&chrono::Utc);
        let now = w.clock.now();
        w.clock.advance(due - now);
    }
    eprintln!("intervals after three Goods: {intervals:?} days");
    assert!(intervals.windows(2).all(|w| w[1] > w[0]), "{intervals:?}");
    assert!(*intervals.last().expect("three") >= paige_core::review::STABLE_DAYS, "{intervals:?}");
    let item = w.core.db().review_item(&good).expect("item");
    assert!(item.addressed_at.is_some(), "a stable interval addresses the item");
    assert!(!w.due_now().contains(&good), "an addressed item is never due again");
    let gaps = w.core.db().knowledge_gaps(&GapFilter::default()).expect("gaps");
    assert!(gaps.iter().find(|g| g.id == kept).expect("gap").addressed, "its gap is addressed");
    assert_eq!(w.core.dashboard_state(Period::All).expect("dashboard").stats.knowledge_gaps_addressed, 1);

    // Again: back the next day, not before.
    let graded = w.review(&again, "no idea", Duration::from_secs(30)).await;
    assert_eq!(
        (graded.grade.as_str(), graded.rating.as_str(), graded.interval_days),
        ("incorrect", "again", 1),
        "{graded:?}"
    );
    assert!(!w.due_now().contains(&again));
    w.clock.advance(Days::days(1));
    assert!(w.due_now().contains(&again), "due the next day");
    // A fast right answer is an Easy recall.
    let graded = w.review(&again, "because the bound is inclusive", Duration::from_secs(5)).await;
    assert_eq!(graded.rating, "easy");
    let logged = w.core.db().review_count(&again).expect("count");
    assert_eq!(logged, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_phase_of_the_skill_area_understood_addresses_the_gap_and_it_stops_feeding_material_searches() {
    let w = world().await;
    let gap = w.gap("Error handling");
    w.core.reviews().sync().expect("sync");
    assert_eq!(w.core.db().unaddressed_gaps(5).expect("open").len(), 1);
    assert_eq!(w.core.reviews().gap_understood("error handling").expect("understood"), 1);
    let gaps = w.core.db().knowledge_gaps(&GapFilter::default()).expect("gaps");
    assert!(gaps.iter().find(|g| g.id == gap).expect("gap").addressed);
    assert!(w.core.db().unaddressed_gaps(5).expect("open").is_empty(), "no longer fed to material searches");
    assert!(w.due_now().is_empty(), "its review item is addressed too");
    assert_eq!(w.core.reviews().gap_understood("parsing").expect("other area"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_requests_through_the_dispatcher_answer_the_sender_and_failures_say_where() {
    let w = world().await;
    let gap = w.gap("Closures");
    let mut events = w.core.subscribe();
    let frame = |kind: &str, payload: Value| {
        w.core.handle_text(ConnectionId(7), &json!({"type": kind, "payload": payload}).to_string())
    };
    let due: Value = serde_json::from_str(&frame("reviews:list", json!({})).expect("reply")).expect("json");
    assert_eq!((due["type"].as_str(), due["payload"]["dueCount"].as_u64()), (Some("reviews:due"), Some(1)));
    let item = w.item_of(&gap).id;
    // Answering before the question was asked: refused, naming the item.
    assert_eq!(frame("reviews:answer", json!({"itemId": item, "answer": "because"})), None);
    let next = |events: &mut tokio::sync::broadcast::Receiver<paige_core::event::Event>| {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            match events.try_recv() {
                Ok(paige_core::event::Event::UiTo { connection: ConnectionId(7), message }) => return message,
                Ok(_) => {}
                Err(_) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                Err(err) => panic!("nothing for the sender: {err}"),
            }
        }
    };
    let refused = serde_json::to_value(next(&mut events)).expect("json");
    assert_eq!(refused["type"], "reviews:error");
    assert_eq!(refused["payload"]["itemId"], json!(item));
    // The question model fails: said where, and the next try works.
    w.fail_questions.store(10, std::sync::atomic::Ordering::SeqCst);
    frame("reviews:start", json!({"itemId": item}));
    let failed = serde_json::to_value(next(&mut events)).expect("json");
    assert_eq!(failed["type"], "reviews:error", "{failed}");
    assert!(
        failed["payload"]["error"].as_str().expect("error").starts_with("Paige could not write the review question")
    );
    w.fail_questions.store(0, std::sync::atomic::Ordering::SeqCst);
    frame("reviews:start", json!({"itemId": item}));
    let asked = serde_json::to_value(next(&mut events)).expect("json");
    assert_eq!(asked["type"], "reviews:question", "{asked}");
    frame("reviews:answer", json!({"itemId": item, "answer": "they capture by reference because of the move rules"}));
    let graded = serde_json::to_value(next(&mut events)).expect("json");
    assert_eq!(
        (graded["type"].as_str(), graded["payload"]["grade"].as_str()),
        (Some("reviews:graded"), Some("correct"))
    );
    let unknown: Value = {
        frame("reviews:start", json!({"itemId": "nope"}));
        loop {
            let message = serde_json::to_value(next(&mut events)).expect("json");
            if message["type"] == "reviews:error" {
                break message;
            }
        }
    };
    assert_eq!(unknown["payload"]["error"], "There is no such review item.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_concept_answered_wrong_becomes_a_review_item_and_the_dashboard_counts_what_is_due() {
    let w = world().await;
    let db = w.core.db();
    let (_, stored) =
        db.create_plan_with_phases(&w.session, "1.", vec![super::new_phase(1, "src/a.rs", "t")]).expect("plan");
    let question = db
        .create_question(paige_core::db::NewQuestion {
            session_id: w.session.clone(),
            phase_id: stored[0].0.id.clone(),
            skill_area: Some("parsing".into()),
            kind: "explain_line".into(),
            question: "Why trim?".into(),
            quote: "let t = raw.trim();".into(),
            concept: "whitespace in input".into(),
        })
        .expect("question");
    assert!(db.answer_question(&question.id, "dunno").expect("answered"));
    assert!(db.grade_question(&question.id, "incorrect", "no", "whitespace in input").expect("graded"));
    let frame = json!({"type": "dashboard:request", "payload": {"statsPeriod": "all"}}).to_string();
    w.core.handle_text(ConnectionId(1), &frame);
    let item = db.review_item_of(paige_core::db::ReviewKind::Concept, &question.id).expect("read").expect("an item");
    assert_eq!((item.topic.as_str(), item.skill_area.as_deref()), ("whitespace in input", Some("parsing")));
    assert_eq!(item.context["their_code"], "let t = raw.trim();");
    assert_eq!(w.core.dashboard_state(Period::All).expect("dashboard").reviews_due, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_asked_before_a_restart_is_answered_after_it_and_one_fast_first_answer_is_not_yet_remembered() {
    let w = world().await;
    let gap = w.gap("Lifetimes");
    w.core.reviews().sync().expect("sync");
    let item = w.item_of(&gap).id;
    w.core.reviews().start(&item).await.expect("question");
    // Paige restarts: another core over the same data dir answers the open review.
    let config = Config {
        anthropic_base_url: Some(w._fake.base_url()),
        ..Config::new(w._dirs.0.path().to_owned(), w._dirs.1.path().to_owned(), "sk-test")
    };
    let again = Arc::new(Core::open(config, w.clock.clone()).expect("core"));
    let graded = again.reviews().answer(&item, "because 'a ties the borrow to the input").await.expect("graded");
    assert_eq!((graded.grade.as_str(), graded.rating.as_str()), ("correct", "easy"), "answered at once: Easy");
    assert!(graded.interval_days >= paige_core::review::STABLE_DAYS, "{graded:?}");
    assert!(!graded.addressed, "one review is not yet proof it is remembered");
    let gaps = w.core.db().knowledge_gaps(&GapFilter::default()).expect("gaps");
    assert!(!gaps.iter().find(|g| g.id == gap).expect("gap").addressed);
}

/// Issue 41: review items that name the same thing are one. Two gaps whose topics differ
/// only in case and spacing, kept by two wrap-ups, give one item to review; once it is
/// addressed, the topic may come back as a new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn review_items_that_name_the_same_topic_are_one_item() {
    let w = world().await;
    let first = w.gap("Closures");
    let again = w.gap("  closures ");
    let other = w.gap("Lifetimes");
    assert_eq!(w.core.reviews().sync().expect("sync"), 2, "closures once, lifetimes once");
    assert!(w.core.db().review_item_of(paige_core::db::ReviewKind::Gap, &first).expect("read").is_some());
    assert!(w.core.db().review_item_of(paige_core::db::ReviewKind::Gap, &again).expect("read").is_none());
    assert!(w.core.db().review_item_of(paige_core::db::ReviewKind::Gap, &other).expect("read").is_some());
    assert_eq!(w.due_now().len(), 2);
}
