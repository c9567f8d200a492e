//! Claude Code's first step in a session (issue 28): nothing else tells it to plan, and a
//! model does only what its context says. From `prompts/coach-kickoff/prompt.md`, with the
//! work and what the learner said in the interview filled in.

/// From `prompts/coach-kickoff/prompt.md`; `{work}` and `{interview}` are filled in.
pub const TEMPLATE: &str = include_str!("../../../../prompts/coach-kickoff/prompt.md");

/// The largest work description passed on; an issue body longer than this is cut.
const MAX_WORK_CHARS: usize = 4000;

/// The kickoff for `title` (an issue's `#N Title`, or typed work), its `description`, and the
/// interview's coding task when one was held.
pub fn render(title: &str, description: Option<&str>, interview: Option<&str>) -> String {
    let mut work = title.trim().to_owned();
    if let Some(description) = description.map(str::trim).filter(|d| !d.is_empty()) {
        work.push_str("\n\n");
        work.extend(description.chars().take(MAX_WORK_CHARS));
    }
    let interview = match interview.map(str::trim).filter(|i| !i.is_empty()) {
        Some(task) => format!("In Paige's intake interview the learner was set this first task: {task}"),
        None => "There was no intake interview this time.".to_owned(),
    };
    TEMPLATE.replace("{work}", &work).replace("{interview}", &interview)
}
