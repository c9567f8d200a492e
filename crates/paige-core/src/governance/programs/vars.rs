//! Variables that make programs run commands, and builtins that store commands for later.
//!
//! `GIT_PAGER='rm a' git -p log`, `LESSOPEN`, `PATH=.:$PATH ls`, `CARGO_TARGET_…_RUNNER`,
//! `RUSTFLAGS='-C linker=…'`, `npm_config_script_shell`: a variable set for a command, exported,
//! or assigned in the shell (which exports it when it already was) can make a read-only
//! program run something else. Only a few variables are known harmless; setting any other
//! upper-case variable is not read-only. Lower-case names are the shell's own by convention
//! (npm's `npm_config_*` excepted).

use super::{Arg, Runner, is_short_cluster};

/// Variables known to change no program's choice of what to run or write.
#[rustfmt::skip]
const HARMLESS: &[&str] = &[
    "RUST_LOG", "RUST_BACKTRACE", "RUST_LIB_BACKTRACE", "RUST_TEST_THREADS", "RUST_TEST_NOCAPTURE",
    "RUST_MIN_STACK", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS", "LINES",
    "LANG", "LANGUAGE", "TZ", "CI", "NODE_ENV", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED",
    "CARGO_TERM_COLOR", "CARGO_TERM_VERBOSE", "CARGO_TERM_QUIET", "CARGO_BUILD_JOBS", "CARGO_INCREMENTAL",
    "GIT_TERMINAL_PROMPT", "TIME_STYLE", "GREP_COLORS", "LS_COLORS",
];

/// Pagers: harmless only as `cat` or empty.
const PAGERS: &[&str] = &["PAGER", "GIT_PAGER", "MANPAGER", "BAT_PAGER", "DELTA_PAGER", "SYSTEMD_PAGER"];

/// Variables that name a command or code to run, or where programs and config come from.
#[rustfmt::skip]
const RUNS: &[&str] = &[
    "PAGER", "GIT_PAGER", "MANPAGER", "BAT_PAGER", "DELTA_PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL",
    "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
    "SSH_ASKPASS", "GIT_EXEC_PATH", "GIT_DIR", "GIT_WORK_TREE", "LESSOPEN", "LESSCLOSE", "LESS", "LESSKEY",
    "BROWSER", "PS4", "PROMPT_COMMAND", "BASH_ENV", "ENV", "PATH", "HOME", "SHELL", "RIPGREP_CONFIG_PATH",
    "NODE_OPTIONS", "PYTHONPATH", "PYTHONSTARTUP", "RUSTFLAGS", "RUSTDOCFLAGS", "RUSTC", "RUSTC_WRAPPER",
    "RUSTDOC", "CC", "CXX", "LD", "MANOPT", "PYTEST_ADDOPTS", "GOFLAGS",
];
const RUNS_PREFIXES: &[&str] = &["GIT_CONFIG", "LD_", "CARGO_", "DYLD_", "NPM_CONFIG_", "YARN_", "BASH_FUNC_"];

/// A variable set for a command, exported, or assigned: `value` is its literal text.
pub(in crate::governance) fn assignment(scan: &mut impl Runner, name: &str, value: &Arg) {
    let upper = name.to_ascii_uppercase();
    if upper.starts_with("NPM_CONFIG_") || upper.starts_with("YARN_") {
        return scan.mutating(format!("sets {name}, which makes npm or yarn run another command"));
    }
    if name.chars().any(|c| c.is_ascii_lowercase()) || HARMLESS.contains(&name) || name.starts_with("LC_") {
        return;
    }
    if PAGERS.contains(&name) && matches!(value.as_deref(), Some("" | "cat")) {
        return;
    }
    if RUNS.contains(&name) || RUNS_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return scan.mutating(format!("sets {name}, which can make programs run a command Paige cannot check"));
    }
    scan.unknown(format!("sets {name}, a variable Paige does not know to be harmless"))
}

/// `export`, `declare`, `local`, `readonly`, `typeset`, `read`, `printf -v`: the names they
/// set. `NAME=value` words reach `assignment` from the parser (with `NAME` left here).
pub(super) fn setter(scan: &mut impl Runner, name: &str, lit: &[&str]) {
    if lit.contains(&"\u{0}") {
        return scan.unknown(format!("`{name}` with a computed argument"));
    }
    let names: Vec<&str> = match name {
        "printf" => lit.windows(2).filter(|w| w[0] == "-v").map(|w| w[1]).collect(),
        "read" => {
            let valued = ["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"];
            let mut out = Vec::new();
            let mut skip = false;
            for arg in lit {
                if std::mem::take(&mut skip) {
                    continue;
                }
                skip = valued.contains(arg);
                if !arg.starts_with('-') {
                    out.push(*arg);
                }
            }
            out
        }
        _ => lit.iter().filter(|a| !a.starts_with(['-', '+'])).copied().collect(),
    };
    for set in names {
        let (var, value) = set.split_once('=').map_or((set, None), |(n, v)| (n, Some(v.to_owned())));
        let var = var.trim_end_matches('+');
        let var = var.split_once('[').map_or(var, |(n, _)| n);
        // `export NAME` exports what the shell holds; a harmful value was flagged where set.
        if value.is_some() || name == "read" || name == "printf" {
            assignment(scan, var, &value);
        }
    }
}

/// Builtins that keep a command to run later, or write the history file.
pub(super) fn builtin(scan: &mut impl Runner, name: &str, lit: &[&str]) {
    match name {
        // `alias ls='rm -rf src'`: later lines (in the same `eval`) run the alias's text.
        "alias" => {
            for value in lit.iter().filter_map(|a| a.split_once('=').map(|(_, v)| v)) {
                scan.nested_source(&Some(value.to_owned()), "alias");
            }
        }
        // `trap 'rm a' EXIT`: the action runs when the shell exits.
        "trap" => {
            let args: Vec<&str> = lit.iter().copied().skip_while(|a| *a == "--").collect();
            match args.first() {
                None | Some(&("-p" | "-l" | "-P" | "-" | "")) => {}
                Some(_) if args.len() == 1 => {} // `trap SIG` resets
                Some(action) => scan.nested_source(&Some((*action).to_owned()), "trap"),
            }
        }
        // `hash -p /bin/rm ls`: `ls` then runs rm.
        "hash" if lit.iter().any(|a| is_short_cluster(a) && a.contains('p')) => {
            scan.unknown("`hash -p` makes a name run another program")
        }
        "history" if lit.iter().any(|a| is_short_cluster(a) && a.contains(['a', 'w', 'r', 'n', 's'])) => {
            scan.mutating("`history -a/-w` writes the history file")
        }
        _ => {}
    }
}
