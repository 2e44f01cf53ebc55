#!/usr/bin/env bash
# quick A/B of instance variants: NAME ENV... -- ck prof args
b=build-gpu; export CK_DEVICE=cuda CK_CACHE_DIR=$PWD/$b/bench-cache
v() { local env="$1"; shift; r=$(env $env $b/bin/ck prof "$@" --json --reps 30 --device cuda 2>&1 | grep '^{'); echo "$env | $* | $(echo "$r" | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("%.4f ms %.1f%% %s" % (d["ms"], 100*d["ratio_to_copy"], d["check"]))' 2>/dev/null)"; }
for e in X=0 CK_SOFTMAX_INSTANCE=256,8,1 CK_SOFTMAX_INSTANCE=512,16,1 CK_SOFTMAX_INSTANCE=1024,8,1; do v $e softmax --shape 300x212993; done
for e in X=0 CK_SOFTMAX_INSTANCE=512,16,1 CK_SOFTMAX_INSTANCE=1024,8,1; do v $e softmax --shape 300x212993 --dtype f32; done
for s in 4096x50257 16384x1023 1024x212993; do for e in X=0 CK_SOFTMAX_SPAN=0; do v $e softmax --shape $s; done; done
for o in layernorm rmsnorm; do for e in X=0 CK_NORM_INSTANCE=2,1 CK_NORM_BWD=2 CK_NORM_INSTANCE=1,0; do v $e $o --bwd --shape 16384x8192; done; done
for e in X=0 CK_NORM_RESIDENT=0; do v $e rmsnorm --shape 512x1048576; v $e layernorm --shape 2048x262144; v $e rmsnorm --shape 2048x262144; v $e layernorm --shape 4096x131072; done
v X=0 topk-softmax --shape 16384x256 --k 8
for e in X=0 CK_REDUCE_PREV=1; do v $e reduce --op norm2 --shape 64x1048576; v $e reduce --op sum --shape 200x1048576; v $e reduce --op sum --shape 1000x262144; done
