//! CRDs read from YAML: one file (one or more `---`-separated documents) or every `.yaml`/`.yml`
//! file of a directory, as controller-runtime's envtest reads `config/crd/bases`.

use std::path::{Path, PathBuf};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Deserialize;

use crate::error::Error;

/// Every CustomResourceDefinition in the YAML file `path`, in order. Empty documents are
/// skipped; any other document must be a CRD.
pub fn read_crd_file(path: &Path) -> Result<Vec<CustomResourceDefinition>, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut crds = Vec::new();
    for (index, document) in serde_yaml::Deserializer::from_str(&text).enumerate() {
        let not_a_crd = |message: String| Error::NotACrd {
            path: path.to_owned(),
            document: index + 1,
            message,
        };
        let value =
            serde_yaml::Value::deserialize(document).map_err(|e| not_a_crd(e.to_string()))?;
        if value.is_null() {
            continue;
        }
        let kind = value.get("kind").and_then(serde_yaml::Value::as_str);
        if kind != Some("CustomResourceDefinition") {
            return Err(not_a_crd(format!("its kind is {kind:?}")));
        }
        crds.push(serde_yaml::from_value(value).map_err(|e| not_a_crd(e.to_string()))?);
    }
    Ok(crds)
}

/// Every CRD of the `.yaml` and `.yml` files directly in `dir`, files in name order.
pub fn read_crd_dir(dir: &Path) -> Result<Vec<CustomResourceDefinition>, Error> {
    let read_error = |source| Error::Read {
        path: dir.to_owned(),
        source,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(read_error)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()
        .map_err(read_error)?;
    files.retain(|path| {
        path.is_file()
            && path
                .extension()
                .is_some_and(|ext| ext == "yaml" || ext == "yml")
    });
    files.sort();
    let mut crds = Vec::new();
    for file in files {
        crds.extend(read_crd_file(&file)?);
    }
    Ok(crds)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.dev
spec:
  group: example.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
";

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn reads_every_document_of_every_yaml_file_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        let second = CRD
            .replace("widgets", "gadgets")
            .replace("Widget", "Gadget")
            .replace("widget", "gadget");
        write(dir.path(), "b.yml", &format!("---\n{second}---\n"));
        write(dir.path(), "a.yaml", CRD);
        write(dir.path(), "notes.txt", "not a CRD");
        let names: Vec<_> = read_crd_dir(dir.path())
            .unwrap()
            .into_iter()
            .map(|crd| crd.metadata.name.unwrap())
            .collect();
        assert_eq!(names, ["widgets.example.dev", "gadgets.example.dev"]);
    }

    #[test]
    fn a_document_of_another_kind_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "mixed.yaml",
            &format!("{CRD}---\nkind: ConfigMap\n"),
        );
        let error = read_crd_file(&path).unwrap_err();
        assert!(
            matches!(&error, Error::NotACrd { document: 2, .. }),
            "{error}"
        );
        assert!(error.to_string().contains("\"ConfigMap\""), "{error}");
    }

    #[test]
    fn a_missing_file_is_a_read_error_naming_it() {
        let error = read_crd_file(Path::new("/nonexistent/crds.yaml")).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("reading /nonexistent/crds.yaml"),
            "{error}"
        );
    }
}
