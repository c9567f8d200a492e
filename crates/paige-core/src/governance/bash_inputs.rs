//! Text brush-parser cannot be trusted with (found by cargo fuzz): numbers too large for
//! its types, runs of `(` it backtracks over exponentially, here-documents without a
//! delimiter. `bash.rs` calls such a command unknown without parsing it.

/// brush-parser 0.4 unwraps the numbers it reads and panics on one too large for its type: a
/// redirection's file descriptor (`99999999999>x`, an `i32`) and a tilde's directory-stack
/// index (`~+99999999999999999999`, a `usize`). Found by cargo fuzz; such text is not parsed
/// (the panic would be caught, but printed, and fatal in a build that aborts on panic).
pub(super) fn has_number_the_parser_cannot_read(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        let digits = &text[start..at];
        let before = text[..start].strip_suffix(['+', '-']).unwrap_or(&text[..start]);
        let descriptor = text[at..].starts_with(['<', '>']) && digits.parse::<i32>().is_err();
        let stack_index = before.ends_with('~') && digits.parse::<usize>().is_err();
        if descriptor || stack_index {
            return true;
        }
    }
    false
}

/// The `(`s the parser reads as syntax: all but escaped ones and those in single quotes (in
/// double quotes they may open a `$(...)`).
pub(super) fn open_parens(text: &str) -> usize {
    #[derive(PartialEq)]
    enum In {
        Plain,
        Single,
        Double,
    }
    let (mut count, mut state, mut escaped) = (0, In::Plain, false);
    for c in text.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (&state, c) {
            (In::Single, '\'') | (In::Double, '"') => state = In::Plain,
            (In::Single, _) => {}
            (_, '\\') => escaped = true,
            (In::Plain, '\'') => state = In::Single,
            (In::Plain, '"') => state = In::Double,
            (_, '(') => count += 1,
            _ => {}
        }
    }
    count
}

/// brush-parser loops, allocating without end, on a here-document whose delimiter is empty:
/// `<<` or `<<-` followed by nothing but blanks (or empty quotes, `<<""`) before an operator
/// or the end of the text (`cat << (`, inside `$(` — found by cargo fuzz: gigabytes within
/// seconds). Bash rejects
/// these as syntax errors. A `<<<` here-string is not a here-document.
pub(super) fn has_empty_here_tag(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("<<") {
        let after = &rest[at + 2..];
        if let Some(here_string) = after.strip_prefix('<') {
            rest = here_string;
            continue;
        }
        let tag = after.strip_prefix('-').unwrap_or(after).trim_start_matches([' ', '\t']);
        if tag.is_empty() || tag.starts_with(['&', '(', ')', ';', '\n', '|', '<', '>']) {
            return true;
        }
        // An empty quoted delimiter (`<<""`, `<<''`) loops the same way; bash takes it (the
        // document ends at an empty line), Paige calls it unknown.
        let unquoted = tag.trim_start_matches(['"', '\'']);
        let quotes = tag.len() - unquoted.len();
        if quotes > 0
            && quotes.is_multiple_of(2)
            && (unquoted.is_empty() || unquoted.starts_with([' ', '\t', '&', '(', ')', ';', '\n', '|', '<', '>']))
        {
            return true;
        }
        rest = after;
    }
    false
}

/// brush-parser's tokenizer allocated without bound on a here-document delimiter holding an
/// unterminated substitution (`$(a<<o$(  `: gigabytes in seconds; found by cargo fuzz). Bash
/// never expands a delimiter; one holding `$(`, `${` or a backquote is called unknown.
pub(super) fn has_expanding_here_tag(text: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find("<<") {
        let after = &rest[at + 2..];
        let tag = after.strip_prefix('-').unwrap_or(after).trim_start_matches([' ', '\t']);
        let word = tag.split([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']).next().unwrap_or_default();
        // `$(` itself splits at its `(`: look at what follows the word too.
        let next = &tag[word.len()..];
        if word.contains("${") || word.contains('`') || (word.ends_with('$') && next.starts_with('(')) {
            return true;
        }
        rest = after;
    }
    false
}

/// brush-parser's work doubles with each `${name[` whose subscript is never closed (a `}`
/// comes before its `]`) in one word: `echo x${m[}${m[}…` took seconds at six and gigabytes
/// at twelve (found by cargo fuzz). Bash rejects each as a bad substitution; Paige calls the
/// command unknown. A `}` of an expansion nested in the subscript (`${a[${#b}]}`) does not
/// end it.
pub(super) fn has_unclosed_subscript(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(found) = text[at..].find("${") {
        let mut i = at + found + 2;
        let name = bytes[i..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'_').count();
        i += name;
        at = i;
        if name == 0 || bytes.get(i) != Some(&b'[') {
            continue;
        }
        // Inside the subscript: until its `]`, with `[`/`]` and `{`/`}` nesting counted.
        let (mut brackets, mut braces) = (1usize, 0usize);
        let mut closed = false;
        for &b in &bytes[i + 1..] {
            match b {
                b'[' => brackets += 1,
                b']' => {
                    brackets -= 1;
                    if brackets == 0 {
                        closed = true;
                        break;
                    }
                }
                b'{' => braces += 1,
                b'}' if braces == 0 => break,
                b'}' => braces -= 1,
                _ => {}
            }
        }
        if !closed {
            return true;
        }
    }
    false
}

pub(super) fn nesting(command: &str) -> usize {
    command.bytes().filter(|b| matches!(b, b'(' | b'{' | b'`')).count()
}
