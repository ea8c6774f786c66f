//! Calling the webhooks that match a request, in a real server's order and with its
//! semantics (apiserver `webhook/mutating/dispatcher.go`, `webhook/validating/dispatcher.go`):
//! mutating webhooks one after the other, each seeing the previous one's patch, then once
//! more those with `reinvocationPolicy: IfNeeded` when a later webhook changed the object;
//! validating webhooks all at once. `failurePolicy` decides whether a webhook that cannot be
//! called (down, timed out, nonsense answer) fails the request; a denial always does; on a
//! dry run a webhook with side effects fails the request without being called.

use crate::faults::chaos::state::Chaos;
use std::collections::HashSet;

use serde_json::Value;

use super::conversion::Converter;
use super::endpoints::ServiceEndpoints;
use super::hooks::Webhook;
use super::matching::{Attributes, Invocation, NamespaceLabels, should_call};
use super::review::{self, Failure};
use crate::machinery::status::ApiError;

/// What the calls of one request share.
pub struct Context<'a> {
    /// Where services are.
    pub endpoints: &'a ServiceEndpoints,
    /// Converts objects to the version a webhook matched.
    pub converter: &'a Converter,
    /// Labels of the request's namespace (see [`NamespaceLabels`]).
    pub namespace_labels: NamespaceLabels,
    /// Chaos mode, when on: it may fail, drop or delay each webhook call.
    pub chaos: Option<&'a Chaos>,
}

/// Why one call did not admit the request.
enum CallError {
    /// The webhook could not be called or answered nonsense: `failurePolicy` decides.
    Calling(String),
    /// The request fails whatever the policy (denial, dry run unsupported, bad patch).
    Final(Failure),
}

impl From<Failure> for CallError {
    fn from(f: Failure) -> Self {
        CallError::Final(f)
    }
}

/// Calls one webhook; for a mutating webhook, applies its patch to `attrs.object` and says
/// whether the object changed.
async fn call(
    ctx: &Context<'_>,
    hook: &Webhook,
    attrs: &Attributes,
    invocation: &Invocation,
    mutating: bool,
    warnings: &mut Vec<String>,
) -> Result<Option<Value>, CallError> {
    if attrs.dry_run {
        match hook.side_effects.as_str() {
            "" => return Err(CallError::Calling("Webhook SideEffects is nil".into())),
            "None" | "NoneOnDryRun" => {}
            _ => {
                return Err(CallError::Final(
                    ApiError::bad_request(format!(
                        "admission webhook \"{}\" does not support dry run",
                        hook.name
                    ))
                    .into(),
                ));
            }
        }
    }
    let object = match &attrs.object {
        Some(o) => Some(
            ctx.converter
                .convert(o.clone(), &invocation.version)
                .await?,
        ),
        None => None,
    };
    let old = match &attrs.old_object {
        Some(o) => Some(
            ctx.converter
                .convert(o.clone(), &invocation.version)
                .await?,
        ),
        None => None,
    };
    let uid = crate::machinery::meta::new_uid();
    let request = review::request(hook, attrs, invocation, &uid, object.as_ref(), old.as_ref())
        .map_err(CallError::Calling)?;
    let target = ctx
        .endpoints
        .resolve(&hook.client_config)
        .map_err(|(url, why)| {
            CallError::Calling(format!("failed to call webhook: Post {url:?}: {why}"))
        })?;
    let fault = ctx.chaos.and_then(Chaos::on_webhook_call);
    let answer = super::client::post(&target, &request, hook.timeout, fault)
        .await
        .map_err(|e| CallError::Calling(format!("failed to call webhook: {e}")))?;
    let answer = review::verify(hook, &uid, mutating, &answer)
        .map_err(|e| CallError::Calling(format!("received invalid webhook response: {e}")))?;
    warnings.extend(answer.warnings);
    if !answer.allowed {
        return Err(review::denial(&hook.name, answer.status.as_ref()).into());
    }
    let Some(patch) = answer
        .patch
        .filter(|p| p.as_array().is_none_or(|a| !a.is_empty()))
    else {
        return Ok(None);
    };
    let Some(object) = object else {
        return Err(Failure::internal(&format!(
            "admission webhook \"{}\" attempted to modify the object, which is not supported for this operation",
            hook.name
        ))
        .into());
    };
    let patched = crate::api::patch::json_patch(&object, &patch)
        .map_err(|e| Failure::internal(&e.message))?;
    if patched == object {
        return Ok(None);
    }
    Ok(Some(ctx.converter.convert(patched, &attrs.version).await?))
}

/// The invocation of a webhook for the request, or the error of a missing namespace.
fn invocation(
    ctx: &Context<'_>,
    hook: &Webhook,
    attrs: &Attributes,
) -> Result<Option<Invocation>, Failure> {
    should_call(hook, attrs, &ctx.namespace_labels)
        .map_err(|ns| Failure::from(ApiError::namespace_not_found(&ns)))
}

/// Applies a failed call's outcome: `Ok` when the webhook fails open.
fn settle(hook: &Webhook, err: CallError) -> Result<(), Failure> {
    match err {
        CallError::Calling(reason) if hook.fail_open => {
            tracing::warn!(
                webhook = %hook.name,
                configuration = %hook.configuration,
                %reason,
                "failed calling webhook, failing open"
            );
            Ok(())
        }
        CallError::Calling(reason) => Err(Failure::calling(&hook.name, &reason)),
        CallError::Final(f) => Err(f),
    }
}

/// Runs the mutating webhooks over `attrs.object` (in place), with one reinvocation round.
pub async fn mutate(
    ctx: &Context<'_>,
    hooks: &[Webhook],
    attrs: &mut Attributes,
    warnings: &mut Vec<String>,
) -> Result<(), Failure> {
    let mut invoked: HashSet<(String, usize)> = HashSet::new();
    let mut reinvoke: HashSet<(String, usize)> = HashSet::new();
    let mut again = false;
    for round in 0..2 {
        if round == 1 && !again {
            break;
        }
        for hook in hooks {
            let Some(inv) = invocation(ctx, hook, attrs)? else {
                continue;
            };
            // A webhook is never called for the first time in the reinvocation round.
            if round == 1 && !reinvoke.contains(&hook.uid) {
                continue;
            }
            match call(ctx, hook, attrs, &inv, true, warnings).await {
                Ok(Some(changed)) => {
                    attrs.object = Some(changed);
                    reinvoke.extend(invoked.drain());
                    again = true;
                }
                Ok(None) => {}
                Err(e) => settle(hook, e)?,
            }
            if hook.reinvoke_if_needed {
                invoked.insert(hook.uid.clone());
            }
        }
    }
    Ok(())
}

/// Runs the validating webhooks at once; the first failure (in webhook order) wins.
pub async fn validate(
    ctx: &Context<'_>,
    hooks: &[Webhook],
    attrs: &Attributes,
    warnings: &mut Vec<String>,
) -> Result<(), Failure> {
    let mut calls = Vec::new();
    for hook in hooks {
        if let Some(inv) = invocation(ctx, hook, attrs)? {
            calls.push(async move {
                let mut w = Vec::new();
                let r = call(ctx, hook, attrs, &inv, false, &mut w).await;
                (hook, r, w)
            });
        }
    }
    let mut outcome = Ok(());
    for (hook, result, w) in futures::future::join_all(calls).await {
        warnings.extend(w);
        if let Err(e) = result
            && let Err(f) = settle(hook, e)
            && outcome.is_ok()
        {
            outcome = Err(f);
        }
    }
    outcome
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
