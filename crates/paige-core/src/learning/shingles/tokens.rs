//! The tokenizer of [`super`]: one for Rust, Python, JS/TS, Go, Java, C/C++ and Ruby at once
//! (it is not told the language). Comments and whitespace are left out, `;` and trailing
//! commas dropped, string literals reduced to their kind; see the module doc of [`super`].

use std::sync::OnceLock;

/// A token: its hash, and whether it is an identifier (renamed per window) or kept as is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    /// The hash of its kind and text.
    pub(super) hash: u64,
    /// Whether it is an identifier (a name that is not a keyword).
    pub(super) ident: bool,
}

/// FNV-1a's offset basis.
pub(super) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a of `bytes`, continued from `hash`.
pub(super) fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The kinds of token, a tag byte each so that `"if"` the string and `if` differ.
const STRING: u8 = b's';
const NUMBER: u8 = b'n';
const WORD: u8 = b'w';
const PUNCT: u8 = b'p';

/// A token of kind `tag` and text `text`.
fn token(tag: u8, text: &[u8]) -> Token {
    Token { hash: fnv(fnv(FNV_OFFSET, &[tag]), text), ident: false }
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// How long the operator at `i` is: 3 (`>>=`, `===`, `...`…), 2 (`::`, `->`, `+=`…) or 1.
fn operator_len(s: &[u8], i: usize) -> usize {
    let at = |j: usize| s.get(j).copied().unwrap_or(0);
    match (at(i), at(i + 1), at(i + 2)) {
        (b'>', b'>', b'=') | (b'<', b'<', b'=') | (b'=' | b'!', b'=', b'=') | (b'.', b'.', b'.' | b'=') => 3,
        (b'*', b'*', b'=') | (b'&', b'&', b'=') | (b'|', b'|', b'=') | (b'?', b'?', b'=') => 3,
        (b':', b':', _) | (b'-' | b'=', b'>', _) | (b'<', b'-', _) | (b'?', b'.' | b'?', _) => 2,
        (b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'|' | b'&' | b':', b'=', _) => 2,
        (b'&', b'&', _) | (b'|', b'|', _) | (b'<', b'<', _) | (b'>', b'>', _) => 2,
        (b'+', b'+', _) | (b'-', b'-', _) | (b'.', b'.', _) | (b'*', b'*', _) => 2,
        _ => 1,
    }
}

/// C preprocessor directives: a `#` starting a line before one of these is code.
const DIRECTIVES: &[&[u8]] =
    &[b"include", b"define", b"undef", b"if", b"ifdef", b"ifndef", b"elif", b"else", b"endif", b"pragma", b"error"];

/// Prefixes of string literals (`r"…"`, `b'…'`, `f"…"`…).
const STRING_PREFIXES: &[&[u8]] = &[b"r", b"b", b"br", b"rb", b"f", b"fr", b"rf", b"u", b"c", b"cr"];

/// Keywords and primitive types of Rust, Python, JS/TS, Go, Java, C/C++ and Ruby, merged (the
/// tokenizer does not know the language), in order.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "False", "None", "Self", "True", "and", "as", "async", "await", "begin", "bool", "boolean", "break", "byte",
    "case", "catch", "chan", "char", "class", "const", "continue", "crate", "def", "default", "defer", "define",
    "del", "do", "double", "dyn", "elif", "else", "elsif", "end", "enum", "except", "export", "extends", "extern",
    "f32", "f64", "false", "final", "finally", "float", "fn", "for", "from", "func", "function", "go", "i16", "i32",
    "i64", "i8", "if", "impl", "implements", "import", "in", "include", "instanceof", "int", "interface", "is",
    "isize", "lambda", "let", "long", "loop", "map", "match", "mod", "module", "move", "mut", "new", "nil", "not",
    "null", "or", "package", "pass", "private", "protected", "pub", "public", "raise", "range", "ref", "return",
    "select", "self", "short", "signed", "sizeof", "static", "str", "string", "struct", "super", "switch", "then",
    "this", "throw", "throws", "trait", "true", "try", "type", "typedef", "typeof", "u16", "u32", "u64", "u8",
    "undefined", "unless", "unsafe", "unsigned", "use", "usize", "var", "void", "where", "while", "with", "yield",
];

/// The tokens of `src`: comments and whitespace left out, `;` and trailing commas dropped.
pub(super) fn lex(src: &str) -> Vec<Token> {
    let raw = lex_raw(src.as_bytes());
    let semicolon = token(PUNCT, b";");
    let comma = token(PUNCT, b",");
    let closers = [token(PUNCT, b")"), token(PUNCT, b"]"), token(PUNCT, b"}")];
    let trailing = |i: usize| raw[i] == comma && raw.get(i + 1).is_some_and(|next| closers.contains(next));
    (0..raw.len()).filter(|i| raw[*i] != semicolon && !trailing(*i)).map(|i| raw[i]).collect()
}

/// Every token of `s`, comments and whitespace left out.
fn lex_raw(s: &[u8]) -> Vec<Token> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut out = Vec::with_capacity(s.len() / 3);
    let mut i = 0;
    let mut line_start = true;
    while i < s.len() {
        let b = s[i];
        if b.is_ascii_whitespace() {
            line_start |= b == b'\n';
            i += 1;
            continue;
        }
        let start_of_line = std::mem::replace(&mut line_start, false);
        match b {
            b'/' if at(i + 1) == b'/' => i = line_end(s, i),
            b'/' if at(i + 1) == b'*' => i = find(s, i + 2, b"*/").map_or(s.len(), |end| end + 2),
            b'#' if hash_is_code(s, i, start_of_line) => {
                out.push(token(PUNCT, b"#"));
                i += 1;
            }
            b'#' => i = line_end(s, i),
            b'"' | b'`' => i = string(s, i, &mut out),
            b'\'' => i = quote(s, i, &mut out),
            b'0'..=b'9' => {
                let end = number_end(s, i);
                out.push(token(NUMBER, &s[i..end]));
                i = end;
            }
            _ if is_ident_start(b) => {
                let end = ident_end(s, i);
                let word = &s[i..end];
                let next = at(end);
                let quoted = next == b'"' || next == b'\'' || (next == b'#' && raw_string_open(s, end));
                if quoted && STRING_PREFIXES.contains(&word) {
                    i = string(s, end, &mut out);
                } else {
                    out.push(word_token(word));
                    i = end;
                }
            }
            _ => {
                let end = (i + operator_len(s, i)).min(s.len());
                out.push(token(PUNCT, &s[i..end]));
                i = end;
            }
        }
    }
    out
}

/// A word: a keyword kept as is, any other name an identifier.
fn word_token(word: &[u8]) -> Token {
    let tok = token(WORD, word);
    Token { ident: keyword_hashes().binary_search(&tok.hash).is_err(), ..tok }
}

/// The hashes of the [`KEYWORDS`]' tokens, sorted: a word is looked up by the hash its token
/// has anyway.
fn keyword_hashes() -> &'static [u64] {
    static HASHES: OnceLock<Vec<u64>> = OnceLock::new();
    HASHES.get_or_init(|| {
        let mut hashes: Vec<u64> = KEYWORDS.iter().map(|k| token(WORD, k.as_bytes()).hash).collect();
        hashes.sort_unstable();
        hashes
    })
}

/// Where the identifier starting at `i` ends.
fn ident_end(s: &[u8], i: usize) -> usize {
    i + s[i..].iter().take_while(|b| is_ident_char(**b)).count()
}

/// The index of the newline ending the line at `i` (or the end).
fn line_end(s: &[u8], i: usize) -> usize {
    find(s, i, b"\n").unwrap_or(s.len())
}

/// Where `needle` next occurs in `s` from `from`.
fn find(s: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let (first, rest) = needle.split_first()?;
    let mut at = from;
    loop {
        at += s.get(at..)?.iter().position(|b| b == first)?;
        if s[at + 1..].starts_with(rest) {
            return Some(at);
        }
        at += 1;
    }
}

/// Whether the `#` at `i` is code: a Rust attribute (`#[`, `#!`), a C directive starting a
/// line, a JS private member (`this.#x`). Otherwise it starts a comment (Python, Ruby, shell).
fn hash_is_code(s: &[u8], i: usize, start_of_line: bool) -> bool {
    let next = s.get(i + 1).copied().unwrap_or(0);
    if next == b'[' || next == b'!' || (i > 0 && s[i - 1] == b'.') {
        return true;
    }
    if !start_of_line {
        return false;
    }
    let rest = &s[i + 1..];
    let rest = &rest[rest.iter().take_while(|b| **b == b' ' || **b == b'\t').count()..];
    let word_len = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    DIRECTIVES.contains(&&rest[..word_len])
}

/// Whether a Rust raw string (`#…#"`) opens at `i`.
fn raw_string_open(s: &[u8], i: usize) -> bool {
    let hashes = s.get(i..).map_or(0, |rest| rest.iter().take_while(|b| **b == b'#').count());
    hashes > 0 && s.get(i + hashes) == Some(&b'"')
}

/// Lexes the string opening at `i` (`"`, `"""`, `` ` ``, `'`, `'''`, or a raw `#"`) into one
/// string token; returns where it ends. `"` and `'` strings end at their line's end when
/// unclosed, so a stray quote cannot swallow the file.
fn string(s: &[u8], i: usize, out: &mut Vec<Token>) -> usize {
    out.push(token(STRING, b""));
    let quote = s[i];
    if quote == b'#' {
        let hashes = s[i..].iter().take_while(|b| **b == b'#').count();
        let mut close = vec![b'"'];
        close.extend(std::iter::repeat_n(b'#', hashes));
        return find(s, i + hashes + 1, &close).map_or(s.len(), |end| end + close.len());
    }
    let triple = [quote; 3];
    if quote != b'`' && s[i..].starts_with(&triple) {
        return find(s, i + 3, &triple).map_or(s.len(), |end| end + 3);
    }
    let mut j = i + 1;
    while j < s.len() {
        match s[j] {
            b'\\' => j += 2,
            b'\n' if quote != b'`' => return j,
            c if c == quote => return j + 1,
            _ => j += 1,
        }
    }
    s.len()
}

/// Lexes at a `'`: a char literal or single-quoted string (one string token), or a Rust
/// lifetime or label (a `'` token, its name lexed next).
fn quote(s: &[u8], i: usize, out: &mut Vec<Token>) -> usize {
    let at = |j: usize| s.get(j).copied().unwrap_or(0);
    if at(i + 1) == b'\'' && at(i + 2) == b'\'' {
        return string(s, i, out); // '''docstring'''
    }
    if is_ident_start(at(i + 1)) && at(i + 2) != b'\'' {
        let end = ident_end(s, i + 1);
        let before = s[..i].iter().rev().find(|b| !b.is_ascii_whitespace()).copied().unwrap_or(0);
        let lifetime = at(end) != b'\''
            && (before == b'&' || before == b'<' || &s[i + 1..end] == b"static" || !closes_on_line(s, end));
        if lifetime {
            out.push(token(PUNCT, b"'"));
            return i + 1;
        }
    }
    if closes_on_line(s, i + 1) {
        return string(s, i, out);
    }
    out.push(token(PUNCT, b"'"));
    i + 1
}

/// Whether an unescaped `'` follows `from` on the same line.
fn closes_on_line(s: &[u8], from: usize) -> bool {
    let mut j = from;
    while j < s.len() {
        match s[j] {
            b'\\' => j += 2,
            b'\n' => return false,
            b'\'' => return true,
            _ => j += 1,
        }
    }
    false
}

/// Where the number starting at `i` ends: digits, letters (`0x1f`, `10u8`, `1e9`), `_`, and
/// one `.` followed by a digit (so `0..10` stays a range).
fn number_end(s: &[u8], i: usize) -> usize {
    let mut j = i;
    let mut dot = false;
    while j < s.len() {
        let c = s[j];
        if c.is_ascii_alphanumeric() || c == b'_' {
            j += 1;
        } else if c == b'.' && !dot && s.get(j + 1).is_some_and(u8::is_ascii_digit) {
            dot = true;
            j += 1;
        } else {
            break;
        }
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_directives_and_private_members_are_code_not_comments() {
        assert_eq!(lex("#[derive(Debug)]\nstruct A;").len(), 9, "# [ derive ( Debug ) ] struct A");
        assert_eq!(lex("#include <stdio.h>\n").len(), 7, "# include < stdio . h >");
        assert_eq!(lex("this.#count = 1").len(), 6);
    }

    #[test]
    fn lifetimes_chars_and_strings_are_told_apart() {
        assert_eq!(lex("fn longest<'a>(x: &'a str, y: &'a str) -> &'a str").len(), 26);
        assert_eq!(lex("let c = 'x'; let n = '\\n'; let s = 'two words';").len(), 12);
        assert_eq!(lex("d['key'] = r#\"raw \"quoted\"\"# + f\"{x}\" + \"\"\"doc\nstring\"\"\"").len(), 10);
        assert_eq!(lex("for i in 0..10 { x += 1.5e3 }").len(), 11);
    }

    #[test]
    fn keywords_are_kept_and_other_names_are_identifiers() {
        assert!(KEYWORDS.windows(2).all(|w| w[0] < w[1]), "in order, without duplicates");
        let idents: Vec<bool> = lex("fn main() { let x = self.y; } def None").iter().map(|t| t.ident).collect();
        let expected = [false, true, false, false, false, false, true, false, false, false, true, false, false, false];
        assert_eq!(idents, expected);
    }
}
