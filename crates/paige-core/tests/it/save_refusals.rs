//! `Core::write_file` (the UI's `file:save`) refuses `.git/`, Paige's own temp names and the
//! audit ledger with an error that says why, and writes nothing.

use paige_core::ProjectError;

use super::test_core;

#[test]
fn the_ui_write_path_refuses_git_paige_temp_files_and_the_ledger() {
    let t =
        test_core(&[(".git/config", "[core]\n"), (".orchestration/agent_trace.jsonl", "{}\n"), ("src/a.rs", "a\n")]);
    let root = t.project.path().to_owned();
    std::os::unix::fs::symlink(".git", root.join("alias")).expect("an alias of .git");
    for (path, why) in [
        (".git/config", "Paige does not save inside .git/"),
        (".git/hooks/post-checkout", "Paige does not save inside .git/"),
        ("deep/nested/.git/HEAD", "Paige does not save inside .git/"),
        (".Git/config", "Paige does not save inside .git/"),
        ("alias/config", "Paige does not save inside .git/"),
        (".paige-save-x1", "reserved for Paige's own temp files"),
        ("src/.paige-tmp-12-y", "reserved for Paige's own temp files"),
        (".orchestration/agent_trace.jsonl", "written by governance only"),
    ] {
        let err = t.core.write_file(path, "planted\n".into()).expect_err(path);
        assert!(matches!(err, ProjectError::File(_)), "{path}: {err:?}");
        let message = err.to_string();
        assert!(message.starts_with("cannot write ") && message.contains(why), "{path}: {message}");
    }
    assert_eq!(std::fs::read_to_string(root.join(".git/config")).expect("config"), "[core]\n");
    assert_eq!(std::fs::read_to_string(root.join(".orchestration/agent_trace.jsonl")).expect("ledger"), "{}\n");
    for never in [".git/hooks", "deep", ".Git", ".paige-save-x1", "src/.paige-tmp-12-y"] {
        assert!(!root.join(never).exists(), "{never} was created");
    }
    // The learner's own files, also ones whose names merely start alike, save as ever.
    for path in ["src/a.rs", ".gitignore", ".gitattributes", ".github/x.yml", "src/paige-save.rs"] {
        t.core.write_file(path, "saved\n".into()).expect(path);
        assert_eq!(std::fs::read_to_string(root.join(path)).expect("read"), "saved\n");
    }
}
