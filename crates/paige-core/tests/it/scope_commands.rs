//! Issue 42, item 1: in governed mode every call that may change files is checked against
//! the bound intent's scope before it runs — a Bash command by the files it names, and one
//! that writes what Paige cannot name, or a tool Paige cannot read, is denied.

use paige_core::governance::HookDecision;
use paige_core::governance::ledger::TraceKind;
use serde_json::json;

use super::governance::{A, Gov, INTENTS, denied};

fn bound() -> Gov {
    let gov = Gov::governed(INTENTS, &[("src/weather/w.rs", "w1\n"), ("src/auth/a.rs", "a1\n"), ("README.md", "r\n")]);
    gov.prompt(A);
    assert_eq!(gov.select(A, "INT-001"), HookDecision::None);
    gov
}

#[test]
fn a_bash_command_that_names_only_files_inside_the_scope_runs() {
    let gov = bound();
    for command in [
        "ls src && cat src/weather/w.rs | grep fn",
        "sed -i 's/w1/w2/' src/weather/w.rs",
        "echo 'pub fn f() {}' > src/weather/new.rs && mkdir -p src/weather/icons",
        "rm -r src/weather/icons",
        "cp README.md src/weather/README.md",
        // The path as Claude Code often gives it: absolute, inside the project.
        &format!("touch {}", gov.abs("src/weather/w.rs")),
    ] {
        assert_eq!(gov.bash_pre("ok", command), HookDecision::None, "{command}");
    }
}

#[test]
fn a_bash_command_that_writes_outside_the_scope_is_denied_before_it_runs() {
    let gov = bound();
    for (command, expected) in [
        ("echo x >> src/auth/a.rs", "Governance Violation: File owned by Intent [INT-002] (src/auth/a.rs)"),
        ("sed -i 's/r/x/' README.md", "Scope Violation: this command writes README.md, outside intent INT-001"),
        ("mv src/weather/w.rs src/w.rs", "writes src/w.rs, outside"),
        ("rm -r src", "writes src, outside"),
        ("echo x > /tmp/paige-scope-out", "outside the project"),
        ("echo x > ../sibling.rs", "Scope Violation: ../sibling.rs"),
    ] {
        let reason = denied(&gov.bash_pre("no", command)).to_owned();
        assert!(reason.contains(expected), "{command}: {reason}");
    }
    let trace = gov.trace();
    assert!(trace.iter().filter(|e| e.kind == TraceKind::Denial).count() >= 6, "each denial is on the ledger");
}

#[test]
fn a_command_whose_writes_paige_cannot_name_is_denied_with_how_to_name_them() {
    let gov = bound();
    for command in ["python3 gen.py", "npm install left-pad", "cd src/weather && touch x.rs", "rm src/weather/*.rs"] {
        let reason = denied(&gov.bash_pre("no", command)).to_owned();
        assert!(reason.contains("cannot name every file this command writes"), "{command}: {reason}");
        assert!(reason.contains("src/weather/**") && reason.contains("Edit or Write"), "{reason}");
    }
}

#[test]
fn a_tool_paige_cannot_read_is_denied_while_an_intent_is_bound() {
    let gov = bound();
    for tool in ["mcp__files__write_file", "TeleportFiles"] {
        let reason = denied(&gov.pre(A, tool, json!({"path": "src/auth/a.rs"}))).to_owned();
        assert!(reason.contains(&format!("cannot tell which files {tool} changes")), "{reason}");
    }
    assert_eq!(gov.read("src/auth/a.rs").as_deref(), Some("a1\n"));
}
