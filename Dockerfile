# The sample-controller as a container image: compiled in the Rust image, run from a distroless
# base (the C runtime and CA certificates, no shell) as a non-root user, with nothing written at
# run time, so the Deployment in examples/manifests/ runs it with a read-only root filesystem.
#
#   docker build -t sample-controller:latest .
#   kubectl apply -f examples/manifests/
#
# CI has no container engine: `.ci/image` runs the build stage's commands as written here and
# checks what the runtime stage takes from it.

FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Without the playground (the embedded apiserver-sim): in a cluster there is one to talk to.
RUN cargo build --locked --release -p examples --bin sample-controller --no-default-features

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /src/target/release/sample-controller /sample-controller
# Numeric, so the kubelet can check `runAsNonRoot` against it.
USER 65532:65532
ENTRYPOINT ["/sample-controller"]
