//! Registering conversions: [`Conversion::hub`] names a kind's hub version, [`KindConversion::spoke`]
//! adds the versions that convert through it, and the [`Registry`] holds every kind the server
//! converts, keyed by API group and kind.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::kind::Kind;
use crate::webhook::conversion::convertible::Convertible;
use crate::webhook::error::Error;

/// Where hub-and-spoke conversions start: [`Conversion::hub`].
#[derive(Debug)]
pub struct Conversion;

impl Conversion {
    /// The conversions of the kind of `H`, with `H`'s version as the hub (the version every
    /// other converts through; usually the storage version). Add the other versions with
    /// [`KindConversion::spoke`], then register the result with
    /// [`WebhookServer::register_conversion`](crate::webhook::WebhookServer::register_conversion)
    /// or [`Manager::add_conversion`](crate::manager::Manager::add_conversion).
    pub fn hub<H: Kind + Serialize>() -> KindConversion<H> {
        KindConversion {
            group: H::group(&()).into_owned(),
            kind: H::kind(&()).into_owned(),
            hub_version: H::version(&()).into_owned(),
            spokes: Vec::new(),
            problems: Vec::new(),
        }
    }
}

/// Decodes a spoke object and converts it to the hub.
type ToHub<H> = fn(&Value) -> Result<H, String>;
/// Converts the hub to a spoke and encodes it.
type FromHub<H> = fn(&H) -> Result<Value, String>;

struct Spoke<H> {
    version: String,
    to_hub: ToHub<H>,
    from_hub: FromHub<H>,
}

/// The versions of one kind and how they convert, through the hub `H` (built with
/// [`Conversion::hub`]).
pub struct KindConversion<H> {
    group: String,
    kind: String,
    hub_version: String,
    spokes: Vec<Spoke<H>>,
    /// Inconsistencies found while adding spokes, reported at registration.
    problems: Vec<String>,
}

impl<H> KindConversion<H> {
    fn spoke_versions(&self) -> Vec<&str> {
        self.spokes
            .iter()
            .map(|spoke| spoke.version.as_str())
            .collect()
    }
}

impl<H> fmt::Debug for KindConversion<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KindConversion")
            .field("group", &self.group)
            .field("kind", &self.kind)
            .field("hub_version", &self.hub_version)
            .field("spokes", &self.spoke_versions())
            .finish_non_exhaustive()
    }
}

impl<H: Kind + Serialize> KindConversion<H> {
    /// Adds the version of `S`, which converts to and from the hub. It must be of the hub's
    /// group and kind, and another version than the hub's and the other spokes' (checked at
    /// registration).
    pub fn spoke<S: Kind + Serialize + Convertible<H>>(mut self) -> Self {
        let (group, kind, version) = (S::group(&()), S::kind(&()), S::version(&()));
        if group != self.group || kind != self.kind {
            self.problems.push(format!(
                "spoke {group}/{version}/{kind} is not of the hub's group and kind {}/{}",
                self.group, self.kind
            ));
        } else if version == self.hub_version || self.spoke_versions().contains(&&*version) {
            self.problems.push(format!(
                "version {version} of {}/{} is registered twice",
                self.group, self.kind
            ));
        } else {
            self.spokes.push(Spoke {
                version: version.into_owned(),
                to_hub: spoke_to_hub::<S, H>,
                from_hub: spoke_from_hub::<S, H>,
            });
        }
        self
    }
}

fn spoke_to_hub<S: Kind + Convertible<H>, H>(object: &Value) -> Result<H, String> {
    let spoke = S::deserialize(object).map_err(|error| {
        format!(
            "cannot decode it as {} {}: {error}",
            S::api_version(&()),
            S::kind(&())
        )
    })?;
    spoke
        .convert_to_hub()
        .map_err(|error| format!("converting it to the hub version: {error}"))
}

fn spoke_from_hub<S: Serialize + Convertible<H>, H>(hub: &H) -> Result<Value, String> {
    let spoke = S::convert_from_hub(hub)
        .map_err(|error| format!("converting it from the hub version: {error}"))?;
    serde_json::to_value(&spoke).map_err(|error| format!("cannot encode the result: {error}"))
}

/// One registered kind, its types erased.
pub(crate) trait ConvertKind: Send + Sync + 'static {
    /// Converts `object` (of `from`) to version `to`; the result's `apiVersion`, `kind` and
    /// metadata are fixed up by the caller.
    fn convert(&self, object: &Value, from: &str, to: &str) -> Result<Value, String>;
}

impl<H: Kind + Serialize> ConvertKind for KindConversion<H> {
    fn convert(&self, object: &Value, from: &str, to: &str) -> Result<Value, String> {
        let spoke = |version: &str| {
            self.spokes
                .iter()
                .find(|spoke| spoke.version == version)
                .ok_or_else(|| {
                    let mut known = self.spoke_versions();
                    known.push(&self.hub_version);
                    known.sort_unstable();
                    format!(
                        "version {version} of {}/{} has no registered conversion (registered: {})",
                        self.group,
                        self.kind,
                        known.join(", ")
                    )
                })
        };
        let hub = if from == self.hub_version {
            H::deserialize(object)
                .map_err(|error| format!("cannot decode it as {}: {error}", H::api_version(&())))?
        } else {
            (spoke(from)?.to_hub)(object)?
        };
        if to == self.hub_version {
            serde_json::to_value(&hub).map_err(|error| format!("cannot encode the hub: {error}"))
        } else {
            (spoke(to)?.from_hub)(&hub)
        }
    }
}

/// Every kind the server converts, by API group and kind.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    kinds: HashMap<(String, String), Arc<dyn ConvertKind>>,
}

impl Registry {
    /// Adds the conversions of one kind; fails if they are inconsistent or the kind is taken.
    pub(crate) fn add<H: Kind + Serialize>(
        &mut self,
        conversion: KindConversion<H>,
    ) -> Result<(), Error> {
        if !conversion.problems.is_empty() {
            return Err(Error::InvalidConversion(conversion.problems.join("; ")));
        }
        if conversion.spokes.is_empty() {
            return Err(Error::InvalidConversion(format!(
                "{}/{} has only its hub version {}; add the other versions with `spoke`",
                conversion.group, conversion.kind, conversion.hub_version
            )));
        }
        let key = (conversion.group.clone(), conversion.kind.clone());
        if self.kinds.contains_key(&key) {
            return Err(Error::InvalidConversion(format!(
                "conversions of {}/{} are already registered",
                key.0, key.1
            )));
        }
        self.kinds.insert(key, Arc::new(conversion));
        Ok(())
    }

    /// The conversions of `group`/`kind`.
    pub(crate) fn get(&self, group: &str, kind: &str) -> Option<Arc<dyn ConvertKind>> {
        self.kinds
            .get(&(group.to_owned(), kind.to_owned()))
            .cloned()
    }
}
