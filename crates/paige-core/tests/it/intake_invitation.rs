//! The intake's coding-invitation detector: invitations flagged, talk about past coding
//! passed, and streamed text split into sentences without losing any of it.

use paige_core::intake::invitation::{sentences, solicits_coding};
use proptest::prelude::*;

/// Offers, proposals and invitations to code: each must be flagged.
const INVITATIONS: &[&str] = &[
    "Let's write a function that reverses a string.",
    "Let us start coding!",
    "Let\u{2019}s build a small REST API together.",
    "lets implement a linked list",
    "Shall we move on to the coding part?",
    "Shall we start coding now?",
    "Why don't we write some code?",
    "Why don't you try solving it in the editor?",
    "How about we implement a cache right now?",
    "Would you like to try a coding exercise?",
    "Would you like to write a function to parse the log?",
    "Do you want to try coding it?",
    "Want to try coding it yourself?",
    "Are you ready to code?",
    "Ready for a coding challenge?",
    "Here's a small exercise for you: reverse a linked list.",
    "Here is a kata you could try.",
    "I have a quick coding task for you.",
    "I've got a challenge for you.",
    "Let me give you a problem to solve.",
    "I'd like you to implement a binary search.",
    "I want you to write a program that counts words.",
    "Can you write a function that returns the largest number?",
    "Could you implement it now?",
    "Open your editor and create a new file.",
    "Go ahead and open the terminal.",
    "Let's do some live coding.",
    "How about a quick coding problem?",
    "What about a small kata to warm up?",
    "Time to write some code!",
    "It's time for the coding exercise.",
    "Now let's switch to the hands-on part.",
    "Try solving this: given an array, find the duplicates.",
    "Write a function that sums a list of numbers.",
    "Implement a stack with push and pop.",
    "Okay, build a small CLI that prints the date.",
    "Great \u{2014} let\u{2019}s get coding!",
    "You could try writing a parser for it right now.",
    "Feel free to start implementing the solution.",
    "I challenge you to solve FizzBuzz.",
    "Would you be up for some pair programming?",
    "Next up: a coding challenge.",
    "Let's move on to the implementation.",
    "Would you like to give it a try?",
    "Take a stab at writing the function.",
    "Let's tackle a kata together.",
    "\u{201c}Let\u{2019}s code it,\u{201d} I'd say \u{2014} shall we?",
    "LET'S WRITE SOME CODE.",
    "How would you like to implement it?",
    "Let's put together a quick script.",
    "Go on, type it out in the editor.",
    "Here's a task that you could try now.",
];

/// Questions and remarks about the learner's past work: none may be flagged.
const BACKGROUND: &[&str] = &[
    "You wrote the parser in Rust \u{2014} what made that hard?",
    "How did you implement caching?",
    "Tell me about a challenging project you worked on recently.",
    "What was the trickiest problem you ran into?",
    "Would you like to share another challenging project you worked on?",
    "Why did you choose Postgres over MongoDB?",
    "What made you start programming?",
    "When did you start coding?",
    "Have you done live coding interviews before?",
    "Did you write some code to automate the deploys?",
    "How did you switch to programming from design?",
    "What was the biggest challenge for you on that team?",
    "How did you debug the memory leak?",
    "Can you tell me more about how you built the API?",
    "Could you walk me through the problem you hit with the cache?",
    "What did you try first when the tests kept failing?",
    "If you could build that app again, what would you change?",
    "How would you approach that problem differently today?",
    "What about the coding challenge you mentioned earlier?",
    "How about the coding part of that project \u{2014} who did it?",
    "What tools did you use to build the service?",
    "Did you open your editor and start from scratch?",
    "That sounds like a tough problem to solve.",
    "It's impressive that you implemented the scheduler yourself.",
    "So the function you wrote was called on every request?",
    "Why did you decide to write your own queue?",
    "What did you learn from building the bot?",
    "When you refactored the module, what broke first?",
    "Was the algorithm you picked fast enough?",
    "How long did it take to write the first version?",
    "What part of the code were you most proud of?",
    "Who else worked on that codebase with you?",
    "What did your team think of the solution you proposed?",
    "How did you test the parser?",
    "Let's talk about the project you mentioned.",
    "Let's go back to the migration you described.",
    "Let's build on that: what happened next?",
    "Would you like to tell me what happened after the outage?",
    "Did you pair program with anyone on that?",
    "How did you decide which feature to build first?",
    "Thanks for sharing that.",
    "Interesting \u{2014} the retry loop you added must have helped.",
    "What was it like to build the API under a deadline?",
    "How did you fix the bug in the end?",
    "What do you think you should have implemented differently?",
    "Which part of the solution was your own idea?",
    "Do you enjoy pair programming?",
    "Was there a coding task you found boring?",
    "I've seen that kind of problem trip up lots of teams.",
    "Tell me more about the exercise tracker you built.",
    "Did you try it in the terminal first?",
    "Why did you write it in the editor instead of a notebook?",
];

#[test]
fn coding_invitations_are_flagged_with_the_rule_that_matched() {
    assert!(INVITATIONS.len() >= 40);
    let missed: Vec<&str> = INVITATIONS.iter().copied().filter(|s| solicits_coding(s).is_none()).collect();
    assert!(missed.is_empty(), "invitations not flagged: {missed:#?}");
}

#[test]
fn questions_about_past_coding_are_not_flagged() {
    assert!(BACKGROUND.len() >= 40);
    let flagged: Vec<(&str, &str)> =
        BACKGROUND.iter().filter_map(|s| solicits_coding(s).map(|rule| (*s, rule))).collect();
    assert!(flagged.is_empty(), "background flagged as invitations: {flagged:#?}");
}

#[test]
fn the_scripted_background_questions_pass_the_detector() {
    use paige_core::prompts::intake_interviewer::{ANOTHER_PROJECT_QUESTION, BACKGROUND_QUESTIONS};
    for question in BACKGROUND_QUESTIONS.iter().chain([&ANOTHER_PROJECT_QUESTION]) {
        for sentence in sentences(&format!("{question}\n")).0 {
            assert_eq!(solicits_coding(&sentence), None, "{sentence}");
        }
    }
}

#[test]
fn the_rule_name_says_what_kind_of_invitation_it_was() {
    for (sentence, rule) in [
        ("Let's start coding!", "proposes_coding"),
        ("Open your editor, please.", "open_your_editor"),
        ("Here's a kata for you.", "offers_an_exercise"),
        ("Shall we do some live coding?", "proposes_coding"),
        ("Have a go at writing it.", "try_solving"),
    ] {
        assert_eq!(solicits_coding(sentence), Some(rule), "{sentence}");
    }
}

/// Splits `text` and shows the result as `sentence | sentence || rest`.
fn check_split(text: &str, expected: &str) {
    let (found, rest) = sentences(text);
    assert_eq!(format!("{} || {rest}", found.join(" | ")), expected, "splitting {text:?}");
}

#[test]
fn sentences_end_at_stops_followed_by_space_and_at_line_breaks() {
    check_split("Hello there. How are you? Fine! And", "Hello there. | How are you? | Fine! || And");
    check_split("First line\nSecond line\n", "First line | Second line || ");
    check_split("What?! Really.  Yes", "What?! | Really. || Yes");
    check_split("No stop at the end yet", " || No stop at the end yet");
    check_split("", " || ");
    check_split("\n\n  \n", " || ");
}

#[test]
fn abbreviations_decimals_versions_and_urls_do_not_end_a_sentence() {
    check_split("Use a tool, e.g. a profiler. Then", "Use a tool, e.g. a profiler. || Then");
    check_split("That is, i.e. the cache. Next", "That is, i.e. the cache. || Next");
    check_split("It took 3.5 seconds. Ok", "It took 3.5 seconds. || Ok");
    check_split("Was it v1.2.3 or 2.0? Hm", "Was it v1.2.3 or 2.0? || Hm");
    check_split("See https://example.com/a.b?c=d for it. Ok", "See https://example.com/a.b?c=d for it. || Ok");
    check_split("Postgres vs. MySQL. Why", "Postgres vs. MySQL. || Why");
    check_split("1. Tell me more. 2. Why", "1. Tell me more. || 2. Why");
    check_split("Wait... \nok", "Wait... || ok");
}

#[test]
fn closing_quotes_and_brackets_stay_with_their_sentence() {
    check_split("He said \u{201c}stop.\u{201d} Then he left.", "He said \u{201c}stop.\u{201d} || Then he left.");
    check_split("(It broke.) So what? ", "(It broke.) | So what? || ");
    check_split("You called it 'done.' Why", "You called it 'done.' || Why");
}

#[test]
fn ellipses_end_a_sentence_only_before_a_capital() {
    check_split("Well... that was hard. Ok", "Well... that was hard. || Ok");
    check_split("Hmm\u{2026} Tell me more. Ok", "Hmm\u{2026} | Tell me more. || Ok");
    check_split("Wait... ", " || Wait... ");
}

#[test]
fn a_stop_at_the_end_of_the_stream_waits_for_more_text() {
    check_split("It took 3.", " || It took 3.");
    check_split("It took 3.5 s", " || It took 3.5 s");
    check_split("Done.\u{201d}", " || Done.\u{201d}");
}

proptest! {
    #[test]
    fn splitting_loses_nothing_but_whitespace_between_sentences(text in text_strategy()) {
        let (found, rest) = sentences(&text);
        let mut cursor = 0;
        for sentence in &found {
            prop_assert!(!sentence.is_empty() && sentence.trim() == sentence);
            let skipped = text[cursor..].len() - text[cursor..].trim_start().len();
            cursor += skipped;
            prop_assert!(text[cursor..].starts_with(sentence.as_str()), "{sentence:?} not next in {text:?}");
            cursor += sentence.len();
        }
        prop_assert_eq!(text[cursor..].trim_start(), rest.as_str());
    }

    #[test]
    fn a_growing_stream_never_takes_back_a_sentence(text in text_strategy(), cut in 0usize..200) {
        let boundaries: Vec<usize> = text.char_indices().map(|(at, _)| at).chain([text.len()]).collect();
        let prefix = &text[..boundaries[cut % boundaries.len()]];
        let (early, _) = sentences(prefix);
        let (full, _) = sentences(&text);
        prop_assert!(full.starts_with(&early), "{early:?} is not a prefix of {full:?}");
    }

    #[test]
    fn the_detector_never_panics(text in text_strategy()) {
        for sentence in sentences(&text).0 {
            let _ = solicits_coding(&sentence);
        }
        let _ = solicits_coding(&text);
    }
}

/// Stops, closers, whitespace and other characters the splitter looks at, `|`-separated.
const PIECES: &str = ".|!|?|\u{2026}|...| |  |\n|\t|\"|'|\u{201d}|\u{2019}|)|]|A|a|1|/|:|\u{1f600}";

/// Text made of the characters the splitter cares about, and some it does not.
fn text_strategy() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("word".to_owned()),
        Just("e.g".to_owned()),
        Just("3".to_owned()),
        Just("Let's code".to_owned()),
        Just("caf\u{e9}".to_owned()),
        prop::sample::select(PIECES.split('|').collect::<Vec<_>>()).prop_map(str::to_owned),
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(pieces, 0..60).prop_map(|parts| parts.concat())
}
