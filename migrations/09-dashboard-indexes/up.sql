-- The dashboard's stats (spec Story 12): each period's counters read from narrow covering
-- indexes instead of the tables' rows (the coaching minutes from an index on their
-- expression), and the hints-used join starts from the period's sessions. Measured by
-- `cargo bench -p paige-server --bench dashboard`.
CREATE INDEX sessions_status_ended
    ON sessions(status, ended_at, ((julianday(ended_at) - julianday(started_at)) * 1440));
CREATE INDEX sessions_started ON sessions(started_at, issue_number);
CREATE INDEX knowledge_gaps_encountered ON knowledge_gaps(last_encountered_at, addressed);
CREATE INDEX api_call_log_created ON api_call_log(created_at, cost_estimate);
CREATE INDEX progress_events_type ON progress_events(event_type, phase_id);
