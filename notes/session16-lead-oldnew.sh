#!/usr/bin/env bash
# Lead's last call (session 16): the attention forward's d128 defaults, old (f4cdeca, before session
# 15's wgmma k-step descriptors by one add) and new (merged main) builds alternating, two rounds.
set -u
kit=$(cd "$(dirname "$0")" && pwd)/oldnew
out=${OUT:-/tmp/oldnew-out}
chmod +x "$kit"/*
for run in 1 2; do
  for b in old new; do
    echo "== $b round $run ($(date +%T))"
    PTXKIT_ATTENTION_SHAPE=128: PTXKIT_ATTENTION_VARIANT=default PTXKIT_ATTENTION_REPEATS=3 timeout 60 \
      "$kit/bench-attention-$b" --bench > "$out/attention-$b-$run.txt" 2>&1
    grep -E '^\| 128 ' "$out/attention-$b-$run.txt"
  done
done
echo "== done ($(date +%T))"
