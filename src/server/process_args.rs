//! The arguments of the process tools: `processes_overview`'s status filter and `process_get`'s
//! selectors (exactly one form each, as closed `anyOf` variants in the schema), `max_bytes` and
//! `match`, and their translation into the process service's [`Selection`].
//!
//! Architecture invariant: a selector object with zero or several forms is a deserialization error
//! that names the forms; nothing here reads a transcript.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::process::{self, LineSelector, Selection, StatusFilter, TimeSelector};

/// Which processes to list.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessStatusFilter {
    All,
    Running,
    Completed,
    Failed,
    Succeeded,
    #[default]
    RunningOrFailed,
}

impl From<ProcessStatusFilter> for StatusFilter {
    fn from(filter: ProcessStatusFilter) -> StatusFilter {
        match filter {
            ProcessStatusFilter::All => StatusFilter::All,
            ProcessStatusFilter::Running => StatusFilter::Running,
            ProcessStatusFilter::Completed => StatusFilter::Completed,
            ProcessStatusFilter::Failed => StatusFilter::Failed,
            ProcessStatusFilter::Succeeded => StatusFilter::Succeeded,
            ProcessStatusFilter::RunningOrFailed => StatusFilter::RunningOrFailed,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessesOverviewArgs {
    /// Which processes to list (counts stay global); default: running ones, then failed ones.
    #[serde(default)]
    pub status: ProcessStatusFilter,
}

/// `{"first": N}`: the first N lines.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FirstLines {
    #[schemars(range(min = 1))]
    pub first: u64,
}

/// `{"last": N}`: the last N lines.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LastLines {
    #[schemars(range(min = 1))]
    pub last: u64,
}

/// `{"start": A, "end": B}`: absolute lines A to B, both included.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineRange {
    #[schemars(range(min = 1))]
    pub start: u64,
    #[schemars(range(min = 1))]
    pub end: u64,
}

/// `{"first": S}`: chunks recorded in the first S seconds, `[0, S)`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FirstSeconds {
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub first: f64,
}

/// `{"last": S}`: chunks recorded in the last S seconds (before now while running, before completion after exit).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LastSeconds {
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub last: f64,
}

/// `{"start": A, "end": B}`: chunks recorded from A (included) to B (excluded) seconds after the start.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeRange {
    #[schemars(range(min = 0))]
    pub start: f64,
    #[schemars(extend("exclusiveMinimum" = 0))]
    pub end: f64,
}

/// Exactly one of the line selector forms.
#[derive(Debug)]
pub enum LineSelectorArg {
    First(FirstLines),
    Last(LastLines),
    Range(LineRange),
}

/// Exactly one of the time selector forms.
#[derive(Debug)]
pub enum TimeSelectorArg {
    First(FirstSeconds),
    Last(LastSeconds),
    Range(TimeRange),
}

/// Decodes a closed selector object by its key set, so a wrong shape gets one clear message.
fn selector_object<'de, D: Deserializer<'de>>(deserializer: D, what: &str) -> Result<(String, Value), D::Error> {
    let map = Map::<String, Value>::deserialize(deserializer)?;
    let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let form = match keys.as_slice() {
        ["first"] => "first",
        ["last"] => "last",
        ["end", "start"] => "range",
        _ => {
            return Err(D::Error::custom(format!(
                "expected exactly one {what} form: {{\"first\": N}}, {{\"last\": N}} or {{\"start\": A, \"end\": B}}"
            )));
        }
    };
    Ok((form.to_owned(), Value::Object(map)))
}

impl<'de> Deserialize<'de> for LineSelectorArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (form, value) = selector_object(deserializer, "line selector")?;
        let res = match form.as_str() {
            "first" => serde_json::from_value(value).map(LineSelectorArg::First),
            "last" => serde_json::from_value(value).map(LineSelectorArg::Last),
            _ => serde_json::from_value(value).map(LineSelectorArg::Range),
        };
        res.map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for TimeSelectorArg {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (form, value) = selector_object(deserializer, "time selector")?;
        let res = match form.as_str() {
            "first" => serde_json::from_value(value).map(TimeSelectorArg::First),
            "last" => serde_json::from_value(value).map(TimeSelectorArg::Last),
            _ => serde_json::from_value(value).map(TimeSelectorArg::Range),
        };
        res.map_err(D::Error::custom)
    }
}

/// `anyOf` of the three closed variants plus `null`, each variant a named definition.
fn line_selector_schema(generator: &mut SchemaGenerator) -> Schema {
    let variants = [
        generator.subschema_for::<FirstLines>(),
        generator.subschema_for::<LastLines>(),
        generator.subschema_for::<LineRange>(),
    ];
    json_schema!({
        "description": "One-based lines shared by all streams; B inclusive.",
        "anyOf": [variants[0], variants[1], variants[2], { "type": "null" }],
        "default": null,
    })
}

fn time_selector_schema(generator: &mut SchemaGenerator) -> Schema {
    let variants = [
        generator.subschema_for::<FirstSeconds>(),
        generator.subschema_for::<LastSeconds>(),
        generator.subschema_for::<TimeRange>(),
    ];
    json_schema!({
        "description": "Seconds since start, by chunk time; [A, B).",
        "anyOf": [variants[0], variants[1], variants[2], { "type": "null" }],
        "default": null,
    })
}

fn default_max_bytes() -> u64 {
    process::select::DEFAULT_MAX_BYTES
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessGetArgs {
    /// From processes_overview.
    #[schemars(range(min = 1))]
    pub process_id: u64,
    #[serde(default)]
    #[schemars(schema_with = "line_selector_schema")]
    pub lines: Option<LineSelectorArg>,
    #[serde(default)]
    #[schemars(schema_with = "time_selector_schema")]
    pub time: Option<TimeSelectorArg>,
    /// Text byte budget; 0 = metadata only.
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 0))]
    pub max_bytes: u64,
    /// Regex: keep only matching lines (after time and lines, before max_bytes).
    #[serde(default, rename = "match")]
    pub pattern: Option<String>,
}

impl ProcessGetArgs {
    /// Whether the selection keeps the end of the range when the budget runs out.
    pub(super) fn keeps_tail(&self) -> bool {
        match (&self.lines, &self.time) {
            (Some(LineSelectorArg::Last(_)), _) | (None, None) => true,
            (Some(_), _) => false,
            (None, Some(time)) => matches!(time, TimeSelectorArg::Last(_)),
        }
    }
}

impl ProcessGetArgs {
    pub(super) fn selection(&self) -> Selection {
        let lines = self.lines.as_ref().map(|lines| match lines {
            LineSelectorArg::First(s) => LineSelector::First(s.first),
            LineSelectorArg::Last(s) => LineSelector::Last(s.last),
            LineSelectorArg::Range(s) => LineSelector::Range { start: s.start, end: s.end },
        });
        let time = self.time.as_ref().map(|time| match time {
            TimeSelectorArg::First(s) => TimeSelector::First(s.first),
            TimeSelectorArg::Last(s) => TimeSelector::Last(s.last),
            TimeSelectorArg::Range(s) => TimeSelector::Range { start: s.start, end: s.end },
        });
        Selection { lines, time, max_bytes: self.max_bytes }
    }
}
