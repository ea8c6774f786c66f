//! [`OwnCacheLine`]: a value kept on cache lines of its own.

/// A value on cache lines of its own, so that spinning readers of it do not steal the lines
/// that a lock holder is writing (128 bytes: adjacent-line prefetch pairs lines).
#[repr(align(128))]
pub(crate) struct OwnCacheLine<T>(pub(crate) T);

impl<T> std::ops::Deref for OwnCacheLine<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
