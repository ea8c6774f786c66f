//! The lock that guards a queue's state.
//!
//! Every queue operation takes this lock once, so its cost is a large part of an operation's
//! cost. `parking_lot::Mutex` needs two atomic read-modify-write instructions per lock/unlock
//! pair (about 22 ns together on the 2-core benchmark machine, where one atomic costs about
//! 10 ns); this lock needs one, because it releases with a plain store (about 11 ns a pair).
//! The price is that it cannot park waiters: a waiter spins briefly, then yields its thread
//! until the lock is free. That is the right trade here because the lock only guards
//! in-memory work of a few tens of nanoseconds (growing a buffer is the longest case), is
//! never held across an `.await`, and never calls user code while held.

use std::cell::UnsafeCell;
use std::hint::spin_loop;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// Busy-wait rounds before a waiter starts yielding its thread.
const SPINS: u32 = 64;

/// A mutual-exclusion lock released with a plain store; see the module documentation.
pub(crate) struct Mutex<T> {
    locked: AtomicBool,
    /// Set while a thread waits in `lock`: `try_lock` then fails, so that a thread retrying
    /// `try_lock` in a loop cannot keep a waiting `lock` out.
    contended: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a `MutexGuard`, and at most one guard exists at a
// time (it is created only after `locked` went from false to true with Acquire ordering, and
// its drop stores false with Release ordering). So the value moves between threads but is
// never shared: `T: Send` suffices, as for `std::sync::Mutex`.
unsafe impl<T: Send> Sync for Mutex<T> {}

impl<T> Mutex<T> {
    /// A lock guarding `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self {
            locked: AtomicBool::new(false),
            contended: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Waits until the lock is free and takes it.
    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        if self
            .locked
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            self.lock_contended();
        }
        MutexGuard { mutex: self }
    }

    /// Takes the lock if it is free right now.
    #[inline]
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        // Look before trying: a failed read-modify-write would still take the cache line
        // away from the holder.
        if self.locked.load(Ordering::Relaxed) || self.contended.load(Ordering::Relaxed) {
            return None;
        }
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| MutexGuard { mutex: self })
    }

    #[cold]
    fn lock_contended(&self) {
        let mut spins = 0;
        loop {
            self.contended.store(true, Ordering::Relaxed);
            while self.locked.load(Ordering::Relaxed) {
                if spins < SPINS {
                    spins += 1;
                    spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            if self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                // Another waiter may still be spinning: it raises the flag again on its next
                // round, so at worst one `try_lock` gets through meanwhile.
                self.contended.store(false, Ordering::Relaxed);
                return;
            }
        }
    }
}

/// Access to the value of a locked [`Mutex`]; releases the lock when dropped.
pub(crate) struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `Sync` above), so no `&mut T` exists.
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one and `&mut self` makes this borrow unique.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.mutex.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::Mutex;

    #[test]
    fn serializes_threads() {
        let counter = Arc::new(Mutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || {
                    for _ in 0..100_000 {
                        *counter.lock() += 1;
                    }
                })
            })
            .collect();
        for thread in threads {
            assert!(thread.join().is_ok());
        }
        assert_eq!(*counter.lock(), 400_000);
    }
}
