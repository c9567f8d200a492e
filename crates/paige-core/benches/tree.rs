//! The first `fs:tree` a UI gets, against the whole-project walk it replaced (issue 32), on
//! a generated project of about 100,000 files (27 per folder, 15 sub-folders per folder,
//! four levels) in a temp dir. Each run lists afresh (a new listing cache), with the file
//! system's own caches warm for both. Also the frame sizes.
//! `cargo bench -p paige-core --bench tree`

use std::path::Path;
use std::time::{Duration, Instant};

use paige_core::files::{ProjectRoot, TreeCache, project_tree};

const FILES_PER_FOLDER: usize = 27;
const FOLDERS_PER_FOLDER: usize = 15;
const LEVELS: usize = 3;

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let started = Instant::now();
    let (files, folders) = generate(tmp.path(), 0);
    println!("generated {files} files in {folders} folders in {:.1} s", started.elapsed().as_secs_f64());
    let root = ProjectRoot::new(tmp.path()).expect("root");

    let old = samples(5, || serde_json::to_string(&project_tree(root.path())).expect("json").len());
    let new = samples(50, || serde_json::to_string(&TreeCache::new(&root).first_tree()).expect("json").len());
    let shared = TreeCache::new(&root);
    shared.first_tree();
    let warm = samples(50, || serde_json::to_string(&shared.first_tree()).expect("json").len());

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("first fs:tree of a {files}-file project (median of the runs, p-max in brackets):");
    for (what, (median, max, bytes), runs) in [
        ("whole-project walk (before)", old, 5),
        ("first level, lists afresh ", new, 50),
        ("first level, another UI   ", warm, 50),
    ] {
        println!("  {what}  {:>9.3} ms  [{:>9.3} ms]  {:>10} bytes  {runs} runs", ms(median), ms(max), bytes);
    }
    println!(
        "  the first level is {:.0}× faster afresh, {:.0}× for another UI, and its frame {:.0}× smaller",
        old.0.as_secs_f64() / new.0.as_secs_f64(),
        old.0.as_secs_f64() / warm.0.as_secs_f64(),
        old.2 as f64 / new.2 as f64
    );
}

/// Median and max time of `runs` calls of `build`, and the frame size it gave.
fn samples(runs: usize, build: impl Fn() -> usize) -> (Duration, Duration, usize) {
    let mut bytes = 0;
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            bytes = std::hint::black_box(build());
            started.elapsed()
        })
        .collect();
    times.sort();
    (times[runs / 2], times[runs - 1], bytes)
}

/// Files and folders under `dir` (which is at `level`), made now.
fn generate(dir: &Path, level: usize) -> (usize, usize) {
    let (mut files, mut folders) = (FILES_PER_FOLDER, 0);
    for i in 0..FILES_PER_FOLDER {
        std::fs::write(dir.join(format!("file_{i:02}.rs")), "fn f() {}\n").expect("write");
    }
    if level < LEVELS {
        for i in 0..FOLDERS_PER_FOLDER {
            let sub = dir.join(format!("dir_{i:02}"));
            std::fs::create_dir(&sub).expect("mkdir");
            let (f, d) = generate(&sub, level + 1);
            files += f;
            folders += d + 1;
        }
    }
    (files, folders)
}
