//! The `User-Agent` an operator's client sends: what the API server's audit log shows as the
//! caller, and the default field manager of its writes (the part before the first `/`).

use http::HeaderValue;
use http::header::USER_AGENT;

/// `<binary>/<version> (<os>/<arch>) kube-rt/<framework version>`: client-go's form
/// (`binary/version (os/arch) kubernetes/commit`) with this framework in the last place, e.g.
/// `sample-controller/0.1.0 (linux/x86_64) kube-rt/0.1.0`. Characters a header cannot carry
/// (and `/` or spaces in `binary`, which would cut the field manager short) become `-`.
pub fn user_agent(binary: &str, version: &str) -> String {
    let clean = |text: &str, keep_slash: bool| -> String {
        text.chars()
            .map(|c| {
                let allowed = c.is_ascii_graphic() && (keep_slash || c != '/');
                if allowed { c } else { '-' }
            })
            .collect()
    };
    format!(
        "{}/{} ({}/{}) kube-rt/{}",
        clean(binary, false),
        clean(version, true),
        std::env::consts::OS,
        std::env::consts::ARCH,
        env!("CARGO_PKG_VERSION"),
    )
}

/// `config` with [`user_agent`]`(binary, version)` as its `User-Agent`, unless its headers name
/// one already (a caller's own choice wins). Pass the binary's package name and version:
/// `with_user_agent(config, env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))`.
pub fn with_user_agent(mut config: kube::Config, binary: &str, version: &str) -> kube::Config {
    if config.headers.iter().any(|(name, _)| name == USER_AGENT) {
        return config;
    }
    // `user_agent` leaves only visible ASCII, which a header value always accepts.
    if let Ok(value) = HeaderValue::from_str(&user_agent(binary, version)) {
        config.headers.push((USER_AGENT, value));
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_names_the_binary_its_platform_and_the_framework() {
        let agent = user_agent("my-operator", "1.2.3");
        let expected = format!(
            "my-operator/1.2.3 ({}/{}) kube-rt/{}",
            std::env::consts::OS,
            std::env::consts::ARCH,
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(agent, expected);
        assert!(
            user_agent("bad name/x", "1 2\n").starts_with("bad-name-x/1-2- ("),
            "{}",
            user_agent("bad name/x", "1 2\n")
        );
    }

    /// The `User-Agent` values a config sends.
    fn agents(config: &kube::Config) -> Vec<&str> {
        config
            .headers
            .iter()
            .filter(|(name, _)| name == USER_AGENT)
            .map(|(_, value)| value.to_str().unwrap())
            .collect()
    }

    #[test]
    fn a_configured_agent_is_kept() {
        let uri = http::Uri::from_static("https://example.invalid");
        let set = with_user_agent(kube::Config::new(uri.clone()), "op", "1");
        assert!(matches!(agents(&set)[..], [agent] if agent.starts_with("op/1 (")));
        let mut own = kube::Config::new(uri);
        own.headers
            .push((USER_AGENT, HeaderValue::from_static("mine/2")));
        let kept = with_user_agent(own, "op", "1");
        assert_eq!(agents(&kept), ["mine/2"]);
    }
}
