# `ck dist` command line: JSON map of §7.5's example, --p selection, --check, --svg, errors.
# Run by ctest as `cmake -DCK=... -DWORK_DIR=... -P dist_cli.cmake`.
function(run expect_rc)
  execute_process(COMMAND ${CK} dist ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "ck dist ${ARGN}: exit ${rc}, expected ${expect_rc}\nstdout: ${out}\nstderr: ${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()
function(expect_eq got want what)
  if(NOT "${got}" STREQUAL "${want}")
    message(FATAL_ERROR "${what}: got '${got}', expected '${want}'")
  endif()
endfunction()

set(ENC "ck_tile::tile_distribution_encoding<ck_tile::sequence<>,
   ck_tile::tuple<ck_tile::sequence<2, 2>, ck_tile::sequence<2, 2>>,
   ck_tile::tuple<ck_tile::sequence<1>, ck_tile::sequence<2>>,
   ck_tile::tuple<ck_tile::sequence<0>, ck_tile::sequence<0>>,
   ck_tile::sequence<1, 2>, ck_tile::sequence<1, 1>>{}")

run(0 --json "${ENC}")
string(JSON x0 GET "${OUT}" x_lengths 0)
string(JSON x1 GET "${OUT}" x_lengths 1)
string(JSON ept GET "${OUT}" elements_per_thread)
string(JSON nr LENGTH "${OUT}" r_lengths)
string(JSON np LENGTH "${OUT}" p_lengths)
string(JSON nmap LENGTH "${OUT}" map)
expect_eq("${x0}x${x1} ${ept} ${nr} ${np} ${nmap}" "4x4 4 0 2 16" "ck dist --json lengths")
# Every (P, Y): X = (2*P0 + Y0, 2*P1 + Y1), d = 2*Y0 + Y1.
math(EXPR last "${nmap} - 1")
foreach(i RANGE ${last})
  string(JSON p0 GET "${OUT}" map ${i} p 0)
  string(JSON p1 GET "${OUT}" map ${i} p 1)
  string(JSON y0 GET "${OUT}" map ${i} y 0)
  string(JSON y1 GET "${OUT}" map ${i} y 1)
  string(JSON xa GET "${OUT}" map ${i} x 0)
  string(JSON xb GET "${OUT}" map ${i} x 1)
  string(JSON d GET "${OUT}" map ${i} d)
  math(EXPR wa "2 * ${p0} + ${y0}")
  math(EXPR wb "2 * ${p1} + ${y1}")
  math(EXPR wd "2 * ${y0} + ${y1}")
  expect_eq("${xa},${xb},${d}" "${wa},${wb},${wd}" "ck dist --json map entry ${i}")
endforeach()

# --p selects threads (repeatable); encoding split over several arguments.
run(0 --json --p 1,0 --p 0,1 "tile_distribution_encoding<sequence<>," "tuple<sequence<2, 2>, sequence<2, 2>>,"
    "tuple<sequence<1>, sequence<2>>, tuple<sequence<0>, sequence<0>>, sequence<1, 2>, sequence<1, 1>>")
string(JSON nmap LENGTH "${OUT}" map)
string(JSON xa GET "${OUT}" map 0 x 0)
string(JSON pb GET "${OUT}" map 4 p 1)
expect_eq("${nmap} ${xa} ${pb}" "8 2 1" "ck dist --json --p")

# Text output and the check report.
run(0 "${ENC}")
if(NOT OUT MATCHES "X lengths: \\[4, 4\\]" OR NOT OUT MATCHES "3:3")
  message(FATAL_ERROR "ck dist text output:\n${OUT}")
endif()
run(0 --pattern thread --block 256 --tile 64x64 --vector 8 --check --dtype f16)
if(NOT OUT MATCHES "coverage: +ok" OR NOT OUT MATCHES "8 elements \\(16 bytes\\)" OR NOT OUT MATCHES "100.0% efficiency")
  message(FATAL_ERROR "ck dist --check:\n${OUT}")
endif()
run(0 --json --check --strides 1,64 --pattern thread --block 256 --tile 64x64 --vector 8)
string(JSON ok GET "${OUT}" check coverage_ok)
string(JSON ve GET "${OUT}" check vector_elements)
expect_eq("${ok} ${ve}" "ON 2" "ck dist --json --check")

# --desc: a real descriptor (ck desc syntax) and the load/store traits' vectors.
run(0 --json --check --dtype f16 --desc "naive(lengths=[64,64], strides=[72,1])"
    --pattern thread --block 256 --tile 64x64 --vector 8)
string(JSON tv GET "${OUT}" traits scalars_per_vector)
string(JSON td GET "${OUT}" traits vector_dim_y)
string(JSON tb GET "${OUT}" traits vector_bytes)
string(JSON tn GET "${OUT}" traits num_accesses)
string(JSON to GET "${OUT}" traits access_order 1)
string(JSON ve GET "${OUT}" check vector_elements)
string(JSON ok GET "${OUT}" check coverage_ok)
expect_eq("${tv} ${td} ${tb} ${tn} ${to} ${ve} ${ok}" "8 1 16 2 1 8 ON" "ck dist --desc traits")
# Columns 60..63 are padding: vectors of 4 (60 is no multiple of 8), padded accesses masked.
run(0 --json --check --dtype f16 --desc "naive(lengths=[16,60], strides=[64,1]) | right_pad(dim=1, right=4)"
    --pattern thread --block 64 --tile 16x64 --vector 8)
string(JSON tv GET "${OUT}" traits scalars_per_vector)
string(JSON masked GET "${OUT}" check masked_accesses)
string(JSON mis GET "${OUT}" check misaligned_accesses)
expect_eq("${tv} ${masked} ${mis}" "4 16 0" "ck dist --desc with padding")
run(0 --check --dtype f16 --desc "naive(lengths=[16,60], strides=[64,1]) | right_pad(dim=1, right=4)"
    --pattern thread --block 64 --tile 16x64 --vector 8)
if(NOT OUT MATCHES "traits: +4 elements \\(64 bits\\) per access along Y1" OR NOT OUT MATCHES "16 on padding")
  message(FATAL_ERROR "ck dist --check --desc text:\n${OUT}")
endif()
# Traits without --check (default f32, packed): Y1 names X1's last component, 2 per vector.
run(0 --json "${ENC}")
string(JSON tv GET "${OUT}" traits scalars_per_vector)
string(JSON td GET "${OUT}" traits vector_dim_y)
expect_eq("${tv} ${td}" "2 1" "ck dist --json traits")
# Sub-byte types: traits in bits (fp4: 32 per 16 bytes), but --check counts whole bytes.
run(0 --json --dtype fp4e2m1 --pattern thread --block 64 --tile 64x64 --vector 32)
string(JSON tv GET "${OUT}" traits scalars_per_vector)
string(JSON tbits GET "${OUT}" traits vector_bits)
expect_eq("${tv} ${tbits}" "32 128" "ck dist --json fp4 traits")
run(2 --check --dtype fp4e2m1 "${ENC}")
run(1 --check --dtype fp4e2m1 --desc "packed(lengths=[4,4])" "${ENC}")
run(2 --check --desc "packed(lengths=[4,4])" --strides 4,1 "${ENC}")
run(1 --check --desc "packed(lengths=[4,8])" "${ENC}")
if(NOT ERR MATCHES "length 8")
  message(FATAL_ERROR "ck dist --desc length mismatch message: ${ERR}")
endif()
run(1 --check --desc "packed(lengths=[4,4]" "${ENC}")
run(2 --check --desc "packed(lengths=[M,4])" "${ENC}")
run(2 --strides 4,4,1 "${ENC}")

# Column reads of 128-byte rows: 32-way bank conflicts, 4-way (the minimum) under the 128B swizzle.
set(COLS "tile_distribution_encoding<sequence<>, tuple<sequence<32>, sequence<8, 8>>, tuple<sequence<1>>, tuple<sequence<0>>, sequence<2, 2>, sequence<0, 1>>")
run(0 --json --check --dtype f16 "${COLS}")
string(JSON ways GET "${OUT}" check bank_ways_max)
run(0 --json --check --dtype f16 --swizzle 128B "${COLS}")
string(JSON ways_swz GET "${OUT}" check bank_ways_max)
expect_eq("${ways} ${ways_swz}" "32 4" "ck dist --check --swizzle")
run(2 --check --swizzle 16B "${COLS}")

# --svg writes a drawing.
file(REMOVE "${WORK_DIR}/dist.svg")
run(0 --svg "${WORK_DIR}/dist.svg" "${ENC}")
file(READ "${WORK_DIR}/dist.svg" svg)
if(NOT svg MATCHES "<svg" OR NOT svg MATCHES ">L3<")
  message(FATAL_ERROR "ck dist --svg wrote:\n${svg}")
endif()

# Errors: malformed encoding (ERRATA 000:L3475) names the component; parse errors; usage.
run(1 "tile_distribution_encoding<sequence<>, tuple<sequence<4, 2>, sequence<4, 2>>, tuple<sequence<1>, sequence<1>>, tuple<sequence<0>, sequence<0>>, sequence<1, 1>, sequence<1, 1>>")
if(NOT ERR MATCHES "rhs\\[1\\]\\[0\\]")
  message(FATAL_ERROR "malformed encoding message: ${ERR}")
endif()
run(1 "tile_distribution_encoding<sequence<>>")
run(2)
run(2 --bogus "${ENC}")
run(2 --p 5,0 "${ENC}")
run(2 --p 1 "${ENC}")
run(2 --dtype nope --check "${ENC}")
