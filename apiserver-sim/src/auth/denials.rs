//! [`Denial`]: one request the RBAC authorizer refused, kept for tests to assert on (the
//! simulator's stand-in for an audit log).

use parking_lot::Mutex;

use super::attributes::Attributes;

/// How many denials are kept; older ones are dropped first.
const KEEP: usize = 10_000;

/// A request refused with 403 Forbidden by the RBAC authorizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The user, e.g. `system:serviceaccount:default:sample-controller`.
    pub user: String,
    /// The verb (`get`, `list`, ..., or the lower-case method of a non-resource request).
    pub verb: String,
    /// The API group (`""` for core and for non-resource requests).
    pub group: String,
    /// `resource` or `resource/subresource`; `None` for a non-resource request.
    pub resource: Option<String>,
    /// The namespace, if the request had one.
    pub namespace: Option<String>,
    /// The object name, if the request named one.
    pub name: Option<String>,
    /// The request path; empty for a permission an admission plugin checked on the
    /// request's behalf (`OwnerReferencesPermissionEnforcement`).
    pub path: String,
    /// The `Status` message sent with the 403.
    pub message: String,
}

impl Denial {
    /// Whether this denial is of `verb` on `resource` (`resource/subresource` for a
    /// subresource) in API group `group`.
    pub fn is(&self, verb: &str, group: &str, resource: &str) -> bool {
        self.verb == verb && self.group == group && self.resource.as_deref() == Some(resource)
    }
}

/// The denials recorded, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Denials(Mutex<Vec<Denial>>);

impl Denials {
    /// Records one refusal.
    pub fn record(&self, user: &str, attrs: &Attributes, message: &str) {
        let res = attrs.resource.as_ref();
        let denial = Denial {
            user: user.to_string(),
            verb: attrs.verb.clone(),
            group: res.map(|r| r.group.clone()).unwrap_or_default(),
            resource: res.map(|r| r.combined()),
            namespace: res.and_then(|r| r.namespace.clone()),
            name: res.and_then(|r| r.name.clone()),
            path: attrs.path.clone(),
            message: message.to_string(),
        };
        let mut all = self.0.lock();
        if all.len() >= KEEP {
            all.remove(0);
        }
        all.push(denial);
    }

    /// Every denial kept, oldest first.
    pub fn snapshot(&self) -> Vec<Denial> {
        self.0.lock().clone()
    }

    /// Forgets every denial.
    pub fn clear(&self) {
        self.0.lock().clear();
    }
}
