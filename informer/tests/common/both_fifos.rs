//! [`on_both_fifos!`]: an informer test run once per fifo. Written against the crate's public
//! path `informer::…`, so that the crate's unit tests compile this file too.

/// Runs the async test `$test` (a function of a `FifoKind`) as two tests, `$test::deltas` and
/// `$test::in_order`, one per fifo. The `tokio::test` arguments follow the name.
macro_rules! on_both_fifos {
    ($test:ident $(, $($arg:tt)*)?) => {
        mod $test {
            #[tokio::test$(($($arg)*))?]
            async fn deltas() {
                super::$test(informer::FifoKind::Deltas).await;
            }

            #[tokio::test$(($($arg)*))?]
            async fn in_order() {
                super::$test(informer::FifoKind::InOrder).await;
            }
        }
    };
}
pub(crate) use on_both_fifos;
