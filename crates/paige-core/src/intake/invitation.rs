//! The coding-invitation detector (FR-001): the learner never sees the interviewer offer
//! coding before the app switches to it.
//!
//! The interviewer's reply streams in; [`sentences`] cuts it into complete sentences as they
//! arrive, and the runner shows each one only after [`solicits_coding`] passed it, so a
//! flagged sentence is never on screen. The check is deterministic: named patterns over a
//! normalised sentence (lowercase, ASCII apostrophes, punctuation as spaces, common
//! contractions folded). Talk about the learner's past coding — "How did you implement the
//! cache?" — is the interview's job and passes: weak patterns do not fire in a sentence
//! framed in the past or as a question about the learner, and offers of an exercise do not
//! fire when the noun is tied back to the learner's own work ("the challenge you mentioned").

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

/// Splits streamed text into its complete sentences (trimmed) and the unfinished rest.
///
/// A sentence ends at a line break, or at `.`, `!`, `?` or `…` (a run of them, then any
/// closing quotes or brackets) followed by whitespace. A stop followed by anything else is
/// inside the sentence: `3.5`, `v1.2.3`, `example.com/a.b`. After `e.g.`, `i.e.`, `vs.` and
/// the like, and after a list number (`1.` opening a sentence), the sentence goes on; after
/// an ellipsis it goes on when the next word is lowercase. A stop at the very end of the text
/// (or an ellipsis before only whitespace) is undecided — more text may follow — so it stays
/// in the rest; when the reply is finished, the rest is its last sentence.
///
/// Only whitespace is dropped: the sentences, in order, then the rest, are the text with the
/// whitespace between sentences removed. Splitting a prefix of a text gives a prefix of the
/// text's sentences, so splitting as the stream grows never takes back a sentence.
pub fn sentences(text: &str) -> (Vec<String>, String) {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut found = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        if c == '\n' {
            push_sentence(&mut found, &text[start..at]);
            start = at + c.len_utf8();
            i += 1;
            continue;
        }
        if !is_stop(c) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < chars.len() && is_stop(chars[j].1) {
            j += 1;
        }
        while j < chars.len() && is_closer(chars[j].1) {
            j += 1;
        }
        let end = chars.get(j).map_or(text.len(), |&(at, _)| at);
        match stop_kind(text, &chars, start, i, j) {
            Stop::End => {
                push_sentence(&mut found, &text[start..end]);
                start = end;
            }
            Stop::Inside => {}
            Stop::Undecided => break,
        }
        i = j;
    }
    (found, text[start..].trim_start().to_owned())
}

/// The name of the rule `sentence` breaks when it invites, offers or proposes coding, or
/// `None` when it does not. Case-insensitive; `let's` / `let us`, curly quotes and
/// punctuation make no difference.
pub fn solicits_coding(sentence: &str) -> Option<&'static str> {
    let text = normalise(sentence);
    let rules = &*RULES;
    for index in rules.set.matches(&text).iter() {
        let rule = &rules.rules[index];
        for found in rules.regexes[index].find_iter(&text) {
            let before = &text[..found.start()];
            let after = &text[found.end()..];
            let framed_in_the_past = rule.weak && rules.past_framing.is_match(before);
            let tied_to_past_work = rule.tied_back_exempt && rules.tied_back.is_match(after);
            if !framed_in_the_past && !tied_to_past_work {
                return Some(rule.name);
            }
        }
    }
    None
}

/// How a run of stops ends (or does not end) a sentence.
enum Stop {
    End,
    Inside,
    Undecided,
}

/// Words after which a `.` does not end the sentence (compared lowercase, inner dots kept).
const ABBREVIATIONS: &[&str] =
    &["e.g", "i.e", "eg", "ie", "vs", "cf", "mr", "mrs", "ms", "dr", "prof", "approx", "a.k.a", "aka", "incl"];

fn is_stop(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | ')' | ']' | '}' | '\u{201d}' | '\u{2019}' | '\u{bb}' | '*' | '_' | '`')
}

/// Whether the stops at `chars[stop..after]` (closers included) end the sentence begun at
/// byte `start`.
fn stop_kind(text: &str, chars: &[(usize, char)], start: usize, stop: usize, after: usize) -> Stop {
    let Some(&(_, next)) = chars.get(after) else { return Stop::Undecided };
    if !next.is_whitespace() {
        return Stop::Inside;
    }
    let stops: String = chars[stop..after].iter().map(|&(_, c)| c).filter(|&c| is_stop(c)).collect();
    if stops == "." {
        let word_start = chars[..stop]
            .iter()
            .rev()
            .take_while(|&&(_, c)| c.is_alphanumeric() || c == '.')
            .last()
            .map_or(chars[stop].0, |&(at, _)| at);
        let word = text[word_start..chars[stop].0].to_lowercase();
        if ABBREVIATIONS.contains(&word.as_str()) {
            return Stop::Inside;
        }
        let opens_sentence = text[start..word_start].trim().is_empty();
        if opens_sentence && !word.is_empty() && word.chars().all(|c| c.is_ascii_digit()) {
            return Stop::Inside;
        }
    }
    let is_ellipsis = stops.contains('…') || stops.starts_with("..");
    if is_ellipsis && !stops.contains(['!', '?']) {
        return match chars[after..].iter().map(|&(_, c)| c).find(|&c| c == '\n' || !c.is_whitespace()) {
            None => Stop::Undecided,
            Some('\n') => Stop::End,
            Some(c) if c.is_lowercase() => Stop::Inside,
            Some(_) => Stop::End,
        };
    }
    Stop::End
}

fn push_sentence(found: &mut Vec<String>, sentence: &str) {
    let sentence = sentence.trim();
    if !sentence.is_empty() {
        found.push(sentence.to_owned());
    }
}

/// Lowercase; curly and other apostrophes as `'`, kept only inside a word; every other
/// non-alphanumeric character a space; single spaces; common spelled-out forms contracted.
fn normalise(sentence: &str) -> String {
    let lower: Vec<char> = sentence
        .to_lowercase()
        .chars()
        .map(|c| if matches!(c, '\u{2019}' | '\u{2018}' | '\u{2bc}' | '\u{2032}' | '`' | '\u{b4}') { '\'' } else { c })
        .collect();
    let mut spaced = String::with_capacity(lower.len() + 2);
    spaced.push(' ');
    for (i, &c) in lower.iter().enumerate() {
        let inside_word = |k: Option<&char>| k.is_some_and(|c| c.is_alphanumeric());
        let keep = c.is_alphanumeric()
            || (c == '\'' && inside_word(i.checked_sub(1).and_then(|k| lower.get(k))) && inside_word(lower.get(i + 1)));
        spaced.push(if keep { c } else { ' ' });
    }
    spaced.push(' ');
    let mut text = spaced.split_whitespace().collect::<Vec<_>>().join(" ");
    text.insert(0, ' ');
    text.push(' ');
    for (long, short) in CONTRACTIONS {
        text = text.replace(long, short);
    }
    text.trim().to_owned()
}

/// Spelled-out forms folded into the contracted ones the rules are written with.
const CONTRACTIONS: &[(&str, &str)] = &[
    (" let us ", " let's "),
    (" lets ", " let's "),
    (" here is ", " here's "),
    (" it is ", " it's "),
    (" i would ", " i'd "),
    (" i will ", " i'll "),
    (" we will ", " we'll "),
    (" you will ", " you'll "),
    (" i have got ", " i've got "),
    (" i have ", " i've "),
    (" do not ", " don't "),
    (" i am ", " i'm "),
    (" you are ", " you're "),
    (" we are ", " we're "),
    (" wanna ", " want to "),
    (" gonna ", " going to "),
    (" gotta ", " got to "),
];

struct Rule {
    name: &'static str,
    pattern: String,
    /// Does not fire when the sentence before the match is framed in the past or as a
    /// question about the learner's habits ("Did you…", "How did…", "When you…").
    weak: bool,
    /// Does not fire when the match is followed by a tie back to the learner's own work
    /// ("…the challenge you mentioned", "…the coding part of that project").
    tied_back_exempt: bool,
}

struct Rules {
    rules: Vec<Rule>,
    set: RegexSet,
    regexes: Vec<Regex>,
    past_framing: Regex,
    tied_back: Regex,
}

/// Who proposes: a suggestion to do something together or an invitation to the learner.
const LEAD_STRONG: &str = r"(?:let's|shall we|why don't we|why don't you|why not|how about we|how about you|what about we|i'd like us to|i want us to|it's time (?:for us |for you )?to|time to|now we'll|we'll now|we're going to|we'll|would you (?:like|want|care|be up for|be willing|be keen|be ready|be interested in|mind)(?: to)?|do you (?:want|fancy|feel like)(?: to)?|are you (?:ready|up for|game|keen)(?: to| for)?|feel free to|i'd (?:like|love) (?:you|for you) to|i want you to|i'll have you|i (?:challenge|invite|encourage) you to|go ahead and|how would you like to)";
/// Weaker proposals that also start questions about the past ("Could you tell me…").
const LEAD_WEAK: &str = r"(?:can you|could you|will you|you could|you can|you should|you'll|you're going to|you might want to|you may want to|try to|please|we could|we can|we should|ready to|want to|care to)";
/// Words between the lead and the verb: "let's now just start …".
const FILLER: &str = r"(?:(?:now|then|first|just|quickly|actually|finally|together|go ahead and|start|begin|get started(?: with| on)?|get|try|try to|attempt to|jump in and|dive in and|do some|do a bit of|do a little|do a quick|have a go at|and|to|the|some|a bit of|a little|real|actual|quick|right away|straight away|jump into|dive into|move on to|switch to|get into|turn to)\s+){0,4}";
/// Verbs that mean coding whatever follows.
const CODE_VERB: &str = r"(?:code|coding|program|programming|implement|implementing|implementation|live code|live coding|pair program|pair programming|hack on|hack away|get our hands dirty|get your hands dirty)\b";
/// Verbs that mean coding when a coding object follows.
const MAKE_VERB: &str = r"(?:write|writing|build|building|create|creating|develop|developing|make|making|put together|whip up|knock out|sketch(?: out)?|draft|solve|solving|tackle|tackling|work on|working on|try|trying|do|doing|attempt|attempting|practi[cs]e|start|starting|begin|take on|set up|debug|fix|refactor|design|type out|type up|complete|finish)";
/// What gets coded.
const OBJECT: &str = r"(?:code|function|functions|method|class|program|script|solution|implementation|algorithm|snippet|app|application|api|endpoint|module|exercises?|challenges?|katas?|tasks?|problems?|puzzles?|unit tests?|tests?|test cases?|query|prototype|component|loop|cli|tool|service|server|website|web page|game|bot|parser|library|data structure|linked list|binary tree|stack|queue|fizzbuzz|leetcode|assignment|feature|project|something|(?:coding|programming|interview) questions?)\b";
/// A coding exercise, named as such.
const EXERCISE: &str = r"(?:(?:coding|programming|code|live coding|practice|hands on|technical|algorithm|algorithmic|whiteboard|implementation) (?:exercises?|challenges?|tasks?|problems?|questions?|katas?|puzzles?|session|round|part|portion|section|test|assignment|interview|bit|stage|phase)|katas?|leetcode|fizzbuzz)\b";
/// A task noun, for offers that make it a task ("here's a problem").
const TASK: &str = r"(?:problems?|tasks?|challenges?|exercises?|puzzles?|katas?)\b";
/// Sentence-opening words before an imperative.
const OPENER: &str = r"^(?:(?:ok|okay|so|now|great|alright|right|next|first|then|please|cool|good|perfect|nice|well|thanks|thank you|awesome)\s+)*";

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let rule = |name, pattern: String, weak, tied_back_exempt| Rule { name, pattern, weak, tied_back_exempt };
    let rules = vec![
        rule("proposes_coding", format!(r"\b{LEAD_STRONG}\s+{FILLER}{CODE_VERB}"), false, false),
        rule(
            "proposes_writing_code",
            format!(r"\b{LEAD_STRONG}\s+{FILLER}{MAKE_VERB}\s+(?:[\w']+\s+){{0,4}}?{OBJECT}"),
            false,
            true,
        ),
        rule("suggests_coding", format!(r"\b{LEAD_WEAK}\s+{FILLER}{CODE_VERB}"), true, false),
        rule(
            "suggests_writing_code",
            format!(r"\b{LEAD_WEAK}\s+{FILLER}{MAKE_VERB}\s+(?:[\w']+\s+){{0,4}}?{OBJECT}"),
            true,
            true,
        ),
        rule(
            "offers_an_exercise",
            format!(
                r"\b(?:here's|here are|i've (?:got |prepared )?(?:a|an|one|another|some|this)|i got|i'll give you|let me give you|i'd like to give you|i'm going to give you|i'll show you|let me show you|i prepared|i'll set you|let me set you|let me pose|i'll pose|ready for|up for|time for|next up|next is|moving on to|on to) (?:[\w']+\s+){{0,3}}?(?:{EXERCISE}|{TASK})"
            ),
            false,
            true,
        ),
        rule(
            "suggests_an_exercise",
            format!(
                r"\b(?:how|what) about (?:a|an|some|trying|doing|starting|tackling|solving|writing|the)\s+(?:[\w']+\s+){{0,2}}?(?:{EXERCISE}|{TASK}|function|code)"
            ),
            false,
            true,
        ),
        rule(
            "starts_an_exercise",
            format!(
                r"\b(?:start|begin|do|try|attempt|tackle|take on|give|solve|work through|move on to|move to|switch to|go to|head to|jump to|jump into|dive into|get to|transition to|proceed to|turn to) (?:[\w']+\s+){{0,3}}?{EXERCISE}"
            ),
            true,
            true,
        ),
        rule("live_coding", r"\b(?:live cod(?:e|ing)|pair program(?:ming)?|mob program(?:ming)?)\b".into(), true, true),
        rule(
            "open_your_editor",
            r"\b(?:open|pull up|fire up|launch|bring up|switch to|jump into|head over to|head to|go to|hop into|hop over to|start) (?:up )?(?:your|the|an|a) (?:code )?(?:editor|ide|terminal|repl|vs ?code|playground|sandbox|notebook|scratch file|new file)\b".into(),
            true,
            false,
        ),
        rule(
            "in_the_editor",
            r"\b(?:try|do|write|solve|build|implement|type|code|run|start)\b.*\bin (?:the|your|an) (?:code )?(?:editor|ide|terminal|repl)\b".into(),
            true,
            false,
        ),
        rule(
            "moves_to_the_coding_part",
            r"\b(?:move|go|switch|jump|transition|proceed|get|head|turn|continue|dive|shift|start|begin)(?: on| over| ahead| right)?(?: now)? (?:to|into|with|on) (?:the |a |some |our )?(?:coding|programming|hands on|practical|implementation|exercise|live coding)(?: (?:part|portion|section|bit|phase|stage|round|exercise|challenge|task|session|side))?\b".into(),
            true,
            true,
        ),
        rule(
            "try_solving",
            r"\b(?:try|trying|attempt|attempting|have a go at|take a stab at|take a crack at|take a shot at|try your hand at|give it a (?:go|try|shot) (?:by )?)\s*(?:solving|coding|writing|implementing|building|programming|debugging|refactoring|to (?:solve|code|write|implement|build|program|debug))\b".into(),
            true,
            false,
        ),
        rule(
            "write_some_code",
            r"\b(?:write|writing|type|typing|jot down|crank out|bang out|knock out|put together) (?:out |up |down )?(?:some|a bit of|a little|a little bit of|a few lines of|a line of|a snippet of|a piece of|a quick|a small|a short|a simple|a|an)\s+(?:[\w']+\s+)?(?:code|pseudocode|pseudo code|function|snippet|script|program|method|class)\b".into(),
            true,
            false,
        ),
        rule(
            "imperative_to_code",
            format!(r"{OPENER}(?:implement|code up|code|program)\b"),
            false,
            false,
        ),
        rule(
            "imperative_to_write_code",
            format!(
                r"{OPENER}(?:write|build|create|solve|refactor|debug|fix|sketch|draft|design|develop|make|complete|finish|try|start|begin|add|define|tackle)\s+(?:[\w']+\s+){{0,4}}?{OBJECT}"
            ),
            false,
            true,
        ),
        rule(
            "give_it_a_try",
            r"\b(?:want|like|care|ready|up for|keen|time) to (?:give it a (?:try|go|shot|whirl)|have a go|take a stab|try it (?:yourself|out|now))\b|^(?:(?:now|so|ok|okay|go ahead and)\s+)?(?:give it a (?:try|go|shot)|have a go at it|try it yourself)\b".into(),
            false,
            false,
        ),
        rule(
            "task_for_you",
            format!(r"\b(?:a|an|one|this|the) (?:(?:small|little|quick|short|simple|tiny|coding|programming|practice)\s+)*{TASK} for you\b"),
            true,
            false,
        ),
    ];
    let set = RegexSet::new(rules.iter().map(|r| r.pattern.as_str())).expect("the invitation rules compile");
    let regexes = rules.iter().map(|r| Regex::new(&r.pattern).expect("an invitation rule compiles")).collect();
    let past_framing = Regex::new(
        r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|have you|has|when you|while you|before you|after you|back then|at the time|looking back|used to|got you|made you|led you|ever|usually|typically|normally|how|what|why (?:did|do|does|was|were|had|would|is|are)|which|where|whether|if|who|do you (?:enjoy|like|prefer|usually|often|ever|find|think|remember|recall|normally|typically|tend))\b",
    )
    .expect("the past-framing pattern compiles");
    let tied_back = Regex::new(
        r"^\s*(?:(?:that |which )?(?:you|you've|you'd|we|we've) (?:\w+ed|built|wrote|made|did|had|hit|ran|found|said|told|led|chose|took|gave|saw|got|were|was|fought|brought|thought|knew|began|shipped|spent|lost|won|went|came|felt|kept|left|met|put|read|set|sent|understood|overcame)\b|your|we discussed|we talked|from (?:that|your|the)|in (?:that|your)|at (?:that|your|work)|on (?:that|your)|of\b|with (?:that|your)|back\b|(?:[\w']+\s+){0,3}(?:did|was|were|had) (?:you|it|that)\b)",
    )
    .expect("the tied-back pattern compiles");
    Rules { rules, set, regexes, past_framing, tied_back }
});
