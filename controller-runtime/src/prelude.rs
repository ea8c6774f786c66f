//! The names a first operator needs, in one import: `use controller_runtime::prelude::*;`.

pub use crate::ObjectKey;
pub use crate::cache::{Kind, Metadata};
pub use crate::controller::{
    Action, Context, Controller, ReconcileError, Reconciler, Request, Watch, reconciler_fn,
};
pub use crate::manager::Manager;
pub use crate::util::set_controller_reference;
