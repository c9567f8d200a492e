use std::time::{Duration, Instant};

use paige_core::files::{
    FsChange, FsChangeAction, ProjectRoot, TreeNode, WatchEvent, WatchOptions, Watcher, project_tree, read_file,
    unified_diff,
};

fn project(files: &[(&str, &[u8])]) -> (tempfile::TempDir, ProjectRoot) {
    let tmp = tempfile::tempdir().expect("temp dir");
    for (path, content) in files {
        let full = tmp.path().join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(full, content).expect("write");
    }
    let root = ProjectRoot::new(tmp.path()).expect("root");
    (tmp, root)
}

#[test]
fn reading_gives_content_language_and_line_count() {
    let (_tmp, root) = project(&[("src/app.tsx", b"const a = 1;\nconst b = 2;\n"), ("notes", b"plain words\n")]);
    let file = read_file(&root.resolve("src/app.tsx").expect("path")).expect("read");
    assert_eq!(
        (file.path.as_str(), file.language.as_str(), file.line_count, file.binary),
        ("src/app.tsx", "typescriptreact", 2, false)
    );
    assert_eq!(file.content, "const a = 1;\nconst b = 2;\n");
    let notes = read_file(&root.resolve("notes").expect("path")).expect("read");
    assert_eq!((notes.language.as_str(), notes.binary), ("plaintext", false));
}

#[test]
fn binary_files_are_flagged_by_extension_and_by_content() {
    let (_tmp, root) = project(&[
        ("logo.png", b"not really a png"),
        ("blob", b"\x7fELF\x00\x01\x02"),
        ("latin1.dat", b"caf\xe9 au lait"),
    ]);
    for path in ["logo.png", "blob", "latin1.dat"] {
        let file = read_file(&root.resolve(path).expect("path")).expect("read");
        assert!(file.binary, "{path} should be binary");
        assert_eq!(file.content, "", "{path}: binary content is not returned");
    }
}

#[test]
fn missing_file_is_a_not_found_error() {
    let (_tmp, root) = project(&[]);
    let err = read_file(&root.resolve("nope.rs").expect("path")).expect_err("missing");
    assert_eq!(err.to_string(), "file not found: nope.rs");
}

#[test]
fn diff_of_a_modified_buffer_is_the_expected_unified_diff() {
    let saved = "fn main() {\n    println!(\"hi\");\n}\n";
    let buffer = "fn main() {\n    println!(\"hello\");\n    return;\n}\n";
    let expected = "--- a/src/main.rs\n+++ b/src/main.rs\n@@ -1,3 +1,4 @@\n fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n+    return;\n }\n";
    assert_eq!(unified_diff("src/main.rs", saved, buffer), expected);
    assert_eq!(unified_diff("src/main.rs", saved, saved), "", "clean buffer → empty diff");
}

#[test]
fn tree_skips_noise_directories_and_gitignored_paths() {
    let (_tmp, root) = project(&[
        ("src/main.rs", b""),
        ("src/lib/util.rs", b""),
        ("README.md", b""),
        (".gitignore", b"*.log\nsecret/\n"),
        ("debug.log", b""),
        ("secret/key.txt", b""),
        ("node_modules/x/index.js", b""),
        (".git/HEAD", b""),
        ("dist/app.js", b""),
        ("build/out", b""),
        ("coverage/lcov", b""),
        (".next/cache", b""),
        (".cache/x", b""),
    ]);
    let tree = project_tree(root.path());
    fn paths(node: &TreeNode, out: &mut Vec<String>) {
        for child in node.children.iter().flatten() {
            out.push(child.path.clone());
            paths(child, out);
        }
    }
    let mut all = Vec::new();
    paths(&tree, &mut all);
    assert_eq!(
        all,
        ["src", "src/lib", "src/lib/util.rs", "src/main.rs", ".gitignore", "README.md"],
        "directories first, then by name"
    );
    let json = serde_json::to_value(&tree.children.as_ref().expect("children")[0]).expect("json");
    assert_eq!(json["type"], "directory");
}

fn wait_for(rx: &std::sync::mpsc::Receiver<FsChange>, want: impl Fn(&FsChange) -> bool) -> Duration {
    let started = Instant::now();
    while let Ok(change) = rx.recv_timeout(Duration::from_secs(1).saturating_sub(started.elapsed())) {
        if want(&change) {
            return started.elapsed();
        }
    }
    panic!("no matching change within 1 s");
}

#[test]
fn watcher_reports_create_modify_and_delete_within_a_second() {
    let (tmp, root) = project(&[("src/keep.rs", b"")]);
    let (tx, rx) = std::sync::mpsc::channel();
    let watcher = Watcher::start(&root, move |change| drop(tx.send(change))).expect("watcher");
    let file = tmp.path().join("src/new.rs");

    std::fs::write(&file, "a").expect("create");
    wait_for(&rx, |c| c.path == "src/new.rs" && c.action == FsChangeAction::Add);
    std::thread::sleep(Duration::from_millis(150));
    std::fs::write(&file, "ab").expect("modify");
    wait_for(&rx, |c| c.path == "src/new.rs" && c.action == FsChangeAction::Change);
    std::fs::remove_file(&file).expect("delete");
    wait_for(&rx, |c| c.path == "src/new.rs" && c.action == FsChangeAction::Unlink);

    std::fs::create_dir_all(tmp.path().join("node_modules/pkg")).expect("noise");
    std::fs::write(tmp.path().join("node_modules/pkg/index.js"), "x").expect("noise");
    std::fs::write(tmp.path().join("src/after.rs"), "x").expect("marker");
    wait_for(&rx, |c| {
        assert!(!c.path.starts_with("node_modules"), "noise reported: {c:?}");
        c.path == "src/after.rs"
    });
    watcher.stop();
}

#[test]
fn folders_created_after_the_watcher_started_are_watched_too() {
    let (tmp, root) = project(&[("src/keep.rs", b"")]);
    let (tx, rx) = std::sync::mpsc::channel();
    let watcher = Watcher::start(&root, move |change| drop(tx.send(change))).expect("watcher");
    assert_eq!(watcher.degraded(), None);
    std::fs::create_dir(tmp.path().join("src/feature")).expect("mkdir");
    wait_for(&rx, |c| c.path == "src/feature" && c.action == FsChangeAction::Add);
    // Each folder is watched on its own, so the new one had to be added to see inside it.
    std::fs::write(tmp.path().join("src/feature/mod.rs"), "x").expect("create");
    wait_for(&rx, |c| c.path == "src/feature/mod.rs");
    // A tree moved in at once (as `git checkout` or `cp -r` make it) is watched to its leaves.
    let staging = tempfile::tempdir().expect("staging");
    std::fs::create_dir_all(staging.path().join("lib/deep/er")).expect("mkdir");
    std::fs::rename(staging.path().join("lib"), tmp.path().join("lib")).expect("move in");
    wait_for(&rx, |c| c.path == "lib");
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(tmp.path().join("lib/deep/er/x.rs"), "x").expect("create");
    wait_for(&rx, |c| c.path == "lib/deep/er/x.rs");
    watcher.stop();
}

#[test]
fn a_fifo_named_gitignore_neither_hangs_the_tree_nor_the_watcher() {
    let (tmp, root) = project(&[
        ("src/a.rs", b"fn a() {}\n"),
        ("target/debug/x", b""),
        ("sub/.gitignore", b"*.log\n!keep.log\n"),
        ("sub/skip.log", b""),
        ("sub/keep.log", b""),
    ]);
    rustix::fs::mknodat(rustix::fs::CWD, tmp.path().join(".gitignore"), rustix::fs::FileType::Fifo, 0o644.into(), 0)
        .expect("mkfifo");
    let (tx, rx) = std::sync::mpsc::channel();
    let root_for_walk = root.clone();
    std::thread::spawn(move || {
        let tree = project_tree(root_for_walk.path());
        let watcher = Watcher::start(&root_for_walk, |_| {}).map(|w| w.stop());
        let _ = tx.send((tree, watcher.is_ok()));
    });
    let (tree, watched) = rx.recv_timeout(Duration::from_secs(5)).expect("the walk and the watcher did not hang");
    assert!(watched);
    let mut paths = Vec::new();
    fn collect(node: &TreeNode, out: &mut Vec<String>) {
        out.push(node.path.clone());
        node.children.iter().flatten().for_each(|c| collect(c, out));
    }
    collect(&tree, &mut paths);
    // The FIFO's rules are not read; the nested .gitignore's are, with its re-include.
    assert!(paths.contains(&"target/debug/x".to_owned()), "{paths:?}");
    assert!(paths.contains(&"sub/keep.log".to_owned()) && !paths.contains(&"sub/skip.log".to_owned()), "{paths:?}");
}

/// A watcher with a marker folder, its events on a channel.
fn watch_with_sync(
    root: &ProjectRoot,
    markers: &std::path::Path,
) -> (Watcher, paige_core::files::Syncer, std::sync::mpsc::Receiver<WatchEvent>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let options = WatchOptions { barrier_dir: Some(markers.join("watch")) };
    let watcher = Watcher::start_with(root, options, move |event| drop(tx.send(event))).expect("watcher");
    let syncer = watcher.syncer();
    (watcher, syncer, rx)
}

fn touched(rx: &std::sync::mpsc::Receiver<WatchEvent>) -> std::collections::HashSet<String> {
    rx.try_iter()
        .filter_map(|e| match e {
            WatchEvent::Touched(path) => Some(path),
            _ => None,
        })
        .collect()
}

#[test]
fn once_sync_returns_every_change_made_before_it_has_been_reported() {
    let (tmp, root) = project(&[("src/keep.rs", b"")]);
    let markers = tempfile::tempdir().expect("markers");
    let (watcher, syncer, rx) = watch_with_sync(&root, markers.path());
    for round in 0..5 {
        for i in 0..300 {
            std::fs::write(tmp.path().join(format!("src/f{i}.rs")), format!("{round}")).expect("write");
        }
        // No sleep: the marker written after the writes comes after their events.
        assert!(syncer.sync(Duration::from_secs(5)), "the reader did not catch up");
        let seen = touched(&rx);
        let missing: Vec<_> = (0..300).map(|i| format!("src/f{i}.rs")).filter(|p| !seen.contains(p)).collect();
        assert!(missing.is_empty(), "round {round}: not reported before sync returned: {missing:?}");
    }
    // Ignored and excluded paths are not learner paths.
    std::fs::create_dir_all(tmp.path().join("node_modules/x")).expect("mkdir");
    std::fs::write(tmp.path().join("node_modules/x/i.js"), "x").expect("write");
    std::fs::write(tmp.path().join("src/.paige-save-tmp"), "x").expect("write");
    assert!(syncer.sync(Duration::from_secs(5)));
    let seen = touched(&rx);
    assert!(seen.iter().all(|p| !p.starts_with("node_modules") && !p.contains(".paige-save-")), "{seen:?}");
    watcher.stop();
    // A stopped watcher's syncer cannot prove anything.
    assert!(!syncer.sync(Duration::from_millis(200)));
}

#[test]
fn a_renamed_folder_stays_watched_under_its_new_name() {
    let (tmp, root) = project(&[("src/old/inner/a.rs", b"")]);
    let markers = tempfile::tempdir().expect("markers");
    let (watcher, syncer, rx) = watch_with_sync(&root, markers.path());
    std::fs::rename(tmp.path().join("src/old"), tmp.path().join("src/new")).expect("rename");
    assert!(syncer.sync(Duration::from_secs(5)));
    let seen = touched(&rx);
    assert!(seen.contains("src/old") && seen.contains("src/new"), "both ends of the move: {seen:?}");
    std::fs::write(tmp.path().join("src/new/inner/b.rs"), "x").expect("write");
    assert!(syncer.sync(Duration::from_secs(5)));
    let seen = touched(&rx);
    assert!(seen.contains("src/new/inner/b.rs"), "reported under the folder's new name: {seen:?}");
    // Moved out of the project: no longer reported.
    let outside = tempfile::tempdir().expect("outside");
    std::fs::rename(tmp.path().join("src/new"), outside.path().join("gone")).expect("move out");
    assert!(syncer.sync(Duration::from_secs(5)));
    let _ = touched(&rx);
    std::fs::write(outside.path().join("gone/inner/c.rs"), "x").expect("write");
    assert!(syncer.sync(Duration::from_secs(5)));
    assert!(touched(&rx).is_empty(), "a folder moved out is not watched");
    watcher.stop();
}

#[test]
fn when_the_kernels_queue_overflows_the_watcher_says_so() {
    // The reader is held on its first event while more changes are made than the kernel
    // queues (fs.inotify.max_queued_events, 16,384 by default): the kernel drops the rest and
    // says so, and the watcher must pass that on (the detector then walks the project).
    let queued: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(16_384);
    let (tmp, root) = project(&[("src/keep.rs", b"")]);
    let markers = tempfile::tempdir().expect("markers");
    let (hold_tx, hold_rx) = std::sync::mpsc::channel::<()>();
    let hold = std::sync::Mutex::new(Some(hold_rx));
    let (tx, rx) = std::sync::mpsc::channel();
    let options = WatchOptions { barrier_dir: Some(markers.path().join("watch")) };
    let watcher = Watcher::start_with(&root, options, move |event| {
        if let Some(held) = hold.lock().expect("hold").take() {
            let _ = held.recv_timeout(Duration::from_secs(60));
        }
        let _ = tx.send(event);
    })
    .expect("watcher");
    for i in 0..queued + 2_000 {
        std::fs::write(tmp.path().join(format!("src/f{i}.rs")), "").expect("write");
    }
    drop(hold_tx);
    // A marker written while the queue is still full is dropped too: a sync then fails (and
    // the detector walks), so the test waits for the report itself.
    let deadline = Instant::now() + Duration::from_secs(60);
    let overflowed = loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(WatchEvent::Overflow) => break true,
            Ok(_) => {}
            Err(_) if Instant::now() > deadline => break false,
            Err(_) => {}
        }
    };
    assert!(overflowed, "the overflow was reported");
    watcher.stop();
}
