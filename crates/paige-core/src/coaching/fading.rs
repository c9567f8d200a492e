//! Hints fade with demonstrated mastery. The rule, pinned (issue 15, with issue 30's
//! learning signals): after 3 consecutive completed phases of a skill area without help (no
//! escalation, no "just show me", no solution shown then typed, no wrong comprehension
//! answer), the next phase of that area
//! starts one level lower than the coach agent chose (`line → region → file → none`); so
//! does it after the last 2 checked phases of the area were understood (every comprehension
//! answer right) and the last needed no help. When the last phase of the area needed help or
//! had a wrong comprehension answer, the next starts one level higher. Without history in
//! the area the coach agent's level stands.

use crate::db::{HintLevel, PhaseOutcome};

/// How many clean phases in a row earn a lower start.
pub const STREAK: usize = 3;
/// How many understood phases in a row (their comprehension checks right) earn a lower start.
pub const UNDERSTOOD: usize = 2;

/// Where a phase's hints start, and why when the history moved them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartingLevel {
    pub level: HintLevel,
    pub reason: Option<String>,
}

const LADDER: [HintLevel; 4] = [HintLevel::None, HintLevel::File, HintLevel::Region, HintLevel::Line];

pub(super) fn step(level: HintLevel, up: bool) -> HintLevel {
    let at = LADDER.iter().position(|l| *l == level).unwrap_or(0);
    let to = if up { (at + 1).min(LADDER.len() - 1) } else { at.saturating_sub(1) };
    LADDER[to]
}

/// The starting level for a phase of `skill_area` the coach agent put at `coach_level`, given
/// that area's completed phases, oldest first.
pub fn starting_level(coach_level: HintLevel, skill_area: &str, history: &[PhaseOutcome]) -> StartingLevel {
    let unchanged = StartingLevel { level: coach_level, reason: None };
    let Some(last) = history.last() else { return unchanged };
    let checked: Vec<bool> = history.iter().filter_map(|p| p.understood).collect();
    let (level, why) = if last.needed_help {
        (step(coach_level, true), "you asked for more help in the last phase")
    } else if last.understood == Some(false) {
        (step(coach_level, true), "an answer about the last phase was not right")
    } else if history.len() >= STREAK
        && history[history.len() - STREAK..].iter().all(|p| !p.needed_help && p.understood != Some(false))
    {
        (step(coach_level, false), "you finished the last 3 phases without help")
    } else if checked.len() >= UNDERSTOOD && checked[checked.len() - UNDERSTOOD..].iter().all(|u| *u) {
        (step(coach_level, false), "you answered the questions on the last 2 phases right")
    } else {
        return unchanged;
    };
    if level == coach_level {
        return unchanged;
    }
    StartingLevel { level, reason: Some(format!("hints start at {} for {skill_area}: {why}", level.as_str())) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use HintLevel::{File, Line, Region};
    const NONE: HintLevel = HintLevel::None;

    const CLEAN: PhaseOutcome = PhaseOutcome { needed_help: false, understood: None };
    const HELPED: PhaseOutcome = PhaseOutcome { needed_help: true, understood: None };
    const RIGHT: PhaseOutcome = PhaseOutcome { needed_help: false, understood: Some(true) };
    const WRONG: PhaseOutcome = PhaseOutcome { needed_help: false, understood: Some(false) };

    #[test]
    fn the_fading_rule_as_a_table_of_histories_and_starting_levels() {
        #[rustfmt::skip]
        let table: &[(HintLevel, &[PhaseOutcome], HintLevel, Option<&str>)] = &[
            // No history in the area: the coach agent's level stands.
            (Line, &[], Line, None),
            (NONE, &[], NONE, None),
            // Fewer than 3 clean phases: unchanged.
            (Line, &[CLEAN], Line, None),
            (Line, &[CLEAN, CLEAN], Line, None),
            // 3 consecutive clean phases: one level lower, down the ladder.
            (Line, &[CLEAN, CLEAN, CLEAN], Region, Some("you finished the last 3 phases without help")),
            (Region, &[CLEAN, CLEAN, CLEAN], File, Some("you finished the last 3 phases without help")),
            (File, &[CLEAN, CLEAN, CLEAN], NONE, Some("you finished the last 3 phases without help")),
            // Already at none: nothing lower, no reason to show.
            (NONE, &[CLEAN, CLEAN, CLEAN], NONE, None),
            // Only the last 3 count: help long ago does not hold hints up.
            (Line, &[HELPED, CLEAN, CLEAN, CLEAN], Region, Some("you finished the last 3 phases without help")),
            // Help within the last 3, but not in the last phase: the streak is broken, unchanged.
            (Line, &[CLEAN, HELPED, CLEAN, CLEAN], Line, None),
            (Region, &[CLEAN, CLEAN, HELPED, CLEAN], Region, None),
            // The last phase needed help (escalation or "just show me"): one level higher.
            (File, &[HELPED], Region, Some("you asked for more help in the last phase")),
            (NONE, &[CLEAN, CLEAN, CLEAN, HELPED], File, Some("you asked for more help in the last phase")),
            // Already at line: nothing higher.
            (Line, &[HELPED], Line, None),
            // A wrong comprehension answer in the last phase: one level higher.
            (Region, &[CLEAN, WRONG], Line, Some("an answer about the last phase was not right")),
            // Two understood phases in a row: one level lower, before 3 clean ones.
            (Line, &[RIGHT, RIGHT], Region, Some("you answered the questions on the last 2 phases right")),
            (Line, &[HELPED, RIGHT, RIGHT], Region, Some("you answered the questions on the last 2 phases right")),
            // One understood phase is not yet a trend; one wrong among them breaks it.
            (Line, &[RIGHT], Line, None),
            (Line, &[WRONG, RIGHT, CLEAN], Line, None),
        ];
        for (coach, history, expected, why) in table {
            let got = starting_level(*coach, "error handling", history);
            assert_eq!(got.level, *expected, "coach {coach:?}, history {history:?}");
            let expected_reason =
                why.map(|why| format!("hints start at {} for error handling: {why}", expected.as_str()));
            assert_eq!(got.reason, expected_reason, "coach {coach:?}, history {history:?}");
        }
    }
}
