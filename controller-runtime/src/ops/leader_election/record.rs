//! The election record on a Lease (client-go's `LeaderElectionRecord`) and [`LeaseLock`], which
//! reads and writes it (client-go's `resourcelock.LeaseLock`). Every write carries the
//! `resourceVersion` that was read, so a concurrent write makes it fail with a conflict. Shard
//! Leases of the `sharding` module are the same record with a ring label, so the lock can carry
//! labels that every write keeps on the Lease.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

/// The leader-election record of a lease spec (client-go's `LeaderElectionRecord`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Record {
    pub(crate) holder: String,
    pub(crate) lease_duration_seconds: i32,
    pub(crate) acquire_time: Option<MicroTime>,
    pub(crate) renew_time: Option<MicroTime>,
    pub(crate) transitions: i32,
}

impl Record {
    pub(crate) fn from_spec(spec: Option<&LeaseSpec>) -> Self {
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

    pub(crate) fn to_spec(&self) -> LeaseSpec {
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
pub(crate) fn now_micro() -> MicroTime {
    use k8s_openapi::jiff::Timestamp;
    let now = Timestamp::now();
    MicroTime(Timestamp::from_microsecond(now.as_microsecond()).unwrap_or(now))
}

/// Reads and writes the election record of the Lease `name` in `namespace`.
pub(crate) struct LeaseLock {
    leases: Api<Lease>,
    namespace: String,
    name: String,
    /// Labels the Lease is created with and that every write puts back (other labels on the
    /// Lease are kept).
    labels: BTreeMap<String, String>,
}

impl LeaseLock {
    /// The lock of the Lease `name` in `namespace`, whose writes keep `labels` on it.
    pub(crate) fn new(
        client: Client,
        namespace: &str,
        name: &str,
        labels: BTreeMap<String, String>,
    ) -> Self {
        Self {
            leases: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            labels,
        }
    }

    /// The Lease, if it exists, with its record.
    pub(crate) async fn get(&self) -> Result<Option<(Record, Lease)>, kube::Error> {
        let lease = self.leases.get_opt(&self.name).await?;
        Ok(lease.map(|lease| (Record::from_spec(lease.spec.as_ref()), lease)))
    }

    /// Creates the Lease holding `record`; fails if it exists.
    pub(crate) async fn create(&self, record: &Record) -> Result<(), kube::Error> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(record.to_spec()),
        };
        self.leases.create(&PostParams::default(), &lease).await?;
        Ok(())
    }

    /// Writes `record` into `lease` as it was read: fails with a conflict if the Lease changed
    /// since.
    pub(crate) async fn update(
        &self,
        mut lease: Lease,
        record: &Record,
    ) -> Result<(), kube::Error> {
        lease.spec = Some(record.to_spec());
        if !self.labels.is_empty() {
            let labels = lease.metadata.labels.get_or_insert_with(BTreeMap::new);
            labels.extend(self.labels.clone());
        }
        self.leases
            .replace(&self.name, &PostParams::default(), &lease)
            .await?;
        Ok(())
    }
}
