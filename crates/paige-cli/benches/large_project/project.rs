//! The synthetic projects: `src/a{i}/b{j}/f{k}.rs` source files of 20 lines each, nested two
//! levels, a `.gitignore` that ignores `node_modules/`, a `node_modules` of a few hundred
//! files, and a git repository with everything tracked committed (the git CLI does it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Packages in `node_modules`, three files each.
const PACKAGES: usize = 100;

pub struct Project {
    /// Removed with the project.
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    /// Every tracked source file, relative to `root`, in generation order.
    pub sources: Vec<String>,
    /// How many folders hold the sources.
    pub folders: usize,
}

/// A project of `files` source files, `per_folder` to a folder. Prints its progress.
pub fn generate(files: usize, per_folder: usize) -> Project {
    let started = Instant::now();
    let dir = tempfile::Builder::new().prefix("paige-large-").tempdir().expect("temp dir");
    let root = dir.path().join("project");
    let folders = files.div_ceil(per_folder);
    // Two levels: about √folders folders on each.
    let side = (folders as f64).sqrt().ceil().max(1.0) as usize;
    let mut sources = Vec::with_capacity(files);
    let step = (files / 10).max(1);
    for n in 0..files {
        let (folder, k) = (n / per_folder, n % per_folder);
        let rel = format!("src/a{}/b{}/f{k}.rs", folder / side, folder % side);
        if k == 0 {
            std::fs::create_dir_all(root.join(&rel).parent().expect("parent")).expect("mkdir");
        }
        std::fs::write(root.join(&rel), source(&rel, n)).expect("write a source");
        sources.push(rel);
        if (n + 1).is_multiple_of(step) {
            println!("  generating: {} of {files} files ({:.1} s)", n + 1, started.elapsed().as_secs_f64());
        }
    }
    std::fs::write(root.join(".gitignore"), "node_modules/\ntarget/\n").expect(".gitignore");
    for p in 0..PACKAGES {
        let pkg = root.join(format!("node_modules/pkg{p}"));
        std::fs::create_dir_all(pkg.join("lib")).expect("mkdir");
        std::fs::write(pkg.join("package.json"), format!("{{\"name\": \"pkg{p}\", \"version\": \"1.0.{p}\"}}\n"))
            .expect("package.json");
        std::fs::write(pkg.join("index.js"), format!("module.exports = require('./lib/pkg{p}.js');\n"))
            .expect("index.js");
        std::fs::write(pkg.join(format!("lib/pkg{p}.js")), format!("exports.value = {p};\n")).expect("lib");
    }
    println!("  git init + add + commit ({:.1} s so far)", started.elapsed().as_secs_f64());
    git(&root, &["init", "-q"]);
    git(&root, &["add", "-A"]);
    git(&root, &["-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "init"]);
    println!(
        "  project ready: {files} files in {folders} folders (+{} in node_modules), {:.1} s",
        PACKAGES * 3,
        started.elapsed().as_secs_f64()
    );
    Project { _dir: dir, root, sources, folders }
}

/// The 20 lines of source `n` at `rel`, unique to it (the version store keeps by content).
fn source(rel: &str, n: usize) -> String {
    let mut text = format!("// {rel}\n//! Module {n} of the synthetic project.\n\nuse std::collections::HashMap;\n\n");
    text.push_str(&format!("pub fn compute_{n}(input: &[u64]) -> u64 {{\n"));
    text.push_str("    let mut seen = HashMap::new();\n    let mut total = 0;\n");
    text.push_str("    for (i, value) in input.iter().enumerate() {\n");
    text.push_str(&format!("        total += value * {} + i as u64;\n", n % 97 + 1));
    text.push_str("        seen.insert(*value, i);\n    }\n");
    text.push_str(&format!("    total + seen.len() as u64 + {n}\n}}\n\n"));
    text.push_str("#[cfg(test)]\nmod tests {\n");
    text.push_str(&format!("    #[test]\n    fn computes() {{ assert!(super::compute_{n}(&[1, 2]) > 0); }}\n}}\n"));
    text
}

/// What a formatter would make of a source: the same code, indented with tabs.
pub fn reformat(text: &str) -> String {
    text.replace("    ", "\t")
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null"])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?} failed");
}
