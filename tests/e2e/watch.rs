//! The file watcher of the built `paige serve`, counted in the kernel's own bookkeeping.

use std::time::Duration;

use crate::World;

/// inotify watches held by process `pid`, from /proc/<pid>/fdinfo.
fn inotify_watches(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .expect("fdinfo")
        .filter_map(|entry| std::fs::read_to_string(entry.ok()?.path()).ok())
        .map(|info| info.lines().filter(|l| l.starts_with("inotify wd:")).count())
        .sum()
}

#[test]
fn node_modules_and_gitignored_trees_cost_no_inotify_watches() {
    let world = World::ready();
    let project = world.project();
    for i in 0..5000 {
        std::fs::create_dir_all(project.join(format!("node_modules/pkg{}/lib{}", i / 10, i % 10))).expect("mkdir");
    }
    for i in 0..500 {
        std::fs::create_dir_all(project.join(format!("target/debug/dep{i}"))).expect("mkdir");
    }
    std::fs::write(project.join(".gitignore"), "target/\n").expect(".gitignore");
    for dir in ["src/a", "src/b", "tests"] {
        std::fs::create_dir_all(project.join(dir)).expect("mkdir");
    }
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let watches = inotify_watches(paige.child.id());
    eprintln!("inotify watches with a 5,500-folder node_modules and target: {watches}");
    // The root, src, src/a, src/b and tests.
    assert_eq!(watches, 5, "only the folders the explorer shows are watched");
}

#[test]
fn a_fifo_named_gitignore_does_not_keep_paige_serve_from_starting() {
    let world = World::ready();
    let project = world.project();
    std::fs::create_dir_all(project.join("src")).expect("src");
    let fifo = std::ffi::CString::new(project.join(".gitignore").display().to_string()).expect("path");
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0, "mkfifo");
    let mut paige = world.spawn(&["serve"]);
    paige.wait_for("ready in", Duration::from_secs(10));
    let out = paige.output();
    assert!(out.contains("not a regular file"), "the FIFO is named in the log:\n{out}");
}
