//! Any command line through the Bash classifier (brush-parser, then the walk over its syntax
//! tree) that decides what a `Bash` tool call does to files.
//! Invariants: no panic, even one the classifier would catch (libFuzzer aborts on any
//! panic); the verdict does not depend on the call (the same line, the same verdict).

#![no_main]

use libfuzzer_sys::fuzz_target;
use paige_core::governance::bash::classify;

fuzz_target!(|data: &[u8]| {
    // Claude Code's tool input is JSON: the command is a string.
    let Ok(command) = std::str::from_utf8(data) else { return };
    let verdict = classify(command);
    assert_eq!(classify(command), verdict, "{command:?} classified two ways");
});
