//! The files a file-changing program names (issue 42): governed mode lets a Bash command run
//! only when every file it writes is inside the bound intent's scope, so for the common
//! programs Paige reads which of their arguments are written. A program run with an option
//! not listed here (one that may take a value, or change what is written) names no files:
//! the command is then checked as one that writes what Paige cannot name.

use super::{Arg, is_short_cluster};

/// A literal argument as an [`Arg`] (`programs::classify` marks a computed one with `\0`).
pub(super) fn arg(lit: &str) -> Arg {
    (!lit.contains('\u{0}')).then(|| lit.to_owned())
}

/// How a program's operands are written.
enum Writes {
    /// Every operand (`rm`, `touch`, `mkdir`; `mv` removes its sources).
    All,
    /// The last operand only (`cp`, `ln`, `install`: the sources are only read).
    Last,
    /// All but the first (`chmod MODE FILE...`, `chown OWNER FILE...`).
    AfterFirst,
}

/// Per program: how its operands are written, and the options it may be given here (none
/// takes a value). Long options are matched whole.
#[rustfmt::skip]
const PROGRAMS: &[(&str, Writes, &str, &[&str])] = &[
    ("rm", Writes::All, "rfRdvI", &["--recursive", "--force", "--dir", "--verbose"]),
    ("rmdir", Writes::All, "pv", &["--parents", "--verbose", "--ignore-fail-on-non-empty"]),
    ("unlink", Writes::All, "", &[]),
    ("touch", Writes::All, "acmh", &["--no-create", "--no-dereference"]),
    ("mkdir", Writes::All, "pv", &["--parents", "--verbose"]),
    ("shred", Writes::All, "fuvxz", &["--force", "--remove", "--verbose", "--exact", "--zero"]),
    ("mkfifo", Writes::All, "", &[]),
    ("truncate", Writes::All, "c", &["--no-create"]),
    ("mv", Writes::All, "fnvu", &["--force", "--no-clobber", "--verbose", "--update"]),
    ("cp", Writes::Last, "afinprRuvLPH", &["--archive", "--force", "--recursive", "--no-clobber", "--verbose", "--update"]),
    ("ln", Writes::Last, "sfnvrT", &["--symbolic", "--force", "--verbose", "--relative", "--no-dereference"]),
    ("install", Writes::Last, "Dvp", &["--verbose", "--preserve-timestamps"]),
    ("chmod", Writes::AfterFirst, "Rvcf", &["--recursive", "--verbose", "--changes", "--silent", "--quiet"]),
    ("chown", Writes::AfterFirst, "Rvcfh", &["--recursive", "--verbose", "--changes", "--silent", "--quiet"]),
    ("chgrp", Writes::AfterFirst, "Rvcfh", &["--recursive", "--verbose", "--changes", "--silent", "--quiet"]),
];

/// The files `name` writes, given `args`; `None` when Paige cannot name them all (a program
/// not listed, an option it does not know, a size or mode given as an option, no operand).
pub(super) fn named(name: &str, args: &[Arg]) -> Option<Vec<Arg>> {
    let (_, writes, short, long) = PROGRAMS.iter().find(|(program, ..)| *program == name)?;
    let mut operands: Vec<Arg> = Vec::new();
    let mut options_end = false;
    for arg in args {
        let text = arg.as_deref();
        match text {
            Some("--") if !options_end => options_end = true,
            Some(t) if !options_end && t.starts_with("--") => {
                if !long.contains(&t) {
                    return None;
                }
            }
            Some(t) if !options_end && is_short_cluster(t) => {
                // `truncate -s SIZE`, `chmod -R 755`: only the letters listed, none with a value.
                if !t[1..].chars().all(|c| short.contains(c)) {
                    return None;
                }
            }
            // A computed word may be an option: Paige cannot say which files it names.
            None if !options_end => return None,
            _ => operands.push(arg.clone()),
        }
    }
    let named = match writes {
        Writes::All => operands,
        Writes::Last if operands.len() >= 2 => operands.split_off(operands.len() - 1),
        // `ln -s TARGET` makes a link named after TARGET in the current directory.
        Writes::Last if name == "ln" => {
            operands.iter().map(|o| o.as_deref().and_then(|o| o.rsplit('/').next()).map(str::to_owned)).collect()
        }
        Writes::Last => return None,
        Writes::AfterFirst => operands.split_off(1.min(operands.len())),
    };
    (!named.is_empty()).then_some(named)
}

#[cfg(test)]
mod tests {
    use super::super::super::bash::classify;

    fn writes(command: &str) -> Option<Vec<String>> {
        classify(command).writes
    }

    fn files(list: &[&str]) -> Option<Vec<String>> {
        Some(list.iter().map(|f| f.to_string()).collect())
    }

    #[test]
    fn a_read_only_command_writes_no_file() {
        assert_eq!(writes("ls -la src && cat src/main.rs | grep fn"), files(&[]));
        assert_eq!(writes("cargo test 2>/dev/null"), files(&[]));
    }

    #[test]
    fn the_files_a_command_names_are_its_writes_wherever_they_appear() {
        assert_eq!(writes("echo hi > src/a.rs"), files(&["src/a.rs"]));
        assert_eq!(writes("echo hi >> src/a.rs 2> err.log"), files(&["src/a.rs", "err.log"]));
        assert_eq!(writes("rm -rf build/out src/old.rs"), files(&["build/out", "src/old.rs"]));
        assert_eq!(writes("mv src/a.rs src/b.rs"), files(&["src/a.rs", "src/b.rs"]));
        assert_eq!(writes("cp -r docs/x.md src/x.md"), files(&["src/x.md"]));
        assert_eq!(writes("chmod -R 755 bin/run.sh"), files(&["bin/run.sh"]));
        assert_eq!(writes("touch a.txt && mkdir -p src/new"), files(&["a.txt", "src/new"]));
        assert_eq!(writes("printf x | tee -a notes.md"), files(&["notes.md"]));
        assert_eq!(writes("sed -i 's/a/b/' src/a.rs src/b.rs"), files(&["src/a.rs", "src/b.rs"]));
        assert_eq!(writes("sed -i.bak -e 's/a/b/' src/a.rs"), files(&["src/a.rs", "src/a.rs.bak"]));
        assert_eq!(writes("sed --in-place -n 's/a/b/p' f.rs"), files(&["f.rs"]));
        assert_eq!(writes("ln -s ../lib/x.rs"), files(&["x.rs"]));
        assert_eq!(writes("bash -c 'echo x > src/c.rs'"), files(&["src/c.rs"]));
    }

    /// Found by cargo fuzz: a sed option cluster with a multi-byte letter sliced the text
    /// inside that letter and panicked.
    #[test]
    fn a_sed_option_with_a_multi_byte_letter_is_unknown_without_a_panic() {
        assert_eq!(writes("sed -é 's/a/b/' f.rs"), None);
        assert_eq!(writes("sed -ié 's/a/b/' f.rs"), files(&["f.rs", "f.rsé"]), "the suffix after -i, whole");
    }

    #[test]
    fn writes_paige_cannot_name_are_none() {
        for command in [
            // a computed path, a pattern, a cd before the write
            "echo x > $OUT",
            "rm src/*.rs",
            "cd src && echo x > a.rs",
            // an option that may take a value or change what is written
            "truncate -s 0 src/a.rs",
            "cp -t src a.rs b.rs",
            "install -m 755 run.sh bin/run",
            "rm $FLAGS src/a.rs",
            // programs that write what they do not name
            "npm install left-pad",
            "cargo fmt",
            "git checkout -- .",
            "sed -i -f script.sed a.rs",
            "sed -i 's/a/b/w out.txt' a.rs",
            "perl -pi -e 's/a/b/' a.rs",
            // unknown programs may write anything
            "python3 gen.py",
            "./build.sh",
            // a program given no file
            "touch",
            "cp a.rs",
        ] {
            assert_eq!(writes(command), None, "{command}");
        }
    }
}
