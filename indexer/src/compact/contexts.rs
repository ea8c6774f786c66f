//! Compression and decompression with contexts and buffers kept per thread, so that an object
//! pays neither for a zstd context's setup nor for a fresh output buffer. A call made while the
//! same thread's context is already in use (a nested call) gets a fresh one instead.

use std::cell::RefCell;

use zstd::zstd_safe::{self, CCtx, DCtx};

use super::DecodeError;
use super::dictionary::Dictionary;

/// The largest JSON a compressed body may claim to decompress to.
const MAX_JSON_BYTES: u64 = 1 << 30;

thread_local! {
    static COMPRESSOR: RefCell<Option<CCtx<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<DCtx<'static>>> = const { RefCell::new(None) };
    static OUTPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `work` with this thread's output buffer (or a fresh one when it is in use).
fn with_output<R>(work: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    OUTPUT.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => work(&mut buffer),
        Err(_) => work(&mut Vec::new()),
    })
}

/// Runs `work` with this thread's context of `cell` (created on first use; a fresh one when it
/// is in use). `None` when zstd cannot create a context (out of memory).
fn with_context<C, R>(
    cell: &'static std::thread::LocalKey<RefCell<Option<C>>>,
    create: fn() -> Option<C>,
    work: impl FnOnce(&mut C) -> R,
) -> Option<R> {
    cell.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = create();
            }
            slot.as_mut().map(work)
        }
        Err(_) => create().as_mut().map(work),
    })
}

/// What a compression failed with, and the JSON it was given back.
pub(crate) type Refused = (String, String);

/// `json` as one zstd frame at `level`, with `dictionary` if given. The JSON is freed before
/// the frame is allocated (so the frame can take its place in the heap).
pub(crate) fn zstd_compress(
    json: String,
    level: i32,
    dictionary: Option<&Dictionary>,
) -> Result<Box<[u8]>, Refused> {
    with_output(|out| {
        out.clear();
        out.reserve(zstd_safe::compress_bound(json.len()));
        let bytes = json.as_bytes();
        let written = with_context(&COMPRESSOR, CCtx::try_create, |cctx| match dictionary {
            Some(dictionary) => cctx.compress_using_cdict(out, bytes, dictionary.compressor()),
            None => cctx.compress(out, bytes, level),
        });
        match written {
            Some(Ok(written)) if written <= out.len() => {
                drop(json);
                Ok(Box::from(&out[..written]))
            }
            Some(Ok(_)) => Err(("zstd reported more bytes than it wrote".into(), json)),
            Some(Err(code)) => Err((zstd_safe::get_error_name(code).to_owned(), json)),
            None => Err(("zstd could not create a compression context".into(), json)),
        }
    })
}

/// Calls `read` with the JSON of the zstd `frame`.
pub(crate) fn zstd_decompress<R>(
    frame: &[u8],
    dictionary: Option<&Dictionary>,
    read: impl FnOnce(&[u8]) -> R,
) -> Result<R, DecodeError> {
    let failed = |reason: String| DecodeError::Decompress {
        encoding: "zstd",
        reason,
    };
    let size = match zstd_safe::get_frame_content_size(frame) {
        Ok(Some(size)) if size <= MAX_JSON_BYTES => size as usize,
        Ok(Some(size)) => return Err(failed(format!("it claims {size} bytes"))),
        Ok(None) | Err(_) => return Err(failed("its frame header has no content size".into())),
    };
    with_output(|out| {
        out.clear();
        out.reserve(size);
        let written = with_context(&DECOMPRESSOR, DCtx::try_create, |dctx| match dictionary {
            Some(dictionary) => dctx.decompress_using_ddict(out, frame, dictionary.decompressor()),
            None => dctx.decompress(out, frame),
        })
        .ok_or_else(|| failed("zstd could not create a decompression context".into()))?;
        let written = written.map_err(|code| failed(zstd_safe::get_error_name(code).to_owned()))?;
        match out.get(..written) {
            Some(json) if written == size => Ok(read(json)),
            _ => Err(failed(format!("{written} bytes instead of {size}"))),
        }
    })
}

/// `json` as its length (4 bytes, little-endian) and one lz4 block. The JSON is freed before
/// the block is allocated.
pub(crate) fn lz4_compress(json: String) -> Result<Box<[u8]>, Refused> {
    let Ok(length) = u32::try_from(json.len()) else {
        return Err(("the JSON is over 4 GiB".into(), json));
    };
    with_output(|out| {
        out.clear();
        out.resize(4 + lz4_flex::block::get_maximum_output_size(json.len()), 0);
        out[..4].copy_from_slice(&length.to_le_bytes());
        match lz4_flex::block::compress_into(json.as_bytes(), &mut out[4..]) {
            Ok(written) if 4 + written <= out.len() => {
                drop(json);
                Ok(Box::from(&out[..4 + written]))
            }
            Ok(_) => Err(("lz4 reported more bytes than it wrote".into(), json)),
            Err(e) => Err((e.to_string(), json)),
        }
    })
}

/// Calls `read` with the JSON of an lz4 body made by [`lz4_compress`].
pub(crate) fn lz4_decompress<R>(
    body: &[u8],
    read: impl FnOnce(&[u8]) -> R,
) -> Result<R, DecodeError> {
    let failed = |reason: String| DecodeError::Decompress {
        encoding: "lz4",
        reason,
    };
    let (length, block) = body
        .split_first_chunk::<4>()
        .ok_or_else(|| failed("it has no length".into()))?;
    let size = u32::from_le_bytes(*length);
    if u64::from(size) > MAX_JSON_BYTES {
        return Err(failed(format!("it claims {size} bytes")));
    }
    let size = size as usize;
    with_output(|out| {
        out.clear();
        out.resize(size, 0);
        let written =
            lz4_flex::block::decompress_into(block, out).map_err(|e| failed(e.to_string()))?;
        match out.get(..written) {
            Some(json) if written == size => Ok(read(json)),
            _ => Err(failed(format!("{written} bytes instead of {size}"))),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = r#"{"kind":"ConfigMap","data":{"a":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}"#;

    #[test]
    fn zstd_and_lz4_round_trip_and_refuse_damaged_bodies() {
        let frame = zstd_compress(JSON.into(), 3, None).unwrap();
        assert_eq!(
            zstd_decompress(&frame, None, <[u8]>::to_vec).unwrap(),
            JSON.as_bytes()
        );
        assert!(zstd_decompress(&frame[..frame.len() / 2], None, |_| ()).is_err());
        assert!(zstd_decompress(b"not zstd", None, |_| ()).is_err());

        let block = lz4_compress(JSON.into()).unwrap();
        assert_eq!(
            lz4_decompress(&block, <[u8]>::to_vec).unwrap(),
            JSON.as_bytes()
        );
        assert!(lz4_decompress(&block[..block.len() - 3], |_| ()).is_err());
        assert!(lz4_decompress(b"ab", |_| ()).is_err());
        assert!(lz4_decompress(&[255, 255, 255, 255, 0], |_| ()).is_err());
    }

    #[test]
    fn a_nested_call_uses_contexts_of_its_own() {
        let frame = zstd_compress(JSON.into(), 3, None).unwrap();
        let nested = zstd_decompress(&frame, None, |outer| {
            let inner = zstd_decompress(&frame, None, <[u8]>::to_vec).unwrap();
            (outer.to_vec(), inner)
        })
        .unwrap();
        assert_eq!(nested.0, nested.1);
    }
}
