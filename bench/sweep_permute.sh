#!/usr/bin/env bash
# sweep_permute.sh BUILD OUT: time ck_permute's tile instances (CK_PERMUTE_INSTANCE="TN,TM,TPB":
# TN x TM element tiles, TN along the destination's contiguous dimension, TPB tiles per block,
# 0 = automatic) on the benchmark shapes. The automatic choice ("auto") runs with the CPU check,
# the alternatives with --no-check (every shape is checked by tests/test_permute.c). One JSON
# line per run in OUT/permute_sweep.jsonl, a table in OUT/permute_sweep.md. About 60-90 s.
set -uo pipefail
build=$1
out=$2
mkdir -p "$out"
ck=$build/bin/ck
one() { # one DTYPE SHAPE PERM INSTANCE|auto
    local dt=$1 shape=$2 perm=$3 inst=$4 chk=--no-check val=$4 line
    [ "$inst" = auto ] && chk= && val=
    line=$(CK_PERMUTE_INSTANCE="$val" timeout 60 \
        "$ck" prof permute --shape "$shape" --perm "$perm" --dtype "$dt" --reps 50 --warmup 10 \
        $chk --json 2>&1 | tail -1)
    echo "{\"instance\": \"$inst\", \"result\": $line}" >>"$out/permute_sweep.jsonl"
    printf '| %s %s perm %s | %s | %s |\n' "$dt" "$shape" "$perm" "$inst" \
        "$(echo "$line" | python3 -c 'import json,sys
try:
    d=json.load(sys.stdin); print("%.3f TB/s %s" % (d["gbps"]/1000, d.get("check","")))
except Exception as e: print("error")')" | tee -a "$out/permute_sweep.md"
}
echo "| problem | instance | result |" | tee "$out/permute_sweep.md"
echo "| --- | --- | --- |" | tee -a "$out/permute_sweep.md"
for i in auto 128,128,4 128,128,2 128,128,1 64,128,0 128,64,0 64,256,0 256,64,0; do
    one bf16 16384x8192 1,0 $i; done
for i in auto 128,128,4 128,128,1 128,64,2 256,64,0 64,64,0 128,128,0; do
    one bf16 64x256x56x56 0,2,3,1 $i; done
for i in auto 128,128,4 64,128,2 64,256,0 64,64,0 128,128,0; do
    one bf16 64x56x56x256 0,3,1,2 $i; done
for i in auto 128,128,3 64,64,0 128,64,0 64,128,0 256,64,0 64,256,0; do
    one bf16 16x1024x1024 0,2,1 $i; done
for i in auto 64,64,4 32,64,0 64,32,0; do one f32 8192x8192 1,0 $i; done
for i in auto 128,256,4 128,128,0; do one u8 16384x16384 1,0 $i; done
one f32 32x64x128x16x8 4,2,0,3,1 auto
