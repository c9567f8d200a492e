//! What a Bash command does to files, read from its syntax tree (`brush-parser`, a bash
//! parser): every simple command anywhere in it — pipelines, lists, compound commands,
//! `$(...)`, backticks, `<(...)`, `sh -c` strings, `eval` — and every redirection.
//! Wrappers (`env`, `xargs`, `nice`, `timeout`, `nohup`, `setsid`, `sudo`, `command`, ...)
//! are unwrapped to the command they run.
//!
//! Three verdicts: known to change files, known read-only, and unknown. Coach mode runs only
//! read-only commands; governed mode runs the others watched by the change detector.
//! Classification only ever errs towards "not read-only": a command it cannot parse is
//! unknown. What each program does with its options is `programs/`, which knows nothing of
//! this parser (the dependency goes one way).

use brush_parser::ast::{
    self, Command, CommandPrefixOrSuffixItem, CompoundCommand, CompoundList, IoFileRedirectKind, IoFileRedirectTarget,
    IoRedirect, SeparatorOperator,
};
use brush_parser::word::{WordPiece, WordPieceWithSource};

use super::bash_inputs::{
    has_empty_here_tag, has_expanding_here_tag, has_number_the_parser_cannot_read, has_unclosed_subscript, nesting,
    open_parens,
};
use super::programs::{self, Arg, Runner};

/// What a command does to files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Reads only (or writes only outside files: the terminal, `/dev/null`, shell variables).
    ReadOnly,
    /// Paige cannot tell; the reason names the first such part.
    Unknown(String),
    /// Changes files; the reason names the first such part.
    Mutating(String),
}

/// A classified Bash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashCommand {
    pub effect: Effect,
    /// Leaves a process running after the call returns (`&`, `nohup`, `setsid`, `coproc`).
    pub backgrounds: bool,
    /// The files it writes as it names them (relative to where it starts), when Paige can
    /// name them all: empty for a read-only command; `None` when some part changes files it
    /// does not name (`npm install`), may do anything (unknown), or writes after a `cd`.
    /// Governed mode checks these against the intent's scope (`governance/scope.rs`).
    pub writes: Option<Vec<String>>,
}

impl BashCommand {
    pub fn is_read_only(&self) -> bool {
        self.effect == Effect::ReadOnly
    }

    pub fn is_mutating(&self) -> bool {
        matches!(self.effect, Effect::Mutating(_))
    }
}

/// Longer commands are not parsed (unknown): the parser recurses per nesting level.
const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// `sh -c` inside `$(...)` inside `eval` ...: deeper is unknown.
const MAX_DEPTH: u8 = 12;
/// brush-parser backtracks exponentially over unquoted `(`s (a subshell, or arithmetic?):
/// `R>` and 33 of them took minutes (found by cargo fuzz), 20 about a second. Real command
/// lines have a few; one with more is unknown.
const MAX_OPEN_PARENS: usize = 12;

pub fn classify(command: &str) -> BashCommand {
    let mut scan = Scan::default();
    if command.trim().is_empty() {
        scan.unknown("an empty command");
    } else if command.len() > MAX_COMMAND_BYTES || nesting(command) > 256 {
        scan.unknown("a command too long or too deeply nested to check");
    } else {
        // The parser is outside code: a panic in it must not take the hook down.
        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            scan.source(command);
            scan
        }));
        scan = parsed.unwrap_or_else(|_| {
            let mut failed = Scan::default();
            failed.unknown("a command Paige cannot parse");
            failed
        });
    }
    BashCommand { effect: scan.effect, backgrounds: scan.backgrounds, writes: scan.writes }
}

pub(super) struct Scan {
    effect: Effect,
    backgrounds: bool,
    depth: u8,
    /// A `cd` may have left the project (see `programs::change_directory`).
    outside: bool,
    /// [`BashCommand::writes`].
    writes: Option<Vec<String>>,
}

impl Default for Scan {
    fn default() -> Self {
        Scan { effect: Effect::ReadOnly, backgrounds: false, depth: 0, outside: false, writes: Some(Vec::new()) }
    }
}

impl Runner for Scan {
    fn mutating(&mut self, why: impl Into<String>) {
        if !matches!(self.effect, Effect::Mutating(_)) {
            self.effect = Effect::Mutating(why.into());
        }
        self.writes = None;
    }

    fn writes_files(&mut self, why: impl Into<String>, files: &[Arg]) {
        let writes = self.writes.take();
        self.mutating(why);
        self.writes = writes.and_then(|mut named| {
            for file in files {
                // A computed name or a pattern names no file Paige can check.
                let file = file.as_deref().filter(|f| !f.is_empty() && !f.contains(['*', '?', '[', '\u{0}']))?;
                named.push(file.to_owned());
            }
            Some(named)
        });
    }

    fn unknown(&mut self, why: impl Into<String>) {
        if self.effect == Effect::ReadOnly {
            self.effect = Effect::Unknown(why.into());
        }
        self.writes = None;
    }

    fn changed_directory(&mut self) {
        self.writes = None;
    }

    fn nested_source(&mut self, text: &Arg, what: &str) {
        match text {
            Some(text) => self.source(text),
            None => self.unknown(format!("{what} built from an expansion")),
        }
    }

    fn nested_run(&mut self, words: &[Arg]) {
        if self.depth >= MAX_DEPTH {
            return self.unknown("a command nested too deeply to check");
        }
        self.depth += 1;
        self.run(words);
        self.depth -= 1;
    }

    fn leaves_running(&mut self) {
        self.backgrounds = true;
    }

    fn left_project(&mut self) {
        self.outside = true;
    }

    fn outside_project(&self) -> bool {
        self.outside
    }
}

impl Scan {
    /// Shell source text: a whole command line, a `$(...)` body, an `sh -c` string.
    fn source(&mut self, text: &str) {
        if self.depth >= MAX_DEPTH {
            return self.unknown("a command nested too deeply to check");
        }
        if has_number_the_parser_cannot_read(text) {
            return self.unknown("a number too large for Paige's parser");
        }
        if open_parens(text) > MAX_OPEN_PARENS {
            return self.unknown("too many parentheses to check");
        }
        // brush-parser's tokenizer mis-reads a carriage return (`cat <<\r x${` grew without
        // bound until the process ran out of memory; found by cargo fuzz).
        if text.contains('\r') {
            return self.unknown("a carriage return, which Paige's parser cannot read");
        }
        // No command Claude Code runs holds another control character (a NUL cannot even be an
        // argument); brush-parser's here-document reader allocated without bound on a NUL
        // (`<<\t\0>`) and a form feed (`<<\x0c(`), both found by cargo fuzz.
        if text.bytes().any(|b| (b < 0x20 && b != b'\t' && b != b'\n') || b == 0x7f) {
            return self.unknown("a control character, which Paige's parser cannot read");
        }
        if has_empty_here_tag(text) {
            return self.unknown("a here-document without a delimiter");
        }
        if has_expanding_here_tag(text) {
            return self.unknown("a here-document delimiter with a substitution in it");
        }
        if has_unclosed_subscript(text) {
            return self.unknown("an array subscript that is never closed (`${name[` without its `]`)");
        }
        let options = brush_parser::ParserOptions::default();
        let mut parser = brush_parser::Parser::new(text.as_bytes(), &options);
        match parser.parse_program() {
            Ok(program) => {
                self.depth += 1;
                for list in &program.complete_commands {
                    self.list(list);
                }
                self.depth -= 1;
            }
            Err(_) => self.unknown("a command Paige cannot parse"),
        }
    }

    fn list(&mut self, list: &CompoundList) {
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            if matches!(separator, SeparatorOperator::Async) {
                self.backgrounds = true;
            }
            self.pipeline(&and_or.first);
            for next in &and_or.additional {
                let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
                self.pipeline(p);
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline) {
        for command in &pipeline.seq {
            self.command(command);
        }
    }

    fn command(&mut self, command: &Command) {
        match command {
            Command::Simple(simple) => self.simple(simple),
            Command::Compound(compound, redirects) => {
                self.redirects(redirects.as_ref());
                self.compound(compound);
            }
            Command::Function(function) => {
                let ast::FunctionBody(body, redirects) = &function.body;
                self.redirects(redirects.as_ref());
                self.compound(body);
            }
            Command::ExtendedTest(test, redirects) => {
                self.redirects(redirects.as_ref());
                let text = test.to_string();
                if text.contains("$(") || text.contains('`') || text.contains("<(") {
                    self.unknown("a substitution inside [[ ]]");
                }
            }
        }
    }

    fn compound(&mut self, compound: &CompoundCommand) {
        match compound {
            CompoundCommand::BraceGroup(c) => self.list(&c.list),
            CompoundCommand::Subshell(c) => self.list(&c.list),
            CompoundCommand::ForClause(c) => {
                for word in c.values.iter().flatten() {
                    self.word(word);
                }
                self.list(&c.body.list);
            }
            CompoundCommand::ArithmeticForClause(c) => {
                let exprs = [&c.initializer, &c.condition, &c.updater];
                for expr in exprs.into_iter().flatten() {
                    self.arithmetic(&expr.value);
                }
                self.list(&c.body.list);
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value);
                for item in &c.cases {
                    for pattern in &item.patterns {
                        self.word(pattern);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd);
                    }
                }
            }
            CompoundCommand::IfClause(c) => {
                self.list(&c.condition);
                self.list(&c.then);
                for branch in c.elses.iter().flatten() {
                    if let Some(condition) = &branch.condition {
                        self.list(condition);
                    }
                    self.list(&branch.body);
                }
            }
            CompoundCommand::WhileClause(c) | CompoundCommand::UntilClause(c) => {
                self.list(&c.0);
                self.list(&c.1.list);
            }
            // `(( ... ))` runs no command in bash, but the parser also reads nested subshells
            // `( ( cmd ) )` as one: its text is checked as commands too (an expression
            // is then an unknown command at worst).
            CompoundCommand::Arithmetic(c) => {
                self.arithmetic(&c.expr.value);
                self.source(&c.expr.value);
            }
            CompoundCommand::Coprocess(c) => {
                self.backgrounds = true;
                self.command(&c.body);
            }
        }
    }

    fn arithmetic(&mut self, expr: &str) {
        if expr.contains("$(") || expr.contains('`') {
            self.unknown("a substitution inside arithmetic");
        }
    }

    fn redirects(&mut self, redirects: Option<&ast::RedirectList>) {
        for redirect in redirects.iter().flat_map(|r| r.0.iter()) {
            self.redirect(redirect);
        }
    }

    fn redirect(&mut self, redirect: &IoRedirect) {
        match redirect {
            IoRedirect::File(_, kind, target) => match target {
                IoFileRedirectTarget::Filename(word) => {
                    let target = self.word(word);
                    let writes = matches!(
                        kind,
                        IoFileRedirectKind::Write
                            | IoFileRedirectKind::Append
                            | IoFileRedirectKind::Clobber
                            | IoFileRedirectKind::ReadAndWrite
                            | IoFileRedirectKind::DuplicateOutput
                    );
                    if writes && !harmless_target(target.as_deref()) {
                        self.writes_files(format!("redirects output into {}", shown(&target)), &[target]);
                    }
                }
                IoFileRedirectTarget::Duplicate(word) => {
                    // `>&1` duplicates a descriptor; `>&file` writes the file.
                    let target = self.word(word);
                    let fd = target.as_deref().is_some_and(|t| t == "-" || t.bytes().all(|b| b.is_ascii_digit()));
                    if matches!(kind, IoFileRedirectKind::DuplicateOutput) && !fd && !harmless_target(target.as_deref())
                    {
                        self.writes_files(format!("redirects output into {}", shown(&target)), &[target]);
                    }
                }
                IoFileRedirectTarget::Fd(_) => {}
                IoFileRedirectTarget::ProcessSubstitution(_, sub) => self.list(&sub.list),
            },
            IoRedirect::OutputAndError(word, _) => {
                let target = self.word(word);
                if !harmless_target(target.as_deref()) {
                    self.writes_files(format!("redirects output into {}", shown(&target)), &[target]);
                }
            }
            IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    self.word(&doc.doc);
                }
            }
            IoRedirect::HereString(_, word) => {
                self.word(word);
            }
        }
    }

    /// A word's literal text (quotes removed), scanning any substitution inside it.
    fn word(&mut self, word: &ast::Word) -> Arg {
        let options = brush_parser::ParserOptions::default();
        match brush_parser::word::parse(&word.value, &options) {
            Ok(pieces) => self.pieces(&word.value, &pieces),
            Err(_) => {
                self.unknown("a word Paige cannot parse");
                None
            }
        }
    }

    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource]) -> Arg {
        let mut text = Some(String::new());
        for WordPieceWithSource { piece, start_index: start, end_index: end } in pieces {
            let literal: Arg = match piece {
                WordPiece::Text(s) | WordPiece::SingleQuotedText(s) | WordPiece::AnsiCQuotedText(s) => Some(s.clone()),
                WordPiece::EscapeSequence(s) => Some(s.strip_prefix('\\').unwrap_or(s).to_owned()),
                WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(raw, inner)
                }
                WordPiece::TildeExpansion(_) => Some("~".into()),
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    self.source(s);
                    None
                }
                WordPiece::ParameterExpansion(_) => {
                    let source = raw.get(*start..*end).unwrap_or(raw);
                    if source.contains("$(") || source.contains('`') {
                        self.unknown("a substitution inside a parameter expansion");
                    }
                    None
                }
                WordPiece::ArithmeticExpression(expr) => {
                    self.arithmetic(&expr.value);
                    None
                }
            };
            text = match (text, literal) {
                (Some(mut t), Some(l)) => {
                    t.push_str(&l);
                    Some(t)
                }
                _ => None,
            };
        }
        text
    }

    fn simple(&mut self, simple: &ast::SimpleCommand) {
        let mut words: Vec<Arg> = Vec::new();
        let items = simple.prefix.iter().flat_map(|p| p.0.iter());
        let suffix = simple.suffix.iter().flat_map(|s| s.0.iter());
        let mut name_seen = false;
        for item in items {
            self.item(item, &mut words, false);
        }
        if let Some(name) = &simple.word_or_name {
            name_seen = true;
            let name = self.word(name);
            words.push(name);
        }
        for item in suffix {
            self.item(item, &mut words, name_seen);
        }
        self.run(&words);
    }

    fn item(&mut self, item: &CommandPrefixOrSuffixItem, words: &mut Vec<Arg>, as_arg: bool) {
        match item {
            CommandPrefixOrSuffixItem::IoRedirect(redirect) => self.redirect(redirect),
            CommandPrefixOrSuffixItem::Word(word) => {
                let arg = self.word(word);
                words.push(arg);
            }
            CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                // `X=$(...)` runs its substitution; `declare X=1` passes it as an argument.
                let arg = self.word(word);
                let (ast::AssignmentName::VariableName(name) | ast::AssignmentName::ArrayElementName(name, _)) =
                    &assignment.name;
                let value = arg.as_deref().and_then(|a| a.split_once('=')).map(|(_, v)| v.to_owned());
                let declares = words.first().is_some_and(|w| {
                    matches!(w.as_deref(), Some("export" | "declare" | "typeset" | "local" | "readonly"))
                });
                if !as_arg || declares {
                    programs::assignment(self, name, &value);
                }
                if as_arg {
                    words.push(if declares { Some(name.clone()) } else { arg });
                }
            }
            CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub) => {
                self.list(&sub.list);
                // What the command sees: a path, never an option.
                words.push(Some("/dev/fd/63".into()));
            }
        }
    }

    /// A command and its arguments, after expansion of what is literal.
    fn run(&mut self, words: &[Arg]) {
        let Some(first) = words.first() else { return };
        let Some(program) = first else {
            return self.unknown("a command named by an expansion");
        };
        let name = program.rsplit('/').next().unwrap_or(program);
        let args = &words[1..];
        if program.contains('/') && !program.starts_with("/usr/") && !program.starts_with("/bin/") {
            return self.unknown(format!("the program {program}"));
        }
        programs::classify(self, name, args);
    }
}

fn harmless_target(target: Option<&str>) -> bool {
    target.is_some_and(|t| {
        matches!(t, "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty") || t.starts_with("/dev/fd/")
    })
}

fn shown(target: &Arg) -> String {
    target.as_deref().map(|t| format!("`{t}`")).unwrap_or_else(|| "a computed path".into())
}

#[cfg(test)]
#[path = "bash_tests.rs"]
mod tests;
