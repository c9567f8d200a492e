//! JSON Schemas for structured outputs, generated from the Rust response types.
//!
//! The Messages API's constrained decoding accepts a subset of JSON Schema: every object
//! must say `additionalProperties: false`, and numeric/string/array-length constraints are
//! not enforced. [`structured_schema`] turns a `schemars` schema into that subset the way
//! the official SDKs do: every property becomes required (optional values are nullable in
//! the Rust type), objects are closed, and unsupported constraints are moved into the
//! description so the model still reads them.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// Keywords the API does not enforce; they are moved into `description`.
const UNSUPPORTED: &[&str] =
    &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "maxItems"];

/// String formats the API supports; others (e.g. schemars' `int64`, `double`) are dropped.
const SUPPORTED_FORMATS: &[&str] =
    &["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];

/// The structured-output schema of `T`: subschemas inlined, no `$schema`, API-compatible.
pub fn structured_schema<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_deserialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    make_strict(&mut schema);
    schema
}

/// Rewrites one schema node and everything below it.
fn make_strict(node: &mut Value) {
    let Value::Object(map) = node else { return };
    if let Some(Value::Object(properties)) = map.get("properties") {
        let required = properties.keys().cloned().map(Value::String).collect();
        map.insert("required".into(), Value::Array(required));
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    if let Some(Value::String(format)) = map.get("format")
        && !SUPPORTED_FORMATS.contains(&format.as_str())
    {
        map.remove("format");
    }
    if map.get("minItems").and_then(Value::as_u64).is_some_and(|n| n > 1) {
        move_to_description(map, "minItems");
    }
    for keyword in UNSUPPORTED {
        move_to_description(map, keyword);
    }
    for (key, child) in map.iter_mut() {
        match (key.as_str(), child) {
            ("properties" | "$defs", Value::Object(children)) => children.values_mut().for_each(make_strict),
            ("items" | "additionalProperties" | "not", child) => make_strict(child),
            ("anyOf" | "allOf" | "oneOf" | "prefixItems", Value::Array(children)) => {
                children.iter_mut().for_each(make_strict)
            }
            _ => {}
        }
    }
}

fn move_to_description(map: &mut Map<String, Value>, keyword: &str) {
    let Some(value) = map.remove(keyword) else { return };
    let note = format!("{keyword}: {value}");
    let description = match map.get("description").and_then(Value::as_str) {
        Some(existing) => format!("{existing} ({note})"),
        None => format!("({note})"),
    };
    map.insert("description".into(), Value::String(description));
}
