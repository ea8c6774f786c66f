//! The election record on a Lease (client-go's `LeaderElectionRecord`) and [`LeaseLock`], which
//! reads and writes it (client-go's `resourcelock.LeaseLock`). Every write carries the
//! `resourceVersion` that was read, so a concurrent write makes it fail with a conflict.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

/// The leader-election record of a lease spec (client-go's `LeaderElectionRecord`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Record {
    pub(super) holder: String,
    pub(super) lease_duration_seconds: i32,
    pub(super) acquire_time: Option<MicroTime>,
    pub(super) renew_time: Option<MicroTime>,
    pub(super) transitions: i32,
}

impl Record {
    pub(super) fn from_spec(spec: Option<&LeaseSpec>) -> Self {
        let Some(spec) = spec else {
            return Self::default();
        };
        Self {
            holder: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.clone(),
            renew_time: spec.renew_time.clone(),
            transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    pub(super) fn to_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.clone(),
            renew_time: self.renew_time.clone(),
            lease_transitions: Some(self.transitions),
            ..LeaseSpec::default()
        }
    }
}

/// Now, at the microsecond precision a Lease stores (so a record read back equals the one
/// written).
pub(super) fn now_micro() -> MicroTime {
    use k8s_openapi::jiff::Timestamp;
    let now = Timestamp::now();
    MicroTime(Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now))
}

/// Reads and writes the election record of the Lease `name` in `namespace`.
pub(super) struct LeaseLock {
    leases: Api<Lease>,
    namespace: String,
    name: String,
}

impl LeaseLock {
    /// The lock of the Lease `name` in `namespace`.
    pub(super) fn new(client: Client, namespace: &str, name: &str) -> Self {
        Self {
            leases: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// The Lease, if it exists, with its record.
    pub(super) async fn get(&self) -> Result<Option<(Record, Lease)>, kube::Error> {
        let lease = self.leases.get_opt(&self.name).await?;
        Ok(lease.map(|lease| (Record::from_spec(lease.spec.as_ref()), lease)))
    }

    /// Creates the Lease holding `record`; fails if it exists.
    pub(super) async fn create(&self, record: &Record) -> Result<(), kube::Error> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(record.to_spec()),
        };
        self.leases.create(&PostParams::default(), &lease).await?;
        Ok(())
    }

    /// Writes `record` into `lease` as it was read: fails with a conflict if the Lease changed
    /// since.
    pub(super) async fn update(
        &self,
        mut lease: Lease,
        record: &Record,
    ) -> Result<(), kube::Error> {
        lease.spec = Some(record.to_spec());
        self.leases
            .replace(&self.name, &PostParams::default(), &lease)
            .await?;
        Ok(())
    }
}
