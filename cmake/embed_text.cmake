# Writes one header into a C++ source as a raw string literal returned by FUNCTION in NAMESPACE
# (build time), for device code that NVRTC compiles after the device prelude: the header's
# include guard and its includes of src/device/ headers (the prelude has them) are dropped.
file(READ "${INPUT}" text)
string(REPLACE "#pragma once\n" "" text "${text}")
string(REGEX REPLACE "#include \"device/[a-z_]+[.]h\"\n" "" text "${text}")
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${NAME} by cmake/embed_text.cmake; do not edit.\n"
     "namespace ${NAMESPACE} {\n"
     "const char* ${FUNCTION}() {\n"
     "    return R\"weft_text(${text})weft_text\";\n"
     "}\n"
     "}  // namespace ${NAMESPACE}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
