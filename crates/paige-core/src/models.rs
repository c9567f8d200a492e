//! Model tiers, the model ids they resolve to, and what each model costs.

use serde::{Deserialize, Serialize};

/// The two tiers Paige's calls choose between (spec Story 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelTier {
    Haiku,
    Sonnet,
}

/// Dollars per million tokens for one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
}

/// A model id with its price: what a tier resolves to.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub id: String,
    pub price: Price,
}

/// Default model of each tier (FR-085).
pub const HAIKU_MODEL: &str = "claude-haiku-4-5-20251001";
pub const SONNET_MODEL: &str = "claude-sonnet-4-5-20250929";

/// Every model Paige knows the price of (FR-095). To move a tier to a newer model, add its
/// row here and set `PAIGE_HAIKU_MODEL` / `PAIGE_SONNET_MODEL` to its id.
pub const PRICES: &[(&str, Price)] = &[(HAIKU_MODEL, HAIKU_PRICE), (SONNET_MODEL, SONNET_PRICE)];

const HAIKU_PRICE: Price = Price { input_per_mtok: 0.80, output_per_mtok: 4.00 };
const SONNET_PRICE: Price = Price { input_per_mtok: 3.00, output_per_mtok: 15.00 };

/// Looks `id` up in [`PRICES`].
pub fn price_of(id: &str) -> Option<Price> {
    PRICES.iter().find(|(known, _)| *known == id).map(|(_, price)| *price)
}

/// Which model each tier uses.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelMap {
    pub haiku: Model,
    pub sonnet: Model,
}

impl Default for ModelMap {
    fn default() -> ModelMap {
        ModelMap {
            haiku: Model { id: HAIKU_MODEL.into(), price: HAIKU_PRICE },
            sonnet: Model { id: SONNET_MODEL.into(), price: SONNET_PRICE },
        }
    }
}

/// A model id that is not in [`PRICES`], so its cost could not be estimated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown model {id:?}: add its price to paige_core::api::PRICES (known: {known})")]
pub struct UnknownModel {
    pub id: String,
    pub known: String,
}

impl UnknownModel {
    pub fn new(id: &str) -> UnknownModel {
        UnknownModel { id: id.to_owned(), known: PRICES.iter().map(|(id, _)| *id).collect::<Vec<_>>().join(", ") }
    }
}

impl ModelMap {
    /// The default map with the given tiers moved to other known models.
    pub fn with_overrides(haiku: Option<&str>, sonnet: Option<&str>) -> Result<ModelMap, UnknownModel> {
        let resolve = |id: &str| {
            price_of(id).map(|price| Model { id: id.to_owned(), price }).ok_or_else(|| UnknownModel::new(id))
        };
        let mut map = ModelMap::default();
        if let Some(id) = haiku {
            map.haiku = resolve(id)?;
        }
        if let Some(id) = sonnet {
            map.sonnet = resolve(id)?;
        }
        Ok(map)
    }

    pub fn resolve(&self, tier: ModelTier) -> &Model {
        match tier {
            ModelTier::Haiku => &self.haiku,
            ModelTier::Sonnet => &self.sonnet,
        }
    }
}

impl Price {
    /// `(input × input_rate + output × output_rate) / 1_000_000` dollars (Scenario 7.6).
    pub fn cost(&self, input_tokens: u64, output_tokens: u64) -> f64 {
        (input_tokens as f64 * self.input_per_mtok + output_tokens as f64 * self.output_per_mtok) / 1_000_000.0
    }
}
