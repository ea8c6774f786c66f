//! With a controller-manager asked for, the control plane collects garbage, gives a new
//! namespace its `default` ServiceAccount and `kube-root-ca.crt` (the control plane's CA), and
//! finalizes a deleted namespace.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use testenv::TestEnv;

fn config_map(name: &str, owner: Option<&ConfigMap>) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    cm.metadata.owner_references = owner.map(|owner| {
        vec![OwnerReference {
            api_version: "v1".to_owned(),
            kind: "ConfigMap".to_owned(),
            name: owner.metadata.name.clone().unwrap_or_default(),
            uid: owner.metadata.uid.clone().unwrap_or_default(),
            ..OwnerReference::default()
        }]
    });
    cm
}

#[tokio::test]
async fn the_controller_manager_collects_garbage_and_equips_namespaces() {
    let Some(assets) = testenv::assets_or_skip("a controller-manager") else {
        return;
    };
    let env = TestEnv::builder()
        .control_plane(&assets)
        .controller_manager()
        .start()
        .await
        .unwrap();
    let plane = env.control_plane().unwrap();
    assert!(plane.has_controller_manager());
    assert!(
        plane
            .processes()
            .iter()
            .any(|p| p.name == "kube-controller-manager"),
        "{plane:?}"
    );

    // The garbage collector deletes a dependent whose owner is gone.
    let config_maps: Api<ConfigMap> = Api::default_namespaced(env.client());
    let owner = config_maps
        .create(&PostParams::default(), &config_map("owner", None))
        .await
        .unwrap();
    config_maps
        .create(
            &PostParams::default(),
            &config_map("dependent", Some(&owner)),
        )
        .await
        .unwrap();
    config_maps
        .delete("owner", &DeleteParams::default())
        .await
        .unwrap();
    env.eventually("the garbage collector to delete the dependent", || async {
        config_maps
            .get_opt("dependent")
            .await
            .map(|cm| cm.is_none())
    })
    .await
    .unwrap();

    // A new namespace gets its ServiceAccount and the control plane's CA.
    let name = env.namespace_of_its_own("equipped");
    let namespaces: Api<Namespace> = Api::all(env.client());
    let mut namespace = Namespace::default();
    namespace.metadata.name = Some(name.clone());
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(env.client(), &name);
    env.eventually("the default ServiceAccount", || async {
        accounts.get_opt("default").await
    })
    .await
    .unwrap();
    let roots: Api<ConfigMap> = Api::namespaced(env.client(), &name);
    let root = env
        .eventually("kube-root-ca.crt", || async {
            roots.get_opt("kube-root-ca.crt").await
        })
        .await
        .unwrap();
    let ca = root.data.unwrap_or_default().remove("ca.crt");
    assert_eq!(ca.as_deref(), Some(plane.ca_pem()));

    // The namespace controller empties and finalizes a deleted namespace by itself.
    namespaces
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap();
    env.eventually("the namespace to be gone", || async {
        namespaces.get_opt(&name).await.map(|ns| ns.is_none())
    })
    .await
    .unwrap();
}
