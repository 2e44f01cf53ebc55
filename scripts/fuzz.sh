#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) and run each for SECONDS
# (default 5; CI uses 15, run longer on demand: scripts/fuzz.sh 600). Each starts from its seed
# corpus tests/fuzz/corpus/<target> (copied: new inputs go to build-fuzz/corpus, not the repo).
# Exits non-zero on any finding (crash, leak, sanitizer report, timeout); the reproducer is
# left in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
targets=(descriptor encoding expr numeric cli)
CC=clang cmake -S . -B build-fuzz -DCK_FUZZ=ON -DCK_BUILD_TESTS=OFF -DCK_BUILD_EXAMPLES=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"${JOBS:-$(nproc 2>/dev/null || echo 2)}" --target "${targets[@]/#/fuzz_}" >/dev/null
mkdir -p build-fuzz/findings
status=0
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/$t/* "$corpus"/ 2>/dev/null || true
  log=build-fuzz/fuzz_$t.log
  if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     build-fuzz/bin/fuzz_$t "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=4096 -close_fd_mask=1 -artifact_prefix=build-fuzz/findings/$t- >"$log" 2>&1; then
    echo "fuzz_$t: $(grep -E '^Done [0-9]+ runs' "$log" | tail -1) (no finding)"
  else
    status=1
    echo "fuzz_$t: FINDING (see $log and build-fuzz/findings/)"
    grep -E 'ERROR|runtime error|SUMMARY' "$log" | head -5
  fi
done
exit $status
