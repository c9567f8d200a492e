//! Reliance classification: the local rules against the committed table of learner prompts
//! (`tests/data/reliance-prompts.tsv`, `<expected class>\t<prompt>`, `\n` for a newline), and
//! what a prompt the rules leave unsure sends to the model.
//!
//! `cargo test -p paige-core --test it reliance -- --nocapture` prints coverage, accuracy,
//! the rows decided wrongly and the confusion matrix.

use std::collections::HashMap;
use std::path::PathBuf;

use paige_core::learning::reliance::{RelianceClass, Verdict, classify};
use paige_core::prompts::reliance_classification::{CUT_MARKER, MAX_PROMPT_CHARS, assemble_user_message};
use serde_json::Value;

/// Share of the table the rules must decide.
const MIN_COVERAGE: f64 = 0.6;
/// Share of the rule-decided rows they must get right.
const MIN_ACCURACY: f64 = 0.9;

struct Row {
    line: usize,
    expected: RelianceClass,
    prompt: String,
}

fn table() -> Vec<Row> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/reliance-prompts.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.is_empty())
        .map(|(i, line)| {
            let (class, prompt) = line.split_once('\t').unwrap_or_else(|| panic!("line {}: no tab", i + 1));
            let expected = RelianceClass::parse(class).unwrap_or_else(|| panic!("line {}: class {class:?}", i + 1));
            Row { line: i + 1, expected, prompt: prompt.replace("\\n", "\n") }
        })
        .collect()
}

#[test]
fn the_rules_classify_the_committed_prompt_table_accurately_and_leave_the_rest_to_the_model() {
    let rows = table();
    let mut per_class: HashMap<RelianceClass, usize> = HashMap::new();
    let mut decided_per_class: HashMap<RelianceClass, usize> = HashMap::new();
    // confusion[expected][got], `got` = None for Unsure.
    let mut confusion: HashMap<(RelianceClass, Option<RelianceClass>), usize> = HashMap::new();
    let mut wrong = Vec::new();
    let mut unsure = Vec::new();
    let (mut decided, mut right) = (0, 0);
    for row in &rows {
        *per_class.entry(row.expected).or_default() += 1;
        let got = match classify(&row.prompt) {
            Verdict::Rule { class, rule } => {
                decided += 1;
                *decided_per_class.entry(class).or_default() += 1;
                if class == row.expected {
                    right += 1;
                } else {
                    wrong.push(format!(
                        "  line {}: expected {}, rule {rule} said {}: {:?}",
                        row.line,
                        row.expected.as_str(),
                        class.as_str(),
                        row.prompt
                    ));
                }
                Some(class)
            }
            Verdict::Unsure => {
                unsure.push(format!("  line {}: {}: {:?}", row.line, row.expected.as_str(), row.prompt));
                None
            }
        };
        *confusion.entry((row.expected, got)).or_default() += 1;
    }
    let coverage = decided as f64 / rows.len() as f64;
    let accuracy = right as f64 / decided.max(1) as f64;

    eprintln!("reliance table: {} rows", rows.len());
    for class in RelianceClass::ALL {
        eprintln!("  {:<20} {:>3} rows", class.as_str(), per_class.get(&class).copied().unwrap_or(0));
    }
    eprintln!("coverage: {decided}/{} = {coverage:.3}", rows.len());
    eprintln!("rule accuracy: {right}/{decided} = {accuracy:.3}");
    eprintln!("decided wrongly: {}", wrong.len());
    for line in &wrong {
        eprintln!("{line}");
    }
    eprintln!("left to the model: {}", unsure.len());
    for line in &unsure {
        eprintln!("{line}");
    }
    eprintln!("confusion matrix (rows: expected, columns: rule verdict):");
    let short = |class: RelianceClass| &class.as_str()[..class.as_str().len().min(10)];
    let header: String = RelianceClass::ALL.iter().map(|&c| format!("{:>11}", short(c))).collect();
    eprintln!("  {:<20}{header}{:>11}", "", "unsure");
    for expected in RelianceClass::ALL {
        let cells: String = RelianceClass::ALL
            .iter()
            .map(|&got| Some(got))
            .chain([None])
            .map(|got| format!("{:>11}", confusion.get(&(expected, got)).copied().unwrap_or(0)))
            .collect();
        eprintln!("  {:<20}{cells}", expected.as_str());
    }

    for class in RelianceClass::ALL {
        assert!(per_class.get(&class).copied().unwrap_or(0) >= 15, "fewer than 15 rows of {}", class.as_str());
        assert!(decided_per_class.contains_key(&class), "the rules decide no row as {}", class.as_str());
    }
    assert!(rows.len() >= 100, "only {} rows", rows.len());
    assert!(coverage >= MIN_COVERAGE, "coverage {coverage:.3} < {MIN_COVERAGE}");
    assert!(accuracy >= MIN_ACCURACY, "rule accuracy {accuracy:.3} < {MIN_ACCURACY}:\n{}", wrong.join("\n"));
}

#[test]
fn a_prompt_the_rules_leave_unsure_goes_to_the_model_quoted_whole() {
    let prompt = "can you help me with phase 2? I \"think\" it's about the {retry} loop";
    assert_eq!(classify(prompt), Verdict::Unsure);
    let message: Value =
        serde_json::from_str(&assemble_user_message(prompt, Some("Retry failed uploads"))).expect("json");
    assert_eq!(message, serde_json::json!({ "prompt": prompt, "current_phase": "Retry failed uploads" }));

    let message: Value = serde_json::from_str(&assemble_user_message(prompt, None)).expect("json");
    assert_eq!(message["current_phase"], Value::Null);
}

#[test]
fn a_long_prompt_goes_to_the_model_cut_on_a_character_boundary_with_a_marker() {
    let prompt = "é".repeat(MAX_PROMPT_CHARS + 10);
    let message: Value = serde_json::from_str(&assemble_user_message(&prompt, None)).expect("json");
    let sent = message["prompt"].as_str().expect("prompt");
    assert_eq!(sent, format!("{}{CUT_MARKER}", "é".repeat(MAX_PROMPT_CHARS)));

    let exact = "a".repeat(MAX_PROMPT_CHARS);
    let message: Value = serde_json::from_str(&assemble_user_message(&exact, None)).expect("json");
    assert_eq!(message["prompt"], exact.as_str(), "a prompt of exactly the limit is not cut");
}
