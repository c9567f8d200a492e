//! Any string through the path guard (`ProjectRoot::resolve`), relative and appended to the
//! project's absolute path, in a project holding a symlink out of it, a dangling one, one to
//! itself and one within it.
//! Invariants (as `tests/it/fuzz.rs`): no panic; a resolved path is never the root itself and
//! its nearest existing ancestor, symlinks resolved, is inside the root.

#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use paige_fuzz::{Mode, World};

static WORLD: LazyLock<World> = LazyLock::new(|| {
    let world = World::new(Mode::Coach);
    let project = world.project();
    let links = [
        (world.outer().join("nowhere"), "dangling"),
        (project.clone(), "itself"),
        (project.join("src"), "source"),
        (Path::new("loop").to_owned(), "loop"),
    ];
    for (target, name) in links {
        std::os::unix::fs::symlink(target, project.join(name)).expect("symlink");
    }
    world
});

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let root = WORLD.core.project_root();
    let canonical_root = root.path();
    for candidate in [input.to_owned(), format!("{}/{input}", canonical_root.display())] {
        let Ok(resolved) = root.resolve(&candidate) else { continue };
        let abs = resolved.abs();
        assert!(abs != canonical_root, "{candidate:?} resolved to the root itself");
        let mut existing = abs.parent().expect("a resolved path has a parent").to_owned();
        while std::fs::symlink_metadata(&existing).is_err() {
            existing = existing.parent().expect("the root exists").to_owned();
        }
        let real = existing.canonicalize().unwrap_or_else(|e| panic!("{candidate:?}: {}: {e}", existing.display()));
        assert!(real.starts_with(canonical_root), "{candidate:?} resolved to {}", abs.display());
    }
});
