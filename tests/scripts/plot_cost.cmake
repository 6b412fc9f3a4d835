# tools/plot-cost.py reads weft_deterministic_bench's first table (a run on an H200, kept in
# tests/plots/) and draws a bar per ratio: the README's second picture can be redrawn.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/tools/plot-cost.py ${WORK_DIR}/deterministic-cost.svg
                INPUT_FILE ${SOURCE_DIR}/tests/plots/deterministic_bench_h200.txt
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT out MATCHES "wrote .*deterministic-cost.svg \\(7 rows\\)")
  message(FATAL_ERROR "tools/plot-cost.py did not draw the benchmark's 7 rows:\n${out}${err}")
endif()
file(READ ${WORK_DIR}/deterministic-cost.svg svg)
string(REGEX MATCHALL "<rect x=" bars "${svg}")
list(LENGTH bars count)
# 6 rows with 4 bars (Weft's two modes, the spec's two), 1 row with Weft's 2, 4 legend boxes.
if(NOT count EQUAL 30)
  message(FATAL_ERROR "tools/plot-cost.py drew ${count} boxes; expected 30 (26 bars, 4 legend boxes)")
endif()
