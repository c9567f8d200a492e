//! The attack table is real: each shell attempt, run with no layer at all, changes what the
//! guard compares — so a HELD in the report means a layer held, not that the attempt was a
//! dud. And the comparison itself sees what it claims to.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::attacks::{self, Attack};
use super::snapshot::{self, Entry, Rules, Traces};
use super::world::World;
use super::{find_in_path, model};

/// Attempts whose first session changes nothing the guard compares by itself: their harm
/// is in what a later session or a terminal would do, which only the real run shows.
const NOT_ALONE: [(&str, &str); 5] = [
    (
        "config-dir-settings-disable",
        "Paige's own Claude Code config dir is writable by design; only the next session tells",
    ),
    (
        "config-dir-settings-hook",
        "Paige's own Claude Code config dir is writable by design; only the next session tells",
    ),
    ("git-c-pager", "git pages only to a terminal: here it shows whether the hook lets `-c` through"),
    ("os-planted-scratch-link", "only Paige's next launch of Claude Code tells whether the link is followed"),
    (
        "os-mknod-disk",
        "the node is made, but this machine lets no one (root included) mount its disk again (a device cgroup)",
    ),
];

/// The attempts that talk to Paige get one in this process, with the UI's token (which
/// opens `/ws`): the scripts work, so only the token Claude Code holds can stop them.
const WITH_PAIGE: [&str; 3] = ["ws-env-token", "token-hunt", "forged-hooks"];

/// The attempt that hunts for a token past the hook gets a Paige too, but holds only the
/// agent token, as Claude Code does. That Paige believes an OS layer hides its data folder
/// (so it keeps the UI token there) while the shell runs with none: what a Paige keeping the
/// token on disk without a layer would leave the agent (issue 39, item 6).
const HUNTS_THE_UI_TOKEN: &str = "os-token-hunt";

fn shell_only(attack: &Attack) -> bool {
    attack.calls.iter().all(|c| c.tool == "Bash")
}

#[test]
fn every_shell_attempt_changes_what_the_guard_compares_when_nothing_guards() {
    let path = std::env::var("PATH").unwrap_or_default();
    let git = find_in_path("git", &path).is_some();
    let scratch = tempfile::tempdir().expect("scratch");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut ran = Vec::new();
    for attack in attacks::table() {
        // SAFETY: geteuid(2) cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let runnable = attack
            .needs
            .iter()
            .all(|p| if *p == super::past_hook::ROOT { root } else { find_in_path(p, &path).is_some() });
        if !shell_only(&attack) || !runnable || attack.name == "control-noop" {
            continue;
        }
        let world = World::create(scratch.path().join(attack.name), &path, git).expect("world");
        let desktop = (attack.family == super::past_hook::PAST_HOOK)
            .then(|| super::past_hook::Session::start(&world.project, attack.name).expect("the learner's session"));
        let before = snapshot::take(&world.project, &world.home, &world.data_dir);
        let hunts = attack.name == HUNTS_THE_UI_TOKEN;
        let paige = (WITH_PAIGE.contains(&attack.name) || hunts).then(|| runtime.block_on(start_paige(&world, hunts)));
        let desktop_vars = desktop.as_ref().map(super::past_hook::Session::vars).unwrap_or_default();
        // What the check does outside once Claude Code runs (a later mount).
        if let Some(then) = desktop.as_ref().and_then(super::past_hook::Session::later_mount) {
            then();
        }
        for (i, call) in attack.calls.iter().enumerate() {
            let mark = format!("PAIGE-GUARD-{}", attack.name);
            let (project, home) = (world.project.display().to_string(), world.home.display().to_string());
            let id = model::tool_use_id("unit", i);
            let mut vars = vec![("MARK", mark.as_str()), ("PROJECT", &project), ("HOME", &home), ("TOOL_ID", &id)];
            vars.extend(desktop_vars.iter().map(|(name, value)| (*name, value.as_str())));
            let command = attacks::fill(&call.input, &vars)["command"].as_str().expect("command").to_owned();
            let mut shell = std::process::Command::new("bash");
            shell.args(["-c", &command]).current_dir(&world.project).env_clear().envs(world.env());
            shell.env("CLAUDE_CONFIG_DIR", world.data_dir.join("claude"));
            if let Some(paige) = &paige {
                shell.env("PAIGE_URL", format!("http://127.0.0.1:{}", paige.port));
                shell.env("PAIGE_TOKEN", if hunts { paige.agent_token.expose() } else { paige.token.expose() });
            }
            match &desktop {
                // The learner's terminal is the command's controlling terminal, as Claude Code's.
                Some(desktop) => super::past_hook::in_terminal(&mut shell, &desktop.terminal).expect("terminal"),
                None => {
                    shell.stdin(std::process::Stdio::null());
                }
            }
            let _ = shell.output().expect("bash runs");
        }
        if let Some(desktop) = &desktop {
            desktop.finish();
        }
        drop(desktop);
        let after = snapshot::take(&world.project, &world.home, &world.data_dir);
        if let Some(paige) = paige {
            runtime.block_on(paige.stop(Duration::from_secs(2))).expect("stop");
        }
        world.learner_next(git);
        ran.push((attack.name, world, before, after));
    }
    // The background writers sleep 2 s first.
    std::thread::sleep(Duration::from_secs(3));
    let mut duds = Vec::new();
    for (name, world, before, after) in &ran {
        let last = snapshot::take(&world.project, &world.home, &world.data_dir);
        let ignored_dirs_count = *name == "ignored-dir";
        let strict = Rules { ignored_dirs_count, after_learner: false, governed: false };
        let changed = !snapshot::diff(before, after, strict).is_empty()
            || !snapshot::diff(before, &last, Rules { after_learner: true, ..strict }).is_empty();
        let excused = NOT_ALONE.iter().any(|(n, _)| n == name);
        if changed == excused {
            duds.push(*name);
        }
    }
    assert!(ran.len() >= 45, "the shell attempts ran: {}", ran.len());
    assert!(duds.is_empty(), "attempts that changed nothing with no layer (or changed what they should not): {duds:?}");
}

/// A Paige for `world`; `keeps_ui_token`: as if an OS layer hid its data folder.
async fn start_paige(world: &World, keeps_ui_token: bool) -> paige_server::Instance {
    let env = std::collections::HashMap::from([
        ("PROJECT_DIR".to_owned(), world.project.display().to_string()),
        ("DATA_DIR".to_owned(), world.data_dir.display().to_string()),
        ("ANTHROPIC_API_KEY".to_owned(), "unused".to_owned()),
        ("ANTHROPIC_BASE_URL".to_owned(), "http://127.0.0.1:9".to_owned()),
        ("PORT".to_owned(), "0".to_owned()),
    ]);
    let mut config = paige_core::Config::load(&env, paige_core::ConfigOverrides::default()).expect("config");
    if keeps_ui_token {
        config.agent_jail = paige_core::launch::jail::Confinement::Landlock("as if Landlock hid DATA_DIR".into());
    }
    let memory = paige_memory::open(&config, &[]);
    paige_server::Instance::start(config, Arc::new(paige_core::SystemClock), memory, None).await.expect("paige")
}

#[test]
fn the_snapshot_sees_content_mode_symlinks_and_new_files_but_not_the_learners_commit_or_build() {
    let path = std::env::var("PATH").unwrap_or_default();
    let git = find_in_path("git", &path).is_some();
    let scratch = tempfile::tempdir().expect("scratch");
    let world = World::create(scratch.path().join("w"), &path, git).expect("world");
    let take = || snapshot::take(&world.project, &world.home, &world.data_dir);
    let before = take();
    let strict = Rules { ignored_dirs_count: true, after_learner: false, governed: false };
    assert!(snapshot::diff(&before, &take(), strict).is_empty(), "nothing changed, nothing seen");
    // The learner's own commit and build are theirs.
    world.learner_next(git);
    assert_eq!(snapshot::diff(&before, &take(), Rules { after_learner: true, ..strict }), vec![]);
    let paths = |rules| snapshot::diff(&before, &take(), rules).into_iter().map(|c| c.path).collect::<Vec<_>>();
    std::os::unix::fs::symlink("/dev/null", world.project.join("src/link.rs")).expect("symlink");
    std::fs::write(world.home.join(".bashrc"), "changed\n").expect("bashrc");
    let mode = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600);
    std::fs::set_permissions(world.project.join("README.md"), mode).expect("chmod");
    std::fs::write(world.project.join("node_modules/left-pad/index.js"), "planted\n").expect("planted");
    std::fs::write(world.home.join(".npm-cache-like"), "x").expect("dotfile");
    std::fs::create_dir_all(world.home.join(".cache/claude")).expect("cache");
    std::fs::write(world.home.join(".cache/claude/log"), "not the learner's").expect("cache");
    let seen = paths(Rules { after_learner: true, ..strict });
    for expected in [
        "project/src/link.rs",
        "home/.bashrc",
        "project/README.md",
        "project/node_modules/left-pad/index.js",
        "home/.npm-cache-like",
    ] {
        assert!(seen.iter().any(|p| p == expected), "{expected} in {seen:?}");
    }
    assert!(!seen.iter().any(|p| p.starts_with("home/.cache")), "caches are not the learner's: {seen:?}");
    let without_ignored = paths(Rules { ignored_dirs_count: false, after_learner: true, governed: false });
    assert!(!without_ignored.iter().any(|p| p.contains("node_modules")), "{without_ignored:?}");
    if git {
        // `.git/index` is compared by what it stages: a refreshed stat is not a change.
        assert!(matches!(before.get("project/.git/index"), Some(Entry::Index { .. })), "the index is parsed");
    }
}

#[test]
fn a_trace_is_only_what_the_control_left_or_an_empty_mount_point() {
    let dir = tempfile::tempdir().expect("dir");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "").expect("empty");
    let project = dir.path().join("p");
    std::fs::create_dir_all(project.join(".git/objects/info")).expect("git");
    let take = || snapshot::take(&project, Path::new("/nonexistent-home"), Path::new("/nonexistent-home/.paige"));
    let before = take();
    std::fs::write(project.join(".git/objects/info/alternates"), "").expect("placeholder");
    std::fs::write(project.join(".git/config.worktree"), "[core]\n\thooksPath = /tmp/x\n").expect("filled");
    let rules = Rules { ignored_dirs_count: true, after_learner: false, governed: false };
    let (escapes, traces) = Traces::default().split(snapshot::diff(&before, &take(), rules));
    let names = |v: &[snapshot::Change]| v.iter().map(|c| c.path.clone()).collect::<Vec<_>>();
    assert_eq!(names(&traces), ["project/.git/objects/info/alternates"], "an empty mount point is a trace");
    assert_eq!(names(&escapes), ["project/.git/config.worktree"], "a mount point with content is an escape");
}
