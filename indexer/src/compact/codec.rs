//! [`Codec`]: the per-kind encoder of compact objects, applied as an informer transform.

use std::error::Error as StdError;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::body::Body;
use super::contexts;
use super::dictionary::Dictionary;
use super::json_text::member_cut;
use super::scan::{Span, scan};
use super::{CodecOptions, Compact, Encoding};

/// Where a codec's dictionary training stands ([`Codec::dictionary_state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DictionaryState {
    /// The codec does not use a dictionary.
    Unused,
    /// Samples collected so far, of the number training waits for.
    Collecting {
        /// Objects sampled so far.
        samples: usize,
        /// Objects training waits for.
        of: usize,
    },
    /// Trained: objects are compressed with a dictionary of this many bytes.
    Trained {
        /// The dictionary's size.
        bytes: usize,
    },
    /// Training failed; objects are compressed without a dictionary.
    Failed,
}

/// Encodes the compact objects of one kind: drops `metadata.managedFields` from the stored JSON
/// (unless told to keep them) and compresses it as its [`CodecOptions`] say.
///
/// One codec per kind, shared by the informers of that kind (clones share it, dictionary
/// included). Apply it on the reflector's side, before the objects are queued, with
/// [`transform`](Self::transform); objects it has encoded already pass through unchanged.
/// Encoding never fails: an object that cannot be compressed is kept as JSON, with a warning.
///
/// ```
/// use std::sync::Arc;
/// use indexer::compact::{Codec, CodecOptions, Compact, Encoding};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// let json = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","managedFields":[{"manager":"kubectl"}]},"data":{"k":"v"}}"#;
/// let compact: Compact<ConfigMap> = serde_json::from_str(json).unwrap();
///
/// let codec = Codec::new(CodecOptions::new().encoding(Encoding::Zstd));
/// let stored = codec.encode(Arc::new(compact));
/// assert_eq!(stored.encoding(), Encoding::Zstd);
/// let map = stored.decode().unwrap();
/// assert!(map.metadata.managed_fields.is_none());
/// assert_eq!(map.data.as_ref().unwrap()["k"], "v");
/// ```
#[derive(Debug, Clone)]
pub struct Codec {
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    options: CodecOptions,
    /// The samples collected for training, until it runs.
    samples: Mutex<Vec<Box<[u8]>>>,
    /// Set once training ran: the dictionary, or `None` when it failed.
    dictionary: OnceLock<Option<Arc<Dictionary>>>,
}

/// What a transform built by [`Codec::transform`] returns.
pub type TransformResult<K> = Result<Arc<Compact<K>>, Box<dyn StdError + Send + Sync>>;

impl Codec {
    /// A codec with `options` (and, for [`Encoding::ZstdDictionary`], no dictionary yet).
    pub fn new(options: CodecOptions) -> Self {
        Self {
            state: Arc::new(State {
                options,
                samples: Mutex::new(Vec::new()),
                dictionary: OnceLock::new(),
            }),
        }
    }

    /// The options this codec was built with.
    pub fn options(&self) -> &CodecOptions {
        &self.state.options
    }

    /// Where dictionary training stands.
    pub fn dictionary_state(&self) -> DictionaryState {
        if self.state.options.encoding != Encoding::ZstdDictionary {
            return DictionaryState::Unused;
        }
        match self.state.dictionary.get() {
            Some(Some(dictionary)) => DictionaryState::Trained {
                bytes: dictionary.bytes(),
            },
            Some(None) => DictionaryState::Failed,
            None => DictionaryState::Collecting {
                samples: self.state.samples.lock().len(),
                of: self.state.options.dictionary_samples,
            },
        }
    }

    /// The object in this codec's stored form: a new object sharing nothing with `obj` but its
    /// lean metadata (moved when `obj` is its only owner, as is the JSON, which is then edited
    /// in place), or `obj` itself when there is nothing to change (already encoded, or plain
    /// JSON kept as is).
    pub fn encode<K>(&self, obj: Arc<Compact<K>>) -> Arc<Compact<K>> {
        let options = &self.state.options;
        let Body::Json { managed_fields, .. } = obj.body() else {
            return obj;
        };
        let strip = managed_fields.filter(|_| !options.keep_managed_fields);
        if options.encoding == Encoding::Json && strip.is_none() {
            return obj;
        }
        let (meta, body) = obj.into_parts();
        let Body::Json {
            text,
            mut managed_fields,
        } = body
        else {
            return Compact::from_parts(meta, body);
        };
        let mut json = String::from(text);
        if let Some(span) = strip
            && strip_managed_fields(&mut json, span)
        {
            managed_fields = None;
        }
        let level = options.level;
        let body = match options.encoding {
            Encoding::Json => Ok(json_body(json, managed_fields)),
            Encoding::Zstd => contexts::zstd_compress(json, level, None).map(Body::Zstd),
            Encoding::Lz4 => contexts::lz4_compress(json).map(Body::Lz4),
            Encoding::ZstdDictionary => match self.dictionary(&json) {
                Some(Some(dictionary)) => contexts::zstd_compress(json, level, Some(&dictionary))
                    .map(|frame| Body::ZstdDictionary { frame, dictionary }),
                Some(None) => contexts::zstd_compress(json, level, None).map(Body::Zstd),
                None => Ok(json_body(json, managed_fields)),
            },
        };
        let body = body.unwrap_or_else(|(reason, json)| {
            tracing::warn!(
                object = ?meta.name,
                %reason,
                "could not compress a cached object; it is kept as JSON"
            );
            json_body(json, managed_fields)
        });
        Compact::from_parts(meta, body)
    }

    /// This codec as a transform for an informer (or a `DeltaFifo`) of compact objects:
    /// [`encode`](Self::encode), which never fails.
    pub fn transform<K>(
        &self,
    ) -> impl Fn(Arc<Compact<K>>) -> TransformResult<K> + Send + Sync + 'static {
        let codec = self.clone();
        move |obj| Ok(codec.encode(obj))
    }

    /// The dictionary to compress `json` with: `Some(Some(_))` once trained, `Some(None)` when
    /// training failed, `None` while samples are collected (`json` becomes one of them; the
    /// last one trains the dictionary, on this thread).
    fn dictionary(&self, json: &str) -> Option<Option<Arc<Dictionary>>> {
        if let Some(trained) = self.state.dictionary.get() {
            return Some(trained.clone());
        }
        let options = &self.state.options;
        let mut samples = self.state.samples.lock();
        if let Some(trained) = self.state.dictionary.get() {
            return Some(trained.clone());
        }
        samples.push(Box::from(json.as_bytes()));
        if samples.len() < options.dictionary_samples {
            return None;
        }
        let trained = match Dictionary::train(&samples, options.dictionary_bytes, options.level) {
            Ok(dictionary) => Some(Arc::new(dictionary)),
            Err(reason) => {
                tracing::warn!(
                    %reason,
                    samples = samples.len(),
                    "could not train a compression dictionary; objects are compressed without one"
                );
                None
            }
        };
        *samples = Vec::new();
        Some(self.state.dictionary.get_or_init(|| trained).clone())
    }
}

/// Cuts `metadata.managedFields` (at `span`, and any repetition of it) out of `json`, in
/// place. Whether it did.
fn strip_managed_fields(json: &mut String, span: Span) -> bool {
    let mut next = Some(span);
    let mut cut_any = false;
    while let Some(span) = next {
        let Some(cut) = member_cut(json, span.start as usize, span.end as usize) else {
            break;
        };
        json.replace_range(cut, "");
        cut_any = true;
        next = if span.repeated {
            scan(json).ok().and_then(|scanned| scanned.managed_fields)
        } else {
            None
        };
    }
    cut_any
}

/// The JSON kept as it is.
fn json_body(json: String, managed_fields: Option<Span>) -> Body {
    Body::Json {
        text: json.into_boxed_str(),
        managed_fields,
    }
}
