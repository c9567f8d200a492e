//! Programs that run another command (`env`, `nice`, `timeout`, `xargs`, `sudo`, ...) and
//! shells (interpreters are `interpreters.rs`). A wrapper's options are read exactly: an
//! option Paige does not know for it (`time --output=f`, `env --split-s='rm a'`) is not
//! skipped over but unknown.

use super::{Arg, Opts, Runner, is_short_cluster, leaves_project, long_is};

/// A wrapper's options: those without a value, those with one (next argument or attached),
/// and how many operands come before the command (`timeout DURATION cmd`).
struct Wrapper {
    flags: &'static [&'static str],
    valued: &'static [&'static str],
    operands: usize,
}

fn wrapper_options(name: &str) -> Option<Wrapper> {
    let w = |flags, valued, operands| Some(Wrapper { flags, valued, operands });
    match name {
        "nice" => w(&[], &["-n", "--adjustment"], 0),
        "ionice" => w(&["-t", "--ignore"], &["-c", "-n", "--class", "--classdata"], 0),
        "chrt" => {
            w(&["-b", "-d", "-f", "-i", "-o", "-r", "-R", "--batch", "--fifo", "--idle", "--other", "--rr"], &[], 1)
        }
        "taskset" => w(&["-a", "--all-tasks"], &["-c", "--cpu-list"], 1),
        "stdbuf" => w(&[], &["-i", "-o", "-e", "--input", "--output", "--error"], 0),
        "timeout" => {
            w(&["--preserve-status", "--foreground", "-v", "--verbose"], &["-s", "-k", "--signal", "--kill-after"], 1)
        }
        "nohup" | "caffeinate" | "unbuffer" | "builtin" => w(&[], &[], 0),
        "setsid" => w(&["-c", "-f", "-w", "--ctty", "--fork", "--wait"], &[], 0),
        "command" => w(&["-p"], &[], 0),
        "exec" => w(&["-c", "-l"], &["-a"], 0),
        "time" => w(&["-p", "-v", "-q", "--portability", "--verbose", "--quiet"], &["-f", "--format"], 0),
        "sudo" | "doas" => {
            w(&["-E", "-H", "-n", "-P", "-S", "-b", "-k", "-K"], &["-u", "-g", "-C", "-h", "-p", "-U", "-T"], 0)
        }
        _ => None,
    }
}

pub(super) fn is_wrapper(name: &str) -> bool {
    wrapper_options(name).is_some()
}

pub(super) fn wrapper(scan: &mut impl Runner, name: &str, args: &[Arg], o: &Opts) {
    if name == "command" && (o.short('v') || o.short('V')) {
        return;
    }
    if matches!(name, "nohup" | "setsid") {
        scan.leaves_running();
    }
    let Some(spec) = wrapper_options(name) else { return };
    let mut i = 0;
    while let Some(Some(arg)) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if name == "nice" && is_short_cluster(arg) && arg[1..].bytes().all(|b| b.is_ascii_digit()) {
            i += 1; // `nice -10 cmd`
            continue;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        let (flag, attached) = match arg.split_once('=') {
            Some((f, _)) if f.starts_with("--") => (f, true),
            _ => (arg.as_str(), false),
        };
        let long = |list: &[&str]| {
            flag.starts_with("--") && list.iter().any(|f| f.starts_with("--") && long_is(flag, &f[2..]))
        };
        if spec.flags.contains(&flag) || long(spec.flags) {
            i += 1;
        } else if spec.valued.contains(&flag) || long(spec.valued) {
            // `nice -n $N ls`: the value may split into a number and a command.
            if !attached && args.get(i + 1).is_some_and(Option::is_none) {
                return scan.unknown(format!("`{name} {flag}` with a computed value"));
            }
            i += if attached { 1 } else { 2 };
        } else if is_short_cluster(flag) && spec.valued.contains(&&flag[..2]) {
            i += 1; // `-n10`: the value attached
        } else if name == "time" && (long_is(flag, "output") || long_is(flag, "append") || flag.starts_with("-o")) {
            return scan.mutating("`time -o` writes a file");
        } else {
            return scan.unknown(format!("`{name} {flag}`, an option Paige does not know"));
        }
    }
    let rest = args.get(i..).unwrap_or(&[]);
    // `timeout $T ls`: an unquoted expansion may split into a duration and a command.
    if rest.iter().take(spec.operands).any(Option::is_none) {
        return scan.unknown(format!("`{name}` with a computed argument"));
    }
    scan.nested_run(rest.get(spec.operands..).unwrap_or(&[]));
}

pub(super) fn env(scan: &mut impl Runner, args: &[Arg]) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(arg) = arg else { return scan.unknown("`env` with a computed argument") };
        let next = || args.get(i + 1).cloned().flatten();
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        if name == "--" {
            i += 1;
            break;
        } else if name.starts_with("--") {
            let valued = ["split-string", "unset", "chdir", "argv0"].into_iter().find(|f| long_is(name, f));
            if valued == Some("split-string") {
                return scan.nested_source(&value.or_else(next), "env -S");
            }
            let optional = ["default-signal", "ignore-signal", "block-signal"];
            let flags = ["ignore-environment", "null", "debug", "list-signal-handling"];
            if valued == Some("chdir") && value.clone().or_else(next).is_none_or(|dir| leaves_project(&dir)) {
                scan.left_project();
            }
            if valued.is_some() {
                i += if value.is_some() { 1 } else { 2 };
            } else if optional.iter().chain(&flags).any(|f| long_is(name, f)) {
                i += 1;
            } else {
                return scan.unknown(format!("`env {name}`, an option Paige does not know"));
            }
        } else if is_short_cluster(name) {
            // `-iS'cmd'`, `-u NAME`: a valued letter takes the rest of the cluster or the next word.
            let mut step = 1;
            for (at, c) in name.char_indices().skip(1) {
                match c {
                    'i' | '0' | 'v' => {}
                    'S' | 'u' | 'C' | 'a' => {
                        let rest = &name[at + 1..];
                        if c == 'S' {
                            let text = if rest.is_empty() { next() } else { Some(rest.to_owned()) };
                            return scan.nested_source(&text, "env -S");
                        }
                        let dir = if rest.is_empty() { next() } else { Some(rest.to_owned()) };
                        if c == 'C' && dir.is_none_or(|dir| leaves_project(&dir)) {
                            scan.left_project(); // `env -C /tmp pytest`
                        }
                        step = if rest.is_empty() { 2 } else { 1 };
                        break;
                    }
                    _ => return scan.unknown(format!("`env {name}`, an option Paige does not know")),
                }
            }
            i += step;
        } else if name == "-" {
            i += 1;
        } else if let Some((var, value)) = name.split_once('=') {
            super::vars::assignment(scan, var, &Some(value.to_owned()));
            i += 1;
        } else {
            break;
        }
    }
    scan.nested_run(args.get(i..).unwrap_or(&[]));
}

/// `xargs cmd`: the command gets words from the input too, which may be options (`xargs
/// sort` with `-o f` on stdin); a computed word stands for them.
pub(super) fn xargs(scan: &mut impl Runner, args: &[Arg]) {
    #[rustfmt::skip]
    let valued = ["-n", "-I", "-i", "-L", "-l", "-P", "-d", "-a", "-E", "-e", "-s", "--max-args", "--delimiter"];
    let mut i = 0;
    while let Some(Some(arg)) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            break;
        }
        i += if valued.contains(&arg.as_str()) { 2 } else { 1 };
    }
    let mut words: Vec<Arg> = args.get(i..).unwrap_or(&[]).to_vec();
    if !words.is_empty() {
        words.push(None);
    }
    scan.nested_run(&words);
}

/// `watch CMD...`: run through `sh -c` with its words joined (`-x`: exec'd as words).
pub(super) fn watch(scan: &mut impl Runner, args: &[Arg]) {
    let mut i = 0;
    let mut exec = false;
    while let Some(Some(arg)) = args.get(i) {
        match arg.as_str() {
            "-n" | "-d" | "--interval" | "-q" | "--equexit" => i += 2,
            "-x" | "--exec" => {
                exec = true;
                i += 1
            }
            a if a.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let rest = args.get(i..).unwrap_or(&[]);
    if exec {
        return scan.nested_run(rest);
    }
    let text = rest.iter().cloned().collect::<Option<Vec<String>>>().map(|w| w.join(" "));
    scan.nested_source(&text, "watch");
}

pub(super) fn shell(scan: &mut impl Runner, name: &str, args: &[Arg]) {
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
