//! How a [`Codec`](super::Codec) stores objects: [`Encoding`] and [`CodecOptions`].

/// How a compact object's JSON is stored.
///
/// Measured over the benchmark's pods by `pipeline-bench codecs` (docs/benchmarks.md):
/// [`ZstdDictionary`](Encoding::ZstdDictionary) stores the fewest bytes per object and is the
/// default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Encoding {
    /// The JSON as it arrived (minified, as API servers send it), with `managedFields` cut out
    /// unless kept.
    Json,
    /// One zstd frame per object, without a dictionary.
    Zstd,
    /// One zstd frame per object, with a dictionary trained on the kind's first objects (those
    /// stay [`Json`](Encoding::Json) until replaced); [`Zstd`](Encoding::Zstd) if training fails.
    ZstdDictionary,
    /// One lz4 block per object (pure Rust).
    Lz4,
}

/// Options of a [`Codec`](super::Codec).
///
/// ```
/// use indexer::compact::{CodecOptions, Encoding};
///
/// let options = CodecOptions::new()
///     .encoding(Encoding::Zstd)
///     .keep_managed_fields(true)
///     .level(5);
/// assert_eq!(options.encoding_of(), Encoding::Zstd);
/// ```
#[derive(Debug, Clone)]
pub struct CodecOptions {
    pub(crate) encoding: Encoding,
    pub(crate) keep_managed_fields: bool,
    pub(crate) level: i32,
    pub(crate) dictionary_samples: usize,
    pub(crate) dictionary_bytes: usize,
}

impl Default for CodecOptions {
    fn default() -> Self {
        Self {
            encoding: Encoding::ZstdDictionary,
            keep_managed_fields: false,
            level: 3,
            dictionary_samples: 1_000,
            dictionary_bytes: 32 * 1024,
        }
    }
}

impl CodecOptions {
    /// The defaults: [`Encoding::ZstdDictionary`] at zstd level 3, a 32 KiB dictionary trained
    /// on the first 1 000 objects, `managedFields` dropped.
    pub fn new() -> Self {
        Self::default()
    }

    /// How objects are stored.
    pub fn encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        self
    }

    /// The encoding these options store objects in.
    pub fn encoding_of(&self) -> Encoding {
        self.encoding
    }

    /// Whether `metadata.managedFields` is kept in the stored objects (default: dropped, as
    /// controllers rarely read it and it is often half of an object).
    pub fn keep_managed_fields(mut self, keep: bool) -> Self {
        self.keep_managed_fields = keep;
        self
    }

    /// Whether these options keep `metadata.managedFields` in the stored objects.
    pub fn keeps_managed_fields(&self) -> bool {
        self.keep_managed_fields
    }

    /// The zstd compression level (default 3; zstd accepts 1 to 22, and negative levels for
    /// faster, larger frames).
    pub fn level(mut self, level: i32) -> Self {
        self.level = level;
        self
    }

    /// How many objects the dictionary is trained on (default 1 000), and its largest size in
    /// bytes (default 32 KiB). Objects seen before training stay uncompressed until replaced.
    pub fn dictionary(mut self, samples: usize, bytes: usize) -> Self {
        self.dictionary_samples = samples;
        self.dictionary_bytes = bytes;
        self
    }
}
