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
    "Let's get started on the coding task.",
    "Shall we dive into some code?",
    "Would you be willing to write a quick function for me?",
    "Could you show me how you'd implement that now, in the editor?",
    "I'd love to see you code it up.",
    "Let's see you solve a small problem.",
    "How about you write the tests first?",
    "Time for a little programming challenge!",
    "Do you fancy a quick kata?",
    "Now, write me a function that checks for palindromes.",
    "Let's code this together.",
    "Why not try implementing it yourself?",
    "Let's try a practical exercise.",
    "I'd like to give you a coding problem.",
    "We can start the coding exercise now.",
    "Go ahead and start typing your solution.",
    "Let's jump into the editor and build it.",
    "Please implement a function called add.",
    "Would you mind writing a small script for this?",
    "Let's do a quick whiteboard problem.",
    "Let's switch gears and do some programming.",
    "Ready to start the exercise?",
    "Let me hand you a small task: parse this CSV.",
    "Let\u{2019}s have you write a quick prototype.",
    "Your task: implement a queue using two stacks.",
    "Here's your first challenge: reverse a string.",
    "Try it out in the terminal.",
    "Can you code a quick example for me?",
    "Let's roll up our sleeves and write some code.",
    "We could pair on a small feature right now.",
    "Want to give it a shot?",
    "I'm curious to see how you'd approach it in code.",
    "Feel free to jump in and code!",
    "So, your first task is to add a retry to the client.",
    "Now it's your turn to write some code.",
    "Let's put your skills to the test with a coding exercise.",
    "I think we're ready for the practical part.",
    "Let's kick off the coding session.",
    "Shall we get our hands on the keyboard?",
    "How about you show me with some code?",
    "Why don't you open VS Code and give it a go?",
    "It'd be fun to try building that now.",
    "Could you code up a quick solution?",
    "Let's apply that to a real coding problem.",
    "Here's a coding question for you.",
    "Let's start the technical part of the interview.",
    "Let me give you something to implement.",
    "Write me a small program.",
    "Let's try writing it together.",
    "Go ahead and implement the function.",
    "Want to jump into the code?",
    "Let's dive into the code.",
    "Can you type out a solution?",
    "Let's make this hands-on.",
    "Let's warm up with FizzBuzz.",
    "Let's see some code!",
    "Ready to put this into practice?",
    "Let's turn this into code.",
    "I'd like to see your coding skills in action.",
    "Try your hand at a small refactoring exercise.",
    "Let's get practical: build a to-do API.",
    "How about trying to code it?",
    "Perhaps you could write a quick test for that?",
    "Maybe we should start with a simple function.",
    "Let's get into the code now.",
    "OK, time to code!",
    "Let's pick a small function and write it together.",
    "Why not write it out in Python?",
    "Your next challenge: a function that merges two sorted lists.",
    "I'll give you a short kata now.",
    "How about we pair on a quick exercise?",
    "Do you want to have a go at it now?",
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
    "What was the hardest bug you fixed on that project?",
    "How did your team decide to implement authentication?",
    "What did you do when the tests started failing?",
    "Can you describe the architecture you designed?",
    "Could you explain why you picked that library?",
    "It sounds like you had to adapt quickly.",
    "What kind of problems did the new requirements cause?",
    "Tell me about the exercise app you shipped.",
    "Why did you rewrite the function in Go?",
    "What led you to build your own framework?",
    "How did you approach writing the migration scripts?",
    "What did coding the scheduler teach you?",
    "Would you say the project was a success?",
    "Would you like to tell me about the hardest part?",
    "Do you want to tell me more about the outage?",
    "How did you go about solving the race condition?",
    "What made the implementation tricky?",
    "What would you do differently if you had to build it again?",
    "Which language did you write the backend in?",
    "How did you pair program remotely with your team?",
    "What was your role in writing the code?",
    "You mentioned a kata club earlier \u{2014} what did you get out of it?",
    "How did you come up with the caching approach?",
    "Was there a point where you had to start over?",
    "Did the problem come up again later?",
    "How did you handle the task when requirements changed?",
    "That's a clever workaround.",
    "What was the trickiest part of writing the parser?",
    "When did you decide to switch to TypeScript?",
    "How did you test the solution you built?",
    "How did you move on to the implementation after the design phase?",
    "What made you want to build a compiler?",
    "What was it like to start programming at that job?",
    "How did you know it was time to refactor?",
    "Did you ever have to write code under a tight deadline?",
    "What challenge did you enjoy the most?",
    "Let's stay on the payments project for a moment.",
    "Let's focus on the decision to use queues.",
    "What was the first thing you built for that client?",
    "Why did your team write the tool in Python?",
    "Your task there was mostly about scaling, right?",
    "Your challenge was the deadline, then?",
    "I'd love to hear how you built it.",
    "Can you show me how you debugged it back then?",
    "Did you like the kata sessions at your old job?",
    "How did you approach it in code back then?",
    "What language was the code in?",
    "Let's dig into the code review process you had.",
    "What were you building at the time?",
    "How do you usually approach a new codebase?",
    "How do you decide when to write tests?",
    "What would you tell someone about to start coding?",
    "When you write code, how do you keep it readable?",
    "Would you like to keep talking about this project or share another?",
    "Let's take a step back: why did the rewrite happen?",
    "Let's hear about the next project.",
    "Tell me about a time you had to code under pressure.",
    "You seem to enjoy building tools.",
    "It sounds like writing that code was stressful.",
    "Let's dive into the code you wrote for that service.",
    "How did you get started with programming?",
    "What drew you to backend development?",
    "What's a piece of code you're proud of?",
    "How did you learn to write clean functions?",
    "What practice helped you most as a developer?",
    "Did your manager give you a task you disliked?",
    "Let's stay with that project: what was the hardest part of the code?",
    "Thanks! So, how did you structure the code?",
    "Great, take me through how the code evolved.",
    "Okay, give me an example of a function you were proud of.",
    "Take your time \u{2014} what was the trickiest part of the implementation?",
    "Get comfortable and tell me about a project where the code got messy.",
    "Would you like to share what language the code was in?",
    "Do you want to say more about the script you wrote?",
    "Let's go deeper into why the implementation was slow.",
    "I'd like to hear more about the code reviews on that team.",
    "Let's come back to the parser for a second: what made it hard?",
    "Would you say the code was maintainable?",
    "Feel free to share any code-related challenge you faced.",
    "Try to remember what the code looked like before the refactor.",
    "Could you give an example of a function that caused trouble?",
    "Let's get into the details of the code.",
    "Let's focus on the editor plugin you built.",
    "It's time to hear about another project.",
    "Perhaps you could describe the architecture?",
    "Ready when you are: what was the project?",
    "So the terminal app was your first real project?",
    "Let's talk about your favourite programming language.",
    "I'd love to see how that project turned out for your users.",
    "Let me know if the code was open source.",
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
