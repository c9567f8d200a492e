//! What Paige tells Claude Code to move a session along (issue 28): nothing else tells it
//! to plan, and a model does only what its context says. The kickoff, Claude Code's first
//! step (`prompts/coach-kickoff/prompt.md`, with the work and what the learner said in the
//! interview filled in), and the word that the learner marked a phase done in the panel
//! (`phase-done.md`), which Claude Code, idle at its prompt, would not hear of otherwise.

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

/// The line typed into Claude Code for the kickoff (issue 41): short, for the learner to read
/// in their terminal. The kickoff itself comes with it as the prompt's hook context (and in
/// SessionStart's), where Claude Code reads it.
pub fn render_line(title: &str) -> String {
    let title: String = title.trim().chars().take(120).collect();
    format!("[Paige] Let's plan this session: {title}. (Paige's instructions for planning come with this message.)")
}

/// From `prompts/coach-kickoff/phase-done.md`; `{done}` and `{next}` are filled in.
pub const PHASE_DONE_TEMPLATE: &str = include_str!("../../../../prompts/coach-kickoff/phase-done.md");

/// The phase that comes next, for [`render_phase_done`].
#[derive(Debug, Clone, Copy)]
pub struct NextPhase<'a> {
    pub number: i64,
    pub title: &'a str,
    pub description: &'a str,
}

/// Claude Code's word that the learner marked phase `done` done, and what comes `next`
/// (`None`: that was the last phase).
pub fn render_phase_done(done: i64, next: Option<NextPhase<'_>>) -> String {
    let next = match next {
        Some(phase) => {
            let description: String = phase.description.trim().chars().take(MAX_WORK_CHARS).collect();
            format!("Phase {} is next: {}. {description}", phase.number, phase.title.trim())
        }
        None => "That was the last phase of the plan: go over the work with the learner, and once they say \
                 they are done, call paige_end_session."
            .to_owned(),
    };
    PHASE_DONE_TEMPLATE.replace("{done}", &done.to_string()).replace("{next}", &next)
}
