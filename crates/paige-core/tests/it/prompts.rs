//! Prompt modules: checked-in schemas match the Rust types, follow the structured-output
//! rules, are valid JSON Schema, and accept their example answers.
//!
//! `PAIGE_BLESS=1 cargo test -p paige-core --test it prompts` rewrites `prompts/*/schema.json`
//! from the Rust types.

use std::path::PathBuf;

use paige_core::api::ModelTier;
use paige_core::prompts::{self, ALL, PromptModule};
use serde_json::{Value, json};

fn prompts_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../prompts")
}

fn example(module: &PromptModule) -> String {
    let path = prompts_dir().join(module.name).join("example.json");
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn checked_in_schema(module: &PromptModule) -> Value {
    serde_json::from_str(module.schema_json).unwrap_or_else(|err| panic!("{}/schema.json: {err}", module.name))
}

#[test]
fn the_ten_spec_calls_and_paiges_worked_example_each_have_a_module_with_its_model_tier() {
    let tiers: Vec<(&str, &str, ModelTier)> = ALL.iter().map(|m| (m.name, m.call_type, m.model)).collect();
    assert_eq!(
        tiers,
        [
            ("memory-retrieval-filter", "memory_retrieval_filter", ModelTier::Haiku),
            ("coach-agent", "coach_agent", ModelTier::Sonnet),
            ("knowledge-gap-extraction", "knowledge_gap_extraction", ModelTier::Sonnet),
            ("dreyfus-assessment", "dreyfus_assessment", ModelTier::Sonnet),
            ("memory-summarisation", "memory_summarisation", ModelTier::Haiku),
            ("observer-triage", "observer_triage", ModelTier::Haiku),
            ("explain-this", "explain_this", ModelTier::Sonnet),
            ("practice-review", "practice_review", ModelTier::Sonnet),
            ("issue-assessment", "issue_assessment", ModelTier::Sonnet),
            ("learning-materials", "learning_materials", ModelTier::Sonnet),
            ("worked-example", "worked_example", ModelTier::Sonnet),
        ]
    );
    for module in ALL {
        assert!(module.system_prompt.len() > 100, "{}: system prompt is empty", module.name);
    }
}

#[test]
fn checked_in_schemas_are_generated_from_the_rust_types() {
    let bless = std::env::var_os("PAIGE_BLESS").is_some_and(|v| v == "1");
    let mut drifted = Vec::new();
    for module in ALL {
        let generated = (module.generated_schema)();
        if bless {
            let path = prompts_dir().join(module.name).join("schema.json");
            let text = serde_json::to_string_pretty(&generated).expect("schema serializes") + "\n";
            std::fs::write(&path, text).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        } else if checked_in_schema(module) != generated {
            drifted.push(module.name);
        }
    }
    assert!(
        drifted.is_empty(),
        "prompts/*/schema.json differ from the Rust types for {drifted:?}; \
         run `PAIGE_BLESS=1 cargo test -p paige-core --test it prompts` and review the diff"
    );
}

#[test]
fn every_schema_follows_the_structured_output_rules() {
    for module in ALL {
        let mut problems = Vec::new();
        check_strict(&checked_in_schema(module), "$", &mut problems);
        assert!(problems.is_empty(), "{}: {problems:#?}", module.name);
    }
}

/// Every object closed with all properties required; no `$ref`; no unenforced keywords.
fn check_strict(node: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(map) = node.as_object() else { return };
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        if map.get("additionalProperties") != Some(&json!(false)) {
            problems.push(format!("{at}: additionalProperties is not false"));
        }
        let mut required: Vec<&str> =
            map.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let mut keys: Vec<&str> = properties.keys().map(String::as_str).collect();
        required.sort();
        keys.sort();
        if required != keys {
            problems.push(format!("{at}: required {required:?} is not every property {keys:?}"));
        }
        for (key, child) in properties {
            check_strict(child, &format!("{at}.{key}"), problems);
        }
    }
    for keyword in ["$ref", "minimum", "maximum", "minLength", "maxLength", "maxItems", "multipleOf"] {
        if map.contains_key(keyword) {
            problems.push(format!("{at}: has {keyword}"));
        }
    }
    if let Some(format) = map.get("format").and_then(Value::as_str)
        && !["uri", "date-time", "date", "email", "uuid"].contains(&format)
    {
        problems.push(format!("{at}: unsupported format {format}"));
    }
    if let Some(items) = map.get("items") {
        check_strict(items, &format!("{at}[]"), problems);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for (i, child) in map.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            check_strict(child, &format!("{at}/{key}{i}"), problems);
        }
    }
}

#[test]
fn every_schema_is_valid_json_schema_and_accepts_its_example_which_deserializes() {
    for module in ALL {
        let schema = checked_in_schema(module);
        let validator = jsonschema::validator_for(&schema)
            .unwrap_or_else(|err| panic!("{}: not a valid JSON Schema: {err}", module.name));
        let text = example(module);
        let answer: Value = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{}: example: {err}", module.name));
        let errors: Vec<String> = validator.iter_errors(&answer).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: example rejected by its schema: {errors:?}", module.name);
        (module.parse)(&text).unwrap_or_else(|err| panic!("{}: example does not deserialize: {err}", module.name));
    }
}

#[test]
fn schemas_reject_unknown_fields_missing_fields_and_values_outside_the_spec_enums() {
    let schema = checked_in_schema(&prompts::observer_triage::MODULE);
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    let good: Value = serde_json::from_str(&example(&prompts::observer_triage::MODULE)).expect("example");
    assert!(validator.is_valid(&good));

    let mut extra = good.clone();
    extra["mood"] = json!("sleepy");
    assert!(!validator.is_valid(&extra), "unknown field accepted");

    let mut missing = good.clone();
    missing.as_object_mut().expect("object").remove("reasoning");
    assert!(!validator.is_valid(&missing), "missing field accepted");

    let mut bad_enum = good;
    bad_enum["signal"] = json!("bored");
    assert!(!validator.is_valid(&bad_enum), "signal outside the spec's enum accepted");
}

#[test]
fn enums_keep_the_spec_spelling() {
    let schema = checked_in_schema(&prompts::observer_triage::MODULE);
    assert_eq!(
        schema["properties"]["signal"]["enum"],
        json!(["wrong_file", "scope_drift", "idle", "phase_complete", "edit_loop", "no_nudge"])
    );
    let schema = checked_in_schema(&prompts::dreyfus_assessment::MODULE);
    let stage = &schema["properties"]["assessments"]["items"]["properties"]["stage"]["enum"];
    assert_eq!(stage, &json!(["novice", "advanced_beginner", "competent", "proficient", "expert"]));
}

#[test]
fn numeric_limits_the_api_does_not_enforce_move_into_the_description() {
    let schema = checked_in_schema(&prompts::practice_review::MODULE);
    let level = &schema["properties"]["level"];
    assert_eq!(level["type"], "integer");
    let description = level["description"].as_str().expect("description");
    assert!(description.starts_with("Assessed skill level 1-10 for this kata"), "{description}");
    assert!(description.contains("minimum: 1") && description.contains("maximum: 10"), "{description}");
}

#[test]
fn optional_values_are_required_but_nullable() {
    let schema = checked_in_schema(&prompts::coach_agent::MODULE);
    let required = schema["required"].as_array().expect("required");
    assert!(required.contains(&json!("memory_connection")));
    let validator = jsonschema::validator_for(&schema).expect("valid");
    let mut answer: Value = serde_json::from_str(&example(&prompts::coach_agent::MODULE)).expect("example");
    answer["memory_connection"] = json!("You fixed a similar retry bug last week");
    assert!(validator.is_valid(&answer));
    answer["memory_connection"] = Value::Null;
    assert!(validator.is_valid(&answer));
}

#[test]
fn dreyfus_stage_is_filled_into_the_prompts_that_take_it() {
    for prompt in [
        prompts::explain_this::system_prompt("competent"),
        prompts::practice_review::system_prompt("competent"),
        prompts::learning_materials::system_prompt("competent"),
    ] {
        assert!(!prompt.contains("{dreyfus_stage}"));
        assert!(prompt.contains("Dreyfus stage") && prompt.contains(": competent"), "{prompt}");
    }
    assert!(prompts::explain_this::SYSTEM_PROMPT.contains("{dreyfus_stage}"), "the template keeps the variable");
}

#[test]
fn learning_materials_runs_with_the_web_search_tool() {
    let tools = serde_json::to_value(prompts::learning_materials::tools()).expect("tools");
    assert_eq!(tools, json!([{"type": "web_search_20250305", "name": "web_search"}]));
}

#[test]
fn user_messages_are_json_with_the_spec_field_names() {
    use prompts::{coach_agent, explain_this, observer_triage};
    let message = coach_agent::assemble_user_message(
        "1. add retry",
        "novice",
        &[coach_agent::CoachingMemory { content: "c".into(), connection: "x".into(), use_in_coaching: "u".into() }],
    );
    let value: Value = serde_json::from_str(&message).expect("json");
    assert_eq!(value["plan"], "1. add retry");
    assert_eq!(value["dreyfus_stage"], "novice");
    assert_eq!(value["relevant_memories"][0]["use_in_coaching"], "u");

    let message = explain_this::assemble_user_message("let x = 1;", "fn main() {}", "src/main.rs", "rust", None);
    let value: Value = serde_json::from_str(&message).expect("json");
    assert_eq!(value["selected_code"], "let x = 1;");
    assert_eq!(value["file_path"], "src/main.rs");
    assert_eq!(value["current_phase"], Value::Null);

    let context = observer_triage::TriageContext {
        current_phase: None,
        recent_actions: vec![observer_triage::RecentAction {
            kind: "file_save".into(),
            path: Some("src/a.rs".into()),
            ago: "2m ago".into(),
        }],
        time_since_last_save: "2m".into(),
        time_since_last_nudge: "never".into(),
        dreyfus_stage: "novice".into(),
        user_idle: false,
        step_check: None,
    };
    let value: Value = serde_json::from_str(&observer_triage::assemble_user_message(&context)).expect("json");
    assert_eq!(value["recent_actions"][0], json!({"type": "file_save", "path": "src/a.rs", "ago": "2m ago"}));
    assert_eq!(value["user_idle"], false);
}

#[test]
fn the_coach_persona_forbids_writing_the_learners_code() {
    let persona = prompts::coach_persona::SYSTEM_PROMPT;
    assert!(persona.contains("The learner writes the code. You never do"), "{persona}");
}
