//! The watch-list switch, played by the proxy: a watch that asks for a streaming list
//! (`sendInitialEvents`) is refused with 422 Invalid, as a server with the WatchList feature
//! gate off refuses it, or forwarded as the plain watch a server that predates the feature
//! serves — the simulator's [`WatchListMode`]s, in front of any server.
//!
//! The plain watch drops `allowWatchBookmarks` too: a current kube-apiserver ends the initial
//! events of a watch from the latest state with an initial-events-end bookmark whenever the
//! watch allows bookmarks, `sendInitialEvents` or not, and an old server never sends one.
//! Without bookmarks it sends the initial events as ADDED events and goes on watching.

use apiserver_sim::{ApiError, WatchListMode};

/// What the proxy does with a watch's query under a [`WatchListMode`].
#[derive(Debug, PartialEq)]
pub(crate) enum Treatment {
    /// Forwarded as it is.
    Forward,
    /// Forwarded with this query instead.
    Rewritten(String),
    /// Answered with this error.
    Refused(ApiError),
}

/// The query parameters an old server does not know, and the one that makes a current server
/// end the initial events with a bookmark.
const WATCH_LIST_PARAMETERS: [&str; 3] = [
    "sendInitialEvents",
    "resourceVersionMatch",
    "allowWatchBookmarks",
];

/// How a watch with `query` is treated under `mode`.
pub(crate) fn treat(mode: WatchListMode, query: Option<&str>) -> Treatment {
    let Some(query) = query else {
        return Treatment::Forward;
    };
    let asks = query
        .split('&')
        .any(|pair| pair.split('=').next() == Some("sendInitialEvents"));
    match mode {
        _ if !asks => Treatment::Forward,
        WatchListMode::Supported => Treatment::Forward,
        WatchListMode::Rejected => Treatment::Refused(ApiError::invalid_options(
            "ListOptions",
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
        )),
        WatchListMode::Ignored => Treatment::Rewritten(
            query
                .split('&')
                .filter(|pair| {
                    let key = pair.split('=').next().unwrap_or_default();
                    !WATCH_LIST_PARAMETERS.contains(&key)
                })
                .collect::<Vec<_>>()
                .join("&"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAMING: &str = "watch=1&resourceVersion=&sendInitialEvents=true\
        &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true";

    #[test]
    fn a_streaming_list_is_served_refused_or_stripped() {
        assert_eq!(
            treat(WatchListMode::Supported, Some(STREAMING)),
            Treatment::Forward
        );
        let Treatment::Refused(error) = treat(WatchListMode::Rejected, Some(STREAMING)) else {
            panic!("not refused");
        };
        assert_eq!(error.code, 422);
        assert_eq!(
            treat(WatchListMode::Ignored, Some(STREAMING)),
            Treatment::Rewritten("watch=1&resourceVersion=".into())
        );
    }

    #[test]
    fn a_plain_watch_is_forwarded_in_every_mode() {
        for mode in [
            WatchListMode::Supported,
            WatchListMode::Rejected,
            WatchListMode::Ignored,
        ] {
            assert_eq!(
                treat(mode, Some("watch=1&resourceVersion=5")),
                Treatment::Forward
            );
            assert_eq!(treat(mode, None), Treatment::Forward);
        }
    }
}
