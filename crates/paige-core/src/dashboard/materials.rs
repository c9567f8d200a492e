//! Flow B, the learning materials (Scenarios 12.3, 12.7, EC-85…EC-87): the top 5 unaddressed
//! gaps, most severe then most frequent, researched by Sonnet with the `web_search` server
//! tool → `dashboard:materials`, or `dashboard:materials_error`. No gap: nothing runs and
//! nothing is sent. A resource is kept only when its URL is one of the web-search results
//! the API returned (SC-086): a link the model made up never reaches the learner; a gap
//! whose search found nothing keeps its study order with no links (EC-87).

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::blocking;
use super::cache::{Claim, joined};
use crate::api::CallOptions;
use crate::event::Event;
use crate::prompts::learning_materials::{
    self as prompt, GapInput, LearningMaterialsResponse, Recommendation, ResourceRelevance, ResourceType,
};
use crate::protocol::{
    ConnectionId, DashboardMaterials, ErrorText, LearningResource, MaterialRecommendation, Relevance, ResourceKind,
    ServerMessage,
};

/// The gaps researched at once (FR-175).
pub const MATERIAL_GAPS: usize = 5;
/// Five gaps with several resources each need more than the default 4,096 tokens.
const MAX_TOKENS: u32 = 8192;

/// Files at the project's root that name its stack.
const STACK_MARKERS: &[(&str, &str)] = &[
    ("Cargo.toml", "Rust"),
    ("package.json", "JavaScript (Node.js)"),
    ("tsconfig.json", "TypeScript"),
    ("pyproject.toml", "Python"),
    ("requirements.txt", "Python"),
    ("go.mod", "Go"),
    ("pom.xml", "Java"),
    ("build.gradle", "Java/Kotlin"),
    ("Gemfile", "Ruby"),
    ("composer.json", "PHP"),
];

struct Research {
    gaps: Vec<GapInput>,
    system: String,
    message: String,
}

impl super::Dashboard {
    /// The learning materials for a load by `to`: a fresh kept answer for the same input goes
    /// to `to` alone; a run broadcasts its outcome. Whether materials
    /// were sent (`false` when skipped).
    pub(super) async fn find_materials(self: &Arc<Self>, to: ConnectionId) -> bool {
        let dashboard = self.clone();
        let research = match blocking(move || dashboard.materials_input()).await {
            Ok(Some(research)) => research,
            // No unaddressed gap (EC-85, EC-86): no call, nothing sent (FR-185).
            Ok(None) => return false,
            Err(err) => {
                let error = format!("Paige could not read the knowledge gaps: {err}");
                self.ctx.broadcast(ServerMessage::DashboardMaterialsError(ErrorText { error }));
                return false;
            }
        };
        let key = {
            let mut hasher = std::hash::DefaultHasher::new();
            (&research.system, &research.message).hash(&mut hasher);
            hasher.finish()
        };
        let claim = self.cache().lock().materials.claim(self.ctx.now(), key, false);
        let ticket = match claim {
            Claim::Kept(recommendations) => {
                let message = ServerMessage::DashboardMaterials(DashboardMaterials { recommendations });
                self.ctx.emit(Event::UiTo { connection: to, message });
                return true;
            }
            Claim::Joined(done) => return joined(done).await,
            Claim::Run(ticket) => ticket,
        };
        let outcome = self.research_materials(&research).await;
        let answer = outcome.as_ref().ok().cloned();
        self.cache().lock().materials.finish(ticket, self.ctx.now(), answer);
        match outcome {
            Ok(recommendations) => {
                self.ctx.broadcast(ServerMessage::DashboardMaterials(DashboardMaterials { recommendations }));
                true
            }
            Err(error) => {
                tracing::warn!("dashboard materials: {error}");
                self.ctx.broadcast(ServerMessage::DashboardMaterialsError(ErrorText { error }));
                false
            }
        }
    }

    /// Sonnet with web search on the gaps, its links checked against the search results.
    async fn research_materials(&self, research: &Research) -> Result<Vec<MaterialRecommendation>, String> {
        let session = self.ctx.active_session().map(|s| s.id);
        let tools = prompt::tools();
        let options = CallOptions {
            session_id: session.as_deref(),
            max_tokens: Some(MAX_TOKENS),
            tools: &tools,
            ..CallOptions::new(prompt::CALL_TYPE, prompt::MODEL, &research.system, &research.message)
        };
        let sourced = self
            .ctx
            .api()
            .call_with_retry_sourced::<LearningMaterialsResponse>(self.ctx.db(), &options)
            .await
            .map_err(|err| err.readable("Paige could not find learning materials"))?;
        tracing::debug!(gaps = research.gaps.len(), urls = sourced.search_urls.len(), "learning materials");
        Ok(verified(sourced.answer.recommendations, &sourced.search_urls))
    }

    /// The gaps, the stack and the katas the model is given; `None` without a gap. Blocking.
    fn materials_input(&self) -> Result<Option<Research>, crate::db::DbError> {
        let gaps: Vec<GapInput> = self
            .ctx
            .db()
            .unaddressed_gaps(MATERIAL_GAPS)?
            .into_iter()
            .map(|g| GapInput {
                topic: g.topic,
                severity: g.severity.as_str().to_owned(),
                related_concepts: g.related_concepts,
                frequency: g.frequency,
            })
            .collect();
        if gaps.is_empty() {
            return Ok(None);
        }
        let katas = self.ctx.db().kata_titles()?;
        let message = prompt::assemble_user_message(&gaps, &self.tech_stack(), &katas);
        let system = prompt::system_prompt(&self.stage_summary());
        Ok(Some(Research { gaps, system, message }))
    }

    /// The project's stack as its root's manifest files name it ("unknown" when none does).
    fn tech_stack(&self) -> String {
        let mut stack: Vec<&str> = STACK_MARKERS
            .iter()
            .filter(|(file, _)| self.ctx.root().resolve(file).is_ok_and(|p| p.abs().is_file()))
            .map(|(_, name)| *name)
            .collect();
        stack.dedup();
        if stack.is_empty() { "unknown".into() } else { stack.join(", ") }
    }
}

/// The recommendations with only the resources whose URL a web search returned (SC-086).
pub fn verified(recommendations: Vec<Recommendation>, search_urls: &[String]) -> Vec<MaterialRecommendation> {
    let found: HashSet<&str> = search_urls.iter().map(|url| normalise(url)).collect();
    recommendations
        .into_iter()
        .map(|r| MaterialRecommendation {
            knowledge_gap: r.knowledge_gap,
            resources: r
                .resources
                .into_iter()
                .filter(|res| {
                    let url = normalise(&res.url);
                    let kept = (url.starts_with("https://") || url.starts_with("http://")) && found.contains(url);
                    if !kept {
                        tracing::info!(url = %res.url, "learning material dropped: not a web-search result");
                    }
                    kept
                })
                .map(|res| LearningResource {
                    kind: match res.kind {
                        ResourceType::Documentation => ResourceKind::Documentation,
                        ResourceType::Article => ResourceKind::Article,
                        ResourceType::Video => ResourceKind::Video,
                        ResourceType::Tutorial => ResourceKind::Tutorial,
                    },
                    title: res.title,
                    url: res.url.trim().to_owned(),
                    description: res.description,
                    relevance: match res.relevance {
                        ResourceRelevance::Direct => Relevance::Direct,
                        ResourceRelevance::DeepDive => Relevance::DeepDive,
                        ResourceRelevance::Supplementary => Relevance::Supplementary,
                    },
                    estimated_time: res.estimated_time,
                })
                .collect(),
            study_order: r.study_order,
            practice_connection: r.practice_connection.filter(|p| !p.trim().is_empty()),
        })
        .collect()
}

/// A URL as compared: trimmed, without a trailing `/` (`…/book` and `…/book/` are one page).
fn normalise(url: &str) -> &str {
    url.trim().trim_end_matches('/')
}
