# Writes the device prelude into a C++ source as a raw string literal (run at build time).
file(READ "${INPUT}" PRELUDE)
file(WRITE "${OUTPUT}.tmp"
     "// Generated from src/device/prelude.h by cmake/embed_prelude.cmake; do not edit.\n"
     "#include \"codegen/emit.hpp\"\n"
     "namespace weft::codegen {\n"
     "const std::string& prelude() {\n"
     "    static const std::string text = R\"weft_prelude(${PRELUDE})weft_prelude\";\n"
     "    return text;\n"
     "}\n"
     "}  // namespace weft::codegen\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
