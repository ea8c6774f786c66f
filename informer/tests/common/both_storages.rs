//! [`on_both_fifos_and_compact!`]: an informer test run on both fifos, and on compact objects.

/// Runs the async test `$test` (a function of a `FifoKind`, generic over the
/// [`TestObject`](super::TestObject) it runs on) as three tests: on typed ConfigMaps per fifo
/// (`$test::deltas`, `$test::in_order`) and on compact ones on the default fifo
/// (`$test::compact`).
macro_rules! on_both_fifos_and_compact {
    ($test:ident $(, $($arg:tt)*)?) => {
        mod $test {
            use k8s_openapi::api::core::v1::ConfigMap;

            #[tokio::test$(($($arg)*))?]
            async fn deltas() {
                super::$test::<ConfigMap>(informer::FifoKind::Deltas).await;
            }

            #[tokio::test$(($($arg)*))?]
            async fn in_order() {
                super::$test::<ConfigMap>(informer::FifoKind::InOrder).await;
            }

            #[tokio::test$(($($arg)*))?]
            async fn compact() {
                super::$test::<indexer::compact::Compact<ConfigMap>>(
                    informer::FifoKind::default(),
                )
                .await;
            }
        }
    };
}
pub(crate) use on_both_fifos_and_compact;
