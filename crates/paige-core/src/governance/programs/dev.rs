//! Developer tools: git, cargo, npm/pnpm/yarn, go, test runners and linters. Each has
//! read-only subcommands and options that write or run something else (`git -c`,
//! `git grep -O`, `cargo --config`, `npm --script-shell`, `go test -exec`, `jest -u`, ...).

use super::{Opts, Runner, is_short_cluster, leaves_project, long_is};

#[rustfmt::skip]
const GIT_READ_ONLY: &[&str] = &[
    "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "grep", "describe", "shortlog",
    "cat-file", "rev-list", "whatchanged", "version", "name-rev", "merge-base", "for-each-ref",
    "show-ref", "count-objects", "check-ignore", "annotate", "range-diff",
];
#[rustfmt::skip]
const GIT_MUTATING: &[&str] = &[
    "apply", "checkout", "restore", "reset", "stash", "merge", "pull", "rebase", "cherry-pick", "revert", "am",
    "clean", "mv", "rm", "switch", "init", "clone", "submodule", "worktree", "format-patch", "archive",
    "filter-branch", "sparse-checkout", "bisect",
];
/// git's options before the subcommand that only choose what it reads or how it prints.
#[rustfmt::skip]
const GIT_GLOBAL: &[&str] = &[
    "--no-pager", "-P", "-p", "--paginate", "--bare", "--no-replace-objects", "--literal-pathspecs",
    "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--version", "--help",
    "--html-path", "--man-path", "--info-path", "--exec-path", "--no-advice", "--no-lazy-fetch",
];
#[rustfmt::skip]
const CARGO_READ_ONLY: &[&str] = &[
    "check", "test", "t", "build", "b", "clippy", "doc", "d", "bench", "tree", "metadata", "nextest", "version",
    "search", "locate-project", "pkgid", "verify-project", "help", "c", "--version", "-V", "--list", "audit",
];
#[rustfmt::skip]
const CARGO_MUTATING: &[&str] = &["fmt", "fix", "add", "remove", "rm", "new", "init"];

const HANDLED: &[&str] = &[
    "git", "cargo", "npm", "pnpm", "yarn", "go", "pytest", "jest", "vitest", "mocha", "prettier", "eslint", "ruff",
    "biome", "tsc",
];

pub(super) fn handles(name: &str) -> bool {
    HANDLED.contains(&name)
}

pub(super) fn classify(scan: &mut impl Runner, name: &str, lit: &[&str], o: &Opts) {
    if scan.outside_project() {
        return after_cd(scan, name);
    }
    if matches!(name, "eslint" | "prettier")
        && let Some(path) = lit.iter().find(|a| leaves_project(a.split_once('=').map_or(a, |(_, v)| v)))
    {
        return scan.unknown(format!("`{name} {path}` loads configuration or plugins (code) from outside the project"));
    }
    match name {
        "git" => git(scan, lit),
        "cargo" => cargo(scan, lit),
        "npm" | "pnpm" | "yarn" => package_manager(scan, name, lit),
        "go" => go(scan, lit),
        "pytest" | "jest" | "vitest" | "mocha" => test_runner(scan, name, lit),
        "prettier" if o.short('w') || o.long("write") => scan.mutating("`prettier --write` rewrites files"),
        "eslint" | "ruff" | "biome"
            if ["fix", "write", "apply", "apply-unsafe", "add-noqa", "output-file"]
                .iter()
                .any(|f| o.exact(&format!("--{f}")) || lit.iter().any(|a| a.starts_with(&format!("--{f}="))))
                || o.short('o')
                || lit.first() == Some(&"format") =>
        {
            scan.mutating(format!("`{name}` rewrites files"))
        }
        "eslint" if o.short('f') || o.long("format") || o.long("rulesdir") => scan.unknown("`eslint` loading code"),
        // Without a fix or write flag these only check.
        "prettier" | "eslint" | "ruff" | "biome" => {}
        // `tsc` writes its output unless told not to.
        "tsc"
            if o.exact("--noEmit")
                && ![
                    "-b",
                    "--build",
                    "--generateTrace",
                    "--init",
                    "--incremental",
                    "--tsBuildInfoFile",
                    "-w",
                    "--watch",
                ]
                .iter()
                .any(|f| lit.iter().any(|a| a == f || a.starts_with(&format!("{f}=")))) => {}
        _ => scan.unknown(format!("`{name}`")),
    }
}

/// The tools here run code they find in the directory they run in.
fn after_cd(scan: &mut impl Runner, name: &str) {
    scan.unknown(format!(
        "`{name}` after a `cd` that may leave the project: it runs code found there (configuration, build scripts, tests)"
    ));
}

fn git(scan: &mut impl Runner, lit: &[&str]) {
    let mut i = 0;
    while let Some(arg) = lit.get(i).copied() {
        let repository = ["-C", "--git-dir", "--work-tree"].iter().find_map(|f| {
            let attached = arg.strip_prefix(f).and_then(|v| v.strip_prefix('=').or((*f == "-C").then_some(v)));
            if arg == *f { lit.get(i + 1).copied() } else { attached.filter(|v| !v.is_empty()) }
        });
        if let Some(path) = repository.filter(|p| leaves_project(p)) {
            return scan.unknown(format!(
                "`git` in {path}, outside the project: that repository's configuration can make git run a command"
            ));
        }
        match arg {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--attr-source" => i += 2,
            a if a.starts_with("-c") || a.starts_with("--config-env") => {
                return scan.mutating("`git -c` sets configuration, which can make git run a command");
            }
            a if a.starts_with("--exec-path=") => {
                return scan.mutating("`git --exec-path` runs git's programs from elsewhere");
            }
            a if GIT_GLOBAL.contains(&a) || a.starts_with("--list-cmds=") => i += 1,
            a if ["--git-dir=", "--work-tree=", "--namespace=", "--attr-source="].iter().any(|p| a.starts_with(p)) => {
                i += 1
            }
            a if a.starts_with('-') => return scan.unknown(format!("`git {a}`, an option Paige does not know")),
            _ => break,
        }
    }
    let Some(sub) = lit.get(i).copied() else { return };
    let rest = &lit[i + 1..];
    let opts = Opts(rest);
    if opts.long("output") || (sub != "grep" && opts.exact("-o")) {
        return scan.mutating(format!("`git {sub} --output` writes a file"));
    }
    match sub {
        "grep" if opts.short('O') || opts.long("open-files-in-pager") => {
            scan.mutating("`git grep -O` runs a pager program on the files it finds")
        }
        "stash" if matches!(rest.first().copied(), Some("list" | "show")) => {}
        "branch" | "tag" | "remote" => git_listing(scan, sub, rest),
        "config" => git_config(scan, rest),
        "reflog" if matches!(rest.first().copied(), Some("expire" | "delete")) => {
            scan.mutating("`git reflog expire` drops history the learner may need")
        }
        "reflog" => {}
        "help" if rest.iter().all(|a| !a.starts_with('-') || matches!(*a, "-a" | "-g" | "--all" | "--guides")) => {}
        _ if GIT_READ_ONLY.contains(&sub) => {}
        _ if GIT_MUTATING.contains(&sub) => scan.mutating(format!("`git {sub}` changes the learner's files")),
        _ => scan.unknown(format!("`git {sub}`")),
    }
}

/// `git branch`, `tag`, `remote` list with these options; anything else creates, deletes,
/// renames or edits (`--edit-description` runs an editor).
fn git_listing(scan: &mut impl Runner, sub: &str, rest: &[&str]) {
    #[rustfmt::skip]
    let flags = ["-a", "-r", "-l", "--list", "-v", "-vv", "--verbose", "--all", "--remotes", "--show-current",
        "--no-color", "--color", "--no-column", "--column", "--no-abbrev", "-i", "--ignore-case", "--omit-empty"];
    let valued = ["--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"];
    let listing = rest.iter().any(|a| matches!(*a, "-l" | "--list"));
    let mut skip = false;
    for arg in rest {
        if std::mem::take(&mut skip) {
            continue;
        }
        let name = arg.split_once('=').map_or(*arg, |(n, _)| n);
        if valued.contains(&name) {
            skip = !arg.contains('=');
        } else if flags.contains(&name) || (sub == "tag" && arg.starts_with("-n")) || (listing && !arg.starts_with('-'))
        {
        } else {
            return scan.unknown(format!("`git {sub} {arg}`"));
        }
    }
}

fn git_config(scan: &mut impl Runner, rest: &[&str]) {
    let reads =
        ["--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "--get-color", "--get-colorbool"];
    let writes =
        ["--add", "--unset", "--unset-all", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit"];
    let read = matches!(rest.iter().find(|a| !a.starts_with('-')).copied(), Some("get" | "list"))
        || rest.iter().any(|a| reads.contains(a));
    if !read || rest.iter().any(|a| writes.iter().any(|w| a == w || long_is(a, &w[2..]) && w.starts_with("--"))) {
        scan.mutating("`git config` that sets configuration");
    }
}

fn cargo(scan: &mut impl Runner, lit: &[&str]) {
    let (options, after) = match lit.iter().position(|a| *a == "--") {
        Some(i) => (&lit[..i], &lit[i + 1..]),
        None => (lit, &[][..]),
    };
    let manifest = options.iter().enumerate().find_map(|(i, a)| {
        let value = a.split_once('=').map(|(_, v)| v).or_else(|| options.get(i + 1).copied());
        long_is(a, "manifest-path").then_some(value.unwrap_or(""))
    });
    if let Some(path) = manifest.filter(|p| leaves_project(p) || p.is_empty()) {
        return scan.unknown(format!("`cargo --manifest-path {path}` builds and runs a package outside the project"));
    }
    let dangerous = ["config", "target-dir", "artifact-dir", "out-dir", "open"];
    if options.iter().any(|a| dangerous.iter().any(|d| long_is(a, d)) || a.starts_with("-Z") || *a == "-C") {
        return scan.unknown("`cargo` with an option that changes what it runs or where it writes");
    }
    let sub = options.iter().copied().find(|a| !a.starts_with('-') && !a.starts_with('+'));
    let Some(sub) = sub else { return };
    let fixes = options.iter().any(|a| matches!(*a, "--fix" | "--allow-dirty"));
    match sub {
        "fmt" if lit.contains(&"--check") => {}
        _ if CARGO_MUTATING.contains(&sub) || fixes => {
            scan.mutating(format!("`cargo {sub}` changes the learner's files"))
        }
        "nextest"
            if !matches!(
                options.iter().skip_while(|a| **a != "nextest").nth(1).copied(),
                Some("run" | "r" | "list")
            ) =>
        {
            scan.unknown("`cargo nextest`")
        }
        _ if CARGO_READ_ONLY.contains(&sub) => cargo_trailing(scan, sub, after),
        _ => scan.unknown(format!("`cargo {sub}`")),
    }
}

/// What follows `--`: the test harness's options for `test` and `bench` (`--logfile` writes),
/// lint levels for the compiler otherwise (`--emit`, `-o`, `-C linker=` write or run).
fn cargo_trailing(scan: &mut impl Runner, sub: &str, after: &[&str]) {
    #[rustfmt::skip]
    let harness = ["--nocapture", "--no-capture", "--test-threads", "--exact", "--ignored", "--include-ignored",
        "-q", "--quiet", "--show-output", "--list", "--skip", "--color", "--format", "--bench", "--test"];
    let lints = ["-D", "-W", "-A", "-F", "--deny", "--warn", "--allow", "--forbid", "--cap-lints"];
    let tests = matches!(sub, "test" | "t" | "bench" | "nextest");
    let mut skip = false;
    for arg in after {
        if std::mem::take(&mut skip) || !arg.starts_with('-') {
            continue;
        }
        let name = arg.split_once('=').map_or(*arg, |(n, _)| n);
        let known = if tests { harness.contains(&name) } else { lints.iter().any(|l| name.starts_with(l)) };
        if !known {
            return scan.unknown(format!("`cargo {sub} -- {arg}`"));
        }
        skip = !tests && lints.contains(&name)
            || matches!(name, "--test-threads" | "--skip" | "--color" | "--format") && !arg.contains('=');
    }
}

fn package_manager(scan: &mut impl Runner, name: &str, lit: &[&str]) {
    #[rustfmt::skip]
    let runs = ["script-shell", "node-options", "userconfig", "globalconfig", "browser", "viewer", "editor", "shell",
        "call", "prefix"];
    if lit.iter().any(|a| *a == "-c" || runs.iter().any(|r| long_is(a, r))) {
        return scan.mutating(format!("`{name}` with an option that runs another command"));
    }
    let sub = lit.iter().copied().find(|a| !a.starts_with('-'));
    let packages = lit.iter().skip(1).filter(|a| !a.starts_with('-')).count();
    let outside = lit.iter().find(|a| leaves_project(a.split_once('=').map_or(a, |(_, v)| v)));
    if let (Some("test" | "t" | "tst"), Some(path)) = (sub, outside) {
        return scan.unknown(format!("`{name} test` given {path}, a path outside the project"));
    }
    match sub {
        Some("config" | "c")
            if !matches!(
                lit.iter().filter(|a| !a.starts_with('-')).nth(1).copied(),
                Some("get" | "list" | "ls") | None
            ) =>
        {
            scan.mutating(format!("`{name} config` changes {name}'s configuration"))
        }
        Some("test" | "t" | "tst") if lit.iter().skip_while(|a| **a != "--").skip(1).any(|a| a.starts_with('-')) => {
            scan.unknown(format!("`{name} test` with options for the test runner"))
        }
        Some(
            "test" | "t" | "tst" | "ls" | "list" | "view" | "info" | "outdated" | "why" | "explain" | "help" | "bin"
            | "root" | "config" | "c" | "--version" | "-v",
        ) => {}
        Some("install" | "i" | "add") if packages > 0 => {
            scan.mutating(format!("`{name} {}` changes package.json", sub.unwrap_or_default()))
        }
        Some("uninstall" | "remove" | "rm" | "un" | "r" | "init" | "pkg" | "version" | "create") => {
            scan.mutating(format!("`{name} {}` changes the learner's files", sub.unwrap_or_default()))
        }
        Some(other) => scan.unknown(format!("`{name} {other}`")),
        None => scan.unknown(format!("`{name}`")),
    }
}

/// `go test`/`vet`/`list` with options Paige knows (`-exec`, `-toolexec`, `-vettool`, `-o`,
/// profiles and linker flags write or run); `go env -w` writes go's configuration.
fn go(scan: &mut impl Runner, lit: &[&str]) {
    #[rustfmt::skip]
    let known = ["v", "run", "count", "race", "short", "timeout", "bench", "benchmem", "benchtime", "cover",
        "covermode", "coverpkg", "json", "failfast", "list", "p", "parallel", "tags", "f", "m", "e", "deps", "find",
        "skip", "cpu", "fullpath", "shuffle", "test", "x", "n", "a", "trimpath", "vet", "compiled", "buildvcs"];
    let sub = lit.iter().copied().find(|a| !a.starts_with('-'));
    let flags =
        || lit.iter().filter(|a| a.starts_with('-')).map(|a| a.trim_start_matches('-').split('=').next().unwrap_or(""));
    match sub {
        Some("test" | "vet" | "list") => {
            if let Some(path) = lit.iter().find(|a| leaves_project(a.split_once('=').map_or(a, |(_, v)| v))) {
                scan.unknown(format!("`go {} {path}`: code outside the project", sub.unwrap_or_default()));
            } else if let Some(flag) = flags().find(|f| !known.contains(f)) {
                scan.unknown(format!("`go {} -{flag}`", sub.unwrap_or_default()));
            }
        }
        Some("env") if flags().any(|f| f == "w" || f == "u") => scan.mutating("`go env -w` writes go's configuration"),
        Some("version" | "env" | "doc") => {}
        Some("fmt" | "get" | "generate" | "mod" | "fix" | "work" | "install") => {
            scan.mutating(format!("`go {}` changes files", sub.unwrap_or_default()))
        }
        _ => scan.unknown("`go`"),
    }
}

/// Test runners run the learner's tests; their options that write (`-u` snapshots,
/// `--outputFile`, `--junitxml`) or load code (`-p`, `--require`, `--config`, `--rootdir`),
/// and arguments naming a path outside the project (`/tmp/test_x.py`, `../x`, `~/x`: tests,
/// `conftest.py`s and configuration Paige cannot check) are not read-only.
pub(super) fn test_runner(scan: &mut impl Runner, name: &str, lit: &[&str]) {
    if scan.outside_project() {
        return after_cd(scan, name);
    }
    if let Some(path) = lit.iter().find(|a| leaves_project(a.split_once('=').map_or(a, |(_, v)| v))) {
        return scan.unknown(format!("`{name} {path}` runs code from outside the project, which Paige cannot check"));
    }
    let filters = lit.iter().enumerate().filter_map(|(i, a)| match a.strip_prefix("-W=") {
        Some(value) => Some(value),
        None => (*a == "-W").then(|| lit.get(i + 1).copied()).flatten(),
    });
    if let Some(filter) = filters.into_iter().find(|f| super::interpreters::warning_imports(f)) {
        return scan.unknown(format!("`{name} -W {filter}` imports the module its warning category names"));
    }
    if name != "pytest" && lit.iter().any(|a| matches!(*a, "-u" | "--updateSnapshot" | "--update" | "-u=true")) {
        return scan.mutating(format!("`{name} -u` rewrites the learner's snapshot files"));
    }
    #[rustfmt::skip]
    let known: &[&str] = match name {
        "pytest" => &["--tb", "--lf", "--last-failed", "--ff", "--failed-first", "--maxfail", "--no-header",
            "--collect-only", "--co", "--durations", "--exitfirst", "--quiet", "--verbose", "--capture", "--showlocals",
            "--numprocesses", "--sw", "--stepwise", "--disable-warnings", "--strict-markers", "--color", "-q", "-v",
            "-vv", "-vvv", "-x", "-s", "-k", "-m", "-l", "-n", "-W"],
        _ => &["--runInBand", "-i", "--verbose", "--silent", "-t", "--testNamePattern", "--watchAll", "--watch",
            "--ci", "--passWithNoTests", "--bail", "-b", "--no-coverage", "--colors", "--no-color", "--run",
            "--testPathPattern", "--testPathPatterns", "--maxWorkers", "-w", "--detectOpenHandles", "--forceExit",
            "--listTests", "--grep", "-g", "--fgrep", "--exit", "--recursive", "--timeout", "--reporter=dot",
            "--reporter=spec"],
    };
    for arg in lit.iter().filter(|a| a.starts_with('-') && **a != "--") {
        let flag = if arg.contains('=') && !known.contains(arg) { arg.split('=').next().unwrap_or(arg) } else { arg };
        let cluster = name == "pytest" && is_short_cluster(flag) && flag[1..].chars().all(|c| "qvxsl".contains(c));
        let report = name == "pytest" && flag.starts_with("-r") && !flag.starts_with("--");
        if !known.contains(&flag) && !cluster && !report {
            return scan.unknown(format!("`{name} {flag}`, an option Paige does not know"));
        }
    }
}
