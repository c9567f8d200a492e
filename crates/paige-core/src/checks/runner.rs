//! Which test runner a project uses, read from its files, and the one command a step check
//! runs: the runner's own, with the phase's test filter as a single argument. Never a shell,
//! never a command a model wrote.

use std::path::PathBuf;

use crate::files::ProjectRoot;

/// The longest test filter Paige passes on (a test's name, not a script).
pub const MAX_FILTER_BYTES: usize = 200;

/// A project's test runner, in the order they are looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunnerKind {
    /// `Cargo.toml` → `cargo test <filter>`.
    Cargo,
    /// `package.json` with a `test` script → `npm test -- <filter>`.
    Npm,
    /// `go.mod` → `go test -run <filter> ./...`.
    Go,
    /// pytest's configuration or `tests/test_*.py` → `pytest -k <filter>`.
    Pytest,
}

/// One command to run: a program and its arguments, as `execve` takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub kind: RunnerKind,
    pub program: PathBuf,
    pub args: Vec<String>,
    /// What to call the program when it is missing ("cargo is not installed").
    pub tool: &'static str,
}

impl Invocation {
    /// The command as the learner would type it, for the log and the UI.
    pub fn display(&self) -> String {
        let quote = |a: &str| match a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=".contains(c)) {
            true => a.to_owned(),
            false => format!("'{}'", a.replace('\'', r"'\''")),
        };
        std::iter::once(self.tool.to_owned()).chain(self.args.iter().map(|a| quote(a))).collect::<Vec<_>>().join(" ")
    }
}

/// Why a phase has no check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoCheck {
    #[error("no test for this phase")]
    NoFilter,
    #[error("no test runner found in the project (looked for Cargo.toml, a package.json test script, go.mod, pytest)")]
    NoRunner,
    #[error("the phase's test filter {0:?} is not a test's name, so it is not run")]
    BadFilter(String),
}

/// The project's test runner, if Paige knows it.
pub fn detect(root: &ProjectRoot) -> Option<RunnerKind> {
    let text = |path: &str| -> Option<String> {
        let path = root.resolve(path).ok()?;
        crate::files::read_bytes(&path).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    let exists = |path: &str| root.resolve(path).is_ok_and(|p| std::fs::symlink_metadata(p.abs()).is_ok());
    if exists("Cargo.toml") {
        return Some(RunnerKind::Cargo);
    }
    if text("package.json").is_some_and(|json| has_test_script(&json)) {
        return Some(RunnerKind::Npm);
    }
    if exists("go.mod") {
        return Some(RunnerKind::Go);
    }
    let pytest_config = exists("pytest.ini")
        || exists("conftest.py")
        || text("pyproject.toml").is_some_and(|t| t.contains("pytest"))
        || text("setup.cfg").is_some_and(|t| t.contains("[tool:pytest]"))
        || text("tox.ini").is_some_and(|t| t.contains("[pytest]"));
    if pytest_config || has_python_tests(root) {
        return Some(RunnerKind::Pytest);
    }
    None
}

/// A `scripts.test` that is not npm's placeholder ("Error: no test specified").
fn has_test_script(json: &str) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(json) else { return false };
    value["scripts"]["test"].as_str().is_some_and(|s| !s.trim().is_empty() && !s.contains("no test specified"))
}

fn has_python_tests(root: &ProjectRoot) -> bool {
    let Ok(dir) = root.resolve("tests") else { return false };
    let Ok(entries) = std::fs::read_dir(dir.abs()) else { return false };
    entries.flatten().take(1000).any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
    })
}

/// A filter is passed on only when it reads as a test's name: not empty, not an option
/// (`-…` would be read as a flag by the runner), no control characters, not too long.
pub fn check_filter(filter: &str) -> Result<&str, NoCheck> {
    let trimmed = filter.trim();
    let bad = trimmed.is_empty()
        || trimmed.len() > MAX_FILTER_BYTES
        || trimmed.starts_with('-')
        || trimmed.chars().any(char::is_control);
    match bad {
        true => Err(NoCheck::BadFilter(filter.to_owned())),
        false => Ok(trimmed),
    }
}

/// The command that runs `filter`'s tests with `kind`, in the project at `root`.
pub fn invocation(kind: RunnerKind, root: &std::path::Path, filter: &str) -> Invocation {
    let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    match kind {
        RunnerKind::Cargo => Invocation { kind, program: "cargo".into(), args: args(&["test", filter]), tool: "cargo" },
        RunnerKind::Npm => Invocation { kind, program: "npm".into(), args: args(&["test", "--", filter]), tool: "npm" },
        RunnerKind::Go => {
            Invocation { kind, program: "go".into(), args: args(&["test", "-run", filter, "./..."]), tool: "go" }
        }
        RunnerKind::Pytest => {
            // The project's own virtualenv first: the learner's pytest, with their packages.
            let venv = [".venv/bin/pytest", "venv/bin/pytest"].iter().map(|p| root.join(p)).find(|p| p.is_file());
            let program = venv.unwrap_or_else(|| "pytest".into());
            Invocation { kind, program, args: args(&["-k", filter]), tool: "pytest" }
        }
    }
}

/// What a phase's check runs: its runner's command with its filter, or why there is none.
pub fn plan(root: &ProjectRoot, filter: Option<&str>) -> Result<Invocation, NoCheck> {
    let filter = check_filter(filter.ok_or(NoCheck::NoFilter)?)?;
    let kind = detect(root).ok_or(NoCheck::NoRunner)?;
    Ok(invocation(kind, root.path(), filter))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, ProjectRoot) {
        let dir = tempfile::tempdir().expect("dir");
        for (path, content) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
            std::fs::write(full, content).expect("write");
        }
        let root = ProjectRoot::new(dir.path()).expect("root");
        (dir, root)
    }

    #[test]
    fn the_runner_is_read_from_the_projects_files() {
        type Files<'a> = &'a [(&'a str, &'a str)];
        let cases: [(Files, Option<RunnerKind>); 8] = [
            (&[("Cargo.toml", "[package]")], Some(RunnerKind::Cargo)),
            (&[("package.json", r#"{"scripts":{"test":"vitest run"}}"#)], Some(RunnerKind::Npm)),
            (&[("package.json", r#"{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}"#)], None),
            (&[("package.json", r#"{"scripts":{"build":"tsc"}}"#)], None),
            (&[("go.mod", "module x")], Some(RunnerKind::Go)),
            (&[("pyproject.toml", "[tool.pytest.ini_options]")], Some(RunnerKind::Pytest)),
            (&[("tests/test_app.py", "def test_x(): pass")], Some(RunnerKind::Pytest)),
            (&[("README.md", "hi")], None),
        ];
        for (files, want) in cases {
            let (_dir, root) = project(files);
            assert_eq!(detect(&root), want, "{files:?}");
        }
    }

    #[test]
    fn the_filter_is_one_argument_of_the_runners_own_command() {
        let root = std::path::Path::new("/p");
        let filter = "x; touch pwned";
        let cargo = invocation(RunnerKind::Cargo, root, filter);
        assert_eq!(
            (cargo.program.to_str(), cargo.args.as_slice()),
            (Some("cargo"), &["test".to_owned(), filter.into()][..])
        );
        assert_eq!(invocation(RunnerKind::Npm, root, filter).args, ["test", "--", filter]);
        assert_eq!(invocation(RunnerKind::Go, root, filter).args, ["test", "-run", filter, "./..."]);
        assert_eq!(invocation(RunnerKind::Pytest, root, filter).args, ["-k", filter]);
        assert_eq!(cargo.display(), "cargo test 'x; touch pwned'");
    }

    #[test]
    fn a_filter_that_would_read_as_an_option_or_is_blank_is_not_run() {
        for bad in ["", "  ", "--config=build.rustc-wrapper=sh", "-k", "a\nb", &"x".repeat(MAX_FILTER_BYTES + 1)] {
            assert!(matches!(check_filter(bad), Err(NoCheck::BadFilter(_))), "{bad:?}");
        }
        assert_eq!(check_filter("  parses_dates ").expect("ok"), "parses_dates");
        let (_dir, root) = project(&[("README.md", "hi")]);
        assert_eq!(plan(&root, None), Err(NoCheck::NoFilter));
        assert_eq!(plan(&root, Some("it_works")), Err(NoCheck::NoRunner));
    }
}
