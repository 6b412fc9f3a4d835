# Writes the device prelude headers into a C++ source as one raw string literal (build time).
# INPUTS is a list of headers, concatenated in dependency order.
set(PRELUDE "")
foreach(input ${INPUTS})
  file(READ "${input}" part)
  # One translation unit: the include guards of the separate headers are not needed.
  string(REPLACE "#pragma once\n" "" part "${part}")
  # Nor their includes of each other: the headers come in dependency order.
  string(REGEX REPLACE "#include \"device/[a-z_]+[.]h\"\n" "" part "${part}")
  string(APPEND PRELUDE "${part}\n")
endforeach()
file(WRITE "${OUTPUT}.tmp"
     "// Generated from src/device/*.h by cmake/embed_prelude.cmake; do not edit.\n"
     "#include \"codegen/generated.hpp\"\n"
     "namespace weft::codegen {\n"
     "const std::string& prelude() {\n"
     "    static const std::string text = R\"weft_prelude(${PRELUDE})weft_prelude\";\n"
     "    return text;\n"
     "}\n"
     "}  // namespace weft::codegen\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
