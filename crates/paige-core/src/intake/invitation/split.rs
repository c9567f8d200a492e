//! Cutting a streamed reply into sentences, so each one can be checked before it is shown.

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
