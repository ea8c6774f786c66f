//! How a write changes who owns what (structured-merge-diff's `Updater`):
//!
//! - an update (create, PUT, non-apply PATCH) takes every field it adds or changes, from
//!   whoever owned it, and drops the fields it removes from every owner ([`update`]);
//! - an apply merges the configuration into the live object, makes the applier the owner of
//!   exactly the applied fields, removes the fields it applied before and no longer applies
//!   unless someone else owns them, and refuses to change a field another manager owns
//!   (a conflict) unless forced, in which case it takes the field ([`apply`]).
//!
//! Fields a write may not set (`status` through the main resource of a type with a status
//! subresource, everything but `status` through `/status`) are never owned by it, and the
//! server-owned metadata (`name`, `uid`, `resourceVersion`, ...) is owned by nobody.

use serde_json::Value;

use super::fieldpath::PathElement;
use super::managed_fields::{ManagerId, Managers, Operation, Owned};
use super::merge::{ensure_named_fields, merge, remove_items};
use super::schema::Ty;
use super::set::FieldSet;
use super::typed::{Comparison, compare, to_field_set};

/// Which part of the object a write may own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Everything.
    All,
    /// Everything but `status` (the main resource of a type with a status subresource).
    NoStatus,
    /// Only `status` (the status subresource).
    StatusOnly,
}

impl Scope {
    fn filter(self, set: &FieldSet) -> FieldSet {
        match self {
            Scope::All => set.clone(),
            Scope::NoStatus => set.without_field("status"),
            Scope::StatusOnly => set.only_field("status"),
        }
    }

    fn filter_comparison(self, c: Comparison) -> Comparison {
        Comparison {
            added: self.filter(&c.added),
            modified: self.filter(&c.modified),
            removed: self.filter(&c.removed),
        }
    }
}

/// One write: the object's type, what it may own, who makes it and when.
pub(crate) struct Write<'a> {
    /// The object's type.
    pub ty: Ty<'a>,
    /// What the write may own.
    pub scope: Scope,
    /// The writer.
    pub id: ManagerId,
    /// The API version of the request (`apps/v1`).
    pub api_version: &'a str,
    /// The time of the write (RFC 3339, seconds).
    pub now: &'a str,
}

/// Fields apply conflicts on: each owner with the fields the write would change.
pub(crate) type Conflicts = Vec<(ManagerId, FieldSet)>;

/// Metadata only the server sets, owned by nobody.
fn strip_meta(set: &FieldSet) -> FieldSet {
    let mut strip = FieldSet::default();
    for top in ["apiVersion", "kind", "metadata"] {
        strip.insert(&[PathElement::field(top)]);
    }
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        strip.insert(&[PathElement::field("metadata"), PathElement::field(f)]);
    }
    set.difference(&strip)
}

/// Takes the changed fields from every owner but `skip`: an error listing them when they
/// may not be taken (`force` false); removed fields leave every owner.
fn take_changes(
    managers: &mut Managers,
    cmp: &Comparison,
    skip: Option<&ManagerId>,
    force: bool,
) -> Result<(), Conflicts> {
    let changed = cmp.modified.union(&cmp.added);
    let conflicts: Conflicts = managers
        .iter()
        .filter(|(id, _)| Some(*id) != skip)
        .filter_map(|(id, owned)| {
            let c = owned.set.intersection(&changed);
            (!c.is_empty()).then(|| (id.clone(), c))
        })
        .collect();
    if !force && !conflicts.is_empty() {
        return Err(conflicts);
    }
    for (id, c) in &conflicts {
        if let Some(owned) = managers.get_mut(id) {
            owned.set = owned.set.difference(c);
        }
    }
    if !cmp.removed.is_empty() {
        for (id, owned) in managers.iter_mut() {
            if Some(id) != skip {
                owned.set = owned.set.difference(&cmp.removed);
            }
        }
    }
    managers.retain(|_, o| !o.set.is_empty());
    Ok(())
}

/// Ownership after a non-apply write from `live` (absent on create) to `new`.
pub(crate) fn update(
    w: &Write<'_>,
    live: Option<&Value>,
    new: &Value,
    mut managers: Managers,
) -> Managers {
    let cmp = w.scope.filter_comparison(compare(live, Some(new), w.ty));
    // Nothing to refuse: an update takes what it changes.
    let _ = take_changes(&mut managers, &cmp, None, true);
    let taken = strip_meta(&cmp.modified.union(&cmp.added));
    if !taken.is_empty() {
        let previous = managers.remove(&w.id).map(|o| o.set).unwrap_or_default();
        managers.insert(
            w.id.clone(),
            Owned {
                set: taken.union(&previous),
                api_version: w.api_version.to_string(),
                // Upstream's scale handler records the scale subresource's entry without a
                // time (so it sorts first among updates).
                time: (w.id.subresource != "scale").then(|| w.now.to_string()),
            },
        );
    }
    cap_updaters(&mut managers);
    managers
}

/// Update entries kept before the oldest are merged into `ancient-changes` buckets.
const MAX_UPDATERS: usize = 10;

/// Merges the oldest update entries into one `ancient-changes` entry per API version until
/// at most [`MAX_UPDATERS`] update entries remain.
fn cap_updaters(managers: &mut Managers) {
    let mut updaters: Vec<ManagerId> = managers
        .keys()
        .filter(|id| id.operation == Operation::Update)
        .cloned()
        .collect();
    if updaters.len() <= MAX_UPDATERS {
        return;
    }
    let secs = |id: &ManagerId, m: &Managers| {
        m.get(id)
            .and_then(|o| o.time.as_deref())
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map_or(0, |t| t.as_second())
    };
    updaters.sort_by(|a, b| {
        secs(a, managers)
            .cmp(&secs(b, managers))
            .then_with(|| a.cmp(b))
    });
    let mut first_of_version: std::collections::HashMap<String, ManagerId> = Default::default();
    let mut count = updaters.len();
    for id in updaters {
        if count <= MAX_UPDATERS {
            break;
        }
        let Some(owned) = managers.get(&id).cloned() else {
            continue;
        };
        let bucket = ManagerId::new("ancient-changes", Operation::Update, &owned.api_version, "");
        match first_of_version.get(&owned.api_version) {
            Some(first) => {
                if !managers.contains_key(&bucket)
                    && let Some(f) = managers.remove(first)
                {
                    managers.insert(bucket.clone(), f);
                }
                managers.remove(&id);
                if let Some(b) = managers.get_mut(&bucket) {
                    b.set = owned.set.union(&b.set);
                    b.time = owned.time.clone();
                }
                count -= 1;
            }
            None => {
                first_of_version.insert(owned.api_version.clone(), id);
            }
        }
    }
}

/// The object after applying `config` to `live` (`{}` on create), and the new ownership;
/// the conflicts when the apply would change fields others own and is not forced.
pub(crate) fn apply(
    w: &Write<'_>,
    live: &Value,
    config: &Value,
    mut managers: Managers,
    force: bool,
) -> Result<(Value, Managers), Conflicts> {
    let merged = merge(Some(live), Some(config), w.ty).unwrap_or_else(|| live.clone());
    let last = managers.get(&w.id).map(|o| o.set.clone());
    let time = managers.get(&w.id).and_then(|o| o.time.clone());
    managers.insert(
        w.id.clone(),
        Owned {
            set: w.scope.filter(&to_field_set(config, w.ty)),
            api_version: w.api_version.to_string(),
            time,
        },
    );
    let pruned = match last {
        Some(last) if !last.is_empty() => prune(&merged, &managers, &last, w.ty),
        _ => merged,
    };
    let cmp = w
        .scope
        .filter_comparison(compare(Some(live), Some(&pruned), w.ty));
    take_changes(&mut managers, &cmp, Some(&w.id), force)?;
    let changed = pruned != *live;
    if let Some(mine) = managers.get_mut(&w.id) {
        mine.set = strip_meta(&mine.set);
        if changed {
            mine.time = Some(w.now.to_string());
        }
    }
    managers.retain(|_, o| !o.set.is_empty());
    Ok((pruned, managers))
}

/// Removes from `merged` what the applier applied last time (`last`) and no longer applies,
/// unless another owner (or the new configuration) claims it.
fn prune(merged: &Value, managers: &Managers, last: &FieldSet, ty: Ty<'_>) -> Value {
    let named = |s: &FieldSet| ensure_named_fields(s, ty);
    let set_of = |v: &Option<Value>| v.as_ref().map(|v| named(&to_field_set(v, ty)));
    let remove = |s: &FieldSet| remove_items(merged, s, ty);
    let last = named(last);
    let all = named(&to_field_set(merged, ty));
    let owned = managers
        .values()
        .fold(FieldSet::default(), |acc, o| acc.union(&named(&o.set)));
    let first = remove(&last);
    let kept = set_of(&first).unwrap_or_default().union(&owned);
    let second = remove(&all.difference(&kept));
    let left = set_of(&second).unwrap_or_default();
    remove(&all.difference(&left).intersection(&last)).unwrap_or_else(|| merged.clone())
}
