//! What a simulated container "wrote" (`pods/log`): a simulated container runs no process,
//! so its log is one line saying it started (from which image, on which node) and, once it
//! finished, one saying it exited. The checks are the API server's and the kubelet's: an
//! unknown container or an ambiguous one is a 400, a container not started yet is a 400
//! naming why it waits, `previous` finds no earlier instance (nothing restarts), and a pod
//! not bound to a node has an empty log. `timestamps`, `tailLines` and `limitBytes` apply.

use serde_json::Value;

use crate::machinery::pointer::text;
use crate::machinery::status::{ApiError, ApiResult};

/// The options of a log request that shape the answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct LogOptions {
    /// `container` (empty: the pod's only container).
    pub container: String,
    /// `previous`: the container's earlier, terminated instance.
    pub previous: bool,
    /// `timestamps`: every line starts with its RFC 3339 time.
    pub timestamps: bool,
    /// `tailLines`: only the last lines.
    pub tail_lines: Option<usize>,
    /// `limitBytes`: at most this many bytes.
    pub limit_bytes: Option<usize>,
}

fn names(pod: &Value, list: &str) -> Vec<String> {
    pod.pointer(&format!("/spec/{list}"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The container's status, in `containerStatuses` or `initContainerStatuses`.
fn container_status<'a>(pod: &'a Value, container: &str) -> Option<&'a Value> {
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .filter_map(|l| {
            pod.pointer(&format!("/status/{l}"))
                .and_then(Value::as_array)
        })
        .flatten()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(container))
}

/// The log of one container of `pod` (named `pod_name`), as the API server answers it.
pub(crate) fn pod_log(pod: &Value, pod_name: &str, opts: &LogOptions) -> ApiResult<String> {
    let containers = names(pod, "containers");
    let inits = names(pod, "initContainers");
    let container = if opts.container.is_empty() {
        match containers.as_slice() {
            [only] => only.clone(),
            _ => {
                let mut msg = format!(
                    "a container name must be specified for pod {pod_name}, choose one of: [{}]",
                    containers.join(" ")
                );
                if !inits.is_empty() {
                    msg.push_str(&format!(
                        " or one of the init containers: [{}]",
                        inits.join(" ")
                    ));
                }
                return Err(ApiError::bad_request(msg));
            }
        }
    } else if containers.contains(&opts.container) || inits.contains(&opts.container) {
        opts.container.clone()
    } else {
        return Err(ApiError::bad_request(format!(
            "container {} is not valid for pod {pod_name}",
            opts.container
        )));
    };
    let node = text(pod, "/spec/nodeName");
    if node.is_empty() {
        return Ok(String::new());
    }
    if opts.previous {
        return Err(ApiError::bad_request(format!(
            "previous terminated container \"{container}\" in pod \"{pod_name}\" not found"
        )));
    }
    let status = container_status(pod, &container);
    let state = status.and_then(|s| s.get("state"));
    let started = state.and_then(|s| {
        s.pointer("/running/startedAt")
            .or_else(|| s.pointer("/terminated/startedAt"))
            .and_then(Value::as_str)
    });
    let Some(started) = started else {
        let reason = state
            .and_then(|s| s.pointer("/waiting/reason"))
            .and_then(Value::as_str)
            .unwrap_or("ContainerCreating");
        return Err(ApiError::bad_request(format!(
            "container \"{container}\" in pod \"{pod_name}\" is waiting to start: {reason}"
        )));
    };
    let image = status
        .and_then(|s| s.get("image"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut lines = vec![(
        started.to_string(),
        format!(
            "apiserver-sim: container {container} started from image {image} on node {node} \
             (a simulated container runs no process: this is all it writes)"
        ),
    )];
    if let Some(t) = state.and_then(|s| s.get("terminated")) {
        let at = t
            .get("finishedAt")
            .and_then(Value::as_str)
            .unwrap_or(started);
        let code = t.get("exitCode").and_then(Value::as_i64).unwrap_or(0);
        lines.push((
            at.to_string(),
            format!("apiserver-sim: container {container} exited with code {code}"),
        ));
    }
    let skip = opts.tail_lines.map_or(0, |n| lines.len().saturating_sub(n));
    let mut out = String::new();
    for (at, line) in lines.into_iter().skip(skip) {
        if opts.timestamps {
            out.push_str(&rfc3339_nano(&at));
            out.push(' ');
        }
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(limit) = opts.limit_bytes
        && out.len() > limit
    {
        let mut cut = limit;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    Ok(out)
}

/// `2025-01-01T10:00:00Z` as the kubelet prints log times (`2025-01-01T10:00:00.000000000Z`).
fn rfc3339_nano(at: &str) -> String {
    match at.strip_suffix('Z') {
        Some(base) if !base.contains('.') => format!("{base}.000000000Z"),
        _ => at.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(state: Value) -> Value {
        json!({"spec": {"nodeName": "sim-node", "containers": [{"name": "web"}]},
               "status": {"containerStatuses": [{"name": "web", "image": "docker.io/library/nginx:latest", "state": state}]}})
    }

    #[test]
    fn a_running_container_wrote_that_it_started() {
        let p = pod(json!({"running": {"startedAt": "2025-01-01T10:00:00Z"}}));
        let log = pod_log(&p, "web-1", &LogOptions::default()).expect("log");
        assert!(
            log.contains("container web started from image docker.io/library/nginx:latest"),
            "{log}"
        );
        assert_eq!(log.lines().count(), 1);
        let opts = LogOptions {
            timestamps: true,
            ..Default::default()
        };
        let log = pod_log(&p, "web-1", &opts).expect("log");
        assert!(
            log.starts_with("2025-01-01T10:00:00.000000000Z apiserver-sim:"),
            "{log}"
        );
    }

    #[test]
    fn a_finished_container_wrote_its_exit_and_tail_lines_apply() {
        let p = pod(json!({"terminated": {"startedAt": "2025-01-01T10:00:00Z",
            "finishedAt": "2025-01-01T10:00:01Z", "exitCode": 0}}));
        let opts = LogOptions {
            tail_lines: Some(1),
            ..Default::default()
        };
        let log = pod_log(&p, "job-1", &opts).expect("log");
        assert_eq!(log, "apiserver-sim: container web exited with code 0\n");
    }

    #[test]
    fn errors_are_the_servers() {
        let waiting = pod(json!({"waiting": {"reason": "ContainerCreating"}}));
        let e = pod_log(&waiting, "web-1", &LogOptions::default()).expect_err("waiting");
        assert_eq!(e.code, 400);
        assert_eq!(
            e.message,
            "container \"web\" in pod \"web-1\" is waiting to start: ContainerCreating"
        );
        let opts = LogOptions {
            container: "nope".into(),
            ..Default::default()
        };
        let e = pod_log(&waiting, "web-1", &opts).expect_err("unknown container");
        assert_eq!(e.message, "container nope is not valid for pod web-1");
        let two = json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
        let e = pod_log(&two, "p", &LogOptions::default()).expect_err("ambiguous");
        assert_eq!(
            e.message,
            "a container name must be specified for pod p, choose one of: [a b]"
        );
        let unbound = json!({"spec": {"containers": [{"name": "a"}]}});
        assert_eq!(
            pod_log(&unbound, "p", &LogOptions::default()).expect("empty"),
            ""
        );
    }
}
