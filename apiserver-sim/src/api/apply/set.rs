//! [`FieldSet`]: a set of field paths stored as a trie, and its `FieldsV1` encoding (the
//! `fieldsV1` of a `managedFields` entry: `{"f:spec":{"f:replicas":{}}}`, with `"."` for a
//! path that is itself in the set and also has members below it).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement};

/// A set of paths. `members` are the paths ending here; `children` hold the longer ones
/// (never an empty child).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// Whether the set holds no path.
    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds a path (the empty path is ignored: the root is never a member).
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    /// Whether the path is in the set.
    #[cfg(test)]
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    /// The paths below one element (relative to it), if any.
    pub(crate) fn child(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// Whether `pe` is a member at this level.
    pub(crate) fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// The child elements, each with its sub-set.
    pub(crate) fn children(&self) -> impl Iterator<Item = (&PathElement, &FieldSet)> {
        self.children.iter()
    }

    /// Adds `pe` as a member at this level.
    pub(crate) fn insert_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    /// Sets the sub-set below `pe` (removed when empty).
    pub(crate) fn set_child(&mut self, pe: PathElement, set: FieldSet) {
        if set.is_empty() {
            self.children.remove(&pe);
        } else {
            self.children.insert(pe, set);
        }
    }

    /// Paths in either set.
    pub(crate) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = match out.children.get(pe) {
                Some(mine) => mine.union(child),
                None => child.clone(),
            };
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    /// Paths of `self` not in `other`.
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, child) in &self.children {
            let rest = match other.children.get(pe) {
                Some(theirs) => child.difference(theirs),
                None => child.clone(),
            };
            if !rest.is_empty() {
                children.insert(pe.clone(), rest);
            }
        }
        FieldSet { members, children }
    }

    /// Paths in both sets.
    pub(crate) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let mut children = BTreeMap::new();
        for (pe, child) in &self.children {
            if let Some(theirs) = other.children.get(pe) {
                let both = child.intersection(theirs);
                if !both.is_empty() {
                    children.insert(pe.clone(), both);
                }
            }
        }
        FieldSet { members, children }
    }

    /// The set without the top-level field `name` and everything below it.
    pub(crate) fn without_field(&self, name: &str) -> FieldSet {
        let pe = PathElement::field(name);
        let mut out = self.clone();
        out.members.remove(&pe);
        out.children.remove(&pe);
        out
    }

    /// Only the top-level field `name` and everything below it.
    pub(crate) fn only_field(&self, name: &str) -> FieldSet {
        let pe = PathElement::field(name);
        let mut out = FieldSet::default();
        if self.members.contains(&pe) {
            out.members.insert(pe.clone());
        }
        if let Some(child) = self.children.get(&pe) {
            out.children.insert(pe, child.clone());
        }
        out
    }

    /// Every path, members of a level before the deeper paths, each level in order.
    pub(crate) fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The `fieldsV1` document of the set.
    pub(crate) fn to_fields_v1(&self) -> Value {
        Value::Object(self.encode_level(false))
    }

    fn encode_level(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for m in &self.members {
            if !self.children.contains_key(m) {
                out.insert(m.encode(), Value::Object(Map::new()));
            }
        }
        for (pe, child) in &self.children {
            let own = self.members.contains(pe);
            out.insert(pe.encode(), Value::Object(child.encode_level(own)));
        }
        out
    }

    /// Parses a `fieldsV1` document; `None` when it is not one.
    pub(crate) fn from_fields_v1(doc: &Value) -> Option<FieldSet> {
        let Value::Object(map) = doc else {
            return None;
        };
        let mut out = FieldSet::default();
        for (name, sub) in map {
            if name == "." {
                // Handled by the parent: a "." names the parent path itself.
                continue;
            }
            let pe = PathElement::decode(name)?;
            let Value::Object(inner) = sub else {
                return None;
            };
            if inner.is_empty() || inner.contains_key(".") {
                out.members.insert(pe.clone());
            }
            let child = FieldSet::from_fields_v1(sub)?;
            if !child.is_empty() {
                out.children.insert(pe, child);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(parts: &[&str]) -> Path {
        parts.iter().map(|s| PathElement::field(s)).collect()
    }

    #[test]
    fn set_algebra_and_fields_v1_round_trip() {
        let mut a = FieldSet::default();
        a.insert(&p(&["spec", "replicas"]));
        a.insert(&p(&["metadata", "labels"]));
        a.insert(&p(&["metadata", "labels", "app"]));
        let doc = a.to_fields_v1();
        assert_eq!(
            doc,
            json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:replicas": {}}})
        );
        assert_eq!(FieldSet::from_fields_v1(&doc), Some(a.clone()));
        assert!(a.has(&p(&["metadata", "labels"])));
        assert!(!a.has(&p(&["metadata"])));
        let mut b = FieldSet::default();
        b.insert(&p(&["spec", "replicas"]));
        b.insert(&p(&["spec", "paused"]));
        assert_eq!(a.intersection(&b).paths(), vec![p(&["spec", "replicas"])]);
        let rest = a.difference(&b);
        assert!(!rest.has(&p(&["spec", "replicas"])));
        assert!(rest.child(&PathElement::field("spec")).is_none());
        assert_eq!(a.union(&b).paths().len(), 4);
        assert!(a.without_field("spec").only_field("spec").is_empty());
        assert_eq!(FieldSet::from_fields_v1(&json!({"x:1": {}})), None);
        assert_eq!(FieldSet::from_fields_v1(&json!({"f:a": 1})), None);
        assert_eq!(FieldSet::from_fields_v1(&json!([])), None);
    }
}
