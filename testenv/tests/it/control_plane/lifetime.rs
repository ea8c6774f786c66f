//! A control plane leaves nothing behind: dropped with its environment, its processes are gone
//! and its directory removed; and a test process killed with SIGKILL while its (never dropped)
//! shared control plane runs leaves no server, no watchdog and no files either.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::PostParams;
use testenv::{ControlPlane, TestEnv, eventually};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::processes::{alive, mentioning};

/// Set for the child process of the kill test: it then runs the control plane to be killed.
const CHILD_VAR: &str = "KUBE_RT_TESTENV_KILLED_CHILD";
/// What the child prints before its pids and data directory.
const CHILD_SAYS: &str = "kube-rt-testenv child:";
/// How long the cleanup after a process may take.
const GONE_WITHIN: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_dropped_environment_stops_its_control_plane_and_removes_its_files() {
    let Some(assets) = testenv::assets_or_skip("its stop with the environment") else {
        return;
    };
    let plane = Arc::new(ControlPlane::start(&assets).await.unwrap());
    let env = TestEnv::builder()
        .on_control_plane(Arc::clone(&plane))
        .start()
        .await
        .unwrap();
    let dir = plane.dir().to_owned();
    let pids: Vec<u32> = plane.processes().iter().map(|p| p.pid).collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&pid| alive(pid)));
    assert!(
        !mentioning(&dir).is_empty(),
        "the servers name their directory"
    );
    let config_maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("c".to_owned());
    config_maps
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();

    drop(plane);
    assert!(
        pids.iter().all(|&pid| alive(pid)),
        "the environment keeps it"
    );
    drop(env);
    let dead: Vec<_> = pids.iter().filter(|&&pid| alive(pid)).collect();
    assert!(dead.is_empty(), "still running: {dead:?}");
    assert!(!dir.exists(), "{} is left", dir.display());
    assert_eq!(mentioning(&dir), Vec::<String>::new());
}

#[tokio::test]
async fn a_killed_test_process_leaves_no_server_and_no_files() {
    let Some(assets) = testenv::assets_or_skip("its end with a killed process") else {
        return;
    };
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "control_plane::lifetime::child_process_with_a_shared_control_plane",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_VAR, "1")
        .env(testenv::ASSETS_VAR, &assets)
        .env_remove(testenv::KUBECONFIG_VAR)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let said = tokio::time::timeout(testenv::control_plane::DEFAULT_STARTUP_TIMEOUT, async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(said) = line.strip_prefix(CHILD_SAYS) {
                return Some(said.to_owned());
            }
        }
        None
    })
    .await
    .unwrap()
    .expect("the child to report its control plane");
    let mut words: Vec<&str> = said.split_whitespace().collect();
    let dir = PathBuf::from(words.pop().unwrap());
    let pids: Vec<u32> = words.iter().map(|pid| pid.parse().unwrap()).collect();
    assert_eq!(pids.len(), 2, "{said}");
    assert!(pids.iter().all(|&pid| alive(pid)), "{said}");
    assert!(dir.is_dir());

    child.start_kill().unwrap();
    child.wait().await.unwrap();
    eventually(
        "the servers to die with the test process",
        GONE_WITHIN,
        || {
            let running: Vec<_> = pids.iter().filter(|&&pid| alive(pid)).collect();
            async move { running.is_empty() }
        },
    )
    .await
    .unwrap();
    eventually("the data directory to be removed", GONE_WITHIN, || {
        let exists = dir.exists();
        async move { !exists }
    })
    .await
    .unwrap();
    eventually("no process to name the directory", GONE_WITHIN, || {
        let named = mentioning(&dir);
        async move {
            if named.is_empty() {
                Ok(true)
            } else {
                Err(named.join("; "))
            }
        }
    })
    .await
    .unwrap();
}

/// The child of the kill test: starts the process's shared control plane (a static, never
/// dropped), says where it is, and waits to be killed. Does nothing outside that test.
#[tokio::test]
#[ignore = "run by a_killed_test_process_leaves_no_server_and_no_files in a child process"]
async fn child_process_with_a_shared_control_plane() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    let Some(assets) = testenv::lane::named_assets() else {
        return;
    };
    let plane = ControlPlane::shared(&assets).await.unwrap();
    let pids: Vec<String> = plane
        .processes()
        .iter()
        .map(|p| p.pid.to_string())
        .collect();
    println!("{CHILD_SAYS} {} {}", pids.join(" "), plane.dir().display());
    std::future::pending::<()>().await;
}
