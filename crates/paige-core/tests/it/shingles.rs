//! "Shown, then typed" measured on its corpora (`tests/data/shingles/`): blocks Claude Code showed
//! that the learner then copied into their file must be found, explanation snippets followed by
//! the learner's own code must not. Each case is one JSON line, `{name, lang, shown, before,
//! after}`; `shown` goes through `code_blocks` as a reply would, fenced with its `lang`.

use paige_core::learning::shingles::{Fingerprint, MIN_SHINGLES, THRESHOLD, code_blocks, reproduced, typed_share};

/// The corpora's folder.
const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/shingles");

/// The learner copied the shown block (verbatim, re-indented, reformatted, renamed, a few lines
/// changed, partly typed, embedded among their code).
const COPIED: &str = "copied.jsonl";

/// The shown block explained; the learner then wrote their own code for the task.
const EXPLANATIONS: &str = "explanations.jsonl";

/// One case of a corpus.
struct Case {
    name: String,
    lang: String,
    shown: String,
    before: String,
    after: String,
}

/// How one case came out: the best share over its blocks, with that block's novel shingles,
/// and whether any block counted as reproduced.
struct Outcome {
    name: String,
    share: f64,
    novel: usize,
    flagged: bool,
}

fn load(file: &str) -> Vec<Case> {
    let text = std::fs::read_to_string(format!("{DATA}/{file}")).expect("corpus");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("a JSON case");
            let field = |key: &str| value[key].as_str().unwrap_or_else(|| panic!("{key} in {line}")).to_owned();
            Case {
                name: field("name"),
                lang: field("lang"),
                shown: field("shown"),
                before: field("before"),
                after: field("after"),
            }
        })
        .collect()
}

/// Runs the detector on every case, as the app would on a reply and the file's two versions.
fn judge(cases: &[Case]) -> Vec<Outcome> {
    cases
        .iter()
        .map(|case| {
            let reply = format!("Here is how:\n```{}\n{}\n```\nTell me if it helps.", case.lang, case.shown);
            let (before, after) = (Fingerprint::of(&case.before), Fingerprint::of(&case.after));
            let mut outcome = Outcome { name: case.name.clone(), share: 0.0, novel: 0, flagged: false };
            for block in code_blocks(&reply) {
                let shown = Fingerprint::of(&block.code);
                let share = typed_share(&shown, &before, &after);
                if share >= outcome.share {
                    (outcome.share, outcome.novel) = (share, shown.novel(&before));
                }
                outcome.flagged |= reproduced(&shown, &before, &after).is_some();
            }
            outcome
        })
        .collect()
}

/// Prints a corpus's outcomes, lowest share first, marking the blocks too short to judge.
fn print(label: &str, outcomes: &[Outcome]) {
    let mut sorted: Vec<&Outcome> = outcomes.iter().collect();
    sorted.sort_by(|a, b| a.share.total_cmp(&b.share));
    println!("{label}: share, shingles, flagged (- = under {MIN_SHINGLES} shingles, not judged)");
    for o in sorted {
        let judged = if o.novel < MIN_SHINGLES {
            "-"
        } else if o.flagged {
            "yes"
        } else {
            "no"
        };
        println!("  {:.2} {:4} {judged:>3}  {}", o.share, o.novel, o.name);
    }
}

#[test]
fn shown_solutions_typed_by_the_learner_are_found_and_explanations_are_not() {
    let copied = load(COPIED);
    let explanations = load(EXPLANATIONS);
    assert!(copied.len() >= 40, "{} copied cases", copied.len());
    assert!(explanations.len() >= 40, "{} explanation cases", explanations.len());

    let found = judge(&copied);
    let passed = judge(&explanations);
    print("copied", &found);
    print("explanations", &passed);

    let recall = found.iter().filter(|o| o.flagged).count() as f64 / found.len() as f64;
    let false_positives: Vec<&str> = passed.iter().filter(|o| o.flagged).map(|o| o.name.as_str()).collect();
    let fp_rate = false_positives.len() as f64 / passed.len() as f64;
    let missed: Vec<&str> = found.iter().filter(|o| !o.flagged).map(|o| o.name.as_str()).collect();
    println!(
        "threshold {THRESHOLD}: recall {:.1}% ({}/{}), false positives {:.1}% ({}/{}) {false_positives:?}, missed {missed:?}",
        recall * 100.0,
        found.len() - missed.len(),
        found.len(),
        fp_rate * 100.0,
        false_positives.len(),
        passed.len(),
    );
    assert!(fp_rate <= 0.05, "false positives {false_positives:?}");
    assert!(recall >= 0.9, "missed {missed:?}");
}
