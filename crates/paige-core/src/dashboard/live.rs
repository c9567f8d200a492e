//! The dashboard knows the live session (issue 40): while a session is live, every UI that
//! asked for the dashboard gets its `dashboard:state` again when the session starts (or is
//! resumed), when its plan comes, when a phase is done, and when what its coaching cost has
//! changed (looked at every [`COST_EVERY`]; the dashboard's own model calls do not count, so
//! loading it pushes nothing); the session's end is `session_ended`'s.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::{Dashboard, blocking};
use crate::event::{Domain, Event};

/// How often the live session's cost is looked at.
pub const COST_EVERY: Duration = Duration::from_secs(10);

impl Dashboard {
    /// Follows `session_id` while it is live (until `cancel`): the loop is the session's.
    pub(crate) fn follow(
        self: &Arc<Self>,
        session_id: &str,
        cancel: CancellationToken,
        runtime: &tokio::runtime::Handle,
    ) {
        let mut events = self.ctx.subscribe();
        // The session just became live: every UI showing the dashboard is told now, before
        // anything else of the session reaches it; its cost so far is where changes count from.
        self.push_state();
        let mut cost = self.ctx.db().coaching_cost(session_id).ok();
        let (dashboard, session_id) = (Arc::downgrade(self), session_id.to_owned());
        let follow = async move {
            let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + COST_EVERY, COST_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let push = tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tick.tick() => {
                        let Some(dashboard) = dashboard.upgrade() else { break };
                        let id = session_id.clone();
                        let now = blocking(move || dashboard.ctx.db().coaching_cost(&id).ok()).await;
                        let changed = now != cost;
                        cost = now;
                        changed
                    }
                    event = events.recv() => match event {
                        Ok(Event::Domain(
                            Domain::PlanReady { session_id: of, .. } | Domain::PhaseChanged { session_id: of, .. },
                        )) => of == session_id,
                        Ok(Event::ShuttingDown) | Err(RecvError::Closed) => break,
                        Ok(_) => false,
                        Err(RecvError::Lagged(_)) => true,
                    },
                };
                if push {
                    let Some(dashboard) = dashboard.upgrade() else { break };
                    blocking(move || dashboard.push_state()).await;
                }
            }
        };
        // Owned: on the core's task tracker, cancelled with the session.
        self.ctx.tasks().spawn_on(follow, runtime);
    }
}
