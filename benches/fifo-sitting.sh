#!/usr/bin/env bash
# The fifo rows of docs/benchmarks.md in one sitting: our in-order fifo beside our delta fifo
# and beside client-go's RealFIFO (and client-go's DeltaFIFO beside our delta fifo), every run
# its own process, client-go's rows then ours, round after round, so that all peers see the
# same machine. Prints the medians and the ratios (as throughput).
#
#   ANCHOR=<client-go anchor binary> benches/fifo-sitting.sh [ROUNDS] [OUT.jsonl]
#
# ANCHOR runs client-go's own DeltaFIFO and RealFIFO code on the workloads of the table
# (`ANCHOR -bench=<row>` prints one JSON line with `ms`, `ops_per_s` and `ok`; the RealFIFO rows
# with the informer's defaults: atomic events, unlocked processing, batches of up to 1 000);
# it is built outside this repository. Run from the repository root.
set -euo pipefail

: "${ANCHOR:?set ANCHOR to the client-go anchor binary}"
ROUNDS=${1:-5}
OUT=${2:-fifo-sitting.jsonl}

ROWS=$(cargo build --release -p kube-rt-deltafifo --bench rows --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "rows" and m.get("executable"):
        print(m["executable"])')
[ -x "$ROWS" ] || { echo "could not build the rows bench" >&2; exit 1; }

# Appends one JSON line from a run, with the peer, round and load added.
record() { # peer round command...
  local peer=$1 round=$2
  shift 2
  local load line
  load=$(cut -d' ' -f1 /proc/loadavg)
  if line=$("$@" 2>/dev/null | grep '^{' | tail -1) && [ -n "$line" ]; then
    python3 -c 'import json, sys
r = json.loads(sys.argv[1]); r.update(peer=sys.argv[2], round=int(sys.argv[3]), load1=float(sys.argv[4]))
print(json.dumps(r))' "$line" "$peer" "$round" "$load" >>"$OUT"
  else
    echo "{\"scenario\":\"$*\",\"peer\":\"$peer\",\"round\":$round,\"ok\":false}" >>"$OUT"
  fi
}

for round in $(seq 1 "$ROUNDS"); do
  echo "round $round" >&2
  for row in df_1 df_2a df_2b rf_1 rf_2a rf_2b rf_batch rf_2b_batch; do
    record client-go "$round" env GOMAXPROCS=2 "$ANCHOR" -bench="$row"
  done
  for row in df_1 df_1_in_order df_2a df_2a_in_order df_2b df_2b_in_order \
    df_2a_batch df_2a_batch_in_order df_2b_batch df_2b_batch_in_order; do
    record ours "$round" "$ROWS" "$row"
  done
done

python3 - "$OUT" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rates = {}
for r in runs:
    if not r.get("ok"):
        print(f"FAILED: {r}", file=sys.stderr)
        continue
    rates.setdefault((r["peer"], r["scenario"]), []).append(r["ops_per_s"])
def med(peer, row):
    values = rates.get((peer, row))
    return (statistics.median(values), len(values)) if values else (None, 0)
def m(x):
    return "-" if x is None else f"{x / 1e6:.3g} M"
# (workload, our delta fifo row, our in-order row, client-go DeltaFIFO row, client-go RealFIFO row)
table = [
    ("df_1: relist of 100k, popped", "df_1", "df_1_in_order", "df_1", "rf_1"),
    ("df_2a: 1M updates, then popped one at a time", "df_2a", "df_2a_in_order", "df_2a", "rf_2a"),
    ("df_2b: 1M updates, popped meanwhile", "df_2b", "df_2b_in_order", "df_2b", "rf_2b"),
    ("batch: df_2a popped in batches of 1 000", "df_2a_batch", "df_2a_batch_in_order", None, "rf_batch"),
    ("batch, concurrent: df_2b in batches of 1 000", "df_2b_batch", "df_2b_batch_in_order", None, "rf_2b_batch"),
]
print("| workload | ours in-order | ours delta | in-order ÷ delta | client-go RealFIFO | in-order ÷ RealFIFO | client-go DeltaFIFO | delta ÷ DeltaFIFO | runs |")
print("|---|---|---|---|---|---|---|---|---|")
for name, delta, in_order, cg_delta, cg_real in table:
    (d, nd), (i, ni) = med("ours", delta), med("ours", in_order)
    (gr, ngr) = med("client-go", cg_real)
    (gd, ngd) = med("client-go", cg_delta) if cg_delta else (None, 0)
    ratio = lambda a, b: f"{a / b:.2f}×" if a and b else "-"
    print(f"| {name} | {m(i)} | {m(d)} | {ratio(i, d)} | {m(gr)} | {ratio(i, gr)} | {m(gd)} | {ratio(d, gd)} | {ni}/{nd}/{ngr}/{ngd} |")
PY
