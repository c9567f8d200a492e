use std::collections::HashMap;
use std::path::PathBuf;

use paige_core::{Config, ConfigError, ConfigOverrides};

fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn all_missing_required_variables_are_named_at_once() {
    let err = Config::load(&env(&[("HOME", "/home/u")]), ConfigOverrides::default()).expect_err("missing");
    assert_eq!(err, ConfigError::Missing(vec!["PROJECT_DIR", "ANTHROPIC_API_KEY"]));
    assert_eq!(
        err.to_string(),
        "missing required environment variables: PROJECT_DIR, ANTHROPIC_API_KEY (set them in the environment or in .env; \
         a key saved in the desktop app's settings also counts)"
    );
}

#[test]
fn empty_and_blank_values_count_as_missing() {
    let project = tempfile::tempdir().expect("dir");
    let p = project.path().to_str().expect("utf8");
    let err = Config::load(&env(&[("PROJECT_DIR", p), ("ANTHROPIC_API_KEY", "  ")]), ConfigOverrides::default())
        .expect_err("blank key");
    assert_eq!(err, ConfigError::Missing(vec!["ANTHROPIC_API_KEY"]));
    let err = Config::load(&env(&[("PROJECT_DIR", ""), ("ANTHROPIC_API_KEY", "k")]), ConfigOverrides::default())
        .expect_err("empty dir");
    assert_eq!(
        err.to_string(),
        "missing required environment variable: PROJECT_DIR (set it in the environment or in .env)"
    );
}

#[test]
fn nonexistent_project_dir_is_named() {
    let err = Config::load(
        &env(&[("PROJECT_DIR", "/no/such/project"), ("ANTHROPIC_API_KEY", "k"), ("HOME", "/h")]),
        ConfigOverrides::default(),
    )
    .expect_err("no dir");
    assert_eq!(err.to_string(), "PROJECT_DIR does not exist: /no/such/project");
}

#[test]
fn a_file_is_not_a_project_dir() {
    let file = tempfile::NamedTempFile::new().expect("file");
    let err = Config::load(
        &env(&[("PROJECT_DIR", file.path().to_str().expect("utf8")), ("ANTHROPIC_API_KEY", "k"), ("HOME", "/h")]),
        ConfigOverrides::default(),
    )
    .expect_err("file");
    assert!(matches!(err, ConfigError::ProjectDirNotADirectory(_)));
}

#[test]
fn defaults_are_port_3000_and_home_dot_paige() {
    let project = tempfile::tempdir().expect("dir");
    let config = Config::load(
        &env(&[
            ("PROJECT_DIR", project.path().to_str().expect("utf8")),
            ("ANTHROPIC_API_KEY", "k"),
            ("HOME", "/home/u"),
        ]),
        ConfigOverrides::default(),
    )
    .expect("valid");
    assert_eq!(config.port, 3000);
    assert_eq!(config.data_dir, PathBuf::from("/home/u/.paige"));
    assert_eq!(config.project_dir, project.path().canonicalize().expect("canonical"));
    assert_eq!((config.chromadb_url, config.token), (None, None));
}

#[test]
fn flags_override_environment() {
    let env_project = tempfile::tempdir().expect("dir");
    let flag_project = tempfile::tempdir().expect("dir");
    let config = Config::load(
        &env(&[
            ("PROJECT_DIR", env_project.path().to_str().expect("utf8")),
            ("ANTHROPIC_API_KEY", "k"),
            ("PORT", "4000"),
            ("DATA_DIR", "/env/data"),
            ("CHROMADB_URL", "http://127.0.0.1:8000"),
            ("PAIGE_TOKEN", "fixed"),
        ]),
        ConfigOverrides {
            project_dir: Some(flag_project.path().to_owned()),
            port: Some(5000),
            data_dir: Some("/flag/data".into()),
        },
    )
    .expect("valid");
    assert_eq!(config.project_dir, flag_project.path().canonicalize().expect("canonical"));
    assert_eq!((config.port, config.data_dir.as_path()), (5000, std::path::Path::new("/flag/data")));
    assert_eq!(config.chromadb_url.as_deref(), Some("http://127.0.0.1:8000"));
    assert_eq!(config.token.as_deref(), Some("fixed"));
}

#[test]
fn a_project_flag_satisfies_the_requirement() {
    let project = tempfile::tempdir().expect("dir");
    let config = Config::load(
        &env(&[("ANTHROPIC_API_KEY", "k"), ("DATA_DIR", "~/data"), ("HOME", "/home/u")]),
        ConfigOverrides { project_dir: Some(project.path().to_owned()), ..ConfigOverrides::default() },
    )
    .expect("valid");
    assert_eq!(config.data_dir, PathBuf::from("/home/u/data"), "~ expands to HOME");
}

#[test]
fn bad_port_is_explained() {
    let project = tempfile::tempdir().expect("dir");
    let err = Config::load(
        &env(&[("PROJECT_DIR", project.path().to_str().expect("utf8")), ("ANTHROPIC_API_KEY", "k"), ("PORT", "http")]),
        ConfigOverrides::default(),
    )
    .expect_err("bad port");
    assert_eq!(err.to_string(), r#"PORT must be a whole number from 0 to 65535, got "http""#);
}

#[test]
fn debug_output_redacts_secrets() {
    let project = tempfile::tempdir().expect("dir");
    let config = Config::load(
        &env(&[
            ("PROJECT_DIR", project.path().to_str().expect("utf8")),
            ("ANTHROPIC_API_KEY", "sk-secret"),
            ("PAIGE_TOKEN", "tok-secret"),
            ("HOME", "/h"),
        ]),
        ConfigOverrides::default(),
    )
    .expect("valid");
    let shown = format!("{config:?}");
    assert!(!shown.contains("sk-secret") && !shown.contains("tok-secret"), "{shown}");
}

#[test]
fn anthropic_base_url_and_model_overrides_are_read_and_unknown_models_are_refused() {
    let project = tempfile::tempdir().expect("dir");
    let p = project.path().to_str().expect("utf8");
    let base = [("PROJECT_DIR", p), ("ANTHROPIC_API_KEY", "k"), ("HOME", "/home/u")];
    let config = Config::load(&env(&base), ConfigOverrides::default()).expect("loads");
    assert_eq!((config.anthropic_base_url, config.haiku_model, config.sonnet_model), (None, None, None));

    let with = |extra: &[(&'static str, &'static str)]| {
        let mut pairs = base.to_vec();
        pairs.extend_from_slice(extra);
        Config::load(&env(&pairs), ConfigOverrides::default())
    };
    let config =
        with(&[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"), ("PAIGE_SONNET_MODEL", "claude-haiku-4-5-20251001")])
            .expect("loads");
    assert_eq!(config.anthropic_base_url.as_deref(), Some("http://127.0.0.1:9"));
    assert_eq!(config.sonnet_model.as_deref(), Some("claude-haiku-4-5-20251001"));

    let err = with(&[("PAIGE_HAIKU_MODEL", "claude-future-9")]).expect_err("no price for it");
    assert_eq!(
        err.to_string(),
        "PAIGE_HAIKU_MODEL: unknown model \"claude-future-9\": add its price to paige_core::api::PRICES \
         (known: claude-haiku-4-5-20251001, claude-sonnet-4-5-20250929)"
    );
}

#[test]
fn the_desktop_load_runs_without_a_key_but_still_needs_a_valid_project() {
    let project = tempfile::tempdir().expect("dir");
    let p = project.path().to_str().expect("utf8");
    let config = Config::load_without_key(&env(&[("PROJECT_DIR", p), ("HOME", "/home/u")]), ConfigOverrides::default())
        .expect("no key is fine");
    assert_eq!(config.anthropic_api_key, "");
    assert_eq!(config.project_dir, project.path().canonicalize().expect("canonical"));

    let err = Config::load_without_key(&env(&[("HOME", "/home/u")]), ConfigOverrides::default()).expect_err("no dir");
    assert_eq!(err, ConfigError::Missing(vec!["PROJECT_DIR"]));
    let err = Config::load_without_key(
        &env(&[("HOME", "/home/u")]),
        ConfigOverrides { project_dir: Some(project.path().join("gone")), ..Default::default() },
    )
    .expect_err("missing dir");
    assert!(matches!(err, ConfigError::ProjectDirNotFound(_)), "{err:?}");
}

/// Whether coach mode jails Claude Code is decided when Paige loads its config: off with
/// `PAIGE_JAIL=0` (and why), off when bubblewrap is not on `PATH` (and what to install), on
/// where bubblewrap can make the read-only view.
#[test]
fn the_jail_is_decided_on_load_from_paige_jail_and_path() {
    use paige_core::launch::jail::Confinement;
    let project = tempfile::tempdir().expect("project");
    let dir = project.path().display().to_string();
    let base = [("PROJECT_DIR", dir.as_str()), ("ANTHROPIC_API_KEY", "k"), ("DATA_DIR", "/tmp/d")];
    let load = |extra: &[(&str, &str)]| {
        let pairs: Vec<(&str, &str)> = base.iter().chain(extra).copied().collect();
        Config::load(&env(&pairs), ConfigOverrides::default()).expect("config").agent_jail
    };
    let path = std::env::var("PATH").unwrap_or_default();
    let off = load(&[("PAIGE_JAIL", "0"), ("PAIGE_LANDLOCK", "0"), ("PATH", &path)]);
    assert_eq!(off, Confinement::Off("PAIGE_JAIL=0 turned it off; PAIGE_LANDLOCK=0 turned Landlock off".into()));
    assert!(!off.read_only());
    // Without the jail, Landlock keeps the project read-only where the kernel has it (this
    // machine's does: the tests need it).
    let landlock = load(&[("PAIGE_JAIL", "0"), ("PATH", &path)]);
    assert_eq!(landlock, Confinement::Landlock("PAIGE_JAIL=0 turned it off".into()));
    assert!(landlock.read_only() && landlock.bwrap().is_none());
    let missing = load(&[("PATH", "/nonexistent")]);
    assert!(missing.why_off().is_some_and(|why| why.contains("apt-get install bubblewrap")), "{missing:?}");
    let probed = paige_core::launch::jail::probe(Some(path.as_ref())).expect("bubblewrap runs here (scripts/test.sh)");
    assert_eq!(load(&[("PATH", &path)]), Confinement::Jail { bwrap: probed.bwrap, userns: probed.userns });
}
