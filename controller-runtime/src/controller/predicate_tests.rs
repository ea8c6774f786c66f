use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::Selector;

use super::*;

fn cm(
    generation: i64,
    rv: &str,
    labels: &[(&str, &str)],
    annotations: &[(&str, &str)],
) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            generation: Some(generation),
            resource_version: Some(rv.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            annotations: Some(
                annotations
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn filter<K: Resource + 'static>(
    events: Vec<EventFilter>,
    own: impl Predicate<K>,
) -> WatchFilter<K> {
    WatchFilter::new(events.into(), Box::new(own))
}

/// The update that sets the deletion timestamp passes every change predicate, even when it
/// changes nothing they compare (a kind without a generation): a finalizer's cleanup waits on
/// it. Later updates of the object being deleted are filtered as usual.
#[test]
fn change_predicates_pass_the_start_of_a_deletion() {
    let live = cm(0, "10", &[("app", "a")], &[("x", "1")]);
    let mut deleting = cm(0, "11", &[("app", "a")], &[("x", "1")]);
    deleting.metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
    let mut finalizer_removed = deleting.clone();
    finalizer_removed.metadata.resource_version = Some("12".into());
    finalizer_removed.metadata.finalizers = Some(Vec::new());

    assert!(GenerationChanged.update(&live, &deleting));
    assert!(LabelsChanged.update(&live, &deleting));
    assert!(AnnotationsChanged.update(&live, &deleting));
    assert!(!GenerationChanged.update(&deleting, &finalizer_removed));
    assert!(!LabelsChanged.update(&deleting, &finalizer_removed));
    assert!(!AnnotationsChanged.update(&deleting, &finalizer_removed));
}

#[test]
fn change_predicates_filter_updates_only() {
    let base = cm(1, "10", &[("app", "a")], &[("x", "1")]);
    let status_only = cm(1, "11", &[("app", "a")], &[("x", "1")]);
    let relabelled = cm(1, "12", &[("app", "b")], &[("x", "1")]);
    let annotated = cm(1, "13", &[("app", "a")], &[("x", "2")]);
    let spec = cm(2, "14", &[("app", "a")], &[("x", "1")]);

    assert!(!GenerationChanged.update(&base, &status_only));
    assert!(GenerationChanged.update(&base, &spec));
    assert!(GenerationChanged.create(&base) && GenerationChanged.delete(&base));
    assert!(!LabelsChanged.update(&base, &annotated));
    assert!(LabelsChanged.update(&base, &relabelled));
    assert!(!AnnotationsChanged.update(&base, &relabelled));
    assert!(AnnotationsChanged.update(&base, &annotated));
    assert!(!ResourceVersionChanged.update(&base, &base));
    assert!(ResourceVersionChanged.update(&base, &status_only));
    // The same predicates see any kind's metadata.
    let (old, new) = (
        AnyObject::new(&base.metadata),
        AnyObject::new(&spec.metadata),
    );
    assert!(GenerationChanged.update(&old, &new));
}

#[test]
fn selector_and_combinators() {
    let selector = LabelSelector([("app", "a")].into_iter().collect::<Selector>());
    let a = cm(1, "1", &[("app", "a")], &[]);
    let b = cm(1, "2", &[("app", "b")], &[]);
    assert!(selector.create(&a) && !selector.create(&b));
    assert!(selector.update(&b, &a) && !selector.update(&a, &b));
    assert!(!selector.delete(&b));

    let spec_or_labels = or(GenerationChanged, LabelsChanged);
    assert!(Predicate::<ConfigMap>::update(&spec_or_labels, &a, &b));
    assert!(!spec_or_labels.update(&a, &cm(1, "3", &[("app", "a")], &[])));
    let both = and(ResourceVersionChanged, not(LabelsChanged));
    assert!(both.update(&a, &cm(1, "3", &[("app", "a")], &[])));
    assert!(!both.update(&a, &b));
    assert!(!Predicate::<ConfigMap>::create(
        &not(ResourceVersionChanged),
        &a
    ));

    // The controller's event filters, then the watch's own predicate: all must pass.
    let events: Vec<EventFilter> = vec![Arc::new(GenerationChanged)];
    let watch = filter(events, selector);
    assert!(watch.create(&a) && !watch.create(&b));
    assert!(!watch.update(&a, &a));
    assert!(filter::<ConfigMap>(Vec::new(), Everything).delete(&b));
}

fn deployment(replicas: i32, paused: bool) -> Deployment {
    Deployment {
        spec: DeploymentSpec {
            replicas: Some(replicas),
            paused: Some(paused),
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

#[test]
fn closures_see_the_whole_object() {
    let replicas = |d: &Deployment| d.spec.replicas;
    let scaled_up = from_fn(move |d: &Deployment| replicas(d).is_some_and(|n| n > 1));
    let (one, three) = (deployment(1, false), deployment(3, false));
    assert!(scaled_up.create(&three) && !scaled_up.create(&one));
    assert!(scaled_up.update(&three, &three) && !scaled_up.update(&three, &one));
    assert!(!scaled_up.delete(&one));

    let rescaled =
        update_fn(move |old: &Deployment, new: &Deployment| replicas(old) != replicas(new));
    assert!(rescaled.update(&one, &three) && !rescaled.update(&one, &deployment(1, true)));
    assert!(rescaled.create(&one) && rescaled.delete(&one));

    // Object and metadata predicates combine; metadata closures work on every kind.
    let named = meta_fn(|meta: &ObjectMeta| meta.name.as_deref() == Some("web"));
    let mut web = deployment(3, false);
    web.metadata.name = Some("web".into());
    let both = and(named, scaled_up);
    assert!(both.create(&web) && !both.create(&three));
    assert!(named.create(&AnyObject::new(&web.metadata)));
}

/// The lean answers (what a compact cache's handlers judge from its lean metadata, with no
/// decode) equal the answers on the objects wherever a predicate gives one; predicates that
/// read more than the lean metadata (annotations, closures) give none for what they read.
#[test]
fn lean_answers_equal_the_answers_on_objects() {
    let a = cm(1, "1", &[("app", "a")], &[("x", "1")]);
    let states = [
        a.clone(),
        cm(2, "2", &[("app", "a")], &[("x", "1")]),
        cm(1, "3", &[("app", "b")], &[("x", "1")]),
        cm(1, "4", &[("app", "a")], &[("x", "2")]),
        a.clone(),
    ];
    let selector = || LabelSelector([("app", "a")].into_iter().collect::<Selector>());
    let predicates: Vec<Box<dyn Predicate<ConfigMap>>> = vec![
        Box::new(GenerationChanged),
        Box::new(LabelsChanged),
        Box::new(ResourceVersionChanged),
        Box::new(selector()),
        Box::new(and(GenerationChanged, not(LabelsChanged))),
        Box::new(or(selector(), ResourceVersionChanged)),
        Box::new(Everything),
    ];
    for predicate in &predicates {
        for old in &states {
            let meta = &old.metadata;
            assert_eq!(predicate.create_lean(meta), Some(predicate.create(old)));
            assert_eq!(predicate.delete_lean(meta), Some(predicate.delete(old)));
            for new in &states {
                assert_eq!(
                    predicate.update_lean(meta, &new.metadata),
                    Some(predicate.update(old, new))
                );
            }
        }
    }
    let (b, c) = (&states[1], &states[3]);
    assert_eq!(
        Predicate::<ConfigMap>::create_lean(&AnnotationsChanged, &a.metadata),
        Some(true)
    );
    assert_eq!(
        Predicate::<ConfigMap>::update_lean(&AnnotationsChanged, &a.metadata, &c.metadata),
        None
    );
    let closure = from_fn(|cm: &ConfigMap| cm.data.is_some());
    assert_eq!(closure.create_lean(&a.metadata), None);
    // One known `false` decides an `and`, one known `true` an `or`; otherwise the objects do.
    let gen_and_annotations = and(GenerationChanged, AnnotationsChanged);
    assert_eq!(
        Predicate::<ConfigMap>::update_lean(&gen_and_annotations, &a.metadata, &c.metadata),
        Some(false)
    );
    assert_eq!(
        Predicate::<ConfigMap>::update_lean(&gen_and_annotations, &a.metadata, &b.metadata),
        None
    );
    let gen_or_annotations = or(GenerationChanged, AnnotationsChanged);
    assert_eq!(
        Predicate::<ConfigMap>::update_lean(&gen_or_annotations, &a.metadata, &b.metadata),
        Some(true)
    );
    // A watch's filter: its event filters and its own predicate, all lean or not at all.
    let events: Vec<EventFilter> = vec![Arc::new(LabelsChanged)];
    let watch = filter::<ConfigMap>(events, GenerationChanged);
    assert_eq!(watch.update_lean(&a.metadata, &b.metadata), Some(false));
    assert_eq!(
        watch.update_lean(&a.metadata, &states[2].metadata),
        Some(false)
    );
    let events: Vec<EventFilter> = vec![Arc::new(meta_fn(|meta| meta.name.is_some()))];
    let watch = filter::<ConfigMap>(events, GenerationChanged);
    assert_eq!(watch.create_lean(&a.metadata), None);
}
