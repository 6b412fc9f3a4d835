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

namespace {

// Every rank learns whether all called the same collective (`op`) with as many fields: two
// fixed-size exchanges, so that ranks that called different collectives, or passed lists of
// different lengths, throw the same weft::Error instead of mismatching (or waiting on) the
// exchange of the fields. A rank whose call differs learns another rank's call through a
// broadcast of its name, so that the message names both.
void agree_on_call(const Engine& engine, const std::string& op, size_t fields, const char* first_field,
                   const std::source_location& s) {
    const auto id = static_cast<int64_t>(content_hash(op.data(), op.size()));
    int64_t header[4] = {id, ~id, static_cast<int64_t>(fields), ~static_cast<int64_t>(fields)};
    engine.max_i64(header, 4, op.c_str());
    const auto fail = [&](const std::string& message) {
        throw Error(op + ": " + message, {}, s.file_name(), s.line());
    };
    if (header[0] != ~header[1]) {
        // A rank of the call of the largest id and one of the smallest say what they called.
        int64_t named[2] = {header[0] == id ? engine.rank() : -1, ~header[1] == id ? engine.rank() : -1};
        engine.max_i64(named, 2, op.c_str());
        std::string calls[2];
        for (int k = 0; k < 2; ++k) {
            char name[128] = {};
            if (engine.rank() == named[k]) op.copy(name, sizeof name - 1);
            engine.broadcast(name, sizeof name, static_cast<int>(named[k]), op.c_str());
            calls[k] = "rank " + std::to_string(named[k]) + ": " + name;
        }
        fail("the ranks made different collective calls (" + calls[0] + ", " + calls[1] +
             "); every rank must make the same calls in the same order");
    }
    if (header[2] != ~header[3])
        fail(std::string("the ranks passed different ") +
             (first_field ? first_field : "numbers of arguments") + "; every rank must pass the same");
}

}  // namespace

void agree(const Engine& engine, const std::string& op, const std::vector<Field>& fields,
           const std::string& problem, const std::source_location& s) {
    agree_on_call(engine, op, fields.size(), fields.empty() ? nullptr : fields[0].name, s);
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
