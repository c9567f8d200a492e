//! "Shown, then typed": did the learner type a solution Claude Code showed? No model call: the
//! shown code block and the learner's file are compared by their token shingles.
//!
//! TUNING-PLACEHOLDER

use std::collections::HashSet;

/// Tokens per shingle.
const K: usize = 8;

/// The least share of a shown block's shingles the learner must newly type for the block to
/// count as reproduced.
pub const THRESHOLD: f64 = 0.5;

/// The fewest shingles a shown block needs to be judged at all: shorter blocks (`x += 1`, a
/// one-line call) match too much ordinary code to say anything.
pub const MIN_SHINGLES: usize = 12;

/// A fenced code block of a Markdown reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBlock {
    /// The info string's first word, lowercased (`rust`, `py`, `diff`); `None` when the fence
    /// has none.
    pub lang: Option<String>,
    /// The block's text, its fence's indentation taken off each line; for a `diff` block, only
    /// the added lines without their `+`.
    pub code: String,
}

/// Languages of blocks that show a terminal, a command or output: nothing the learner types
/// into a file.
const NOT_FILE_CODE: &[&str] = &[
    "bash",
    "sh",
    "shell",
    "console",
    "zsh",
    "fish",
    "text",
    "txt",
    "plaintext",
    "output",
    "log",
    "terminal",
    "shell-session",
    "sh-session",
    "shellsession",
];

/// The fenced code blocks of `markdown` (``` or ~~~, three or more, an info string allowed;
/// an unclosed fence runs to the end), without the shell and output blocks ([`NOT_FILE_CODE`])
/// and blank ones. A fence may be indented (inside a list item); that indentation is taken off
/// its lines. A `diff` or `patch` block keeps only its added lines.
pub fn code_blocks(markdown: &str) -> Vec<CodeBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<OpenFence> = None;
    for line in markdown.lines() {
        match open.as_mut() {
            None => open = OpenFence::opening(line),
            Some(fence) if fence.closes(line) => {
                blocks.extend(open.take().and_then(OpenFence::finish));
            }
            Some(fence) => fence.push(line),
        }
    }
    blocks.extend(open.and_then(OpenFence::finish));
    blocks
}

/// A fence opened and not yet closed, with the lines read inside it.
struct OpenFence {
    marker: u8,
    width: usize,
    indent: usize,
    lang: Option<String>,
    lines: Vec<String>,
}

impl OpenFence {
    /// The fence `line` opens, if it is one.
    fn opening(line: &str) -> Option<Self> {
        let (indent, marker, width, rest) = fence_run(line)?;
        let info = rest.trim();
        if marker == b'`' && info.contains('`') {
            return None; // inline code spanning a line, not a fence
        }
        let lang = info
            .split_whitespace()
            .next()
            .map(|word| word.trim_start_matches(['{', '.']))
            .and_then(|word| word.split([':', ',', '{', '}']).next())
            .filter(|word| !word.is_empty())
            .map(str::to_lowercase);
        Some(Self { marker, width, indent, lang, lines: Vec::new() })
    }

    /// Whether `line` closes this fence: the same marker, at least as many, nothing after.
    fn closes(&self, line: &str) -> bool {
        fence_run(line).is_some_and(|(_, marker, width, rest)| {
            marker == self.marker && width >= self.width && rest.trim().is_empty()
        })
    }

    fn push(&mut self, line: &str) {
        let skip = line.bytes().take(self.indent).take_while(|b| *b == b' ' || *b == b'\t').count();
        self.lines.push(line.get(skip..).unwrap_or(line).to_owned());
    }

    /// The block, unless it shows a shell or output or holds nothing.
    fn finish(self) -> Option<CodeBlock> {
        let lang = self.lang.as_deref().unwrap_or("");
        if NOT_FILE_CODE.contains(&lang) {
            return None;
        }
        let code = if lang == "diff" || lang == "patch" {
            let added = self.lines.iter().filter(|line| line.starts_with('+') && !line.starts_with("+++ "));
            added.map(|line| line.get(1..).unwrap_or("")).collect::<Vec<_>>().join("\n")
        } else {
            self.lines.join("\n")
        };
        (!code.trim().is_empty()).then_some(CodeBlock { lang: self.lang, code })
    }
}

/// A line's fence run: its indentation, the marker (`` ` `` or `~`), how many, and the rest.
fn fence_run(line: &str) -> Option<(usize, u8, usize, &str)> {
    let body = line.trim_start_matches([' ', '\t']);
    let indent = line.len() - body.len();
    let marker = *body.as_bytes().first()?;
    if marker != b'`' && marker != b'~' {
        return None;
    }
    let width = body.bytes().take_while(|b| *b == marker).count();
    (width >= 3).then(|| (indent, marker, width, body.get(width..).unwrap_or("")))
}

/// The shingles of a piece of code: the hashes of its normalised `K`-token windows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprint {
    shingles: HashSet<u64>,
    tokens: usize,
}

impl Fingerprint {
    /// The fingerprint of `code` (any language; see the module doc for the tokens).
    pub fn of(code: &str) -> Self {
        Self::with_k(code, K)
    }

    /// The fingerprint of `code` with `k`-token shingles (`k` ≥ 1).
    pub(crate) fn with_k(code: &str, k: usize) -> Self {
        let k = k.max(1);
        let tokens = lex(code);
        let shingles = tokens.windows(k).map(window_hash).collect();
        Self { shingles, tokens: tokens.len() }
    }

    /// How many distinct shingles.
    pub fn len(&self) -> usize {
        self.shingles.len()
    }

    /// Whether there are no shingles (fewer tokens than a shingle holds).
    pub fn is_empty(&self) -> bool {
        self.shingles.is_empty()
    }

    pub(crate) fn novel(&self, before: &Fingerprint) -> usize { self.shingles.iter().filter(|s| !before.shingles.contains(s)).count() }
    /// How many tokens the code had.
    pub fn tokens(&self) -> usize {
        self.tokens
    }
}

/// The share of `shown`'s shingles that are in `after` and were not in `before`: what the
/// learner newly typed of it. 0 for an empty `shown`.
pub fn typed_share(shown: &Fingerprint, before: &Fingerprint, after: &Fingerprint) -> f64 {
    if shown.is_empty() {
        return 0.0;
    }
    let typed = shown.shingles.iter().filter(|s| after.shingles.contains(s) && !before.shingles.contains(s)).count();
    if knob(&KNOB_NOVEL) {
        let novel = shown.shingles.iter().filter(|s| !before.shingles.contains(s)).count();
        return if novel == 0 { 0.0 } else { typed as f64 / novel as f64 };
    }
    typed as f64 / shown.len() as f64
}

/// `Some(share)` when `shown` has at least [`MIN_SHINGLES`] shingles and the learner newly
/// typed at least [`THRESHOLD`] of them ([`typed_share`]).
pub fn reproduced(shown: &Fingerprint, before: &Fingerprint, after: &Fingerprint) -> Option<f64> {
    if shown.len() < MIN_SHINGLES {
        return None;
    }
    let share = typed_share(shown, before, after);
    (share >= THRESHOLD).then_some(share)
}

/// A token: its hash, and whether it is an identifier (renamed per window) or kept as is.
#[derive(Debug, Clone, Copy)]
struct Token {
    hash: u64,
    ident: bool,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a of `bytes` continued from `hash`.
fn fnv(mut hash: u64, bytes: &[u8]) -> u64 {
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// A token of kind `tag` and text `text`.
fn token(tag: u8, text: &[u8]) -> Token {
    Token { hash: fnv(fnv(FNV_OFFSET, &[tag]), text), ident: false }
}

const STRING: u8 = b's';
const NUMBER: u8 = b'n';
const WORD: u8 = b'w';
const PUNCT: u8 = b'p';
const SLOT: u8 = b'$';

/// The hash of one window: identifiers become the rank of their first occurrence in it.
fn window_hash(window: &[Token]) -> u64 {
    let mut seen: Vec<u64> = Vec::with_capacity(window.len());
    let mut hash = FNV_OFFSET;
    for tok in window {
        let atom = if tok.ident {
            let rank = seen.iter().position(|h| *h == tok.hash).unwrap_or_else(|| {
                seen.push(tok.hash);
                seen.len() - 1
            });
            fnv(fnv(FNV_OFFSET, &[SLOT]), &rank.to_le_bytes())
        } else {
            tok.hash
        };
        hash = fnv(hash, &atom.to_le_bytes());
    }
    hash
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

fn is_ident_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// Operators of three and two characters, longest first.
const OPERATORS: &[&[u8]] = &[
    b">>=", b"<<=", b"...", b"===", b"!==", b"**=", b"..=", b"&&=", b"||=", b"??=", b"::", b"->", b"=>", b"==",
    b"!=", b"<=", b">=", b"&&", b"||", b"+=", b"-=", b"*=", b"/=", b"%=", b"^=", b"|=", b"&=", b"<<", b">>", b"++",
    b"--", b"..", b"**", b"?.", b"??", b":=", b"<-",
];

/// C preprocessor directives: a `#` starting a line before one of these is code.
const DIRECTIVES: &[&[u8]] =
    &[b"include", b"define", b"undef", b"if", b"ifdef", b"ifndef", b"elif", b"else", b"endif", b"pragma", b"error"];

/// Prefixes of string literals (`r"…"`, `b'…'`, `f"…"`…).
const STRING_PREFIXES: &[&[u8]] = &[b"r", b"b", b"br", b"rb", b"f", b"fr", b"rf", b"u", b"c", b"cr"];

pub(crate) static KNOB_SEMI: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
pub(crate) static KNOB_COMMA: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
pub(crate) static KNOB_NUM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
pub(crate) static KNOB_NOVEL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
fn knob(k: &std::sync::atomic::AtomicBool) -> bool { k.load(std::sync::atomic::Ordering::Relaxed) }

/// The tokens of `src`, comments and whitespace left out.
fn lex(src: &str) -> Vec<Token> {
    let raw = lex_raw(src);
    let semi = token(PUNCT, b";");
    let comma = token(PUNCT, b",");
    let closers = [token(PUNCT, b")").hash, token(PUNCT, b"]").hash, token(PUNCT, b"}").hash];
    let mut out = Vec::with_capacity(raw.len());
    for (i, t) in raw.iter().enumerate() {
        if knob(&KNOB_SEMI) && !t.ident && t.hash == semi.hash { continue; }
        if knob(&KNOB_COMMA) && !t.ident && t.hash == comma.hash && raw.get(i + 1).is_some_and(|n| closers.contains(&n.hash)) { continue; }
        out.push(*t);
    }
    out
}

fn lex_raw(src: &str) -> Vec<Token> {
    let s = src.as_bytes();
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut out = Vec::with_capacity(s.len() / 4);
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
            b'/' if at(i + 1) == b'*' => {
                i = find(s, i + 2, b"*/").map_or(s.len(), |end| end + 2);
            }
            b'#' if hash_is_code(s, i, start_of_line) => {
                out.push(token(PUNCT, b"#"));
                i += 1;
            }
            b'#' => i = line_end(s, i),
            b'"' | b'`' => i = string(s, i, &mut out),
            b'\'' => i = quote(s, i, &mut out),
            b'0'..=b'9' => {
                let end = number_end(s, i);
                out.push(if knob(&KNOB_NUM) { token(NUMBER, b"") } else { token(NUMBER, &s[i..end]) });
                i = end;
            }
            _ if is_ident_start(b) => {
                let mut end = i;
                while end < s.len() && is_ident_char(s[end]) {
                    end += 1;
                }
                let word = &s[i..end];
                let next = at(end);
                if STRING_PREFIXES.contains(&word) && (next == b'"' || next == b'\'' || raw_string_open(s, end)) {
                    i = string(s, end, &mut out);
                } else {
                    out.push(word_token(word));
                    i = end;
                }
            }
            _ => {
                let op = OPERATORS.iter().find(|op| s[i..].starts_with(op)).copied().unwrap_or(&s[i..=i]);
                out.push(token(PUNCT, op));
                i += op.len();
            }
        }
    }
    out
}

/// The index of the newline ending the line at `i` (or the end).
fn line_end(s: &[u8], i: usize) -> usize {
    find(s, i, b"\n").unwrap_or(s.len())
}

/// Where `needle` next occurs in `s` from `from`.
fn find(s: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    s.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// Whether the `#` at `i` is code: a Rust attribute (`#[`, `#!`), a C directive starting a
/// line, a JS private member (`this.#x`). Otherwise it starts a comment (Python, Ruby, shell).
fn hash_is_code(s: &[u8], i: usize, start_of_line: bool) -> bool {
    let next = s.get(i + 1).copied().unwrap_or(0);
    if next == b'[' || next == b'!' {
        return true;
    }
    if i > 0 && s[i - 1] == b'.' {
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

/// Lexes the string opening at `i` (`"`, `"""`, `` ` ``, `'''`, or a raw `#"`) into one
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
        let mut end = i + 1;
        while end < s.len() && is_ident_char(s[end]) {
            end += 1;
        }
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

/// A word: a keyword kept as is, any other name an identifier.
fn word_token(word: &[u8]) -> Token {
    let tok = token(WORD, word);
    Token { ident: !is_keyword(word), ..tok }
}

/// Keywords and primitive types of the common languages (Rust, Python, JS/TS, Go, Java, C/C++,
/// Ruby), merged: the tokenizer does not know the language.
fn is_keyword(word: &[u8]) -> bool {
    matches!(
        word,
        b"as" | b"async"
            | b"await"
            | b"break"
            | b"case"
            | b"catch"
            | b"char"
            | b"class"
            | b"const"
            | b"continue"
            | b"crate"
            | b"def"
            | b"default"
            | b"defer"
            | b"del"
            | b"do"
            | b"double"
            | b"dyn"
            | b"elif"
            | b"else"
            | b"elsif"
            | b"end"
            | b"enum"
            | b"except"
            | b"export"
            | b"extends"
            | b"extern"
            | b"false"
            | b"final"
            | b"finally"
            | b"float"
            | b"fn"
            | b"for"
            | b"from"
            | b"func"
            | b"function"
            | b"go"
            | b"if"
            | b"impl"
            | b"implements"
            | b"import"
            | b"in"
            | b"include"
            | b"define"
            | b"int"
            | b"interface"
            | b"is"
            | b"lambda"
            | b"let"
            | b"long"
            | b"loop"
            | b"match"
            | b"mod"
            | b"module"
            | b"move"
            | b"mut"
            | b"new"
            | b"nil"
            | b"not"
            | b"null"
            | b"None"
            | b"and"
            | b"or"
            | b"package"
            | b"pass"
            | b"private"
            | b"protected"
            | b"pub"
            | b"public"
            | b"raise"
            | b"range"
            | b"ref"
            | b"return"
            | b"self"
            | b"Self"
            | b"short"
            | b"signed"
            | b"sizeof"
            | b"static"
            | b"struct"
            | b"super"
            | b"switch"
            | b"this"
            | b"throw"
            | b"throws"
            | b"trait"
            | b"true"
            | b"True"
            | b"False"
            | b"try"
            | b"type"
            | b"typedef"
            | b"typeof"
            | b"undefined"
            | b"unless"
            | b"unsafe"
            | b"unsigned"
            | b"use"
            | b"var"
            | b"void"
            | b"where"
            | b"while"
            | b"with"
            | b"yield"
            | b"bool"
            | b"boolean"
            | b"byte"
            | b"str"
            | b"string"
            | b"usize"
            | b"isize"
            | b"u8"
            | b"u16"
            | b"u32"
            | b"u64"
            | b"i8"
            | b"i16"
            | b"i32"
            | b"i64"
            | b"f32"
            | b"f64"
            | b"chan"
            | b"select"
            | b"map"
            | b"instanceof"
            | b"then"
            | b"begin"
    )
}
