# Builds the API reference with DOXYGEN from DOCS_DIR/Doxyfile and fails on any warning it logs.
cmake_minimum_required(VERSION 3.25)
file(REMOVE ${DOCS_DIR}/warnings.log)
execute_process(COMMAND ${DOXYGEN} ${DOCS_DIR}/Doxyfile WORKING_DIRECTORY ${DOCS_DIR}
                RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "doxygen failed (${status}):\n${err}")
endif()
file(READ ${DOCS_DIR}/warnings.log warnings)
string(STRIP "${warnings}" warnings)
if(NOT warnings STREQUAL "")
  message(FATAL_ERROR "the API reference has warnings (fix the comments in include/weft/):\n${warnings}")
endif()
