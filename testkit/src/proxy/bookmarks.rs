//! Bookmarks on demand: after
//! [`InjectFaults::send_bookmarks`](crate::fault::InjectFaults::send_bookmarks) every open
//! watch through the proxy that asked for bookmarks (`allowWatchBookmarks`) gets a `BOOKMARK`
//! event at its next event boundary, carrying the resourceVersion the proxy read from the
//! server (a quorum read: the server's current one), as the simulator's bookmarks carry its
//! current one. A real server sends its own about once a minute; these come when a
//! test asks.
//!
//! The bookmark's object names the watched type, as a server's does: `PartialObjectMetadata`
//! for a metadata watch, otherwise the kind the server's discovery gives the resource (asked
//! once per group version and resource, when such a watch opens).
//!
//! The proxy cannot know which events the server has still to send: a test asks for
//! bookmarks once the events of its own writes to the watched collection have arrived (as
//! with the simulator, whose bookmark also says "everything up to now was sent").

use std::collections::HashMap;

use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::upstream::Upstream;

/// The `apiVersion` and `kind` of a watch's bookmarks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WatchedType {
    api_version: String,
    kind: String,
}

/// What a watch that asked for bookmarks adds to its body: when to send one, and its type.
pub(crate) struct Bookmarks {
    /// Changes to the resourceVersion of the next bookmark when a test asks for one.
    pub now: watch::Receiver<u64>,
    /// The type its bookmarks name.
    pub watched: WatchedType,
}

impl Bookmarks {
    /// A watch's bookmark at `resource_version`, one JSON line.
    pub fn line(&self, resource_version: u64) -> Bytes {
        let event = json!({
            "type": "BOOKMARK",
            "object": {
                "apiVersion": self.watched.api_version,
                "kind": self.watched.kind,
                "metadata": {"resourceVersion": resource_version.to_string()},
            },
        });
        Bytes::from(format!("{event}\n"))
    }

    /// The next resourceVersion asked for; never resolves once the proxy is gone.
    pub async fn next(&mut self) -> u64 {
        if self.now.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
        *self.now.borrow_and_update()
    }
}

/// Kinds by group version and resource, from the server's discovery.
#[derive(Debug, Default)]
pub(crate) struct Kinds {
    known: Mutex<HashMap<(String, String), String>>,
}

impl Kinds {
    /// The type a watch of `path`, asking to be answered as `accept`, names in its bookmarks;
    /// `None` for a path outside the API or a resource discovery does not list.
    pub async fn watched_type(
        &self,
        upstream: &Upstream,
        path: &str,
        accept: Option<&str>,
    ) -> Option<WatchedType> {
        if accept.is_some_and(|a| a.contains("as=PartialObjectMetadata")) {
            return Some(WatchedType {
                api_version: "meta.k8s.io/v1".into(),
                kind: "PartialObjectMetadata".into(),
            });
        }
        let (group_version, plural) = group_version_and_plural(path)?;
        let key = (group_version.clone(), plural.clone());
        let cached = self.known.lock().get(&key).cloned();
        let kind = match cached {
            Some(kind) => kind,
            None => {
                let discovery_path = match group_version.contains('/') {
                    true => format!("/apis/{group_version}"),
                    false => format!("/api/{group_version}"),
                };
                let resources = match upstream.get_json(&discovery_path).await {
                    Ok(resources) => resources,
                    Err(error) => {
                        tracing::warn!("fault proxy: discovery of {discovery_path}: {error}");
                        return None;
                    }
                };
                let kind = kind_of(&resources, &plural)?;
                self.known.lock().insert(key, kind.clone());
                kind
            }
        };
        Some(WatchedType {
            api_version: group_version,
            kind,
        })
    }
}

/// The kind an `APIResourceList` gives `plural`.
fn kind_of(resources: &Value, plural: &str) -> Option<String> {
    resources
        .get("resources")?
        .as_array()?
        .iter()
        .find(|r| r.get("name").and_then(Value::as_str) == Some(plural))?
        .get("kind")?
        .as_str()
        .map(str::to_owned)
}

/// The group version (`v1`, `apps/v1`) and resource of a watch's path (namespaced or not,
/// legacy `/watch/` or not).
fn group_version_and_plural(path: &str) -> Option<(String, String)> {
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let (group_version, rest) = match segs.as_slice() {
        ["api", version, rest @ ..] => (version.to_string(), rest),
        ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
        _ => return None,
    };
    let rest = rest.strip_prefix(&["watch"]).unwrap_or(rest);
    let plural = match rest {
        ["namespaces", _, plural, ..] => plural,
        [plural, ..] => plural,
        [] => return None,
    };
    Some((group_version, plural.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_version_and_resource_of_a_watch() {
        let of = |path| group_version_and_plural(path).map(|(gv, p)| format!("{gv} {p}"));
        assert_eq!(
            of("/api/v1/namespaces/a/configmaps").as_deref(),
            Some("v1 configmaps")
        );
        assert_eq!(
            of("/apis/apps/v1/watch/deployments").as_deref(),
            Some("apps/v1 deployments")
        );
        assert_eq!(of("/api/v1/namespaces").as_deref(), Some("v1 namespaces"));
        assert_eq!(of("/version"), None);
    }

    #[test]
    fn a_bookmark_names_the_watched_type() {
        let resources = json!({"resources": [
            {"name": "configmaps", "kind": "ConfigMap"},
            {"name": "secrets", "kind": "Secret"},
        ]});
        assert_eq!(kind_of(&resources, "secrets").as_deref(), Some("Secret"));
        assert_eq!(kind_of(&resources, "pods"), None);
        let (_tx, now) = watch::channel(0);
        let bookmarks = Bookmarks {
            now,
            watched: WatchedType {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
            },
        };
        let line = bookmarks.line(42);
        let event: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(event["type"], "BOOKMARK");
        assert_eq!(event["object"]["kind"], "ConfigMap");
        assert_eq!(event["object"]["metadata"]["resourceVersion"], "42");
        assert!(line.ends_with(b"\n"));
    }
}
