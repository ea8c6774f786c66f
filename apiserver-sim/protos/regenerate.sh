#!/usr/bin/env bash
# Regenerates kubernetes.fds, the protobuf descriptors of the Kubernetes API the simulator
# encodes and decodes (`application/vnd.kubernetes.protobuf`), from the upstream
# `generated.proto` files that the k8s-rs-pb package on crates.io ships for each
# Kubernetes version. Needs cargo and protoc (Debian: protobuf-compiler).
#
#   bash apiserver-sim/protos/regenerate.sh
#
# Only the served (GA) API versions are kept, with the apimachinery and apiextensions
# messages they use. Bump PACKAGE_VERSION / KUBE to move to a newer Kubernetes.
set -euo pipefail

PACKAGE_VERSION=0.5.0
KUBE=v1_35

here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/src"
cat > "$tmp/Cargo.toml" <<TOML
[package]
name = "fetch-k8s-protos"
version = "0.0.0"
edition = "2021"
[dependencies]
k8s-rs-pb = { version = "=$PACKAGE_VERSION", default-features = false, features = ["$KUBE"] }
TOML
touch "$tmp/src/lib.rs"
cargo fetch --quiet --manifest-path "$tmp/Cargo.toml"
manifest="$(cargo metadata --format-version 1 --manifest-path "$tmp/Cargo.toml" |
  python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"] == "k8s-rs-pb"))')"
root="$(dirname "$manifest")/src/$KUBE"

cd "$root"
protos=$(find api apimachinery apiextensions_apiserver kube_aggregator -name generated.proto |
  grep -Ev '/v[0-9]+(alpha|beta)[0-9]+/' |
  grep -Ev '^api/(admission|imagepolicy|apidiscovery)/' |
  grep -Ev 'testapigroup' | sort)
# shellcheck disable=SC2086
protoc --include_imports --descriptor_set_out="$here/kubernetes.fds" -I . $protos 2>/dev/null
echo "wrote $here/kubernetes.fds from k8s-rs-pb $PACKAGE_VERSION ($KUBE): $(echo "$protos" | wc -l) files"
