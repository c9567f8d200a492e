//! The tokens kept across restarts (`DATA_DIR/tokens.json`, issue 40): the same pair at every
//! start, the owner's alone, never taken from a file others could have written or read. The
//! UI token is kept only where an OS layer hides the folder from Claude Code (issue 39).

use std::os::unix::fs::PermissionsExt;

use paige_core::token::{self, UiTokenKept::InMemoryOnly, UiTokenKept::OnDisk};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).expect("meta").permissions().mode() & 0o777
}

#[test]
fn the_tokens_are_made_once_kept_0600_and_the_same_at_every_start() {
    let data = tempfile::tempdir().expect("data");
    let first = token::load_or_create(data.path(), OnDisk).expect("first start");
    assert_ne!(first.ui, first.agent, "two different tokens");
    assert_eq!(first.ui.expose().len(), 64);
    assert_eq!(mode(&token::path(data.path())), 0o600);
    let again = token::load_or_create(data.path(), OnDisk).expect("restart");
    assert_eq!(again, first, "a restart keeps both tokens");
}

#[test]
fn rotating_replaces_both_tokens_and_the_next_start_uses_the_new_ones() {
    let data = tempfile::tempdir().expect("data");
    let old = token::load_or_create(data.path(), OnDisk).expect("first start");
    let new = token::rotate(data.path(), OnDisk).expect("rotate");
    assert_ne!(new.ui, old.ui);
    assert_ne!(new.agent, old.agent);
    assert_eq!(token::load_or_create(data.path(), OnDisk).expect("restart"), new);
    assert_eq!(mode(&token::path(data.path())), 0o600);
}

#[test]
fn a_kept_file_that_cannot_be_trusted_is_replaced_and_a_planted_link_is_not_followed() {
    let data = tempfile::tempdir().expect("data");
    let path = token::path(data.path());
    // A link planted at the name, to tokens someone else chose: not read, not written through.
    let elsewhere = tempfile::tempdir().expect("elsewhere");
    let planted = elsewhere.path().join("chosen.json");
    let chosen = r#"{"ui":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","agent":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}"#;
    std::fs::write(&planted, chosen).expect("planted");
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::os::unix::fs::symlink(&planted, &path).expect("link");
    let tokens = token::load_or_create(data.path(), OnDisk).expect("start");
    assert_ne!(tokens.ui.expose(), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "the linked tokens are not used");
    assert_eq!(std::fs::read_to_string(&planted).expect("planted"), chosen, "nothing written through the link");
    assert!(!std::fs::symlink_metadata(&path).expect("meta").file_type().is_symlink(), "a file of its own now");

    // Readable by others: no longer a secret, replaced.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let replaced = token::load_or_create(data.path(), OnDisk).expect("start");
    assert_ne!(replaced, tokens);
    assert_eq!(mode(&path), 0o600);

    // Not JSON, or not a pair of tokens: replaced, and the start goes on.
    for bad in [
        "not json",
        r#"{"ui":"x","agent":"y"}"#,
        r#"{"ui":"same0same0same0same0same0same0same0","agent":"same0same0same0same0same0same0same0"}"#,
    ] {
        std::fs::write(&path, bad).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let fresh = token::load_or_create(data.path(), OnDisk).expect("start");
        assert_ne!(fresh.ui.expose(), "x", "{bad}");
        assert_ne!(fresh.ui, fresh.agent, "{bad}");
    }
}

#[test]
fn without_an_os_layer_only_the_agent_token_is_kept_and_a_kept_ui_token_is_removed() {
    let data = tempfile::tempdir().expect("data");
    let guarded = token::load_or_create(data.path(), OnDisk).expect("a guarded start");
    let on_disk = || std::fs::read_to_string(token::path(data.path())).expect("kept file");
    assert!(on_disk().contains(guarded.ui.expose()));

    let first = token::load_or_create(data.path(), InMemoryOnly).expect("an unguarded start");
    assert_eq!(first.agent, guarded.agent, "the agent token survives");
    assert_ne!(first.ui, guarded.ui, "the kept UI token is not used");
    let kept = on_disk();
    assert!(!kept.contains(guarded.ui.expose()) && !kept.contains(first.ui.expose()), "{kept}");
    assert_eq!(mode(&token::path(data.path())), 0o600);
    let second = token::load_or_create(data.path(), InMemoryOnly).expect("restart");
    assert_eq!(second.agent, first.agent);
    assert_ne!(second.ui, first.ui, "a new UI token at each start");

    let rotated = token::rotate(data.path(), InMemoryOnly).expect("rotate");
    assert!(!on_disk().contains(rotated.ui.expose()));
    // A guarded start after them makes a UI token and keeps it from then on.
    let back = token::load_or_create(data.path(), OnDisk).expect("guarded again");
    assert_eq!(back.agent, rotated.agent);
    assert_eq!(token::load_or_create(data.path(), OnDisk).expect("restart"), back);
}
