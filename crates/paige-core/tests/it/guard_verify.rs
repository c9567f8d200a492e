//! The app checks Paige's guard the first time it sees a Claude Code version
//! (`launch::verify`): it runs `paige doctor --guard --guard-report FILE` in the background,
//! shows "Guard verified for Claude Code X" or what got through, keeps the report per
//! version, and shows the kept one on later starts without running again. `claude` and
//! `paige` are stand-in scripts here (the real doctor writing a real report is
//! `tests/e2e/guard.rs`); what is tested is what the core does with them.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use paige_core::launch::verify::{GuardReport, kept_report, report_path};

/// A bin dir with a `claude` answering `version` and a `paige` whose `doctor` runs `body`
/// (with `$out`: the report file) after counting its runs in `runs`.
fn bin(dir: &Path, version: &str, body: &str) -> HashMap<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let script = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    };
    script("claude", format!("#!/bin/sh\necho '{version} (Claude Code)'\n"));
    let runs = dir.join("runs");
    script(
        "paige",
        format!(
            "#!/bin/sh\necho run >> '{}'\nprev=\nfor a; do [ \"$prev\" = --guard-report ] && out=$a; prev=$a; done\n{body}\n",
            runs.display()
        ),
    );
    let path = format!("{}:/usr/bin:/bin", dir.display());
    HashMap::from([("PATH".to_owned(), path), ("HOME".to_owned(), dir.display().to_string())])
}

fn report(version: &str, passed: bool, failed: &[&str]) -> String {
    let report = GuardReport {
        claude_version: version.into(),
        passed,
        held: 40,
        escaped: failed.len(),
        skipped: 1,
        errors: 0,
        failed_attempts: failed.iter().map(|s| s.to_string()).collect(),
        seconds: 1.5,
        layers: "uid 0; jail=on".into(),
    };
    format!("cat > \"$out\" <<'EOF'\n{}\nEOF", serde_json::to_string(&report).expect("json"))
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs")).map_or(0, |s| s.lines().count())
}

/// Waits for a notice containing `needle` among the core's events.
async fn notice(events: &mut tokio::sync::broadcast::Receiver<paige_core::Event>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = String::new();
    while Instant::now() < deadline {
        if let Ok(Ok(event)) = tokio::time::timeout(Duration::from_millis(200), events.recv()).await {
            let text = format!("{event:?}");
            if text.contains(needle) {
                return text;
            }
            seen.push_str(&text);
            seen.push('\n');
        }
    }
    panic!("no notice with {needle:?}; seen:\n{seen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_sight_of_a_version_runs_the_check_and_later_starts_show_the_kept_result() {
    let t = super::test_core(&[]);
    let scripts = tempfile::tempdir().expect("bin");
    let env = bin(scripts.path(), "9.9.9", &report("9.9.9", true, &[]));
    let mut events = t.core.subscribe();
    t.core.verify_guard(scripts.path().join("paige"), env.clone());
    notice(&mut events, "Checking Paige's guard against Claude Code 9.9.9").await;
    let shown = notice(&mut events, "Guard verified for Claude Code 9.9.9: 40 attempts").await;
    assert!(shown.contains("Info"), "{shown}");
    let data_dir = &t.core.config().data_dir;
    let layers = layers_of(&t.core, &env);
    assert!(kept_report(data_dir, "9.9.9", &layers).is_some_and(|r| r.passed), "the report is kept for the version");
    assert!(kept_report(data_dir, "9.9.9", "uid 1000; jail=off").is_none(), "and for the user and layers it ran under");
    assert_eq!(runs(scripts.path()), 1);

    t.core.verify_guard(scripts.path().join("paige"), env.clone());
    notice(&mut events, "Guard verified for Claude Code 9.9.9").await;
    assert_eq!(runs(scripts.path()), 1, "a version already checked is not checked again");

    // The same version under other layers (here: Claude Code's sandbox, whose probe needs
    // `socat` and `bwrap` on PATH, has nothing on this one) is checked again.
    let tools = tempfile::tempdir().expect("tools");
    for tool in ["sh", "cat"] {
        std::os::unix::fs::symlink(Path::new("/bin").join(tool), tools.path().join(tool)).expect("link");
    }
    let mut other = env.clone();
    other.insert("PATH".into(), format!("{}:{}", scripts.path().display(), tools.path().display()));
    assert_ne!(layers_of(&t.core, &other), layers, "bubblewrap and socat are in /usr/bin here (scripts/test.sh)");
    t.core.verify_guard(scripts.path().join("paige"), other);
    notice(&mut events, "Checking Paige's guard against Claude Code 9.9.9").await;
    notice(&mut events, "Guard verified for Claude Code 9.9.9").await;
    assert_eq!(runs(scripts.path()), 2, "a change of layers is checked again");
}

/// The layers a check for `env` is kept under.
fn layers_of(core: &paige_core::Core, env: &HashMap<String, String>) -> String {
    core.coach_plan(env.get("PATH").map(std::ffi::OsStr::new)).1.fingerprint()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_check_is_an_error_naming_the_attempts_and_a_new_version_is_checked_again() {
    let t = super::test_core(&[]);
    let scripts = tempfile::tempdir().expect("bin");
    let env = bin(scripts.path(), "9.9.9", &report("9.9.9", false, &["git-hooks", "monitor"]));
    let mut events = t.core.subscribe();
    t.core.verify_guard(scripts.path().join("paige"), env);
    let shown = notice(&mut events, "Guard check failed for Claude Code 9.9.9").await;
    assert!(shown.contains("Error") && shown.contains("git-hooks, monitor"), "{shown}");
    assert!(shown.contains("2 of 42 attempts"), "{shown}");

    let env = bin(scripts.path(), "10.0.0", &report("10.0.0", true, &[]));
    t.core.verify_guard(scripts.path().join("paige"), env);
    notice(&mut events, "Guard verified for Claude Code 10.0.0").await;
    assert_eq!(runs(scripts.path()), 2, "the new version was checked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_writes_no_report_is_a_warning_and_is_tried_again_next_time() {
    let t = super::test_core(&[]);
    let scripts = tempfile::tempdir().expect("bin");
    let env = bin(scripts.path(), "9.9.9", "echo 'claude crashed' >&2; exit 3");
    let mut events = t.core.subscribe();
    t.core.verify_guard(scripts.path().join("paige"), env.clone());
    let shown = notice(&mut events, "could not check its guard against Claude Code 9.9.9").await;
    assert!(shown.contains("Warning") && shown.contains("claude crashed"), "{shown}");
    let layers = layers_of(&t.core, &env);
    assert!(!report_path(&t.core.config().data_dir, "9.9.9", &layers).exists(), "nothing kept");
    // A report for another version is not taken for this one either.
    let env = bin(scripts.path(), "9.9.9", &report("8.0.0", true, &[]));
    t.core.verify_guard(scripts.path().join("paige"), env);
    let shown = notice(&mut events, "could not check its guard").await;
    assert!(shown.contains("instead"), "{shown}");
    assert_eq!(runs(scripts.path()), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_a_running_check_with_everything_it_started() {
    let t = super::test_core(&[]);
    let scripts = tempfile::tempdir().expect("bin");
    let pid_file = scripts.path().join("sleeper");
    let body = format!("sleep 600 & echo $! > '{}'; wait", pid_file.display());
    let env = bin(scripts.path(), "9.9.9", &body);
    let mut events = t.core.subscribe();
    t.core.verify_guard(scripts.path().join("paige"), env);
    notice(&mut events, "Checking Paige's guard").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pid_file.exists() || std::fs::read_to_string(&pid_file).unwrap_or_default().trim().is_empty() {
        assert!(Instant::now() < deadline, "the check never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid: i32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("a pid");
    tokio::time::timeout(Duration::from_secs(10), t.core.shutdown()).await.expect("shutdown ends").expect("clean");
    let deadline = Instant::now() + Duration::from_secs(5);
    // SAFETY: kill with signal 0 only asks whether the process exists.
    while unsafe { libc::kill(pid, 0) } == 0 {
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "));
        if zombie {
            break;
        }
        assert!(Instant::now() < deadline, "the check's `sleep` outlived shutdown");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
