// Collective argument checks (distributed/agreement.hpp).
#include "distributed/agreement.hpp"

#include "weft/error.hpp"

namespace weft {

namespace distributed {

uint64_t content_hash(const void* bytes, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    const auto* p = static_cast<const unsigned char*>(bytes);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

uint64_t shape_key(const Shape& shape) {
    int64_t extents[5] = {shape.ndim, 0, 0, 0, 0};
    for (int d = 0; d < shape.ndim; ++d) extents[1 + d] = shape[d];
    return content_hash(extents, sizeof extents);
}

void agree(const Engine& engine, const std::string& op, const std::vector<Field>& fields,
           const std::string& problem, const std::source_location& s) {
    // Maxima of x and of ~x give the largest and the smallest value of each field; the first word
    // is the lowest failing rank, as size - rank.
    std::vector<int64_t> words(1 + 2 * fields.size());
    words[0] = problem.empty() ? 0 : engine.size() - engine.rank();
    for (size_t f = 0; f < fields.size(); ++f) {
        words[1 + 2 * f] = static_cast<int64_t>(fields[f].value);
        words[2 + 2 * f] = ~static_cast<int64_t>(fields[f].value);
    }
    engine.max_i64(words.data(), words.size(), op.c_str());
    const auto fail = [&](const std::string& message) {
        throw Error(op + ": " + message, {}, s.file_name(), s.line());
    };
    if (!problem.empty()) fail(problem + " (on rank " + std::to_string(engine.rank()) + ")");
    if (words[0] != 0)
        fail("rank " + std::to_string(engine.size() - words[0]) +
             " could not take part (see its message); every rank stops here");
    for (size_t f = 0; f < fields.size(); ++f)
        if (words[1 + 2 * f] != ~words[2 + 2 * f])
            fail(std::string("the ranks passed different ") + fields[f].name + " (rank " +
                 std::to_string(engine.rank()) + ": " + std::to_string(fields[f].value) +
                 "); every rank must pass the same");
}

}  // namespace distributed

}  // namespace weft
