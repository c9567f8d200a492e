//! "Shown, then typed": did the learner type into a file a solution Claude Code showed them?
//! Found without a model call, by comparing token shingles (the method of MOSS-style
//! plagiarism detectors, without the winnowing: the texts here are small).
//!
//! **Method.** [`code_blocks`] takes the fenced blocks of Claude Code's reply, without shell
//! sessions and output (`bash`, `console`, `text`…), and with only the added lines of a
//! `diff`. Each block, and the learner's file before the reply and after their next edits, is
//! turned into a [`Fingerprint`]: its tokens (`tokens.rs`), every window of `K` consecutive
//! tokens normalised and hashed (token texts by FNV-1a, windows by FxHash's multiply: fixed and
//! deterministic, no random keys). [`typed_share`] is the share of the block's *novel*
//! shingles (those not already in the file before) that are in the file after: what the
//! learner newly typed of what the block added. A block that quotes the learner's own code is
//! judged on the rest only. [`reproduced`] says yes when the novel part has at least
//! [`MIN_SHINGLES`] shingles and the share reaches [`THRESHOLD`].
//!
//! **Tokens and normalisation.** The tokenizer does not know the language; it covers Rust,
//! Python, JS/TS, Go, Java, C/C++ and Ruby at once. Tokens are identifiers and keywords,
//! numbers (kept as written), string and char literals (one class token each: the message
//! text is not the solution), and operators (`::`, `->`, `+=`… as one token). Whitespace is
//! never a token, so indentation and moved line breaks change nothing. Comments are dropped:
//! `//`, `/* */`, and `#` to the end of the line, except `#[`/`#!` (Rust attributes), a `#`
//! starting a line before a C directive (`#include`, `#define`, `#if`…) and `.#name` (JS
//! private members). Python docstrings stay, as strings. `;` is dropped (a learner writing JS
//! without semicolons typed the same code), and so is a comma right before `)`, `]` or `}`
//! (trailing commas a formatter adds). Keywords and primitive types of all these languages are
//! kept; any other identifier becomes, inside each window, the rank of its first occurrence in
//! that window (`a = a + b` → `$0 = $0 + $1`): a consistent rename keeps every shingle, while
//! unrelated code of the same shape matches less often than with one global placeholder. Rust
//! lifetimes (`'a`, `'static`) are told from char literals and single-quoted strings by the
//! character before them and whether a closing quote follows on the line.
//!
//! **Tuning.** `K`, [`MIN_SHINGLES`] and [`THRESHOLD`] were measured on the corpora in
//! `tests/data/shingles/` (the test `tests/it/shingles.rs` prints the figures): 47 blocks the
//! learner copied (verbatim, re-indented, reformatted, renamed, a few lines changed or a typo,
//! 70–80 % typed, embedded among their code; Rust, Python, JS/TS, Go, Java, C/C++, Ruby) and 50
//! explanation snippets followed by the learner's own code on the same task (API examples,
//! idioms, signatures, pseudo-code, quotes of the learner's code, longer demos of the same
//! API). With [`MIN_SHINGLES`] = 25, the judged shares spread as follows (lowest copied /
//! highest explanation, leaving out the one-line explanation at 1.0 described below):
//!
//! | k  | lowest copied | highest explanation | recall at 0.6 | false positives at 0.6 |
//! |----|---------------|---------------------|---------------|------------------------|
//! | 8  | 0.70          | 0.55                | 47/47         | 1/50                   |
//! | 9  | 0.69          | 0.49                | 47/47         | 1/50                   |
//! | 10 | 0.64          | 0.45                | 47/47         | 1/50                   |
//!
//! k = 9 leaves the widest gap (0.49–0.69); [`THRESHOLD`] = 0.6 sits in its middle. Recall
//! 47/47 (100 %), false positives 1/50 (2 %): a one-line `sort_by` comparator the learner
//! rewrote for their own fields, 25 shingles, exactly the shape shown. 34 of the 50
//! explanations are too short to judge. Each normalisation earned its place (at k = 9):
//! dividing by all of the block's shingles rather than its novel ones drops the lowest copied
//! share to 0.52 (a Java method repeating a guard already in the file) and recall at 0.6 to
//! 46/47; keeping `;` and trailing commas drops it to 0.46 (JS retyped without semicolons).
//! Numbers as one class token changed nothing, so they are kept. [`MIN_SHINGLES`] = 30 would
//! clear the last false positive but leave no margin under the shortest copied block (30 novel
//! shingles), so it stays at 25 (a snippet of four or five short lines).
//!
//! Fingerprinting is linear in the text: a 200 KB file takes 4–5 ms in release (measured on a
//! busy 2-core machine).

mod tokens;

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use tokens::{FNV_OFFSET, Token, fnv, lex};

/// Tokens per shingle.
const K: usize = 9;

/// The least share of a shown block's novel shingles the learner must newly type for the block
/// to count as reproduced (see the module doc for how it was tuned).
pub const THRESHOLD: f64 = 0.6;

/// The fewest novel shingles (not already in the learner's file) a shown block needs to be
/// judged at all: shorter blocks (`x += 1`, a one-line call, a short idiom) match too much
/// ordinary code to say anything.
pub const MIN_SHINGLES: usize = 25;

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

/// Languages of blocks that show a terminal, a command or output: nothing typed into a file.
#[rustfmt::skip]
const NOT_FILE_CODE: &[&str] = &[
    "bash", "sh", "shell", "console", "zsh", "fish", "text", "txt", "plaintext", "output", "log", "terminal",
    "shell-session", "sh-session", "shellsession",
];

/// The fenced code blocks of `markdown` (``` or ~~~, three or more, an info string allowed; an
/// unclosed fence runs to the end), without shell, output and blank blocks. A fence may be
/// indented (inside a list item); that indentation is taken off its lines. A `diff` or `patch`
/// block keeps only its added lines.
pub fn code_blocks(markdown: &str) -> Vec<CodeBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<OpenFence> = None;
    for line in markdown.lines() {
        match open.as_mut() {
            None => open = OpenFence::opening(line),
            Some(fence) if fence.closes(line) => blocks.extend(open.take().and_then(OpenFence::finish)),
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
            return None; // inline code, not a fence
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
    shingles: HashSet<u64, BuildHasherDefault<AsIs>>,
    tokens: usize,
}

impl Fingerprint {
    /// The fingerprint of `code`, in any of the languages the module doc names.
    pub fn of(code: &str) -> Self {
        Self::with_k(code, K)
    }

    /// The fingerprint of `code` with `k`-token shingles (at least 1); for tuning.
    pub(crate) fn with_k(code: &str, k: usize) -> Self {
        let k = k.max(1);
        let tokens = lex(code);
        let slots: Vec<u64> = (0..k).map(|rank| fnv(fnv(FNV_OFFSET, &[SLOT]), &rank.to_le_bytes())).collect();
        let mut seen = Vec::with_capacity(k);
        let shingles = tokens.windows(k).map(|window| window_hash(window, &slots, &mut seen)).collect();
        Self { shingles, tokens: tokens.len() }
    }

    /// How many distinct shingles.
    pub fn len(&self) -> usize {
        self.shingles.len()
    }

    /// Whether there are no shingles (the code has fewer tokens than a shingle).
    pub fn is_empty(&self) -> bool {
        self.shingles.is_empty()
    }

    /// How many tokens the code had.
    pub fn tokens(&self) -> usize {
        self.tokens
    }

    /// How many of these shingles are not in `before`: the part of a shown block that did not
    /// merely quote the learner's file.
    pub fn novel(&self, before: &Fingerprint) -> usize {
        self.shingles.iter().filter(|s| !before.shingles.contains(s)).count()
    }
}

/// The share of `shown`'s novel shingles (those not in `before`: the block minus what it quoted
/// of the learner's file) that are in `after`: what the learner newly typed of it. 0 when
/// nothing of `shown` is novel.
pub fn typed_share(shown: &Fingerprint, before: &Fingerprint, after: &Fingerprint) -> f64 {
    let novel = shown.novel(before);
    if novel == 0 {
        return 0.0;
    }
    let typed = shown.shingles.iter().filter(|s| after.shingles.contains(s) && !before.shingles.contains(s)).count();
    typed as f64 / novel as f64
}

/// `Some(share)` when `shown` has at least [`MIN_SHINGLES`] novel shingles and the learner
/// newly typed at least [`THRESHOLD`] of them ([`typed_share`]).
pub fn reproduced(shown: &Fingerprint, before: &Fingerprint, after: &Fingerprint) -> Option<f64> {
    if shown.novel(before) < MIN_SHINGLES {
        return None;
    }
    let share = typed_share(shown, before, after);
    (share >= THRESHOLD).then_some(share)
}

/// The tag of an identifier's rank in a window.
const SLOT: u8 = b'$';

/// The multiplier of the window hash (FxHash's): one multiply per token.
const MIX: u64 = 0x517c_c1b7_2722_0a95;

/// The hash of one window, identifiers replaced by the rank of their first occurrence in it
/// (`slots[rank]`); `seen` is scratch space.
fn window_hash(window: &[Token], slots: &[u64], seen: &mut Vec<u64>) -> u64 {
    seen.clear();
    let mut hash = FNV_OFFSET;
    for tok in window {
        let atom = if tok.ident {
            let rank = seen.iter().position(|h| *h == tok.hash).unwrap_or_else(|| {
                seen.push(tok.hash);
                seen.len() - 1
            });
            slots.get(rank).copied().unwrap_or_default()
        } else {
            tok.hash
        };
        hash = (hash.rotate_left(5) ^ atom).wrapping_mul(MIX);
    }
    hash ^ (hash >> 32)
}

/// The hasher of the shingle set: a shingle is already a hash, so it is its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct AsIs(u64);

impl Hasher for AsIs {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*byte)).wrapping_mul(MIX);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FUNCTION: &str = "fn word_count(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in text.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
        if word.is_empty() {
            continue;
        }
        *counts.entry(word).or_insert(0) += 1;
    }
    counts
}";

    fn langs(markdown: &str) -> Vec<Option<String>> {
        code_blocks(markdown).into_iter().map(|b| b.lang).collect()
    }

    #[test]
    fn fences_of_backticks_and_tildes_of_any_length_are_blocks() {
        let md = "Try:\n```rust title=\"x\"\nlet a = 1;\n```\ntext\n~~~~py\nx = 1\n~~~~\n````\n```\ninner\n````\n";
        let blocks = code_blocks(md);
        assert_eq!(langs(md), [Some("rust".into()), Some("py".into()), None]);
        assert_eq!(blocks[0].code, "let a = 1;");
        assert_eq!(blocks[2].code, "```\ninner", "a shorter fence inside a longer one is content");
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let blocks = code_blocks("Here:\n```go\nfunc main() {\n}\n");
        assert_eq!(blocks, [CodeBlock { lang: Some("go".into()), code: "func main() {\n}".into() }]);
    }

    #[test]
    fn shell_sessions_output_and_blank_blocks_are_left_out() {
        let md = "```bash\ncargo test\n```\n```console\n$ ls\n```\n```text\nok\n```\n```output\n1\n```\n\
                  ```Shell\nls\n```\n```rust\n```\n```\nfn main() {}\n```\n";
        assert_eq!(langs(md), [None]);
    }

    #[test]
    fn a_diff_block_keeps_only_its_added_lines() {
        let md = "```diff\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n def f():\n-    return 1\n+    return 2\n+\n```";
        assert_eq!(code_blocks(md)[0].code, "    return 2\n");
    }

    #[test]
    fn an_indented_fence_in_a_list_loses_its_indentation() {
        let blocks = code_blocks("1. Add:\n   ```js\n   const a = 1;\n     nested();\n   ```\n");
        assert_eq!(blocks[0].code, "const a = 1;\n  nested();");
    }

    #[test]
    fn a_consistent_rename_keeps_every_shingle() {
        let renamed = FUNCTION.replace("counts", "tally").replace("word", "w").replace("text", "input");
        assert_eq!(Fingerprint::of(FUNCTION), Fingerprint::of(&renamed));
        assert!(!Fingerprint::of(FUNCTION).is_empty());
    }

    #[test]
    fn whitespace_indentation_and_line_breaks_change_nothing() {
        let reflowed =
            FUNCTION.replace("    ", "\t").replace(".trim_matches(", "\n        .trim_matches(").replace(" {", "\n{");
        assert_eq!(Fingerprint::of(FUNCTION), Fingerprint::of(&reflowed));
    }

    #[test]
    fn semicolons_and_trailing_commas_change_nothing() {
        let js = "const a = f(x, y,);\nconst b = [1, 2,];\nfunction g() { return { a, b, }; }";
        let bare = "const a = f(x, y)\nconst b = [1, 2]\nfunction g() { return { a, b } }";
        assert_eq!(Fingerprint::of(js), Fingerprint::of(bare));
    }

    #[test]
    fn comments_are_ignored() {
        let commented = FUNCTION
            .replace("let mut counts", "// a map\n    let mut counts /* words\n */")
            .replace("counts\n}", "counts # a `#` comment, as in Python\n}");
        assert_eq!(Fingerprint::of(FUNCTION), Fingerprint::of(&commented));
        let py = "def f(x):\n    # double it\n    return x * 2  # twice\n";
        assert_eq!(Fingerprint::of(py), Fingerprint::of("def f(x):\n    return x * 2\n"));
    }

    #[test]
    fn a_typed_block_is_reproduced() {
        let before = "use std::collections::HashMap;\n\nfn main() {}\n";
        let after = format!("use std::collections::HashMap;\n\n{FUNCTION}\n\nfn main() {{}}\n");
        let shown = Fingerprint::of(FUNCTION);
        let share = reproduced(&shown, &Fingerprint::of(before), &Fingerprint::of(&after));
        assert_eq!(share, Some(1.0));
        assert_eq!(reproduced(&shown, &Fingerprint::of(before), &Fingerprint::of(before)), None);
    }

    #[test]
    fn code_the_block_quoted_from_the_file_before_does_not_count() {
        let before = format!("{FUNCTION}\n");
        let after = format!("{FUNCTION}\nfn main() {{ println!(\"{{:?}}\", word_count(\"a b\")); }}\n");
        let shown = Fingerprint::of(FUNCTION);
        let (before, after) = (Fingerprint::of(&before), Fingerprint::of(&after));
        assert_eq!(typed_share(&shown, &before, &after), 0.0);
        assert_eq!(reproduced(&shown, &before, &after), None);
    }

    #[test]
    fn a_block_adding_to_quoted_code_is_judged_on_what_it_adds() {
        let head = "fn apply(state: &mut State, cmd: Command) {
    match cmd {
        Command::Push(v) => state.push(v),\n";
        let added = "        Command::Add => {
            let b = state.pop().unwrap_or(0);
            let a = state.pop().unwrap_or(0);
            state.push(a + b);
        }
        Command::Dup => {
            let top = state.last().copied().unwrap_or(0);
            state.push(top);
        }\n";
        let shown = format!("{head}{added}    }}\n}}");
        let before = format!("{head}        _ => {{}}\n    }}\n}}");
        let (shown, before) = (Fingerprint::of(&shown), Fingerprint::of(&before));
        assert!(shown.novel(&before) < shown.len());
        assert_eq!(reproduced(&shown, &before, &shown), Some(1.0));
    }

    #[test]
    fn tiny_blocks_are_not_judged() {
        let shown = Fingerprint::of("x += 1");
        assert!(shown.is_empty());
        let one_liner = Fingerprint::of("let total: u32 = items.iter().map(|i| i.price).sum();");
        let after = Fingerprint::of(
            "fn f(items: &[Item]) -> u32 {\n    let total: u32 = items.iter().map(|i| i.price).sum();\n    total\n}",
        );
        assert!(one_liner.len() < MIN_SHINGLES);
        assert_eq!(typed_share(&one_liner, &Fingerprint::default(), &after), 1.0);
        assert_eq!(reproduced(&one_liner, &Fingerprint::default(), &after), None);
    }

    #[test]
    fn empty_input_gives_empty_answers() {
        assert!(code_blocks("").is_empty());
        let empty = Fingerprint::of("");
        assert!(empty.is_empty());
        assert_eq!((empty.len(), empty.tokens()), (0, 0));
        assert_eq!(typed_share(&empty, &empty, &empty), 0.0);
        assert_eq!(reproduced(&empty, &empty, &Fingerprint::of(FUNCTION)), None);
    }

    #[test]
    fn non_ascii_code_and_text_are_handled() {
        let code =
            "fn größe(maß: f64) -> String {\n    let résultat = maß * 2.0; // ½\n    format!(\"{résultat} → ✓ 🎉\")\n}";
        let renamed = code.replace("größe", "taille").replace("maß", "mesure");
        assert_eq!(Fingerprint::of(code), Fingerprint::of(&renamed));
        let blocks = code_blocks(&format!("Voilà :\n```rust\n{code}\n```\n« fin »"));
        assert_eq!(blocks[0].code, code);
    }

    #[test]
    fn odd_input_never_panics() {
        let odd = [
            "'", "\"", "r#", "r#\"", "/*", "#", "b'", "'''", "\"\"\"x", "`", "0.", "\\", "'\\", "é'", "#[", "\u{feff}",
        ];
        for text in odd {
            let _ = Fingerprint::of(text);
            let _ = Fingerprint::with_k(text, 0);
            let _ = code_blocks(&format!("```\n{text}"));
        }
    }
}
