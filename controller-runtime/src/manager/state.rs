//! What a manager keeps while it lives: the runnables added before `start`, the controllers
//! (and what removing one undoes), the names taken, the RBAC rules recorded, and where the
//! manager is in its life.

use std::collections::{HashMap, HashSet};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::controller::Teardown;
use crate::manager::removable::Phase;
use crate::ops::runnable::Runnable;

/// The runnables added before `start`, the controllers and their names, and where the
/// manager is in its life.
#[derive(Default)]
pub(super) struct State {
    pub(super) runnables: Vec<Box<dyn Runnable>>,
    pub(super) names: HashSet<String>,
    pub(super) controllers: HashMap<String, ControllerSlot>,
    pub(super) started: bool,
    /// While `start` runs: where runnables added meanwhile go (the supervisor starts them).
    pub(super) late: Option<mpsc::UnboundedSender<Box<dyn Runnable>>>,
    /// Once `start` returned: nothing can be added any more.
    pub(super) stopped: bool,
    /// The RBAC rules recorded and declared so far (see `rbac.rs`).
    pub(super) permissions: crate::rbac::Permissions,
}

/// What the manager keeps of each controller to remove it.
pub(crate) struct ControllerSlot {
    pub(super) removed: CancellationToken,
    pub(super) phases: Vec<watch::Receiver<Phase>>,
    pub(super) teardown: Teardown,
}
