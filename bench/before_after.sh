#!/bin/bash
# Same-run timing of two ck commits on this GPU: builds BASE (default main) and HEAD in two
# build directories under $CK_BA_DIR (default /tmp/ck-before-after), then runs
# bench/before_after.py (the cases of bench/norm_ops.py and bench/memory_ops.py, plus norm and
# reduce variants) against both libraries, interleaved, and prints one table.
#
#   bench/before_after.sh [BASE [HEAD]] [-- before_after.py options, e.g. --full --reps 100]
#
# BASE and HEAD are commits or source directories; without git history (the device machine's
# copy) HEAD is the working tree and BASE a directory made with `git archive REV | tar -x`.
# On the device machine pass HEAD as `.` (the working tree): its copy may carry a git history
# whose HEAD is the last landed commit, not the tree being timed (run Z5 timed that by mistake).
#
# Each build gets its own kernel cache ($dir/cache-base, $dir/cache-head), warmed by a first
# untimed call of each case inside ck prof. About 3-4 minutes on an H100 with the quick sweeps.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=main
head=HEAD
if [ $# -gt 0 ] && [ "$1" != "--" ]; then base=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then head=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
dir=${CK_BA_DIR:-/tmp/ck-before-after}
jobs=$(nproc 2>/dev/null || echo 4)
mkdir -p "$dir"
for side in base head; do
  rev=$([ $side = base ] && echo "$base" || echo "$head")
  src=$dir/src-$side
  if [ -d "$rev" ]; then
    # a source tree instead of a commit (a machine whose copy of ck has no git history:
    # `git archive REV | tar -x -C DIR` beforehand)
    src=$(cd "$rev" && pwd)
    sha="tree $src"
  elif [ $side = head ] && ! git -C "$root" rev-parse --verify -q "$rev^{commit}" >/dev/null; then
    src=$root
    sha="the working tree"
  else
    sha=$(git -C "$root" rev-parse --verify "$rev^{commit}")
  fi
  if [ "${sha#tree }" = "$sha" ] && [ "$sha" != "the working tree" ] &&
     [ "$(cat "$src/.ck-commit" 2>/dev/null)" != "$sha" ]; then
    rm -rf "$src" && mkdir -p "$src"
    git -C "$root" archive "$sha" | tar -x -C "$src"
    echo "$sha" > "$src/.ck-commit"
  fi
  echo "$side: $rev = $sha" >&2
  cmake -S "$src" -B "$dir/build-$side" -DCMAKE_BUILD_TYPE=Release -DCK_WERROR=OFF > "$dir/cmake-$side.log"
  cmake --build "$dir/build-$side" -j "$jobs" --target ck > "$dir/build-$side.log"
done
# the kernel caches: one per build (a library's kernels are keyed by its own sources anyway)
base_cache=$dir/cache-base head_cache=$dir/cache-head
mkdir -p "$base_cache" "$head_cache"
# ck reads CK_CACHE_DIR per process: wrap each build's ck so that it gets its own cache
for side in base head; do
  cache=$dir/cache-$side
  real=$dir/build-$side/bin/ck
  mkdir -p "$dir/run-$side/bin"
  # no CPU reference checks (the tests check; a 1 GiB reference takes seconds) unless CK_BA_CHECK=1
  nocheck=$([ "${CK_BA_CHECK:-0}" = 1 ] && echo "" || echo "--no-check")
  printf '#!/bin/sh\nCK_CACHE_DIR=%s exec %s "$@" %s\n' "$cache" "$real" "$nocheck" > "$dir/run-$side/bin/ck"
  chmod +x "$dir/run-$side/bin/ck"
done
python3 "$root/bench/before_after.py" --base "$dir/run-base" --head "$dir/run-head" "$@"
