//! The one launcher (`paige_core::launch`): what Claude Code is started with, the environment
//! it gets, and the read-only view (bubblewrap) it runs in — the last checked for real where
//! bubblewrap can run (`scripts/test.sh` installs it).

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use paige_core::launch::{AgentMode, AgentServer, Launch, Origin, jail};

struct Dirs {
    _root: tempfile::TempDir,
    project: PathBuf,
    data: PathBuf,
    bin: PathBuf,
    home: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().expect("root");
    let path = |name: &str| {
        let p = root.path().join(name);
        std::fs::create_dir_all(&p).expect("mkdir");
        p.canonicalize().expect("canonical")
    };
    let (project, data, bin, home) = (path("project"), path("data"), path("bin"), path("home"));
    let claude = bin.join("claude");
    std::fs::write(&claude, "#!/bin/sh\n").expect("fake claude");
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    Dirs { _root: root, project, data, bin, home }
}

fn server() -> AgentServer {
    AgentServer { port: 4321, token: "agent-tok".into(), hook_command: Some("/usr/bin/paige".into()) }
}

fn launch_env(d: &Dirs, extra: &[(&str, &str)]) -> HashMap<String, String> {
    let mut env: HashMap<String, String> = [
        ("PATH", d.bin.to_str().expect("utf-8")),
        ("HOME", d.home.to_str().expect("utf-8")),
        ("LANG", "C.UTF-8"),
        ("LC_ALL", "C.UTF-8"),
        // Most tests launch without an OS layer (`None`): the learner's explicit yes.
        ("PAIGE_UNGUARDED", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

fn command(
    d: &Dirs,
    env: &HashMap<String, String>,
    origin: Origin,
    jail: Option<PathBuf>,
) -> paige_core::terminal::AgentCommand {
    let confinement = match jail {
        Some(bwrap) => jail::Confinement::Jail { bwrap, userns: true },
        None => jail::Confinement::Off("none in this test".into()),
    };
    Launch {
        project_dir: &d.project,
        data_dir: &d.data,
        server: &server(),
        mode: AgentMode::Coach { sandbox: false },
        env,
        origin,
        agent_override: None,
        confinement,
        extra_args: vec!["-p".into(), "hello".into()],
        scope: None,
    }
    .command()
    .expect("command")
}

/// A coach-mode launch for `d` under `confinement`, from the learner's shell.
fn confined(
    d: &Dirs,
    env: &HashMap<String, String>,
    sandbox: bool,
    confinement: jail::Confinement,
) -> paige_core::terminal::AgentCommand {
    Launch {
        project_dir: &d.project,
        data_dir: &d.data,
        server: &server(),
        mode: AgentMode::Coach { sandbox },
        env,
        origin: Origin::Shell,
        agent_override: None,
        confinement,
        extra_args: Vec::new(),
        scope: None,
    }
    .command()
    .expect("command")
}

fn env_of(cmd: &paige_core::terminal::AgentCommand) -> HashMap<String, String> {
    cmd.env.iter().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect()
}

#[test]
fn claude_gets_only_the_environment_it_needs_and_never_paiges_key_or_ui_token() {
    let d = dirs();
    let env = launch_env(
        &d,
        &[("ANTHROPIC_API_KEY", "sk-paige-own"), ("PAIGE_TOKEN", "ui-token"), ("AWS_SECRET_ACCESS_KEY", "s3cr3t")],
    );
    let cmd = command(&d, &env, Origin::App, None);
    assert!(cmd.clear_env, "the child's environment is exactly this one, not Paige's plus it");
    let got = env_of(&cmd);
    assert!(!got.contains_key("ANTHROPIC_API_KEY"), "Paige's own key stays out of the app's terminal: {got:?}");
    assert!(!got.contains_key("AWS_SECRET_ACCESS_KEY"), "what is not on the allow-list stays out");
    assert_eq!(got["PAIGE_TOKEN"], "agent-tok", "the agent token, never the UI's");
    assert_eq!(got["PATH"], d.bin.to_str().expect("utf-8"));
    assert_eq!(got["LC_ALL"], "C.UTF-8");
    assert_eq!(Path::new(&got["CLAUDE_CONFIG_DIR"]), d.data.join("claude"));
    // From the learner's own shell, their key is theirs to use.
    let shell = command(&d, &env, Origin::Shell, None);
    assert_eq!(env_of(&shell)["ANTHROPIC_API_KEY"], "sk-paige-own");
}

#[test]
fn claude_runs_in_a_pinned_permission_mode_with_only_settings_and_servers_the_agent_cannot_write() {
    let d = dirs();
    let cmd = command(&d, &launch_env(&d, &[]), Origin::App, None);
    let args: Vec<String> = cmd.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let after = |flag: &str| args.iter().position(|a| a == flag).map(|i| args[i + 1].clone());
    assert_eq!(after("--permission-mode").as_deref(), Some("default"), "never Claude Code's auto mode: {args:?}");
    assert_eq!(after("--setting-sources").as_deref(), Some("project"), "not the user's nor the local file");
    assert!(args.iter().any(|a| a == "--strict-mcp-config"), "MCP servers only from Paige's config");
    assert!(!args.iter().any(|a| a == "MultiEdit"), "a tool Claude Code no longer has is not named");
    assert_eq!(args[args.len() - 2..], ["-p", "hello"], "extra arguments come last, as given");
}

#[test]
fn the_jail_wraps_claude_and_paige_jail_0_turns_it_off() {
    let d = dirs();
    let bwrap = PathBuf::from("/usr/bin/bwrap");
    let cmd = command(&d, &launch_env(&d, &[]), Origin::Shell, Some(bwrap.clone()));
    assert_eq!(cmd.program, OsString::from("/usr/bin/paige"), "paige gate runs the jail, its only way out");
    let all: Vec<String> = cmd.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let gate_end = all.iter().position(|a| a == "--").expect("-- after the gate's arguments");
    let allowed: Vec<&str> = all[..gate_end].windows(2).filter(|w| w[0] == "--allow").map(|w| w[1].as_str()).collect();
    assert!(allowed.contains(&"127.0.0.1:4321"), "Paige's port: {allowed:?}");
    assert!(allowed.contains(&"api.anthropic.com:443"), "the model API: {allowed:?}");
    assert!(allowed.iter().all(|a| !a.starts_with("127.") || *a == "127.0.0.1:4321"), "no other local port");
    let socket = all[..gate_end].windows(2).find(|w| w[0] == "--socket").map(|w| w[1].clone()).expect("--socket");
    assert_eq!(Path::new(&all[gate_end + 1]), bwrap, "then the jail");
    let args: Vec<String> = all[gate_end + 2..].to_vec();
    assert!(args.iter().any(|a| a == "--unshare-net"), "a network of its own");
    let bound = args.windows(3).any(|w| w[0] == "--ro-bind" && w[1] == socket && w[2] == "/run/paige/gate.sock");
    assert!(bound, "the gate's socket is bound in: {args:?}");
    let at = |flag: &str, value: &Path| args.windows(3).any(|w| w[0] == flag && w[1] == value.to_str().expect("utf-8"));
    assert!(args.windows(3).any(|w| w == ["--ro-bind", "/", "/"]), "{args:?}");
    assert!(args.iter().any(|a| a == "--unshare-pid"), "nothing Claude Code starts outlives it");
    assert!(!at("--bind", &d.project), "the project is never bound writable");
    assert!(args.windows(2).any(|w| w[0] == "--tmpfs" && w[1] == d.data.to_str().expect("utf-8")), "DATA_DIR hidden");
    assert!(at("--bind", &d.data.join("claude")), "Claude Code's own config dir is writable");
    assert!(args.iter().any(|a| a == "--unshare-user"), "in a user namespace of its own");
    assert!(args.windows(2).any(|w| w == ["--cap-drop", "ALL"]), "no capability in the jail, ever");
    assert!(args.windows(2).any(|w| w == ["--tmpfs", "/run"]), "the session's sockets in /run are not in view");
    let dash = args.iter().position(|a| a == "--").expect("--");
    assert_eq!(Path::new(&args[dash + 1]), Path::new("/usr/bin/paige"), "paige confine adds its layers inside");
    let policy_at = args.iter().position(|a| a == "--policy").expect("--policy");
    assert_eq!(args[dash + 2], "confine");
    let relay = &args[dash + 3..policy_at];
    assert_eq!(relay[..3], ["--gate", "/run/paige/gate.sock", "--proxy"], "the relay to the gate inside");
    assert!(relay.windows(2).any(|w| w == ["--forward", "4321"]), "Paige's port is forwarded: {relay:?}");
    let policy: serde_json::Value = serde_json::from_str(&args[policy_at + 1]).expect("policy JSON");
    assert_eq!(policy["fs"], true, "without Claude Code's sandbox Landlock keeps the project read-only too");
    assert_eq!(policy["deny_unix_sockets"], true, "{policy}");
    assert_eq!(Path::new(&args[policy_at + 3]), d.bin.join("claude"));
    assert!(env_of(&cmd)["CARGO_TARGET_DIR"].starts_with(d.data.join("claude/scratch").to_str().expect("utf-8")));

    // Whether to jail is the running Paige's decision (`Confinement`), not the launching
    // shell's: PAIGE_JAIL there changes nothing, and without a jail Claude Code runs as is.
    let asked_off = command(&d, &launch_env(&d, &[("PAIGE_JAIL", "0")]), Origin::Shell, Some(bwrap.clone()));
    assert!(asked_off.args.iter().any(|a| *a == bwrap), "the launching shell's PAIGE_JAIL is not the decision");
    assert!(!env_of(&asked_off).contains_key("PAIGE_JAIL"));
    let off = command(&d, &launch_env(&d, &[]), Origin::Shell, None);
    assert_eq!(off.program, d.bin.join("claude").as_os_str(), "no jail: Claude Code runs as is");
}

#[test]
fn claudes_config_dir_is_seeded_once_from_the_learners_login_and_never_written_back() {
    let d = dirs();
    std::fs::write(d.home.join(".claude.json"), "{\"hasCompletedOnboarding\":true}").expect("claude.json");
    std::fs::create_dir_all(d.home.join(".claude")).expect("mkdir");
    std::fs::write(d.home.join(".claude/.credentials.json"), "{\"token\":1}").expect("credentials");
    command(&d, &launch_env(&d, &[]), Origin::Shell, None);
    let config = d.data.join("claude");
    let read = |path: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
    };
    // Seeded from the learner's, with the project's trust answered (issue 41).
    let seeded = read(&config.join(".claude.json"));
    assert_eq!(seeded["hasCompletedOnboarding"], true, "{seeded}");
    assert_eq!(seeded["projects"][d.project.display().to_string()]["hasTrustDialogAccepted"], true, "{seeded}");
    assert_eq!(
        std::fs::read_to_string(d.home.join(".claude.json")).expect("theirs"),
        "{\"hasCompletedOnboarding\":true}",
        "the learner's own is never written"
    );
    assert_eq!(std::fs::metadata(config.join(".credentials.json")).expect("creds").permissions().mode() & 0o777, 0o600);
    // Claude Code's own state from then on: a later launch does not overwrite it.
    std::fs::write(config.join(".claude.json"), "{\"mine\":true}").expect("claude writes");
    command(&d, &launch_env(&d, &[]), Origin::Shell, None);
    assert_eq!(read(&config.join(".claude.json"))["mine"], true, "kept");
    assert_eq!(
        std::fs::read_to_string(d.home.join(".claude.json")).expect("home"),
        "{\"hasCompletedOnboarding\":true}"
    );
}

/// Runs `script` with `sh -c` in the jail for `d`'s project, as the launcher would run Claude Code.
fn in_jail(bwrap: &Path, d: &Dirs, script: &str) -> std::process::Output {
    std::fs::create_dir_all(d.data.join("claude")).expect("config dir");
    let spec = jail::JailSpec {
        bwrap: bwrap.to_owned(),
        userns: jail::probe(std::env::var_os("PATH").as_deref()).expect("probe").userns,
        project_dir: d.project.clone(),
        data_dir: d.data.clone(),
        claude_config_dir: d.data.join("claude"),
        run_files: vec![],
        keep_under_tmp: vec![],
        gate: None,
        writable: Vec::new(),
    };
    let mut args: Vec<OsString> = jail::args(&spec);
    args.extend(["--".into(), "/bin/sh".into(), "-c".into(), script.into()]);
    Command::new(bwrap).args(args).output().expect("bwrap runs")
}

#[test]
fn in_the_jail_no_command_can_change_the_learners_project_git_or_home_and_nothing_outlives_it() {
    let bwrap = jail::probe(std::env::var_os("PATH").as_deref())
        .expect("bubblewrap can run here (scripts/test.sh installs it)")
        .bwrap;
    let d = dirs();
    std::fs::create_dir_all(d.project.join("src")).expect("src");
    std::fs::create_dir_all(d.project.join(".git/hooks")).expect("git");
    std::fs::create_dir_all(d.project.join("target")).expect("target");
    std::fs::write(d.project.join("src/main.rs"), "fn main() {}\n").expect("main");
    std::fs::write(d.project.join(".gitignore"), "target/\n").expect("ignore");
    std::fs::write(d.data.join("paige.db"), "secret").expect("db");
    std::fs::write(d.home.join(".gitconfig"), "[user]\n").expect("gitconfig");
    // Where the jail may write and the host sees it: Claude Code's config dir.
    let marker = d.data.join("claude/outlived");
    let script = format!(
        "echo x >> src/main.rs; echo y > new.rs; echo h > .git/hooks/pre-commit; echo t > target/out; \
         echo g >> {home}/.gitconfig; cat {data}/paige.db && echo saw-db; \
         echo ok > /tmp/private && echo tmp-writable; echo c > {data}/claude/state && echo config-writable; \
         ls /proc | grep -c '^[0-9]'; (sleep 2; echo late > {marker}) & exit 0",
        home = d.home.display(),
        data = d.data.display(),
        marker = marker.display(),
    );
    let out = in_jail(&bwrap, &d, &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(std::fs::read_to_string(d.project.join("src/main.rs")).expect("main"), "fn main() {}\n");
    assert!(!d.project.join("new.rs").exists(), "no new file at the project's root");
    assert!(!d.project.join(".git/hooks/pre-commit").exists(), "no git hook for the learner's next commit");
    assert!(
        !d.project.join("target/out").exists(),
        "ignored folders are read-only too: what is written there runs later"
    );
    assert_eq!(std::fs::read_to_string(d.home.join(".gitconfig")).expect("gitconfig"), "[user]\n");
    assert!(!stdout.contains("saw-db"), "DATA_DIR is hidden: {stdout}");
    assert!(stdout.contains("tmp-writable") && stdout.contains("config-writable"), "{stdout}");
    assert!(!Path::new("/tmp/private").exists(), "the jail's /tmp is its own");
    let processes: usize = stdout.lines().find_map(|l| l.trim().parse().ok()).expect("process count");
    assert!(processes <= 4, "the jail sees only its own processes, not Paige's ({processes})");
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(!marker.exists(), "a background job ended with the command that started it");
}

#[test]
fn coach_mode_without_paiges_hook_command_refuses_to_start_claude_and_says_so_in_the_terminal() {
    let d = dirs();
    let unhooked = AgentServer { hook_command: None, ..server() };
    let env = launch_env(&d, &[("SHELL", "/bin/bash")]);
    let cmd = Launch {
        project_dir: &d.project,
        data_dir: &d.data,
        server: &unhooked,
        mode: AgentMode::Coach { sandbox: true },
        env: &env,
        origin: Origin::App,
        agent_override: None,
        confinement: jail::Confinement::Off("none in this test".into()),
        extra_args: Vec::new(),
        scope: None,
    }
    .command()
    .expect("command");
    assert_eq!(cmd.program, OsString::from("/bin/bash"), "the learner's own shell, not an unguarded Claude Code");
    assert!(!cmd.accepts_nudges);
    assert!(cmd.banner.expect("banner").contains("cannot start Claude Code in coach mode"));
}

/// Nothing of the learner's desktop session reaches Claude Code's environment: from the jail
/// the X display typed into the learner's terminal, and the D-Bus session bus runs anything
/// outside it (`systemd-run --user`).
#[test]
fn the_learners_display_bus_runtime_dir_and_agent_sockets_are_not_in_claudes_environment() {
    let d = dirs();
    let session = [
        ("DISPLAY", ":0"),
        ("WAYLAND_DISPLAY", "wayland-0"),
        ("XDG_RUNTIME_DIR", "/run/user/1000"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
        ("XAUTHORITY", "/home/l/.Xauthority"),
    ];
    for origin in [Origin::App, Origin::Shell] {
        let got = env_of(&command(&d, &launch_env(&d, &session), origin, None));
        for (name, _) in session {
            assert!(!got.contains_key(name), "{name} reached Claude Code from {origin:?}");
        }
    }
}

/// With no OS layer at all (no jail, no Landlock, no Claude Code sandbox) coach mode does not
/// start Claude Code unless the learner said so; when they did, the terminal says in red that
/// the project is not read-only.
#[test]
fn coach_mode_with_no_os_layer_refuses_unless_the_learner_says_so_and_then_says_so_in_red() {
    let d = dirs();
    let mut env = launch_env(&d, &[("SHELL", "/bin/bash")]);
    env.remove("PAIGE_UNGUARDED");
    let cmd = command(&d, &env, Origin::Shell, None);
    assert_eq!(cmd.program, OsString::from("/bin/bash"), "the learner's shell, not an unguarded Claude Code");
    assert!(!cmd.accepts_nudges);
    let banner = cmd.banner.expect("why, on screen");
    assert!(banner.contains("will not start Claude Code") && banner.contains("PAIGE_UNGUARDED=1"), "{banner}");

    env.insert("PAIGE_UNGUARDED".into(), "1".into());
    let cmd = command(&d, &env, Origin::Shell, None);
    assert_eq!(cmd.program, d.bin.join("claude").as_os_str(), "the learner said so");
    let banner = cmd.banner.expect("the banner says what holds");
    assert!(banner.contains("\x1b[1;31m") && banner.contains("NOT read-only"), "{banner}");
}

/// Where the jail cannot run (no user namespaces), Landlock keeps the project read-only: the
/// launch is `paige confine` with the file rules on, `DATA_DIR` hidden but for Claude Code's
/// own files, every capability dropped, temp files in Paige's scratch; the banner is quiet.
#[test]
fn without_the_jail_landlock_confines_claude_with_data_dir_hidden_and_no_capabilities() {
    let d = dirs();
    let env = launch_env(&d, &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:8123")]);
    let cmd = confined(&d, &env, true, jail::Confinement::Landlock("no user namespaces here".into()));
    assert_eq!(cmd.program, OsString::from("/usr/bin/paige"), "paige confine, then Claude Code");
    let args: Vec<String> = cmd.args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    assert_eq!(args[..2], ["confine", "--policy"]);
    let policy: serde_json::Value = serde_json::from_str(&args[2]).expect("policy");
    assert_eq!(policy["fs"], true);
    assert_eq!(policy["drop_caps"], true);
    assert_eq!(policy["hide"], serde_json::json!([d.data]));
    assert_eq!(policy["tcp_connect"], serde_json::json!([443, 4321, 8123]), "Paige, the model API, nothing else");
    let read: Vec<&str> = policy["read"].as_array().expect("read").iter().filter_map(|v| v.as_str()).collect();
    assert!(read.iter().any(|p| p.contains("/run/mcp-")), "its MCP config stays readable: {read:?}");
    assert_eq!(Path::new(&args[4]), d.bin.join("claude"));
    assert!(
        !args.iter().any(|a| a.contains("\"sandbox\"")),
        "Claude Code's sandbox needs mount(2), which Landlock forbids"
    );
    let env = env_of(&cmd);
    assert_eq!(Path::new(&env["TMPDIR"]), d.data.join("claude/scratch/tmp"), "not the learner's /tmp");
    assert!(d.data.join("claude/scratch/tmp").is_dir());
    // Read-only: nothing to warn about; only what Paige answered of Claude Code's first run.
    let banner = cmd.banner.unwrap_or_default();
    assert!(!banner.contains("\x1b[1;31m") && !banner.contains("NOT read-only"), "{banner}");
}

/// Paige never follows a link Claude Code planted in its config dir (writable in the jail):
/// a scratch folder replaced by a link into the project is removed and made anew, and
/// nothing is created in the project.
#[test]
fn a_link_planted_in_claudes_config_dir_is_never_followed_by_the_launcher() {
    let d = dirs();
    let config = d.data.join("claude");
    std::fs::create_dir_all(config.join("scratch")).expect("scratch");
    std::os::unix::fs::symlink(&d.project, config.join("scratch/target")).expect("planted link");
    std::os::unix::fs::symlink(&d.project, config.join("scratch/tmp")).expect("planted link");
    let env = launch_env(&d, &[]);
    confined(&d, &env, false, jail::Confinement::Landlock("test".into()));
    assert_eq!(std::fs::read_dir(&d.project).expect("project").count(), 0, "nothing made in the project");
    for dir in ["target", "tmp"] {
        let meta = std::fs::symlink_metadata(config.join("scratch").join(dir)).expect("made");
        assert!(meta.is_dir() && !meta.file_type().is_symlink(), "{dir} is Paige's own folder again");
    }
}

/// No capability in the jail, ever (issue 39: root kept the full set without a user
/// namespace): run as root here, a bind remount of the project read-write, `mknod` of a disk,
/// and a remount from a nested user namespace all fail, and the session's folders in `/run`
/// (D-Bus, screen, docker's socket) are not in view.
#[test]
fn in_the_jail_root_cannot_remount_mknod_or_see_the_sessions_sockets_in_run() {
    let probed = jail::probe(std::env::var_os("PATH").as_deref()).expect("bubblewrap runs here (scripts/test.sh)");
    let d = dirs();
    std::fs::write(d.project.join("main.rs"), "fn main() {}\n").expect("main");
    let run_dir = tempfile::Builder::new().prefix("paige-session-").tempdir_in("/run").expect("a folder in /run");
    let socket = std::os::unix::net::UnixListener::bind(run_dir.path().join("bus")).expect("a session socket");
    let script = format!(
        "grep CapEff /proc/self/status; \
         mount -o remount,bind,rw {p} 2>/dev/null && echo REMOUNTED; \
         mount -t tmpfs none {p} 2>/dev/null && echo MOUNTED; \
         mknod /tmp/disk b 8 0 2>/dev/null && echo MKNOD; \
         unshare -Urm sh -c 'mount -o remount,bind,rw {p} && echo x >> {p}/main.rs' 2>/dev/null && echo NESTED; \
         echo y >> {p}/main.rs 2>/dev/null && echo WROTE; \
         test -e {sock} && echo SAW-RUN; \
         echo done",
        p = d.project.display(),
        sock = run_dir.path().join("bus").display(),
    );
    let out = in_jail(&probed.bwrap, &d, &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("done"), "the script ran: {stdout} {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("CapEff:\t0000000000000000"), "no effective capability: {stdout}");
    for escape in ["REMOUNTED", "MOUNTED", "MKNOD", "NESTED", "WROTE", "SAW-RUN"] {
        assert!(!stdout.contains(escape), "{escape} from the jail: {stdout}");
    }
    assert_eq!(std::fs::read_to_string(d.project.join("main.rs")).expect("main"), "fn main() {}\n");
    drop(socket);
}

/// The .deb's AppArmor profile lets Paige's own bubblewrap — the one the jail tries first —
/// make a user namespace where AppArmor restricts them (Ubuntu 24.04+), and the package
/// config installs both where the launcher looks.
#[test]
fn the_packaged_apparmor_profile_allows_a_user_namespace_for_the_bwrap_the_jail_tries_first() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let profile = std::fs::read_to_string(root.join("packaging/apparmor/paige-bwrap")).expect("profile");
    let head = format!("profile paige-bwrap {} flags=(unconfined) {{", jail::BUNDLED_BWRAP);
    assert!(profile.lines().any(|l| l == head), "{profile}");
    assert!(profile.lines().any(|l| l.trim() == "userns,"), "{profile}");
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("src-tauri/apparmor.conf.json")).expect("config"))
            .expect("JSON");
    let files = &config["bundle"]["linux"]["deb"]["files"];
    assert_eq!(files[jail::APPARMOR_PROFILE], "packaging/apparmor/paige-bwrap");
    assert!(files[jail::BUNDLED_BWRAP].is_string(), "{files}");
}

/// What each machine gets, by the kernel it has: the plan never asks `paige confine` for a
/// layer the kernel lacks (which would fail closed and start no Claude Code), and says
/// "read-only" only where the jail or Landlock's file rules make it so.
#[test]
fn the_plan_asks_only_for_layers_the_kernel_has_and_says_read_only_only_when_true() {
    use paige_confine::Support;
    use paige_core::launch::layers::{Inputs, Plan};
    let d = dirs();
    let plan = |confinement: &jail::Confinement, sandbox: bool, abi: Option<u32>| {
        Plan::new(Inputs {
            confinement,
            sandbox: if sandbox { Ok(()) } else { Err("no socat".into()) },
            hooks: true,
            project_dir: &d.project,
            data_dir: &d.data,
            config_dir: &d.data.join("claude"),
            run_files: &[],
            ports: vec![443, 4321],
            support: Support { landlock_abi: abi, seccomp: true },
            destinations: paige_core::launch::gate::Destinations::for_launch(4321, &Default::default()),
        })
    };
    let jail = jail::Confinement::Jail { bwrap: "/usr/bin/bwrap".into(), userns: true };
    let root = unsafe { libc::geteuid() } == 0;
    for abi in [None, Some(2), Some(3), Some(5), Some(7)] {
        let n = abi.unwrap_or(0);
        let alone = plan(&jail, false, abi);
        let policy = alone.confine.clone().expect("paige confine inside the jail");
        assert_eq!(policy.fs, n >= 3, "file rules from ABI 3 only ({abi:?})");
        assert_eq!(policy.tcp_connect.is_some(), n >= 4, "TCP rules from ABI 4 only ({abi:?})");
        assert_eq!(policy.scope_abstract_unix, n >= 6, "scopes from ABI 6 only ({abi:?})");
        assert!(policy.seccomp && policy.deny_unix_sockets && policy.deny_mounts);
        assert!(alone.read_only && !alone.unguarded(), "the jail is read-only whatever the kernel");
        let with_sandbox = plan(&jail, true, abi);
        // As root in the jail Claude Code's sandbox cannot map uid 0: Landlock stands in.
        assert_eq!(with_sandbox.claude_sandbox, !root);
        if !root {
            let inside = with_sandbox.confine.expect("seccomp inside");
            assert!(!inside.fs && !inside.deny_mounts, "nothing that would stop Claude Code's sandbox mounting");
        }
    }
    let landlock = plan(&jail::Confinement::Landlock("no user namespaces".into()), true, Some(7));
    let policy = landlock.confine.as_ref().expect("paige confine alone");
    assert!(policy.fs && policy.drop_caps && policy.hide == vec![d.data.clone()]);
    assert!(!landlock.claude_sandbox, "Claude Code's sandbox cannot mount under Landlock's file rules");
    assert!(landlock.read_only);
    let summary = landlock.summary(&d.project);
    assert!(
        summary.contains("read-only") && summary.contains("jail off") && summary.contains("Landlock on"),
        "{summary}"
    );
    let nothing = plan(&jail::Confinement::Off("no bubblewrap, no Landlock".into()), false, None);
    assert!(nothing.unguarded() && !nothing.read_only);
    assert!(nothing.summary(&d.project).contains("NOT read-only"));
}

/// Issue 39, a later mount: Landlock's write rules cover every mount that arrives under their
/// folders later, so no write rule in the jail may hold the project. A project under `/tmp`
/// (the jail's own, writable) gets Paige's scratch dir for temp files instead; elsewhere the
/// jail's `/tmp` stays writable. `paige doctor --guard`'s `os-later-mount` escaped as root
/// through that rule before.
#[test]
fn in_the_jail_no_landlock_write_rule_holds_a_project_under_tmp() {
    use paige_confine::Support;
    use paige_core::launch::layers::{Inputs, Plan};
    let config = std::path::Path::new("/home/learner/.paige/claude");
    let plan = |project: &str| {
        Plan::new(Inputs {
            confinement: &jail::Confinement::Jail { bwrap: "/usr/bin/bwrap".into(), userns: true },
            sandbox: Err("no socat".into()),
            hooks: true,
            project_dir: std::path::Path::new(project),
            data_dir: std::path::Path::new("/home/learner/.paige"),
            config_dir: config,
            run_files: &[],
            ports: vec![4321],
            support: Support { landlock_abi: Some(7), seccomp: true },
            destinations: paige_core::launch::gate::Destinations::for_launch(4321, &Default::default()),
        })
    };
    for (project, tmp_writable) in [("/tmp/try/project", false), ("/dev/shm/p", true), ("/home/learner/src/app", true)]
    {
        let plan = plan(project);
        let write = plan.confine.as_ref().expect("paige confine in the jail").write.clone();
        assert!(write.iter().all(|dir| !std::path::Path::new(project).starts_with(dir)), "{project}: {write:?}");
        assert_eq!(write.iter().any(|w| w == std::path::Path::new("/tmp")), tmp_writable, "{project}: {write:?}");
        let tmpdir = plan.extra_env(config).into_iter().find(|(k, _)| k == "TMPDIR").map(|(_, v)| v);
        let scratch = config.join("scratch/tmp").into_os_string();
        assert_eq!(tmpdir, (!tmp_writable).then_some(scratch), "{project}: temp files go where it may write");
    }
}

/// Issue 41: Claude Code's first screens are answered in Paige's own config dir — the
/// project trusted; a key in the environment the learner never gave Claude Code declined
/// (its recommended answer: no key is offered for them); an answer the learner gave kept;
/// one line says what was done; a link planted at `.claude.json` never followed; a file
/// Paige cannot parse left alone.
#[test]
fn claude_codes_first_screens_are_answered_for_the_project_and_the_key_and_the_learners_answers_kept() {
    use paige_core::launch::first_run::{answer_first_screens, settle};
    use serde_json::json;
    let project = std::path::Path::new("/home/learner/app");
    let key = "sk-ant-0123456789abcdefghijklmnopqrstuvwxyz";
    let tail = &key[key.len() - 20..];
    let mut fresh = json!({});
    let said = settle(&mut fresh, project, Some(key), false).expect("answered");
    assert_eq!(fresh["projects"]["/home/learner/app"]["hasTrustDialogAccepted"], true);
    assert_eq!(fresh["customApiKeyResponses"]["rejected"], json!([tail]), "a key the learner never gave Claude Code");
    assert_eq!(
        said,
        "Paige trusted this folder for Claude Code (Paige's view of it is read-only) and kept this shell's \
         ANTHROPIC_API_KEY from Claude Code (sign in to Claude Code, or approve the key in it)."
    );
    assert!(fresh.get("hasCompletedOnboarding").is_none(), "not signed in: Claude Code's sign-in shows");
    let mut signed_in = json!({"theme": "light"});
    settle(&mut signed_in, project, Some(key), true).expect("answered");
    assert_eq!(signed_in["customApiKeyResponses"]["rejected"], json!([tail]), "signed in: its login is used");
    assert_eq!(
        (signed_in["theme"].as_str(), signed_in["hasCompletedOnboarding"].as_bool()),
        (Some("light"), Some(true))
    );
    // The learner gave Claude Code this key themselves: their answer stands, nothing said of it.
    let mut given = json!({"customApiKeyResponses": {"approved": [tail], "rejected": []}});
    let said = settle(&mut given, project, Some(key), false).expect("the folder trusted");
    assert_eq!(given["customApiKeyResponses"], json!({"approved": [tail], "rejected": []}), "the learner's answer");
    assert!(!said.contains("ANTHROPIC_API_KEY"), "{said}");
    assert_eq!(settle(&mut fresh.clone(), project, Some(key), false), None, "answered once, nothing to change");
    // Text from the environment, not a key: a tail that would split a character is left alone.
    let mut odd = json!({});
    let said = settle(&mut odd, project, Some("€€€€€€€"), false).expect("the folder trusted");
    assert!(odd.get("customApiKeyResponses").is_none() && !said.contains("KEY"), "{odd}");

    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("claude");
    std::fs::create_dir(&config).expect("config");
    let elsewhere = dir.path().join("elsewhere.json");
    std::fs::write(&elsewhere, "{}").expect("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, config.join(".claude.json")).expect("link");
    answer_first_screens(&config, project, Some(key));
    assert_eq!(std::fs::read_to_string(&elsewhere).expect("read"), "{}", "nothing written through the link");
    std::fs::remove_file(config.join(".claude.json")).expect("unlink");
    std::fs::write(config.join(".claude.json"), "not json").expect("broken");
    answer_first_screens(&config, project, Some(key));
    assert_eq!(std::fs::read_to_string(config.join(".claude.json")).expect("read"), "not json", "left alone");
    std::fs::remove_file(config.join(".claude.json")).expect("unlink");
    answer_first_screens(&config, project, Some(key));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(config.join(".claude.json")).expect("read")).expect("json");
    assert_eq!(written["projects"]["/home/learner/app"]["hasTrustDialogAccepted"], true);
    let mode = std::fs::metadata(config.join(".claude.json")).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}
