// The calling thread's resolve sink (runtime/det/deferred.hpp).
#include "runtime/det/deferred.hpp"

namespace weft::runtime::det {

namespace {
thread_local ResolveSink* current = nullptr;
}

ResolveSink* resolve_sink() {
    return current;
}

ResolveSink* exchange_resolve_sink(ResolveSink* sink) {
    ResolveSink* previous = current;
    current = sink;
    return previous;
}

}  // namespace weft::runtime::det
