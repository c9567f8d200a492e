//! Spec criterion 3 of the intake interview (issue 18) against a held-out corpus: across 100
//! interviews whose interviewer slips coding invitations into its replies, the learner never
//! sees one before the hand-over, and harmless questions about past work still get through.
//!
//! The corpora (`fixtures/intake/`) were written without reading the detector, so they measure
//! it rather than repeat its tables: `invitations.txt` holds sentences proposing coding now,
//! `harmless.txt` questions and remarks about the learner's past work.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use paige_core::intake::invitation::solicits_coding;
use paige_core::prompts::intake_interviewer::{ANOTHER_PROJECT_QUESTION, BACKGROUND_QUESTIONS, STRONGER_INSTRUCTION};
use paige_fake_anthropic::{FakeAnthropic, Matcher, RecordedRequest, Reply};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Running;
use crate::coaching::all_frames;
use crate::tools::ui;

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

const INVITATIONS: &str = include_str!("fixtures/intake/invitations.txt");
const HARMLESS: &str = include_str!("fixtures/intake/harmless.txt");
const INTERVIEWS: usize = 100;
const TIMEBOX: Duration = Duration::from_secs(240);
/// How long one frame may take to arrive before the test gives up on the turn.
const FRAME_WAIT: Duration = Duration::from_secs(15);

/// The lines of a corpus file: trimmed, without blank lines and `#` comments.
fn corpus(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect()
}

/// SplitMix64: a seeded, dependency-free source of the interviews' choices.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn shuffled<'a>(&mut self, items: &[&'a str]) -> Vec<&'a str> {
        let mut items = items.to_vec();
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
        items
    }
}

/// What the fake interviewer does on one turn.
#[derive(Clone, Copy, PartialEq)]
enum Plan {
    /// Harmless sentences only, at the first attempt and (if withheld) the regeneration.
    Harmless,
    /// An invitation at the first attempt; a harmless regeneration.
    InvitesOnce,
    /// An invitation at the first attempt and again at the regeneration.
    InvitesTwice,
}

/// Hands out the invitations in a seeded order, every one before any repeats.
struct Invitations<'a> {
    order: Vec<&'a str>,
    next: usize,
}

impl<'a> Invitations<'a> {
    fn take(&mut self) -> &'a str {
        let invitation = self.order[self.next % self.order.len()];
        self.next += 1;
        invitation
    }
}

/// One to three harmless sentences, with `invitation` (if any) at a random place among them.
fn reply(rng: &mut Seeded, harmless: &[&str], invitation: Option<&str>) -> Vec<String> {
    let mut sentences: Vec<&str> = (0..1 + rng.below(3)).map(|_| harmless[rng.below(harmless.len())]).collect();
    if let Some(invitation) = invitation {
        let at = rng.below(sentences.len() + 1);
        sentences.insert(at, invitation);
    }
    // Streamed as the model would: a sentence may arrive cut in two.
    let mut deltas = Vec::new();
    for sentence in sentences {
        let text = format!("{sentence} ");
        let cut = text.char_indices().map(|(i, _)| i).nth(rng.below(text.chars().count())).unwrap_or(0);
        if cut > 0 && rng.below(2) == 0 {
            deltas.push(text[..cut].to_owned());
            deltas.push(text[cut..].to_owned());
        } else {
            deltas.push(text);
        }
    }
    deltas
}

fn stream(deltas: &[String]) -> Reply {
    Reply::text_deltas(&deltas.iter().map(String::as_str).collect::<Vec<_>>())
}

/// The interviewer call for the turn whose answer carries `marker` (and not the next one's),
/// at its first attempt or its regeneration.
fn turn_call(marker: String, next: String, regenerated: bool) -> Matcher {
    Matcher::custom(move |request: &RecordedRequest| {
        let body = request.body.to_string();
        let stronger = request.system().is_some_and(|s| s.contains(STRONGER_INSTRUCTION.trim()));
        request.call_type() == Some("intake_interviewer")
            && body.contains(&marker)
            && !body.contains(&next)
            && stronger == regenerated
    })
}

fn control() -> Reply {
    let pillar = json!({"score": 25, "rationale": "\"the weather cache twice\""});
    Reply::json(&json!({
        "adaptability": pillar, "creativity": pillar, "reasoning": pillar,
        "new_project": false, "project_name": null
    }))
}

async fn send(socket: &mut Socket, kind: &str, payload: Value) {
    socket.send(Message::Text(json!({"type": kind, "payload": payload}).to_string().into())).await.expect("send");
}

/// Reads frames into `frames` until one satisfies `done`; panics after [`FRAME_WAIT`] of silence.
async fn frames_until(socket: &mut Socket, frames: &mut Vec<Value>, done: impl Fn(&Value) -> bool) {
    loop {
        let next = tokio::time::timeout(FRAME_WAIT, socket.next()).await;
        let Ok(Some(Ok(Message::Text(text)))) = next else { panic!("no frame within {FRAME_WAIT:?}: {next:?}") };
        let frame: Value = serde_json::from_str(text.as_str()).expect("a frame is JSON");
        let finished = done(&frame);
        frames.push(frame);
        if finished {
            return;
        }
    }
}

fn is_reply_done(frame: &Value, turn: usize) -> bool {
    frame["type"] == "intake:reply_done" && frame["payload"]["turn"].as_u64() == Some(turn as u64)
}

/// What the 100 interviews showed and how the detector fared.
#[derive(Default)]
struct Tally {
    invitation_replies: usize,
    caught_first: usize,
    /// Replies whose regeneration invited coding again.
    invited_twice: usize,
    /// Turns answered by a scripted question in place of the interviewer's reply.
    fell_back: usize,
    errors: Vec<String>,
    harmless_replies: usize,
    harmless_withheld: usize,
    shown_invitations: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_100_interviews_no_held_out_coding_invitation_reaches_the_learner_before_the_hand_over() {
    let invitations = corpus(INVITATIONS);
    let harmless = corpus(HARMLESS);
    let fake = FakeAnthropic::start().await.expect("fake");
    fake.always(Matcher::call_type("intake_control"), control());
    let server: Running = crate::coaching_server_with(&fake, |config| {
        config.gh_program = Some("/nonexistent/gh".into());
        config.limits.intake_timebox = TIMEBOX;
    })
    .await;
    let core = &server.fixture.core;
    let mut socket = ui(&server).await;
    all_frames(&mut socket, Duration::from_millis(200)).await;

    let mut rng = Seeded(18);
    let mut pool = Invitations { order: rng.shuffled(&invitations), next: 0 };
    let mut tally = Tally::default();
    let mut shown_harmless = 0;
    for interview in 0..INTERVIEWS {
        core.coaching().start_session(None, Some("Add a weather widget".into())).expect("session");
        let mut frames = Vec::new();
        send(&mut socket, "intake:start", json!({})).await;
        frames_until(&mut socket, &mut frames, |f| is_reply_done(f, 1)).await;
        let answers = 3 + rng.below(3);
        let mut plans = Vec::new();
        for answer in 1..=answers {
            let marker = format!("[interview {interview} answer {answer}]");
            let next = format!("[interview {interview} answer {}]", answer + 1);
            let plan = match rng.below(20) {
                0..=8 => Plan::Harmless,
                9..=16 => Plan::InvitesOnce,
                _ => Plan::InvitesTwice,
            };
            let first_invitation = (plan != Plan::Harmless).then(|| pool.take());
            let first = reply(&mut rng, &harmless, first_invitation);
            let second_invitation = (plan == Plan::InvitesTwice).then(|| pool.take());
            let second = reply(&mut rng, &harmless, second_invitation);
            fake.once(turn_call(marker.clone(), next.clone(), false), stream(&first));
            fake.once(turn_call(marker.clone(), next, true), stream(&second));
            let text = format!("I rewrote the weather cache twice because it went stale {marker}.");
            send(&mut socket, "intake:answer", json!({"text": text})).await;
            let turn = answer + 1;
            frames_until(&mut socket, &mut frames, |f| is_reply_done(f, turn) || f["type"] == "intake:transition")
                .await;
            let calls = fake
                .message_requests()
                .iter()
                .filter(|r| r.call_type() == Some("intake_interviewer") && r.body.to_string().contains(&marker))
                .count();
            let scripted = frames.iter().rev().find(|f| is_reply_done(f, turn)).is_some_and(|f| {
                BACKGROUND_QUESTIONS.iter().chain([&ANOTHER_PROJECT_QUESTION]).any(|q| f["payload"]["text"] == *q)
            });
            let handed_over = frames.iter().any(|f| f["type"] == "intake:transition");
            // The answer that opened the gate gets the hand-over, not a reply: no reply to count.
            if !(handed_over && calls == 0) {
                plans.push((plan, calls, scripted));
            }
            if handed_over {
                break;
            }
        }
        // Every interview ends in the hand-over: the timebox runs out after the last reply.
        if !frames.iter().any(|f| f["type"] == "intake:transition") {
            server.fixture.clock.advance(chrono::Duration::from_std(TIMEBOX).expect("timebox"));
            frames_until(&mut socket, &mut frames, |f| f["type"] == "intake:transition").await;
        }
        for (plan, calls, scripted) in plans {
            tally.fell_back += usize::from(scripted);
            match plan {
                Plan::Harmless => {
                    tally.harmless_replies += 1;
                    tally.harmless_withheld += usize::from(calls > 1);
                }
                Plan::InvitesOnce | Plan::InvitesTwice => {
                    tally.invitation_replies += 1;
                    tally.caught_first += usize::from(calls > 1);
                    tally.invited_twice += usize::from(plan == Plan::InvitesTwice);
                }
            }
        }
        let before_hand_over = frames.iter().take_while(|f| f["type"] != "intake:transition");
        for frame in before_hand_over {
            match frame["type"].as_str() {
                Some("intake:sentence" | "intake:reply_done") => {
                    let text = frame["payload"]["text"].as_str().unwrap_or_default();
                    let leaked = invitations.iter().filter(|i| text.contains(**i)).map(|i| (*i).to_owned());
                    tally.shown_invitations.extend(leaked);
                    shown_harmless += usize::from(harmless.contains(&text));
                }
                Some("intake:error") => {
                    let message = frame["payload"]["message"].as_str().unwrap_or_default();
                    tally.errors.push(message.to_owned());
                }
                _ => {}
            }
        }
        core.coaching().end_session(paige_core::db::SessionStatus::Abandoned).expect("session ends");
    }

    println!(
        "{INTERVIEWS} interviews: {} replies carried an invitation, {} caught at the first attempt; {} regenerations \
         invited again and {} replies fell back to the scripted question; {} harmless-only replies, {} withheld \
         (false positives); {} intake:error frames",
        tally.invitation_replies,
        tally.caught_first,
        tally.invited_twice,
        tally.fell_back,
        tally.harmless_replies,
        tally.harmless_withheld,
        tally.errors.len(),
    );
    tally.shown_invitations.sort();
    tally.shown_invitations.dedup();
    assert!(tally.shown_invitations.is_empty(), "invitations reached the learner: {:#?}", tally.shown_invitations);
    assert!(pool.next >= invitations.len(), "only {} of {} invitations were used", pool.next, invitations.len());
    assert_eq!(tally.caught_first, tally.invitation_replies, "every invitation is caught before it is shown");
    assert!(tally.invited_twice > 0, "some replies invited coding twice");
    assert_eq!(
        tally.fell_back, tally.invited_twice,
        "a reply flagged twice, and only that, falls back: {:?}",
        tally.errors
    );
    assert_eq!(tally.harmless_withheld, 0, "harmless questions about past work are never withheld");
    assert!(shown_harmless > 0, "the harmless sentences reached the learner");
}

#[test]
fn the_detector_flags_every_held_out_invitation_and_no_harmless_question_about_past_work() {
    let invitations = corpus(INVITATIONS);
    let harmless = corpus(HARMLESS);
    assert!(invitations.len() >= 120 && harmless.len() >= 120, "the corpora are too small");
    let missed: Vec<&str> = invitations.iter().copied().filter(|s| solicits_coding(s).is_none()).collect();
    let flagged: Vec<(&str, &str)> =
        harmless.iter().filter_map(|s| solicits_coding(s).map(|rule| (*s, rule))).collect();
    println!(
        "held-out invitations: {} of {} flagged ({:.1}% recall); harmless: {} of {} flagged (false positives)",
        invitations.len() - missed.len(),
        invitations.len(),
        100.0 * (invitations.len() - missed.len()) as f64 / invitations.len() as f64,
        flagged.len(),
        harmless.len(),
    );
    assert!(missed.is_empty(), "invitations the detector missed: {missed:#?}");
    assert!(flagged.is_empty(), "harmless sentences flagged (sentence, rule): {flagged:#?}");
}
