//! Issue 39, "code runners are not read-only": every interpreter mode that runs code from a
//! file, an import name or an argument (`python3 -m doctest FILE`, `-m unittest NAME`,
//! `node --require`, inline code, a script) and every test runner given code from outside the
//! project is denied in coach mode. The learner's own tests in the project stay read-only.

use paige_core::governance::bash::{Effect, classify};
use proptest::prelude::*;

use super::bash_rules::Want::{self, *};
use super::bash_rules::misclassified;

/// Issue 39: programs that run code from a file, an import name or an argument, and test
/// runners given code from outside the project (a path, a plugin, a configuration, or a
/// `cd` away). None may be read-only; the learner's own tests in the project still are.
const CODE_RUNNERS: &[(&str, Want)] = &[
    // `python -m`: any module but pytest runs code its name or arguments choose.
    ("python3 -m doctest /proc/self/cmdline", U),
    ("python3 -m doctest README.md", U),
    ("python3 -m unittest os", U),
    ("python3 -m unittest discover", U),
    ("python3 -m pdb x.py", U),
    ("python3 -m trace --count x.py", U),
    ("python3 -m cProfile x.py", U),
    ("python3 -m profile x.py", U),
    ("python3 -m timeit 'import os'", U),
    ("python3 -m runpy x", U),
    ("python3 -m code", U),
    ("python3 -m idlelib", U),
    ("python3 -mdoctest f", U),
    ("python3 -Im doctest f", U),
    ("python3 -Bmdoctest f", U),
    ("python3 -X dev -m doctest f", U),
    ("python3 -W ignore -m unittest x", U),
    ("python3.12 -m doctest f", U),
    ("pypy3 -m doctest f", U),
    ("python3 -m", U),
    ("python3 -- x.py", U),
    ("python3 -m pip install x", M),
    // Before `-m pytest`: `-i` reads code from stdin afterwards; `-W` imports a dotted category.
    ("python3 -i -m pytest", U),
    ("python3 -W error::evil.Warn -m pytest", U),
    ("python3 -X pycache_prefix=/tmp -m pytest", U),
    ("python3 -m pytest /tmp/test_evil.py", U),
    ("python3 -m pytest -p evil", U),
    ("python3 -m pytest -c /tmp/pytest.ini", U),
    // Inline code, attached or in a cluster.
    ("python3 -c'import os'", M),
    ("python3 -Ic 'print(1)'", M),
    ("python3 -X dev -c 1", M),
    ("perl -E 'say 1'", M),
    ("perl -ne 'print' f", M),
    ("node -p 1", M),
    ("node --print 1", M),
    ("node --eval=1", M),
    ("node -pe 1", M),
    ("ruby -e 1", M),
    ("php -r 'echo 1;'", M),
    ("lua -e 'x=1'", M),
    ("Rscript -e 1", M),
    ("deno eval 1", M),
    ("bun -e 1", M),
    ("node", M),
    // Code a flag loads, and scripts.
    ("node --require /tmp/x.js app.js", U),
    ("node -r /tmp/x.js app.js", U),
    ("node --import=./x.mjs app.js", U),
    ("node --loader ./x.mjs app.js", U),
    ("node --experimental-loader=./x.mjs app.js", U),
    ("node --test", U),
    ("node app.js", U),
    ("perl -Mstrict x.pl", U),
    ("perl x.pl", U),
    ("ruby -rjson x.rb", U),
    ("ruby -r/tmp/x x.rb", U),
    ("deno run x.ts", U),
    ("bun run x", U),
    ("lua -l evil x.lua", U),
    // awk and sed that run commands; awk from a file.
    ("awk 'BEGIN{system(\"touch x\")}'", M),
    ("awk 'BEGIN{\"date\" | getline d; print d}'", M),
    ("awk '{print | \"sh\"}' f", M),
    ("awk -f /tmp/prog.awk", U),
    ("gawk --exec=/tmp/p.awk", U),
    ("sed 's/x/date/e' f", M),
    ("sed -n 'w /tmp/x' f", M),
    // find, wrappers and xargs around them.
    ("find . -exec python3 -m doctest {} \\;", U),
    ("find . -execdir perl -e 1 \\;", M),
    ("find . -ok python3 x.py \\;", U),
    ("env python3 -m doctest f", U),
    ("timeout 5 python3 -m unittest x", U),
    ("nice python3 -m pdb x.py", U),
    ("ls | xargs python3 -m doctest", U),
    ("env node --require /tmp/x.js app.js", U),
    ("sudo perl -E 1", M),
    // git in another repository (its configuration runs commands), aliases.
    ("git -C /tmp/evil status", U),
    ("git -C/tmp/evil status", U),
    ("git --git-dir=/tmp/evil/.git log", U),
    ("git --work-tree ../x status", U),
    ("git config alias.st '!touch x'", M),
    // Build tools and test runners given code from outside the project.
    ("make test", U),
    ("npm run test", U),
    ("npm test -- /tmp/evil.test.js", U),
    ("cargo test --manifest-path /tmp/evil/Cargo.toml", U),
    ("cargo test --manifest-path=../x/Cargo.toml", U),
    ("go test /tmp/evil", U),
    ("go test ../...", U),
    ("pytest /tmp/test_evil.py", U),
    ("pytest -p evil", U),
    ("pytest ../test_x.py", U),
    ("pytest ~/t.py", U),
    ("pytest /proc/self/cwd", U),
    ("pytest --rootdir=/tmp", U),
    ("pytest -c /tmp/pytest.ini", U),
    ("pytest --confcutdir=/tmp", U),
    ("pytest -W error::evil.Warning", U),
    ("pytest -W=error::evil.Warning", U),
    ("jest --config /tmp/j.js", U),
    ("jest /tmp/x.test.js", U),
    ("vitest run ../x", U),
    ("mocha --require /tmp/x.js", U),
    ("mocha -r ./x.js", U),
    ("mocha /tmp/evil.js", U),
    ("eslint /tmp/evil.js", U),
    ("prettier --check ../x", U),
    ("prettier --check --plugin=/tmp/p.js src", U),
    ("eslint --config=/tmp/evil.config.js src", U),
    // A `cd` that may leave the project: the tools run what they find there.
    ("cd /tmp/evil && pytest", U),
    ("cd /tmp && python3 -m pytest -q", U),
    ("cd .. && cargo test", U),
    ("cd ~ && git log", U),
    ("cd && git status", U),
    ("cd - && npm test", U),
    ("cd $D && go test ./...", U),
    ("pushd /tmp; jest", U),
    ("env -C /tmp pytest", U),
    ("env --chdir=/tmp cargo test", U),
    ("find /tmp -name 'test_*.py' -exec pytest {} \\;", U),
    ("find /tmp -execdir pytest \\;", U),
    ("fd test_ /tmp -x pytest", U),
    ("find /tmp -name x -exec cat {} \\;", R),
    ("env -C src cargo test", R),
    // Still read-only: the learner's own tests in the project, version queries.
    ("python3 -m pytest tests/ -k add", R),
    ("python3 -B -m pytest -q tests/", R),
    ("python3 -X importtime -m pytest -q", R),
    ("python3 -W ignore -m pytest", R),
    ("pytest tests/test_app.py::test_add -q", R),
    ("pytest -W error::DeprecationWarning", R),
    ("jest src/", R),
    ("mocha test/", R),
    ("go test ./...", R),
    ("npm test -- src", R),
    ("git -C src log", R),
    ("git --exec-path", R),
    ("cd tests && pytest -q", R),
    ("cd /tmp && ls", R),
    ("git status; cd /tmp", R),
    ("node --version", R),
    ("perl -V", R),
];

#[test]
fn code_runners_and_test_runners_given_outside_code_are_never_read_only() {
    let wrong = misclassified(CODE_RUNNERS);
    assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
}

/// Every interpreter name the rules know, in the spellings a command uses.
#[rustfmt::skip]
const INTERPRETERS: &[&str] = &[
    "python", "python3", "python3.12", "pypy3", "node", "nodejs", "perl", "perl5.36", "ruby", "php", "php8.2",
    "lua", "lua5.4", "luajit", "deno", "bun", "Rscript", "osascript",
];

/// `PAIGE_FUZZ_CASES`, as the other fuzz targets read it.
fn cases(default: u32) -> u32 {
    std::env::var("PAIGE_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Options that only tune an interpreter (and some that end its options), before or after.
fn noise() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "-B",
        "-u",
        "-q",
        "-X dev",
        "-X importtime",
        "-W ignore",
        "-I",
        "-E",
        "-w",
        "-v",
        "-s",
        "-O",
        "--no-warnings",
        "--version",
        "-h",
        "--help",
        "-V",
        "--",
        "-",
    ])
    .prop_map(str::to_owned)
}

/// A module name other than pytest (which runs the learner's tests, checked separately).
fn module() -> impl Strategy<Value = String> {
    let named = prop::sample::select(vec![
        "doctest",
        "unittest",
        "pdb",
        "trace",
        "cProfile",
        "profile",
        "timeit",
        "runpy",
        "code",
        "idlelib",
        "http.server",
        "os",
        "venv",
        "zipapp",
        "compileall",
        "pytest_evil",
        "py_compile",
        "ensurepip",
        "json.tool",
        "site",
    ])
    .prop_map(str::to_owned);
    prop_oneof![named, "[a-z_][a-z0-9_]{0,8}(\\.[a-z_]{1,5})?"]
        .prop_filter("pytest runs the learner's tests", |m| !matches!(m.as_str(), "pytest" | "py.test"))
}

/// A path to code: the learner's, the agent's, or the command's own arguments.
fn path() -> impl Strategy<Value = String> {
    let named = prop::sample::select(vec![
        "/proc/self/cmdline",
        "/tmp/evil.py",
        "/dev/stdin",
        "../x.js",
        "~/x.rb",
        "x.py",
        "src/app.js",
        "t.pl",
    ])
    .prop_map(str::to_owned);
    prop_oneof![named, "[a-z]{1,8}\\.(py|js|mjs|rb|pl|php|lua|R|ts)"]
}

/// One argument that makes the interpreter run code: a module, inline code, a flag that
/// loads a file or module, or a script.
fn code_bearing() -> impl Strategy<Value = String> {
    let inline = prop::sample::select(vec![
        "-c", "-e", "-E", "-p", "-r", "--eval", "--print", "eval", "-pe", "-ne", "-Ic", "-Bc", "-B", "-R", "-F",
    ]);
    let loads = prop::sample::select(vec![
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "-M",
        "-m",
        "-l",
        "-I",
        "--preload",
        "-d",
        "-f",
        "run",
        "test",
    ]);
    prop_oneof![
        module().prop_map(|m| format!("-m {m}")),
        module().prop_map(|m| format!("-m{m}")),
        (prop::sample::select(vec!["I", "B", "Bu", "IE", "q"]), module()).prop_map(|(f, m)| format!("-{f}m {m}")),
        (prop::sample::select(vec!["I", "B", "Bu"]), module()).prop_map(|(f, m)| format!("-{f}m{m}")),
        (inline.clone(), "[a-z0-9()+ ]{1,10}").prop_map(|(f, code)| format!("{f} '{code}'")),
        (inline, "[a-z0-9()+]{1,10}").prop_map(|(f, code)| if f.starts_with("--") {
            format!("{f}='{code}'")
        } else {
            format!("{f}'{code}'")
        }),
        (loads.clone(), path()).prop_map(|(f, p)| format!("{f} {p}")),
        (loads, path()).prop_map(|(f, p)| if f.starts_with("--") { format!("{f}={p}") } else { format!("{f}{p}") }),
        path(),
    ]
}

fn wrapped(command: String, how: u8) -> String {
    match how % 6 {
        0 => format!("env {command}"),
        1 => format!("timeout 5 {command}"),
        2 => format!("nice {command}"),
        3 => format!("ls | xargs {command}"),
        4 => format!("find . -exec {command} {{}} \\;"),
        _ => command,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn an_interpreter_given_a_module_inline_code_a_loader_or_a_script_is_never_read_only(
        interpreter in prop::sample::select(INTERPRETERS),
        before in prop::collection::vec(noise(), 0..3),
        code in code_bearing(),
        after in prop::collection::vec(prop_oneof![noise(), path()], 0..3),
        how in any::<u8>(),
    ) {
        let args = before.into_iter().chain([code]).chain(after).collect::<Vec<_>>().join(" ");
        let command = wrapped(format!("{interpreter} {args}"), how);
        let effect = classify(&command).effect;
        prop_assert!(effect != Effect::ReadOnly, "{command} classified read-only");
    }

    #[test]
    fn a_test_runner_given_a_path_outside_the_project_is_never_read_only(
        runner in prop::sample::select(vec![
            "pytest", "python3 -m pytest", "python -B -m pytest", "jest", "vitest", "vitest run", "mocha",
            "go test", "npm test --", "yarn test", "cargo test --manifest-path",
        ]),
        before in prop::collection::vec(prop::sample::select(vec!["-q", "-x", "-v", "--bail", "--exit"]), 0..2),
        outside in prop_oneof![
            prop::sample::select(vec!["/tmp/test_evil.py", "/proc/self/cwd", "..", "../x", "~/t.js", "a/../../b"])
                .prop_map(str::to_owned),
            "/[a-z]{1,6}(/[a-z_]{1,6}){0,2}",
            "(\\.\\./){1,3}[a-z_]{1,6}",
        ],
        cd in any::<bool>(),
    ) {
        let command = if cd {
            format!("cd {outside} && {runner} {}", before.join(" "))
        } else {
            format!("{runner} {outside} {}", before.join(" "))
        };
        let effect = classify(&command).effect;
        prop_assert!(effect != Effect::ReadOnly, "{command} classified read-only");
    }
}
