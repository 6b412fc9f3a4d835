# Writes Weft's own kernel sources (src/device/kernels/*.cu) and the headers they share with the
# host into a C++ source as raw string literals (build time), one `const char*` per file, named
# after it (slot_bins.cu: kSlotBinsCu). Their includes of each other and of the prelude are
# dropped: src/runtime/cuda/device_sources.cpp puts the texts together in dependency order.
set(text "// Generated from src/device by cmake/embed_device_sources.cmake; do not edit.\n")
string(APPEND text "namespace weft::runtime::cuda::embedded {\n")
foreach(input ${INPUTS})
  file(READ "${input}" part)
  string(REPLACE "#pragma once\n" "" part "${part}")
  string(REGEX REPLACE "#include \"device/[a-z_/]+[.](h|cuh)\"\n" "" part "${part}")
  get_filename_component(file "${input}" NAME)
  string(REGEX REPLACE "[^A-Za-z0-9]+" ";" words "${file}")
  set(name "k")
  foreach(word ${words})
    string(SUBSTRING "${word}" 0 1 head)
    string(SUBSTRING "${word}" 1 -1 tail)
    string(TOUPPER "${head}" head)
    string(APPEND name "${head}${tail}")
  endforeach()
  string(APPEND text "extern const char* const ${name};\n"
                     "const char* const ${name} = R\"weft_device(${part})weft_device\";\n")
endforeach()
string(APPEND text "}  // namespace weft::runtime::cuda::embedded\n")
file(WRITE "${OUTPUT}.tmp" "${text}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
