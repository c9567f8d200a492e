//! The intake interview's session guard on a virtual clock: the spec's success criteria 1, 2,
//! 4, 5 and 6 as guard behaviour, the fenced and bounded CONTROL results, replay, and
//! properties over random event sequences.

use paige_core::intake::guard::{
    ANOTHER_PROJECT_QUESTION, GuardAction, GuardConfig, GuardEvent, GuardState, Phase, Pillar, QuestionKind, Reason,
    Timed, Traits, TurnLog, replay, transcript,
};
use proptest::prelude::*;

/// A guard driven by hand: every event and emitted action is kept.
struct Run {
    config: GuardConfig,
    state: GuardState,
    events: Vec<Timed>,
    actions: Vec<(i64, GuardAction)>,
}

impl Run {
    fn new() -> Self {
        Self::with(GuardConfig::default())
    }

    fn with(config: GuardConfig) -> Self {
        Run { config, state: GuardState::new(), events: Vec::new(), actions: Vec::new() }
    }

    fn at(&mut self, at_ms: i64, event: GuardEvent) -> Vec<GuardAction> {
        let timed = Timed { at_ms, event };
        let out = self.state.apply(&self.config, &timed);
        self.events.push(timed);
        self.actions.extend(out.iter().map(|a| (at_ms, a.clone())));
        out
    }

    /// Delivers the Ticks the guard asks for, up to `until`.
    fn tick_until(&mut self, until: i64) -> Vec<GuardAction> {
        let mut out = Vec::new();
        while let Some(wake) = self.state.next_wake_ms(&self.config).filter(|w| *w <= until) {
            out.extend(self.at(wake, GuardEvent::Tick));
        }
        out
    }

    /// One answered turn: the answer at `t`, its CONTROL result 500 ms later, and the question
    /// the guard then asks for delivered at `t + 1000`. Returns the result's actions.
    fn exchange(&mut self, t: i64, turn: u32, scores: [u8; 3]) -> Vec<GuardAction> {
        let scored = self.at(t, answer(turn));
        assert!(matches!(scored.as_slice(), [GuardAction::ScoreTurn { turn: n, .. }] if *n == turn), "{scored:?}");
        let out = self.at(t + 500, control(turn, scores));
        match out.last() {
            Some(GuardAction::AskBackground { turn }) => {
                self.at(t + 1000, question(*turn));
            }
            Some(GuardAction::AskAnotherProject { turn }) => {
                let text = ANOTHER_PROJECT_QUESTION.to_owned();
                self.at(
                    t + 1000,
                    GuardEvent::QuestionDelivered { turn: *turn, question: text, kind: QuestionKind::AnotherProject },
                );
            }
            _ => {}
        }
        out
    }

    fn transitions(&self) -> Vec<(i64, Reason, Vec<Reason>)> {
        self.actions
            .iter()
            .filter_map(|(at, a)| match a {
                GuardAction::Transition { reason, reasons } => Some((*at, *reason, reasons.clone())),
                _ => None,
            })
            .collect()
    }

    fn logs(&self) -> Vec<TurnLog> {
        self.actions
            .iter()
            .filter_map(|(_, a)| match a {
                GuardAction::LogTurn(log) => Some(log.clone()),
                _ => None,
            })
            .collect()
    }

    fn count(&self, pred: impl Fn(&GuardAction) -> bool) -> usize {
        self.actions.iter().filter(|(_, a)| pred(a)).count()
    }
}

fn question(turn: u32) -> GuardEvent {
    GuardEvent::QuestionDelivered { turn, question: format!("question {turn}"), kind: QuestionKind::Background }
}

fn answer(turn: u32) -> GuardEvent {
    GuardEvent::AnswerSubmitted { turn, answer: format!("answer {turn}") }
}

fn pillars([a, c, r]: [u8; 3]) -> Traits<Pillar> {
    let p = |score: u8| Pillar { score, rationale: format!("scored {score}") };
    Traits { adaptability: p(a), creativity: p(c), reasoning: p(r) }
}

fn control(turn: u32, scores: [u8; 3]) -> GuardEvent {
    GuardEvent::Control { turn, pillars: pillars(scores), new_project: false }
}

fn new_project(turn: u32, scores: [u8; 3]) -> GuardEvent {
    GuardEvent::Control { turn, pillars: pillars(scores), new_project: true }
}

/// A started interview: question 1 delivered at 0 ms.
fn started(config: GuardConfig) -> Run {
    let mut run = Run::with(config);
    assert!(run.at(0, question(1)).is_empty());
    run
}

fn is_ask_or_score(a: &GuardAction) -> bool {
    matches!(
        a,
        GuardAction::AskBackground { .. } | GuardAction::AskAnotherProject { .. } | GuardAction::ScoreTurn { .. }
    )
}

const ZERO: [u8; 3] = [0, 0, 0];
const SOME: [u8; 3] = [30, 0, 10];

#[test]
fn timebox_during_an_ai_reply_transitions_at_reply_finished_and_not_before() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, SOME);
    run.at(235_000, GuardEvent::ReplyStarted { turn: 2 });
    assert!(run.tick_until(242_999).is_empty(), "no transition mid-reply");
    assert_eq!(run.state.phase, Phase::Background);
    assert_eq!(run.state.next_wake_ms(&run.config), None, "only the reply's end can release it");
    let out = run.at(243_000, GuardEvent::ReplyFinished { turn: 2 });
    assert_eq!(out[0], GuardAction::Transition { reason: Reason::Timebox, reasons: vec![Reason::Timebox] });
    assert_eq!(run.transitions(), vec![(243_000, Reason::Timebox, vec![Reason::Timebox])]);
    assert_eq!(run.state.phase, Phase::Coding);
    assert_eq!(run.state.elapsed_ms, 243_000);
}

#[test]
fn timebox_during_typing_waits_for_the_answer_then_transitions_with_no_new_question_or_scoring() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, SOME);
    run.at(235_000, GuardEvent::TypingStarted);
    run.at(250_000, GuardEvent::TypingStarted);
    assert!(run.tick_until(251_999).is_empty(), "no transition while the learner types");
    let out = run.at(252_000, GuardEvent::AnswerSubmitted { turn: 2, answer: "my final answer".into() });
    assert!(matches!(&out[0], GuardAction::Transition { reason: Reason::Timebox, .. }), "{out:?}");
    assert!(!out.iter().any(is_ask_or_score), "{out:?}");
    let GuardAction::LogTurn(log) = &out[1] else { panic!("the transition is logged: {out:?}") };
    assert_eq!(
        (log.turn, log.last_question.as_str(), log.last_answer.as_str()),
        (Some(2), "question 2", "my final answer")
    );
    assert_eq!((log.reason, log.pillars.as_ref(), log.at_ms), (Some(Reason::Timebox), None, 252_000));
    run.at(252_500, control(2, SOME));
    assert_eq!(run.count(is_ask_or_score), 2, "only turn 1's score and the ask for turn 2");
}

#[test]
fn a_typist_quiet_for_twenty_seconds_counts_as_finished_speaking() {
    let mut run = started(GuardConfig::default());
    run.at(231_000, GuardEvent::TypingStarted);
    assert!(run.tick_until(250_999).is_empty());
    assert_eq!(run.state.next_wake_ms(&run.config), Some(251_000));
    run.tick_until(251_000);
    assert_eq!(run.transitions(), vec![(251_000, Reason::Timebox, vec![Reason::Timebox])]);
}

#[test]
fn clearing_the_input_after_the_timebox_releases_the_transition() {
    let mut run = started(GuardConfig::default());
    run.at(239_000, GuardEvent::TypingStarted);
    run.tick_until(240_000);
    run.at(244_000, GuardEvent::TypingStopped);
    assert_eq!(run.transitions(), vec![(244_000, Reason::Timebox, vec![Reason::Timebox])]);
}

#[test]
fn a_silent_learner_transitions_at_exactly_the_timebox_with_no_scoring() {
    let mut run = started(GuardConfig::default());
    assert_eq!(run.state.next_wake_ms(&run.config), Some(240_000));
    assert!(run.at(239_999, GuardEvent::Tick).is_empty());
    run.tick_until(1_000_000);
    assert_eq!(run.transitions(), vec![(240_000, Reason::Timebox, vec![Reason::Timebox])]);
    assert_eq!(run.count(is_ask_or_score), 0, "a silent candidate triggers no CONTROL call");
    assert_eq!(run.state.zero_runs, 0);
    let log = run.logs().pop().expect("transition log");
    assert_eq!((log.turn, log.last_question.as_str(), log.last_answer.as_str()), (None, "question 1", ""));
    assert_eq!(run.state.next_wake_ms(&run.config), None);
}

#[test]
fn a_configured_short_timebox_is_the_one_enforced() {
    let config = GuardConfig { timebox_ms: 5_000, ..GuardConfig::default() };
    let mut run = Run::with(config);
    run.at(1_000, question(1));
    assert_eq!(run.state.next_wake_ms(&run.config), Some(6_000));
    run.tick_until(10_000);
    assert_eq!(run.transitions(), vec![(6_000, Reason::Timebox, vec![Reason::Timebox])]);
    assert_eq!((run.state.started_at_ms, run.state.elapsed_ms), (Some(1_000), 5_000));
}

#[test]
fn two_consecutive_zero_results_make_the_very_next_turn_ask_for_another_project() {
    let mut run = started(GuardConfig::default());
    assert_eq!(run.exchange(10_000, 1, ZERO).last(), Some(&GuardAction::AskBackground { turn: 2 }));
    assert_eq!(run.state.zero_runs, 1);
    assert_eq!(run.exchange(20_000, 2, ZERO).last(), Some(&GuardAction::AskAnotherProject { turn: 3 }));
    assert_eq!(run.state.zero_runs, 0, "asking resets the run");
    assert_eq!(run.state.projects_used, 1);
}

#[test]
fn a_non_zero_result_between_zeros_resets_the_run() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, ZERO);
    run.exchange(20_000, 2, SOME);
    assert_eq!(run.state.zero_runs, 0);
    assert_eq!(run.exchange(30_000, 3, ZERO).last(), Some(&GuardAction::AskBackground { turn: 4 }));
    assert_eq!(run.exchange(40_000, 4, ZERO).last(), Some(&GuardAction::AskAnotherProject { turn: 5 }));
}

#[test]
fn a_zero_run_after_the_second_project_transitions_with_projects_cap() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, ZERO);
    run.exchange(20_000, 2, ZERO);
    run.at(30_000, answer(3));
    let out = run.at(30_500, new_project(3, SOME));
    assert_eq!(out.last(), Some(&GuardAction::AskBackground { turn: 4 }));
    assert_eq!(run.state.projects_used, 2);
    run.at(31_000, question(4));
    run.exchange(40_000, 4, ZERO);
    let out = run.exchange(50_000, 5, ZERO);
    assert!(!out.iter().any(|a| matches!(a, GuardAction::AskAnotherProject { .. })), "{out:?}");
    assert_eq!(run.transitions(), vec![(50_500, Reason::ProjectsCap, vec![Reason::ProjectsCap])]);
    assert_eq!(run.count(|a| matches!(a, GuardAction::AskAnotherProject { .. })), 1);
}

#[test]
fn a_second_zero_run_in_a_project_already_prompted_transitions_with_projects_cap() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, ZERO);
    run.exchange(20_000, 2, ZERO);
    assert_eq!(run.exchange(30_000, 3, ZERO).last(), Some(&GuardAction::AskBackground { turn: 4 }));
    assert_eq!(run.state.projects_used, 1, "no new project was named");
    run.exchange(40_000, 4, ZERO);
    assert_eq!(run.transitions(), vec![(40_500, Reason::ProjectsCap, vec![Reason::ProjectsCap])]);
    assert_eq!(run.state.reason, Some(Reason::ProjectsCap));
}

#[test]
fn a_new_project_the_learner_brings_up_unasked_does_not_count() {
    let mut run = started(GuardConfig::default());
    run.at(10_000, answer(1));
    run.at(10_500, new_project(1, SOME));
    assert_eq!(run.state.projects_used, 1);
}

#[test]
fn the_gate_opens_once_every_trait_reaches_tau() {
    let config = GuardConfig::default();
    // conf = W / (W + prior) with W growing by 0.8 an answer: the first n with conf >= tau
    // (3 with the defaults: tau 0.65, a prior of 1).
    let needed = (1..)
        .find(|n: &u32| {
            let w = 0.8 * f64::from(*n);
            w / (w + config.prior_mass) >= config.tau.reasoning
        })
        .expect("reached");
    assert_eq!(needed, 3, "the defaults' gate: three strong answers");
    let mut run = started(config.clone());
    for turn in 1..needed {
        let out = run.exchange(i64::from(turn) * 10_000, turn, [80, 80, 80]);
        assert_eq!(out.last(), Some(&GuardAction::AskBackground { turn: turn + 1 }), "turn {turn}");
        assert!(!run.state.stop_check);
    }
    let out = run.exchange(i64::from(needed) * 10_000, needed, [80, 80, 80]);
    assert!(run.state.stop_check);
    assert_eq!(out[1], GuardAction::Transition { reason: Reason::Gate, reasons: vec![Reason::Gate] });
    let w = 0.8 * f64::from(needed);
    assert!((run.state.confidence.creativity - w / (w + config.prior_mass)).abs() < 1e-9);
    assert!((run.state.weights.reasoning - w).abs() < 1e-9);
}

#[test]
fn one_weak_trait_keeps_the_gate_closed() {
    let mut run = started(GuardConfig::default());
    for turn in 1..=10 {
        run.exchange(i64::from(turn) * 10_000, turn, [100, 100, 10]);
    }
    assert!(!run.state.stop_check);
    assert!(run.transitions().is_empty());
}

#[test]
fn triggers_at_once_pick_timebox_then_projects_cap_then_gate_and_record_all() {
    let config = GuardConfig { project_cap: 1, zero_run_limit: 1, tau: Traits::splat(0.3), ..GuardConfig::default() };
    let mut run = started(config);
    // Two rapid answers; both results come after their waits, so no decision sees them.
    run.at(200_000, answer(1));
    run.at(200_500, answer(2));
    assert_eq!(run.tick_until(202_500), vec![GuardAction::AskBackground { turn: 3 }]);
    run.at(205_000, control(1, [100, 100, 100]));
    run.at(206_000, control(2, ZERO));
    assert!(run.state.stop_check);
    assert_eq!(run.state.zero_runs, 1);
    run.tick_until(240_000);
    let all = vec![Reason::Timebox, Reason::ProjectsCap, Reason::Gate];
    assert_eq!(run.transitions(), vec![(240_000, Reason::Timebox, all.clone())]);
    assert_eq!(run.state.reasons, all);
}

#[test]
fn projects_cap_outranks_gate_at_a_decision() {
    let config = GuardConfig { project_cap: 1, zero_run_limit: 1, tau: Traits::splat(0.3), ..GuardConfig::default() };
    let mut run = started(config);
    run.at(10_000, answer(1));
    run.tick_until(12_000);
    run.at(13_000, control(1, [100, 100, 100]));
    run.at(14_000, question(2));
    run.exchange(20_000, 2, ZERO);
    assert_eq!(run.transitions(), vec![(20_500, Reason::ProjectsCap, vec![Reason::ProjectsCap, Reason::Gate])]);
}

#[test]
fn a_control_result_after_the_transition_is_discarded() {
    let mut run = started(GuardConfig::default());
    run.at(239_000, answer(1));
    run.tick_until(240_000);
    assert_eq!(run.transitions().len(), 1, "a pending CONTROL result does not hold the timebox");
    let before = run.state.clone();
    assert!(run.at(241_000, control(1, ZERO)).is_empty());
    assert_eq!(run.state.zero_runs, before.zero_runs);
    assert_eq!(run.state.weights, before.weights);
    assert_eq!(run.state.last_pillars, None);
    assert_eq!(run.state.late_results, 1);
    assert!(run.at(242_000, answer(2)).is_empty());
    assert!(run.tick_until(300_000).is_empty());
}

#[test]
fn the_next_turn_waits_at_most_control_wait_for_the_result_and_a_late_result_still_counts() {
    let mut run = started(GuardConfig::default());
    run.at(10_000, answer(1));
    assert_eq!(run.state.next_wake_ms(&run.config), Some(12_000));
    assert!(run.at(11_999, GuardEvent::Tick).is_empty(), "still waiting for the result");
    assert_eq!(run.at(12_000, GuardEvent::Tick), vec![GuardAction::AskBackground { turn: 2 }]);
    let late = run.at(13_000, control(1, ZERO));
    assert!(matches!(late.as_slice(), [GuardAction::LogTurn(log)] if log.turn == Some(1)), "{late:?}");
    assert_eq!(run.state.zero_runs, 1);
    run.at(14_000, question(2));
    assert_eq!(run.exchange(20_000, 2, ZERO).last(), Some(&GuardAction::AskAnotherProject { turn: 3 }));
}

#[test]
fn a_failed_control_call_releases_the_wait_and_leaves_the_zero_run() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, ZERO);
    run.at(20_000, answer(2));
    let out = run.at(20_300, GuardEvent::ControlFailed { turn: 2, error: "timeout".into() });
    assert_eq!(out, vec![GuardAction::AskBackground { turn: 3 }]);
    assert_eq!(run.state.zero_runs, 1);
}

#[test]
fn a_duplicate_result_for_a_turn_is_ignored() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, ZERO);
    assert!(run.at(11_500, control(1, ZERO)).is_empty());
    assert_eq!(run.state.zero_runs, 1);
    assert!(run.at(11_600, control(9, ZERO)).is_empty(), "a turn never sent for scoring");
    assert_eq!(run.state.zero_runs, 1);
}

#[test]
fn each_rapid_answer_is_scored_on_its_own_question_and_answer() {
    let mut run = started(GuardConfig::default());
    let first = run.at(10_000, GuardEvent::AnswerSubmitted { turn: 1, answer: "a compiler".into() });
    let second = run.at(10_400, GuardEvent::AnswerSubmitted { turn: 2, answer: "in Rust".into() });
    let delta = |action: &[GuardAction]| match action {
        [GuardAction::ScoreTurn { last_turn, .. }] => (last_turn.last_question.clone(), last_turn.last_answer.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(delta(&first), ("question 1".into(), "a compiler".into()));
    assert_eq!(delta(&second), ("question 1".into(), "in Rust".into()));
    assert!(run.at(10_600, control(1, SOME)).iter().all(|a| matches!(a, GuardAction::LogTurn(_))), "waits for turn 2");
    let out = run.at(10_700, control(2, SOME));
    assert_eq!(out.last(), Some(&GuardAction::AskBackground { turn: 3 }));
    assert_eq!(run.count(|a| matches!(a, GuardAction::AskBackground { .. })), 1, "one next turn for both answers");
}

#[test]
fn each_applied_result_is_logged_with_the_fr006_fields() {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, [50, 0, 100]);
    let log = run.logs().pop().expect("log");
    assert_eq!((log.at_ms, log.turn, log.elapsed_ms), (10_500, Some(1), 10_500));
    assert_eq!((log.last_question.as_str(), log.last_answer.as_str()), ("question 1", "answer 1"));
    assert_eq!(log.pillars, Some(pillars([50, 0, 100])));
    assert_eq!(log.weights, Traits { adaptability: 0.5, creativity: 0.0, reasoning: 1.0 });
    let prior = GuardConfig::default().prior_mass;
    assert!((log.confidence.adaptability - 0.5 / (0.5 + prior)).abs() < 1e-9);
    assert_eq!((log.zero_runs, log.projects_used, log.reason), (0, 1, None));
}

/// A full interview: asks, a zero run, a late result and a timebox held by a reply.
fn recorded() -> Run {
    let mut run = started(GuardConfig::default());
    run.exchange(10_000, 1, ZERO);
    run.exchange(20_000, 2, ZERO);
    run.at(30_000, GuardEvent::TypingStarted);
    run.at(40_000, answer(3));
    run.tick_until(42_000);
    run.at(43_000, new_project(3, SOME));
    run.at(44_000, question(4));
    run.at(230_000, GuardEvent::ReplyStarted { turn: 5 });
    run.tick_until(241_000);
    run.at(241_500, GuardEvent::ReplyFinished { turn: 5 });
    run
}

#[test]
fn replay_equals_applying_the_events_one_by_one() {
    let run = recorded();
    let (state, actions) = replay(&run.config, &run.events);
    assert_eq!(state, run.state);
    assert_eq!(actions, run.actions);
    assert_eq!(run.transitions(), vec![(241_500, Reason::Timebox, vec![Reason::Timebox])]);
}

#[test]
fn a_guard_rebuilt_from_stored_json_events_equals_the_live_one() {
    let run = recorded();
    let stored = serde_json::to_string(&run.events).expect("serialize");
    assert!(stored.contains(r#"{"atMs":43000,"event":{"type":"control","turn":3,"pillars""#), "{stored}");
    assert!(stored.contains(r#""newProject":true"#), "{stored}");
    let events: Vec<Timed> = serde_json::from_str(&stored).expect("deserialize");
    assert_eq!(events, run.events);
    assert_eq!(replay(&run.config, &events).0, run.state);
    let state = serde_json::to_value(&run.state).expect("state");
    assert_eq!(state["reason"], "timebox");
    assert_eq!(state["projectsUsed"], 2);
    assert_eq!(state["startedAtMs"], 0);
}

#[test]
fn the_replay_transcript_stamps_each_action_from_the_first_question() {
    let run = recorded();
    let lines = transcript(&run.config, &run.events);
    assert_eq!(lines.first().map(String::as_str), Some("00:10.0 score turn 1"));
    assert!(lines.contains(&"00:20.5 ask for another project (turn 3)".to_owned()), "{lines:#?}");
    assert!(lines.contains(&"04:01.5 transition: timebox (timebox)".to_owned()), "{lines:#?}");
}

#[test]
fn events_before_the_first_question_start_nothing() {
    let mut run = Run::new();
    assert!(run.at(5_000, answer(1)).is_empty());
    assert!(run.at(6_000, control(1, ZERO)).is_empty());
    assert_eq!(run.state.next_wake_ms(&run.config), None);
    assert_eq!((run.state.phase, run.state.started_at_ms, run.state.projects_used), (Phase::NotStarted, None, 0));
    run.at(7_000, question(1));
    assert_eq!(
        (run.state.phase, run.state.started_at_ms, run.state.projects_used),
        (Phase::Background, Some(7_000), 1)
    );
}

#[test]
fn an_event_stamped_in_the_past_does_not_turn_the_clock_back() {
    let mut run = started(GuardConfig::default());
    run.at(100_000, GuardEvent::Tick);
    run.at(50_000, GuardEvent::Tick);
    assert_eq!(run.state.elapsed_ms, 100_000);
}

// Properties over random interviews.

fn event() -> impl Strategy<Value = GuardEvent> {
    let turn = 0u32..6;
    let score = prop_oneof![Just(0u8), Just(50), Just(100)];
    prop_oneof![
        (turn.clone(), any::<bool>()).prop_map(|(turn, another)| GuardEvent::QuestionDelivered {
            turn,
            question: format!("q{turn}"),
            kind: if another { QuestionKind::AnotherProject } else { QuestionKind::Background },
        }),
        turn.clone().prop_map(|turn| GuardEvent::ReplyStarted { turn }),
        turn.clone().prop_map(|turn| GuardEvent::ReplyFinished { turn }),
        Just(GuardEvent::TypingStarted),
        Just(GuardEvent::TypingStopped),
        turn.clone().prop_map(|turn| GuardEvent::AnswerSubmitted { turn, answer: format!("a{turn}") }),
        (turn.clone(), [score.clone(), score.clone(), score], any::<bool>())
            .prop_map(|(turn, s, new)| GuardEvent::Control { turn, pillars: pillars(s), new_project: new }),
        turn.prop_map(|turn| GuardEvent::ControlFailed { turn, error: "e".into() }),
        Just(GuardEvent::Tick),
    ]
}

/// Events at non-decreasing times, steps of up to 40 s.
fn interview() -> impl Strategy<Value = Vec<(i64, GuardEvent)>> {
    prop::collection::vec((0i64..40_000, event()), 0..60).prop_map(|steps| {
        let mut t = 0;
        steps
            .into_iter()
            .map(|(dt, e)| {
                t += dt;
                (t, e)
            })
            .collect()
    })
}

/// The earliest time from the deadline on when no reply streams and nobody types: the
/// latest point the timebox may hold the transition to.
fn release_point(config: &GuardConfig, events: &[(i64, GuardEvent)]) -> Option<i64> {
    let start = events.iter().find(|(_, e)| matches!(e, GuardEvent::QuestionDelivered { .. }))?.0;
    let deadline = start + config.timebox_ms;
    let (mut replying, mut typing) = (false, None::<i64>);
    for (i, (at, e)) in events.iter().enumerate() {
        match e {
            GuardEvent::ReplyStarted { .. } => replying = true,
            GuardEvent::ReplyFinished { .. } => replying = false,
            GuardEvent::TypingStarted => typing = Some(*at),
            GuardEvent::TypingStopped | GuardEvent::AnswerSubmitted { .. } => typing = None,
            _ => {}
        }
        let free_from = typing.map_or(*at, |t| t + config.typing_quiet_ms).max(*at).max(deadline);
        let until = events.get(i + 1).map_or(i64::MAX, |(next, _)| *next);
        if !replying && free_from <= until {
            return Some(free_from);
        }
    }
    None
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn a_ticked_guard_transitions_once_in_time_and_never_asks_after(events in interview(), short in any::<bool>()) {
        let timebox_ms = if short { 30_000 } else { 240_000 };
        let config = GuardConfig { timebox_ms, ..GuardConfig::default() };
        let mut run = Run::with(config.clone());
        for (at, e) in &events {
            run.tick_until(*at);
            run.at(*at, e.clone());
            prop_assert!(run.state.elapsed_ms >= 0);
        }
        run.tick_until(i64::MAX / 2);
        let transitions = run.transitions();
        prop_assert!(transitions.len() <= 1, "{transitions:?}");
        if let Some(i) = run.actions.iter().position(|(_, a)| matches!(a, GuardAction::Transition { .. })) {
            prop_assert!(!run.actions[i..].iter().any(|(_, a)| is_ask_or_score(a)), "{:?}", run.actions);
            prop_assert_eq!(run.state.phase, Phase::Coding);
        }
        if let Some(release) = release_point(&config, &events) {
            let (at, reason, reasons) = transitions.first().cloned().expect("released timebox transitions");
            prop_assert!(at <= release, "transition at {} after release at {}", at, release);
            prop_assert_eq!(reasons.first().copied(), Some(reason));
            if reason == Reason::Timebox {
                prop_assert!(at >= run.state.started_at_ms.unwrap_or(0) + config.timebox_ms);
            }
        }
        let (state, actions) = replay(&config, &run.events);
        prop_assert_eq!(state, run.state);
        prop_assert_eq!(actions, run.actions);
    }

    #[test]
    fn any_input_and_config_never_panics_or_transitions_twice(
        raw in prop::collection::vec((any::<i64>(), any::<u32>(), any::<[u8; 3]>(), 0u8..9), 0..40),
        (timebox, wait, quiet) in any::<(i64, i64, i64)>(),
        (limit, cap, prior, tau) in any::<(u32, u32, f64, f64)>(),
    ) {
        let config = GuardConfig {
            timebox_ms: timebox, zero_run_limit: limit, project_cap: cap, tau: Traits::splat(tau),
            prior_mass: prior, typing_quiet_ms: quiet, control_wait_ms: wait,
        };
        let mut state = GuardState::new();
        let mut transitions = 0;
        for (at, turn, scores, kind) in raw {
            let event = match kind {
                0 => GuardEvent::QuestionDelivered { turn, question: String::new(), kind: QuestionKind::Background },
                1 => GuardEvent::ReplyStarted { turn },
                2 => GuardEvent::ReplyFinished { turn },
                3 => GuardEvent::TypingStarted,
                4 => GuardEvent::TypingStopped,
                5 => GuardEvent::AnswerSubmitted { turn, answer: String::new() },
                6 => GuardEvent::Control { turn, pillars: pillars(scores), new_project: scores[0] % 2 == 0 },
                7 => GuardEvent::ControlFailed { turn, error: String::new() },
                _ => GuardEvent::Tick,
            };
            let out = state.apply(&config, &Timed { at_ms: at, event });
            transitions += out.iter().filter(|a| matches!(a, GuardAction::Transition { .. })).count();
            prop_assert!(state.elapsed_ms >= 0);
            let _ = state.next_wake_ms(&config);
            let _ = serde_json::to_string(&state).expect("state serializes");
        }
        prop_assert!(transitions <= 1);
    }
}
