//! The arithmetic of a Deployment's rollout, as upstream's deployment controller does it:
//! `maxSurge`/`maxUnavailable` resolved against the replica count, how far the new
//! ReplicaSet may grow, how far the old ones may shrink (unhealthy replicas first, then
//! available ones down to the minimum availability), and proportional scaling.

use serde_json::Value;

/// What the rollout needs to know of one ReplicaSet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Size {
    /// `spec.replicas`.
    pub replicas: i64,
    /// `status.availableReplicas`.
    pub available: i64,
}

/// An int-or-percent value scaled against `total` (percentages rounded up or down).
fn scaled(v: Option<&Value>, total: i64, round_up: bool, default: &str) -> i64 {
    match v {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        other => {
            let s = other.and_then(Value::as_str).unwrap_or(default);
            let pct: i64 = s.trim_end_matches('%').parse().unwrap_or(0);
            let num = pct * total;
            if round_up {
                (num + 99) / 100
            } else {
                num / 100
            }
        }
    }
}

/// `(maxSurge, maxUnavailable)` of a Deployment with `replicas` replicas; both 0 would block
/// the rollout, so maxUnavailable is then 1. Recreate deployments: (0, 0).
pub(super) fn fenceposts(deployment: &Value, replicas: i64) -> (i64, i64) {
    let strategy = deployment.pointer("/spec/strategy");
    if strategy.and_then(|s| s.get("type")).and_then(Value::as_str) == Some("Recreate") {
        return (0, 0);
    }
    let ru = strategy.and_then(|s| s.get("rollingUpdate"));
    let surge = scaled(ru.and_then(|r| r.get("maxSurge")), replicas, true, "25%");
    let unavailable = scaled(
        ru.and_then(|r| r.get("maxUnavailable")),
        replicas,
        false,
        "25%",
    );
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

/// The size the new ReplicaSet should have now: up to `replicas + maxSurge` pods in all.
pub(super) fn new_rs_replicas(replicas: i64, surge: i64, all: &[Size], new: &Size) -> i64 {
    let current: i64 = all.iter().map(|s| s.replicas).sum();
    let max_total = replicas + surge;
    if current >= max_total {
        return new.replicas;
    }
    let up = (max_total - current).min(replicas - new.replicas).max(0);
    new.replicas + up
}

/// New sizes of the old ReplicaSets (in the order given, oldest first): first their
/// unavailable replicas go, then available ones while more than `replicas -
/// maxUnavailable` pods stay available.
pub(super) fn old_rs_replicas(
    replicas: i64,
    unavailable: i64,
    new: &Size,
    old: &[Size],
) -> Vec<i64> {
    let mut sizes: Vec<i64> = old.iter().map(|s| s.replicas).collect();
    let old_total: i64 = sizes.iter().sum();
    if old_total == 0 {
        return sizes;
    }
    let all_total = old_total + new.replicas;
    let min_available = replicas - unavailable;
    let new_unavailable = (new.replicas - new.available).max(0);
    let mut budget = all_total - min_available - new_unavailable;
    if budget <= 0 {
        return sizes;
    }
    // Unhealthy replicas first.
    for (size, s) in sizes.iter_mut().zip(old) {
        if budget <= 0 {
            break;
        }
        let unhealthy = (*size - s.available).max(0).min(budget);
        *size -= unhealthy;
        budget -= unhealthy;
    }
    // Then available ones, down to the minimum availability.
    let available: i64 = old.iter().map(|s| s.available).sum::<i64>() + new.available;
    let mut spare = available - min_available;
    for size in sizes.iter_mut() {
        if spare <= 0 {
            break;
        }
        let down = (*size).min(spare);
        *size -= down;
        spare -= down;
    }
    sizes
}

/// Sizes of several active ReplicaSets after the Deployment was scaled to `replicas`
/// mid-rollout: the difference to `replicas + maxSurge` is shared in proportion to their
/// sizes, the rest (of rounding) going to the first (the new ReplicaSet, or the largest).
pub(super) fn proportional(replicas: i64, surge: i64, sizes: &[i64]) -> Vec<i64> {
    let allowed = if replicas > 0 { replicas + surge } else { 0 };
    let current: i64 = sizes.iter().sum();
    let to_add = allowed - current;
    if to_add == 0 || current == 0 {
        return sizes.to_vec();
    }
    let mut out: Vec<i64> = sizes
        .iter()
        .map(|s| (s + s * to_add / current).max(0))
        .collect();
    let added: i64 = out.iter().sum::<i64>() - current;
    if let Some(first) = out.first_mut() {
        *first = (*first + to_add - added).max(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn size(replicas: i64, available: i64) -> Size {
        Size {
            replicas,
            available,
        }
    }

    #[test]
    fn percentages_round_surge_up_and_unavailability_down() {
        let d = json!({"spec": {"strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}}});
        assert_eq!(fenceposts(&d, 3), (1, 0));
        assert_eq!(fenceposts(&d, 10), (3, 2));
        let fixed =
            json!({"spec": {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}});
        assert_eq!(fenceposts(&fixed, 4), (0, 1));
        let recreate = json!({"spec": {"strategy": {"type": "Recreate"}}});
        assert_eq!(fenceposts(&recreate, 4), (0, 0));
    }

    #[test]
    fn the_new_replicaset_grows_by_the_surge() {
        // 3 replicas, surge 1: the old one at 3, the new one may have 1.
        let new = size(0, 0);
        assert_eq!(new_rs_replicas(3, 1, &[size(3, 3), new.clone()], &new), 1);
        // Already at replicas + surge: no growth.
        let new = size(1, 0);
        assert_eq!(new_rs_replicas(3, 1, &[size(3, 3), new.clone()], &new), 1);
        // A fresh deployment gets every replica at once.
        let new = size(0, 0);
        assert_eq!(new_rs_replicas(3, 1, std::slice::from_ref(&new), &new), 3);
    }

    #[test]
    fn old_replicasets_shrink_while_availability_allows() {
        // 3 replicas, unavailable 0: the new one has 1 available pod, so one old may go.
        assert_eq!(old_rs_replicas(3, 0, &size(1, 1), &[size(3, 3)]), vec![2]);
        // The new pod is not available yet: nothing may go.
        assert_eq!(old_rs_replicas(3, 0, &size(1, 0), &[size(3, 3)]), vec![3]);
        // Unavailable old replicas go first, within the budget maxUnavailable leaves.
        assert_eq!(old_rs_replicas(3, 1, &size(1, 0), &[size(3, 1)]), vec![2]);
    }

    #[test]
    fn scaling_mid_rollout_is_proportional() {
        // 10 replicas + surge 3 allowed, 13 running: no change.
        assert_eq!(proportional(10, 3, &[5, 8]), vec![5, 8]);
        // Scaled to 20 (+5 surge): 12 more shared as 5:8.
        let out = proportional(20, 5, &[5, 8]);
        assert_eq!(out.iter().sum::<i64>(), 25);
        assert!(out[1] > out[0], "{out:?}");
        // Scaled to 0: everything goes.
        assert_eq!(proportional(0, 0, &[5, 8]), vec![0, 0]);
    }
}
