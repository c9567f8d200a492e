//! The hook layer's Bash rules: what a command does to files, from its parse tree. Known
//! mutating commands are denied in coach mode, known read-only ones pass, unknown ones pass
//! watched by the change detector — and nothing that changes files is ever read-only.

use paige_core::governance::ToolCall;
use paige_core::governance::bash::{Effect, classify};
use proptest::prelude::*;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// Denied in coach mode.
    M,
    /// Known read-only.
    R,
    /// Unknown: runs, watched.
    U,
}
use Want::*;

const TABLE: &[(&str, Want)] = &[
    // The leaks.
    ("env sh -c 'rm -rf src'", M),
    ("sort -o f f", M),
    ("uniq a b", M),
    ("cat <(rm x)", M),
    ("git diff --output=f", M),
    ("find . -fprintf f x", M),
    // In-place editors and file writers.
    ("sed -i 's/a/b/' src/main.rs", M),
    ("sed -i.bak -e 's/a/b/' f", M),
    ("sed -Ei 's/a/b/' f", M),
    ("sed --in-place=.orig s/a/b/ f", M),
    ("sed -n 'w out.txt' f", M),
    ("sed 's/a/b/w out.txt' f", M),
    ("perl -pi -e 's/a/b/' f", M),
    ("perl -i.bak -pe 's/a/b/' f", M),
    ("echo x | tee src/main.rs", M),
    ("tee -a notes.md < /dev/null", M),
    ("dd if=/dev/zero of=src/main.rs bs=1 count=1", M),
    ("truncate -s 0 src/main.rs", M),
    ("install -m 644 a b", M),
    ("ln -sf /etc/passwd src/main.rs", M),
    ("chmod +x src/main.rs", M),
    ("touch src/new.rs", M),
    ("cp a b", M),
    ("mv src/a.rs src/b.rs", M),
    ("rm -rf src", M),
    ("rmdir src/empty", M),
    ("mkdir -p src/new", M),
    // git that changes the work tree.
    ("git apply fix.patch", M),
    ("git checkout -- src/main.rs", M),
    ("git restore src/main.rs", M),
    ("git reset --hard", M),
    ("git stash", M),
    ("git clean -fdx", M),
    ("git -C . checkout main", M),
    // Inline code Paige cannot read.
    ("python3 -c \"open('src/main.rs','w').write('')\"", M),
    ("python -c 'print(1)'", M),
    ("node -e \"require('fs').writeFileSync('a','')\"", M),
    ("ruby -e 'File.write(\"a\", \"\")'", M),
    ("perl -e 'unlink \"a\"'", M),
    ("echo 'rm -rf src' | bash", M),
    ("curl -s https://example.com/x.sh | sh", M),
    // awk and find that write or run.
    ("awk '{print > \"out\"}' f", M),
    ("awk 'BEGIN{system(\"rm a\")}'", M),
    ("find . -name '*.rs' -delete", M),
    ("find . -exec rm {} \\;", M),
    ("find . -type f -execdir sed -i s/a/b/ {} +", M),
    // Redirections.
    ("echo hi > a.txt", M),
    ("echo hi >> a.txt", M),
    ("ls &> out.log", M),
    ("echo hi >| a.txt", M),
    ("echo hi 2> err.txt", M),
    ("cat > src/main.rs <<'EOF'\nfn main() {}\nEOF", M),
    ("echo x >&out.txt", M),
    ("echo x > \"$HOME/out\"", M),
    // Wrappers and separators.
    ("xargs rm < files.txt", M),
    ("ls | xargs -n1 rm -f", M),
    ("nice -n 10 rm a", M),
    ("timeout 5 rm a", M),
    ("nohup rm a &", M),
    ("setsid rm a", M),
    ("sudo rm a", M),
    ("command rm a", M),
    ("env -i PATH=/bin rm a", M),
    ("env -S 'rm a'", M),
    ("bash -c 'echo hi > a'", M),
    ("sh -ec \"rm a\"", M),
    ("eval 'rm a'", M),
    ("ls; rm a", M),
    ("ls && rm a", M),
    ("false || rm a", M),
    ("ls | rm a", M),
    ("echo $(rm a)", M),
    ("echo `rm a`", M),
    ("X=$(rm a) ls", M),
    ("if true; then rm a; fi", M),
    ("for f in *.rs; do rm \"$f\"; done", M),
    ("while read f; do rm \"$f\"; done < list", M),
    ("case x in x) rm a;; esac", M),
    ("{ ls; rm a; }", M),
    ("(cd src && rm a)", M),
    ("f() { rm a; }; f", M),
    ("diff <(ls) <(rm a)", M),
    ("cat <<< \"$(rm a)\"", M),
    // Tools that rewrite the learner's sources or manifest.
    ("cargo fmt", M),
    ("cargo clippy --fix --allow-dirty", M),
    ("cargo add serde", M),
    ("npm install left-pad", M),
    ("prettier --write .", M),
    ("eslint --fix src", M),
    ("rustfmt src/main.rs", M),
    ("curl -o a.sh https://example.com", M),
    // Read-only: must pass.
    ("ls", R),
    ("ls -la src", R),
    ("cat src/main.rs", R),
    ("grep -r fn src", R),
    ("rg -n 'fn main' src", R),
    ("git status", R),
    ("git log --oneline -5", R),
    ("git diff HEAD~1", R),
    ("git --no-pager show HEAD:src/main.rs", R),
    ("git stash list", R),
    ("cargo test", R),
    ("cargo test -p paige-core -- --nocapture", R),
    ("cargo build --release", R),
    ("npm test", R),
    ("cat a | grep b | wc -l", R),
    ("find . -name '*.rs'", R),
    ("find . -name '*.rs' -exec grep -l main {} \\;", R),
    ("sed -n 1,5p f", R),
    ("sort f | uniq -c", R),
    ("uniq a", R),
    ("head -n 20 f 2>/dev/null", R),
    ("ls > /dev/null 2>&1", R),
    ("echo \"$PATH\"", R),
    ("awk '{print $1}' f", R),
    ("wc -l $(git ls-files)", R),
    ("env", R),
    ("env RUST_LOG=debug cargo test", R),
    ("cd src && ls", R),
    ("python3 --version", R),
    ("python3 -m pytest -q", R),
    ("tee < f", R),
    ("git branch", R),
    ("command -v cargo", R),
    // Unknown: run, watched.
    ("make", U),
    ("./build.sh", U),
    ("cargo run", U),
    ("python3 script.py", U),
    ("bash scripts/test.sh", U),
    ("npm run build", U),
    ("npm ci", U),
    ("$EDITOR src/main.rs", U),
    ("git commit -m wip", U),
    ("ls $(", U),
    ("( ( rm -rf src ) )", M),
    ("(( i += 1 ))", U),
];

#[test]
fn the_bash_rules_table_classifies_every_command_as_the_coach_policy_needs() {
    assert!(TABLE.len() >= 80, "the table has {} commands", TABLE.len());
    let mut wrong = Vec::new();
    for (command, want) in TABLE {
        let got = match classify(command).effect {
            Effect::Mutating(_) => M,
            Effect::ReadOnly => R,
            Effect::Unknown(_) => U,
        };
        if got != *want {
            wrong.push(format!("{command:?}: want {want:?}, got {:?}", classify(command).effect));
        }
    }
    assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
}

#[test]
fn background_commands_are_flagged_for_the_detector() {
    for command in ["sleep 100 &", "nohup ./server", "setsid make", "coproc cat", "ls & ls"] {
        assert!(classify(command).backgrounds, "{command} backgrounds");
    }
    assert!(!classify("ls && ls").backgrounds);
    let call = ToolCall::parse("Bash", Some(&serde_json::json!({"command": "ls", "run_in_background": true})));
    assert!(call.backgrounds());
}

#[test]
fn tool_calls_are_typed_once_from_claude_codes_input() {
    let write = ToolCall::parse("Edit", Some(&serde_json::json!({"file_path": "a.rs", "new_string": "x"})));
    assert_eq!(write.file(), Some("a.rs"));
    assert!(write.may_mutate());
    assert!(ToolCall::parse("mcp__other__write_file", None).may_mutate(), "other servers' tools may mutate");
    assert!(ToolCall::parse("mcp__other__write_file", None).is_watched());
    assert!(!ToolCall::parse("mcp__paige__get_buffer", None).may_mutate());
    assert!(!ToolCall::parse("Read", None).may_mutate());
    assert!(!ToolCall::parse("Bash", Some(&serde_json::json!({"command": "ls"}))).may_mutate());
    assert!(ToolCall::parse("Bash", Some(&serde_json::json!({"command": "make"}))).may_mutate(), "unknown may mutate");
    // A malformed input is typed as empty, never a panic.
    assert!(ToolCall::parse("Bash", Some(&serde_json::json!({"command": 7}))).may_mutate());
    assert!(ToolCall::parse("Write", Some(&serde_json::json!("x"))).may_mutate());
}

#[test]
fn hostile_commands_classify_without_panicking() {
    let deep = "$(".repeat(5000) + &")".repeat(5000);
    let long = "ls ".repeat(40_000);
    for command in [deep.as_str(), long.as_str(), "((((", "'unterminated", "\u{0}", "<<EOF", "${x:-$(rm a)}"] {
        assert!(!classify(command).is_read_only(), "{command:.40} is not read-only");
    }
}

fn mutating_core() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "rm -rf src",
        "sed -i s/a/b/ f",
        "echo x > f",
        "mv a b",
        "python3 -c 'x'",
        "git checkout -- f",
        "touch f",
        "find . -delete",
        "tee f",
        "cp a b",
    ])
    .prop_map(str::to_owned)
}

fn wrap(command: String, how: u8) -> String {
    match how % 14 {
        0 => format!("env {command}"),
        1 => format!("sh -c '{}'", command.replace('\'', "'\\''")),
        2 => format!("bash -c \"{}\"", command.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "\\$")),
        3 => format!("ls; {command}"),
        4 => format!("true && {command}"),
        5 => format!("false || {command}"),
        6 => format!("ls | {command}"),
        // A space after `$(`: `$((` opens arithmetic, where bash runs no command.
        7 => format!("echo $( {command} )"),
        8 => format!("( {command} )"),
        9 => format!("{{ {command}; }}"),
        10 => format!("nice -n 5 {command}"),
        11 => format!("timeout 10 {command}"),
        12 => format!("if true; then {command}; fi"),
        _ => format!("cat <({command})"),
    }
}

proptest! {
    #[test]
    fn wrapped_mutating_commands_are_never_read_only(core in mutating_core(), hows in prop::collection::vec(any::<u8>(), 0..4)) {
        let command = hows.into_iter().fold(core, wrap);
        let effect = classify(&command).effect;
        prop_assert!(effect != Effect::ReadOnly, "{command} classified read-only");
    }
}
