//! What Paige knows of each program: which change files, which only read, which run another
//! command (wrappers, unwrapped), and which run code Paige cannot read (`interpreters.rs`:
//! scripts, inline code, `python -m` modules, loaded files). Everything else is unknown. Used
//! by `bash.rs` for every simple command.
//!
//! Developer tools run code they find where they run: a test runner, build tool or git given a
//! path outside the project (`pytest /tmp/t.py`, `git -C /tmp/r`), or run after a `cd` that
//! may leave it (`cd /tmp && pytest`, `env -C`, `find /tmp -execdir`), is not read-only.
//!
//! A program on the read-only list is read-only only as Paige calls it: options that write a
//! file or run a command (`sort -o`, `rg --pre`, `fd -x`, `git -c`, ...) are checked per
//! program, in every spelling GNU `getopt_long` accepts (`--outp=f` is `--output=f`), and a
//! program whose options matter is not read-only when an argument is computed as it runs
//! (`sort $F`: `$F` may be `-o file`). Variables that make programs run commands
//! (`GIT_PAGER`, `LESSOPEN`, `PATH`, ...) are checked where they are set (`vars.rs`).
//!
//! This module depends on nothing in `bash.rs`: the parser hands it words and a [`Runner`]
//! to report verdicts and to classify the commands it unwraps.

mod dev;
mod files;
mod interpreters;
mod text;
mod vars;
mod wrappers;

pub(super) use vars::assignment;

/// An argument: its text when it is a literal (quotes removed), `None` when it expands.
pub(super) type Arg = Option<String>;

/// What a program's classification reports to, and how it classifies what it runs.
pub(super) trait Runner {
    fn mutating(&mut self, why: impl Into<String>);
    /// Changes exactly these files (as named, relative to where the command runs).
    fn writes_files(&mut self, why: impl Into<String>, files: &[Arg]);
    fn unknown(&mut self, why: impl Into<String>);
    /// A command line given as text (`sh -c`, `eval`, `env -S`, `trap`, `alias`).
    fn nested_source(&mut self, text: &Arg, what: &str);
    /// A command given as words (`env cmd`, `xargs cmd`, `find -exec cmd`).
    fn nested_run(&mut self, words: &[Arg]);
    /// Leaves a process running after the call (`nohup`, `setsid`).
    fn leaves_running(&mut self);
    /// A `cd` (or `pushd`, `popd`) to a directory that may be outside the project.
    fn left_project(&mut self);
    /// Any `cd`: the files named after it are not where they read from the project.
    fn changed_directory(&mut self);
    /// Whether an earlier command in this one may have left the project.
    fn outside_project(&self) -> bool;
}

/// Programs that only read files (or print). Their options are checked where some write or
/// run commands (see `classify`).
#[rustfmt::skip]
const READ_ONLY: &[&str] = &[
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "pwd", "echo", "printf", "wc", "which",
    "whereis", "stat", "diff", "cmp", "du", "df", "printenv", "whoami", "id", "uname",
    "ps", "type", "true", "false", "cut", "tr", "basename", "dirname", "realpath",
    "readlink", "jq", "test", "[", "nl", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum",
    "sha512sum", "b2sum", "cksum", "column", "fold", "paste", "join", "comm", "rev", "tac", "seq", "sleep",
    "locale", "expr", "dirs", "set", "unset", "unalias", "shift",
    "wait", "umask", "exit", "return", "break", "continue", ":",
    "help", "getconf", "nproc", "free", "uptime", "lsof", "pgrep", "tput", "clear", "fc-list",
    "shellcheck", "yes", "numfmt", "lscpu",
];

/// Programs that create, change, delete or re-permission files.
#[rustfmt::skip]
const MUTATING: &[&str] = &[
    "rm", "rmdir", "unlink", "mv", "cp", "install", "ln", "chmod", "chown", "chgrp", "touch", "truncate", "mkdir",
    "mkfifo", "mknod", "shred", "patch", "rsync", "scp", "wget", "zip", "unzip", "gzip", "gunzip", "bzip2",
    "bunzip2", "xz", "unxz", "zstd", "split", "csplit", "ed", "ex", "vi", "vim", "nvim", "nano", "emacs", "code",
    "sponge", "mktemp", "setfacl", "chattr", "rename", "git-lfs", "gofmt", "rustfmt", "black", "isort", "autopep8",
    "clang-format", "dos2unix", "unix2dos", "pip", "pip3", "ar", "cpio", "tar",
];

/// Programs with options that write a file or run a command: an argument computed when the
/// command runs may be such an option (`sort $F`, `xargs sort`), so it is not read-only.
/// (Wrappers check their own: a computed word before the command they run is unknown.)
#[rustfmt::skip]
const OPTIONS_MATTER: &[&str] = &[
    "sort", "uniq", "sed", "awk", "gawk", "mawk", "nawk", "find", "rg", "ag", "fd", "fdfind", "bat", "delta",
    "xxd", "tree", "man", "file", "date", "hostname", "dd", "curl", "git", "cargo", "npm", "pnpm", "yarn", "go",
    "pytest", "jest", "vitest", "mocha", "prettier", "eslint", "ruff", "biome", "tsc", "diff", "alias",
    "trap", "hash", "history",
];

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "fish"];

pub(super) fn classify(scan: &mut impl Runner, name: &str, args: &[Arg]) {
    if OPTIONS_MATTER.contains(&name) && args.iter().any(Option::is_none) {
        return scan.unknown(format!(
            "`{name}` with an argument computed as it runs (it could be an option that writes a file or runs a command)"
        ));
    }
    let lit: Vec<&str> = args.iter().map(|a| a.as_deref().unwrap_or("\u{0}")).collect();
    let o = Opts(&lit);
    match name {
        // Wrappers: the command they run decides.
        "env" => wrappers::env(scan, args),
        "xargs" => wrappers::xargs(scan, args),
        "watch" => wrappers::watch(scan, args),
        "disown" => scan.leaves_running(),
        _ if wrappers::is_wrapper(name) => wrappers::wrapper(scan, name, args, &o),
        _ if SHELLS.contains(&name) => wrappers::shell(scan, name, args),
        "eval" => {
            let text = args.iter().cloned().collect::<Option<Vec<String>>>().map(|w| w.join(" "));
            scan.nested_source(&text, "eval");
        }
        "source" | "." => scan.unknown(format!("`{name}` runs a script")),
        "cd" | "pushd" | "popd" => change_directory(scan, name, args),
        _ if interpreters::is_interpreter(name) => interpreters::classify(scan, name, &lit),

        // Shell builtins that set variables or store commands.
        "export" | "declare" | "typeset" | "local" | "readonly" | "read" | "printf" => vars::setter(scan, name, &lit),
        "alias" | "trap" | "hash" | "history" => vars::builtin(scan, name, &lit),

        // Programs whose options decide.
        _ if text::handles(name) => text::classify(scan, name, &lit, &o),
        _ if dev::handles(name) => dev::classify(scan, name, &lit, &o),
        _ if MUTATING.contains(&name) => match files::named(name, args) {
            Some(files) => scan.writes_files(format!("`{name}` changes files"), &files),
            None => scan.mutating(format!("`{name}` changes files")),
        },
        _ if READ_ONLY.contains(&name) => {}
        _ => scan.unknown(format!("`{name}`")),
    }
}

/// `cd DIR`: a directory that may be outside the project (absolute, `..`, `~`, computed, the
/// home directory of a bare `cd`, the previous one of `cd -`, the stack of `pushd`/`popd`)
/// makes the developer tools run after it unknown: they run code found there (`conftest.py`,
/// `build.rs`, `.git/config`, `eslint.config.js`).
fn change_directory(scan: &mut impl Runner, name: &str, args: &[Arg]) {
    scan.changed_directory();
    let mut operands = args.iter().filter(|a| a.as_deref().is_none_or(|a| !is_short_cluster(a) && a != "--"));
    let dir = match (operands.next(), operands.next()) {
        (Some(Some(dir)), None) => Some(dir.as_str()),
        _ => None,
    };
    let inside = name != "popd" && dir.is_some_and(|d| d != "-" && !d.starts_with('+') && !leaves_project(d));
    if !inside {
        scan.left_project();
    }
}

/// A path that may lead out of the project: absolute, through `..`, or from home (`~`).
pub(super) fn leaves_project(path: &str) -> bool {
    path.starts_with(['/', '~']) || path.split('/').any(|part| part == "..") || path.contains('\u{0}')
}

/// A program's literal arguments, read as options.
pub(super) struct Opts<'a>(pub &'a [&'a str]);

impl Opts<'_> {
    /// `--name` or `--name=…`, in every abbreviation GNU `getopt_long` (and git's
    /// parse-options) accept: a prefix of the full name. An ambiguous prefix is an error in
    /// the program, so counting it here errs only towards "not read-only".
    pub fn long(&self, full: &str) -> bool {
        self.0.iter().any(|a| long_is(a, full))
    }

    /// `-x` alone or in a cluster (`-nx`). A cluster's letters may be an option's attached
    /// value (`-tx`): counted too, erring towards "not read-only".
    pub fn short(&self, letter: char) -> bool {
        self.0.iter().any(|a| is_short_cluster(a) && a[1..].contains(letter))
    }

    pub fn exact(&self, flag: &str) -> bool {
        self.0.contains(&flag)
    }
}

/// `arg` is `--NAME[=…]` with NAME a non-empty prefix of `full`.
pub(super) fn long_is(arg: &str, full: &str) -> bool {
    let Some(name) = arg.strip_prefix("--") else { return false };
    let name = name.split_once('=').map_or(name, |(n, _)| n);
    !name.is_empty() && full.starts_with(name)
}

/// `-x` or `-xyz`, not `--long` and not `-` alone.
pub(super) fn is_short_cluster(arg: &str) -> bool {
    arg.len() > 1 && arg.starts_with('-') && !arg.starts_with("--")
}

pub(super) fn is_device(path: &str) -> bool {
    matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-")
}

/// The non-option arguments (`takes_value` options consume the next one).
pub(super) fn operands<'a>(lit: &[&'a str], takes_value: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut skip = false;
    for arg in lit {
        if skip {
            skip = false;
        } else if takes_value.contains(arg) {
            skip = true;
        } else if !arg.starts_with('-') || *arg == "-" {
            out.push(*arg);
        }
    }
    out
}
