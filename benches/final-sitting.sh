#!/usr/bin/env bash
# The sitting behind the figures of docs/benchmarks.md, in one go on a quiet machine: the queue
# and fifo rows interleaved with client-go, the pipeline comparison with kube-runtime and the
# decode limit (e2e latency included), and the scaling plot. Every step prints its table;
# everything is also kept under OUT_DIR.
#
#   ANCHOR=<client-go anchor binary> benches/final-sitting.sh [OUT_DIR]
#
# Run from the repository root. Takes about 25 minutes on two cores.
set -euo pipefail

: "${ANCHOR:?set ANCHOR to the client-go anchor binary (see benches/queue-sitting.sh)}"
OUT_DIR=${1:-sitting-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT_DIR"

echo "== machine" | tee "$OUT_DIR/machine.txt"
{ nproc; uptime; rustc --version; } | tee -a "$OUT_DIR/machine.txt"

cargo build --release -p pipeline-bench
BENCH=target/release/pipeline-bench

echo "== queue and fifo rows, client-go interleaved (3 rounds)"
benches/queue-sitting.sh 3 "$OUT_DIR/queue-sitting.jsonl" | tee "$OUT_DIR/queue-sitting.md"
uptime | tee -a "$OUT_DIR/machine.txt"

echo "== pipeline: decode, ours, kube-runtime, e2e latency (3 rounds)"
"$BENCH" compare --objects 100000 --events 100000 --rounds 3 | tee "$OUT_DIR/compare.txt"
uptime | tee -a "$OUT_DIR/machine.txt"

echo "== scaling: 10k, 100k, 300k pods, both peers"
"$BENCH" scaling --sizes 10000,100000,300000 --events 20000 --svg docs/scaling.svg |
  tee "$OUT_DIR/scaling.txt"
uptime | tee -a "$OUT_DIR/machine.txt"
