# Writes the device prelude headers into a C++ source as raw string literals (build time).
# INPUTS is a list of headers, concatenated in dependency order; DETERMINISTIC_INPUTS the headers
# after them that only code with deterministic atomics uses (prelude(), not plain_prelude()).
function(concatenate headers out)
  set(text "")
  foreach(input ${headers})
    file(READ "${input}" part)
    # One translation unit: the include guards of the separate headers are not needed.
    string(REPLACE "#pragma once\n" "" part "${part}")
    # Nor their includes of each other: the headers come in dependency order.
    string(REGEX REPLACE "#include \"device/[a-z_]+[.]h\"\n" "" part "${part}")
    string(APPEND text "${part}\n")
  endforeach()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
concatenate("${INPUTS}" PLAIN)
concatenate("${DETERMINISTIC_INPUTS}" DETERMINISTIC)
file(WRITE "${OUTPUT}.tmp"
     "// Generated from src/device/*.h by cmake/embed_prelude.cmake; do not edit.\n"
     "#include \"codegen/generated.hpp\"\n"
     "namespace weft::codegen {\n"
     "namespace {\n"
     "const char* const kPlain = R\"weft_prelude(${PLAIN})weft_prelude\";\n"
     "const char* const kDeterministic = R\"weft_prelude(${DETERMINISTIC})weft_prelude\";\n"
     "}  // namespace\n"
     "const std::string& prelude() {\n"
     "    static const std::string text = std::string(kPlain) + kDeterministic;\n"
     "    return text;\n"
     "}\n"
     "const std::string& plain_prelude() {\n"
     "    static const std::string text = kPlain;\n"
     "    return text;\n"
     "}\n"
     "}  // namespace weft::codegen\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
