//! Object keys: the `namespace/name` strings that identify an object in a store.

use kube::Resource;
use smol_str::SmolStr;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use crate::Error;

/// The key of an object in a store: an optional namespace and a name.
///
/// It displays as `namespace/name`, or `name` for cluster-scoped objects (client-go's
/// `MetaNamespaceKeyFunc`), and parses back from that form with [`FromStr`]. Keys of up to 23
/// bytes are stored inline; longer ones in one shared buffer. Cloning a key never allocates.
///
/// Keys order by namespace (cluster-scoped first), then by name.
#[derive(Clone)]
pub struct ObjectKey {
    /// The whole key as displayed: `namespace/name` or `name`. Neither part contains `/`, so
    /// the first `/` (if any) separates them.
    text: SmolStr,
}

impl ObjectKey {
    /// A key for a namespaced object. Both parts must be non-empty and free of `/`.
    pub fn namespaced(namespace: &str, name: &str) -> Result<Self, Error> {
        Self::new(Some(namespace), name)
    }

    /// A key for a cluster-scoped object. The name must be non-empty and free of `/`.
    pub fn cluster_scoped(name: &str) -> Result<Self, Error> {
        Self::new(None, name)
    }

    /// A key from an optional namespace and a name.
    ///
    /// An empty namespace is treated as no namespace, as client-go does. The name must be non-empty,
    /// and neither part may contain `/`.
    pub fn new(namespace: Option<&str>, name: &str) -> Result<Self, Error> {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        check_parts(namespace, name)?;
        let text = match namespace {
            Some(ns) => join_key(ns, name),
            None => SmolStr::new(name),
        };
        Ok(Self { text })
    }

    /// The namespace, or `None` for a cluster-scoped key.
    pub fn namespace(&self) -> Option<&str> {
        self.text.split_once('/').map(|(namespace, _)| namespace)
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.text
            .split_once('/')
            .map_or(self.text.as_str(), |(_, name)| name)
    }

    /// The key as text: `namespace/name` or `name`.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether both keys share one text buffer (one is a clone of a long key). Cheaper than
    /// `==`, which is true in more cases.
    #[inline]
    pub fn shares_text(&self, other: &ObjectKey) -> bool {
        std::ptr::eq(self.text.as_str(), other.text.as_str())
    }

    /// This key as a borrowed [`ObjectKeyRef`].
    pub fn as_key_ref(&self) -> ObjectKeyRef<'_> {
        ObjectKeyRef {
            namespace: self.namespace(),
            name: self.name(),
        }
    }
}

/// A key borrowed from an object's metadata, for looking objects up without allocating.
///
/// It hashes like the equal [`ObjectKey`] and implements `hashbrown`'s `Equivalent`, so a
/// `hashbrown::HashMap<ObjectKey, V>` can be queried with it directly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectKeyRef<'a> {
    namespace: Option<&'a str>,
    name: &'a str,
}

impl<'a> ObjectKeyRef<'a> {
    /// The key of `obj`, borrowed from its metadata. An empty namespace counts as none.
    ///
    /// Fails with [`Error::MissingName`] when the object has no name. The parts are not checked
    /// for `/` here; [`to_owned`](Self::to_owned) does that.
    pub fn of<K: Resource>(obj: &'a K) -> Result<Self, Error> {
        let meta = obj.meta();
        Ok(Self {
            namespace: meta.namespace.as_deref().filter(|ns| !ns.is_empty()),
            name: meta.name.as_deref().ok_or(Error::MissingName)?,
        })
    }

    /// The namespace, or `None` for a cluster-scoped key.
    pub fn namespace(&self) -> Option<&'a str> {
        self.namespace
    }

    /// The object's name.
    pub fn name(&self) -> &'a str {
        self.name
    }

    /// An owned, validated [`ObjectKey`] with the same parts.
    pub fn to_owned(&self) -> Result<ObjectKey, Error> {
        ObjectKey::new(self.namespace, self.name)
    }

    /// Checks, without allocating, that [`to_owned`](Self::to_owned) would succeed.
    pub fn validate(&self) -> Result<(), Error> {
        check_parts(self.namespace, self.name)
    }
}

impl hashbrown::Equivalent<ObjectKey> for ObjectKeyRef<'_> {
    #[inline]
    fn equivalent(&self, key: &ObjectKey) -> bool {
        let text = key.text.as_bytes();
        match self.namespace {
            None => text == self.name.as_bytes(),
            // The length first: it lives in the key itself, a long key's text behind a pointer.
            Some(ns) => {
                text.len() == ns.len() + 1 + self.name.len()
                    && text.get(..ns.len()) == Some(ns.as_bytes())
                    && text.get(ns.len()) == Some(&b'/')
                    && text.get(ns.len() + 1..) == Some(self.name.as_bytes())
            }
        }
    }
}

impl Hash for ObjectKeyRef<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self.namespace {
            None => hash_key_text(self.name.as_bytes(), state),
            Some(ns) => with_joined(ns, self.name, |text| hash_key_text(text, state)),
        }
    }
}

/// The one hashing rule for keys, shared by [`ObjectKey`] and [`ObjectKeyRef`]: the key's text,
/// hashed as `str` hashes (its bytes, then `0xff`).
#[inline]
fn hash_key_text<H: Hasher>(text: &[u8], state: &mut H) {
    state.write(text);
    state.write_u8(0xff);
}

/// Rejects an empty name, a `/` inside a part, and a namespace too long to index.
fn check_parts(namespace: Option<&str>, name: &str) -> Result<(), Error> {
    let invalid = |reason| Error::InvalidKey {
        key: match namespace {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_owned(),
        },
        reason,
    };
    if name.is_empty() {
        return Err(invalid("the name is empty"));
    }
    if name.contains('/') {
        return Err(invalid("the name contains '/'"));
    }
    match namespace {
        Some(ns) if ns.contains('/') => Err(invalid("the namespace contains '/'")),
        Some(ns) if u32::try_from(ns.len()).is_err() => {
            Err(invalid("the namespace is longer than 4 GiB"))
        }
        _ => Ok(()),
    }
}

/// `namespace/name` as one string: inline when short, else one shared allocation.
fn join_key(namespace: &str, name: &str) -> SmolStr {
    with_joined(namespace, name, |text| match std::str::from_utf8(text) {
        Ok(text) => SmolStr::new(text),
        // Unreachable: two `str`s joined by an ASCII '/' are valid UTF-8.
        Err(_) => SmolStr::new(format!("{namespace}/{name}")),
    })
}

/// Calls `use_text` with the bytes of `namespace/name`, assembled on the stack when they fit.
fn with_joined<R>(namespace: &str, name: &str, use_text: impl FnOnce(&[u8]) -> R) -> R {
    const STACK: usize = 128;
    let len = namespace.len() + 1 + name.len();
    if len <= STACK {
        let mut buf = [0u8; STACK];
        buf[..namespace.len()].copy_from_slice(namespace.as_bytes());
        buf[namespace.len()] = b'/';
        buf[namespace.len() + 1..len].copy_from_slice(name.as_bytes());
        return use_text(&buf[..len]);
    }
    use_text(format!("{namespace}/{name}").as_bytes())
}

/// The store key of an object, as client-go's `MetaNamespaceKeyFunc` computes it.
///
/// Fails with [`Error::MissingName`] when the object has no name, and with [`Error::InvalidKey`]
/// when its name or namespace contains `/` (which the API server never produces).
pub fn key_of<K: Resource>(obj: &K) -> Result<ObjectKey, Error> {
    ObjectKeyRef::of(obj)?.to_owned()
}

impl FromStr for ObjectKey {
    type Err = Error;

    /// Parses `namespace/name` or `name`; rejects empty parts and more than one `/`.
    fn from_str(key: &str) -> Result<Self, Error> {
        let invalid = |reason| Error::InvalidKey {
            key: key.to_owned(),
            reason,
        };
        match key.split_once('/') {
            None => Self::new(None, key),
            Some((_, rest)) if rest.contains('/') => Err(invalid("it has more than one '/'")),
            Some(("", _)) => Err(invalid("the namespace is empty")),
            Some((ns, name)) => Self::new(Some(ns), name),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectKey({:?})", &*self.text)
    }
}

// Constructors reject '/' inside parts, so the text alone determines both parts.
impl PartialEq for ObjectKey {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.shares_text(other) || self.text == other.text
    }
}

impl Eq for ObjectKey {}

impl Hash for ObjectKey {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_key_text(self.text.as_bytes(), state);
    }
}

impl Ord for ObjectKey {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.namespace(), self.name()).cmp(&(other.namespace(), other.name()))
    }
}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::ObjectMeta;

    #[test]
    fn namespaced_key_displays_and_parses_back() {
        let key = ObjectKey::namespaced("default", "web").unwrap();
        assert_eq!(key.to_string(), "default/web");
        assert_eq!(key.namespace(), Some("default"));
        assert_eq!(key.name(), "web");
        assert_eq!("default/web".parse::<ObjectKey>().unwrap(), key);
    }

    #[test]
    fn cluster_scoped_key_is_the_name_alone() {
        let key: ObjectKey = "node-1".parse().unwrap();
        assert_eq!(key.namespace(), None);
        assert_eq!(key.name(), "node-1");
        assert_eq!(key.to_string(), "node-1");
        assert_eq!(ObjectKey::new(Some(""), "node-1").unwrap(), key);
    }

    #[test]
    fn parse_rejects_malformed_keys() {
        for bad in ["", "/", "a/", "/b", "a/b/c", "a//b"] {
            let err = bad.parse::<ObjectKey>().unwrap_err();
            assert!(
                matches!(err, Error::InvalidKey { .. }),
                "{bad:?} gave {err}"
            );
        }
    }

    #[test]
    fn constructors_reject_slashes_inside_parts() {
        assert!(ObjectKey::namespaced("a/b", "c").is_err());
        assert!(ObjectKey::namespaced("a", "b/c").is_err());
        assert!(ObjectKey::cluster_scoped("").is_err());
    }

    #[test]
    fn clones_of_long_keys_share_the_text() {
        let key = ObjectKey::namespaced("kube-system", "coredns-5d78c9869d-abcde").unwrap();
        let clone = key.clone();
        assert!(key.shares_text(&clone));
        assert_eq!(clone.name(), "coredns-5d78c9869d-abcde");
    }

    #[test]
    fn short_and_long_keys_split_the_same_way() {
        for (ns, name) in [
            ("a", "b"),
            ("kube-system", "a-rather-long-pod-name-0123456789"),
        ] {
            let key = ObjectKey::namespaced(ns, name).unwrap();
            assert_eq!((key.namespace(), key.name()), (Some(ns), name));
            assert_eq!(key, format!("{ns}/{name}").parse().unwrap());
        }
    }

    #[test]
    fn borrowed_key_hashes_and_compares_like_the_owned_key() {
        use std::hash::BuildHasher;
        let state = hashbrown::DefaultHashBuilder::default();
        for text in ["ns/name", "name"] {
            let key: ObjectKey = text.parse().unwrap();
            let borrowed = key.as_key_ref();
            assert_eq!(state.hash_one(&key), state.hash_one(borrowed));
            assert!(hashbrown::Equivalent::equivalent(&borrowed, &key));
            assert_eq!(borrowed.to_owned().unwrap(), key);
        }
        let mut map = hashbrown::HashMap::new();
        map.insert(ObjectKey::namespaced("a", "b").unwrap(), 1);
        let cm = ConfigMap {
            metadata: ObjectMeta {
                namespace: Some("a".into()),
                name: Some("b".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        assert_eq!(map.get(&ObjectKeyRef::of(&cm).unwrap()), Some(&1));
    }

    #[test]
    fn keys_order_by_namespace_then_name() {
        let mut keys: Vec<ObjectKey> = ["a/x", "a-b/a", "z", "a/b"]
            .iter()
            .map(|k| k.parse().unwrap())
            .collect();
        keys.sort();
        let sorted: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(sorted, ["z", "a/b", "a/x", "a-b/a"]);
    }

    #[test]
    fn key_of_follows_meta_namespace_key_func() {
        let cm = |ns: Option<&str>, name: Option<&str>| ConfigMap {
            metadata: ObjectMeta {
                namespace: ns.map(Into::into),
                name: name.map(Into::into),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        assert_eq!(key_of(&cm(Some("ns"), Some("a"))).unwrap().as_str(), "ns/a");
        assert_eq!(key_of(&cm(None, Some("a"))).unwrap().as_str(), "a");
        assert!(matches!(
            key_of(&cm(Some("ns"), None)),
            Err(Error::MissingName)
        ));
    }
}
