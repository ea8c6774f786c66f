//! Every reconcile runs in a `reconcile` tracing span carrying the controller's name, the
//! object's key and a reconcile id unique to that reconcile (the one `Context::reconcile_id`
//! returns).
//!
//! Not in the shared test binary: tracing caches per call site, process-wide, whether any
//! subscriber wants its spans; a test that installs a subscriber while other tests register the
//! same call sites on other threads can find the `reconcile` span disabled. Here it runs first,
//! alone.

use std::collections::{BTreeMap, HashSet};
use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context as LayerContext, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

/// The fields of one span, by name.
type Fields = BTreeMap<String, String>;

/// Records the fields of every `reconcile` span opened.
#[derive(Clone, Default)]
struct ReconcileSpans(Arc<Mutex<Vec<Fields>>>);

struct FieldVisitor<'a>(&'a mut Fields);

impl Visit for FieldVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: tracing::Subscriber> Layer<S> for ReconcileSpans {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: LayerContext<'_, S>) {
        if attrs.metadata().name() == "reconcile" {
            let mut fields = Fields::new();
            attrs.record(&mut FieldVisitor(&mut fields));
            self.0.lock().push(fields);
        }
    }
}

/// What a reconcile saw of its own span.
#[derive(Debug)]
struct Seen {
    key: String,
    reconcile_id: String,
    current_span: Option<&'static str>,
}

pub(crate) async fn each_reconcile_runs_in_a_span_with_controller_key_and_id() {
    if testkit::cluster::sim_only("private instance") {
        return;
    }
    let spans = ReconcileSpans::default();
    // The test runtime has one thread, so every task of the manager uses this subscriber;
    // it is installed before anything registers the `reconcile` call site.
    let _subscriber = tracing::subscriber::set_default(Registry::default().with(spans.clone()));
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .named("mirror")
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let seen = s.clone();
                async move {
                    seen.lock().push(Seen {
                        key: req.to_string(),
                        reconcile_id: ctx.reconcile_id().to_owned(),
                        current_span: tracing::Span::current().metadata().map(|m| m.name()),
                    });
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    // One reconcile at a time, so none are folded: a, b, then a again (a new id).
    server.create(&cm("a", "1")).unwrap();
    eventually("a's reconcile", Duration::from_secs(30), || {
        seen.lock().len() == 1
    })
    .await;
    server.create(&cm("b", "1")).unwrap();
    eventually("b's reconcile", Duration::from_secs(30), || {
        seen.lock().len() == 2
    })
    .await;
    put(&server, "a", "2");
    eventually("a's second reconcile", Duration::from_secs(30), || {
        seen.lock().len() == 3
    })
    .await;
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;

    let seen = seen.lock();
    let spans = spans.0.lock();
    assert_eq!(spans.len(), seen.len(), "one span per reconcile: {spans:?}");
    for reconcile in seen.iter() {
        assert_eq!(reconcile.current_span, Some("reconcile"), "{reconcile:?}");
        let span = spans
            .iter()
            .find(|span| span.get("reconcile_id") == Some(&reconcile.reconcile_id))
            .unwrap_or_else(|| panic!("no span for {reconcile:?} in {spans:?}"));
        assert_eq!(span.get("controller").map(String::as_str), Some("mirror"));
        assert_eq!(span.get("key"), Some(&reconcile.key));
    }
    let ids: HashSet<&str> = seen.iter().map(|r| r.reconcile_id.as_str()).collect();
    assert_eq!(ids.len(), seen.len(), "reconcile ids are unique");
}
