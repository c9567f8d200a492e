//! One-line, human forms of the guard's actions, for `paige intake replay` and the debug panel.

use super::model::{GuardAction, GuardConfig, Timed, Traits};
use super::replay;

/// `action` as one line, stamped `mm:ss.d` with `elapsed_ms` since the first question
/// (e.g. "04:00.0 transition: timebox (timebox, gate)").
pub fn describe(elapsed_ms: i64, action: &GuardAction) -> String {
    let what = match action {
        GuardAction::ScoreTurn { turn, .. } => format!("score turn {turn}"),
        GuardAction::AskBackground { turn } => format!("ask background question (turn {turn})"),
        GuardAction::AskAnotherProject { turn } => format!("ask for another project (turn {turn})"),
        GuardAction::Transition { reason, reasons } => {
            let all: Vec<&str> = reasons.iter().map(|r| r.as_str()).collect();
            format!("transition: {} ({})", reason.as_str(), all.join(", "))
        }
        GuardAction::LogTurn(log) => {
            let subject = match (log.reason, log.turn) {
                (Some(reason), _) => format!("log transition ({})", reason.as_str()),
                (None, Some(turn)) => format!("log turn {turn}"),
                (None, None) => "log".to_owned(),
            };
            let pillars = log.pillars.as_ref().map_or_else(|| "-".to_owned(), |p| triple(&p.map(|_, p| p.score)));
            format!(
                "{subject}: pillars {pillars}, conf {}, zeroRuns {}, projectsUsed {}",
                triple(&log.confidence.map(|_, c| format!("{c:.2}"))),
                log.zero_runs,
                log.projects_used
            )
        }
    };
    format!("{} {what}", mm_ss(elapsed_ms))
}

/// The replayed interview as the lines `describe` prints, each stamped from the first question.
pub fn transcript(config: &GuardConfig, events: &[Timed]) -> Vec<String> {
    let (state, actions) = replay(config, events);
    let start = state.started_at_ms.unwrap_or(0);
    actions.iter().map(|(at, action)| describe(at.saturating_sub(start), action)).collect()
}

/// `mm:ss.d` (tenths truncated); minutes grow past 59 rather than wrapping.
pub fn mm_ss(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    format!("{sign}{:02}:{:02}.{}", ms / 60_000, ms % 60_000 / 1000, ms % 1000 / 100)
}

fn triple<T: std::fmt::Display>(t: &Traits<T>) -> String {
    format!("{}/{}/{}", t.adaptability, t.creativity, t.reasoning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::guard::{Reason, TurnLog};

    #[test]
    fn mm_ss_counts_minutes_seconds_and_tenths() {
        assert_eq!(mm_ss(0), "00:00.0");
        assert_eq!(mm_ss(240_000), "04:00.0");
        assert_eq!(mm_ss(61_999), "01:01.9");
        assert_eq!(mm_ss(3_600_000), "60:00.0");
        assert_eq!(mm_ss(-1_500), "-00:01.5");
        assert!(!mm_ss(i64::MIN).is_empty());
    }

    #[test]
    fn a_transition_names_its_reason_then_every_reason_that_applied() {
        let action = GuardAction::Transition { reason: Reason::Timebox, reasons: vec![Reason::Timebox, Reason::Gate] };
        assert_eq!(describe(240_000, &action), "04:00.0 transition: timebox (timebox, gate)");
    }

    #[test]
    fn a_turn_log_shows_pillars_confidence_and_counters() {
        let log = TurnLog {
            at_ms: 0,
            turn: Some(2),
            last_question: "q".into(),
            last_answer: "a".into(),
            pillars: None,
            weights: Traits::splat(0.0),
            confidence: Traits { adaptability: 0.5, creativity: 0.0, reasoning: 0.1 },
            zero_runs: 1,
            projects_used: 1,
            elapsed_ms: 12_345,
            reason: None,
        };
        assert_eq!(
            describe(12_345, &GuardAction::LogTurn(log)),
            "00:12.3 log turn 2: pillars -, conf 0.50/0.00/0.10, zeroRuns 1, projectsUsed 1"
        );
    }
}
