//! A per-kind zstd dictionary: trained on the first objects a codec sees, prepared once for
//! compression and once for decompression, and shared by every object compressed with it.

use std::fmt;

use zstd::zstd_safe::{CDict, DDict};

/// A trained dictionary, prepared for both directions.
pub(crate) struct Dictionary {
    compressor: CDict<'static>,
    decompressor: DDict<'static>,
    bytes: usize,
}

impl Dictionary {
    /// Trains a dictionary of at most `max_bytes` on `samples`, prepared for compression at
    /// `level`. Fails when zstd cannot train one (too few or too small samples, say).
    pub(crate) fn train(
        samples: &[Box<[u8]>],
        max_bytes: usize,
        level: i32,
    ) -> Result<Self, String> {
        let trained = zstd::dict::from_samples(samples, max_bytes).map_err(|e| e.to_string())?;
        Self::prepare(&trained, level)
    }

    /// Prepares the raw dictionary `raw` for compression at `level` and for decompression.
    pub(crate) fn prepare(raw: &[u8], level: i32) -> Result<Self, String> {
        let compressor =
            CDict::try_create(raw, level).ok_or("zstd refused the dictionary for compression")?;
        let decompressor =
            DDict::try_create(raw).ok_or("zstd refused the dictionary for decompression")?;
        Ok(Self {
            compressor,
            decompressor,
            bytes: raw.len(),
        })
    }

    pub(crate) fn compressor(&self) -> &CDict<'static> {
        &self.compressor
    }

    pub(crate) fn decompressor(&self) -> &DDict<'static> {
        &self.decompressor
    }

    /// The raw dictionary's size.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "zstd dictionary of {} bytes", self.bytes)
    }
}
