//! [`Recorder`]: an informer event handler for ConfigMaps that records every notification.
//!
//! This file names the informer crate only as `informer::…` and nothing else of this crate, so
//! that the informer's own unit tests compile it too (a crate's unit tests cannot use a
//! dev-dependency that depends on the crate itself: its types would be a second copy).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use informer::{DeletedObject, ResourceEventHandler};
use kube::Resource;
use parking_lot::Mutex;
use tokio::sync::Semaphore;

/// One notification as a [`Recorder`] saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// name, resourceVersion, is_in_initial_list
    Add(String, String, bool),
    /// name, old resourceVersion, new resourceVersion, old and new are the same `Arc`
    Update(String, String, String, bool),
    /// name, resourceVersion of the last known state, is a tombstone
    Delete(String, Option<String>, bool),
}

impl Event {
    /// The name of the object the notification is about.
    pub fn name(&self) -> &str {
        match self {
            Event::Add(name, ..) | Event::Update(name, ..) | Event::Delete(name, ..) => name,
        }
    }
}

/// A handler that records every notification and applies it to its own name → resourceVersion
/// map. It can wait for a permit of a gate before each call, sleep in each call, and panic on
/// the add of one name. Clones share what they record.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// The handler's name (what the informer logs it as).
    pub name: String,
    events: Arc<Mutex<Vec<Event>>>,
    state: Arc<Mutex<BTreeMap<String, String>>>,
    gate: Option<Arc<Semaphore>>,
    delay: Duration,
    panic_on_add: Option<String>,
}

impl Recorder {
    /// A recorder named `name` that records without delay.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Waits for a permit of the returned gate before every call.
    pub fn gated(mut self) -> (Self, Arc<Semaphore>) {
        let gate = Arc::new(Semaphore::new(0));
        self.gate = Some(Arc::clone(&gate));
        (self, gate)
    }

    /// Sleeps `delay` in every call.
    pub fn slow(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Panics when told about the add of `name`.
    pub fn panic_on_add(mut self, name: &str) -> Self {
        self.panic_on_add = Some(name.into());
        self
    }

    /// Every notification so far, in order.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().clone()
    }

    /// How many notifications so far.
    pub fn len(&self) -> usize {
        self.events.lock().len()
    }

    /// True before the first notification.
    pub fn is_empty(&self) -> bool {
        self.events.lock().is_empty()
    }

    /// The name → resourceVersion map the handler built from its notifications.
    pub fn state(&self) -> BTreeMap<String, String> {
        self.state.lock().clone()
    }

    async fn pace(&self) {
        if let Some(gate) = &self.gate
            && let Ok(permit) = gate.acquire().await
        {
            permit.forget();
        }
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
    }
}

fn name_of<K: Resource>(obj: &K) -> String {
    obj.meta().name.clone().unwrap_or_default()
}

fn rv_of<K: Resource>(obj: &K) -> String {
    obj.meta().resource_version.clone().unwrap_or_default()
}

/// Records the events of ConfigMaps in any representation (typed, compact): it reads their
/// metadata only.
impl<K: Resource + Send + Sync + 'static> ResourceEventHandler<K> for Recorder {
    async fn on_add(&self, obj: Arc<K>, is_in_initial_list: bool) {
        self.pace().await;
        let name = name_of(obj.as_ref());
        if self.panic_on_add.as_deref() == Some(name.as_str()) {
            panic!("{} refuses to add {name}", self.name);
        }
        self.state.lock().insert(name.clone(), rv_of(obj.as_ref()));
        self.events
            .lock()
            .push(Event::Add(name, rv_of(obj.as_ref()), is_in_initial_list));
    }

    async fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        self.pace().await;
        let name = name_of(new.as_ref());
        self.state.lock().insert(name.clone(), rv_of(new.as_ref()));
        let same = Arc::ptr_eq(&old, &new);
        self.events.lock().push(Event::Update(
            name,
            rv_of(old.as_ref()),
            rv_of(new.as_ref()),
            same,
        ));
    }

    async fn on_delete(&self, obj: DeletedObject<K>) {
        self.pace().await;
        let name = match &obj {
            DeletedObject::Known(obj) => name_of(obj.as_ref()),
            DeletedObject::Unknown(tombstone) => tombstone.key.name().to_owned(),
        };
        self.state.lock().remove(&name);
        let last = obj.object().map(|obj| rv_of(obj.as_ref()));
        self.events
            .lock()
            .push(Event::Delete(name, last, obj.is_tombstone()));
    }

    fn name(&self) -> &str {
        &self.name
    }
}
