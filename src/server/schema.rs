//! Schema post-processing: what schemars derives, made into schemas every client accepts silently
//! (JSON Schema 2020-12 formats only, one `type` per schema) and, for inputs, as short as possible.
//!
//! Argument decoding is unaffected: it is serde's, on the Rust types, never these schemas.

use rmcp::model::JsonObject;
use serde_json::{Value, json};

/// The `format` values JSON Schema 2020-12 defines (§7.3 of its validation vocabulary).
pub const STANDARD_FORMATS: [&str; 19] = [
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

/// A tool's `inputSchema`: no `$schema` dialect URI, no `"default": null` on optional arguments, no
/// doc text on shared `$defs` (the referring argument and the definition's own fields describe
/// them), and `null` left out of optional arguments' types (absent and `null` decode alike), which
/// keeps every `type` a single name; then [`output_schema`]'s rules, except that the bounds of an
/// integer's width are left out (an unsigned argument keeps `minimum: 0`; explicit ranges stay).
pub fn input_schema(schema: &JsonObject) -> JsonObject {
    let mut res = portable(schema, Side::Input);
    res.remove("$schema");
    if let Some(Value::Object(defs)) = res.get_mut("$defs") {
        for def in defs.values_mut() {
            if let Value::Object(def) = def {
                def.remove("description");
            }
        }
    }
    res
}

/// A tool's `outputSchema`: schemars' numeric `format` names (`uint32`, `int64`, `double`, …: not
/// JSON Schema 2020-12, so SDK clients warn about every one) replaced by what they mean (the range
/// of 8- to 32-bit integers as `minimum`/`maximum`; 64-bit ones keep schemars' `minimum: 0` of
/// unsigned types, their bounds being beyond what JSON numbers carry exactly), any other unknown
/// format dropped, and nullable types (`["string", "null"]`) spelled as `anyOf` branches with one
/// `type` each.
pub fn output_schema(schema: &JsonObject) -> JsonObject {
    portable(schema, Side::Output)
}

fn portable(schema: &JsonObject, side: Side) -> JsonObject {
    let required: Vec<&str> = match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut res = JsonObject::new();
    let mut range: Option<(i64, i64)> = None;
    for (key, value) in schema {
        let value = match (key.as_str(), value) {
            // A property named "format" or "default" is a schema, not the keyword.
            ("properties", Value::Object(properties)) => Value::Object(
                properties
                    .iter()
                    .map(|(name, property)| {
                        let optional_input = side == Side::Input && !required.contains(&name.as_str());
                        (name.clone(), child(property, side, optional_input))
                    })
                    .collect(),
            ),
            ("format", Value::String(format)) if !STANDARD_FORMATS.contains(&format.as_str()) => {
                range = integer_range(format);
                continue;
            }
            ("default", Value::Null) if side == Side::Input => continue,
            ("enum" | "const" | "default" | "examples", value) => value.clone(),
            (_, value) => child(value, side, false),
        };
        res.insert(key.clone(), value);
    }
    if let Some((min, max)) = range {
        // An argument's integer width is no limit a caller needs to read (a value beyond it is
        // refused by name when decoded): inputs keep only the `minimum: 0` of unsigned types.
        if side == Side::Output || min == 0 {
            res.entry("minimum").or_insert(json!(min));
        }
        if side == Side::Output {
            res.entry("maximum").or_insert(json!(max));
        }
    }
    single_type(res)
}

/// A sub-schema (or a list of them); `optional_input`: an input property that may be left out.
fn child(value: &Value, side: Side, optional_input: bool) -> Value {
    match value {
        Value::Object(map) => {
            let mut map = map.clone();
            if optional_input {
                drop_null(&mut map);
            }
            Value::Object(portable(&map, side))
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| child(item, side, false)).collect()),
        other => other.clone(),
    }
}

/// `["T", "null"]` → `"T"` (and `null` out of an `enum`), for arguments where absent means null.
fn drop_null(map: &mut JsonObject) {
    if let Some(Value::Array(types)) = map.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| t.as_str() != Some("null")).cloned().collect();
        if kept.len() == 1 {
            map.insert("type".into(), kept[0].clone());
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
        }
    }
}

/// The keywords that apply to one instance type only (they move into that type's branch).
const TYPED_KEYWORDS: [&str; 20] = [
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "enum",
];

/// `{"type": ["T", "null"], …}` → `{"anyOf": [{"type": "T", …T's keywords}, {"type": "null"}], …}`.
fn single_type(mut map: JsonObject) -> JsonObject {
    let Some(Value::Array(types)) = map.get("type") else { return map };
    if types.len() < 2 || map.contains_key("anyOf") {
        return map;
    }
    let types = types.clone();
    map.remove("type");
    let mut typed = JsonObject::new();
    for keyword in TYPED_KEYWORDS {
        if let Some(value) = map.remove(keyword) {
            typed.insert(keyword.into(), value);
        }
    }
    let branches = types
        .iter()
        .map(|t| {
            let mut branch = JsonObject::new();
            branch.insert("type".into(), t.clone());
            if t.as_str() != Some("null") {
                for (key, value) in &typed {
                    let value = match (key.as_str(), value) {
                        ("enum", Value::Array(values)) => {
                            Value::Array(values.iter().filter(|v| !v.is_null()).cloned().collect())
                        }
                        _ => value.clone(),
                    };
                    branch.insert(key.clone(), value);
                }
            }
            Value::Object(branch)
        })
        .collect();
    map.insert("anyOf".into(), Value::Array(branches));
    map
}

/// The range of schemars' 8- to 32-bit integer formats.
fn integer_range(format: &str) -> Option<(i64, i64)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().expect("an object")
    }

    #[test]
    fn outputs_get_ranges_and_single_types() {
        let schema = object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "required": ["n"],
            "properties": {
                "n": { "type": "integer", "format": "uint32", "minimum": 0 },
                "big": { "type": ["integer", "null"], "format": "uint64", "minimum": 0 },
                "ratio": { "type": "number", "format": "double" },
                "format": { "type": "string", "format": "uri" },
            },
        }));
        expect_test::expect![[r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"big":{"anyOf":[{"minimum":0,"type":"integer"},{"type":"null"}]},"format":{"format":"uri","type":"string"},"n":{"maximum":4294967295,"minimum":0,"type":"integer"},"ratio":{"type":"number"}},"required":["n"],"type":"object"}"#]]
        .assert_eq(&Value::Object(output_schema(&schema)).to_string());
    }

    #[test]
    fn optional_inputs_lose_null_and_required_ones_keep_it_as_a_branch() {
        let schema = object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "required": ["path", "mode"],
            "properties": {
                "path": { "type": "string" },
                "mode": { "type": ["string", "null"], "enum": ["a", "b", null] },
                "depth": { "type": ["integer", "null"], "format": "uint32", "minimum": 0, "default": null },
                "tags": { "type": ["array", "null"], "items": { "type": "string" } },
            },
            "$defs": { "T": { "description": "dropped", "type": "object" } },
        }));
        expect_test::expect![[r#"{"$defs":{"T":{"type":"object"}},"properties":{"depth":{"minimum":0,"type":"integer"},"mode":{"anyOf":[{"enum":["a","b"],"type":"string"},{"type":"null"}]},"path":{"type":"string"},"tags":{"items":{"type":"string"},"type":"array"}},"required":["path","mode"],"type":"object"}"#]]
        .assert_eq(&Value::Object(input_schema(&schema)).to_string());
    }
}
