//! An in-process Kubernetes API server simulator that speaks the real wire protocol over
//! HTTP on loopback, so the real [`kube::Client`], `kubectl` and other clients work against
//! it unchanged.
//!
//! Use it as the test bed of controller and informer tests, as a local environment for
//! operator authors, or standalone (`cargo run -p kube-rt-apiserver-sim --features cli --
//! --port 6443 --kubeconfig ./kubeconfig`). It serves every built-in kind a Kubernetes server of the
//! version k8s-openapi's `latest` feature targets serves by default (the GA versions of
//! every group: core, apps, batch, autoscaling v2 and v1, networking, policy, rbac,
//! storage, scheduling, coordination, discovery, events, node, certificates,
//! admissionregistration, flowcontrol, resource, apiregistration and apiextensions; not the
//! GA kinds it leaves off by default), with their status subresources, the scale subresource of deployments,
//! replicasets, statefulsets and replicationcontrollers, and discovery's short names,
//! categories and verbs; core/v1 and events.k8s.io/v1 events are one resource. The
//! admissionregistration.k8s.io/v1 validating and mutating webhook configurations it
//! serves are obeyed: it calls their webhooks. Custom resources become servable once their
//! CRD is established. Bodies and responses are JSON or, for built-in kinds, Kubernetes
//! protobuf. Objects are stored as JSON under one global resourceVersion counter with a
//! bounded per-resource event history for watches.
//!
//! # Example
//!
//! ```
//! use apiserver_sim::ApiServer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = ApiServer::start().await?;
//! let cms: Api<ConfigMap> = Api::default_namespaced(server.client()?);
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! cms.create(&PostParams::default(), &cm).await?;
//! // The server's own view, for convergence checks:
//! assert_eq!(server.list::<ConfigMap>().len(), 1);
//! // Faults: end every watch, forget history, fail the next list with 500.
//! server.drop_watches();
//! server.compact();
//! server.fail_next(apiserver_sim::FailRule::new("list", "configmaps", 500, 1));
//! server.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Features
//!
//! - `cli`: the standalone `apiserver-sim` binary (argument parsing and a log subscriber);
//!   the library needs neither, so they are compiled only with this feature. It turns on
//!   `explain` too.
//! - `explain`: the OpenAPI v3 schemas of the built-in kinds, from k8s-openapi's `schemars`
//!   implementations, so that `kubectl explain deployment.spec` works; it costs k8s-openapi
//!   (and every crate above it) a longer compile, so tests that do not run `kubectl explain`
//!   leave it off. Custom resources' schemas are published either way.
//! - `fuzzing`: a hidden module of the properties the fuzz targets check; for the fuzz crate
//!   and the crate's own property tests, never for a user's build.
//!
//! # Main types
//!
//! - [`ApiServer`] / [`ApiServerBuilder`]: start, [`ApiServer::client`],
//!   [`ApiServer::kubeconfig`], seed helpers ([`ApiServer::create`],
//!   [`ApiServer::create_json`], and for thousands of objects or event storms
//!   [`ApiServer::create_many`] and [`ApiServer::replace_many`]), inspection ([`ApiServer::objects`],
//!   [`ApiServer::resource_version`], [`ApiServer::open_watches`]), faults
//!   ([`ApiServer::drop_watches`], [`ApiServer::compact`], [`ApiServer::fail_next`],
//!   [`ApiServer::send_bookmarks`], [`ApiServer::set_ready`],
//!   [`ApiServer::set_watch_list_mode`]), request counts ([`ApiServer::request_count`],
//!   [`ApiServer::reset_request_counts`]) and [`ApiServer::settle`] (wait for the GC,
//!   namespace and CRD controllers).
//! - [`ApiServerBuilder::workload_simulator`]: optional (off by default) workload
//!   simulator: simulated controllers (deployment, replicaset, job, endpoints) and one
//!   simulated node whose kubelet runs every pod (ready a delay after it is scheduled), so
//!   `kubectl rollout status|restart|undo`, `kubectl wait --for=condition=Ready`, Jobs that
//!   complete and `kubectl logs` work as on a cluster.
//! - [`ApiServerBuilder::chaos`] with a [`ChaosConfig`] (seed + [`ChaosProfile`]): chaos
//!   mode, a seeded schedule of faults over time ([`ChaosSchedule`]) plus per-request
//!   faults, counted per [`FaultKind`] in [`ApiServer::chaos_stats`].
//! - [`FailRule`]: "fail the next N requests matching verb and resource"
//!   ([`FailRule::new`]), or each one with a probability from a seeded sequence
//!   ([`FailRule::random`]).
//! - [`WatchListMode`]: streaming lists (`sendInitialEvents`) supported, rejected, or
//!   ignored like an old server.
//! - [`ApiServerBuilder::rbac`]: optional (off by default) authentication and RBAC
//!   authorization; [`ApiServer::service_account_token`], [`ApiServer::service_account_client`],
//!   [`ApiServer::client_with_token`], [`ApiServer::admin_token`], and the refusals as
//!   [`Denial`]s ([`ApiServer::denials`], [`ApiServer::clear_denials`]).
//!
//! # Admission and conversion webhooks
//!
//! Stored `ValidatingWebhookConfiguration`s and `MutatingWebhookConfiguration`s are obeyed
//! like a real server obeys them: on create, update (PUT and PATCH, status included) and
//! delete (each object of a deletecollection too) the matching webhooks (rules, `matchPolicy`,
//! `namespaceSelector`, `objectSelector`) receive an `AdmissionReview` v1 over HTTPS, the
//! certificate checked against `caBundle` by Go's rules (a self-signed serving certificate
//! that is its own `caBundle` is trusted even when marked `CA:TRUE`, as a real server trusts
//! it; wrong names, untrusted or expired certificates and SHA-1 signatures are refused with
//! Go's messages): mutating webhooks first (configurations by name,
//! `reinvocationPolicy: IfNeeded` honoured), their JSON patches applied, then the write's own
//! validation, then validating webhooks on the final object; `failurePolicy` and
//! `timeoutSeconds` decide about webhooks that are down or slow; denials keep the webhook's
//! code and reason; warnings become `Warning` headers. A CRD with `conversion.strategy:
//! Webhook` has its conversion webhook called (`ConversionReview` v1) whenever an object is
//! written, read, listed or watched in another version than the stored one. There is no
//! cluster network: `clientConfig.service` is resolved through
//! [`ApiServerBuilder::service_endpoint`] (binary: `--service-endpoint
//! ns/name[:port]=https://127.0.0.1:PORT`), and `clientConfig.url` is called as written.
//!
//! # Authentication and RBAC
//!
//! Off by default: every request passes. [`ApiServerBuilder::rbac`] (binary: `--rbac`)
//! turns on bearer-token authentication (401 `Unauthorized` without a valid token) and
//! Kubernetes RBAC authorization from the stored Roles, ClusterRoles (with `aggregationRule`),
//! RoleBindings and ClusterRoleBindings: verbs, resources and subresources, `resourceNames`
//! (a list or watch pinned by a `metadata.name` field selector counts as named), wildcards,
//! non-resource URLs. A refusal is upstream's 403 `Forbidden` `Status` and message
//! (`deployments.apps "d" is forbidden: User "system:serviceaccount:default:sa" cannot get
//! resource "deployments/scale" in API group "apps" in the namespace "default"`), recorded
//! in [`ApiServer::denials`] ([`Denial`]). [`ApiServer::client`] and the kubeconfig carry the
//! admin token (`system:admin` in `system:masters`); [`ApiServer::service_account_token`],
//! [`ApiServer::service_account_client`] and the TokenRequest API
//! (`serviceaccounts/<name>/token`, `kubectl create token`) give ServiceAccount tokens;
//! `SelfSubjectAccessReview` answers `kubectl auth can-i`'s question and
//! `SelfSubjectRulesReview` lists a user's rules (`kubectl auth can-i --list`). Discovery,
//! OpenAPI, `/version` and health are granted to every authenticated user by the stored bootstrap
//! roles. The server speaks plain HTTP, and kubectl (client-go) sends a kubeconfig's
//! credentials only to TLS servers: in RBAC mode use `kube` clients, not kubectl.
//!
//! # Faults and test hooks
//!
//! | Library | Effect |
//! |---|---|
//! | [`ApiServer::drop_watches`] | end every open watch (clients re-watch from their last RV) |
//! | [`ApiServer::compact`] | forget history up to the current RV (older RVs get 410 Expired) |
//! | [`ApiServer::fail_next`]`(`[`FailRule::new`]`(verb, resource, code, n))` | fail the next `n` matching requests; `.retry_after(s)`, `.in_band()` (watch: HTTP 200 + one ERROR event) |
//! | [`ApiServer::fail_next`]`(`[`FailRule::random`]`(verb, resource, code, p, seed))` | fail each matching request with probability `p` (deterministic per seed) until [`ApiServer::clear_faults`]; composes with `.retry_after`/`.in_band` |
//! | verb or resource `"*"` in a rule | match every verb / every resource |
//! | [`ApiServer::restart`]`(downtime)` | cut every connection (state kept); new connections closed for `downtime` |
//! | [`ApiServerBuilder::chaos`]`(`[`ChaosConfig`]`)` | chaos mode (below); [`ApiServer::chaos_stats`], [`ApiServer::stop_chaos`] |
//! | [`ApiServer::send_bookmarks`] | every bookmark-enabled watch sends a BOOKMARK now |
//! | [`ApiServer::set_ready`]`(false)` | `/readyz` 500 and API requests 429 |
//! | [`ApiServer::set_watch_list_mode`]`(`[`WatchListMode::Rejected`]`)` (= `set_watch_list(false)`) | `sendInitialEvents` refused with 422 |
//! | [`ApiServer::set_watch_list_mode`]`(`[`WatchListMode::Ignored`]`)` | `sendInitialEvents` ignored like an old server: no initial-events-end bookmark |
//! | [`ApiServer::request_count`]`(verb, resource)`, [`ApiServer::reset_request_counts`] | requests received per verb and resource (fault-failed ones included) |
//!
//! # Chaos mode
//!
//! `ApiServer::builder().chaos(ChaosConfig { seed, profile })` (binary: `--chaos-seed N
//! --chaos-profile gentle|standard|harsh`) runs, from the start, a task that follows a
//! timeline seeded by `seed`: every open watch dropped, history compacted, the server
//! "restarted" (every connection cut, state kept, new connections refused for a moment),
//! bookmarks requested. Each API request also draws, from a seeded sequence: a 500/503 or a
//! 429 with `Retry-After: 1`, an added delay, a response written a few bytes at a time; and
//! a fraction of bookmark-enabled watches send every bookmark late. The rates are the
//! profile's [`ChaosRates`]. `/__sim`, health, version and discovery requests are never
//! failed.
//!
//! # Fault control over HTTP
//!
//! Under the reserved prefix [`SIM_PREFIX`] (`/__sim`, which no Kubernetes path uses):
//!
//! | Request | Effect |
//! |---|---|
//! | `POST /__sim/watches/drop` | end every open watch |
//! | `POST /__sim/compact` | compact history up to the current RV |
//! | `POST /__sim/faults` with `{"verb":"list","resource":"pods","code":429,"count":2,"retryAfterSeconds":1}` | fail the next N matching requests (`"inBand":true` on a watch rule: HTTP 200 + one ERROR event) |
//! | `POST /__sim/faults` with `{"verb":"*","resource":"*","code":500,"probability":0.1,"seed":42}` | fail matching requests at random until cleared (400 for a probability outside `[0, 1]`) |
//! | `GET /__sim/faults`, `DELETE /__sim/faults` | show / clear failure rules |
//! | `POST /__sim/bookmarks` | every bookmark-enabled watch sends a BOOKMARK now |
//! | `POST /__sim/watchlist/off`, `POST /__sim/watchlist/on` | reject `sendInitialEvents` (422) like a server without WatchList / serve it again |
//! | `POST /__sim/watchlist/ignore` | ignore `sendInitialEvents` like a server predating WatchList |
//! | `GET /__sim/requests`, `DELETE /__sim/requests` | request counts as `{"<resource>":{"<verb>":n}}` / reset them |
//! | `POST /__sim/unready`, `POST /__sim/ready` | `/readyz` 500 and API requests 429 while unready |
//! | `GET /__sim/resourceversion` | current global RV |
//! | `GET /__sim/chaos`, `DELETE /__sim/chaos` | chaos seed, profile and faults injected per kind (404 without chaos) / stop chaos |
//! | `GET /__sim/objects/<group>/<resource>` (`core` for the core group) | stored objects |
//!
//! # Errors
//!
//! Over HTTP the simulator answers like kube-apiserver: a `Status` object with the code and
//! reason a real server gives (400 `BadRequest` for malformed bodies, selectors and patches,
//! 404, 409 `Conflict`/`AlreadyExists`, 410 `Expired`, 413, 415, 422 `Invalid`), never a
//! panic or a dropped connection (unless chaos mode drops it on purpose). A path it does not
//! serve gets kube-apiserver's 404 for that kind of path: a `Status` under built-in groups, Go's
//! plain-text `404 page not found` for unknown groups and under custom resource groups. The library API
//! returns [`Error`]: [`Error::Bind`] and [`Error::WriteKubeconfig`] (I/O, fix the port or
//! path), [`Error::UnknownResource`] (a type the server does not serve, e.g. a CRD not yet
//! created), [`Error::InvalidFault`] (a fault rule out of range), [`Error::Api`] (a seed write
//! refused with the `Status` the HTTP API would send), [`Error::Json`] and [`Error::Client`].
//! None of them is retried by the simulator: each names what to change.
//!
//! # Limits and simplifications
//!
//! Request bodies over [`BODY_LIMIT`] (3 MiB, as upstream) get 413. Server-side apply and
//! `metadata.managedFields` follow kube-apiserver (field ownership per manager, conflicts
//! and `force`, list merging by `x-kubernetes-list-type`), with these limits: the merge
//! rules of built-in types come from a table of the kinds the simulator knows (lists it
//! does not name are atomic, unknown fields of built-ins are not detected); field sets are
//! recorded in the version written through (an events.k8s.io write owns events.k8s.io
//! paths, as upstream) and not converted between versions; a `/status` write owns only
//! `status`; an apply through `/scale` is merged like a strategic merge patch and recorded
//! as an `Update`; seeds and the simulator's own controllers record no ownership (seeded
//! objects keep the `managedFields` they are given). Responses are JSON or protobuf (YAML
//! `Accept` clauses are answered in JSON); `kubectl get` receives `meta.k8s.io` Tables
//! (JSON) computed like upstream's printers. Protobuf comes from the Kubernetes
//! descriptors in `protos/kubernetes.fds` (Kubernetes 1.35): kinds made GA later have JSON
//! only (protobuf bodies get 415), and a protobuf body's non-pointer zero numbers and
//! booleans are stored as sent (`paused: false`) while its empty strings are left out.
//! Review kinds other than `SelfSubjectAccessReview`, `SelfSubjectRulesReview` and
//! `SelfSubjectReview` (`TokenReview`, `SubjectAccessReview`, ...) and `ComponentStatus` are
//! not served. Every built-in object must decode as its
//! k8s-openapi type (400 otherwise); beyond that, built-in validation is
//! a subset (names, labels, annotations, owner references, pod containers, deployment and
//! replicaset selector and template, service ports, webhook configurations): unknown
//! fields of built-ins are not detected and `fieldValidation=Warn` sends no `Warning`
//! header. OpenAPI v3 documents carry the component schemas of custom resources (from their
//! CRDs, with the meta types they refer to) and, with the `explain` feature, of built-in kinds
//! (from their k8s-openapi types, with the patch strategies and merge keys below); without it
//! `kubectl explain` finds no built-in kind. A strategic merge patch merges each field of a
//! built-in kind by the `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`
//! upstream's OpenAPI documents give it (`openapi/patch-strategies.json`, extracted from
//! Kubernetes 1.36's; a kind served in a version that release lacks takes its other
//! version's).
//! `/openapi/v2` is made from the v3 documents, in JSON only. Webhooks: the `/scale` subresource, a pod's `binding`
//! and `eviction`, and CONNECT requests (exec, attach, port-forward, proxy) call no admission
//! webhook, `matchConditions` are not
//! evaluated, validating webhooks' first failure is chosen in webhook order (upstream: the
//! first to answer), changes a mutating webhook makes to an applied object are not
//! attributed in `managedFields`, Table reads of a custom resource in a version other than
//! the stored one are not converted by its conversion webhook, and every request is made as
//! `system:admin`. RBAC: aggregated ClusterRoles are resolved when a request is authorized
//! (their stored `rules` are not rewritten), ServiceAccount tokens are opaque (not JWTs), and
//! only the bootstrap roles that concern API access exist (no `admin`, `edit`, `view`). A list or watch from a resourceVersion newer than the server's answers
//! 504 at once (upstream waits about 3 s for its cache). Without the workload simulator there is no
//! kubelet: a running pod bound to a node stays (terminating) until deleted with a grace
//! period of 0. Services get a cluster IP from 10.96.0.0/12 on create (no NodePorts are
//! allocated). `pods/log` answers with what a simulated container wrote (`follow` returns at
//! once). A pod's `binding` and `eviction` (which honours PodDisruptionBudgets, whose status
//! the workload simulator keeps; without it only clients write it) are served as upstream
//! serves them, and so are `ephemeralcontainers` and `resize`; exec, attach, port-forward and
//! proxy give a bare API server's refusals (no host assigned, no node, no address, upgrade
//! required), and where upstream would connect, the simulator says it runs no kubelet and no
//! pod servers. The garbage collector matches owners by uid only.
//!
//! # Layout
//!
//! Bottom-up: each folder or file uses only those in rows above it, so no two modules import
//! each other, directly or around a circle. A request flows down one way: `http/` →
//! `auth/` → `api/` → `kinds/` → `machinery/`; `ops/` (the writes) stands between `http/`
//! and `auth/` (its owner-reference check asks the authorizer), `store/` over `machinery/`
//! alone. `lib.rs` declares the modules, re-exports the public types and defines
//! [`SIM_PREFIX`].
//!
//! | path | what it holds |
//! |---|---|
//! | `machinery/` | what every layer speaks (after `k8s.io/apimachinery`): what a served type is (`resource_info`) and the typed check of built-in objects (`typed`), object metadata (`meta`), `Status` errors (`status`), list, watch and write options (`query`), label and field selectors (`selector`; the label selector grammar: `label_parser`), the rules of names and labels (`name_rules`), errors and values in Go's words (`go_json`, `go_base64`, `go_fmt`) |
//! | `kinds/` | the registry of served kinds: the built-in kinds from their k8s-openapi types (`builtin_types`) and what the types do not carry (`builtin_traits`), assembled in `builtins`; the defaults of built-in objects and the status new ones start with (`defaults`); events.k8s.io events as core events (`event_conversion`), autoscaling v1 as v2 (`hpa_conversion`); CustomResourceDefinitions: validation, defaults, served type, Established status (`crd`), structural-schema validation, defaults and pruning of custom resources (`schema`), printer columns per kind and of CRDs, with a JSONPath evaluator (`printers/`); how each field merges in a strategic merge patch (`patch_strategies`, from `openapi/patch-strategies.json`) |
//! | `api/` | request and response formats: the parsed request path (`route`), `Accept` negotiation (`accept`), JSON or protobuf responses and their media types (`format`), full, metadata-only or Table responses (`repr`, `table`; list items without type meta: `list_items`), the watch event lines (`watch_line`), Kubernetes protobuf from the descriptors (`protobuf/`: `descriptors`, `conventions`, `to_json`, `from_json`, `time`, `envelope`), YAML bodies (`yaml11/`), JSON, merge and strategic merge patch (`patch`, `strategic_merge`), server-side apply and field ownership (`apply/`: field paths, sets and their `FieldsV1` encoding, merge rules of built-ins (`merge_rules`) and CRDs (`schema`), merging, `managedFields` entries, ownership updates, conflicts) |
//! | `faults/` | fault injection: fail-next and seeded random failure rules (`fail_rules`), the server-wide faults (`server_faults`: drop watches, compact, restart, send bookmarks), chaos mode (`chaos/`: `config`, `profile`, `schedule`, live `state`, `stats`, and the timeline `runner`) |
//! | `counts.rs`, `error.rs` | requests received per verb and resource; the crate's [`Error`] |
//! | `store/` | `mod.rs` global RV, objects (`Stored` = object + cached JSON), put/remove; `line.rs` the watch line of each write, encoded once; `history.rs` bounded event log; `reclaim.rs` events a lagging watcher would free go back to the writer; `snapshot.rs` lists, past snapshots, continue tokens |
//! | `tls/` | webhook serving certificates verified as kube-apiserver's Go client verifies them: parsed certificates (`cert`), signatures (`signature`), names (`hostname`), chains, validity, key usage and name constraints (`chain`), the `caBundle` or system roots (`roots`), the rustls verifier (`verifier`) |
//! | `admission/` | admission and conversion webhooks: the configured webhooks, parsed and cached (`hooks`; `shared.rs` holds the cache and the service table of `endpoints`, which use only `store/`), which requests call them (`matching`), the `AdmissionReview` format and denials (`review`), calling them in order (`dispatch`), CRD versions through conversion webhooks (`conversion`, `watch_conversion`), the HTTPS client (`client`) |
//! | `auth/` | what the server keeps (`state`: on or off, tokens, denials; held by `shared.rs`), authentication (bearer tokens: `identity`, `tokens`) and RBAC authorization (`attributes` of a request, `rules` matching, `rbac` bindings and aggregation, `forbidden` errors, `denials`, the `bootstrap` roles, which `server/` stores at start), the TokenRequest subresource (`token_request`) and SelfSubjectAccessReview (`review`) |
//! | `shared.rs` | state shared by the handle, HTTP handlers, watches and controllers: the store, `ServerConfig`, [`WatchListMode`], fault state; implements the server-wide faults |
//! | `ops/` | write semantics under the store lock: `create`, `update` (PUT and the second half of PATCH), `apply` (server-side apply), `delete` (finalizers, propagation), `validate` (with what decoding finds, `decode_check`), the `OwnerReferencesPermissionEnforcement` check (`owner_refs`, which asks `auth/`'s authorizer), `convert` (writes to a type served in another form than stored), Service cluster IPs (`service_ip`) |
//! | `watch/` | watch streams: one stream from start to end (`stream`), what a watcher sees and how its events are encoded (`filter`) |
//! | `controllers/` | background passes: CRD establishment and cleanup, namespace finalization, garbage collector, and the writes they share (`writes`); the optional workload simulator (`workloads/`: deployment, replicaset, job and endpoints controllers, the simulated node's scheduler and kubelet, container logs) |
//! | `http/` | the front end: accept loop, logging, body limit, chaos per request (`mod.rs`), resource requests (`request`, `verbs` with `decode` of bodies, write options and patches, `reads` of stored objects and `render` of objects and lists, `scale`; through webhooks: `admitted` (which requests, which way), `admission_flow`, `admitted_apply`, `admitted_delete`, `converted`), the TokenRequest, SelfSubjectAccessReview, SelfSubjectRulesReview and SelfSubjectReview endpoints (`auth_endpoints`), container logs (`pod_log`), discovery and OpenAPI documents (`discovery`; the meta types of a custom resource's: `openapi_meta`; `/openapi/v2`: `openapi_v2`), the 404s of unserved paths (`not_found`), `/__sim` endpoints (`sim`), responses (`respond`, `wire` for protobuf, `trickle`) |
//! | `server/` | the public handle: builder, start, client, kubeconfig, shutdown, the RBAC bootstrap policy stored at start (`handle`), seeding (`seed`), inspection (`inspect`), fault and test hooks (`hooks`), tokens and denials of RBAC mode (`auth`) |
//! | `fuzzing.rs` | properties of the selector parsers and patch algorithms, checked by the fuzz targets |
//! | `tests/differential/` | the differential suite: scripted probes compared with a real kube-apiserver's recorded answers (or live with `KUBE_RT_TEST_KUBECONFIG`), see `docs/conformance.md` |
//! | `benches/throughput.rs` | bench binary: `cargo bench -p kube-rt-apiserver-sim`, scenarios picked with `SIM_BENCH_ONLY`, medians with `SIM_BENCH_RUNS` |

mod admission;
mod api;
mod auth;
mod controllers;
mod counts;
mod error;
mod faults;
mod http;
mod kinds;
mod machinery;
mod ops;
mod server;
mod shared;
mod store;
mod tls;
mod watch;

pub use admission::endpoints::{ServiceEndpoint, parse_service_endpoint};
pub use api::watch_line::INITIAL_EVENTS_END;
pub use auth::denials::Denial;
pub use error::{Error, Result};
pub use faults::chaos::config::ChaosConfig;
pub use faults::chaos::profile::{ChaosProfile, ChaosRates, UnknownChaosProfile};
pub use faults::chaos::schedule::{ChaosEvent, ChaosSchedule, Scheduled};
pub use faults::chaos::stats::{ChaosStats, FaultKind};
pub use faults::fail_rules::FailRule;
pub use machinery::status::{ApiError, Cause, Details};
pub use server::handle::{ApiServer, ApiServerBuilder, DEFAULT_NAMESPACES};
pub use shared::{BODY_LIMIT, WatchListMode};

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;

/// Path prefix of the simulator's own control endpoints.
pub const SIM_PREFIX: &str = "/__sim";

/// The workspace README's examples ("Testing your operator with apiserver-sim"), compiled and
/// run as doctests so the README cannot drift from the API.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctest;
