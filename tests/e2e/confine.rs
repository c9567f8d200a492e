//! `paige confine` (hidden): the built `paige` applies a policy to itself and execs the
//! program, which runs confined; a policy that cannot be applied exits 126 and runs nothing.

use std::os::unix::fs::PermissionsExt;

use crate::World;

fn world_with_path() -> World {
    let mut world = World::empty();
    world.set("PATH", "/usr/local/bin:/usr/bin:/bin");
    world
}

#[test]
fn confine_runs_the_program_with_a_read_only_project_and_a_writable_scratch_dir() {
    let mut world = world_with_path();
    let project = world.project();
    std::fs::write(project.join("main.rs"), "fn main() {}\n").expect("write");
    let scratch = world.root.path().join("scratch");
    std::fs::create_dir(&scratch).expect("mkdir");
    let report = world.root.path().join("applied.json");
    world.set("PAIGE_CONFINE_REPORT", &report.display().to_string());
    let policy = serde_json::json!({
        "fs": true, "read": ["/"], "write": [scratch], "devices": ["/dev/null"],
        "seccomp": true, "deny_mounts": true, "drop_caps": true,
    });
    let script = format!(
        "if echo changed > {p}/main.rs 2>/dev/null; then echo WROTE; else echo project-read-only; fi; \
         touch {p}/new.rs 2>/dev/null && echo CREATED; cat {p}/main.rs; echo ran > {s}/out; echo done",
        p = project.display(),
        s = scratch.display()
    );
    let (status, stdout, stderr) = world.run(&["confine", "--policy", &policy.to_string(), "--", "sh", "-c", &script]);
    assert!(status.success(), "status {status}; stdout {stdout}; stderr {stderr}");
    assert_eq!(stdout, "project-read-only\nfn main() {}\ndone\n", "stderr: {stderr}");
    assert_eq!(std::fs::read_to_string(project.join("main.rs")).unwrap(), "fn main() {}\n");
    assert!(!project.join("new.rs").exists());
    assert_eq!(std::fs::read_to_string(scratch.join("out")).unwrap(), "ran\n");
    let applied: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).expect("report")).expect("JSON");
    assert_eq!(applied["fs"], true, "{applied}");
    assert_eq!(applied["seccomp"], true, "{applied}");
    assert_eq!(applied["caps_dropped"], true, "{applied}");
    assert_eq!(applied["net"], false, "{applied}");
    assert_eq!(std::fs::metadata(&report).unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn confine_exits_126_naming_what_could_not_be_applied_and_runs_nothing() {
    let world = world_with_path();
    let marker = world.root.path().join("started");
    let script = format!("touch {}", marker.display());
    for (policy, says) in [
        ("{\"fs\": true, \"read\": [\"/\"], \"scope_signal\": true}", "unknown field `scope_signal`"),
        ("not json", "the policy is not valid"),
        ("{\"fs\": true, \"read\": [\"relative/dir\"]}", "must be absolute"),
    ] {
        let (status, stdout, stderr) = world.run(&["confine", "--policy", policy, "--", "sh", "-c", &script]);
        assert_eq!(status.code(), Some(126), "{policy}: stdout {stdout}; stderr {stderr}");
        assert!(stderr.starts_with("paige confine: "), "{stderr}");
        assert!(stderr.contains(says) && stderr.trim_end().ends_with("; Claude Code was not started"), "{stderr}");
        assert!(stdout.is_empty());
        assert!(!marker.exists(), "the program ran under {policy}");
    }
}

#[test]
fn confine_refuses_a_report_path_that_is_a_planted_symlink() {
    let mut world = world_with_path();
    let target = world.root.path().join("elsewhere");
    let report = world.root.path().join("applied.json");
    std::os::unix::fs::symlink(&target, &report).expect("symlink");
    world.set("PAIGE_CONFINE_REPORT", &report.display().to_string());
    let (status, _, stderr) = world.run(&["confine", "--policy", "{\"seccomp\": true}", "--", "true"]);
    assert_eq!(status.code(), Some(126), "{stderr}");
    assert!(stderr.contains("cannot make the report"), "{stderr}");
    assert!(!target.exists());
}
