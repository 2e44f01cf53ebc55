#!/usr/bin/env bash
# sweep_instances.sh BUILD OUT: time the instance alternatives of softmax and layernorm/RMSNorm
# (CK_SOFTMAX_VARIANT / CK_SOFTMAX_INSTANCE / CK_SOFTMAX_RAW / CK_NORM_INSTANCE) on 256 MiB bf16 inputs, each checked
# against the CPU reference, one JSON line per run in OUT/sweep.jsonl and a table in OUT/sweep.md.
set -uo pipefail
build=$1
out=$2
mkdir -p "$out"
ck=$build/bin/ck
one() { # one OP SHAPE ENV...
    local op=$1 shape=$2
    shift 2
    local line
    line=$(env "$@" timeout 60 "$ck" prof "$op" --shape "$shape" --dtype bf16 --json 2>&1 | tail -1)
    echo "{\"env\": \"$*\", \"result\": $line}" >>"$out/sweep.jsonl" 2>/dev/null ||
        echo "{\"env\": \"$*\", \"error\": \"$line\"}" >>"$out/sweep.jsonl"
    printf '| %s | %s | %s | %s |\n' "$op" "$shape" "${*:-default}" \
        "$(echo "$line" | python3 -c 'import json,sys
try:
    d=json.load(sys.stdin); print("%.3f TB/s %s" % (d["gbps"]/1000, d["check"]))
except Exception as e: print("error")')" | tee -a "$out/sweep.md"
}
echo "| op | shape | instance | result |" | tee "$out/sweep.md"
echo "| --- | --- | --- | --- |" | tee -a "$out/sweep.md"
for s in 4096x32768; do
    for e in X=1 CK_SOFTMAX_VARIANT=staged,512,1,2,0 CK_SOFTMAX_VARIANT=staged,1024,1,2,0 CK_SOFTMAX_VARIANT=staged,512,2,2,0 CK_SOFTMAX_VARIANT=staged,256,2,2,0; do one softmax $s $e; done
done
for s in 2048x65536; do
    for e in X=1 CK_SOFTMAX_VARIANT=regs CK_SOFTMAX_VARIANT=staged,1024,2,2,0 CK_SOFTMAX_VARIANT=staged,512,4,2,0 CK_SOFTMAX_VARIANT=staged,512,4,1,2 CK_SOFTMAX_VARIANT=staged,256,4,2,0; do one softmax $s $e; done
done
for s in 1024x131072; do
    for e in X=1 CK_SOFTMAX_VARIANT=regs CK_SOFTMAX_VARIANT=staged,1024,4,2,0 CK_SOFTMAX_VARIANT=staged,512,4,2,0,33 CK_SOFTMAX_VARIANT=staged,512,8,2,0 CK_SOFTMAX_VARIANT=staged,512,8,1,2; do one softmax $s $e; done
done
for s in 512x262144; do
    for e in X=1 CK_SOFTMAX_VARIANT=regs CK_SOFTMAX_VARIANT=staged,1024,8,2,0 CK_SOFTMAX_VARIANT=staged,512,8,2,0,15 CK_SOFTMAX_VARIANT=staged,256,8,2,0; do one softmax $s $e; done
done
for op in layernorm rmsnorm; do
    for s in 16384x8192 131072x1024 4096x32768; do
        for e in X=1 CK_NORM_INSTANCE=2,0 CK_NORM_INSTANCE=4,0 CK_NORM_INSTANCE=2,1 CK_NORM_INSTANCE=1,0; do one $op $s $e; done
    done
done
