//! The Bash classifier's guards against inputs its parser cannot take (most found by cargo
//! fuzz): each is unknown at once, without a panic, and what is valid is still parsed.

use std::panic::{AssertUnwindSafe, catch_unwind};

use super::*;

/// `classify` catches a parser panic, so this calls the scan itself: it must not panic.
#[test]
fn numbers_too_large_for_the_parser_are_unknown_without_a_parser_panic() {
    for command in
        ["echo hi 99999999999>x", "cat 4294967296<in", "ls ~+99999999999999999999", "ls ~-99999999999999999999"]
    {
        let mut scan = Scan::default();
        let ran = catch_unwind(AssertUnwindSafe(|| scan.source(command)));
        assert!(ran.is_ok(), "{command:?} panicked in the parser");
        assert!(matches!(scan.effect, Effect::Unknown(_)), "{command:?}: {:?}", scan.effect);
    }
    assert!(classify("echo hi 2147483647>x").is_mutating(), "a descriptor that fits is still parsed");
    assert!(classify("ls ~+2").is_read_only(), "a stack index that fits is still parsed");
}

#[test]
fn a_multi_byte_letter_in_an_interpreters_option_cluster_is_no_panic() {
    // A multi-byte letter in an interpreter's option cluster was sliced inside it (cargo fuzz).
    for command in ["timeout 5 python3 -^ -^^^^^\u{44d6}6666n/^9B9$^", "python3 -\u{e9}", "python3 -I\u{e9}m x"] {
        let mut scan = Scan::default();
        let ran = catch_unwind(AssertUnwindSafe(|| scan.source(command)));
        assert!(ran.is_ok(), "{command:?} panicked in Paige's own rules");
    }
}

#[test]
fn many_parentheses_are_unknown_at_once_even_in_an_sh_c_string() {
    let parens = "( ".repeat(40);
    for command in [format!("R>{parens}>"), parens.clone(), format!("sh -c '{parens}'")] {
        let started = std::time::Instant::now();
        let verdict = classify(&command);
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{command:?} took {:?}", started.elapsed());
        assert!(matches!(verdict.effect, Effect::Unknown(_)), "{command:?}: {verdict:?}");
    }
    let quoted = format!("python3 -c 'print({})'", "(1)+".repeat(20) + "1");
    assert!(classify(&quoted).effect != Effect::Unknown("too many parentheses to check".into()), "{quoted:?}");
    assert!(classify("(cd src && ls) | (grep x)").is_read_only(), "a few parentheses are parsed");
}

#[test]
fn a_here_document_without_a_delimiter_is_unknown_without_parsing() {
    // Found by cargo fuzz: the tokenizer allocated without end on each.
    let found = "cce $(at << (ce $(at << (acat@<< tJat@<< t <<taE OFFF||||$((o ";
    // And with an empty quoted delimiter (cargo fuzz: out of memory).
    let quoted = "for $f inc.r; * do mv ;2&<<\"\" l ";
    for command in [found, quoted, "cat << (x", "cat <<- ;", "cat <<", "echo $(cat << )", "cat <<'' ;x"] {
        let started = std::time::Instant::now();
        let verdict = classify(command);
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{command:?} took {:?}", started.elapsed());
        assert!(matches!(verdict.effect, Effect::Unknown(_)), "{command:?}: {verdict:?}");
    }
    assert!(classify("cat <<EOF\nhi\nEOF").is_read_only(), "a delimited here-document is parsed");
    // A delimiter holding a substitution (cargo fuzz: gigabytes in seconds, for two blanks).
    for command in ["\u{6}$( a<<o$(  ", "$(a<<o$(  ", "cat <<x${y", "cat <<a`b"] {
        let verdict = classify(command);
        assert!(matches!(verdict.effect, Effect::Unknown(_)), "{command:?}: {verdict:?}");
    }
    assert!(classify("cat <<'EOF' > /dev/null\n$(x)\nEOF").is_read_only(), "a substitution in the body is parsed");
    assert!(classify("grep x <<< \"(a)\"").is_read_only(), "a here-string is parsed");
}

#[test]
fn an_array_subscript_never_closed_is_unknown_without_parsing() {
    // Found by cargo fuzz: each took the parser seconds and gigabytes (its work doubles
    // with each unclosed `${name[` in a word).
    let found = "loca`````````l`````${m[}[}${m[} ${m[m ````{$${m[m {${m[}[}${m[} ${m[} {{m[llal}[}${m[} ${m[} {";
    let twelve = format!("echo x{}", "${m[}".repeat(12));
    for command in [found, &twelve, "echo \"x${m[}[}${m[}[}\"", "sh -c 'echo ${a[}'"] {
        let started = std::time::Instant::now();
        let verdict = classify(command);
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{command:?} took {:?}", started.elapsed());
        assert!(matches!(verdict.effect, Effect::Unknown(_)), "{command:?}: {verdict:?}");
    }
    for closed in ["echo ${a[0]}", "echo ${a[i]} ${a[@]} ${#a[*]}", "echo ${x} [y}"] {
        assert!(classify(closed).is_read_only(), "{closed:?} is parsed: {:?}", classify(closed));
    }
    // A subscript holding an expansion or a nested subscript is closed by its own `]`.
    for closed in ["${a[${#b}]}", "${a[$((i+1))]}", "${a[b[1]]}"] {
        assert!(!super::super::bash_inputs::has_unclosed_subscript(closed), "{closed:?}");
    }
}

#[test]
fn a_control_character_is_unknown_without_parsing() {
    // Found by cargo fuzz: over 4 GB in the here-document reader.
    let found = "=\0ho $(Oca$a$ @  ??\0ho $(Ocaa$$ @  ????a?<<\t\t\t\0\0>?)caa)>ca$a$ @  ";
    // And a form feed as the blank before the delimiter (cargo fuzz: out of memory).
    let form_feed = "ech=at&~6t&~77777;77t&77at&~6t&~7777t>@> cat&<<\x0c(o&~7 ";
    for command in [found, form_feed, "cat <<\0", "echo a\0b", "cat <<\x0b(", "echo \x1b[1m"] {
        let verdict = classify(command);
        assert!(matches!(verdict.effect, Effect::Unknown(_)), "{command:?}: {verdict:?}");
    }
}

#[test]
fn a_carriage_return_is_unknown_without_parsing() {
    // Each made the tokenizer allocate without bound (gigabytes within seconds).
    for command in ["cat <<\r x${", "cat <<-\r x$(", "cat <<\r x$((", "sh -c 'cat <<\r x${'"] {
        let started = std::time::Instant::now();
        let verdict = classify(command);
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{command:?} took {:?}", started.elapsed());
        assert!(matches!(verdict.effect, Effect::Unknown(_)), "{command:?}: {verdict:?}");
    }
}
