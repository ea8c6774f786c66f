//! Ready-made transforms for [`SharedIndexInformer::set_transform`](crate::SharedIndexInformer::set_transform).

use std::error::Error as StdError;
use std::sync::Arc;

use kube::Resource;
use kube::core::PartialObjectMeta;

/// The transform an informer applies to every object before caching and distributing it.
/// It must keep the object's namespace and name, and should be cheap and idempotent.
pub type TransformFn<K> = deltafifo::TransformFn<K>;

/// Drops `metadata.managedFields`, which controllers rarely read and which often make up half of
/// an object's size in memory.
///
/// An object without managed fields passes through untouched; otherwise the informer's freshly
/// decoded object is usually its only owner, so the field is cleared in place without a copy.
pub fn strip_managed_fields<K>(obj: Arc<K>) -> Result<Arc<K>, Box<dyn StdError + Send + Sync>>
where
    K: Resource + Clone,
{
    if obj.meta().managed_fields.is_none() {
        return Ok(obj);
    }
    let mut obj = Arc::unwrap_or_clone(obj);
    obj.meta_mut().managed_fields = None;
    Ok(Arc::new(obj))
}

/// Drops a metadata object's `types` (`apiVersion: meta.k8s.io/v1`,
/// `kind: PartialObjectMetadata`, the same for every object a metadata list or watch returns):
/// the cached object's type is its Rust type. The factory's metadata informers apply it;
/// compose it into a transform of your own on one to keep the saving.
pub fn strip_type_meta<K>(
    obj: Arc<PartialObjectMeta<K>>,
) -> Result<Arc<PartialObjectMeta<K>>, Box<dyn StdError + Send + Sync>>
where
    K: Clone,
{
    if obj.types.is_none() {
        return Ok(obj);
    }
    let mut obj = Arc::unwrap_or_clone(obj);
    obj.types = None;
    Ok(Arc::new(obj))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    #[test]
    fn strips_managed_fields_and_passes_clean_objects_through() {
        let mut obj = ConfigMap::default();
        obj.metadata.name = Some("a".into());
        let clean = Arc::new(obj.clone());
        let passed = strip_managed_fields(Arc::clone(&clean)).unwrap();
        assert!(Arc::ptr_eq(&clean, &passed));

        obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        let stripped = strip_managed_fields(Arc::new(obj)).unwrap();
        assert!(stripped.metadata.managed_fields.is_none());
        assert_eq!(stripped.metadata.name.as_deref(), Some("a"));
    }

    #[test]
    fn strips_the_type_of_metadata_objects_and_passes_untyped_ones_through() {
        use kube::core::PartialObjectMetaExt;
        let meta = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("a".into()),
            ..Default::default()
        };
        let typed: PartialObjectMeta<ConfigMap> = meta.into_response_partial();
        assert!(typed.types.is_some());
        let stripped = strip_type_meta(Arc::new(typed)).unwrap();
        assert!(stripped.types.is_none());
        assert_eq!(stripped.metadata.name.as_deref(), Some("a"));
        let passed = strip_type_meta(Arc::clone(&stripped)).unwrap();
        assert!(Arc::ptr_eq(&stripped, &passed));
    }
}
