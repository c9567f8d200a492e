use std::os::unix::fs::symlink;
use std::path::Path;

use paige_core::files::{PathError, ProjectRoot};
use proptest::prelude::*;

/// A project with a file, a symlink inside, symlinks out (dir, file, dangling) and an
/// outside directory beside it.
fn project() -> (tempfile::TempDir, ProjectRoot) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("project");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(root.join("src")).expect("src");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(root.join("src/main.rs"), "fn main() {}\n").expect("file");
    std::fs::write(outside.join("secret.txt"), "secret").expect("secret");
    symlink(root.join("src"), root.join("link_in")).expect("symlink in");
    symlink(&outside, root.join("link_out")).expect("symlink out");
    symlink(outside.join("secret.txt"), root.join("file_out")).expect("file symlink out");
    symlink(tmp.path().join("nowhere/at/all"), root.join("dangling")).expect("dangling");
    let guard = ProjectRoot::new(&root).expect("root");
    (tmp, guard)
}

/// `Ok(rel)` or the error's kind, for compact tables.
fn check(guard: &ProjectRoot, input: &str) -> Result<String, &'static str> {
    guard.resolve(input).map(|p| p.rel().to_owned()).map_err(|e| match e {
        PathError::Empty => "empty",
        PathError::NulByte => "nul",
        PathError::ParentComponent(_) => "parent",
        PathError::OutsideProject(_) => "outside",
        PathError::SymlinkOutside(_) => "symlink-out",
        PathError::IsRoot(_) => "root",
        PathError::Unresolvable { .. } => "unresolvable",
    })
}

#[test]
fn paths_resolve_inside_the_project_or_are_rejected_before_io() {
    let (_tmp, guard) = project();
    let inside_abs = guard.path().join("src/main.rs").display().to_string();
    let cases: Vec<(&str, Result<&str, &str>)> = vec![
        ("src/main.rs", Ok("src/main.rs")),
        ("./src/main.rs", Ok("src/main.rs")),
        ("src//main.rs", Ok("src/main.rs")),
        (&inside_abs, Ok("src/main.rs")),
        ("src/not_yet.rs", Ok("src/not_yet.rs")),
        ("new/dir/deeper/file.ts", Ok("new/dir/deeper/file.ts")),
        ("link_in/main.rs", Ok("src/main.rs")),
        ("日本語/ファイル.ts", Ok("日本語/ファイル.ts")),
        ("../../etc/passwd", Err("parent")),
        ("src/../src/main.rs", Err("parent")),
        ("..", Err("parent")),
        ("/etc/passwd", Err("outside")),
        ("/", Err("outside")),
        ("link_out/secret.txt", Err("symlink-out")),
        ("link_out/new_file.txt", Err("symlink-out")),
        ("file_out", Err("symlink-out")),
        ("dangling", Err("symlink-out")),
        ("a\0b", Err("nul")),
        ("", Err("empty")),
        (".", Err("root")),
    ];
    for (input, expected) in cases {
        let expected = expected.map(str::to_owned);
        assert_eq!(check(&guard, input), expected, "input {input:?}");
    }
}

#[test]
fn errors_name_the_offending_path() {
    let (_tmp, guard) = project();
    let err = guard.resolve("../../etc/passwd").expect_err("rejected");
    assert_eq!(err.to_string(), r#"path "../../etc/passwd" contains '..'; use a path inside the project"#);
    let err = guard.resolve("link_out/secret.txt").expect_err("rejected");
    assert_eq!(err.to_string(), r#"path "link_out/secret.txt" is a symlink that points outside the project"#);
}

fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("src".to_owned()),
        Just("main.rs".to_owned()),
        Just("link_in".to_owned()),
        Just("link_out".to_owned()),
        Just("file_out".to_owned()),
        Just("dangling".to_owned()),
        Just("".to_owned()),
        "[a-zü日._-]{1,6}",
    ]
}

fn is_within(path: &Path, root: &Path) -> bool {
    // The deepest existing ancestor, resolved through symlinks, must be inside the root.
    let existing = path.ancestors().find(|a| a.symlink_metadata().is_ok()).expect("root exists");
    existing.canonicalize().is_ok_and(|c| c.starts_with(root)) && path.starts_with(root)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn no_generated_path_escapes_the_project(parts in prop::collection::vec(component(), 1..6), absolute in any::<bool>()) {
        let (tmp, guard) = project();
        let joined = parts.join("/");
        let input = if absolute { format!("{}/{joined}", tmp.path().display()) } else { joined };
        if let Ok(resolved) = guard.resolve(&input) {
            prop_assert!(is_within(resolved.abs(), guard.path()), "{input:?} escaped to {}", resolved.abs().display());
            prop_assert!(!resolved.rel().split('/').any(|c| c == ".." || c.is_empty()), "bad rel {:?}", resolved.rel());
        }
    }
}
