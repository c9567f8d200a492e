//! What Paige knows of each program: which change files, which only read, which run another
//! command (wrappers, unwrapped), and which run code Paige cannot read (inline interpreter
//! code). Everything else is unknown. Used by `bash.rs` for every simple command.

use super::bash::{Arg, Scan};

/// Programs that only read files (or print).
#[rustfmt::skip]
const READ_ONLY: &[&str] = &[
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "pwd", "echo", "printf", "wc", "which",
    "whereis", "file", "stat", "tree", "diff", "cmp", "du", "df", "printenv", "date", "whoami", "id", "uname",
    "hostname", "ps", "type", "true", "false", "less", "more", "cut", "tr", "basename", "dirname", "realpath",
    "readlink", "jq", "test", "[", "nl", "od", "xxd", "hexdump", "strings", "md5sum", "sha1sum", "sha256sum",
    "sha512sum", "b2sum", "cksum", "column", "fold", "paste", "join", "comm", "rev", "tac", "seq", "sleep",
    "locale", "expr", "cd", "pushd", "popd", "dirs", "export", "set", "unset", "alias", "unalias", "read", "shift",
    "local", "declare", "typeset", "wait", "trap", "umask", "exit", "return", "break", "continue", ":", "man",
    "help", "history", "hash", "getconf", "nproc", "free", "uptime", "lsof", "pgrep", "tput", "clear", "fc-list",
    "pytest", "jest", "vitest", "mocha", "bat", "fd", "fdfind", "delta", "shellcheck", "yes", "numfmt", "lscpu",
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

/// Interpreters: inline code (`-c`, `-e`) or code on stdin is code Paige cannot check.
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("python3", &["-c"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("deno", &["eval"]),
    ("bun", &["-e", "--eval"]),
    ("ruby", &["-e"]),
    ("perl", &["-e", "-E"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("Rscript", &["-e"]),
    ("osascript", &["-e"]),
];

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "ash", "fish"];

#[rustfmt::skip]
const GIT_READ_ONLY: &[&str] = &[
    "status", "log", "diff", "show", "blame", "rev-parse", "ls-files", "ls-tree", "grep", "describe", "shortlog",
    "cat-file", "rev-list", "reflog", "whatchanged", "version", "help", "name-rev", "merge-base", "for-each-ref",
    "show-ref", "count-objects", "check-ignore", "annotate", "range-diff",
];
#[rustfmt::skip]
const GIT_MUTATING: &[&str] = &[
    "apply", "checkout", "restore", "reset", "stash", "merge", "pull", "rebase", "cherry-pick", "revert", "am",
    "clean", "mv", "rm", "switch", "init", "clone", "submodule", "worktree", "format-patch", "archive",
    "filter-branch", "sparse-checkout", "bisect",
];
#[rustfmt::skip]
const CARGO_READ_ONLY: &[&str] = &[
    "check", "test", "t", "build", "b", "clippy", "doc", "d", "bench", "tree", "metadata", "nextest", "version",
    "search", "locate-project", "pkgid", "verify-project", "help", "c", "--version", "-V", "--list", "audit",
];
#[rustfmt::skip]
const CARGO_MUTATING: &[&str] = &["fmt", "fix", "add", "remove", "rm", "new", "init"];

pub(super) fn classify(scan: &mut Scan, name: &str, args: &[Arg]) {
    let lit: Vec<&str> = args.iter().map(|a| a.as_deref().unwrap_or("\u{0}")).collect();
    let has = |flag: &str| lit.iter().any(|a| *a == flag || a.starts_with(&format!("{flag}=")));
    let short = |letter: char| lit.iter().any(|a| is_short_cluster(a) && a[1..].contains(letter));
    match name {
        // Wrappers: the command they run decides.
        "env" => env(scan, args),
        "nice" | "ionice" | "chrt" | "taskset" | "stdbuf" => {
            scan.nested_run(skip_options(args, &["-n", "-c", "-o", "-e", "-i", "-t"]))
        }
        "timeout" => {
            let rest = skip_options(args, &["-s", "-k", "--signal", "--kill-after"]);
            scan.nested_run(rest.get(1..).unwrap_or(&[]));
        }
        "nohup" | "setsid" | "daemonize" => {
            scan.leaves_running();
            scan.nested_run(skip_options(args, &[]));
        }
        "disown" => scan.leaves_running(),
        "command" | "builtin" | "exec" | "time" | "sudo" | "doas" | "caffeinate" | "unbuffer" => {
            if name == "command" && (short('v') || short('V')) {
                return;
            }
            scan.nested_run(skip_options(args, &["-u", "-g", "-C", "-h", "-p", "-a"]));
        }
        "xargs" => {
            let rest = skip_options(
                args,
                &["-n", "-I", "-i", "-L", "-l", "-P", "-d", "-a", "-E", "-e", "-s", "--max-args", "--delimiter"],
            );
            scan.nested_run(rest);
        }
        "watch" => scan.nested_run(skip_options(args, &["-n", "-d", "--interval"])),
        _ if SHELLS.contains(&name) => shell(scan, name, args),
        "eval" => {
            let text = args.iter().cloned().collect::<Option<Vec<String>>>().map(|w| w.join(" "));
            scan.nested_source(&text, "eval");
        }
        "source" | "." => scan.unknown(format!("`{name}` runs a script")),
        _ if interpreter(name).is_some() => interpreted(scan, name, &lit),

        // Programs whose options decide.
        "sed" => {
            if short('i') || has("--in-place") {
                scan.mutating("`sed -i` edits files in place");
            } else if lit.iter().any(|a| sed_script_writes(a)) {
                scan.mutating("a sed script that writes files or runs commands");
            }
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            if has("--inplace") || lit.windows(2).any(|w| w[0] == "-i" && w[1] == "inplace") {
                scan.mutating("`awk -i inplace` edits files in place");
            } else if lit
                .iter()
                .any(|a| !a.starts_with('-') && (a.contains('>') || a.contains("system") || a.contains('|')))
            {
                scan.mutating("an awk program that writes files or runs commands");
            } else if short('f') {
                scan.unknown("an awk program from a file");
            }
        }
        "find" => find(scan, args, &lit),
        "sort" => {
            if short('o') || has("--output") {
                scan.mutating("`sort -o` writes a file");
            }
        }
        "uniq" => {
            let operands = operands(&lit, &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"]);
            if operands.len() >= 2 {
                scan.mutating(format!("`uniq` writes its output into {}", operands[1]));
            }
        }
        "tee" => {
            if operands(&lit, &[]).iter().any(|f| !is_device(f)) {
                scan.mutating("`tee` writes files");
            }
        }
        "dd" => {
            if lit.iter().any(|a| a.strip_prefix("of=").is_some_and(|f| !is_device(f))) {
                scan.mutating("`dd of=` writes a file");
            }
        }
        "curl" => {
            if has("--output") || has("--remote-name") || has("--remote-name-all") || short('o') || short('O') {
                scan.mutating("`curl -o` writes a file");
            }
        }
        "prettier" if short('w') || has("--write") => scan.mutating("`prettier --write` rewrites files"),
        "eslint" | "ruff" | "biome" if has("--fix") || has("--write") || lit.first() == Some(&"format") => {
            scan.mutating(format!("`{name}` rewrites files"))
        }
        // Without a fix or write flag these only check; `tsc` writes its output unless told not to.
        "prettier" | "eslint" | "ruff" | "biome" => {}
        "tsc" if has("--noEmit") => {}
        "git" => git(scan, &lit),
        "cargo" => cargo(scan, &lit),
        "npm" | "pnpm" | "yarn" => package_manager(scan, name, &lit),
        "go" => match lit.iter().find(|a| !a.starts_with('-')).copied() {
            Some("test" | "vet" | "version" | "env" | "list" | "doc") => {}
            Some("fmt" | "get" | "generate" | "mod" | "fix" | "work" | "install") => {
                scan.mutating(format!("`go {}` changes files", lit[0]))
            }
            _ => scan.unknown("`go`"),
        },
        _ if MUTATING.contains(&name) => scan.mutating(format!("`{name}` changes files")),
        _ if READ_ONLY.contains(&name) => {}
        _ => scan.unknown(format!("`{name}`")),
    }
}

/// `-x` or `-xyz`, not `--long` and not `-` alone.
fn is_short_cluster(arg: &str) -> bool {
    arg.len() > 1 && arg.starts_with('-') && !arg.starts_with("--")
}

fn is_device(path: &str) -> bool {
    matches!(path, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "-")
}

/// The arguments after the leading options (`takes_value` options consume the next one),
/// and after `--`.
fn skip_options<'a>(args: &'a [Arg], takes_value: &[&str]) -> &'a [Arg] {
    let mut i = 0;
    while let Some(Some(arg)) = args.get(i) {
        if arg == "--" {
            return &args[i + 1..];
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        i += if takes_value.contains(&arg.as_str()) { 2 } else { 1 };
    }
    args.get(i..).unwrap_or(&[])
}

/// The non-option arguments.
fn operands<'a>(lit: &[&'a str], takes_value: &[&str]) -> Vec<&'a str> {
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

fn env(scan: &mut Scan, args: &[Arg]) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(arg) = arg else { return scan.unknown("`env` with a computed argument") };
        match arg.as_str() {
            "-S" | "--split-string" => return scan.nested_source(&args.get(i + 1).cloned().flatten(), "env -S"),
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            "--" => {
                i += 1;
                break;
            }
            a if a.starts_with("--split-string=") => {
                return scan.nested_source(&Some(a["--split-string=".len()..].to_owned()), "env -S");
            }
            a if a.starts_with('-') => i += 1,
            a if a.contains('=') => i += 1,
            _ => break,
        }
    }
    while args.get(i).is_some_and(|a| a.as_deref().is_some_and(|a| a.contains('=') && !a.starts_with('-'))) {
        i += 1;
    }
    scan.nested_run(args.get(i..).unwrap_or(&[]));
}

fn shell(scan: &mut Scan, name: &str, args: &[Arg]) {
    for (i, arg) in args.iter().enumerate() {
        let Some(arg) = arg else { break };
        if is_short_cluster(arg) && arg.contains('c') {
            return scan.nested_source(&args.get(i + 1).cloned().flatten(), &format!("`{name} -c`"));
        }
        if !arg.starts_with('-') {
            return scan.unknown(format!("`{name}` runs the script {arg}"));
        }
    }
    scan.mutating(format!("`{name}` runs commands from its input, which Paige cannot check"));
}

fn interpreter(name: &str) -> Option<&'static [&'static str]> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let base = if base.is_empty() { name } else { base };
    INTERPRETERS.iter().find(|(n, _)| *n == name || *n == base).map(|(_, flags)| *flags)
}

fn interpreted(scan: &mut Scan, name: &str, lit: &[&str]) {
    let inline = interpreter(name).unwrap_or(&[]);
    if lit.iter().any(|a| matches!(*a, "--version" | "-V" | "--help" | "-h")) && lit.len() == 1 {
        return;
    }
    if name.starts_with("perl") && lit.iter().any(|a| is_short_cluster(a) && a[1..].contains('i')) {
        return scan.mutating("`perl -i` edits files in place");
    }
    let runs_inline = lit.iter().any(|a| {
        inline.contains(a)
            || inline.iter().any(|f| f.len() == 2 && is_short_cluster(a) && a.ends_with(&f[1..]) && a.len() <= 4)
    });
    if runs_inline {
        return scan.mutating(format!(
            "`{name}` runs inline code, which Paige cannot check; write it in a file the learner can read"
        ));
    }
    match lit.iter().position(|a| *a == "-m") {
        Some(i) if matches!(lit.get(i + 1).copied(), Some("pytest" | "unittest" | "doctest" | "mypy" | "pydoc")) => {}
        Some(i) if matches!(lit.get(i + 1).copied(), Some("pip" | "black" | "isort" | "autopep8")) => {
            scan.mutating(format!("`{name} -m {}` changes files", lit[i + 1]))
        }
        Some(_) => scan.unknown(format!("`{name} -m`")),
        None if lit.iter().all(|a| a.starts_with('-')) => {
            scan.mutating(format!("`{name}` runs code from its input, which Paige cannot check"))
        }
        None => scan.unknown(format!("`{name}` runs a script")),
    }
}

/// A sed script with a `w`/`W` (write a file) or `e` (run a command) command, or the `w`
/// flag of `s`.
fn sed_script_writes(script: &str) -> bool {
    script.split([';', '\n', '{', '}']).any(|command| {
        let command = command.trim_start().trim_start_matches(|c: char| c.is_ascii_digit() || c == ',' || c == '$');
        let command = skip_address(command).trim_start().trim_start_matches('!').trim_start();
        if command.starts_with(['w', 'W', 'e']) {
            return true;
        }
        command.strip_prefix('s').is_some_and(s_flags_write)
    })
}

/// Skips a `/regex/` address.
fn skip_address(command: &str) -> &str {
    match command.strip_prefix('/') {
        Some(rest) => rest.find('/').map(|i| &rest[i + 1..]).unwrap_or(""),
        None => command,
    }
}

/// `s/a/b/FLAGS`: true when FLAGS has `w` (write) or `e` (execute).
fn s_flags_write(rest: &str) -> bool {
    let mut chars = rest.chars();
    let Some(delim) = chars.next() else { return false };
    if delim.is_alphanumeric() || delim.is_whitespace() {
        return false;
    }
    let mut seen = 0;
    let mut escaped = false;
    let mut flags = String::new();
    for c in chars {
        if seen == 2 {
            flags.push(c);
            continue;
        }
        match c {
            '\\' if !escaped => escaped = true,
            c if c == delim && !escaped => seen += 1,
            _ => escaped = false,
        }
    }
    flags.split_whitespace().next().is_some_and(|f| f.contains(['w', 'e']))
}

fn find(scan: &mut Scan, args: &[Arg], lit: &[&str]) {
    for (i, arg) in lit.iter().enumerate() {
        match *arg {
            "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                return scan.mutating(format!("`find {arg}` changes files"));
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = lit[i + 1..].iter().position(|a| *a == ";" || *a == "+").map_or(lit.len(), |e| i + 1 + e);
                scan.nested_run(&args[i + 1..end]);
            }
            _ => {}
        }
    }
}

fn git(scan: &mut Scan, lit: &[&str]) {
    let mut i = 0;
    while let Some(arg) = lit.get(i) {
        match *arg {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = lit.get(i).copied() else { return };
    let rest = &lit[i + 1..];
    let writes_output = rest.iter().any(|a| a.starts_with("--output") || *a == "-o");
    match sub {
        "stash" if matches!(rest.first().copied(), Some("list" | "show")) => {}
        "branch" | "tag" | "remote"
            if rest.iter().all(|a| a.starts_with('-') && !matches!(*a, "-d" | "-D" | "-m" | "-M" | "-f")) => {}
        "config" if rest.iter().any(|a| matches!(*a, "--get" | "--list" | "-l" | "--get-all")) => {}
        _ if GIT_READ_ONLY.contains(&sub) && !writes_output => {}
        _ if GIT_READ_ONLY.contains(&sub) => scan.mutating(format!("`git {sub} --output` writes a file")),
        _ if GIT_MUTATING.contains(&sub) => scan.mutating(format!("`git {sub}` changes the learner's files")),
        _ => scan.unknown(format!("`git {sub}`")),
    }
}

fn cargo(scan: &mut Scan, lit: &[&str]) {
    let sub = lit.iter().copied().find(|a| !a.starts_with('-') && !a.starts_with('+'));
    let Some(sub) = sub else { return };
    let fixes = lit.iter().any(|a| matches!(*a, "--fix" | "--allow-dirty"));
    match sub {
        "fmt" if lit.contains(&"--check") => {}
        _ if CARGO_MUTATING.contains(&sub) || fixes => {
            scan.mutating(format!("`cargo {sub}` changes the learner's files"))
        }
        _ if CARGO_READ_ONLY.contains(&sub) => {}
        _ => scan.unknown(format!("`cargo {sub}`")),
    }
}

fn package_manager(scan: &mut Scan, name: &str, lit: &[&str]) {
    let sub = lit.iter().copied().find(|a| !a.starts_with('-'));
    let packages = lit.iter().skip(1).filter(|a| !a.starts_with('-')).count();
    match sub {
        Some(
            "test" | "t" | "tst" | "ls" | "list" | "view" | "info" | "outdated" | "why" | "explain" | "help" | "bin"
            | "root" | "prefix" | "config" | "--version" | "-v",
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
