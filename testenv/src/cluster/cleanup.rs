//! Cleanup of what a test environment made on an existing cluster: the objects of its scratch
//! namespace, the namespace, and the cluster-scoped objects it recorded. A bare API server
//! (no controller-manager) neither empties nor finalizes a deleted namespace, so this does
//! what the namespace controller would (in its order: the namespace `Terminating` first, so
//! that nothing new is created in it while it is emptied), and waits until it is gone.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::ApiResource;
use kube::discovery::{Discovery, Scope, verbs};
use kube::{Api, Client};

use super::Made;

/// Deletes `made`'s cluster-scoped objects, then removes `namespace` and `made`'s namespaces
/// with everything in them.
pub(crate) async fn run(client: &Client, namespace: &str, made: &Made) -> Result<(), String> {
    let mut failures = Vec::new();
    for object in &made.objects {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &object.resource);
        if let Err(error) = api.delete(&object.name, &DeleteParams::default()).await
            && !is_not_found(&error)
        {
            failures.push(format!(
                "deleting {} {}: {error}",
                object.resource.kind, object.name
            ));
        }
    }
    for namespace in std::iter::once(namespace).chain(made.namespaces.iter().map(String::as_str)) {
        failures.extend(remove_namespace(client, namespace).await);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("; "))
    }
}

/// [`run`] from synchronous code (a `Drop`): on a thread of its own with a runtime of its own,
/// so it neither needs nor blocks the caller's runtime.
pub(crate) fn blocking(config: &kube::Config, namespace: &str, made: Made) -> Result<(), String> {
    let config = config.clone();
    let namespace = namespace.to_owned();
    std::thread::scope(|scope| {
        scope
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("a runtime for the cleanup: {e}"))?;
                runtime.block_on(async {
                    let client = Client::try_from(config).map_err(|e| e.to_string())?;
                    run(&client, &namespace, &made).await
                })
            })
            .join()
            .unwrap_or_else(|_| Err("the cleanup thread panicked".to_owned()))
    })
}

/// Deletes every object of `namespace`, of every namespaced kind the server serves, removing
/// finalizers that would keep them; the number of objects deleted.
pub async fn empty_namespace(client: &Client, namespace: &str) -> Result<usize, String> {
    let discovery = Discovery::new(client.clone())
        .run()
        .await
        .map_err(|e| format!("discovery: {e}"))?;
    let mut deleted = 0;
    for group in discovery.groups() {
        for (resource, capabilities) in group.recommended_resources() {
            let deletable = capabilities.scope == Scope::Namespaced
                && capabilities.supports_operation(verbs::LIST)
                && capabilities.supports_operation(verbs::DELETE);
            if deletable {
                deleted += empty_kind(client, namespace, &resource).await?;
            }
        }
    }
    Ok(deleted)
}

/// Deletes the objects of one kind in `namespace`.
async fn empty_kind(
    client: &Client,
    namespace: &str,
    resource: &ApiResource,
) -> Result<usize, String> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, resource);
    let failed = |what: &str, error: kube::Error| {
        format!("{what} {} in {namespace}: {error}", resource.plural)
    };
    let objects = api
        .list(&ListParams::default())
        .await
        .map_err(|e| failed("listing", e))?;
    let unfinalize = serde_json::json!({"metadata": {"finalizers": null}});
    for object in &objects.items {
        let name = object.metadata.name.as_deref().unwrap_or_default();
        let has_finalizers = object
            .metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| !f.is_empty());
        if has_finalizers
            && let Err(error) = api
                .patch(name, &PatchParams::default(), &Patch::Merge(&unfinalize))
                .await
            && !is_not_found(&error)
        {
            return Err(failed("removing finalizers of", error));
        }
        // At once: a bare API server runs no kubelet to end a Pod's grace period.
        if let Err(error) = api
            .delete(name, &DeleteParams::background().grace_period(0))
            .await
            && !is_not_found(&error)
        {
            return Err(failed("deleting", error));
        }
    }
    Ok(objects.items.len())
}

/// How long a cleanup waits, after deleting a namespace, until the namespace is gone.
pub const NAMESPACE_GONE_LIMIT: Duration = Duration::from_secs(60);

/// Removes `namespace` as the namespace controller would, and waits until it is gone: deletes
/// it first (so that it is `Terminating` and the server refuses new objects in it), then
/// empties it, then finalizes it (a bare API server has no namespace controller that would),
/// polling up to [`NAMESPACE_GONE_LIMIT`] until it is gone, so that a namespace of the same
/// name can be created again at once. What failed, if anything.
async fn remove_namespace(client: &Client, namespace: &str) -> Vec<String> {
    let api: Api<Namespace> = Api::all(client.clone());
    let failed = |what: &str, error: kube::Error| format!("{what} namespace {namespace}: {error}");
    let mut failures = Vec::new();
    let deleted = match api.delete(namespace, &DeleteParams::default()).await {
        Ok(_) => true,
        Err(error) if is_not_found(&error) => false,
        Err(error) => {
            failures.push(failed("deleting", error));
            false
        }
    };
    // Emptied even when the namespace is gone already: objects a crashed run left behind.
    if let Err(error) = empty_namespace(client, namespace).await {
        failures.push(error);
    }
    if !deleted {
        return failures;
    }
    // Real time: a test's paused clock would run the limit out while the server works.
    let deadline = Instant::now() + NAMESPACE_GONE_LIMIT;
    loop {
        match api.get_opt(namespace).await {
            Ok(None) => return failures,
            Ok(Some(mut terminating)) => {
                let spec = terminating.spec.get_or_insert_with(Default::default);
                if spec.finalizers.as_ref().is_some_and(|f| !f.is_empty()) {
                    spec.finalizers = None;
                    match api
                        .replace_subresource(
                            "finalize",
                            namespace,
                            &PostParams::default(),
                            &terminating,
                        )
                        .await
                    {
                        Ok(_) => {}
                        Err(error) if is_not_found(&error) => return failures,
                        Err(error) => {
                            failures.push(failed("finalizing", error));
                            return failures;
                        }
                    }
                }
            }
            // The server may be briefly unreachable; the deadline bounds the retries.
            Err(error) if Instant::now() >= deadline => {
                failures.push(failed("reading", error));
                return failures;
            }
            Err(_) => {}
        }
        if Instant::now() >= deadline {
            failures.push(format!(
                "namespace {namespace} still exists {NAMESPACE_GONE_LIMIT:?} after its deletion"
            ));
            return failures;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `error` is a 404: the object is already gone.
fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}
