//! How the learner leans on the AI (issue 30): every prompt the learner types to Claude Code
//! (the `UserPromptSubmit` hook) gets one of five classes —
//!
//! - **delegation**: the learner hands the work over ("implement X for me", "make the test pass");
//! - **debugging help**: they bring a failure (a pasted error, "it panics", "why is my test failing");
//! - **conceptual question**: they ask how or why something works ("what is a lifetime");
//! - **verification**: they ask to have their own work checked ("is this right?", "check my …");
//! - **other**: greetings, thanks, "ok", "continue", slash-commands.
//!
//! [`classify`] decides with local rules in microseconds. The prompt is first normalised: only
//! its first [`MAX_SCAN_BYTES`] are read; fenced and pasted code becomes a `⟨code⟩` marker and
//! pasted errors and stack traces an `⟨error⟩` marker (a strong sign of debugging help); then
//! it is lowercased with its whitespace collapsed. The rules then go in three tiers:
//!
//! 1. **decisive** rules, in order, the first match wins: an empty prompt, a slash-command, a
//!    message of nothing but acknowledgements, a request for an example (code to learn from, or
//!    code for the task? the model decides), and an imperative asking the assistant to change
//!    the code (which stays delegation even when an error is pasted with it);
//! 2. **strong** rules: when they all point to one class, it wins, named after the first of them;
//! 3. **weak** rules, the same way, only when no strong rule matched.
//!
//! Rules of two classes in the same tier, or no rule at all, give [`Verdict::Unsure`]: the
//! prompt goes to the Haiku call of [`crate::prompts::reliance_classification`]. A wrong rule
//! is worse than a model call, so the rules only decide what they can tell for sure.

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

pub use crate::prompts::reliance_classification::RelianceClass;

/// Only this much of a prompt is read (a huge paste says no more after its start).
pub const MAX_SCAN_BYTES: usize = 8 * 1024;

/// What the rules make of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A rule decided; `rule` names it (it is logged).
    Rule { class: RelianceClass, rule: &'static str },
    /// The rules cannot tell (none matched, or rules of two classes did): the model decides.
    Unsure,
}

/// Classifies a prompt the learner typed to their AI assistant, locally and cheaply.
pub fn classify(prompt: &str) -> Verdict {
    let text = normalise(prompt);
    let rules = &*RULES;
    for tier in [Tier::Decisive, Tier::Strong, Tier::Weak] {
        let mut decided: Option<&Rule> = None;
        for index in rules.set.matches(&text).iter() {
            let rule = &rules.rules[index];
            if rule.tier != tier {
                continue;
            }
            match (decided, rule.class) {
                (_, None) => return Verdict::Unsure,
                (None, Some(class)) if tier == Tier::Decisive => return Verdict::Rule { class, rule: rule.name },
                (None, Some(_)) => decided = Some(rule),
                (Some(first), class) if first.class != class => return Verdict::Unsure,
                (Some(_), _) => {}
            }
        }
        if let Some(Rule { name, class: Some(class), .. }) = decided {
            return Verdict::Rule { class: *class, rule: name };
        }
    }
    Verdict::Unsure
}

/// Stands for pasted code in the normalised text.
const CODE: &str = " ⟨code⟩ ";
/// Stands for a pasted error message or stack trace in the normalised text.
const ERROR: &str = " ⟨error⟩ ";

/// The first [`MAX_SCAN_BYTES`], code and errors replaced by markers, lowercased, with
/// collapsed whitespace and plain apostrophes and quotes.
fn normalise(prompt: &str) -> String {
    let mut end = prompt.len().min(MAX_SCAN_BYTES);
    while !prompt.is_char_boundary(end) {
        end -= 1;
    }
    let text = strip_fences(&prompt[..end]);
    let multi_line = text.lines().filter(|line| !line.trim().is_empty()).count() > 1;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if let Some(at) = ERROR_SIGNATURE.find(line) {
            out.push_str(&line[..at.start()]);
            out.push_str(ERROR);
        } else if multi_line && CODE_LINE.is_match(line) {
            out.push_str(CODE);
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    let out = INLINE_CODE.replace_all(
        &out,
        |caps: &regex::Captures| {
            if ERROR_SIGNATURE.is_match(&caps[1]) { ERROR } else { CODE }
        },
    );
    let mut lower =
        out.to_lowercase().replace(['\u{2019}', '\u{2018}', '`'], "'").replace(['\u{201c}', '\u{201d}'], "\"");
    for (phrase, word) in NOT_A_FAILURE {
        lower = lower.replace(phrase, word);
    }
    let mut words: Vec<&str> = Vec::new();
    for word in lower.split_whitespace() {
        let repeated_marker = words.last() == Some(&word) && (word == CODE.trim() || word == ERROR.trim());
        if !repeated_marker {
            words.push(word);
        }
    }
    words.join(" ")
}

/// Fenced blocks (``` or ~~~, an unclosed one runs to the end) become a marker: `⟨error⟩`
/// when the block holds an error, else `⟨code⟩`.
fn strip_fences(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut block: Option<String> = None;
    for line in text.split_inclusive('\n') {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        match (&mut block, fence) {
            (None, true) => block = Some(String::new()),
            (None, false) => out.push_str(line),
            (Some(body), false) => body.push_str(line),
            (Some(body), true) => {
                out.push_str(fence_marker(body));
                out.push('\n');
                block = None;
            }
        }
    }
    if let Some(body) = block {
        out.push_str(fence_marker(&body));
    }
    out
}

fn fence_marker(body: &str) -> &'static str {
    if body.lines().any(|line| ERROR_SIGNATURE.is_match(line)) { ERROR } else { CODE }
}

/// Phrases about errors that are no failure ("add error handling"), joined into one word.
const NOT_A_FAILURE: [(&str, &str); 5] = [
    ("error handling", "errorhandling"),
    ("error case", "errorcase"),
    ("error type", "errortype"),
    ("error propagation", "errorpropagation"),
    ("error path", "errorpath"),
];

/// The start of a pasted error or stack trace, in the raw (case-kept) text of one line.
static ERROR_SIGNATURE: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"\b(?:error|warning)\[E\d{4}\]",
        r"|^\s*(?:error|Error|ERROR|fatal|FATAL)(?:\[\w+\])?:\s",
        r"|\b[A-Z][A-Za-z]*Error:|\b[A-Z][A-Za-z]*Exception\b",
        r"|thread '[^']*' panicked at|\bpanicked at\b",
        r"|Traceback \(most recent call last\)|^\s*File .+, line \d+",
        r"|^\s+at \S.*(?:\(|:\d+)|^\s*-->\s*\S+:\d+",
        r"|\bnpm ERR!|Segmentation fault|core dumped|\bassertion\b.*\bfailed\b",
        r"|^\s*(?:left|right):\s|^\s*Caused by:|^test result: FAILED|^---- \S+ stdout ----",
        r"|\bUncaught\b|\bUnhandled (?:exception|rejection)",
    ))
});

/// A line of pasted code (only in prompts of several lines).
static CODE_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(concat!(
        r"^\s*(?:fn|def|let|const|var|pub|impl|struct|enum|class|import|from|use|return|if|elif|else|for|while",
        r"|match|function|async|#include|#\[)\b",
        r"|[;{}]\s*$|^\s{4,}\S|^\s*[)\]}]",
    ))
});

static INLINE_CODE: LazyLock<Regex> = LazyLock::new(|| regex(r"`([^`\n]+)`"));

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    Decisive,
    Strong,
    Weak,
}

struct Rule {
    name: &'static str,
    /// `None`: a decisive rule that sends the prompt to the model.
    class: Option<RelianceClass>,
    tier: Tier,
}

struct Rules {
    rules: Vec<Rule>,
    set: RegexSet,
}

/// Leading filler before a request ("ok now", "thanks,", "hey claude").
const LEAD: &str = r"^(?:(?:ok|okay|k|now|so|alright|great|cool|good|nice|perfect|thanks|thank you|then|and|also|hey|hi|claude|next|right|yes|yeah|no|nope|actually|instead|hmm|wait)\W*\s*)*";

/// Verbs of a request to change the code. Those that are also nouns ("build fails", "code
/// review", "move semantics") count only with an object after them ("build the project").
const MAKE_VERBS: &str = concat!(
    r"(?:(?:write|implement|implemnt|impliment|implment|add|create|fix|refactor|rewrite|convert|generate|rename",
    r"|finish|insert|modify|simplify|optimi[sz]e)(?:\s|\W*$)",
    r"|(?:use|build|update|change|delete|remove|complete|code|move|extract|replace|edit|clean up|split|port",
    r"|translate|set up|setup|make|do|give me) (?:it|this|that|the|a|an|my|them|all|every\w*|these|those|some|unused",
    r"|step|phase|so|⟨code⟩)\b)",
);

/// Each rule: its name, class, tier and pattern (on the normalised text).
fn rule_table() -> Vec<(&'static str, Option<RelianceClass>, Tier, String)> {
    const C: Option<RelianceClass> = Some(RelianceClass::ConceptualQuestion);
    const B: Option<RelianceClass> = Some(RelianceClass::DebuggingHelp);
    const D: Option<RelianceClass> = Some(RelianceClass::Delegation);
    const O: Option<RelianceClass> = Some(RelianceClass::Other);
    const V: Option<RelianceClass> = Some(RelianceClass::Verification);
    use Tier::{Decisive, Strong, Weak};
    let ack = concat!(
        r"hi|hello|hey|hiya|yo|claude|there|thanks|thank|you|thx|ty|cheers|ok|okay|k|kk|yes|y|yep|yeah|yup|sure",
        r"|please|pls|no|n|nope|nah|stop|cool|nice|great|good|perfect|awesome|amazing|excellent|wow|lol|haha",
        r"|hmm|hm|ah|oh|continue|go|on|ahead|next|proceed|wait|hold|never|mind|nevermind|nvm|got|it|understood",
        r"|makes|sense|sounds|that|this|works|worked|fine|much|so|very|a|lot|again|now|all|right|alright|done",
        r"|job|morning|afternoon|evening|helped|helps|merci|beaucoup|danke|schön|sehr|gracias|bien|super|ja|nein|oui|non|si|sí|vale|genial|d'accord",
    );
    vec![
        ("empty", O, Decisive, r"^$".into()),
        ("slash_command", O, Decisive, r"^/[a-z][\w:-]*(?:\s|$)".into()),
        ("acknowledgement", O, Decisive, format!(r"^[\W_]*(?:(?:{ack})(?:[\W_]+|$)){{1,10}}$")),
        ("no_words", O, Decisive, r"^[^\p{L}\p{N}]*$".into()),
        (
            "asks_for_an_example",
            None,
            Decisive,
            r"\b(?:write|show|give) me (?:an? |some )?(?:quick |small |simple |short |tiny )?examples?\b".into(),
        ),
        (
            "imperative_request",
            D,
            Decisive,
            format!(
                r"{LEAD}(?:(?:can|could|would|will) (?:you|u) (?:please |pls |just |quickly |now )?|please |pls |plz |just |go ahead and |i need you to |i want you to )?{MAKE_VERBS}"
            ),
        ),
        (
            "imperative_request_other_language",
            D,
            Decisive,
            r"^(?:bitte )?(?:schreib|implementier|erstell|füg|mach|änder|korrigier|écris|implémente|ajoute|corrige|crée|fais|escribe|implementa|agrega|añade|arregla|crea|haz)\w*\b".into(),
        ),
        (
            "imperative_at_the_end",
            D,
            Decisive,
            r"[,.;:!-]\s*(?:now |just |please |pls )?(?:fix|write|implement|code|do|change|update) (?:it|this|that)(?: for me)?(?: please| pls)?\W*$".into(),
        ),
        ("same_again", D, Strong, r"^(?:(?:ok|okay|now|and|also|great|thanks)\W*\s*)*(?:the )?same (?:for|with|here)\b".into()),
        ("make_the_tests_pass", D, Strong, r"\bmake (?:the |my |all |these |this |that )?tests? (?:pass|green|work)".into()),
        ("do_it_for_me", D, Strong, format!(r"\b(?:{MAKE_VERBS}|solve|do)\b.*\bfor me\b")),
        (
            "hand_over",
            D,
            Strong,
            r"\b(?:just do it|you do it|you write it|do the rest|solve it for me|show me the (?:code|solution)|give me the (?:code|solution|answer|implementation))\b".into(),
        ),
        ("pasted_error", B, Strong, r"⟨error⟩".into()),
        (
            "concrete_error",
            B,
            Strong,
            r"\b(?:this|that|the|same|my|these|those|weird|strange) (?:error|exception|panic|crash|warning|stack ?trace|traceback|segfault)s?\b|\b(?:get|gets|getting|got|throws?|throwing|raises?|raising|see|seeing|have|having|hit|hitting) (?:an? |this |the |some |weird |strange |a weird )?(?:error|exception|panic|crash|segfault|stack ?trace)\b|\b(?:erreur|fehler|plante|stürzt|absturz)\b".into(),
        ),
        (
            "failure",
            B,
            Strong,
            r"\b(?:fail(?:s|ing|ed|ure)?|broken|nothing happens|does nothing|doesn'?t do anything|crash(?:es|ed|ing)?|panic(?:s|ked|king)|segfaults?|not working|no longer works|stopped working|infinite loop|never (?:stops|ends|finishes|terminates|returns)|forever|hangs|freezes)\b|\b(?:doesn'?t|does not|dont|don'?t|isn'?t|is not|won'?t|wont|will not|can'?t|cant|cannot|didn'?t|did not) (?:work|compile|run|build|match|return|stop|start|load|find|print|show|pass|terminate|change|update|get called|save)".into(),
        ),
        (
            "unexpected_result",
            B,
            Strong,
            r"\bexpected\b.{1,60}\b(?:but )?(?:got|found|received|returned|it was)\b|\b(?:is|are|returns?|prints?|gives?|shows?|outputs?) (?:always )?(?:undefined|null|nil|none|nan)\b|\b(?:returns?|returning|got|getting|gives?|with) (?:a |an )?[45]\d\d\b|\boutput is wrong\b|\b(?:prints?|returns?|gives?|outputs?|shows?|got|get) .{1,30} instead of\b|\bshould (?:be|return|print|give) .{1,40} but\b|\bwrong (?:output|result|answer|value)\b".into(),
        ),
        (
            "why_is_mine_broken",
            B,
            Strong,
            r"\bwhy (?:is|does|do|did|isn'?t|doesn'?t|doesnt|won'?t|can'?t) (?:my|it not|this not)\b|\bwhy (?:am i|do i keep) getting\b|\bwhy do i get\b|\b(?:tests?|build|ci|pipeline) (?:is|are|went|goes|turned) (?:still |again )?red\b|\bwhat(?:'?s| is) wrong with (?:my|this|it|that|the code)\b|\bsomething(?:'s| is) (?:off|wrong|weird|broken)\b".into(),
        ),
        (
            "the_tools_complain",
            B,
            Strong,
            r"\b(?:clippy|the compiler|rustc|cargo|the linter|eslint|mypy|tsc|pytest|jest|the borrow checker) (?:says|said|complains|is complaining|warns|yells|gives me|shows|tells me)\b".into(),
        ),
        ("bug_or_why", B, Weak, r"\bbugs?\b|\bany idea why\b|\bstill\b.*\bsame\b".into()),
        (
            "difference_between",
            C,
            Strong,
            r"\b(?:differences? between|differ(?:s|ence)? from|unterschied zwischen|différence entre|diferencia entre)\b".into(),
        ),
        (
            "how_does_it_work",
            C,
            Strong,
            r"\bhow (?:does|do|is|are) [^?]{1,60}\b(?:work|works|implemented|stored|represented|laid out)\b".into(),
        ),
        (
            "explain",
            C,
            Strong,
            format!(r"{LEAD}(?:(?:can|could) (?:you|u) (?:please )?|please )?(?:explain|describe|teach me|eli5|help me understand|walk me through|tell me about)\b"),
        ),
        (
            "when_to_use",
            C,
            Strong,
            r"\bwhen (?:should|would|do) (?:i|you|we|one) (?:use|pick|choose|prefer)\b|\bshould i use\b|\bis it better to\b|\bbest practices?\b|\bwhy would (?:i|you|anyone|someone|one)\b|\bpros and cons\b|\btrade-?offs?\b".into(),
        ),
        (
            "what_is",
            C,
            Weak,
            r"^(?:so |and |but |hmm |ok |okay )?(?:what|wat)(?:'s|s| is| are| does| do) |\bwhat happens (?:when|if|in|to)\b|^(?:was ist|was sind|wie funktioniert|qu'est-ce que|c'est quoi|comment fonctionne|qué es|cómo funciona)\b".into(),
        ),
        (
            "why_in_general",
            C,
            Weak,
            r"^(?:so |and |but |hmm |ok |okay )?why (?:do|does|is|are|would|should|can't|did) (?:we|you|people|anyone|one|rust|python|java|javascript|typescript|go|c|the|a|an|there)\b|\bwhy (?:is|are) (?:it|this|that|they) (?:called|named)\b|^how (?:does|is|are|do (?:we|you|they|people))\b".into(),
        ),
        (
            "is_it_right",
            V,
            Strong,
            r"\b(?:is|are) (?:this|that|it|my|the|these|those|your)\b[^?.!]{0,50}\b(?:right|correct|ok|okay|fine|good|valid|idiomatic|clean|sound|enough|accurate|safe|the right (?:way|approach))\b|\b(?:ist|sind) (?:das|es|sie|er|mein\w*|dies\w*)\b[^?.!]{0,40}\b(?:richtig|korrekt|ok|okay|gut)\b|\best-ce (?:que c'est )?(?:correct|juste|bon)\b|\bc'est (?:correct|juste|bon)\b|\b(?:está bien|es correcto)\b".into(),
        ),
        (
            "does_it_look_ok",
            V,
            Strong,
            r"\b(?:does|do) (?:this|that|it|my|these|the)\b[^?.!]{0,40}\b(?:look|seem|sound)s? (?:ok|okay|right|good|correct|fine|reasonable|alright)\b|\bdoes (?:that|this|it) make sense\b".into(),
        ),
        (
            "did_i_do_it_right",
            V,
            Strong,
            r"\bdid i (?:do|get|write|implement|understand|code|set)\b[^?.!]{0,40}\b(?:right|correct(?:ly)?|ok|well|properly)\b|\bam i (?:right|correct|wrong|on the right track)\b|,\s*(?:right|correct)\s*\?\s*$".into(),
        ),
        (
            "check_my_work",
            V,
            Strong,
            r"\b(?:check|review|verify|validate|critique|grade|proofread) (?:my|what i)\b|^(?:please |pls )?review (?:this|it)\b|\b(?:can|could) (?:you|u) (?:please )?(?:check|review|verify)\b|\bdouble[- ]?check\b|\bsanity[- ]?check\b|\blook (?:at|over) my\b|\btell me if (?:it'?s|this is|my|i)\b|\bis (?:there )?(?:anything|something) (?:wrong|off|missing|bad) (?:with|in)\b".into(),
        ),
        (
            "second_guessing",
            V,
            Strong,
            r"\bshould i have\b|\b(?:is|was) (?:this|that|mine|my \w+) better\b|\bbetter now\s*\?|\b(?:was|is) (?:this|that|it) a (?:bad|good|wrong|poor|smart) (?:choice|idea|call|decision)\b|\b(?:confirm|verify) (?:that|it|this|my|if|whether)\b|\band confirm\b".into(),
        ),
        (
            "shows_an_attempt",
            V,
            Weak,
            r"\b(?:here'?s|here is|this is) my (?:attempt|solution|version|implementation|try|code|answer)\b".into(),
        ),
        (
            "does_mine_do_it",
            V,
            Weak,
            r"^(?:so |and |also |but |ok |hmm )?(?:does|do|will|would|should|can) (?:this|my|these|that|it)\b.*\?|\b(?:does|will|would) (?:this|it|my \w+) (?:handle|cover|work for|work with|account for|meet|satisfy)\b".into(),
        ),
        (
            "signing_off",
            O,
            Weak,
            r"\b(?:take a break|brb|afk|lunch|be right back|back in \d+|gotta go|see you|let me think|bye|good night|that'?s all|done for today)\b|\bi'?ll try (?:it )?(?:myself|on my own|first)\b|\blet me try\b".into(),
        ),
        ("about_the_session", O, Strong, r"\b(?:what|which) (?:phase|step) (?:am i|are we)\b|\bwhat should i do next\b".into()),
    ]
}

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let table = rule_table();
    let patterns = table.iter().map(|(_, _, _, pattern)| ascii_word_boundaries(pattern));
    let set = RegexSet::new(patterns).expect("the reliance rules compile");
    let rules = table.into_iter().map(|(name, class, tier, _)| Rule { name, class, tier }).collect();
    Rules { rules, set }
});

/// Compiles one of this module's constant patterns.
fn regex(pattern: &str) -> Regex {
    Regex::new(&ascii_word_boundaries(pattern)).expect("a reliance pattern compiles")
}

/// ASCII word boundaries keep the regex crate's fast engines on non-ASCII text (a Unicode
/// `\b` does not); every keyword of the rules is ASCII.
fn ascii_word_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(prompt: &str) -> Option<(RelianceClass, &'static str)> {
        match classify(prompt) {
            Verdict::Rule { class, rule } => Some((class, rule)),
            Verdict::Unsure => None,
        }
    }

    #[test]
    fn empty_and_whitespace_only_prompts_are_other() {
        for prompt in ["", "   ", "\n\t \r\n", "\u{a0}\u{2003}"] {
            assert_eq!(rule(prompt), Some((RelianceClass::Other, "empty")), "{prompt:?}");
        }
    }

    #[test]
    fn only_the_first_8_kb_of_a_huge_prompt_is_read() {
        let huge = format!("why is my test failing? {}", "é".repeat(1 << 20));
        assert!(normalise(&huge).len() <= MAX_SCAN_BYTES + 16);
        assert_eq!(rule(&huge), Some((RelianceClass::DebuggingHelp, "failure")));
        let late = format!("{} why is my test failing?", "word ".repeat(4000));
        assert_eq!(classify(&late), Verdict::Unsure, "the question past 8 KB is not read");
    }

    #[test]
    fn any_unicode_is_read_without_panicking() {
        for prompt in ["🙏", "日本語で説明して", "ℌ𝔢𝔩𝔩𝔬 ⟨error⟩", "a\u{301}\u{200d}👩‍💻", "İ", "ß\u{0}"]
        {
            let _ = classify(prompt);
        }
        assert_eq!(rule("🙏"), Some((RelianceClass::Other, "no_words")));
        assert_eq!(rule("danke schön!"), Some((RelianceClass::Other, "acknowledgement")));
        assert_eq!(rule("sí 👍"), Some((RelianceClass::Other, "acknowledgement")));
        assert_eq!(
            rule("Was ist der Unterschied zwischen Rc und Arc?").map(|r| r.0),
            Some(RelianceClass::ConceptualQuestion)
        );
    }

    #[test]
    fn code_blocks_become_a_marker_and_their_words_do_not_count() {
        let prompt = "is this right?\n```rust\nfn f() { panic!(\"fix it, it crashes\") }\n```\nthanks";
        assert_eq!(normalise(prompt), "is this right? ⟨code⟩ thanks");
        assert_eq!(rule(prompt), Some((RelianceClass::Verification, "is_it_right")));
        let unclosed = "can you explain this\n```\nwhy does it fail";
        assert_eq!(normalise(unclosed), "can you explain this ⟨code⟩");
        let pasted = "what does this do\nlet x = vec![1, 2];\nfor i in x {\n}";
        assert_eq!(normalise(pasted), "what does this do ⟨code⟩");
    }

    #[test]
    fn pasted_errors_and_stack_traces_become_a_marker_that_means_debugging_help() {
        let prompt =
            "hmm\n```\nTraceback (most recent call last):\n  File \"a.py\", line 3, in <module>\nKeyError: 'x'\n```";
        assert_eq!(normalise(prompt), "hmm ⟨error⟩");
        assert_eq!(rule(prompt), Some((RelianceClass::DebuggingHelp, "pasted_error")));
        let inline = "I get error[E0382]: borrow of moved value: `v`";
        assert_eq!(normalise(inline), "i get ⟨error⟩");
    }

    #[test]
    fn a_request_to_change_the_code_stays_delegation_with_an_error_pasted() {
        let prompt = "fix this\nTypeError: Cannot read properties of undefined (reading 'map')";
        assert_eq!(rule(prompt), Some((RelianceClass::Delegation, "imperative_request")));
    }

    #[test]
    fn verbs_that_are_also_nouns_are_requests_only_with_an_object() {
        for prompt in ["build fails on CI", "code doesn't compile", "add(2, 3) returns 6", "use of moved value: `v`"] {
            assert_ne!(rule(prompt).map(|r| r.0), Some(RelianceClass::Delegation), "{prompt}");
        }
        for prompt in ["build the project", "use a HashMap instead", "no, update the README"] {
            assert_eq!(rule(prompt), Some((RelianceClass::Delegation, "imperative_request")), "{prompt}");
        }
    }

    #[test]
    fn rules_of_two_classes_leave_the_prompt_to_the_model() {
        assert_eq!(classify("explain why my test fails"), Verdict::Unsure);
        assert_eq!(classify("can you help me with phase 2"), Verdict::Unsure);
    }

    #[test]
    fn error_handling_is_no_failure() {
        assert_eq!(
            rule("is there anything wrong with my error handling?").map(|r| r.0),
            Some(RelianceClass::Verification)
        );
    }
}
