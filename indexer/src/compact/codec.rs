//! [`Codec`]: the per-kind encoder of compact objects, applied as an informer transform.

use std::error::Error as StdError;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::body::Body;
use super::contexts;
use super::dictionary::Dictionary;
use super::json_text::cut_member;
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
/// use kube_rt_indexer::compact::{Codec, CodecOptions, Compact, Encoding};
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
    /// lean metadata (moved when `obj` is its only owner), or `obj` itself when there is
    /// nothing to change (already encoded, or plain JSON kept as is).
    pub fn encode<K>(&self, obj: Arc<Compact<K>>) -> Arc<Compact<K>> {
        let Body::Json {
            text,
            managed_fields,
        } = obj.body()
        else {
            return obj;
        };
        let options = &self.state.options;
        let stripped = match managed_fields {
            Some(span) if !options.keep_managed_fields => without_managed_fields(text, *span),
            _ => None,
        };
        let json = stripped.as_deref().unwrap_or(text);
        let compressed = match options.encoding {
            Encoding::Json => None,
            Encoding::Zstd => {
                Some(contexts::zstd_compress(json.as_bytes(), options.level, None).map(Body::Zstd))
            }
            Encoding::Lz4 => Some(contexts::lz4_compress(json.as_bytes()).map(Body::Lz4)),
            Encoding::ZstdDictionary => match self.dictionary(json) {
                Some(Some(dictionary)) => Some(
                    contexts::zstd_compress(json.as_bytes(), options.level, Some(&dictionary))
                        .map(|frame| Body::ZstdDictionary { frame, dictionary }),
                ),
                Some(None) => Some(
                    contexts::zstd_compress(json.as_bytes(), options.level, None).map(Body::Zstd),
                ),
                None => None,
            },
        };
        let body = match compressed {
            Some(Ok(body)) => body,
            Some(Err(reason)) => {
                tracing::warn!(
                    object = ?obj.shared_meta().name,
                    %reason,
                    "could not compress a cached object; it is kept as JSON"
                );
                plain(stripped, text, *managed_fields)
            }
            None if stripped.is_none() => return obj,
            None => plain(stripped, text, *managed_fields),
        };
        obj.with_body(body)
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

/// `text` without its `metadata.managedFields` member at `span` (and without any repetition of
/// it). `None` when nothing could be cut.
fn without_managed_fields(text: &str, span: Span) -> Option<String> {
    let mut stripped = cut_member(text, span.start as usize, span.end as usize)?;
    let mut repeated = span.repeated;
    while repeated {
        match scan(&stripped)
            .ok()
            .and_then(|scanned| scanned.managed_fields)
        {
            Some(next) => {
                stripped = cut_member(&stripped, next.start as usize, next.end as usize)?;
                repeated = next.repeated;
            }
            None => break,
        }
    }
    Some(stripped)
}

/// The JSON body: stripped if it was, else the text as it came (with its managedFields span).
fn plain(stripped: Option<String>, text: &str, managed_fields: Option<Span>) -> Body {
    match stripped {
        Some(json) => Body::Json {
            text: json.into_boxed_str(),
            managed_fields: None,
        },
        None => Body::Json {
            text: Box::from(text),
            managed_fields,
        },
    }
}
