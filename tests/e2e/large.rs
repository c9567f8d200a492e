//! Issue 32 through the real `claude`: on a large project in git, `paige serve` answers at
//! once, and a scripted turn whose project test script rewrites a file deep in the tree and
//! renames a folder has both undone — the files put back from git's object store, nothing of
//! the project copied into Paige's data folder. Size: `PAIGE_LARGE_E2E_FILES` (else 20,000).
//! Runs when PAIGE_TEST_CLAUDE names a `claude` executable.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::World;
use crate::claude::{Runner, claude, claude_runs};

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.email=e2e@paige", "-c", "user.name=e2e"])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

fn bytes_under(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => bytes_under(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

/// The script `npm test` runs: what a misbehaving test or formatter does to the tree.
const SCRIPT: &str = "printf '// rewritten by the test script\\n' > src/a9/b2/f9300.rs\nmv src/a2/b5 src/a2/b5-moved\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_claude_on_a_large_git_project_has_its_changes_undone_from_gits_objects() {
    let Some(claude) = claude() else { return };
    let files: usize = std::env::var("PAIGE_LARGE_E2E_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    let world = World::ready();
    let project = world.project();
    let content = |k: usize| format!("pub fn f{k}() -> u32 {{ {k} }}\n").repeat(8);
    for k in 0..files.max(10_000) {
        let path = project.join(format!("src/a{}/b{}/f{k}.rs", k / 1024, (k / 32) % 32));
        if k % 32 == 0 {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        }
        std::fs::write(path, content(k)).expect("write");
    }
    std::fs::write(project.join(".gitignore"), "node_modules/\ntarget/\n").expect("ignore");
    std::fs::write(project.join("test.sh"), SCRIPT).expect("script");
    // Coach mode runs the project's own test script (it runs the learner's code, watched).
    std::fs::write(project.join("package.json"), r#"{"name": "big", "scripts": {"test": "sh test.sh"}}"#)
        .expect("package.json");
    git(&project, &["init", "-q"]);
    git(&project, &["add", "-A"]);
    git(&project, &["commit", "-qm", "init"]);

    let started = Instant::now();
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(20));
    eprintln!("{files} files: ready in {:?}", started.elapsed());
    paige.wait_for("change detector primed", Duration::from_secs(120));
    let store = world.data_dir().join("versions");
    assert!(bytes_under(&store) < 64 << 10, "primed without copying the project: {} B", bytes_under(&store));

    let fake = paige_fake_anthropic::FakeAnthropic::start().await.expect("fake");
    let (world, events, sent) = claude_runs(world, claude, &["npm test"], Runner::default(), &fake, &["Bash"]).await;
    assert!(events.iter().any(|e| e["type"] == "result"), "the turn finished: {events:?}");
    let project = world.project();
    let read = |rel: &str| std::fs::read_to_string(project.join(rel)).ok();
    assert_eq!(read("src/a9/b2/f9300.rs"), Some(content(9300)), "the deep rewrite is undone");
    for k in (2 * 1024 + 5 * 32)..(2 * 1024 + 6 * 32) {
        assert_eq!(read(&format!("src/a2/b5/f{k}.rs")), Some(content(k)), "f{k} is back where it was");
    }
    assert!(!project.join("src/a2/b5-moved").join(format!("f{}.rs", 2 * 1024 + 5 * 32)).exists());
    // Claude Code was told, in the tool result its next request carries.
    let told = sent.iter().any(|body| body.contains("src/a9/b2/f9300.rs (changed): undone"));
    assert!(told, "the model is told what was undone");
    // The store holds what the call changed (its versions), not the project.
    let kept = bytes_under(&store);
    assert!(kept < (40 * content(0).len()) as u64 * 4, "the store grew by what changed: {kept} B");
    drop(paige);
}
