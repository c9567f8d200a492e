//! The change detector on large projects (issue 32): the promise holds at every size while
//! the cost follows what changed. A project in git is known by its blob ids (nothing copied);
//! a call's changes are found from the watcher's journal; a journal that cannot be trusted
//! (too many changes, the kernel's queue overflowing) falls back to a full walk. Sizes:
//! `PAIGE_LARGE_FILES` (CI: 100,000), else 4,000.

use std::path::Path;
use std::time::Duration;

use paige_core::db::VersionKind;
use paige_core::governance::HookDecision;

use super::governance::Gov;

fn files() -> usize {
    std::env::var("PAIGE_LARGE_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(4_000)
}

/// `src/a{i}/b{j}/f{k}.rs`, 32 files a folder; `.gitignore`d `node_modules` and `target`.
fn file_path(k: usize) -> String {
    format!("src/a{}/b{}/f{k}.rs", k / 1024, (k / 32) % 32)
}

fn content(k: usize) -> String {
    format!("pub fn f{k}() -> u32 {{ {k} }}\n").repeat(8)
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t", "-c", "core.fsmonitor=false"])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// A project of `n` files, committed.
fn project(n: usize, committed: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("project");
    for k in 0..n {
        let path = dir.path().join(file_path(k));
        if k % 32 == 0 {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        }
        std::fs::write(path, content(k)).expect("write");
    }
    std::fs::create_dir_all(dir.path().join("node_modules/dep")).expect("mkdir");
    std::fs::write(dir.path().join("node_modules/dep/index.js"), "x\n").expect("write");
    std::fs::write(dir.path().join(".gitignore"), "node_modules/\ntarget/\n").expect("write");
    if committed {
        git(dir.path(), &["init", "-q"]);
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-qm", "init"]);
    }
    dir
}

fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        match entry.file_type() {
            Ok(t) if t.is_dir() => total += bytes_under(&entry.path()),
            Ok(_) => total += entry.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => {}
        }
    }
    total
}

fn undone(gov: &Gov, id: &str) -> String {
    match gov.bash_post(id, "cargo build") {
        HookDecision::Block { reason } => reason,
        other => panic!("expected the model to be told what was undone, got {other:?}"),
    }
}

#[test]
fn a_large_git_project_costs_what_changed_and_every_change_a_call_makes_is_undone() {
    let n = files();
    let t0 = std::time::Instant::now();
    let gov = Gov::coach_over(project(n, true));
    eprintln!("project of {n} files made and committed in {:?}", t0.elapsed());
    let root = gov.root();
    gov.core.start_watcher().expect("watcher");
    eprintln!("watching and primed at {:?}", t0.elapsed());
    // Primed: every file clean in git, so nothing is copied into Paige's data folder.
    let kept = gov.core.db().file_versions(&root, None).expect("versions");
    assert!(kept.len() <= 1, "clean tracked files are known by their blob id, not copied: {}", kept.len());
    let versions = gov.data_dir().join("versions");
    let data_before = bytes_under(&versions);
    assert!(data_before < 4096, "the version store holds {data_before} B before any change");

    // One file deep in the tree.
    let deep = file_path(n - 7);
    assert_eq!(gov.bash_pre("t1", "cargo build"), HookDecision::None);
    gov.put(&deep, "// rewritten by the command\n");
    let reason = undone(&gov, "t1");
    assert!(reason.contains(&format!("{deep} (changed): undone")), "{reason}");
    assert_eq!(gov.read(&deep), Some(content(n - 7)), "put back from git's object store");
    let grew = bytes_under(&versions) - data_before;
    assert!(grew < 4096, "the store grew by what changed (the call's version), not by the project: {grew} B");

    // A folder renamed: its files are put back where they were, the moved copies go to the store.
    let folder = "src/a0/b1";
    assert_eq!(gov.bash_pre("t2", "cargo build"), HookDecision::None);
    std::fs::rename(root.join(folder), root.join("src/a0/b1-moved")).expect("rename");
    let reason = undone(&gov, "t2");
    assert!(reason.contains(&format!("{} (deleted): undone", file_path(32))), "{reason}");
    assert!(reason.contains("src/a0/b1-moved/f32.rs (created): undone"), "{reason}");
    for k in 32..64 {
        assert_eq!(gov.read(&file_path(k)), Some(content(k)), "{}", file_path(k));
    }
    assert!(!root.join("src/a0/b1-moved").join("f32.rs").exists());

    // More changes than the journal keeps (a generator, a checkout): the full walk still finds
    // the one edit among them, and the generated files go to the store.
    let deeper = file_path(n / 2 + 3);
    assert_eq!(gov.bash_pre("t3", "cargo build"), HookDecision::None);
    std::fs::create_dir_all(root.join("gen")).expect("mkdir");
    for i in 0..10_500 {
        std::fs::write(root.join(format!("gen/g{i}.txt")), "").expect("generate");
    }
    gov.put(&deeper, "// hidden among ten thousand\n");
    eprintln!("10,500 files generated by the call {:?}", t0.elapsed());
    let reason = undone(&gov, "t3");
    eprintln!("undone {:?}", t0.elapsed());
    assert!(reason.contains(&format!("{deeper} (changed): undone")), "{}", &reason[..reason.len().min(2000)]);
    assert_eq!(gov.read(&deeper), Some(content(n / 2 + 3)));
    assert_eq!(std::fs::read_dir(root.join("gen")).map(|d| d.count()).unwrap_or(0), 0, "generated files moved out");

    // After all that, a quiet call is quiet, and the learner's edit between calls stays.
    gov.put(&file_path(5), "// the learner's\n");
    assert_eq!(gov.bash_pre("t4", "cargo test"), HookDecision::None);
    assert_eq!(gov.bash_post("t4", "cargo test"), HookDecision::None, "nothing changed in the call");
    assert_eq!(gov.read(&file_path(5)).as_deref(), Some("// the learner's\n"));
}

#[test]
fn a_learners_edit_just_before_a_call_is_never_taken_for_the_calls() {
    // The watcher's events trail the writes; without the barrier at PreToolUse an edit made a
    // moment before would land in the call's window and be undone.
    let gov = Gov::coach_over(project(200, true));
    gov.core.start_watcher().expect("watcher");
    for i in 0..25 {
        let path = file_path(i * 7);
        let mine = format!("// learner edit {i}\n");
        gov.put(&path, &mine);
        let id = format!("t{i}");
        assert_eq!(gov.bash_pre(&id, "cargo test"), HookDecision::None);
        assert_eq!(gov.bash_post(&id, "cargo test"), HookDecision::None, "edit {i} taken for the call's");
        assert_eq!(gov.read(&path).as_deref(), Some(mine.as_str()));
    }
    // The learner's versions are in the store (dirty files are copied, clean ones are not).
    let kept = gov.core.db().file_versions(&gov.root(), None).expect("versions");
    assert!(kept.iter().all(|v| v.kind == VersionKind::Seen) && kept.len() >= 25, "{}", kept.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_before_the_prime_is_done_is_answered_at_once_and_its_changes_are_said_not_lost() {
    // Not in git: the prime copies every file, which takes a while.
    let gov = Gov::coach_over(project(6_000, false));
    gov.core.start_watcher_in_background();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while !gov.core.watcher_running() {
        assert!(std::time::Instant::now() < deadline, "the watcher did not start");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let gov = tokio::task::spawn_blocking(move || {
        assert!(!gov.core.detector_primed(), "the prime should still run: make the project larger");
        let started = std::time::Instant::now();
        assert_eq!(gov.bash_pre("t1", "cargo build"), HookDecision::None);
        let answered = started.elapsed();
        gov.put(&file_path(3), "// the command's\n");
        let reason = match gov.bash_post("t1", "cargo build") {
            HookDecision::Block { reason } => reason,
            other => panic!("the change must be said, got {other:?}"),
        };
        assert!(reason.contains(paige_core::detector::STILL_READING), "{reason}");
        eprintln!("PreToolUse before the prime: {answered:?}");
        gov
    })
    .await
    .expect("hooks");
    while !gov.core.detector_primed() {
        assert!(std::time::Instant::now() < deadline, "the prime did not finish");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let gov = tokio::task::spawn_blocking(move || {
        // Once primed, the same kind of change is undone.
        assert_eq!(gov.bash_pre("t2", "cargo build"), HookDecision::None);
        gov.put(&file_path(9), "// the command's again\n");
        let reason = undone(&gov, "t2");
        assert!(reason.contains(&format!("{} (changed): undone", file_path(9))), "{reason}");
        assert_eq!(gov.read(&file_path(9)), Some(content(9)));
        gov
    })
    .await
    .expect("hooks");
    gov.core.shutdown().await.expect("shutdown");
}
