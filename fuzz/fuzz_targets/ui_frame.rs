//! UI frames through `Core::handle_text`, as `/ws` and the desktop's IPC deliver them. One
//! frame per line, on one connection, so an input can open, edit and save in turn.
//! Invariants (as `tests/it/fuzz.rs`): no panic; every reply is a known server type; a frame
//! that does not decode is answered with `connection:error`; nothing outside the project
//! changes; the project changes only by a `file:save`.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use paige_core::protocol::{ClientMessage, Decoded, ServerMessage, decode};
use paige_fuzz::{Mode, World};
use serde_json::Value;

/// More frames than this per input add time, not coverage.
const MAX_FRAMES: usize = 8;

static WORLD: LazyLock<World> = LazyLock::new(|| World::new(Mode::Coach));

fuzz_target!(|data: &[u8]| {
    // `/ws` text frames and IPC strings are UTF-8 by the time they reach the core.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let w = &*WORLD;
    let _entered = w.runtime.enter();
    let conn = w.core.connect();
    let outside = w.outside();
    let initial = w.learner();
    let mut saved = false;
    for frame in text.split('\n').take(MAX_FRAMES) {
        let before = w.learner();
        let decoded = decode(frame);
        let invalid = matches!(decoded, Decoded::Invalid { .. });
        let save = matches!(&decoded, Decoded::Message { message: ClientMessage::FileSave(_), .. });
        saved |= save;
        match w.core.handle_text(conn, frame) {
            Some(reply) => {
                let reply: Value = serde_json::from_str(&reply).expect("a reply is JSON");
                let kind = reply["type"].as_str().unwrap_or_default();
                assert!(ServerMessage::TYPES.contains(&kind), "{frame:?} got an unknown reply {reply}");
                assert!(!invalid || kind == "connection:error", "{frame:?} got {reply}");
            }
            None => assert!(!invalid, "{frame:?} was rejected without an answer"),
        }
        assert!(w.outside() == outside, "{frame:?} changed a file outside the project");
        assert!(save || w.learner() == before, "{frame:?} changed a learner file");
    }
    w.core.disconnect(conn);
    if saved {
        w.restore(&initial);
    }
});
