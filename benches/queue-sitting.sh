#!/usr/bin/env bash
# The queue and fifo rows of docs/benchmarks.md against client-go, in one sitting: every row is
# run once per process, client-go's first, then ours with each key type, round after round, so
# both peers see the same machine. Prints the medians and the ratios (ours ÷ client-go, as
# throughput).
#
#   ANCHOR=<client-go anchor binary> benches/queue-sitting.sh [ROUNDS] [OUT.jsonl]
#
# ANCHOR is a binary that runs client-go's own workqueue and DeltaFIFO code on the workloads of
# the table (`ANCHOR -bench=<row>` prints one JSON line with `ms`, `ops_per_s` and `ok`); it is
# built outside this repository. ROWS (space-separated) narrows the rows, KEYS the key types of
# the queue rows (default: object_key arc_str). Run from the repository root.
set -euo pipefail

: "${ANCHOR:?set ANCHOR to the client-go anchor binary}"
ROUNDS=${1:-3}
OUT=${2:-queue-sitting.jsonl}
ROWS=${ROWS:-"wq_a wq_a2 wq_b wq_b_table wq_b_table_ref wq_c wq_d0 wq_d df_1 df_2a df_2b"}
KEYS=${KEYS:-"object_key arc_str"}

# The path of a package's `rows` bench binary, built with the release profile (as
# `pipeline-bench`, so the two share their dependencies' builds).
rows_binary() {
  cargo build --release -p "$1" --bench rows --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "rows" and m.get("executable"):
        print(m["executable"])'
}
WQ=$(rows_binary kube-rt-workqueue)
DF=$(rows_binary kube-rt-deltafifo)
[ -x "$WQ" ] && [ -x "$DF" ] || { echo "could not build the rows benches" >&2; exit 1; }

# Appends one JSON line from a run, with the peer, round, time and load added.
record() { # peer round command...
  local peer=$1 round=$2
  shift 2
  local load line
  load=$(cut -d' ' -f1 /proc/loadavg)
  if line=$("$@" 2>/dev/null | grep '^{' | tail -1) && [ -n "$line" ]; then
    python3 -c 'import json, sys
r = json.loads(sys.argv[1]); r.update(peer=sys.argv[2], round=int(sys.argv[3]), load1=float(sys.argv[4]))
r.setdefault("key", "string")
print(json.dumps(r))' "$line" "$peer" "$round" "$load" >>"$OUT"
  else
    echo "{\"scenario\":\"$*\",\"peer\":\"$peer\",\"round\":$round,\"ok\":false}" >>"$OUT"
  fi
}

for round in $(seq 1 "$ROUNDS"); do
  for row in $ROWS; do
    go_row=$row
    [ "$row" = wq_d ] && go_row=wq_d_1M
    echo "round $round: $row" >&2
    # wq_b_table and wq_b_table_ref are floors of ours (wq_b's adds into a bare hash set),
    # compared with client-go's wq_b run of the same round.
    case $row in wq_b_table*) ;; *) record client-go "$round" env GOMAXPROCS=2 "$ANCHOR" -bench="$go_row" ;; esac
    case $row in
      df_*) record ours "$round" "$DF" "$row" ;;
      *) for key in $KEYS; do record ours "$round" "$WQ" "$row" --key "$key"; done ;;
    esac
  done
done

python3 - "$OUT" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def name(r):
    s = r["scenario"]
    return "wq_d" if s == "wq_d_1M" else s
go, ours = {}, {}
for r in runs:
    if not r.get("ok"):
        print(f"FAILED: {r}", file=sys.stderr)
        continue
    if r["peer"] == "client-go":
        go.setdefault(name(r), []).append(r["ops_per_s"])
    else:
        ours.setdefault((name(r), r["key"]), []).append(r["ops_per_s"])
print("| row | keys | ours (median ops/s) | client-go (median ops/s) | ours ÷ client-go | runs |")
print("|---|---|---|---|---|---|")
for (row, key), values in ours.items():
    o = statistics.median(values)
    peer_row = "wq_b" if row.startswith("wq_b_table") else row
    g = statistics.median(go[peer_row]) if peer_row in go else None
    ratio = f"{o / g:.2f}×" if g else "-"
    gs = f"{g / 1e6:.3g} M" if g else "-"
    print(f"| {row} | {key} | {o / 1e6:.3g} M | {gs} | {ratio} | {len(values)} |")
PY
