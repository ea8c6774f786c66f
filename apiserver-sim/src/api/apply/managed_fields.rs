//! `metadata.managedFields` on the wire: decoding entries into owners and their field
//! sets, encoding them back (sorted as a real server sorts them), the reset request
//! (`[]` or `[{}]`), and the default field manager taken from the `User-Agent`.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::set::FieldSet;

/// The operation an owner took its fields with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Operation {
    /// Server-side apply.
    Apply,
    /// Any other write (create, update, patch).
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// Who owns fields: one `managedFields` entry per manager, operation, API version (for
/// updates only: an applier keeps one entry across versions) and subresource.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ManagerId {
    /// The field manager's name.
    pub manager: String,
    /// How the fields were taken.
    pub operation: Operation,
    /// The API version of an `Update` entry; empty for `Apply`.
    pub api_version: String,
    /// `status`, `scale`, or empty for the main resource.
    pub subresource: String,
}

impl ManagerId {
    /// The identity of a write by `manager` (an empty name is recorded as `unknown`).
    pub(crate) fn new(manager: &str, operation: Operation, api_version: &str, sub: &str) -> Self {
        Self {
            manager: if manager.is_empty() {
                "unknown".into()
            } else {
                manager.into()
            },
            operation,
            api_version: if operation == Operation::Apply {
                String::new()
            } else {
                api_version.into()
            },
            subresource: sub.into(),
        }
    }

    /// How conflict messages name the owner: `"name"`, plus the subresource, plus the
    /// version for an updater (`"kubectl-edit" using apps/v1`).
    pub(crate) fn describe(&self) -> String {
        let mut out = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            out.push_str(&format!(" with subresource {:?}", self.subresource));
        }
        if self.operation == Operation::Update {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }
}

/// What an owner holds: its fields, the version they were written in, and when.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Owned {
    /// The owned paths.
    pub set: FieldSet,
    /// The API version of the write that took them.
    pub api_version: String,
    /// RFC 3339 time of the last write that changed the object, if known.
    pub time: Option<String>,
}

/// Every owner of an object's fields.
pub(crate) type Managers = BTreeMap<ManagerId, Owned>;

/// Decodes `metadata.managedFields`; an error when an entry is not one a server wrote.
pub(crate) fn decode(entries: Option<&Value>) -> Result<Managers, String> {
    let mut out = Managers::new();
    let Some(entries) = entries else {
        return Ok(out);
    };
    let list = match entries {
        Value::Null => return Ok(out),
        Value::Array(list) => list,
        _ => return Err("managedFields must be a list".into()),
    };
    for (i, e) in list.iter().enumerate() {
        let text = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
        let operation = match text("operation") {
            "Apply" => Operation::Apply,
            "Update" => Operation::Update,
            _ => return Err("operation must be `Apply` or `Update`".into()),
        };
        let api_version = text("apiVersion");
        if api_version.is_empty() {
            return Err("apiVersion must not be empty".into());
        }
        match text("fieldsType") {
            "FieldsV1" => {}
            "" => return Err(format!("missing fieldsType in managed fields entry {i}")),
            other => {
                return Err(format!(
                    "invalid fieldsType {other:?} in managed fields entry {i}"
                ));
            }
        }
        let set = match e.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(doc) => FieldSet::from_fields_v1(doc)
                .ok_or_else(|| format!("error decoding set of managed fields entry {i}"))?,
        };
        let id = ManagerId {
            manager: text("manager").to_string(),
            operation,
            api_version: if operation == Operation::Apply {
                String::new()
            } else {
                api_version.to_string()
            },
            subresource: text("subresource").to_string(),
        };
        let time = e.get("time").and_then(Value::as_str).map(str::to_string);
        out.insert(
            id,
            Owned {
                set,
                api_version: api_version.to_string(),
                time,
            },
        );
    }
    Ok(out)
}

/// Whether a write asks to clear every entry: `managedFields: []` or `[{}]`.
pub(crate) fn is_reset(entries: Option<&Value>) -> bool {
    match entries {
        Some(Value::Array(list)) => match list.as_slice() {
            [] => true,
            [only] => only.as_object().is_some_and(Map::is_empty),
            _ => false,
        },
        _ => false,
    }
}

fn seconds(time: Option<&String>) -> i64 {
    time.and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or(0, |t| t.as_second())
}

/// Encodes the owners as `managedFields` entries, sorted by operation, time, manager,
/// version and subresource; `None` when there is no owner.
pub(crate) fn encode(managers: &Managers) -> Option<Value> {
    if managers.is_empty() {
        return None;
    }
    let mut entries: Vec<(&ManagerId, &Owned)> = managers.iter().collect();
    entries.sort_by(|(a, x), (b, y)| {
        a.operation
            .cmp(&b.operation)
            .then_with(|| seconds(x.time.as_ref()).cmp(&seconds(y.time.as_ref())))
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| x.api_version.cmp(&y.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    let list = entries
        .into_iter()
        .map(|(id, owned)| {
            let mut e = json!({
                "manager": id.manager,
                "operation": id.operation.as_str(),
                "apiVersion": owned.api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": owned.set.to_fields_v1(),
            });
            if let Some(t) = &owned.time {
                e["time"] = json!(t);
            }
            if !id.subresource.is_empty() {
                e["subresource"] = json!(id.subresource);
            }
            e
        })
        .collect();
    Some(Value::Array(list))
}

/// The field manager of a write that names none: the `User-Agent` up to its first `/`,
/// without unprintable characters, at most 128 bytes (`kubectl-edit/v1.32.0 (linux/amd64)
/// kubernetes/abc` gives `kubectl-edit`).
pub(crate) fn manager_from_user_agent(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| !c.is_control()) {
        if out.len() + c.len_utf8() > 128 {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_reject_what_no_server_writes() {
        let entries = json!([
            {"manager": "b", "operation": "Update", "apiVersion": "v1", "time": "2024-01-01T00:00:02Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:x": {}}}},
            {"manager": "a", "operation": "Apply", "apiVersion": "v1", "time": "2024-01-01T00:00:09Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:y": {}}}, "subresource": "status"},
        ]);
        let managers = decode(Some(&entries)).expect("valid entries");
        assert_eq!(managers.len(), 2);
        let back = encode(&managers).expect("entries");
        assert_eq!(back[0]["manager"], "a", "Apply entries come first");
        assert_eq!(back[1], entries[0]);
        for bad in [
            json!([{"operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}]),
            json!([{"operation": "Update", "fieldsType": "FieldsV1"}]),
            json!([{"operation": "Update", "apiVersion": "v1"}]),
            json!([{"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV2"}]),
            json!([{"operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"x": {}}}]),
            json!({}),
        ] {
            assert!(decode(Some(&bad)).is_err(), "{bad}");
        }
        assert!(is_reset(Some(&json!([]))));
        assert!(is_reset(Some(&json!([{}]))));
        assert!(!is_reset(Some(&json!([{}, {}]))));
        assert!(!is_reset(None));
        assert_eq!(
            manager_from_user_agent("kubectl-edit/v1.32.0 (linux/amd64) kubernetes/abc"),
            "kubectl-edit"
        );
        assert_eq!(
            ManagerId::new("", Operation::Update, "apps/v1", "status").describe(),
            r#""unknown" with subresource "status" using apps/v1"#
        );
    }
}
