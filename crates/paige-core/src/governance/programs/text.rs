//! Text and file tools that read, except for options that write a file or run a command:
//! `sed -i`/`w`, `awk` redirections and `system`, `find -exec`, `sort -o`, `rg --pre`,
//! `fd -x`, `xxd` with an outfile, `tree -o`, `man -P`, `curl -o`, ...

use super::files::arg;
use super::{Arg, Opts, Runner, is_device, is_short_cluster, leaves_project, long_is, operands};

const HANDLED: &[&str] = &[
    "sed", "awk", "gawk", "mawk", "nawk", "find", "sort", "uniq", "tee", "dd", "xxd", "rg", "ag", "fd", "fdfind",
    "bat", "delta", "tree", "man", "file", "date", "hostname", "diff", "curl",
];

pub(super) fn handles(name: &str) -> bool {
    HANDLED.contains(&name)
}

pub(super) fn classify(scan: &mut impl Runner, name: &str, lit: &[&str], o: &Opts) {
    match name {
        "sed" => sed(scan, lit),
        "awk" | "gawk" | "mawk" | "nawk" => awk(scan, lit),
        "find" => find(scan, lit),
        "sort" if o.short('o') || o.long("output") => scan.mutating("`sort -o` writes a file"),
        "sort" if o.long("compress-program") => scan.mutating("`sort --compress-program` runs a program"),
        "uniq" => {
            let operands = operands(lit, &["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"]);
            if operands.len() >= 2 {
                scan.mutating(format!("`uniq` writes its output into {}", operands[1]));
            }
        }
        "tee" if operands(lit, &[]).iter().any(|f| !is_device(f)) => {
            let files: Vec<Arg> = operands(lit, &[]).into_iter().filter(|f| !is_device(f)).map(arg).collect();
            match lit.iter().all(|a| !a.starts_with('-') || matches!(*a, "-a" | "--append" | "-")) {
                true => scan.writes_files("`tee` writes files", &files),
                false => scan.mutating("`tee` writes files"),
            }
        }
        "dd" if lit.iter().any(|a| a.strip_prefix("of=").is_some_and(|f| !is_device(f))) => {
            scan.mutating("`dd of=` writes a file")
        }
        "xxd" => {
            let valued = ["-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-groupsize", "-len", "-seek", "-name"];
            if operands(lit, &valued).len() >= 2 {
                scan.mutating("`xxd` writes its second file");
            }
        }
        "rg" if o.long("pre") || o.long("pre-glob") || o.long("hostname-bin") => {
            scan.mutating("`rg --pre` runs a program on every file it searches")
        }
        "ag" | "bat" | "delta" if o.long("pager") => scan.mutating(format!("`{name} --pager` runs a program")),
        "bat" if lit.first() == Some(&"cache") => scan.mutating("`bat cache` writes bat's cache"),
        "fd" | "fdfind" => fd(scan, lit),
        "tree" if o.short('o') || o.short('R') || o.long("output") => scan.mutating("`tree -o` writes a file"),
        "man" if o.short('P') || o.short('H') || o.short('X') || o.short('C') || man_long(o) => {
            scan.mutating("`man -P` runs another program")
        }
        "file" if o.short('C') || o.long("compile") => scan.mutating("`file -C` writes a magic file"),
        "date" if o.short('s') || o.long("set") => scan.unknown("`date -s` sets the clock"),
        "hostname" if !operands(lit, &[]).is_empty() || o.short('F') || o.short('b') || o.long("file") => {
            scan.unknown("`hostname` with a name sets it")
        }
        "diff" if o.long("output") => scan.mutating("`diff --output` writes a file"),
        "curl" => curl(scan, lit),
        _ => {}
    }
}

fn man_long(o: &Opts) -> bool {
    ["pager", "html", "gxditview", "config-file"].iter().any(|f| o.long(f))
}

/// sed's options, read as GNU sed reads them; the scripts found are checked for `w`, `W`,
/// `e` and `s///w`/`s///e`.
fn sed(scan: &mut impl Runner, lit: &[&str]) {
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands = Vec::new();
    // `-i[SUFFIX]`: the files it edits in place (and their backups, named with SUFFIX).
    let mut in_place: Option<&str> = None;
    let mut i = 0;
    while let Some(arg) = lit.get(i).copied() {
        i += 1;
        if arg == "--" {
            operands.extend(lit[i..].iter().copied());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            let name = format!("--{name}");
            if long_is(&name, "in-place") {
                in_place = Some(value.unwrap_or(""));
            } else if long_is(&name, "file") {
                return scan.unknown("a sed script from a file");
            } else if long_is(&name, "expression") {
                scripts.extend(value.or_else(|| lit.get(i).copied()));
                i += usize::from(value.is_none());
            } else if long_is(&name, "line-length") {
                i += usize::from(value.is_none());
            }
            continue;
        }
        if !is_short_cluster(arg) {
            operands.push(arg);
            continue;
        }
        for (at, c) in arg.char_indices().skip(1) {
            let rest = &arg[at + c.len_utf8()..];
            match c {
                'i' => {
                    in_place = Some(rest);
                    break;
                }
                'f' => return scan.unknown("a sed script from a file"),
                'e' | 'l' => {
                    let value = if rest.is_empty() {
                        i += 1;
                        lit.get(i - 1).copied()
                    } else {
                        Some(rest)
                    };
                    if c == 'e' {
                        scripts.extend(value);
                    }
                    break;
                }
                'n' | 's' | 'E' | 'r' | 'u' | 'z' => {}
                _ => return scan.unknown(format!("`sed -{c}`, an option Paige does not know")),
            }
        }
    }
    let files = if scripts.is_empty() { operands.get(1..).unwrap_or_default() } else { &operands[..] };
    if scripts.is_empty() {
        scripts.extend(operands.first());
    }
    if scripts.iter().any(|s| sed_script_writes(s)) {
        scan.mutating("a sed script that writes files or runs commands");
    } else if let Some(suffix) = in_place {
        let mut named: Vec<Arg> = files.iter().map(|f| arg(f)).collect();
        if !suffix.is_empty() {
            // A suffix with `*` names the backup by pattern: not a file Paige can name.
            named.extend(files.iter().map(|f| arg(&format!("{f}{suffix}")).filter(|_| !suffix.contains('*'))));
        }
        match named.is_empty() {
            true => scan.mutating("`sed -i` edits files in place"),
            false => scan.writes_files("`sed -i` edits files in place", &named),
        }
    }
}

/// A sed script with a `w`/`W` (write a file) or `e` (run a command) command, or the `w`/`e`
/// flag of `s`: read command by command as sed does (addresses, `s` and `y` with their
/// delimiters, text and file names to the end of the line).
pub(super) fn sed_script_writes(script: &str) -> bool {
    let mut rest = script;
    loop {
        rest = skip_address(rest.trim_start_matches(|c: char| c.is_whitespace() || matches!(c, ';' | '{' | '}')));
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '!');
        let Some(cmd) = rest.chars().next() else { return false };
        rest = &rest[cmd.len_utf8()..];
        match cmd {
            'w' | 'W' | 'e' => return true,
            's' | 'y' => {
                let Some(delim) = rest.chars().next() else { return false };
                if delim == '\\' || delim == '\n' {
                    return true; // sed rejects these; do not guess
                }
                rest = &rest[delim.len_utf8()..];
                for _ in 0..2 {
                    let Some(end) = find_unescaped(rest, delim) else { return false };
                    rest = &rest[end + delim.len_utf8()..];
                }
                let end = rest.find([';', '\n', '}']).unwrap_or(rest.len());
                if cmd == 's' && rest[..end].contains(['w', 'W', 'e']) {
                    return true;
                }
                rest = &rest[end..];
            }
            'a' | 'i' | 'c' | 'r' | 'R' | ':' | '#' => rest = rest.find('\n').map_or("", |i| &rest[i..]),
            'b' | 't' | 'T' => rest = rest.find([';', '\n']).map_or("", |i| &rest[i..]),
            _ => {}
        }
    }
}

/// Skips line-number, `$`, `first~step`, `addr,+N`, `/regex/` and `\cregexc` addresses.
fn skip_address(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        let Some(c) = s.chars().next() else { return s };
        if c.is_ascii_digit() || matches!(c, ',' | '$' | '~' | '+') {
            s = &s[1..];
            continue;
        }
        let delim = match c {
            '/' => '/',
            '\\' => match s[1..].chars().next() {
                Some(d) => {
                    s = &s[1..];
                    d
                }
                None => return "",
            },
            _ => return s,
        };
        s = &s[delim.len_utf8()..];
        let Some(end) = find_unescaped(s, delim) else { return "" };
        s = s[end + delim.len_utf8()..].trim_start_matches(['I', 'M']);
    }
}

fn find_unescaped(s: &str, delim: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delim {
            return Some(i);
        }
    }
    None
}

/// awk: program text with a redirection, pipe, `system` or extension loading writes or runs;
/// a program or extension from a file, an unknown option, or gawk's profile/dump outputs are
/// not read-only.
fn awk(scan: &mut impl Runner, lit: &[&str]) {
    // `@load`, `@include`, gawk's indirect calls (`@f("rm a")` with `f = "system"`).
    let writes = |text: &str| {
        text.contains(['>', '|']) || text.contains("system") || (text.contains('@') && text.contains(['(', '"', '{']))
    };
    if lit.iter().any(|a| writes(a)) {
        return scan.mutating("an awk program that writes files or runs commands");
    }
    let mut i = 0;
    while let Some(arg) = lit.get(i).copied() {
        i += 1;
        if arg == "--" || !arg.starts_with('-') || arg == "-" {
            break;
        }
        if arg.starts_with("--") {
            let attached = arg.contains('=');
            if long_is(arg, "include") && lit.get(i) == Some(&"inplace") || arg == "--include=inplace" {
                return scan.mutating("`awk -i inplace` edits files in place");
            }
            if ["dump-variables", "profile", "pretty-print"].iter().any(|f| long_is(arg, f)) {
                return scan.mutating("gawk writes its profile or variables to a file");
            }
            if ["file", "exec", "include", "load", "debug"].iter().any(|f| long_is(arg, f)) {
                return scan.unknown("an awk program or extension from a file");
            }
            #[rustfmt::skip]
            let known = ["field-separator", "assign", "source", "characters-as-bytes", "traditional", "copyright",
                "gen-pot", "help", "lint", "bignum", "use-lc-numeric", "non-decimal-data", "optimize",
                "no-optimize", "posix", "re-interval", "sandbox", "trace", "version", "csv"];
            let valued = ["field-separator", "assign", "source"];
            match known.iter().find(|f| long_is(arg, f)) {
                Some(f) if valued.contains(f) && !attached => i += 1,
                Some(_) => {}
                None => return scan.unknown(format!("`awk {arg}`, an option Paige does not know")),
            }
            continue;
        }
        for (at, c) in arg.char_indices().skip(1) {
            match c {
                'F' | 'v' | 'e' => {
                    i += usize::from(arg[at + 1..].is_empty());
                    break;
                }
                'i' if lit.get(i) == Some(&"inplace") || &arg[at + 1..] == "inplace" => {
                    return scan.mutating("`awk -i inplace` edits files in place");
                }
                'd' | 'o' | 'p' => return scan.mutating("gawk writes its profile or variables to a file"),
                'f' | 'E' | 'i' | 'l' | 'W' => return scan.unknown("an awk program or extension from a file"),
                'b' | 'c' | 'C' | 'g' | 'M' | 'N' | 'n' | 'O' | 'P' | 'r' | 's' | 'S' | 't' | 'V' | 'h' | 'L' => {}
                _ => return scan.unknown(format!("`awk -{c}`, an option Paige does not know")),
            }
        }
    }
}

/// `find -exec` / `-execdir` run their command on what they find, in its directory for
/// `-execdir`: found outside the project (`find /tmp -execdir pytest \;`), the command runs
/// as after a `cd` out of it.
fn find(scan: &mut impl Runner, lit: &[&str]) {
    if lit.iter().any(|a| leaves_project(a))
        && lit.iter().any(|a| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir"))
    {
        scan.left_project();
    }
    let mut i = 0;
    while let Some(arg) = lit.get(i).copied() {
        match arg {
            "-delete" | "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                return scan.mutating(format!("`find {arg}` changes files"));
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = lit[i + 1..].iter().position(|a| *a == ";" || *a == "+").map_or(lit.len(), |e| i + 1 + e);
                let words: Vec<Option<String>> = lit[i + 1..end].iter().map(|a| Some((*a).to_owned())).collect();
                scan.nested_run(&words);
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
}

/// `fd -x CMD` / `-X CMD` run CMD on what they find: classified as a command; any other
/// spelling of them is not read-only.
fn fd(scan: &mut impl Runner, lit: &[&str]) {
    if lit.iter().any(|a| leaves_project(a)) {
        scan.left_project(); // `fd x /tmp -x pytest`: pytest gets `/tmp/...`
    }
    let mut i = 0;
    while let Some(arg) = lit.get(i).copied() {
        i += 1;
        if matches!(arg, "-x" | "-X" | "--exec" | "--exec-batch") {
            let end = lit[i..].iter().position(|a| *a == ";").map_or(lit.len(), |e| i + e);
            let words: Vec<Option<String>> = lit[i..end].iter().map(|a| Some((*a).to_owned())).collect();
            scan.nested_run(&words);
            i = end + 1;
        } else if long_is(arg, "exec")
            || long_is(arg, "exec-batch")
            || (is_short_cluster(arg) && arg.contains(['x', 'X']))
        {
            return scan.mutating("`fd -x` runs a command on every file it finds");
        }
    }
}

/// curl writes only with an output option; those, and options Paige does not know, are not
/// read-only.
fn curl(scan: &mut impl Runner, lit: &[&str]) {
    #[rustfmt::skip]
    let flags = ["silent", "show-error", "location", "fail", "head", "include", "verbose", "insecure",
        "compressed", "get", "no-progress-meter", "fail-with-body", "http1.1", "http2", "ipv4", "ipv6"];
    #[rustfmt::skip]
    let valued = ["header", "request", "user-agent", "max-time", "connect-timeout", "url", "retry", "user",
        "proxy", "referer", "write-out", "range", "max-redirs"];
    if lit.iter().any(|a| a.contains("%output{")) {
        return scan.mutating("`curl -w %output{}` writes a file");
    }
    // A request that sends data, or with a method other than GET or HEAD, can change what a
    // server holds — Paige's own (`/hooks`, `/ws` with a token read from its run file), or
    // any local service of the learner's, which may write their files.
    let sends = |what: &str| format!("`curl {what}` sends a request that can change what a server holds");
    let method_ok = |m: &str| m.eq_ignore_ascii_case("GET") || m.eq_ignore_ascii_case("HEAD");
    let mut i = 0;
    while let Some(arg) = lit.get(i).copied() {
        i += 1;
        if arg.starts_with("--") {
            let attached = arg.contains('=');
            if ["data", "data-raw", "data-urlencode", "data-binary", "json"].iter().any(|f| long_is(arg, f)) {
                return scan.mutating(sends(arg));
            }
            if long_is(arg, "request") {
                let method = arg.split_once('=').map(|(_, m)| m).or_else(|| lit.get(i).copied()).unwrap_or_default();
                if !method_ok(method) {
                    return scan.mutating(sends(&format!("--request {method}")));
                }
            }
            if valued.iter().any(|f| long_is(arg, f)) {
                i += usize::from(!attached);
            } else if !flags.iter().any(|f| long_is(arg, f)) {
                return scan.mutating(format!("`curl {arg}` may write a file"));
            }
        } else if is_short_cluster(arg) {
            for (at, c) in arg.char_indices().skip(1) {
                match c {
                    's' | 'S' | 'L' | 'f' | 'I' | 'i' | 'v' | 'k' | 'G' | '4' | '6' | '#' => {}
                    'd' => return scan.mutating(sends("-d")),
                    'X' => {
                        let rest = &arg[at + 1..];
                        let method = if rest.is_empty() { lit.get(i).copied().unwrap_or_default() } else { rest };
                        if !method_ok(method) {
                            return scan.mutating(sends(&format!("-X {method}")));
                        }
                        i += usize::from(rest.is_empty());
                        break;
                    }
                    'H' | 'A' | 'm' | 'u' | 'x' | 'e' | 'w' | 'r' => {
                        i += usize::from(arg[at + 1..].is_empty());
                        break;
                    }
                    _ => return scan.mutating(format!("`curl -{c}` may write a file")),
                }
            }
        }
    }
}
