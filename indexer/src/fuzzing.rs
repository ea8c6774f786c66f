//! Properties of [`ObjectKey`] parsing, checked by the fuzz target `object_key_parse`
//! (`fuzz/`) and by the property tests. Not a stable API.

use crate::{Error, ObjectKey};

/// `input` parsed as an [`ObjectKey`]: never a panic; a refusal is [`Error::InvalidKey`]
/// naming the input; a key that parses displays as exactly `input`, splits into the parts
/// that rebuild it, and parses back to an equal key.
pub fn check_object_key(input: &str) -> Result<(), String> {
    let key = match input.parse::<ObjectKey>() {
        Ok(key) => key,
        Err(Error::InvalidKey { key, .. }) if key == input => return Ok(()),
        Err(e) => return Err(format!("{input:?} refused with an unexpected error: {e}")),
    };
    if key.to_string() != input || key.as_str() != input {
        return Err(format!("{input:?} displays as {key}"));
    }
    let rebuilt = ObjectKey::new(key.namespace(), key.name())
        .map_err(|e| format!("the parts of {input:?} do not rebuild it: {e}"))?;
    let reparsed: ObjectKey = key
        .to_string()
        .parse()
        .map_err(|e| format!("{input:?} does not parse back: {e}"))?;
    if rebuilt != key || reparsed != key {
        return Err(format!("{input:?} → {rebuilt} / {reparsed} differ"));
    }
    if key.name().is_empty() || key.name().contains('/') {
        return Err(format!("{input:?} parsed to a bad name {:?}", key.name()));
    }
    Ok(())
}

/// The encodings and managedFields choices [`check_compact_round_trip`] runs `input` through.
fn round_trip_codecs() -> Vec<crate::compact::Codec> {
    use crate::compact::{Codec, CodecOptions, Encoding};
    let mut codecs = Vec::new();
    for keep in [false, true] {
        for encoding in [Encoding::Json, Encoding::Zstd, Encoding::Lz4] {
            let options = CodecOptions::new()
                .encoding(encoding)
                .keep_managed_fields(keep);
            codecs.push(Codec::new(options));
        }
    }
    codecs
}

/// `input` read as a compact `K` and as a typed `K`: never a panic; whatever the typed mode
/// accepts, the compact mode accepts too, with the same eager metadata; and in every encoding
/// (managedFields kept or dropped) a read returns exactly the typed object (without
/// managedFields when dropped). Input the typed mode refuses may still be cached compactly (it
/// is valid JSON), but then must not decode into a different object than typed decoding of the
/// stored JSON gives.
pub fn check_compact_round_trip<K>(input: &[u8]) -> Result<(), String>
where
    K: kube::Resource + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    check_compact_round_trip_with::<K>(input, &round_trip_codecs())
}

/// [`check_compact_round_trip`] with these codecs (a dictionary codec trained beforehand, say).
pub fn check_compact_round_trip_with<K>(
    input: &[u8],
    codecs: &[crate::compact::Codec],
) -> Result<(), String>
where
    K: kube::Resource + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    use std::sync::Arc;

    use kube::Resource;

    use crate::compact::Compact;

    let typed = serde_json::from_slice::<K>(input);
    let compact = match serde_json::from_slice::<Compact<K>>(input) {
        Ok(compact) => compact,
        Err(e) if typed.is_ok() => return Err(format!("typed accepts, compact refuses: {e}")),
        Err(_) => return Ok(()),
    };
    if let Ok(typed) = &typed {
        check_eager_meta(compact.meta(), typed.meta())?;
    }
    for codec in codecs {
        let stored = codec.encode(Arc::new(compact.clone()));
        let decoded = stored.decode();
        let json = stored
            .to_json()
            .map_err(|e| format!("{codec:?}: the stored JSON does not read back: {e}"))?;
        let from_stored = serde_json::from_slice::<K>(&json);
        match (&typed, decoded) {
            (Ok(typed), Ok(decoded)) => {
                let mut expected = serde_json::from_slice::<K>(input)
                    .map_err(|e| format!("typed decoding changed its mind: {e}"))?;
                if !codec.options().keep_managed_fields {
                    expected.meta_mut().managed_fields = None;
                }
                if *decoded != expected {
                    return Err(format!(
                        "{codec:?}: read {decoded:?}, typed {expected:?} (from {typed:?})"
                    ));
                }
                check_eager_meta(stored.meta(), decoded.meta())?;
            }
            (Ok(_), Err(e)) => return Err(format!("{codec:?}: typed decodes, compact fails: {e}")),
            (Err(_), decoded) => {
                if decoded.as_deref().ok() != from_stored.as_ref().ok() {
                    return Err(format!("{codec:?}: a read differs from its stored JSON"));
                }
            }
        }
    }
    Ok(())
}

/// The eager fields of the lean metadata equal the typed object's.
fn check_eager_meta(
    lean: &kube::core::ObjectMeta,
    typed: &kube::core::ObjectMeta,
) -> Result<(), String> {
    let eager = |m: &kube::core::ObjectMeta| kube::core::ObjectMeta {
        name: m.name.clone(),
        namespace: m.namespace.clone(),
        uid: m.uid.clone(),
        resource_version: m.resource_version.clone(),
        generation: m.generation,
        labels: m.labels.clone(),
        owner_references: m.owner_references.clone(),
        deletion_timestamp: m.deletion_timestamp.clone(),
        finalizers: m.finalizers.clone(),
        ..kube::core::ObjectMeta::default()
    };
    if *lean != eager(typed) {
        return Err(format!(
            "lean metadata {lean:?} differs from the typed {typed:?}"
        ));
    }
    Ok(())
}
