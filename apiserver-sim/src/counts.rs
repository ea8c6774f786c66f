//! Request counting by verb and resource, for tests that assert how often a client
//! listed, watched or wrote (see [`crate::ApiServer::request_count`]).

use std::collections::BTreeMap;

use hashbrown::HashMap;
use parking_lot::Mutex;

/// The verbs counted, in the order of the per-resource counter array.
pub const VERBS: [&str; 8] = [
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

/// Requests received per resource and verb. One short uncontended lock per request; the
/// resource name is allocated only the first time it is seen.
#[derive(Debug, Default)]
pub struct RequestCounts {
    by_resource: Mutex<HashMap<String, [u64; VERBS.len()]>>,
}

fn verb_index(verb: &str) -> Option<usize> {
    VERBS.iter().position(|v| v.eq_ignore_ascii_case(verb))
}

impl RequestCounts {
    /// Counts one request.
    pub fn record(&self, verb: &str, resource: &str) {
        let Some(i) = verb_index(verb) else { return };
        let mut map = self.by_resource.lock();
        match map.get_mut(resource) {
            Some(c) => c[i] += 1,
            None => {
                let mut c = [0; VERBS.len()];
                c[i] = 1;
                map.insert(resource.to_string(), c);
            }
        }
    }

    /// Requests counted for `verb` on `resource` (0 for an unknown verb).
    pub fn get(&self, verb: &str, resource: &str) -> u64 {
        let Some(i) = verb_index(verb) else { return 0 };
        self.by_resource.lock().get(resource).map_or(0, |c| c[i])
    }

    /// Forgets every count.
    pub fn reset(&self) {
        self.by_resource.lock().clear();
    }

    /// Every non-zero count: resource → verb → count.
    pub fn snapshot(&self) -> BTreeMap<String, BTreeMap<&'static str, u64>> {
        self.by_resource
            .lock()
            .iter()
            .map(|(r, c)| {
                let verbs = VERBS
                    .iter()
                    .zip(c)
                    .filter(|(_, n)| **n > 0)
                    .map(|(v, n)| (*v, *n))
                    .collect();
                (r.clone(), verbs)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_verb_and_resource() {
        let c = RequestCounts::default();
        c.record("list", "pods");
        c.record("list", "pods");
        c.record("watch", "pods");
        c.record("bogus", "pods");
        assert_eq!((c.get("list", "pods"), c.get("watch", "pods")), (2, 1));
        assert_eq!((c.get("get", "pods"), c.get("list", "nodes")), (0, 0));
        assert_eq!(c.snapshot()["pods"]["list"], 2);
        c.reset();
        assert_eq!(c.get("list", "pods"), 0);
    }
}
