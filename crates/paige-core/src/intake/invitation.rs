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
//! An imperative after a colon or dash ("Okay, your turn: implement the stack.") is checked
//! as the opening of its own clause.

mod split;

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

pub use split::sentences;

/// The name of the rule `sentence` breaks when it invites, offers or proposes coding, or
/// `None` when it does not. Case-insensitive; `let's` / `let us`, curly quotes and
/// punctuation make no difference.
pub fn solicits_coding(sentence: &str) -> Option<&'static str> {
    let rules = &*RULES;
    let whole = normalise(sentence);
    if let Some(rule) = first_rule_broken(rules, &whole, false) {
        return Some(rule);
    }
    // "Okay, your turn: implement the stack." An imperative after a colon, semicolon or dash
    // opens its own clause; only the rules about a sentence's opening look at each clause, so
    // the past framing of the clauses before still counts for the others.
    sentence
        .split([':', ';', '\u{2014}', '\u{2013}'])
        .skip(1)
        .find_map(|clause| first_rule_broken(rules, &normalise(clause), true))
}

/// The name of the first rule `text` (normalised) breaks; with `openings_only`, of the rules
/// about how a sentence opens.
fn first_rule_broken(rules: &Rules, text: &str, openings_only: bool) -> Option<&'static str> {
    for index in rules.set.matches(text).iter() {
        let rule = &rules.rules[index];
        if openings_only && !rule.opening {
            continue;
        }
        for found in rules.regexes[index].captures_iter(text) {
            let whole = found.get(0).expect("a match has group 0");
            let before = &text[..whole.start()];
            let after = &text[whole.end()..];
            let framed_in_the_past = rule.weak && rules.past_framing.is_match(before);
            let tied_to_past_work = rule.tied_back_exempt && rules.tied_back.is_match(after);
            let just_talk = found.name("between").is_some_and(|between| {
                rules.past_framing.is_match(between.as_str()) || rules.talk.is_match(between.as_str())
            });
            if !framed_in_the_past && !tied_to_past_work && !just_talk {
                return Some(rule.name);
            }
        }
    }
    None
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
    (" it would ", " it'd "),
    (" how bout ", " how about "),
    (" what bout ", " what about "),
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
    /// Looks at how the sentence opens (an imperative, "your task"), so it is also tried on
    /// each clause after a colon, semicolon or dash.
    opening: bool,
}

struct Rules {
    rules: Vec<Rule>,
    set: RegexSet,
    regexes: Vec<Regex>,
    past_framing: Regex,
    tied_back: Regex,
    /// Conversation verbs: "let's talk about the code" is about the past project.
    talk: Regex,
}

/// Who proposes: a suggestion to do something together or an invitation to the learner.
const LEAD_STRONG: &str = concat!(
    r"(?:let's have you|let me have you|let's|shall we|why don't we|why don't you|why not|",
    r"how about we|how about you|what about we|i'd like us to|i want us to|it's time (?:for us |",
    r"for you )?to|time to|now we'll|we'll now|we're going to|we'll|would you (?:like|want|care|",
    r"be up for|be willing|be keen|be ready|be interested in|mind)(?: to)?|do you (?:want|fancy|",
    r"feel like)(?: to)?|are you (?:ready|up for|game|keen)(?: to| for)?|feel free to|",
    r"i'd (?:like|love) (?:you|for you) to|i want you to|i'll have you|i (?:challenge|invite|",
    r"encourage) you to|go ahead and|how would you like to|(?:i'd |i )?(?:suggest|propose|",
    r"recommend)(?: that)? (?:we|you)|it'd be (?:great|nice|cool|fun|good|awesome|interesting|",
    r"helpful|useful) (?:if (?:you|we) (?:could|would|can)|for you to|to))",
);
/// Weaker proposals that also start questions about the past ("Could you tell me…").
const LEAD_WEAK: &str = concat!(
    r"(?:can you|could you|will you|you could|you can|you should|you'll|you're going to|",
    r"you might want to|you may want to|try to|please|we could|we can|we should|ready to|",
    r"want to|care to)",
);
/// Words between the lead and the verb: "let's now just start …".
const FILLER: &str = concat!(
    r"(?:(?:now|then|first|just|quickly|actually|finally|together|go ahead and|start|begin|",
    r"get started(?: with| on)?|get|try|try to|attempt to|jump in and|dive in and|do some|",
    r"do a bit of|do a little|do a quick|have a go at|and|to|the|some|a bit of|a little|real|",
    r"actual|quick|right away|straight away|jump into|dive into|move on to|switch to|get into|",
    r"turn to|(?:switch|shift|change) gears and|move on and)\s+){0,4}",
);
/// Verbs that mean coding whatever follows.
const CODE_VERB: &str = concat!(
    r"(?:code|coding|program|programming|implement|implementing|implementation|live code|",
    r"live coding|pair program|pair programming|hack on|hack away|get our hands dirty|",
    r"get your hands dirty|prototype|prototyping|start typing|type (?:it|this|that|them|the code|",
    r"your (?:code|solution)) (?:out|up))\b",
);
/// Verbs that mean coding when a coding object follows.
const MAKE_VERB: &str = concat!(
    r"(?:write|writing|build|building|create|creating|develop|developing|make|making|",
    r"put together|whip up|knock out|sketch(?: out)?|draft|solve|solving|tackle|tackling|",
    r"work on|working on|try|trying|do|doing|attempt|attempting|practi[cs]e|start|starting|",
    r"begin|take on|set up|debug|fix|refactor|design|type out|type up|complete|finish|pair on|",
    r"spin up|hammer out|crank out|bang out|churn out|throw together|hack together|hack up|cook up|",
    r"mock up|code up|rough out|scaffold)",
);
/// What gets coded.
const OBJECT: &str = concat!(
    r"(?:code|function|functions|method|class|program|script|solution|implementation|algorithm|",
    r"snippet|app|application|api|endpoint|module|exercises?|challenges?|katas?|tasks?|",
    r"problems?|puzzles?|unit tests?|tests?|test cases?|query|component|loop|cli|tool|",
    r"service|server|website|web page|game|bot|parser|library|data structure|linked list|",
    r"binary tree|stack|queue|fizzbuzz|leetcode|assignment|feature|project|something|(?:coding|",
    r"programming|interview) questions?|(?:versions?|prototype|proof of concept|poc|mvp|",
    r"demo|mock ?up|clone)(?: of (?:it|this|that|them|one))?|regex|regexp|",
    r"regular expressions?|benchmarks?|migrations?|hello world)\b",
);
/// A coding exercise, named as such.
const EXERCISE: &str = concat!(
    r"(?:(?:coding|programming|code|live coding|practice|hands on|technical|algorithm|",
    r"algorithmic|whiteboard|implementation) (?:exercises?|challenges?|tasks?|problems?|",
    r"questions?|katas?|puzzles?|session|round|part|portion|section|test|assignment|interview|",
    r"bit|stage|phase)|katas?|leetcode|fizzbuzz)\b",
);
/// A task noun, for offers that make it a task ("here's a problem").
const TASK: &str = r"(?:problems?|tasks?|challenges?|exercises?|puzzles?|katas?)\b";
/// More proposals, for a coding term anywhere later in the sentence.
const COOCCUR_LEAD: &str = concat!(
    r"(?:(?:let me|i'll|i'm going to|i'd like to|i want to) (?:give|hand|offer|set|send|pose|paste|",
    r"drop|post)|",
    r"ready to|ready for|we're ready|time for|i'd like to see|i'd love to see|i want to see|",
    r"let me see|show me|maybe we should|maybe you could|perhaps we could|perhaps you could|",
    r"perhaps we should|^(?:(?:ok|okay|so|now|great|alright|right|next|then|please|cool|good|",
    r"perfect|nice|well|thanks|awesome)\s+)*(?:try|start|begin|tackle|attempt|solve|write|build|",
    r"implement|code|create|open|grab|pick up|take|give|have a go|get))",
);
/// What a proposal is about when it is about coding.
const CODING_TERM: &str = concat!(
    r"(?:code|coding|program|programming|implement|implementing|implementation|exercises?|",
    r"katas?|fizzbuzz|leetcode|keyboard|editor|ide|terminal|hands on|get practical|",
    r"practical (?:part|bit|section|portion|exercise|task|stage|phase|side)|technical (?:part|",
    r"bit|section|portion|round|stage|phase|exercise|task)|into practice|",
    r"something to (?:implement|build|code|write|solve|work on)|a problem to solve|functions?|",
    r"script|snippet|(?:small|quick|little|simple|tiny|toy) (?:app|api|cli|tool|program|project|",
    r"feature|service|game|bot|parser|function))\b",
);
/// Sentence-opening words before an imperative.
const OPENER: &str = concat!(
    r"^(?:(?:ok|okay|so|now|great|alright|right|next|first|then|please|cool|good|perfect|nice|",
    r"well|thanks|thank you|awesome)\s+)*",
);

static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let rule = |name, pattern: String, weak, tied_back_exempt| {
        let opening = pattern.starts_with('^');
        Rule { name, pattern, weak, tied_back_exempt, opening }
    };
    let rules = vec![
        rule("proposes_coding", format!(r"\b{LEAD_STRONG}\s+{FILLER}{CODE_VERB}"), false, true),
        rule(
            "proposes_writing_code",
            format!(r"\b{LEAD_STRONG}\s+{FILLER}{MAKE_VERB}\s+(?P<between>(?:[\w']+\s+){{0,4}}?){OBJECT}"),
            false,
            true,
        ),
        rule("suggests_coding", format!(r"\b{LEAD_WEAK}\s+{FILLER}{CODE_VERB}"), true, false),
        rule(
            "suggests_writing_code",
            format!(r"\b{LEAD_WEAK}\s+{FILLER}{MAKE_VERB}\s+(?P<between>(?:[\w']+\s+){{0,4}}?){OBJECT}"),
            true,
            true,
        ),
        rule(
            "offers_an_exercise",
            format!(
                concat!(
                    r"\b(?:here's|here are|i've (?:got |prepared )?(?:a|an|one|another|some|this)|i got|",
                    r"(?:let me|i'll|i'm going to|i'd like to|i want to|allow me to) (?:give|hand|offer|show|",
                    r"set|send|pose)(?: you)?|(?:do you fancy|fancy|do you want|would you like|would you prefer|",
                    r"care for)|i prepared|i'll set you|let me set you|let me pose|i'll pose|ready for|up for|",
                    r"time for|next up|next is|moving on to|on to) (?:[\w']+\s+){{0,3}}?(?:{EXERCISE}|{TASK})",
                ),
                EXERCISE = EXERCISE,
                TASK = TASK
            ),
            false,
            true,
        ),
        rule(
            "suggests_an_exercise",
            format!(
                concat!(
                    r"\b(?:how|what) about (?:a|an|some|trying|doing|starting|tackling|solving|writing|",
                    r"the)\s+(?:[\w']+\s+){{0,2}}?(?:{EXERCISE}|{TASK}|function|code)",
                ),
                EXERCISE = EXERCISE,
                TASK = TASK
            ),
            false,
            true,
        ),
        rule(
            "starts_an_exercise",
            format!(
                concat!(
                    r"\b(?:start|begin|do|try|attempt|tackle|take on|give|solve|work through|move on to|move to|",
                    r"switch to|go to|head to|jump to|jump into|dive into|get to|transition to|proceed to|",
                    r"turn to) (?:[\w']+\s+){{0,3}}?{EXERCISE}",
                ),
                EXERCISE = EXERCISE
            ),
            true,
            true,
        ),
        rule("live_coding", r"\b(?:live cod(?:e|ing)|pair program(?:ming)?|mob program(?:ming)?)\b".into(), true, true),
        rule(
            "open_your_editor",
            concat!(
                r"\b(?:open|pull up|fire up|launch|bring up|switch to|jump into|head over to|head to|go to|",
                r"hop into|hop over to|start) (?:up )?(?:your|the|an|a) (?:code )?(?:editor|ide|terminal|",
                r"repl|vs ?code|playground|sandbox|notebook|scratch file|(?:new|empty|blank) (?:file|folder|",
                r"directory|project|repo|repository|branch|tab))\b",
            )
            .into(),
            true,
            false,
        ),
        rule(
            "proposal_mentions_coding",
            format!(r"\b(?:{LEAD_STRONG}|{COOCCUR_LEAD})\b(?P<between>.*?)\b{CODING_TERM}"),
            false,
            true,
        ),
        rule(
            "asks_to_see_you_code",
            concat!(
                r"\b(?:see|show me|watch) (?:how )?you(?:'d| would)? (?:[\w']+ )?(?:code|implement|write|",
                r"build|solve|program|tackle|type)\b|\bsee how you(?:'d| would) (?:[\w']+ ){1,4}in code\b",
            )
            .into(),
            false,
            false,
        ),
        rule(
            "in_code",
            concat!(
                r"\b(?:approach|tackle|solve|express|do|try|show|sketch|write|translate|turn|put|convert|",
                r"render|make) (?:[\w']+ ){0,5}?(?:in|as|into) (?:real |actual |working )?code\b",
            )
            .into(),
            true,
            false,
        ),
        rule(
            "in_a_language",
            concat!(
                r"\b(?:write|code|implement|build|redo|rewrite|do|solve|try)(?: it| this| that| one|",
                r" them)?(?: out| up)? in (?:python|rust|javascript|js|typescript|ts|go|golang|java|kotlin|",
                r"swift|c|cpp|c sharp|ruby|php|scala|elixir|haskell|sql|bash|shell|your favou?rite language|",
                r"any language)\b",
            )
            .into(),
            true,
            false,
        ),
        rule(
            "names_your_task",
            format!(
                r"{OPENER}your (?:(?:first|next|coding|little|small|quick|practice)\s+)*(?:task|challenge|exercise|assignment|kata|mission)\b"
            ),
            false,
            true,
        ),
        rule(
            "in_the_editor",
            concat!(
                r"\b(?:try|do|write|solve|build|implement|type|code|run|start|enter|paste)\b.*\b(?:in|into|",
                r"on) (?:the|your|an|a) (?:code )?(?:editor|ide|terminal|repl|console|shell|command line)\b",
            )
            .into(),
            true,
            false,
        ),
        rule(
            "moves_to_the_coding_part",
            concat!(
                r"\b(?:move|go|switch|jump|transition|proceed|get|head|turn|continue|dive|shift|start|",
                r"begin)(?: on| over| ahead| right)?(?: now)? (?:to|into|with|on) (?:the |a |some |",
                r"our )?(?:coding|programming|hands on|practical|implementation|exercise|",
                r"live coding)(?: (?:part|portion|section|bit|phase|stage|round|exercise|challenge|task|",
                r"session|side))?\b",
            )
            .into(),
            true,
            true,
        ),
        rule(
            "try_solving",
            concat!(
                r"\b(?:try|trying|attempt|attempting|have a go at|take a stab at|take a crack at|",
                r"take a shot at|try your hand at|give it a (?:go|try|shot) (?:by )?)\s*(?:solving|coding|",
                r"writing|implementing|building|programming|debugging|refactoring|to (?:solve|code|write|",
                r"implement|build|program|debug))\b",
            )
            .into(),
            true,
            false,
        ),
        rule(
            "write_some_code",
            concat!(
                r"\b(?:write|writing|type|typing|jot down|crank out|bang out|knock out|",
                r"put together) (?:out |up |down )?(?:some|a bit of|a little|a little bit of|a few lines of|",
                r"a line of|a snippet of|a piece of|a quick|a small|a short|a simple|a|",
                r"an)\s+(?:[\w']+\s+)?(?:code|pseudocode|pseudo code|function|snippet|script|program|method|",
                r"class)\b",
            )
            .into(),
            true,
            false,
        ),
        rule("imperative_to_code", format!(r"{OPENER}(?:implement|code up|code|program)\b"), false, false),
        rule(
            "imperative_to_write_code",
            format!(
                concat!(
                    r"{OPENER}(?:write|build|create|solve|refactor|debug|fix|sketch|draft|design|develop|make|",
                    r"complete|finish|try|start|begin|add|define|knock out|crank out|bang out|hammer out|",
                    r"whip up|spin up|put together|throw together|hack together|code up|mock up|prototype|",
                    r"tackle)\s+(?P<between>(?:[\w']+\s+){{0,4}}?){OBJECT}",
                ),
                OBJECT = OBJECT,
                OPENER = OPENER
            ),
            false,
            true,
        ),
        rule(
            "give_it_a_try",
            concat!(
                r"\b(?:want|like|care|ready|up for|keen|time) to (?:give it a (?:try|go|shot|whirl)|",
                r"have a go|take a stab|try it (?:yourself|out|now))\b|^(?:(?:now|so|ok|okay|",
                r"go ahead and)\s+)?(?:give it a (?:try|go|shot)|have a go at it|try it yourself)\b",
            )
            .into(),
            false,
            false,
        ),
        rule(
            "task_for_you",
            format!(
                r"\b(?:a|an|one|this|the) (?:(?:small|little|quick|short|simple|tiny|coding|programming|practice)\s+)*{TASK} for you\b"
            ),
            true,
            false,
        ),
        rule(
            "suggests_making",
            format!(
                concat!(
                    r"\b(?:how|what) about (?:writing|building|creating|coding|implementing|programming|",
                    r"making|developing|prototyping|putting together|whipping up|sketching|drafting|solving|",
                    r"tackling|hacking|spinning up|knocking out|typing)\s+(?:(?P<between>(?:[\w']+\s+){{0,4}}?)",
                    r"{OBJECT}|(?:it|this|that|one|them)\b)",
                ),
                OBJECT = OBJECT
            ),
            false,
            true,
        ),
        rule(
            "proposes_making_it_now",
            format!(
                concat!(
                    r"\b(?:{LEAD_STRONG})\s+{FILLER}(?:{MAKE_VERB}|{CODE_VERB})\s*(?:it|this|that|one|",
                    r"them|something)\b(?:\s+[\w']+){{0,3}}?\s+(?:from scratch|right now|now|right away|",
                    r"together|live|right here|here|step by step|in real time|on the spot)\b",
                ),
                LEAD_STRONG = LEAD_STRONG,
                FILLER = FILLER,
                MAKE_VERB = MAKE_VERB,
                CODE_VERB = CODE_VERB
            ),
            false,
            false,
        ),
        rule(
            "suggests_making_right_now",
            format!(
                concat!(
                    r"\b{LEAD_WEAK}\s+{FILLER}(?:{MAKE_VERB}|{CODE_VERB})\b(?:\s+[\w']+){{0,6}}?\s+",
                    r"(?:right now|right away|right here|on the spot|here and now|as we speak)\b",
                ),
                LEAD_WEAK = LEAD_WEAK,
                FILLER = FILLER,
                MAKE_VERB = MAKE_VERB,
                CODE_VERB = CODE_VERB
            ),
            true,
            false,
        ),
        rule(
            "asks_for_a_fix",
            concat!(
                r"\b(?:can you|could you|will you|would you|you|please|try to|go ahead and|let's|shall we|",
                r"now) (?:fix|debug|repair|correct|spot) (?:it|this|that|them|the bugs?|the errors?|the ",
                r"issues?|the problems?|the mistakes?)\b",
            )
            .into(),
            true,
            false,
        ),
        rule(
            "pair_roles",
            concat!(
                r"\byou drive\b|\bi'll navigate\b|\byou(?:'re| are| can be| could be) (?:the )?",
                r"(?:driver|driving)\b|\bi(?:'ll| can| could)? be (?:the )?navigator\b",
            )
            .into(),
            false,
            false,
        ),
        rule(
            "imperative_on_this",
            format!(
                r"{OPENER}(?:solve|implement|code|code up|write|build|fix|debug|refactor|program) (?:this|these|the following)\b"
            ),
            false,
            false,
        ),
        rule(
            "imperative_hands_on",
            format!(
                concat!(
                    r"{OPENER}(?:go ahead and )?(?:open|create|run|execute|type|paste|clone|install|launch|",
                    r"fire up|spin up|mkdir|cd into) (?:up )?(?:[\w']+ ){{0,3}}?(?:(?:new|empty|blank) )?",
                    r"(?:file|folder|directory|repo|repository|branch|project|terminal|editor|ide|console|shell|",
                    r"command|npm|cargo|pip|git|python\d*|node|[\w-]+ (?:py|rs|js|ts|go|java|rb|cpp|html|css|",
                    r"json|toml|sh))\b",
                ),
                OPENER = OPENER
            ),
            false,
            false,
        ),
        rule(
            "proposes_hands_on",
            format!(
                concat!(
                    r"\b{LEAD_STRONG}\s+{FILLER}(?:open|create|run|execute|type|paste|clone|install|launch|",
                    r"fire up|spin up) (?:up )?(?:[\w']+ ){{0,3}}?(?:(?:new|empty|blank) )?(?:file|folder|",
                    r"directory|repo|repository|branch|project|terminal|console|shell|command|npm|cargo|pip|git|",
                    r"python\d*|node|[\w-]+ (?:py|rs|js|ts|go|java|rb|cpp|html|css|json|toml|sh))\b",
                ),
                LEAD_STRONG = LEAD_STRONG,
                FILLER = FILLER
            ),
            false,
            true,
        ),
    ];
    let set = RegexSet::new(rules.iter().map(|r| r.pattern.as_str())).expect("the invitation rules compile");
    let regexes = rules.iter().map(|r| Regex::new(&r.pattern).expect("an invitation rule compiles")).collect();
    let past_framing = Regex::new(concat!(
        r"\b(?:did|didn't|was|wasn't|were|weren't|had|hadn't|have you|has|when you|while you|",
        r"before you|after you|back then|at the time|looking back|used to|got you|made you|led you|",
        r"ever|usually|typically|normally|how|what|why (?:did|do|does|was|were|had|would|is|are)|",
        r"which|where|whether|if|who|do you (?:enjoy|like|prefer|usually|often|ever|find|think|",
        r"remember|recall|normally|typically|tend))\b",
    ))
    .expect("the past-framing pattern compiles");
    let tied_back = Regex::new(concat!(
        r"^\s*(?:(?:[\w']+\s+){0,3}?(?:that |which )?(?:you|you've|you'd|we|we've|your team|",
        r"they) (?:\w+ed|built|wrote|made|did|had|hit|ran|found|said|told|led|chose|took|gave|saw|",
        r"got|were|was|fought|brought|thought|knew|began|shipped|spent|lost|won|went|came|felt|kept|",
        r"left|met|put|read|set|sent|understood|overcame)\b|you're|you are|your|we discussed|",
        r"we talked|from (?:that|your|the)|in (?:that|your)|at (?:that|your|work)|on (?:that|your)|",
        r"of (?:that|your|those|their|it|this project|the (?:project|app|system|service|team|",
        r"company|job|work|codebase|product))\b|with (?:that|your)|back\b|there\b|",
        r"(?:[\w']+\s+){0,2}(?:was|were|had been)\b|(?:[\w']+\s+){0,3}(?:did|was|were|had) (?:you|",
        r"it|that)\b)",
    ))
    .expect("the tied-back pattern compiles");
    let talk = Regex::new(concat!(
        r"\b(?:talk|chat|hear|discuss|tell|share|describe|explain|walk me through|walk through|",
        r"reflect|think back|look back|remember|recall|revisit|go back|come back|circle back|",
        r"get back|return|focus|stay|stick|step back|unpack|understand|learn|know|say|mention|why|",
        r"deeper|details?)\b",
    ))
    .expect("the talk pattern compiles");
    Rules { rules, set, regexes, past_framing, tied_back, talk }
});
