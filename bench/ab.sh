#!/bin/bash
# bench/ab.sh BEFORE AFTER OUT [RUNS] [EVENTS]: ingest, query and fan-out of two agentnode
# binaries, A/B. Each run starts both as separate `bench serve` processes on fresh data
# dirs, and one bench command (run by AFTER) measures both, the order of the two targets
# swapped every other run. KINDS="ingest query fanout" (default) picks the workloads.
# The JSON reports land in OUT/<kind>.<run>.json; compare the "before" and "after" relays'
# medians (docs/BENCHMARKS.md, "Issue 25 as a whole").
set -u
B=$1; A=$2; out=$3; runs=${4:-4}; events=${5:-3000}
mkdir -p "$out"
for i in $(seq 1 "$runs"); do
  for kind in ${KINDS:-ingest query fanout}; do
    d=$(mktemp -d)
    "$B" bench serve --relay agentnode --listen 127.0.0.1:7821 --dir "$d/b" >"$d/b.log" 2>&1 & pb=$!
    "$A" bench serve --relay agentnode --listen 127.0.0.1:7822 --dir "$d/a" >"$d/a.log" 2>&1 & pa=$!
    for p in 7821 7822; do
      for _ in $(seq 1 150); do (echo >/dev/tcp/127.0.0.1/$p) 2>/dev/null && break; sleep 0.2; done
    done
    tb="--target ws://127.0.0.1:7821 --name before --target-pid $pb"
    ta="--target ws://127.0.0.1:7822 --name after --target-pid $pa"
    if [ $((i % 2)) = 1 ]; then tg="$tb $ta"; else tg="$ta $tb"; fi
    case $kind in
      ingest) "$A" bench ingest --seed 11 --events "$events" --json $tg ;;
      query)  "$A" bench query --seed 11 --json $tg ;;
      fanout) "$A" bench fanout --json $tg ;;
    esac > "$out/$kind.$i.json" 2> "$out/$kind.$i.err"
    echo "run $i $kind rc=$? $(date +%T)"
    kill $pb $pa; wait $pb $pa 2>/dev/null; rm -rf "$d"
  done
done
