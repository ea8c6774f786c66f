//! Printers of batch/v1 kinds: Job (`STATUS COMPLETIONS DURATION AGE`) and CronJob.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::{AGE, CONTAINERS, IMAGES, KindPrinter, NAME, Row, SELECTOR, col, text};
use super::format::{arr, bool_ptr, containers, has, int, label_selector, len, s};
use super::time::{self, age, since};

/// Printers of batch kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "batch",
        kind: "Job",
        columns: &[
            NAME,
            text("Status", "Status of the job."),
            text(
                "Completions",
                "The number of pods which reached phase Succeeded.",
            ),
            text("Duration", "Time required to complete the job."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        row: job,
    },
    KindPrinter {
        group: "batch",
        kind: "CronJob",
        columns: &[
            NAME,
            text("Schedule", "The schedule in Cron format."),
            text("Timezone", "The time zone of the schedule."),
            col(
                "Suspend",
                "boolean",
                "Whether subsequent executions are suspended.",
            ),
            col("Active", "integer", "The number of running jobs."),
            text("Last Schedule", "Time since the job was last scheduled."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        row: |o, now| {
            let (names, images) =
                containers(arr(o, "/spec/jobTemplate/spec/template/spec/containers"));
            let last = if has(o, "/status/lastScheduleTime") {
                since(o.pointer("/status/lastScheduleTime"), now)
            } else {
                "<none>".into()
            };
            let tz = o
                .pointer("/spec/timeZone")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            Row::of(vec![
                json!(s(o, "/metadata/name")),
                json!(s(o, "/spec/schedule")),
                json!(tz),
                json!(bool_ptr(o.pointer("/spec/suspend"))),
                json!(len(o, "/status/active")),
                json!(last),
                json!(age(o, now)),
                json!(names),
                json!(images),
                json!(label_selector(o.pointer("/spec/jobTemplate/spec/selector"))),
            ])
        },
    },
];

/// Whether the first condition of this type is true.
fn condition(o: &Value, ty: &str) -> bool {
    arr(o, "/status/conditions")
        .iter()
        .find(|c| s(c, "/type") == ty)
        .is_some_and(|c| s(c, "/status") == "True")
}

fn job(o: &Value, now: Timestamp) -> Row {
    let succeeded = int(o, "/status/succeeded");
    let completions = match o.pointer("/spec/completions").and_then(Value::as_i64) {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int(o, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let start = time::parse(o.pointer("/status/startTime"));
    let end = time::parse(o.pointer("/status/completionTime"));
    let duration = match (start, end) {
        (None, _) => String::new(),
        (Some(s), None) => time::human_duration(time::between(s, now)),
        (Some(s), Some(e)) => time::human_duration(time::between(s, e)),
    };
    let status = if condition(o, "Complete") {
        "Complete"
    } else if condition(o, "Failed") {
        "Failed"
    } else if has(o, "/metadata/deletionTimestamp") {
        "Terminating"
    } else if condition(o, "Suspended") {
        "Suspended"
    } else if condition(o, "FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    let (names, images) = containers(arr(o, "/spec/template/spec/containers"));
    Row::of(vec![
        json!(s(o, "/metadata/name")),
        json!(status),
        json!(completions),
        json!(duration),
        json!(age(o, now)),
        json!(names),
        json!(images),
        json!(label_selector(o.pointer("/spec/selector"))),
    ])
}
