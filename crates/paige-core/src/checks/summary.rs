//! What a finished check says, in one line: passed, failed (which test, and the first thing
//! it said — or that the code does not compile), or could not tell (no test matched the
//! filter). Read from the runners' plain output: cargo/libtest, Node's test runner (TAP and
//! spec), Jest/Vitest, pytest, `go test`.

use super::CheckStatus;
use super::runner::RunnerKind;

/// The longest summary kept (the panel shows it beside the phase).
const MAX_SUMMARY: usize = 300;

/// What the output tells about the tests that ran.
#[derive(Debug, Default, PartialEq, Eq)]
struct Reading {
    passed: u64,
    failed: u64,
    /// Whether a count line was found (else the counts mean nothing).
    counted: bool,
    /// The runner said plainly that no test matched.
    none_matched: bool,
    failing: Vec<String>,
    /// The first line that explains a failure (an assertion, a panic message).
    detail: Option<String>,
    /// The first compiler error, with where it is.
    compile_error: Option<String>,
}

/// The status and summary of a check that ran to its end with `code`.
pub fn conclude(kind: RunnerKind, code: i32, output: &str, filter: &str) -> (CheckStatus, String) {
    let reading = read(output);
    let no_match = || (CheckStatus::Error, format!("no test matches \u{201c}{filter}\u{201d} yet"));
    if reading.none_matched || (reading.counted && reading.passed + reading.failed == 0) {
        return no_match();
    }
    if code == 0 {
        let text = match (reading.counted, reading.passed) {
            (true, 1) => "1 test passed".to_owned(),
            (true, n) => format!("{n} tests passed"),
            (false, _) => "the test passed".to_owned(),
        };
        return (CheckStatus::Passed, text);
    }
    if kind == RunnerKind::Pytest && code == 5 {
        return no_match();
    }
    if let Some(error) = reading.compile_error {
        return (CheckStatus::Failed, cut(format!("does not compile: {error}")));
    }
    if !reading.failing.is_empty() {
        let names = match reading.failing.len() {
            1..=3 => reading.failing.join(", "),
            n => format!("{} and {} more", reading.failing[..3].join(", "), n - 3),
        };
        let detail = reading.detail.map(|d| format!(": {d}")).unwrap_or_default();
        return (CheckStatus::Failed, cut(format!("failing: {names}{detail}")));
    }
    if kind == RunnerKind::Pytest && (2..=4).contains(&code) {
        let line = last_line(output).unwrap_or("pytest could not run the tests");
        return (CheckStatus::Error, cut(format!("pytest stopped (exit {code}): {line}")));
    }
    let why = reading.detail.or_else(|| last_line(output).map(str::to_owned)).unwrap_or_default();
    (
        CheckStatus::Failed,
        cut(format!(
            "the tests failed (exit {code}){}",
            if why.is_empty() { String::new() } else { format!(": {why}") }
        )),
    )
}

fn read(output: &str) -> Reading {
    let mut r = Reading::default();
    let lines: Vec<&str> = output.lines().collect();
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        // libtest: "test result: FAILED. 1 passed; 2 failed; 0 ignored; …"
        if let Some(rest) = line.strip_prefix("test result: ") {
            r.counted = true;
            r.passed += count_before(rest, " passed");
            r.failed += count_before(rest, " failed");
        } else if let Some(name) = line.strip_prefix("test ").and_then(|l| l.strip_suffix(" ... FAILED")) {
            push_name(&mut r.failing, name);
        } else if line.contains("panicked at") && r.detail.is_none() {
            // The message is on the next line (Rust ≥ 1.73), with `left:`/`right:` after it.
            let next: Vec<&str> =
                lines[i + 1..].iter().take(3).map(|l| l.trim()).take_while(|l| !l.is_empty()).collect();
            r.detail = (!next.is_empty()).then(|| next.join(" "));
        } else if line == "error: |-" || line == "error: >-" {
            // TAP's YAML block: the assertion's message, then its values.
            let text: Vec<&str> = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .take_while(|l| !l.contains(": ") || l.contains("!=="))
                .filter(|l| !l.is_empty())
                .take(3)
                .collect();
            if r.detail.is_none() && !text.is_empty() {
                r.detail = Some(text.join(" "));
            }
        } else if (line.starts_with("error[E") || line.starts_with("error: "))
            && r.compile_error.is_none()
            && !line.starts_with("error: could not compile")
            && !line.starts_with("error: test failed")
        {
            let message = line.split_once(": ").map_or(line, |(_, m)| m);
            let at = lines[i + 1..].iter().take(3).find_map(|l| l.trim().strip_prefix("--> "));
            r.compile_error = Some(match at {
                Some(at) => format!("{message} ({at})"),
                None => message.to_owned(),
            });
        }
        // Node's test runner, TAP ("# pass 1") or spec ("ℹ pass 1").
        else if let Some(n) = line.strip_prefix("# pass ").or_else(|| line.strip_prefix("ℹ pass ")) {
            r.counted = true;
            r.passed += n.trim().parse::<u64>().unwrap_or(0);
        } else if let Some(n) = line.strip_prefix("# fail ").or_else(|| line.strip_prefix("ℹ fail ")) {
            r.counted = true;
            r.failed += n.trim().parse::<u64>().unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("not ok ") {
            let name = rest.split_once(" - ").map_or(rest, |(_, n)| n);
            let name = name.split(" # ").next().unwrap_or(name);
            if !is_test_file(name) {
                push_name(&mut r.failing, name);
            }
        } else if let Some(name) =
            line.strip_prefix("✖ ").or_else(|| line.strip_prefix("✕ ")).or_else(|| line.strip_prefix("× "))
        {
            // Node's spec reporter, Jest, Vitest: "✖ sum adds (1.2ms)".
            let name = name.rsplit_once(" (").map_or(name, |(n, t)| if t.ends_with(')') { n } else { name });
            if !is_test_file(name) && !name.starts_with("failing tests") {
                push_name(&mut r.failing, name);
            }
        } else if let Some(rest) = line.strip_prefix("Tests:") {
            // Jest / Vitest: "Tests:       1 failed, 2 passed, 3 total".
            r.counted = true;
            r.passed += count_before(rest, " passed");
            r.failed += count_before(rest, " failed");
        } else if line.starts_with("No tests found")
            || line.starts_with("No test found")
            || line.contains("[no tests to run]")
            || line == "testing: warning: no tests to run"
        {
            r.none_matched = true;
        } else if let Some(rest) = line.strip_prefix("FAILED ") {
            // pytest: "FAILED tests/test_x.py::test_adds - assert 6 == 5".
            let (name, why) = rest.split_once(" - ").map_or((rest, None), |(n, w)| (n, Some(w)));
            push_name(&mut r.failing, name.rsplit("::").next().unwrap_or(name));
            if r.detail.is_none() {
                r.detail = why.map(str::to_owned);
            }
        } else if let Some(name) = line.strip_prefix("--- FAIL: ") {
            push_name(&mut r.failing, name.split_whitespace().next().unwrap_or(name));
        } else if r.detail.is_none()
            && (line.starts_with("AssertionError") || line.starts_with("Expected:") || line.starts_with("E "))
        {
            r.detail = Some(line.trim_start_matches("E ").trim().to_owned());
        }
    }
    r
}

/// `12` in "… 12 passed …" (0 when absent).
fn count_before(text: &str, word: &str) -> u64 {
    let Some(at) = text.find(word) else { return 0 };
    text[..at].rsplit(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn push_name(names: &mut Vec<String>, name: &str) {
    let name = name.trim();
    if !name.is_empty() && !names.iter().any(|n| n == name) {
        names.push(name.to_owned());
    }
}

/// Node reports each test file as a subtest too: that is not a test's name.
fn is_test_file(name: &str) -> bool {
    [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts"].iter().any(|ext| name.ends_with(ext)) && name.contains('/')
}

fn last_line(output: &str) -> Option<&str> {
    output.lines().map(str::trim).rfind(|l| !l.is_empty() && !l.starts_with("npm warn") && !l.starts_with("npm WARN"))
}

fn cut(mut text: String) -> String {
    if text.len() > MAX_SUMMARY {
        let mut at = MAX_SUMMARY - 1;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_failures_name_the_test_and_the_assertion() {
        let out = "running 2 tests\ntest tests::adds ... FAILED\ntest tests::other ... ok\n\nfailures:\n\n---- tests::adds stdout ----\n\nthread 'tests::adds' panicked at src/lib.rs:9:9:\nassertion `left == right` failed\n  left: -1\n right: 5\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        let (status, summary) = conclude(RunnerKind::Cargo, 101, out, "adds");
        assert_eq!(status, CheckStatus::Failed);
        assert_eq!(summary, "failing: tests::adds: assertion `left == right` failed left: -1 right: 5");
    }

    #[test]
    fn code_that_does_not_compile_says_where() {
        let out = "   Compiling sum v0.1.0\nerror[E0425]: cannot find value `b` in this scope\n --> src/lib.rs:2:9\n  |\nerror: could not compile `sum` (lib test) due to 1 previous error\n";
        let (status, summary) = conclude(RunnerKind::Cargo, 101, out, "adds");
        assert_eq!(
            (status, summary.as_str()),
            (CheckStatus::Failed, "does not compile: cannot find value `b` in this scope (src/lib.rs:2:9)")
        );
    }

    #[test]
    fn a_filter_no_test_matches_is_no_pass() {
        let cargo = "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out\n";
        assert_eq!(conclude(RunnerKind::Cargo, 0, cargo, "nope").0, CheckStatus::Error);
        let tap = "# tests 2\n# suites 0\n# pass 0\n# fail 0\n# skipped 2\n";
        assert_eq!(
            conclude(RunnerKind::Npm, 0, tap, "nope"),
            (CheckStatus::Error, "no test matches \u{201c}nope\u{201d} yet".into())
        );
        assert_eq!(conclude(RunnerKind::Pytest, 5, "collected 3 items / 3 deselected", "nope").0, CheckStatus::Error);
        assert_eq!(conclude(RunnerKind::Go, 0, "ok  \tx\t0.1s [no tests to run]", "nope").0, CheckStatus::Error);
    }

    #[test]
    fn node_tap_failures_and_passes() {
        let fail = "TAP version 13\n# Subtest: sum adds\nnot ok 1 - sum adds\n  ---\n  error: |-\n    Expected values to be strictly equal:\n    \n    -1 !== 5\n    \n  code: 'ERR_ASSERTION'\n# pass 0\n# fail 1\n";
        let (status, summary) = conclude(RunnerKind::Npm, 1, fail, "sum adds");
        assert_eq!(status, CheckStatus::Failed);
        assert_eq!(summary, "failing: sum adds: Expected values to be strictly equal: -1 !== 5");
        let pass = "ok 1 - sum adds\n# tests 2\n# pass 1\n# fail 0\n# skipped 1\n";
        assert_eq!(conclude(RunnerKind::Npm, 0, pass, "sum adds"), (CheckStatus::Passed, "1 test passed".into()));
    }

    #[test]
    fn pytest_and_go_failures() {
        let py = "FAILED tests/test_sum.py::test_adds - assert -1 == 5\n==== 1 failed, 2 deselected in 0.03s ====";
        assert_eq!(conclude(RunnerKind::Pytest, 1, py, "adds").1, "failing: test_adds: assert -1 == 5");
        let go = "--- FAIL: TestAdds (0.00s)\n    sum_test.go:8: got -1, want 5\nFAIL\n";
        assert_eq!(conclude(RunnerKind::Go, 1, go, "Adds").1, "failing: TestAdds");
    }

    #[test]
    fn an_unreadable_failure_still_says_how_it_ended() {
        let (status, summary) = conclude(RunnerKind::Npm, 2, "something odd\nSegmentation fault\n", "x");
        assert_eq!((status, summary.as_str()), (CheckStatus::Failed, "the tests failed (exit 2): Segmentation fault"));
        assert!(cut("é".repeat(400)).chars().count() <= MAX_SUMMARY);
    }
}
