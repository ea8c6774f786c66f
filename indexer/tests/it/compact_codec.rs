//! The codec of compact objects (managedFields dropped or kept, each encoding, dictionary
//! training and its fallback), malformed input, twins, and the typed lister over a compact cache.

use std::sync::Arc;

use indexer::compact::{Codec, CodecOptions, Compact, CompactLister, DictionaryState, Encoding};
use indexer::{Indexer, Indexers, ObjectKey, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Resource;
use kube::core::{Expression, Selector};

/// A ConfigMap's wire JSON, with managedFields between its name and its labels.
fn json(name: &str, version: u32, app: &str) -> String {
    format!(
        r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"ns","resourceVersion":"{version}","managedFields":[{{"manager":"kubectl","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{{"f:data":{{}}}}}}],"labels":{{"app":"{app}"}},"annotations":{{"note":"{name} at {version}"}}}},"data":{{"config.yaml":"replicas: {version}\nimage: registry.example.com/{app}:v1\nlog: info\n"}}}}"#
    )
}

fn compact(text: &str) -> Arc<Compact<ConfigMap>> {
    Arc::new(serde_json::from_str(text).expect("a compact object"))
}

#[test]
fn managed_fields_are_dropped_unless_kept_and_the_rest_reads_back_exactly() {
    let text = json("a", 1, "web");
    let typed: ConfigMap = serde_json::from_str(&text).unwrap();
    for encoding in [Encoding::Json, Encoding::Zstd, Encoding::Lz4] {
        for keep in [false, true] {
            let codec = Codec::new(
                CodecOptions::new()
                    .encoding(encoding)
                    .keep_managed_fields(keep),
            );
            let stored = codec.encode(compact(&text));
            assert_eq!(stored.encoding(), encoding);
            let stored_json = String::from_utf8(stored.to_json().unwrap()).unwrap();
            assert_eq!(stored_json.contains("managedFields"), keep, "{encoding:?}");
            let mut expected = typed.clone();
            if !keep {
                expected.metadata.managed_fields = None;
            }
            assert_eq!(
                *stored.decode().unwrap(),
                expected,
                "{encoding:?}, kept: {keep}"
            );
            assert_eq!(stored.meta().labels.as_ref().unwrap()["app"], "web");
            assert!(stored.meta().annotations.is_none(), "not eager");
        }
    }
}

#[test]
fn compressed_bodies_are_smaller_and_encoding_twice_changes_nothing() {
    let text = json("a", 1, "web");
    let plain = Codec::new(CodecOptions::new().encoding(Encoding::Json)).encode(compact(&text));
    let zstd = Codec::new(CodecOptions::new().encoding(Encoding::Zstd));
    let once = zstd.encode(compact(&text));
    assert!(once.encoded_len() < plain.encoded_len());
    assert!(plain.encoded_len() < text.len(), "managedFields dropped");
    let twice = zstd.encode(Arc::clone(&once));
    assert!(Arc::ptr_eq(&once, &twice));
}

#[test]
fn a_dictionary_trains_on_the_first_objects_which_stay_plain_until_replaced() {
    let codec = Codec::new(CodecOptions::new().dictionary(50, 4 * 1024));
    let mut stored = Vec::new();
    for i in 0..60 {
        stored.push(codec.encode(compact(&json(
            &format!("cm-{i}"),
            i,
            ["web", "db"][i as usize % 2],
        ))));
        if i == 10 {
            assert_eq!(
                codec.dictionary_state(),
                DictionaryState::Collecting {
                    samples: 11,
                    of: 50
                }
            );
        }
    }
    assert!(matches!(codec.dictionary_state(), DictionaryState::Trained { bytes } if bytes > 0));
    assert!(stored[..49].iter().all(|s| s.encoding() == Encoding::Json));
    assert!(
        stored[49..]
            .iter()
            .all(|s| s.encoding() == Encoding::ZstdDictionary)
    );
    let plain_zstd = Codec::new(CodecOptions::new().encoding(Encoding::Zstd))
        .encode(compact(&json("cm-59", 59, "db")));
    assert!(
        stored[59].encoded_len() < plain_zstd.encoded_len(),
        "the dictionary helps"
    );
    for (i, s) in stored.iter().enumerate() {
        let mut expected: ConfigMap =
            serde_json::from_str(&json(&format!("cm-{i}"), i as u32, ["web", "db"][i % 2]))
                .unwrap();
        expected.metadata.managed_fields = None;
        assert_eq!(*s.decode().unwrap(), expected);
    }
}

#[test]
fn failed_training_falls_back_to_zstd_without_a_dictionary() {
    let codec = Codec::new(CodecOptions::new().dictionary(2, 1024));
    let first = codec.encode(compact(r#"{"metadata":{"name":"a"}}"#));
    let second = codec.encode(compact(r#"{"metadata":{"name":"b"}}"#));
    assert_eq!(codec.dictionary_state(), DictionaryState::Failed);
    assert_eq!(first.encoding(), Encoding::Json);
    assert_eq!(second.encoding(), Encoding::Zstd);
    let third = codec.encode(compact(&json("c", 3, "web")));
    assert_eq!(third.encoding(), Encoding::Zstd);
    assert_eq!(third.decode().unwrap().metadata.name.as_deref(), Some("c"));
    assert_eq!(second.decode().unwrap().metadata.name.as_deref(), Some("b"));
}

#[test]
fn malformed_input_is_a_serde_error() {
    for bad in [
        "",
        "not json",
        "[1,2]",
        "\"a string\"",
        r#"{"metadata":{"name":"a"}"#,
        r#"{"metadata":{"labels":"not a map"}}"#,
        r#"{"metadata":{"generation":"one"}}"#,
        r#"{"metadata":{"ownerReferences":{}}}"#,
        r#"{"metadata":[]}"#,
    ] {
        assert!(
            serde_json::from_str::<Compact<ConfigMap>>(bad).is_err(),
            "{bad:?} accepted"
        );
    }
}

#[test]
fn a_twin_shares_the_data_but_not_the_decoded_object() {
    let original = compact(&json("a", 1, "web"));
    let decoded = original.decode().unwrap();
    let clone = (*original).clone();
    assert!(Arc::ptr_eq(clone.decoded().unwrap(), &decoded));
    let twin = original.detached();
    assert!(twin.shares_data(&original));
    assert!(twin.decoded().is_none());
    assert_eq!(*twin.decode().unwrap(), *decoded);
    assert!(!Arc::ptr_eq(&twin.decode().unwrap(), &decoded));
}

#[test]
fn the_lister_decodes_only_what_it_returns_and_skips_undecodable_objects() {
    let cache: Indexer<Compact<ConfigMap>> = Indexer::new(Indexers::new().with_namespace());
    cache.add(compact(&json("web-1", 1, "web"))).unwrap();
    cache.add(compact(&json("db-1", 1, "db"))).unwrap();
    // Valid JSON with good metadata, but `data` is not a map: cached, never returned.
    cache
        .add(compact(
            r#"{"metadata":{"name":"broken","namespace":"ns","labels":{"app":"web"}},"data":5}"#,
        ))
        .unwrap();
    let lister = CompactLister::new(cache.clone());
    let web: Selector = Expression::Equal("app".into(), "web".into()).into();
    let found = lister.namespace("ns").list(&web);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].metadata.name.as_deref(), Some("web-1"));
    assert_eq!(lister.list(&Selector::default()).len(), 2);
    assert!(lister.namespace("ns").get("broken").is_none());
    for stored in cache.list() {
        assert!(
            stored.decoded().is_none(),
            "reads leave the cached objects compact"
        );
    }
    assert!(lister.namespace("other").get("web-1").is_none());
}

#[test]
fn recently_decoded_objects_are_served_until_their_version_changes() {
    let cache: Indexer<Compact<ConfigMap>> = Indexer::new(Indexers::new().with_namespace());
    cache.add(compact(&json("a", 1, "web"))).unwrap();
    let lister = CompactLister::new(cache.clone()).recently_decoded(10);
    let key = ObjectKey::namespaced("ns", "a").unwrap();
    let first = lister.get_by_key(&key).unwrap();
    assert!(Arc::ptr_eq(
        &first,
        &lister.namespace("ns").get("a").unwrap()
    ));
    assert!(Arc::ptr_eq(&first, &lister.list(&Selector::default())[0]));
    cache.update(compact(&json("a", 2, "web"))).unwrap();
    let second = lister.get_by_key(&key).unwrap();
    assert!(!Arc::ptr_eq(&first, &second));
    assert_eq!(second.metadata.resource_version.as_deref(), Some("2"));
    let plain = CompactLister::new(cache);
    assert!(!Arc::ptr_eq(
        &plain.get_by_key(&key).unwrap(),
        &plain.get_by_key(&key).unwrap()
    ));
}

#[test]
fn a_compact_cache_indexes_by_lean_metadata_without_decoding() {
    let cache: Indexer<Compact<ConfigMap>> = Indexer::new(Indexers::new().with_namespace().with(
        "app",
        |o: &Compact<ConfigMap>| {
            o.meta()
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| *k == "app")
                .map(|(_, v)| v.clone())
                .collect()
        },
    ));
    let codec = Codec::new(CodecOptions::new().encoding(Encoding::Zstd));
    let transform = codec.transform::<ConfigMap>();
    cache
        .add(transform(compact(&json("a", 1, "web"))).unwrap())
        .unwrap();
    cache
        .update(transform(compact(&json("a", 2, "db"))).unwrap())
        .unwrap();
    assert!(cache.by_index("app", "web").unwrap().is_empty());
    assert_eq!(cache.by_index("app", "db").unwrap().len(), 1);
    assert!(cache.list().iter().all(|o| o.decoded().is_none()));
    let lister = CompactLister::new(cache);
    assert_eq!(
        lister.by_index("app", "db").unwrap()[0]
            .metadata
            .resource_version
            .as_deref(),
        Some("2")
    );
}
