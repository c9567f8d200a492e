//! What classifying a Bash command adds to a PreToolUse (`ToolCall::parse` of a Bash call:
//! the brush-parser parse and the program rules), median and p99 per call over a mix of the
//! commands Claude Code runs, a long compound one, and the hardened cases (expansions, exec
//! options, variables). Target (issue 27): ≤ 5 ms p50 for the whole hook; this is its share.
//! `cargo bench -p paige-core --bench bash_classify`

use std::time::Instant;

use paige_core::governance::ToolCall;

const COMMANDS: &[&str] = &[
    "ls -la src",
    "cat src/main.rs",
    "rg -n 'fn main' src",
    "git status",
    "git log --oneline -5",
    "git diff HEAD~1 -- src/lib.rs",
    "cargo test -p paige-core -- --nocapture",
    "find . -name '*.rs' -exec grep -l main {} \\;",
    "cat a | grep b | sort | uniq -c | sort -rn | head -20",
    "cd src && ls && wc -l $(git ls-files)",
    "sed -n '1,40p' src/main.rs",
    "awk '{print $1}' Cargo.toml",
    "GIT_PAGER=cat git log -p -3",
    "sort --outp=x f",
    "env --split-s='rm a'",
    "rg --pre ./x foo",
    "make",
    "for f in src/*.rs; do echo \"$f\"; wc -l \"$f\"; done",
    "if [ -f Cargo.toml ]; then cargo metadata --format-version 1 | jq '.packages[].name'; fi",
];

fn main() {
    let runs = 2000;
    for (label, commands) in
        [("mix of 19 commands", COMMANDS.to_vec()), ("a 40-part pipeline", vec![long().leak() as &str])]
    {
        let mut samples = Vec::with_capacity(runs * commands.len());
        for _ in 0..runs {
            for command in &commands {
                let input = serde_json::json!({"command": command});
                let started = Instant::now();
                std::hint::black_box(ToolCall::parse("Bash", Some(&input)));
                samples.push(started.elapsed());
            }
        }
        samples.sort();
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
        println!("classify, {label}: p50 {:?}, p99 {:?}, max {:?}", at(0.5), at(0.99), at(1.0));
    }
}

fn long() -> String {
    (0..40).map(|i| format!("grep -n pattern{i} src/file{i}.rs")).collect::<Vec<_>>().join(" | ")
}
