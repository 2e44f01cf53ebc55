#!/usr/bin/env bash
# sweep_norm.sh BUILD OUT: time the layernorm / RMSNorm instance alternatives (CK_NORM_FWD for
# the forward, CK_NORM_INSTANCE for the backward) on bf16 inputs. The default instance of each
# shape is checked against the CPU reference once; the alternatives run with --no-check. One
# JSON line per run in OUT/sweep_norm.jsonl, a table in OUT/sweep_norm.md.
#   CK_NORM_FWD="G,VALS,RAW,BLOCK": G threads per row (0 automatic), VALS max f32 values per
#   thread (default 16), RAW 0/1 (-1 automatic), BLOCK threads per block when G <= 32 (128).
set -uo pipefail
build=$1
out=$2
mkdir -p "$out"
ck=$build/bin/ck
one() { # one OP SHAPE EXTRA ENV...
    local op=$1 shape=$2 extra=$3
    shift 3
    local line
    line=$(env "$@" timeout 120 "$ck" prof "$op" --shape "$shape" --dtype bf16 $extra --json 2>&1 | tail -1)
    echo "{\"env\": \"$*\", \"extra\": \"$extra\", \"result\": $line}" >>"$out/sweep_norm.jsonl" 2>/dev/null ||
        echo "{\"env\": \"$*\", \"error\": \"$line\"}" >>"$out/sweep_norm.jsonl"
    printf '| %s | %s | %s | %s | %s |\n' "$op" "$shape" "$extra" "${*:-default}" \
        "$(echo "$line" | python3 -c 'import json,sys
try:
    d=json.load(sys.stdin); print("%.3f TB/s %s" % (d["gbps"]/1000, d["check"]))
except Exception as e: print("error")')" | tee -a "$out/sweep_norm.md"
}
echo "| op | shape | flags | instance | result |" | tee "$out/sweep_norm.md"
echo "| --- | --- | --- | --- | --- |" | tee -a "$out/sweep_norm.md"
for op in layernorm rmsnorm; do
    # forward, 1 GiB shapes and the latency shapes
    for s in 524288x1024 262144x2048 131072x4096 65536x8192 16384x8192 32768x16384 16384x32768 8192x65536 1x1024 8x4096 64x8192; do
        one $op $s "" X=1
        for e in CK_NORM_FWD=0,16,0 CK_NORM_FWD=0,8 CK_NORM_FWD=0,32; do one $op $s --no-check $e; done
    done
    for s in 524288x1024 1x1024; do
        for e in CK_NORM_FWD=64,16,1 CK_NORM_FWD=128,16,1 CK_NORM_FWD=32,16,0 CK_NORM_FWD=32,16,1,256 CK_NORM_FWD=32,16,1,64; do one $op $s --no-check $e; done
    done
    for s in 16384x32768; do
        for e in CK_NORM_FWD=1024,16,1 CK_NORM_FWD=256,16,1; do one $op $s --no-check $e; done
    done
done
# fused / quantized
one rmsnorm 16384x8192 "--residual --quant int8 --smooth" X=1
one layernorm 16384x8192 "--quant fp8e4m3" X=1
one rmsnorm 16384x8192 "--residual" X=1
# backward: vectors per thread (1 default; 4 = the former instance)
for op in layernorm rmsnorm; do
    for s in 16384x8192 131072x1024 8192x16384; do
        one $op $s --bwd X=1
        for e in CK_NORM_INSTANCE=2,1 CK_NORM_INSTANCE=4,1; do one $op $s "--bwd --no-check" $e; done
    done
done
