//! How per-kind cache settings resolve against the manager's defaults and combine across
//! several [`ByObject`]s, for typed, metadata-only and dynamic caches (the rules are in the
//! module docs of `options.rs`).

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod, Secret};
use kube::api::{ApiResource, GroupVersionKind};
use kube::core::PartialObjectMeta;

use super::*;
use crate::cache::{CacheKind, Metadata};

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

fn only(names: &[&str]) -> Namespaces {
    Namespaces::Only(set(names))
}

/// A manager caching namespaces `a` and `b`, objects labelled `team=x` in phase `Running`.
fn with_defaults() -> CacheOptions {
    CacheOptions {
        default_namespaces: only(&["a", "b"]),
        default_selectors: Selectors::new()
            .labels("team=x")
            .fields("status.phase=Running"),
        ..CacheOptions::default()
    }
}

/// The custom resource `Gizmo` of `dyn.example.com/v1`, known only at run time.
fn gizmo(namespaced: bool) -> DynamicKind {
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("dyn.example.com", "v1", "Gizmo"));
    if namespaced {
        DynamicKind::namespaced(resource)
    } else {
        DynamicKind::cluster(resource)
    }
}

/// Another custom resource of the same group: its settings are its own.
fn widget() -> DynamicKind {
    DynamicKind::namespaced(ApiResource::from_gvk(&GroupVersionKind::gvk(
        "dyn.example.com",
        "v1",
        "Widget",
    )))
}

/// The resolved settings of `spec`'s cache, which must be valid.
fn resolve<T: Object>(options: &CacheOptions, spec: &CacheSpec<T>) -> Resolved<T> {
    match options.resolve(spec) {
        Ok(resolved) => resolved,
        Err(error) => panic!("{} should resolve: {error}", spec.kind),
    }
}

fn resolved<C: CacheKind>(options: &CacheOptions) -> Resolved<C::Object> {
    resolve(options, &C::spec())
}

/// The reason `spec`'s settings are invalid.
fn invalid<T: Object>(options: &CacheOptions, spec: &CacheSpec<T>) -> String {
    match options.resolve(spec) {
        Err(Error::InvalidSettings { kind, reason }) => {
            assert!(
                spec.kind.starts_with(&kind) || kind.starts_with(&spec.kind),
                "{kind} vs {}",
                spec.kind
            );
            reason
        }
        Err(other) => panic!("{}: expected invalid settings, got {other}", spec.kind),
        Ok(_) => panic!("{}: expected invalid settings", spec.kind),
    }
}

/// A transform that labels each object `by=<by>`.
fn marking<T: Object>(
    by: &'static str,
) -> impl Fn(Arc<T>) -> Result<Arc<T>, Box<dyn std::error::Error + Send + Sync>> + Send + Sync + 'static
{
    move |object| {
        let mut object = Arc::unwrap_or_clone(object);
        object
            .meta_mut()
            .labels
            .get_or_insert_default()
            .insert("by".to_owned(), by.to_owned());
        Ok(Arc::new(object))
    }
}

/// The `by` label the resolved transform puts on `object`; `None` without a transform.
fn mark<T: Object>(resolved: &Resolved<T>, object: T) -> Option<String> {
    let transform = resolved.transform.as_ref()?;
    let out = transform(Arc::new(object)).ok()?;
    out.meta().labels.as_ref()?.get("by").cloned()
}

/// What a resolution decides besides the transform.
fn scope<T>(resolved: &Resolved<T>) -> (Namespaces, Selectors) {
    (resolved.namespaces.clone(), resolved.selectors.clone())
}

#[test]
fn without_settings_a_kind_takes_the_managers_defaults() {
    let options = with_defaults();
    let defaults = (only(&["a", "b"]), options.default_selectors.clone());
    assert_eq!(scope(&resolved::<ConfigMap>(&options)), defaults);
    assert_eq!(scope(&resolved::<Metadata<ConfigMap>>(&options)), defaults);
    assert_eq!(scope(&resolve(&options, &gizmo(true).spec())), defaults);
    // Cluster-scoped: the default selectors, but no namespaces.
    let cluster = (Namespaces::All, options.default_selectors.clone());
    assert_eq!(scope(&resolved::<Node>(&options)), cluster);
    assert_eq!(scope(&resolve(&options, &gizmo(false).spec())), cluster);
    assert!(resolved::<ConfigMap>(&options).transform.is_none());

    let bare = CacheOptions::default();
    let everything = (Namespaces::All, Selectors::default());
    assert_eq!(scope(&resolved::<Pod>(&bare)), everything);
    assert!(bare.problems().is_empty());
}

#[test]
fn a_kinds_namespaces_replace_the_defaults_for_all_its_caches() {
    let mut options = with_defaults();
    options.insert(ByObject::of::<Pod>().namespaces(["c"]));
    // An empty set asks for all namespaces, overriding the defaults.
    options.insert(ByObject::of::<Secret>().namespaces(Vec::<String>::new()));
    options.insert(ByObject::dynamic(&gizmo(true)).namespaces(["d"]));

    assert_eq!(resolved::<Pod>(&options).namespaces, only(&["c"]));
    assert_eq!(resolved::<Metadata<Pod>>(&options).namespaces, only(&["c"]));
    assert_eq!(resolved::<Secret>(&options).namespaces, Namespaces::All);
    assert_eq!(
        resolved::<Metadata<Secret>>(&options).namespaces,
        Namespaces::All
    );
    assert_eq!(
        resolve(&options, &gizmo(true).spec()).namespaces,
        only(&["d"])
    );
    // Other kinds keep the defaults; a dynamic kind's settings are its own.
    assert_eq!(
        resolved::<ConfigMap>(&options).namespaces,
        only(&["a", "b"])
    );
    assert_eq!(
        resolve(&options, &widget().spec()).namespaces,
        only(&["a", "b"])
    );
    // Namespaces never change the selectors.
    assert_eq!(
        resolved::<Pod>(&options).selectors,
        options.default_selectors
    );
}

#[test]
fn label_and_field_selectors_replace_the_defaults_each_on_its_own() {
    let mut options = with_defaults();
    options.insert(ByObject::of::<Pod>().labels("app=web"));
    options.insert(ByObject::of::<ConfigMap>().fields("metadata.name=settings"));
    // An empty selector given explicitly: every object, whatever the default.
    options.insert(ByObject::of::<Secret>().labels(""));
    options.insert(ByObject::of::<Node>().labels("node-role.kubernetes.io/worker"));
    options.insert(ByObject::dynamic(&gizmo(true)).fields("spec.size=3"));

    let pods = Selectors::new()
        .labels("app=web")
        .fields("status.phase=Running");
    assert_eq!(resolved::<Pod>(&options).selectors, pods);
    assert_eq!(resolved::<Metadata<Pod>>(&options).selectors, pods);
    assert_eq!(
        resolved::<ConfigMap>(&options).selectors,
        Selectors::new()
            .labels("team=x")
            .fields("metadata.name=settings")
    );
    assert_eq!(
        resolved::<Secret>(&options).selectors,
        Selectors::new().labels("").fields("status.phase=Running")
    );
    assert_eq!(
        resolved::<Node>(&options).selectors,
        Selectors::new()
            .labels("node-role.kubernetes.io/worker")
            .fields("status.phase=Running")
    );
    assert_eq!(
        resolve(&options, &gizmo(true).spec()).selectors,
        Selectors::new().labels("team=x").fields("spec.size=3")
    );
    assert_eq!(
        resolve(&options, &widget().spec()).selectors,
        options.default_selectors
    );
}

/// Resolves `spec` after `first` then `second`, and after `second` then `first`.
fn both_orders<T: Object>(
    first: impl Fn() -> ByObject<T>,
    second: impl Fn() -> ByObject<T>,
    spec: &CacheSpec<T>,
) -> [(Namespaces, Selectors); 2] {
    let mut forward = with_defaults();
    forward.insert(first());
    forward.insert(second());
    let mut backward = with_defaults();
    backward.insert(second());
    backward.insert(first());
    [
        scope(&resolve(&forward, spec)),
        scope(&resolve(&backward, spec)),
    ]
}

/// One half of a kind's settings: a namespace, a set-based label selector, a field selector.
fn first<T: Object>(settings: ByObject<T>) -> ByObject<T> {
    settings
        .namespaces(["c"])
        .labels("tier in (db,cache)")
        .fields("spec.nodeName=n1")
}

/// The other half: another namespace and another label selector.
fn second<T: Object>(settings: ByObject<T>) -> ByObject<T> {
    settings.namespaces(["a"]).labels("app=web")
}

#[test]
fn settings_given_in_two_by_objects_combine_the_same_in_either_order() {
    let combined = (
        only(&["a", "c"]),
        Selectors::new()
            .labels("app=web,tier in (db,cache)")
            .fields("spec.nodeName=n1"),
    );
    let typed = both_orders(
        || first(ByObject::of::<Pod>()),
        || second(ByObject::of::<Pod>()),
        &Pod::spec(),
    );
    assert_eq!(typed, [combined.clone(), combined.clone()]);
    let metadata = both_orders(
        || first(ByObject::of::<Metadata<Pod>>()),
        || second(ByObject::of::<Metadata<Pod>>()),
        &<Metadata<Pod>>::spec(),
    );
    assert_eq!(metadata, [combined.clone(), combined.clone()]);
    let dynamic = both_orders(
        || first(ByObject::dynamic(&gizmo(true))),
        || second(ByObject::dynamic(&gizmo(true))),
        &gizmo(true).spec(),
    );
    assert_eq!(dynamic, [combined.clone(), combined.clone()]);

    // Settings of one kind given through its two representations apply to both caches.
    for (full_first, label) in [(true, "full first"), (false, "metadata first")] {
        let mut options = with_defaults();
        let full = first(ByObject::of::<Pod>());
        let meta = second(ByObject::of::<Metadata<Pod>>());
        if full_first {
            options.insert(full);
            options.insert(meta);
        } else {
            options.insert(meta);
            options.insert(full);
        }
        assert_eq!(scope(&resolved::<Pod>(&options)), combined, "{label}");
        assert_eq!(
            scope(&resolved::<Metadata<Pod>>(&options)),
            combined,
            "{label}"
        );
    }
}

#[test]
fn repeated_calls_and_repeated_selectors_combine_like_separate_by_objects() {
    let mut chained = with_defaults();
    chained.insert(
        ByObject::of::<Pod>()
            .namespaces(["c"])
            .namespaces(["a"])
            .labels("tier=db")
            .labels("app=web"),
    );
    let mut reversed = with_defaults();
    reversed.insert(
        ByObject::of::<Pod>()
            .labels("app=web")
            .labels("tier=db")
            .namespaces(["a", "c"]),
    );
    let expected = (
        only(&["a", "c"]),
        Selectors::new()
            .labels("app=web,tier=db")
            .fields("status.phase=Running"),
    );
    assert_eq!(scope(&resolved::<Pod>(&chained)), expected);
    assert_eq!(scope(&resolved::<Pod>(&reversed)), expected);

    // The same selector twice is required once.
    let mut twice = with_defaults();
    twice.insert(ByObject::of::<Pod>().labels("app=web"));
    twice.insert(ByObject::of::<Metadata<Pod>>().labels("app=web"));
    assert_eq!(
        resolved::<Pod>(&twice).selectors,
        Selectors::new()
            .labels("app=web")
            .fields("status.phase=Running")
    );
}

#[test]
fn all_namespaces_asked_for_anywhere_covers_any_other_set() {
    for all_first in [true, false] {
        let mut options = with_defaults();
        let all = ByObject::of::<Pod>().namespaces(Vec::<String>::new());
        let some = ByObject::of::<Metadata<Pod>>().namespaces(["c"]);
        if all_first {
            options.insert(all);
            options.insert(some);
        } else {
            options.insert(some);
            options.insert(all);
        }
        assert_eq!(resolved::<Pod>(&options).namespaces, Namespaces::All);
        assert_eq!(
            resolved::<Metadata<Pod>>(&options).namespaces,
            Namespaces::All
        );
    }
}

#[test]
fn each_representation_takes_its_own_transform() {
    let mut options = with_defaults();
    options.insert(ByObject::of::<Pod>().transform(marking("full")));
    options.insert(ByObject::of::<Metadata<Pod>>().transform(marking("metadata")));
    options.insert(ByObject::dynamic(&gizmo(true)).transform(marking("dynamic")));

    assert_eq!(
        mark(&resolved::<Pod>(&options), Pod::default()).as_deref(),
        Some("full")
    );
    assert_eq!(
        mark(
            &resolved::<Metadata<Pod>>(&options),
            PartialObjectMeta::<Pod>::default()
        )
        .as_deref(),
        Some("metadata")
    );
    let gizmos = resolve(&options, &gizmo(true).spec());
    let object = DynamicObject::new("g", gizmo(true).resource());
    assert_eq!(mark(&gizmos, object).as_deref(), Some("dynamic"));
    // Kinds without one have none, including another dynamic kind.
    assert!(resolved::<ConfigMap>(&options).transform.is_none());
    assert!(resolved::<Metadata<Secret>>(&options).transform.is_none());
    assert!(resolve(&options, &widget().spec()).transform.is_none());
    // A transform leaves the kind's scope alone.
    assert_eq!(resolved::<Pod>(&options).namespaces, only(&["a", "b"]));
    assert!(options.problems().is_empty());
}

#[test]
fn a_second_transform_for_one_representation_is_invalid_in_either_order() {
    for full_first in [true, false] {
        let mut options = with_defaults();
        let (one, two) = if full_first {
            (marking("one"), marking("two"))
        } else {
            (marking("two"), marking("one"))
        };
        options.insert(ByObject::of::<Pod>().transform(one));
        options.insert(ByObject::of::<Pod>().labels("app=web").transform(two));
        let reason = invalid(&options, &Pod::spec());
        assert!(reason.contains("two transforms"), "{reason}");
        assert!(reason.contains("compose them into one"), "{reason}");
        // The kind's settings are wrong, whichever of its caches is made.
        invalid(&options, &<Metadata<Pod>>::spec());
        // Other kinds are not affected.
        resolved::<ConfigMap>(&options);
        let problems = options.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            matches!(&problems[0], Error::InvalidSettings { kind, .. } if kind.starts_with("Pod")),
            "{problems:?}"
        );
    }

    let mut metadata = with_defaults();
    metadata.insert(ByObject::of::<Metadata<Secret>>().transform(marking("one")));
    metadata.insert(ByObject::of::<Metadata<Secret>>().transform(marking("two")));
    assert!(invalid(&metadata, &<Metadata<Secret>>::spec()).contains("two transforms"));
    assert_eq!(metadata.problems().len(), 1);

    let mut dynamic = with_defaults();
    dynamic.insert(ByObject::dynamic(&gizmo(true)).transform(marking("one")));
    dynamic.insert(ByObject::dynamic(&gizmo(true)).transform(marking("two")));
    assert!(invalid(&dynamic, &gizmo(true).spec()).contains("two transforms"));
    resolve(&dynamic, &widget().spec());
}

#[test]
fn namespaces_for_a_cluster_scoped_kind_are_invalid() {
    let mut options = with_defaults();
    options.insert(ByObject::of::<Node>().labels("node-role.kubernetes.io/worker"));
    options.insert(ByObject::of::<Metadata<Node>>().namespaces(["a"]));
    let reason = invalid(&options, &Node::spec());
    assert!(reason.contains("cluster-scoped"), "{reason}");
    assert!(reason.contains("namespaces(...)"), "{reason}");
    invalid(&options, &<Metadata<Node>>::spec());
    // Other cluster-scoped kinds are fine.
    assert_eq!(resolved::<Namespace>(&options).namespaces, Namespaces::All);

    let mut dynamic = with_defaults();
    dynamic.insert(ByObject::dynamic(&gizmo(false)).namespaces(["a"]));
    assert!(invalid(&dynamic, &gizmo(false).spec()).contains("cluster-scoped"));
    let problems = dynamic.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].to_string().contains("Gizmo"), "{}", problems[0]);
}

/// The manager's default storage applies to typed caches; a kind's own storage overrides it;
/// metadata-only and dynamic caches, and a kind with a transform, stay typed.
#[test]
fn storage_resolves_per_kind_and_yields_to_transforms() {
    let mut options = CacheOptions {
        default_storage: Storage::compact(),
        ..CacheOptions::default()
    };
    options.insert(ByObject::of::<Secret>().storage(Storage::typed()));
    options.insert(ByObject::of::<ConfigMap>().transform(Ok));
    assert!(resolved::<Pod>(&options).storage.is_compact());
    assert!(!resolved::<Secret>(&options).storage.is_compact());
    assert!(!resolved::<ConfigMap>(&options).storage.is_compact());
    assert!(!resolved::<Metadata<Pod>>(&options).storage.is_compact());
    assert!(!resolve(&options, &gizmo(true).spec()).storage.is_compact());

    let typed_default = CacheOptions::default();
    assert!(!resolved::<Pod>(&typed_default).storage.is_compact());
}

/// Compact storage and a transform for one kind contradict each other, whichever came first;
/// so do two storages.
#[test]
fn compact_storage_with_a_transform_or_twice_is_invalid() {
    for transform_first in [true, false] {
        let mut options = CacheOptions::default();
        let transform = ByObject::of::<Pod>().transform(Ok);
        let compact = ByObject::of::<Pod>().storage(Storage::compact());
        if transform_first {
            options.insert(transform);
            options.insert(compact);
        } else {
            options.insert(compact);
            options.insert(transform);
        }
        let Err(error) = options.resolve(&Pod::spec()) else {
            panic!("compact storage with a transform resolved");
        };
        assert!(error.to_string().contains("transform"), "{error}");
    }
    let mut options = CacheOptions::default();
    options.insert(ByObject::of::<Pod>().storage(Storage::compact()));
    options.insert(ByObject::of::<Pod>().storage(Storage::compact()));
    let Err(error) = options.resolve(&Pod::spec()) else {
        panic!("two storages resolved");
    };
    assert!(error.to_string().contains("two storages"), "{error}");
}
