//! The interview's model calls: the interviewer's reply, streamed and checked sentence by
//! sentence before any UI sees it, and the CONTROL score of one answer.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::guard::{LastTurn, Pillar, Traits};
use super::invitation::{sentences, solicits_coding};
use crate::api::{CallOptions, ChatMessage};
use crate::ctx::Ctx;
use crate::prompts::{intake_control, intake_interviewer};
use crate::protocol::{IntakeLine, IntakeSentence, ServerMessage};

/// What the loop learns when a model call ends.
pub(super) enum Done {
    Reply { turn: u32, reply: Reply },
    Control { turn: u32, result: Result<(Traits<Pillar>, bool), String> },
}

/// The interviewer's reply as shown, and why a prepared question stands in for the model's
/// (a flagged reply twice, or a failed call).
pub(super) struct Reply {
    pub text: String,
    pub fallback: Option<String>,
}

/// The conversation for the interviewer: the transcript as alternating turns, starting with
/// the learner's (the API wants that; an opening line stands in), consecutive lines of one
/// side joined. The last learner line is the new user message.
fn conversation(transcript: &[IntakeLine]) -> (Vec<ChatMessage>, String) {
    let mut turns: Vec<ChatMessage> = vec![ChatMessage::user("(The learner opened the interview.)")];
    for line in transcript {
        let learner = line.role == "learner";
        match turns.last_mut() {
            Some(last) if (last.role == crate::api::ChatRole::User) == learner => {
                last.content.push_str("\n\n");
                last.content.push_str(&line.text);
            }
            _ if learner => turns.push(ChatMessage::user(line.text.clone())),
            _ => turns.push(ChatMessage::assistant(line.text.clone())),
        }
    }
    let last = match turns.last() {
        Some(last) if last.role == crate::api::ChatRole::User && turns.len() > 1 => turns.pop(),
        _ => None,
    };
    let message = last.map(|m| m.content).unwrap_or_else(|| "(The learner has not answered yet.)".into());
    (turns, message)
}

/// The interviewer's next reply for `turn`: streamed, each finished sentence shown (as
/// `intake:sentence`) once the coding-invitation detector passed it. A flagged reply is
/// dropped at its first flagged sentence and regenerated once with a stronger instruction;
/// flagged again, or failed, `fallback` (a prepared background question) is the reply.
pub(super) async fn interviewer_reply(
    core: Arc<Ctx>,
    session_id: String,
    turn: u32,
    transcript: Vec<IntakeLine>,
    fallback: &'static str,
) -> Done {
    let (history, message) = conversation(&transcript);
    let mut why = String::new();
    for system in [
        intake_interviewer::SYSTEM_PROMPT.to_owned(),
        format!("{}{}", intake_interviewer::SYSTEM_PROMPT, intake_interviewer::STRONGER_INSTRUCTION),
    ] {
        match attempt(&core, &session_id, turn, &system, &history, &message).await {
            Ok(Ok(text)) if !text.trim().is_empty() => {
                return Done::Reply { turn, reply: Reply { text, fallback: None } };
            }
            Ok(Ok(_)) => why = "the model's reply was empty".into(),
            Ok(Err(rule)) => {
                tracing::warn!(turn, rule, "intake: the interviewer's reply invited coding; withheld");
                why = format!("the model's reply invited coding ({rule})");
            }
            Err(err) => {
                tracing::warn!(turn, "intake: the interviewer's model call failed: {err}");
                why = err.readable("the interviewer's model call failed");
                break;
            }
        }
    }
    core.broadcast(ServerMessage::IntakeSentence(IntakeSentence { turn, text: fallback.to_owned() }));
    Done::Reply { turn, reply: Reply { text: fallback.to_owned(), fallback: Some(why) } }
}

/// One streamed attempt: `Ok(Ok(text shown))`, `Ok(Err(rule))` when a sentence was flagged
/// (the stream is dropped there), or the call's error.
async fn attempt(
    core: &Arc<Ctx>,
    session_id: &str,
    turn: u32,
    system: &str,
    history: &[ChatMessage],
    message: &str,
) -> Result<Result<String, &'static str>, crate::api::ApiError> {
    let options = CallOptions {
        session_id: Some(session_id),
        max_tokens: Some(400),
        ..CallOptions::new(intake_interviewer::CALL_TYPE, intake_interviewer::MODEL, system, message)
    };
    let flagged = CancellationToken::new();
    let mut rule: Option<&'static str> = None;
    let mut pending = String::new();
    let mut shown: Vec<String> = Vec::new();
    let mut show = |sentence: String, rule: &mut Option<&'static str>| {
        if let Some(hit) = solicits_coding(&sentence) {
            *rule = Some(hit);
            flagged.cancel();
            return;
        }
        core.broadcast(ServerMessage::IntakeSentence(IntakeSentence { turn, text: sentence.clone() }));
        shown.push(sentence);
    };
    let streamed = {
        let mut on_text = |delta: &str| {
            if rule.is_some() {
                return;
            }
            pending.push_str(delta);
            let (done, rest) = sentences(&pending);
            pending = rest;
            for sentence in done {
                show(sentence, &mut rule);
                if rule.is_some() {
                    return;
                }
            }
        };
        tokio::select! {
            result = core.api().stream_chat(core.db(), &options, history, &mut on_text) => Some(result),
            _ = flagged.cancelled() => None,
        }
    };
    if let Some(rule) = rule {
        return Ok(Err(rule));
    }
    streamed.expect("only a flag stops the stream early")?;
    let rest = pending.trim().to_owned();
    if !rest.is_empty() {
        let mut rule = None;
        show(rest, &mut rule);
        if let Some(rule) = rule {
            return Ok(Err(rule));
        }
    }
    Ok(Ok(shown.join(" ")))
}

/// The CONTROL score of one answer: a Haiku call that sees `last_turn` and nothing else,
/// checked (scores in range, rationales quoting the answer) before it counts.
pub(super) async fn control(core: Arc<Ctx>, session_id: String, turn: u32, last_turn: LastTurn) -> Done {
    let message = intake_control::user_message(&last_turn.last_question, &last_turn.last_answer);
    let options = CallOptions {
        session_id: Some(&session_id),
        ..CallOptions::new(intake_control::CALL_TYPE, intake_control::MODEL, intake_control::SYSTEM_PROMPT, &message)
    };
    let result = match core.api().call::<intake_control::IntakeControlResponse>(core.db(), &options).await {
        Err(err) => Err(format!("the CONTROL call failed: {err}")),
        Ok(answer) => match answer.verified(&last_turn.last_answer) {
            Err(why) => Err(format!("the CONTROL answer was not usable: {why}")),
            Ok(answer) => {
                let pillar = |p: &intake_control::PillarScore| Pillar {
                    score: p.score.clamp(0, 100) as u8,
                    rationale: p.rationale.clone(),
                };
                let pillars = Traits {
                    adaptability: pillar(&answer.adaptability),
                    creativity: pillar(&answer.creativity),
                    reasoning: pillar(&answer.reasoning),
                };
                Ok((pillars, answer.new_project))
            }
        },
    };
    Done::Control { turn, result }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(role: &str, text: &str) -> IntakeLine {
        IntakeLine { role: role.into(), text: text.into() }
    }

    #[test]
    fn the_conversation_alternates_from_the_learner_and_ends_with_the_newest_answer() {
        let transcript = [
            line("interviewer", "Tell me about a project."),
            line("learner", "A parser."),
            line("learner", "In Rust."),
        ];
        let (history, message) = conversation(&transcript);
        let roles: Vec<_> = history.iter().map(|m| m.role).collect();
        use crate::api::ChatRole::*;
        assert_eq!(roles, [User, Assistant]);
        assert_eq!(message, "A parser.\n\nIn Rust.", "rapid answers are one user turn");
    }
}
