//! [`InformerFactory::compact_informer_in`]: the factory's informers of compact objects.

use std::sync::Arc;

use indexer::compact::{Codec, Compact};
use kube::{Api, Resource};
use reflector::ApiListerWatcher;

use super::InformerFactory;
use crate::scope::{InformerScope, Scoped};
use crate::{Object, SharedIndexInformer, TransformFn};

impl InformerFactory {
    /// The shared informer of `K` in `scope` whose objects are kept compact ([`Compact<K>`]:
    /// captured from the wire without decoding their bodies, stored by `codec`, decoded when
    /// read). The first request makes it with `codec` as its transform (after the factory's
    /// managed-fields stripping, if any); later requests share it, whatever codec they pass.
    /// Read it typed through a [`CompactLister`](indexer::compact::CompactLister).
    ///
    /// ```no_run
    /// # async fn run(client: kube::Client) {
    /// use informer::{InformerFactory, InformerScope};
    /// use indexer::compact::{Codec, CodecOptions, CompactLister};
    /// use k8s_openapi::api::core::v1::Pod;
    ///
    /// let factory = InformerFactory::new(client);
    /// let pods = factory.compact_informer_in::<Pod>(InformerScope::all(), &Codec::new(CodecOptions::new()));
    /// factory.start();
    /// pods.synced().await;
    /// let lister = CompactLister::new(pods.indexer().clone());
    /// let web = lister.namespace("shop").get("web-1"); // an Arc<Pod>, decoded now
    /// # let _ = web;
    /// # }
    /// ```
    pub fn compact_informer_in<K>(
        &self,
        scope: InformerScope,
        codec: &Codec,
    ) -> Arc<SharedIndexInformer<Compact<K>>>
    where
        K: Object + Resource<DynamicType = ()>,
        K::Scope: Scoped,
    {
        let api = K::Scope::confine(
            Api::<Compact<K>>::all(self.inner.client.clone()),
            scope.namespace_name(),
        );
        let selectors = self.selectors_of(&scope);
        let transform: TransformFn<Compact<K>> = Arc::new(codec.transform());
        self.shared(api, &(), selectors, ApiListerWatcher::new, Some(transform))
    }
}
