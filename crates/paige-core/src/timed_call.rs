//! One model call on the learner's behalf, as Explain This and practice reviews make it: in
//! the live session if there is one, with one retry on a transient failure (D68), within the
//! call type's deadline, timed, and with the model's id — what their `*_completed` actions log.

use std::time::Instant;

use crate::api::{ApiError, CallOptions, ModelTier, StructuredOutput};
use crate::core::Core;

/// A call's answer, how long it took (retry included) and which model answered.
pub(crate) struct Timed<T> {
    pub answer: Result<T, ApiError>,
    pub latency_ms: u64,
    pub model: String,
}

impl Core {
    pub(crate) async fn timed_call<T: StructuredOutput>(
        &self,
        call_type: &str,
        tier: ModelTier,
        system: &str,
        message: &str,
    ) -> Timed<T> {
        let session = self.active_session().map(|s| s.id);
        let options =
            CallOptions { session_id: session.as_deref(), ..CallOptions::new(call_type, tier, system, message) };
        let started = Instant::now();
        let answer = self.api().call_with_retry::<T>(self.db(), &options).await;
        let latency_ms = started.elapsed().as_millis() as u64;
        let model = self.api().settings().models.resolve(tier).id.clone();
        Timed { answer, latency_ms, model }
    }
}
