# The README's picture can be redrawn: tools/plot-demo.py reads the demo's output (DEMO) and
# draws every bin's ten runs.
cmake_minimum_required(VERSION 3.25)
execute_process(COMMAND ${DEMO} OUTPUT_VARIABLE demo RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the demo failed (${status}):\n${demo}")
endif()
file(WRITE ${WORK_DIR}/demo.out "${demo}")
execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/tools/plot-demo.py ${WORK_DIR}/demo-runs.svg
                INPUT_FILE ${WORK_DIR}/demo.out OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR NOT out MATCHES "wrote .*demo-runs.svg \\(4 bins, 10 runs\\)")
  message(FATAL_ERROR "tools/plot-demo.py did not draw the demo's 4 bins and 10 runs:\n${out}${err}")
endif()
