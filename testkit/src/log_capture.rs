//! [`LogCapture`]: a tracing subscriber that keeps what is logged, for tests of log output.

use std::sync::Arc;

use parking_lot::Mutex;

/// A tracing subscriber that keeps each event as a line of `LEVEL field=value ...` (the message
/// is the field `message`). Install it with `tracing::subscriber::set_default` in a
/// current-thread test, so the tasks the test spawns log to it too.
#[derive(Clone, Debug, Default)]
pub struct LogCapture {
    lines: Arc<Mutex<Vec<String>>>,
}

impl LogCapture {
    /// Every line logged so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().clone()
    }
}

impl tracing::Subscriber for LogCapture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut line = event.metadata().level().to_string();
        event.record(
            &mut |field: &tracing::field::Field, value: &dyn std::fmt::Debug| {
                line.push_str(&format!(" {}={value:?}", field.name()));
            },
        );
        self.lines.lock().push(line);
    }

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
}
