//! The sample-controller with the real `kubectl`: start the standalone `apiserver-sim` binary (workload
//! simulator on), apply the CRD printed by `sample-controller crd` and the example Foo with
//! kubectl, run `sample-controller --kubeconfig`, and read the result back with `kubectl get`
//! (objects, and the tables a cluster prints); server-side apply of a Foo by two managers.
//! Skipped, with a notice, when kubectl is not installed.

use crate::common;

use std::path::Path;
use std::process::Stdio;

use common::kubectl::{
    DEADLINE, kubectl, kubectl_installed, kubectl_until, standalone_apiserver_sim,
};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_sample-controller");

/// `spec.replicas` and `status.availableReplicas` of a Foo printed as YAML.
fn replicas_of(yaml: &str) -> (Option<i64>, Option<i64>) {
    let Ok(foo) = serde_yaml::from_str::<serde_json::Value>(yaml) else {
        return (None, None);
    };
    (
        foo["spec"]["replicas"].as_i64(),
        foo["status"]["availableReplicas"].as_i64(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_sees_deployment_status_and_events() {
    if !kubectl_installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (kubeconfig, cache) = (dir.path().join("kubeconfig"), dir.path().join("kube-cache"));
    let mut server = Command::new(standalone_apiserver_sim())
        .args(["--port", "0", "--workloads=200", "--kubeconfig"])
        .arg(&kubeconfig)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // The binary writes the kubeconfig once it serves; kubectl retries until it can read it.

    // The CRD exactly as `sample-controller crd` prints it.
    let printed = Command::new(BIN).arg("crd").output().await.unwrap();
    assert!(printed.status.success());
    let crd_file = dir.path().join("crd.yaml");
    std::fs::write(&crd_file, &printed.stdout).unwrap();
    let crd_path = crd_file.to_str().unwrap();
    kubectl_until(&kubeconfig, &cache, &["apply", "-f", crd_path], |out| {
        out.contains("foos.samplecontroller.k8s.io")
    })
    .await;
    let foo_path = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/example-foo.yaml");
    kubectl_until(&kubeconfig, &cache, &["apply", "-f", foo_path], |out| {
        out.contains("example-foo")
    })
    .await;

    let mut controller = Command::new(BIN)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();

    let deployment = kubectl_until(
        &kubeconfig,
        &cache,
        &["get", "deploy", "example-foo", "-o", "json"],
        |_| true,
    )
    .await;
    let deployment: serde_json::Value = serde_json::from_str(&deployment).unwrap();
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "Foo");
    assert_eq!(owner["name"], "example-foo");
    assert_eq!(owner["controller"], true);
    assert_eq!(owner["blockOwnerDeletion"], true);

    // The workload simulator makes the Deployment's replicas available, and the controller
    // copies that into the Foo's status: availableReplicas reaches spec.replicas.
    let foo = kubectl_until(
        &kubeconfig,
        &cache,
        &["get", "foo", "example-foo", "-o", "yaml"],
        |out| {
            let (spec, status) = replicas_of(out);
            spec.is_some() && spec == status
        },
    )
    .await;
    assert_eq!(replicas_of(&foo), (Some(1), Some(1)), "{foo}");
    kubectl_until(
        &kubeconfig,
        &cache,
        &["get", "events", "-o", "json"],
        |out| out.contains("\"reason\": \"Synced\"") && out.contains("Foo synced successfully"),
    )
    .await;

    tables_show_what_a_cluster_shows(&kubeconfig, &cache, dir.path()).await;
    server_side_apply_of_a_foo(&kubeconfig, &cache, dir.path()).await;

    common::interrupt_and_expect_clean_exit(&mut controller, DEADLINE).await;
    common::interrupt_and_expect_clean_exit(&mut server, DEADLINE).await;
}

/// `kubectl get foos,deployments,pods,events` prints the columns a real cluster's tables have
/// (Kubernetes' printers: deployments READY UP-TO-DATE AVAILABLE, pods READY STATUS RESTARTS,
/// events LAST SEEN TYPE REASON OBJECT MESSAGE; a CRD without printer columns NAME AGE), with
/// the controller's work in the rows.
async fn tables_show_what_a_cluster_shows(kubeconfig: &Path, cache: &Path, dir: &Path) {
    // A bare pod of our own beside the Deployment's (the workload simulator runs both).
    let pod = dir.join("pod.yaml");
    std::fs::write(
        &pod,
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx\n",
    )
    .unwrap();
    kubectl_until(
        kubeconfig,
        cache,
        &["apply", "-f", pod.to_str().unwrap()],
        |out| out.contains("pod/web"),
    )
    .await;
    let out = kubectl_until(
        kubeconfig,
        cache,
        &["get", "foos,deployments,pods,events"],
        |out| out.contains("Synced") && out.contains("1/1") && out.contains("pod/web"),
    )
    .await;
    let headers: Vec<Vec<&str>> = out
        .lines()
        .filter(|line| line.starts_with("NAME") || line.starts_with("LAST SEEN"))
        .map(|line| line.split_whitespace().collect())
        .collect();
    for expected in [
        vec!["NAME", "AGE"],
        vec!["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        vec!["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        vec!["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
    ] {
        assert!(
            headers.contains(&expected),
            "no header {expected:?} in:\n{out}"
        );
    }
    let deployment_row = out
        .lines()
        .find(|line| line.starts_with("deployment.apps/example-foo"))
        .unwrap_or_else(|| panic!("no example-foo deployment row in:\n{out}"));
    assert_eq!(
        deployment_row.split_whitespace().nth(1),
        Some("1/1"),
        "{deployment_row}"
    );
    assert!(
        out.lines()
            .any(|line| line.contains("Synced") && line.contains("foo/example-foo")),
        "no Synced event row in:\n{out}"
    );
}

/// `kubectl apply --server-side` of a Foo (Kubernetes docs, "Server-Side Apply"): it creates the
/// Foo; a second manager's apply of another replica count is refused with the real conflict
/// message naming the first manager and the field, and wins with `--force-conflicts`.
async fn server_side_apply_of_a_foo(kubeconfig: &Path, cache: &Path, dir: &Path) {
    let manifest = |replicas: u32| {
        let path = dir.join(format!("ssa-foo-{replicas}.yaml"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n  name: ssa-foo\nspec:\n  deploymentName: ssa-foo\n  replicas: {replicas}\n"
            ),
        )
        .unwrap();
        path
    };
    let (two, three) = (manifest(2), manifest(3));
    let apply = |path: &Path, manager: &str, force: bool| {
        let mut args = vec![
            "apply".to_owned(),
            "--server-side".to_owned(),
            format!("--field-manager={manager}"),
            "-f".to_owned(),
            path.to_str().unwrap().to_owned(),
        ];
        if force {
            args.push("--force-conflicts".to_owned());
        }
        args
    };
    let as_strs = |args: &[String]| {
        args.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    };

    let first = apply(&two, "alice", false);
    let created = kubectl(
        kubeconfig,
        cache,
        &first.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await
    .unwrap_or_else(|err| panic!("kubectl {}: {err}", as_strs(&first)));
    assert!(
        created.contains("foo.samplecontroller.k8s.io/ssa-foo serverside-applied"),
        "{created}"
    );

    let conflicting = apply(&three, "bob", false);
    let refused = kubectl(
        kubeconfig,
        cache,
        &conflicting.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await
    .expect_err("a conflicting apply without --force-conflicts is refused");
    assert!(
        refused.contains("Apply failed with 1 conflict"),
        "{refused}"
    );
    assert!(refused.contains("conflict with \"alice\""), "{refused}");
    assert!(refused.contains(".spec.replicas"), "{refused}");

    let forced = apply(&three, "bob", true);
    kubectl(
        kubeconfig,
        cache,
        &forced.iter().map(String::as_str).collect::<Vec<_>>(),
    )
    .await
    .unwrap_or_else(|err| panic!("kubectl {}: {err}", as_strs(&forced)));
    let replicas = kubectl(
        kubeconfig,
        cache,
        &["get", "foo", "ssa-foo", "-o", "jsonpath={.spec.replicas}"],
    )
    .await
    .unwrap();
    assert_eq!(replicas, "3");
}
