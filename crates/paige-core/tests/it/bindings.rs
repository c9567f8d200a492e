//! The UI's TypeScript bindings (`ui/src/bindings/protocol.ts`) are generated from the
//! protocol's Rust types, and say what serde actually sends.
//!
//! `PAIGE_BLESS=1 cargo test -p paige-core --test it bindings` rewrites the file.

use std::path::PathBuf;

use paige_core::protocol::bindings::{self, REGENERATE};

fn bindings_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/bindings/protocol.ts")
}

fn generated() -> String {
    bindings::render(&bindings::protocol_declarations())
}

/// The declaration of `name` in the generated file.
fn declaration(name: &str) -> String {
    bindings::protocol_declarations()
        .into_iter()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no declaration of {name}"))
        .text
}

#[test]
fn checked_in_bindings_are_generated_from_the_rust_types() {
    let path = bindings_file();
    let generated = generated();
    if std::env::var_os("PAIGE_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &generated).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != generated {
        let line = checked_in
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| checked_in.lines().count().min(generated.lines().count()) + 1, |i| i + 1);
        let at = |text: &str| text.lines().nth(line - 1).unwrap_or("<end of file>").to_owned();
        panic!(
            "ui/src/bindings/protocol.ts differs from the Rust types from line {line}:\n  checked in: {}\n  generated:  {}\n\
             run `{REGENERATE}` and review the diff",
            at(&checked_in),
            at(&generated),
        );
    }
}

#[test]
fn the_maps_name_every_message_type_and_its_payload() {
    use paige_core::protocol::{ClientMessage, ServerMessage};
    let client = declaration("ClientPayloads");
    let server = declaration("ServerPayloads");
    assert_eq!(client.matches(": ").count(), ClientMessage::TYPES.len(), "{client}");
    assert_eq!(server.matches(": ").count(), ServerMessage::TYPES.len(), "{server}");
    assert!(client.contains("  \"connection:hello\": Hello;\n"), "{client}");
    assert!(server.contains("  \"fs:tree_update\": FsChange;\n"), "{server}");
}

#[test]
fn integers_are_numbers_as_serde_json_writes_them() {
    assert!(!generated().contains("bigint"));
    assert!(declaration("SaveAck").contains("timestamp: number"));
}

#[test]
fn fields_serde_skips_when_none_are_optional_and_never_null() {
    // `skip_serializing_if = "Option::is_none"`: absent, never `null`.
    assert!(declaration("FsChange").contains("newPath?: string,"), "{}", declaration("FsChange"));
    assert!(declaration("TreeNode").contains("children?: Array<TreeNode>,"), "{}", declaration("TreeNode"));
    // A plain `Option`: always present, `null` when none.
    assert!(declaration("ConnectionInit").contains("sessionId: string | null,"));
}

#[test]
fn serde_renames_reach_the_typescript() {
    assert!(declaration("CoachingMessage").contains(" type: MessageKind,"), "{}", declaration("CoachingMessage"));
    assert!(declaration("ErrorCode").contains("\"NOT_IMPLEMENTED\""));
    assert!(declaration("Period").contains("\"7d\""));
    assert!(declaration("HintStyle").contains("\"suggested\""));
    assert!(declaration("ObserverStatus").contains("lastEvaluation: string | null"));
}
