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
