#!/usr/bin/env bash
# sweep_ew.sh BUILD OUT: time the vector instance alternatives of copy/cast/elementwise
# (CK_EW_INSTANCE="unroll,block,waves[,cs]", docs/ops-elementwise.md) on the H100. The default
# instance of each case is checked against the CPU; the alternatives run with --no-check (same
# code, other constants). One JSON line per run in OUT/sweep_ew.jsonl, a table in
# OUT/sweep_ew.md, each row printed (and flushed) as it finishes. About 40 runs, ~2-3 minutes.
set -uo pipefail
build=$1
out=$2
mkdir -p "$out"
ck=$build/bin/ck
one() { # one "PROF ARGS" INSTANCE(- = default, checked)
    local args=$1 inst=$2 line
    if [ "$inst" = - ]; then
        line=$(timeout 60 "$ck" prof $args --json --reps 30 --device cuda 2>&1 | tail -1)
    else
        line=$(CK_EW_INSTANCE=$inst timeout 40 "$ck" prof $args --json --reps 30 --device cuda \
            --no-check 2>&1 | tail -1)
    fi
    echo "{\"instance\": \"$inst\", \"args\": \"$args\", \"result\": $(echo "$line" |
        python3 -c 'import json,sys
s=sys.stdin.read().strip()
try: json.loads(s); print(s)
except Exception: print(json.dumps(s))')}" >>"$out/sweep_ew.jsonl"
    printf '| %s | %s | %s |\n' "$args" "$inst" "$(echo "$line" | python3 -c 'import json,sys
try:
    d=json.load(sys.stdin); print("%.3f TB/s (%.1f%%) %s" % (d["gbps"]/1000, 100*d["ratio_to_copy"], d["check"]))
except Exception as e: print("error")')" | tee -a "$out/sweep_ew.md"
}
B=16384x8192
echo "| case | CK_EW_INSTANCE | result |" | tee "$out/sweep_ew.md"
echo "| --- | --- | --- |" | tee -a "$out/sweep_ew.md"
for i in - 4,256,0 8,128,0 4,128,0 2,256,0 8,256,4 4,512,4 4,256,8,0; do
    one "copy --shape $B --dtype bf16" $i
done
for i in - 4,256,8,0 8,256,8,0 8,256,0,0 4,256,0,1 2,256,0,0 8,512,4,0 4,128,0,0; do
    one "cast --shape $B --from bf16 --to f32" $i
done
for i in - 4,256,0 8,128,0 2,256,0; do
    one "cast --shape $B --from f32 --to bf16" $i
done
for i in - 4,256,0 8,256,0 2,256,8; do
    one "elementwise --shape $B --expr silu(x0) --dtype bf16" $i
done
for i in - 4,256,0 8,256,0; do
    one "elementwise --shape $B --expr gelu(x0) --dtype bf16" $i
done
for i in - 4,256,0 8,256,0; do
    one "elementwise --shape $B --expr x0+x1 --dtype bf16 --bias" $i
done
for i in - 4,256,0 2,256,0; do
    one "elementwise --shape $B --expr relu(x0*x1+x2) --dtype bf16" $i
done
one "elementwise --shape $B --expr gelu_erf(x0) --dtype f32" -
for i in - 4,256,0 8,128,0 2,128,0; do
    one "copy --shape 4096x4096 --dtype bf16" $i
done
