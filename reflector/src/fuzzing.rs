//! Properties of [`WatchLineDecoder`], checked by the fuzz target `watch_line_decoder`
//! (`fuzz/`) and by the property tests. Not a stable API.

use kube::api::WatchEvent;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{DecodedLine, WatchDecodeError, WatchLineDecoder};

/// Decodes `body` cut into chunks at `cuts` (offsets into `body`, any order; duplicates and
/// offsets past the end are allowed) and then ends the stream. Returns every item in a
/// comparable form: an event as its type and its object's JSON, an error as its variant.
/// Fails if the decoder ever holds more than `max_line_len` bytes, or anything at the end.
pub fn decode_in_chunks<K>(
    body: &[u8],
    cuts: &[usize],
    max_line_len: usize,
) -> Result<Vec<String>, String>
where
    K: DeserializeOwned + Serialize,
{
    let mut ends: Vec<usize> = cuts.iter().map(|&cut| cut.min(body.len())).collect();
    ends.push(body.len());
    ends.sort_unstable();
    let mut decoder = WatchLineDecoder::<K>::with_max_line_len(max_line_len);
    let mut items = Vec::new();
    let mut start = 0;
    for end in ends {
        let chunk = body.get(start..end).unwrap_or_default();
        items.extend(decoder.decode_chunk(chunk).map(describe));
        if decoder.buffered() > max_line_len {
            return Err(format!(
                "{} bytes buffered with a limit of {max_line_len}",
                decoder.buffered()
            ));
        }
        start = end;
    }
    items.extend(decoder.finish().map(describe));
    if decoder.buffered() != 0 {
        return Err(format!("{} bytes left after finish", decoder.buffered()));
    }
    Ok(items)
}

/// One fuzz input: the first two bytes choose the line limit (0 → the default), the third
/// seeds where the rest, the body, is cut. The body must decode to the same items cut into
/// chunks as in one piece, never panic, and never buffer more than the limit.
pub fn check_watch_line_decoder<K>(input: &[u8]) -> Result<(), String>
where
    K: DeserializeOwned + Serialize,
{
    let (limit, seed, body) = match input {
        [a, b, seed, body @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), *seed, body),
        _ => return Ok(()),
    };
    let max_line_len = if limit == 0 {
        crate::DEFAULT_MAX_WATCH_LINE_LEN
    } else {
        limit
    };
    let cuts = cuts(seed, body.len());
    let whole = decode_in_chunks::<K>(body, &[], max_line_len)?;
    let split = decode_in_chunks::<K>(body, &cuts, max_line_len)?;
    if whole != split {
        return Err(format!(
            "cut at {cuts:?}, the body decodes to {split:?} instead of {whole:?}"
        ));
    }
    Ok(())
}

/// Up to 16 cut offsets in `0..=len` from a small xorshift generator seeded by `seed`.
fn cuts(seed: u8, len: usize) -> Vec<usize> {
    let mut state = u32::from(seed) | 0x9e37_7900;
    (0..usize::from(seed % 17))
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            usize::try_from(state).unwrap_or(usize::MAX) % (len + 1)
        })
        .collect()
}

/// An item as text: `ADDED {json}`, `BOOKMARK rv`, `ERROR {status json}`, or the error variant
/// (its message quotes what was buffered, which depends on the chunking).
fn describe<K: Serialize>(item: DecodedLine<K>) -> String {
    match item {
        Ok(WatchEvent::Added(obj)) => format!("ADDED {}", json(&obj)),
        Ok(WatchEvent::Modified(obj)) => format!("MODIFIED {}", json(&obj)),
        Ok(WatchEvent::Deleted(obj)) => format!("DELETED {}", json(&obj)),
        Ok(WatchEvent::Bookmark(bookmark)) => format!("BOOKMARK {}", json(&bookmark)),
        Ok(WatchEvent::Error(status)) => format!("ERROR {}", json(&*status)),
        Err(WatchDecodeError::LineTooLong { limit, .. }) => format!("line too long ({limit})"),
        Err(WatchDecodeError::UnknownType { event_type, .. }) => {
            format!("unknown type {event_type:?}")
        }
        Err(WatchDecodeError::Malformed { .. }) => "malformed".to_string(),
        Err(WatchDecodeError::Truncated { len, .. }) => format!("truncated ({len} bytes)"),
    }
}

/// The JSON text of a decoded value.
fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| format!("<unserializable: {e}>"))
}
