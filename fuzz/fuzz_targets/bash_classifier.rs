//! Any command line through the Bash classifier (brush-parser, then the walk over its syntax
//! tree) that decides what a `Bash` tool call does to files.
//! Invariants: no panic but brush-parser's own, which `classify` catches (it found several:
//! the parser unwraps); no hang or unbounded memory (libFuzzer's -timeout, -rss_limit_mb);
//! the verdict does not depend on the call (the same line, the same verdict).

#![no_main]

use libfuzzer_sys::fuzz_target;
use paige_core::governance::bash::classify;
use paige_fuzz::tolerate_caught_parser_panics;

fuzz_target!(|data: &[u8]| {
    tolerate_caught_parser_panics();
    // Claude Code's tool input is JSON: the command is a string.
    let Ok(command) = std::str::from_utf8(data) else { return };
    let verdict = classify(command);
    assert_eq!(classify(command), verdict, "{command:?} classified two ways");
});
