//! Interpreters run code Paige cannot read: a script, inline code (`-c`, `-e`), code from
//! their input, a module named on the command line (`python3 -m doctest FILE` runs the
//! examples in any file, `/proc/self/cmdline` included; `-m unittest NAME` imports what it
//! names), or code a flag loads (`node --require`, `ruby -r`, `perl -M`). None of these is
//! read-only. Only a version or help query is, and `python -m pytest`, which runs the
//! learner's own tests (`dev::test_runner` checks what its arguments name).

use super::{Runner, is_short_cluster, long_is};

/// An interpreter's inline-code flags and the flags that load code from a file or module.
struct Interpreter {
    name: &'static str,
    inline: &'static [&'static str],
    loads: &'static [&'static str],
}

#[rustfmt::skip]
const INTERPRETERS: &[Interpreter] = &[
    Interpreter { name: "python", inline: &["-c"], loads: &["-m"] },
    Interpreter { name: "pypy", inline: &["-c"], loads: &["-m"] },
    Interpreter { name: "node", inline: &["-e", "--eval", "-p", "--print"],
        loads: &["-r", "--require", "--import", "--loader", "--experimental-loader", "--test"] },
    Interpreter { name: "nodejs", inline: &["-e", "--eval", "-p", "--print"],
        loads: &["-r", "--require", "--import", "--loader", "--experimental-loader", "--test"] },
    Interpreter { name: "deno", inline: &["eval"], loads: &["run", "test", "task", "repl", "--import-map"] },
    Interpreter { name: "bun", inline: &["-e", "--eval", "-p", "--print"], loads: &["-r", "--preload", "run", "test", "x"] },
    Interpreter { name: "ruby", inline: &["-e"], loads: &["-r", "-I"] },
    Interpreter { name: "perl", inline: &["-e", "-E"], loads: &["-M", "-m", "-I", "-d"] },
    Interpreter { name: "php", inline: &["-r", "-B", "-R", "-E", "-F"], loads: &["-f", "-d", "-S"] },
    Interpreter { name: "lua", inline: &["-e"], loads: &["-l"] },
    Interpreter { name: "luajit", inline: &["-e"], loads: &["-l"] },
    Interpreter { name: "Rscript", inline: &["-e"], loads: &[] },
    Interpreter { name: "osascript", inline: &["-e"], loads: &[] },
];

/// Modules `python -m` runs that change files.
const PYTHON_WRITERS: &[&str] = &["pip", "black", "isort", "autopep8"];

/// `python` options that only tune the interpreter (before `-m pytest`): quiet, unbuffered,
/// no bytecode, isolated. `-i` (a prompt reading stdin afterwards), `-x` and unknown ones are
/// not among them.
const PYTHON_FLAGS: &str = "BbqusEIPOSdv";

/// `-X` options that change no file and load no code.
#[rustfmt::skip]
const PYTHON_X: &[&str] = &["dev", "utf8", "importtime", "faulthandler", "warn_default_encoding",
    "no_debug_ranges", "tracemalloc", "int_max_str_digits", "frozen_modules"];

fn find(name: &str) -> Option<&'static Interpreter> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = if base.is_empty() { name } else { base };
    INTERPRETERS.iter().find(|i| i.name == name || i.name == base)
}

pub(super) fn is_interpreter(name: &str) -> bool {
    find(name).is_some()
}

pub(super) fn classify(scan: &mut impl Runner, name: &str, lit: &[&str]) {
    let Some(spec) = find(name) else { return scan.unknown(format!("`{name}`")) };
    if lit.len() == 1 && matches!(lit[0], "--version" | "-V" | "--help" | "-h") {
        return;
    }
    if spec.name == "perl" && lit.iter().any(|a| perl_in_place(a)) {
        return scan.mutating("`perl -i` edits files in place");
    }
    if lit.contains(&"\u{0}") {
        return scan.unknown(format!("`{name}` with an argument computed as it runs"));
    }
    if matches!(spec.name, "python" | "pypy") {
        return python(scan, name, lit);
    }
    if let Some(flag) = lit.iter().find(|a| is_inline(spec, a)) {
        return inline(scan, name, flag);
    }
    if let Some(flag) = lit.iter().find(|a| loads(spec, a)) {
        return scan.unknown(format!("`{name} {flag}` loads code Paige cannot check"));
    }
    match lit.iter().find(|a| !a.starts_with('-')) {
        Some(script) => scan.unknown(format!("`{name}` runs the script {script}, which Paige cannot check")),
        None => scan.mutating(format!("`{name}` runs code from its input, which Paige cannot check")),
    }
}

/// `-i` in a perl cluster (`-pi`, `-i.bak`), not inside a value (`-Mstrict`, `-e'if'`).
fn perl_in_place(arg: &str) -> bool {
    is_short_cluster(arg) && arg[1..].chars().take_while(|c| !"MmIeEdDxCFV".contains(*c)).any(|c| c == 'i')
}

fn inline(scan: &mut impl Runner, name: &str, flag: &str) {
    scan.mutating(format!(
        "`{name} {flag}` runs inline code, which Paige cannot check; write it in a file the learner can read"
    ));
}

/// `-e`, `--eval`, `--eval=…`, `-pe` (a cluster ending in the flag), `-cCODE` (the code attached).
fn is_inline(spec: &Interpreter, arg: &str) -> bool {
    spec.inline.iter().any(|f| {
        arg == *f
            || (f.starts_with("--") && long_is(arg, &f[2..]) && arg.len() > 3)
            || (f.len() == 2
                && f.starts_with('-')
                && is_short_cluster(arg)
                && (arg.starts_with(f) || (arg.ends_with(&f[1..]) && arg.len() <= 4)))
    })
}

/// `-r x`, `-rx`, `--require=x`, and a cluster holding a loading letter (`-Mstrict`).
fn loads(spec: &Interpreter, arg: &str) -> bool {
    spec.loads.iter().any(|f| {
        arg == *f
            || (f.starts_with("--") && arg.starts_with(&format!("{f}=")))
            || (f.len() == 2 && f.starts_with('-') && is_short_cluster(arg) && arg.starts_with(f))
    })
}

/// Python's options as CPython reads them: letters cluster (`-Im doctest`, `-mdoctest`),
/// `-c`/`-m` end the options and take the rest of the cluster or the next word, `-W`/`-X`
/// take a value the same way.
fn python(scan: &mut impl Runner, name: &str, lit: &[&str]) {
    let mut odd: Option<String> = None;
    let mut i = 0;
    while let Some(arg) = lit.get(i).copied() {
        i += 1;
        if arg == "--" {
            break;
        }
        if arg == "-" || !arg.starts_with('-') {
            i -= 1;
            break;
        }
        if arg.starts_with("--") {
            if long_is(arg, "check-hash-based-pycs") && !arg.contains('=') {
                i += 1;
            }
            odd.get_or_insert_with(|| arg.to_owned());
            continue;
        }
        for (at, c) in arg.char_indices().skip(1) {
            let rest = &arg[at + c.len_utf8()..];
            let mut value = || {
                if rest.is_empty() {
                    i += 1;
                    lit.get(i - 1).copied().unwrap_or("")
                } else {
                    rest
                }
            };
            match c {
                'c' => return inline(scan, name, arg),
                'm' => {
                    let module_name = value();
                    return module(scan, name, module_name, lit.get(i..).unwrap_or(&[]), odd);
                }
                'W' => {
                    let v = value();
                    if warning_imports(v) {
                        odd.get_or_insert_with(|| format!("-W {v}"));
                    }
                    break;
                }
                'X' => {
                    let v = value();
                    if !PYTHON_X.contains(&v.split('=').next().unwrap_or(v)) {
                        odd.get_or_insert_with(|| format!("-X {v}"));
                    }
                    break;
                }
                _ if PYTHON_FLAGS.contains(c) => {}
                _ => {
                    odd.get_or_insert_with(|| format!("-{c}"));
                }
            }
        }
    }
    match lit.get(i) {
        Some(script) if *script != "-" => {
            scan.unknown(format!("`{name}` runs the script {script}, which Paige cannot check"))
        }
        _ => scan.mutating(format!("`{name}` runs code from its input, which Paige cannot check")),
    }
}

/// `python -m MODULE ARGS`: pytest runs the learner's tests; any other module runs code
/// Paige cannot check (its own, or what its arguments name: `doctest FILE`, `unittest NAME`,
/// `pdb`, `runpy`, `trace`, `cProfile`, `timeit`, `code`, ...).
fn module(scan: &mut impl Runner, name: &str, module: &str, rest: &[&str], odd: Option<String>) {
    match module {
        "pytest" | "py.test" => match odd {
            Some(flag) => scan.unknown(format!("`{name} {flag} -m pytest`, an interpreter option Paige does not know")),
            None => super::dev::test_runner(scan, "pytest", rest),
        },
        _ if PYTHON_WRITERS.contains(&module) => scan.mutating(format!("`{name} -m {module}` changes files")),
        "" => scan.unknown(format!("`{name} -m` without a module")),
        _ => scan.unknown(format!(
            "`{name} -m {module}` runs code that the module or its arguments name, which Paige cannot check"
        )),
    }
}

/// A warnings filter (`action:message:category:module:lineno`) whose category is dotted:
/// Python imports that module to find the class.
pub(super) fn warning_imports(filter: &str) -> bool {
    filter.split(':').nth(2).is_some_and(|category| category.contains('.'))
}
