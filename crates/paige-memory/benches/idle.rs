//! What releasing the idle embedder gives back: the process's resident memory (VmRSS in
//! /proc/self/status) before the model loads, loaded, after its weights were released, then
//! loaded and released a second time (the allocator must hand the pages back each time).
//!
//! `cargo bench -p paige-memory --bench idle` with the model at
//! `$PAIGE_MODEL_DIR/all-MiniLM-L6-v2`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use paige_core::memory::Embedder;
use paige_memory::LazyModel;
use paige_memory::embed::MODEL_NAME;

const IDLE: Duration = Duration::from_millis(300);

fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("VmRSS");
    kib / 1024.0
}

fn wait_released(model: &LazyModel) -> Duration {
    let started = Instant::now();
    while model.loaded() {
        assert!(started.elapsed() < Duration::from_secs(30), "the weights were never released");
        std::thread::sleep(Duration::from_millis(5));
    }
    started.elapsed()
}

fn main() {
    let Some(parent) = std::env::var_os("PAIGE_MODEL_DIR") else {
        eprintln!("PAIGE_MODEL_DIR is not set: the bench needs $PAIGE_MODEL_DIR/{MODEL_NAME}");
        std::process::exit(1);
    };
    let model = LazyModel::new(&PathBuf::from(parent).join(MODEL_NAME), IDLE);
    let text = ["the OAuth callback races the session refresh"];
    println!("embedder weights released after {} ms idle: VmRSS", IDLE.as_millis());
    let before = rss_mib();
    println!("  before the first embed:   {before:>7.1} MiB");
    let first = model.embed(&text).expect("embeds");
    let loaded = rss_mib();
    println!("  loaded:                   {loaded:>7.1} MiB");
    let waited = wait_released(&model);
    let released = rss_mib();
    println!("  released ({:>4} ms later): {released:>7.1} MiB  (-{:.1} MiB)", waited.as_millis(), loaded - released);
    let started = Instant::now();
    let again = model.embed(&text).expect("embeds");
    let reload = started.elapsed();
    assert_eq!(first, again, "the reloaded model gives the same vector");
    let reloaded = rss_mib();
    println!("  reloaded ({:>4} ms):       {reloaded:>7.1} MiB", reload.as_millis());
    wait_released(&model);
    let released_again = rss_mib();
    println!("  released again:           {released_again:>7.1} MiB  (-{:.1} MiB)", reloaded - released_again);
}
