//! `ListerWatcher`: the two calls a reflector makes to the API server, and `ApiListerWatcher`,
//! their implementation over `kube::Api` for typed and dynamic objects, full or metadata only
//! (client-go's `listwatch.go` and its metadata informer's lister-watcher).

use std::any::type_name;
use std::fmt::Debug;
use std::sync::Arc;

use futures::{StreamExt, TryStreamExt};
use kube::api::{ApiResource, DynamicObject, ListParams, ObjectList, WatchEvent, WatchParams};
use kube::core::PartialObjectMeta;
use kube::{Api, Client};

use crate::decode::{
    DEFAULT_MAX_WATCH_LINE_LEN, ListPart, ListStream, WatchDecoding, WatchStream, decode_list_body,
    decode_watch_body,
};
use crate::{Error, Object};

/// Lists and watches one collection of objects: the reflector's only view of the API server.
///
/// Mirrors client-go's `ListerWatcher`. The reflector chooses `resourceVersion`, `limit`,
/// `continue`, `timeoutSeconds`, `allowWatchBookmarks` and `sendInitialEvents`; an
/// implementation adds the scope (namespace, label and field selectors) and must not page on
/// its own. Object-safe, so a reflector holds an `Arc<dyn ListerWatcher<K>>` and tests can wrap
/// or replace the real one.
#[async_trait::async_trait]
pub trait ListerWatcher<K>: Send + Sync
where
    K: Clone,
{
    /// One list request (one page when `params.limit` is set).
    async fn list(&self, params: &ListParams) -> Result<ObjectList<K>, Error>;

    /// The same request as [`list`](Self::list), its response handed over as it arrives: the
    /// list's metadata first (so a pager can ask for the next page while this one is still
    /// being decoded), then its items in batches, in order. The reflector lists through this.
    ///
    /// Provided: `list`, then its metadata and all its items at once. [`ApiListerWatcher`]
    /// decodes the body as it streams in.
    async fn list_stream(&self, params: &ListParams) -> Result<ListStream<K>, Error>
    where
        K: Send + 'static,
    {
        let list = self.list(params).await?;
        let parts = [
            Ok(ListPart::Meta(list.metadata)),
            Ok(ListPart::Items(list.items)),
        ];
        Ok(futures::stream::iter(parts).boxed())
    }

    /// Opens a watch from `resource_version` ("" for the latest state). Errors in the stream
    /// are items of the stream; objects that fail to decode should be [`Error::Decode`] (or,
    /// from [`decode_watch_body`](crate::decode_watch_body), [`Error::WatchDecode`]) items so
    /// the reflector can skip them.
    async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>, Error>;

    /// [`watch`](Self::watch), with the response body decoded as `decoding` says (see
    /// [`WatchDecoding`]). The reflector opens every watch through this, passing
    /// [`ReflectorOptions::watch_decoding`](crate::ReflectorOptions::watch_decoding).
    ///
    /// Provided: `watch`, for lister-watchers that decode no body of their own or decode it one
    /// way only. [`ApiListerWatcher`] decodes as asked; a wrapper around another lister-watcher
    /// should forward this call, so that the choice reaches the one that decodes.
    async fn watch_with_decoding(
        &self,
        params: &WatchParams,
        resource_version: &str,
        decoding: WatchDecoding,
    ) -> Result<WatchStream<K>, Error> {
        let _ = decoding;
        self.watch(params, resource_version).await
    }

    /// A short description of what is listed (resource and scope), for logs and spans.
    fn describe(&self) -> String {
        type_name::<K>().to_string()
    }
}

/// Checks that an object is of the watched kind; used for dynamic objects, whose kind is
/// only known at run time (typed objects are checked when they are decoded). A listed object
/// comes with its list's type, which vouches for an item that has no type of its own.
type KindCheck<K> = Arc<dyn Fn(&K, Option<&ListType>) -> Result<(), Error> + Send + Sync>;

/// A list's `apiVersion` and `kind`, as far as they were read.
#[derive(Debug, Clone, Default)]
struct ListType {
    api_version: Option<String>,
    kind: Option<String>,
}

impl ListType {
    /// Records a type field of a list part; other parts change nothing.
    fn note<K>(&mut self, part: &ListPart<K>) {
        match part {
            ListPart::ApiVersion(v) => self.api_version = Some(v.clone()),
            ListPart::Kind(k) => self.kind = Some(k.clone()),
            ListPart::Meta(_) | ListPart::Items(_) => {}
        }
    }
}

/// A [`ListerWatcher`] over a [`kube::Api`], for typed resources (`Api<Pod>`) and dynamic ones
/// (`Api<DynamicObject>`, see [`ApiListerWatcher::dynamic`]).
///
/// The namespace scope is the `Api`'s (`Api::namespaced` or `Api::all`); label and field
/// selectors are added with [`labels`](Self::labels) and [`fields`](Self::fields) and
/// override whatever the reflector's parameters carry.
///
/// Lists go through `Api::list`; watch responses are decoded by this crate's
/// [`WatchLineDecoder`](crate::WatchLineDecoder), line by line as the body arrives, where the
/// reflector's [`WatchDecoding`] says, with a limit on the length of one line
/// ([`max_watch_line_len`](Self::max_watch_line_len)).
///
/// # Metadata only
///
/// Over an `Api<PartialObjectMeta<K>>` ([`MetadataListerWatcher`]: e.g.
/// `ApiListerWatcher::new(Api::<PartialObjectMeta<Pod>>::all(client))`) every list, watch and streaming list asks the server for
/// `PartialObjectMetadata` (`Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`,
/// `as=PartialObjectMetadata` for watches): objects arrive and are cached with their
/// `metadata` only (name, namespace, labels, annotations, owner references, finalizers,
/// resource version, …), which is all an owner mapping or a label-driven controller needs and
/// a fraction of a full object's memory. Everything else (paging, bookmarks, streaming lists
/// with their fallback, relists on 410) works as for full objects.
pub struct ApiListerWatcher<K> {
    api: Api<K>,
    /// The `Api`'s client, for the raw watch request.
    client: Client,
    label_selector: Option<String>,
    field_selector: Option<String>,
    kind_check: Option<KindCheck<K>>,
    max_watch_line_len: usize,
}

impl<K: Clone> Clone for ApiListerWatcher<K> {
    fn clone(&self) -> Self {
        Self {
            api: self.api.clone(),
            client: self.client.clone(),
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            kind_check: self.kind_check.clone(),
            max_watch_line_len: self.max_watch_line_len,
        }
    }
}

impl<K: kube::Resource> Debug for ApiListerWatcher<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiListerWatcher")
            .field("url", &self.api.resource_url())
            .field("label_selector", &self.label_selector)
            .field("field_selector", &self.field_selector)
            .field("max_watch_line_len", &self.max_watch_line_len)
            .finish()
    }
}

impl<K: Clone> ApiListerWatcher<K> {
    /// Lists and watches what `api` addresses (its resource and namespace scope).
    pub fn new(api: Api<K>) -> Self {
        Self {
            client: Client::from(api.clone()),
            api,
            label_selector: None,
            field_selector: None,
            kind_check: None,
            max_watch_line_len: DEFAULT_MAX_WATCH_LINE_LEN,
        }
    }

    /// Rejects watch-event lines longer than `bytes` (default
    /// [`DEFAULT_MAX_WATCH_LINE_LEN`], 64 MiB): such a line is reported as
    /// [`Error::WatchDecode`] and the reflector relists, which fetches the object it carried
    /// through a list instead.
    pub fn max_watch_line_len(mut self, bytes: usize) -> Self {
        self.max_watch_line_len = bytes;
        self
    }

    /// Restricts to objects matching this label selector (e.g. `app=web,tier!=db`).
    pub fn labels(mut self, selector: &str) -> Self {
        self.label_selector = Some(selector.to_string()).filter(|s| !s.is_empty());
        self
    }

    /// Restricts to objects matching this field selector (e.g. `spec.nodeName=node-a`).
    pub fn fields(mut self, selector: &str) -> Self {
        self.field_selector = Some(selector.to_string()).filter(|s| !s.is_empty());
        self
    }

    fn list_params(&self, params: &ListParams) -> ListParams {
        let mut params = params.clone();
        if self.label_selector.is_some() {
            params.label_selector.clone_from(&self.label_selector);
        }
        if self.field_selector.is_some() {
            params.field_selector.clone_from(&self.field_selector);
        }
        params
    }

    fn watch_params(&self, params: &WatchParams) -> WatchParams {
        let mut params = params.clone();
        if self.label_selector.is_some() {
            params.label_selector.clone_from(&self.label_selector);
        }
        if self.field_selector.is_some() {
            params.field_selector.clone_from(&self.field_selector);
        }
        params
    }
}

/// A [`ListerWatcher`] of the metadata of `K`'s objects (controller-runtime's metadata-only
/// watches, kube's `Api::list_metadata`/`watch_metadata`): lists and watches
/// `PartialObjectMetadata` and yields [`PartialObjectMeta<K>`]. Built with
/// [`ApiListerWatcher::new`] from an `Api<PartialObjectMeta<K>>`.
pub type MetadataListerWatcher<K> = ApiListerWatcher<PartialObjectMeta<K>>;

impl ApiListerWatcher<DynamicObject> {
    /// Lists and watches dynamic objects of `resource`; objects of any other `apiVersion` or
    /// `kind` are reported as [`Error::UnexpectedKind`] and skipped by the reflector.
    ///
    /// `api` is typically `Api::all_with(client, &resource)` or
    /// `Api::namespaced_with(client, ns, &resource)`.
    pub fn dynamic(api: Api<DynamicObject>, resource: &ApiResource) -> Self {
        let api_version = resource.api_version.clone();
        let kind = resource.kind.clone();
        let check: KindCheck<DynamicObject> = Arc::new(move |obj, list| {
            let unexpected = |received: String| {
                Err(Error::UnexpectedKind {
                    expected: format!("{api_version}/{kind}"),
                    received,
                })
            };
            match (&obj.types, list) {
                (Some(types), _) if types.api_version != api_version || types.kind != kind => {
                    unexpected(format!("{}/{}", types.api_version, types.kind))
                }
                (Some(_), _) | (None, None) => Ok(()),
                // An item without a type of its own (kube-apiserver lists built-in kinds so)
                // is of its list's kind, `<Kind>List`. A custom resource's list may have
                // another list kind, but its items always carry their own type.
                (None, Some(list)) => {
                    let list_version = list.api_version.as_deref().unwrap_or(&api_version);
                    let list_kind = list.kind.as_deref().unwrap_or_default();
                    let item_kind = list_kind.strip_suffix("List");
                    if list_version == api_version && item_kind.is_none_or(|k| k == kind) {
                        Ok(())
                    } else {
                        unexpected(format!("{list_version}/{list_kind}"))
                    }
                }
            }
        });
        Self {
            kind_check: Some(check),
            ..Self::new(api)
        }
    }
}

/// Whether a listed object passes the kind check; one that does not is logged and left out.
fn keep_of_kind<K>(check: &KindCheck<K>, obj: &K, list: &ListType) -> bool {
    match check(obj, Some(list)) {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(%error, "skipping a listed object of the wrong kind");
            false
        }
    }
}

/// Applies the kind check to the object of an event; bookmarks and errors pass.
fn check_event<K>(check: &KindCheck<K>, event: WatchEvent<K>) -> Result<WatchEvent<K>, Error> {
    match &event {
        WatchEvent::Added(obj) | WatchEvent::Modified(obj) | WatchEvent::Deleted(obj) => {
            check(obj, None)?;
        }
        WatchEvent::Bookmark(_) | WatchEvent::Error(_) => {}
    }
    Ok(event)
}

#[async_trait::async_trait]
impl<K> ListerWatcher<K> for ApiListerWatcher<K>
where
    K: Object,
{
    async fn list(&self, params: &ListParams) -> Result<ObjectList<K>, Error> {
        let mut list = self
            .api
            .list(&self.list_params(params))
            .await
            .map_err(|source| Error::request("list", self.api.resource_url(), source))?;
        if let Some(check) = &self.kind_check {
            let list_type = ListType {
                api_version: Some(list.types.api_version.clone()).filter(|v| !v.is_empty()),
                kind: Some(list.types.kind.clone()).filter(|k| !k.is_empty()),
            };
            list.items
                .retain(|obj| keep_of_kind(check, obj, &list_type));
        }
        Ok(list)
    }

    async fn list_stream(&self, params: &ListParams) -> Result<ListStream<K>, Error> {
        let url = self.api.resource_url();
        let failed = |source| Error::request("list", url, source);
        // The request `Api::list` makes (asking for metadata only when `K` is a
        // `PartialObjectMeta`), with its body decoded as it arrives.
        let request = kube::core::Request::new(self.api.resource_url());
        let params = self.list_params(params);
        let mut request = if K::metadata_api() {
            request.list_metadata(&params)
        } else {
            request.list(&params)
        }
        .map_err(|e| failed(kube::Error::BuildRequest(e)))?;
        request.extensions_mut().insert("list");
        let body = self.client.request_stream(request).await.map_err(failed)?;
        let parts = decode_list_body::<K, _>(body);
        let Some(check) = self.kind_check.clone() else {
            return Ok(parts);
        };
        // The list's type comes before its items; it vouches for items without their own.
        let mut list_type = ListType::default();
        Ok(parts
            .map_ok(move |part| match part {
                ListPart::Items(mut items) => {
                    items.retain(|obj| keep_of_kind(&check, obj, &list_type));
                    ListPart::Items(items)
                }
                other => {
                    list_type.note(&other);
                    other
                }
            })
            .boxed())
    }

    async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>, Error> {
        self.watch_with_decoding(params, resource_version, WatchDecoding::default())
            .await
    }

    async fn watch_with_decoding(
        &self,
        params: &WatchParams,
        resource_version: &str,
        decoding: WatchDecoding,
    ) -> Result<WatchStream<K>, Error> {
        let url = self.api.resource_url();
        let failed = |source| Error::request("watch", url, source);
        // `Api::list` asks for metadata by itself when `K` is a `PartialObjectMeta`; the watch
        // is built here, so it asks the same way.
        let request = kube::core::Request::new(self.api.resource_url());
        let params = self.watch_params(params);
        let mut request = if K::metadata_api() {
            request.watch_metadata(&params, resource_version)
        } else {
            request.watch(&params, resource_version)
        }
        .map_err(|e| failed(kube::Error::BuildRequest(e)))?;
        // One JSON line per event: a compressed body would have to be decoded before the lines
        // (and some servers compress each event separately), so ask for none. The extension
        // names the request for the client's tracing layer, as `Api::watch` does.
        request.headers_mut().insert(
            http::header::ACCEPT_ENCODING,
            http::HeaderValue::from_static("identity"),
        );
        request.extensions_mut().insert("watch");
        // HTTP error statuses come back as `kube::Error::Api` with the server's `Status` (a
        // plain-text body, such as a 429 from priority and fairness, gets a `Status` with its
        // code), exactly as `Api::watch` reports them.
        let body = self.client.request_stream(request).await.map_err(failed)?;
        let events = decode_watch_body::<K, _>(body, self.max_watch_line_len, decoding);
        match self.kind_check.clone() {
            None => Ok(events),
            Some(check) => Ok(events
                .and_then(move |event| futures::future::ready(check_event(&check, event)))
                .boxed()),
        }
    }

    fn describe(&self) -> String {
        let mut description = self.api.resource_url().to_string();
        for (name, selector) in [
            ("labelSelector", &self.label_selector),
            ("fieldSelector", &self.field_selector),
        ] {
            if let Some(selector) = selector {
                description.push_str(&format!(" {name}={selector}"));
            }
        }
        if K::metadata_api() {
            description.push_str(" (metadata only)");
        }
        description
    }
}

#[cfg(test)]
mod tests {
    use kube::api::{ApiResource, DynamicObject, TypeMeta};

    use super::*;

    fn dynamic_check(kind: &str) -> KindCheck<DynamicObject> {
        let config = kube::Config::new("http://127.0.0.1:1".parse().expect("a URL"));
        let client = Client::try_from(config).expect("a client");
        let mut resource = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        resource.kind = kind.into();
        let lw = ApiListerWatcher::dynamic(Api::all_with(client, &resource), &resource);
        lw.kind_check
            .expect("a dynamic lister-watcher checks kinds")
    }

    fn list(kind: &str) -> ListType {
        ListType {
            api_version: Some("v1".into()),
            kind: Some(kind.into()),
        }
    }

    #[tokio::test]
    async fn the_list_vouches_only_for_items_without_a_type() {
        let check = dynamic_check("ConfigMap");
        let bare = DynamicObject::new(
            "a",
            &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
        );
        let untyped = DynamicObject {
            types: None,
            ..bare.clone()
        };
        assert!(check(&untyped, Some(&list("ConfigMapList"))).is_ok());
        assert!(check(&untyped, Some(&list("SecretList"))).is_err());
        assert!(check(&untyped, None).is_ok());
        // An item with its own type is judged by it, whatever its list is called (a custom
        // resource's list kind is the CRD's choice).
        let typed = DynamicObject {
            types: Some(TypeMeta {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
            }),
            ..bare
        };
        assert!(check(&typed, Some(&list("ConfigMapCollection"))).is_ok());
        assert!(dynamic_check("Secret")(&typed, Some(&list("SecretList"))).is_err());
    }
}
