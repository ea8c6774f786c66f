//! The binaries of a control plane in a directory of envtest's layout (`KUBEBUILDER_ASSETS`):
//! `kube-apiserver` and `etcd` side by side, `kube-controller-manager` beside them when a test
//! asks for one.

use std::path::{Path, PathBuf};

/// The API server's binary.
pub(crate) const KUBE_APISERVER: &str = "kube-apiserver";
/// etcd's binary.
pub(crate) const ETCD: &str = "etcd";
/// The controller-manager's binary.
pub(crate) const KUBE_CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// The binary `name` in `dir`, or a message saying what is missing and where it was looked
/// for.
pub(crate) fn binary(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let path = dir.join(name);
    if is_executable(&path) {
        Ok(path)
    } else if !dir.is_dir() {
        Err(format!(
            "{} is not a directory (it should hold {KUBE_APISERVER} and {ETCD}, as \
             KUBEBUILDER_ASSETS does)",
            dir.display()
        ))
    } else {
        Err(format!(
            "no executable {name} in {} (the directory holds {})",
            dir.display(),
            listing(dir)
        ))
    }
}

/// Whether `path` is a file this user may run (following links).
fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// The names in `dir`, sorted, for a message.
fn listing(dir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    if names.is_empty() {
        "nothing".to_owned()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_binary_is_named_with_what_the_directory_holds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("etcd"), "").unwrap();
        let message = binary(dir.path(), KUBE_APISERVER).unwrap_err();
        assert!(
            message.contains("no executable kube-apiserver"),
            "{message}"
        );
        assert!(message.contains("holds etcd"), "{message}");
    }

    #[test]
    fn a_missing_directory_says_what_it_should_hold() {
        let message = binary(Path::new("/nonexistent/assets"), ETCD).unwrap_err();
        assert!(message.contains("is not a directory"), "{message}");
        assert!(message.contains("KUBEBUILDER_ASSETS"), "{message}");
    }

    #[cfg(unix)]
    #[test]
    fn an_executable_file_is_found() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("etcd");
        std::fs::write(&path, "").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(binary(dir.path(), ETCD).unwrap(), path);
    }
}
