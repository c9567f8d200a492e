use super::*;

fn gate(title: &str, min_level: u8) -> KataConstraint {
    KataConstraint { title: title.into(), description: String::new(), min_level }
}

fn tried(code: &str, titles: &[&str]) -> KataAttempt {
    KataAttempt {
        code: code.into(),
        level: Some(2),
        constraints: Some(titles.iter().map(|t| gate(t, 1)).collect()),
        ..KataAttempt::default()
    }
}

#[test]
fn newly_unlocked_takes_the_gates_above_the_previous_best_up_to_the_new_level() {
    let gates = [gate("a", 1), gate("b", 3), gate("c", 5), gate("d", 7)];
    let titles = |v: Vec<KataConstraint>| v.into_iter().map(|c| c.title).collect::<Vec<_>>();
    assert_eq!(titles(newly_unlocked(&gates, 2, 5)), ["b", "c"]);
    assert_eq!(titles(newly_unlocked(&gates, 0, 1)), ["a"], "before any attempt the best is 0");
    assert!(newly_unlocked(&gates, 5, 4).is_empty(), "a lower level unlocks nothing");
    assert!(newly_unlocked(&gates, 5, 5).is_empty(), "the same level unlocks nothing again");
    assert_eq!(titles(newly_unlocked(&gates, 0, 10)), ["a", "b", "c", "d"]);
}

#[test]
fn constraint_titles_resolve_in_the_katas_order_ignoring_unmatched_ones() {
    let gates = [gate("No loops", 1), gate("One await", 3)];
    let asked = ["one AWAIT".to_owned(), "nope".to_owned(), " No loops".to_owned()];
    let resolved: Vec<String> = resolve_constraints(&gates, &asked).into_iter().map(|c| c.title).collect();
    assert_eq!(resolved, ["No loops", "One await"]);
    assert!(resolve_constraints(&gates, &["nope".to_owned()]).is_empty(), "none match: no constraints (EC-77)");
}

#[test]
fn previous_attempts_are_those_under_exactly_the_same_constraint_set_in_any_order() {
    let attempts = [
        tried("none", &[]),
        tried("ab", &["a", "b"]),
        tried("ba", &["b", "a"]),
        tried("a", &["a"]),
        KataAttempt { code: "legacy".into(), ..KataAttempt::default() },
    ];
    let codes = |active: &[KataConstraint]| {
        same_constraint_attempts(&attempts, active).into_iter().map(|a| a.code).collect::<Vec<_>>()
    };
    assert_eq!(codes(&[gate("b", 1), gate("a", 1)]), ["ab", "ba"]);
    assert_eq!(codes(&[]), ["none", "legacy"], "an attempt without constraints recorded has none");
    assert_eq!(codes(&[gate("a", 1)]), ["a"]);
}

#[test]
fn only_the_latest_previous_attempts_are_sent() {
    let attempts: Vec<KataAttempt> = (0..25).map(|n| tried(&n.to_string(), &[])).collect();
    let sent = same_constraint_attempts(&attempts, &[]);
    assert_eq!(sent.len(), PREVIOUS_ATTEMPTS_SENT);
    assert_eq!((sent[0].code.as_str(), sent[9].code.as_str()), ("15", "24"), "oldest first, the latest kept");
}

#[test]
fn a_level_outside_1_to_10_is_refused() {
    assert_eq!(valid_level(1), Ok(1));
    assert_eq!(valid_level(10), Ok(10));
    for bad in [0, 11, -3, 300] {
        assert!(valid_level(bad).is_err(), "{bad}");
    }
}
