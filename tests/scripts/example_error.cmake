# Runs example PROGRAM (named NAME) with WEFT_DEVICE set to a device that does not exist: the
cmake_minimum_required(VERSION 3.25)
# example must print the weft::Error on one line starting with "NAME: " and exit with status 1,
# never abort ("terminate called").
set(ENV{WEFT_DEVICE} "no-such-device")
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err
                TIMEOUT 120)
string(STRIP "${err}" err)
if(NOT status STREQUAL "1")
  message(FATAL_ERROR "${NAME} exited with '${status}' (expected 1); stderr:\n${err}")
endif()
if(err MATCHES "terminate called" OR NOT err MATCHES "^${NAME}: [^\n]*WEFT_DEVICE is 'no-such-device'[^\n]*$")
  message(FATAL_ERROR "${NAME} should print one line '${NAME}: ...WEFT_DEVICE is 'no-such-device'...' on stderr; it printed:\n${err}")
endif()
message(STATUS "${NAME}: ${err}")
