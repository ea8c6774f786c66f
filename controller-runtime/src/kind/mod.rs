//! The object types every part of the crate works with: [`Kind`], the bound of a type known at
//! compile time, with its [`WatchScope`]; [`DynamicKind`], a kind known only at run time; and
//! [`OwnerKind`], a kind as owner references name it.
//!
//! Public through [`cache`](crate::cache) (and [`Kind`] through the prelude); a module of its own
//! so that the cache, the RBAC rules, the webhooks and the controllers can all name kinds
//! without depending on one another.

mod dynamic;
mod owner;
mod scope;

pub use dynamic::DynamicKind;
pub(crate) use owner::OwnerKind;
pub use owner::get_controller_of;
pub use scope::{Kind, WatchScope};

/// A typed kind's name in messages, e.g. `ConfigMap (v1)`.
pub(crate) fn describe<K: Kind>() -> String {
    format!("{} ({})", K::kind(&()), K::api_version(&()))
}
