# Reproducers of the hardening audit (issue 20) on the command line: each must exit with the
# expected status and a message, never crash or hang. Run by ctest as `cmake -DCK=... -P`.
function(run expect_rc)
  execute_process(COMMAND ${CK} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 120)
  if(NOT rc STREQUAL "${expect_rc}")
    message(FATAL_ERROR "ck ${ARGN}: exit '${rc}', expected ${expect_rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()
function(expect_match text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: output does not match '${regex}':\n${text}")
  endif()
endfunction()

# Crashes: deep expressions, shape overflow, zero lengths.
string(REPEAT "(" 50000 open)
string(REPEAT ")" 50000 close)
run(2 prof elementwise --shape 1x1 --device host --expr "${open}x0${close}")
expect_match("${ERR}" "nests deeper than" "deep expression")
foreach(op reduce softmax topk-softmax permute copy elementwise layernorm)
  set(extra "")
  if(op STREQUAL "elementwise")
    set(extra --expr x0)
  endif()
  run(2 prof ${op} --shape 3037000500x3037000500 --device host ${extra})
  expect_match("${ERR}" "at most 2\\^40" "ck prof ${op} shape product")
endforeach()
foreach(shape 18446744073709551616x2 4x 0x5 -4x4 4xx4 "4 x4")
  run(2 prof copy --shape "${shape}" --device host)
  expect_match("${ERR}" "--shape" "ck prof copy --shape ${shape}")
endforeach()
run(2 prof copy --shape 0x5 --transpose --device host)
run(2 prof elementwise --shape 0x5 --expr "x0+x1" --bias --device host)
run(2 prof layernorm --shape 2x2147483647 --device host)
expect_match("${ERR}" "65536" "layernorm N beyond the library's limit")
run(1 dist --check --base 9223372036854775807 --pattern block --block 64 --tile 16x64 --vector 8)
expect_match("${ERR}" "base_bytes" "ck dist --base overflow")

# Messages.
run(2 prof copy --bogus)
expect_match("${ERR}" "ck prof copy --help" "ck prof copy points to its own help")
expect_match("${ERR}" "unknown option '--bogus'" "ck prof copy --bogus")
run(2 prof copy --shape 4x4 host)
expect_match("${ERR}" "unexpected argument 'host'" "stray word")
run(2 prof cast --shape 4x4 --to bf16 --scale abc)
expect_match("${ERR}" "--scale abc: expected a finite number" "--scale abc")
run(1 desc "foo(x=1)")
expect_match("${ERR}" "not 'foo'" "unknown descriptor base")
run(1 desc "packed(lengths=[4,4]) | transpose(perm=[0,0])")
expect_match("${ERR}" "perm\\[0\\] and perm\\[1\\] are both 0" "transpose repeats")
run(2 dist --pattern block --block 99999999 --tile 16x64)
expect_match("${ERR}" "--block 99999999 is out of range; accepted: 1 to 1024" "dist --block")
# values beyond 64 bits are refused as such, not clamped to 2^63-1 by strtoll
foreach(bad "--base;99999999999999999999" "--base;-99999999999999999999"
        "--strides;99999999999999999999,1" "--p;99999999999999999999,0"
        "--tile;99999999999999999999x64" "--vector;99999999999999999999")
  run(2 dist --pattern block --block 64 --tile 16x64 --vector 8 ${bad})
  list(GET bad 1 value)
  expect_match("${ERR}" "'${value}'" "dist ${bad}")
  if(ERR MATCHES "9223372036854775807")
    message(FATAL_ERROR "dist ${bad} clamped to 2^63-1: ${ERR}")
  endif()
endforeach()
run(2 dist --pattern block --block 64 --tile 16x0)
expect_match("${ERR}" "--tile 16x0" "dist --tile")

# ck prof gemm (and ck tune gemm) read every value strictly and tell stray words from unknown
# options, like the other ck prof operations.
foreach(bad "--m;16x" "--m;99999999999999999999" "--k;0" "--n;-4")
  run(2 prof gemm --m 16 --n 16 --k 16 ${bad} --device host)
  list(GET bad 1 value)
  expect_match("${ERR}" "${value}: expected a whole number from 1 to 2\\^40" "prof gemm ${bad}")
endforeach()
foreach(bad "--alpha;abc" "--beta;nan" "--alpha;inf" "--beta;1e39" "--instance;abc")
  run(2 prof gemm --m 16 --n 16 --k 16 ${bad} --device host)
  list(GET bad 0 opt)
  expect_match("${ERR}" "${opt}" "prof gemm ${bad}")
endforeach()
run(2 prof gemm --m 16 --n 16 --k 16 --device host host)
expect_match("${ERR}" "unexpected argument 'host'" "prof gemm stray word")
run(2 prof gemm --m 16 --n 16 --k 16 --device host --bogus)
expect_match("${ERR}" "unknown option '--bogus'" "prof gemm --bogus")
run(2 prof gemm --m 16 --n 16 --k 16 --epilogue "((x0")
expect_match("${ERR}" "--epilogue: ck_ew_parse" "prof gemm --epilogue")
run(2 tune gemm --m 16 --n 16 --k 16 --device host --alpha x)
expect_match("${ERR}" "^ck tune gemm: --alpha x" "tune gemm names itself")

# A host allocation that fails is named as such (not "no error"). Address space limited with
# ulimit -v, which the sanitizers' shadow memory does not survive: plain builds only.
if(NOT SANITIZE)
  foreach(cmd "prof layernorm --shape 1048576x1024" "prof rmsnorm --shape 1048576x1024 --bwd"
          "prof gemm --m 65536 --n 65536 --k 65536")
    execute_process(COMMAND sh -c "ulimit -v 3000000 && exec \"$0\" ${cmd} --device host --reps 1 --warmup 0"
                    ${CK} RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET TIMEOUT 120)
    if(NOT rc EQUAL 1 OR NOT err MATCHES "out of host memory|has no room")
      message(FATAL_ERROR "ck ${cmd} under ulimit -v: exit ${rc}, stderr: ${err}")
    endif()
  endforeach()
endif()

# Output that cannot be written is a failure with a reason.
foreach(cmd "--help" "info" "types" "desc;packed(lengths=[4])" "cache;list"
        "dist;--pattern;block;--block;64;--tile;16x64;--vector;8")
  execute_process(COMMAND ${CK} ${cmd} RESULT_VARIABLE rc OUTPUT_FILE /dev/full ERROR_VARIABLE err
                  TIMEOUT 60)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "cannot write the output")
    message(FATAL_ERROR "ck ${cmd} > /dev/full: exit ${rc}, stderr: ${err}")
  endif()
endforeach()
run(1 dist --pattern block --block 64 --tile 16x64 --vector 8 --svg /nonexistent-dir/x.svg)
expect_match("${ERR}" "cannot write '/nonexistent-dir/x.svg': No such file" "svg path")

# Large tiles are drawn (compactly).
file(REMOVE "${WORK_DIR}/harden-big.svg")
run(0 dist --pattern block --block 256 --tile 256x256 --vector 8 --svg "${WORK_DIR}/harden-big.svg")
file(READ "${WORK_DIR}/harden-big.svg" svg)
expect_match("${svg}" "compact drawing" "256x256 svg")
expect_match("${svg}" "</svg>" "256x256 svg complete")

# False failures of the check: narrow types, saturation, infinities.
run(0 prof elementwise --expr "relu(x0 * x1 + x2)" --dtype fp6e2m3 --shape 3x1024 --device host
    --reps 1 --warmup 0)
run(0 prof elementwise --expr "x0/0" --dtype f32 --shape 4x33 --device host --reps 1 --warmup 0)
foreach(t fp8e4m3 fp8e4m3fnuz)
  run(0 prof elementwise --expr "relu(x0 * x1 + x2)" --dtype ${t} --shape 17x4097 --device host
      --reps 1 --warmup 0)
endforeach()
# NaN (0/0) in a type without NaN: the kernel stores what the conversion makes of NaN.
foreach(t fp6e2m3 fp4e2m1)
  foreach(e "x0/0" "0*x0/0")
    run(0 prof elementwise --expr "${e}" --dtype ${t} --shape 4x1024 --device host --reps 1
        --warmup 0)
  endforeach()
endforeach()

# A FIFO in the cache directory blocks nothing; clear reports what it cannot remove.
set(dir "${WORK_DIR}/harden-cache")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
execute_process(COMMAND mkfifo "${dir}/0123456789abcdef0123456789abcdef.host-so" RESULT_VARIABLE rc)
if(rc EQUAL 0)
  set(ENV{CK_CACHE_DIR} "${dir}")
  run(0 cache list)
  expect_match("${OUT}" "corrupted" "FIFO listed as not valid")
  run(0 prof copy --shape 4x4 --device host --reps 1 --warmup 0)
  file(MAKE_DIRECTORY "${dir}/fedcba9876543210fedcba9876543210.cubin/x")
  run(1 cache clear)
  expect_match("${ERR}" "could not be removed" "cache clear reports")
  file(REMOVE_RECURSE "${dir}")
endif()

# A directory others may write is refused with one warning (CK_LOG=warn), not one per kernel,
# and the run goes on uncached.
set(dir "${WORK_DIR}/harden-cache-shared")
file(REMOVE_RECURSE "${dir}")
file(MAKE_DIRECTORY "${dir}")
file(CHMOD "${dir}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_WRITE
     GROUP_EXECUTE WORLD_READ WORLD_WRITE WORLD_EXECUTE)
set(ENV{CK_CACHE_DIR} "${dir}")
set(ENV{CK_LOG} "warn")
run(0 prof softmax --shape 4x8 --device host --reps 1 --warmup 0)
unset(ENV{CK_LOG})
string(REGEX MATCHALL "module cache" hits "${ERR}")
list(LENGTH hits nhits)
if(NOT nhits EQUAL 1 OR NOT ERR MATCHES "is not used because its group or other users may write")
  message(FATAL_ERROR "refused cache directory: expected one warning, got:\n${ERR}")
endif()
file(GLOB planted "${dir}/*")
if(planted)
  message(FATAL_ERROR "refused cache directory was written: ${planted}")
endif()
# an entry planted there is listed as not used, and the listing says why
file(WRITE "${dir}/0123456789abcdef0123456789abcdef.host-so" "planted")
run(0 cache list)
expect_match("${OUT}" "host-so +[0-9]+ bytes +not used" "entry of a refused directory")
expect_match("${OUT}" "not used: ck neither reads nor writes this directory because its group"
             "cache list names the refusal")
file(REMOVE_RECURSE "${dir}")

# ck convert rounds the exact decimal once (not strtod's f64 again).
run(0 convert fp8e4m3 1.0625000000000000000000000000001 1.0625 -1.0625000000000000000000001)
expect_match("${OUT}" "1.0625000000000000000000000000001 +-> 0x39" "above the tie rounds up")
expect_match("${OUT}" "1.0625 +-> 0x38" "the tie itself to even")
expect_match("${OUT}" "-1.0625000000000000000000001 +-> 0xb9" "negative, above the tie")
run(0 convert --round rtz bf16 0.99999999999999999999999999)
expect_match("${OUT}" "-> 0x3f7f" "rtz of a decimal just below 1")
# ... also to f64, where strtod's own rounding (nearest even) is wrong for rtz and rna
run(0 convert --round rtz f64 0.1 -0.1 1e400)
expect_match("${OUT}" "0.1 +-> 0x3fb9999999999999 = [^\n]*\\(rounded\\)" "rtz f64 0.1")
expect_match("${OUT}" "-0.1 +-> 0xbfb9999999999999" "rtz f64 -0.1")
expect_match("${OUT}" "1e400 +-> 0x7fefffffffffffff" "rtz f64 beyond the range stays finite")
run(0 convert --round rna f64 9007199254740993 -9007199254740993 9007199254740995)
expect_match("${OUT}" "9007199254740993 +-> 0x4340000000000001" "rna f64 tie away from zero")
expect_match("${OUT}" "-9007199254740993 +-> 0xc340000000000001" "rna f64 negative tie")
expect_match("${OUT}" "9007199254740995 +-> 0x4340000000000002" "rna f64 tie, even is away")
# and the note says what happened to the decimal, not to strtod's f64
run(0 convert f64 0.1 9007199254740993 1e400 1e-400 0.5 inf)
expect_match("${OUT}" "0.1 +-> [^\n]*\\(rounded\\)" "0.1 is not exact in f64")
expect_match("${OUT}" "9007199254740993 +-> [^\n]*\\(rounded\\)" "2^53+1 is not exact")
expect_match("${OUT}" "1e400 +-> [^\n]*\\(overflow to inf\\)" "1e400 overflows")
expect_match("${OUT}" "1e-400 +-> [^\n]*\\(underflow to zero\\)" "1e-400 underflows")
expect_match("${OUT}" "0.5 +-> [^\n]*\\(exact\\)" "0.5 is exact")
expect_match("${OUT}" "inf +-> [^\n]*\\(inf\\)" "inf is inf")
run(0 convert fp8e4m3 1e-400 0x1p-2000 1e99999999999999999999)
expect_match("${OUT}" "1e-400 +-> 0x00 = 0 +\\(underflow to zero\\)" "fp8 1e-400")
expect_match("${OUT}" "0x1p-2000 +-> 0x00 = 0 +\\(underflow to zero\\)" "fp8 hex underflow")
expect_match("${OUT}" "1e99999999999999999999 +-> 0x7e" "fp8 huge exponent saturates")
