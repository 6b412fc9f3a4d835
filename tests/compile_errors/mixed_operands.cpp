// A Float plus an Int: one message that names weft::cast, not every operator's candidates.
// expect: the operands of + have different element types
// expect: convert one with weft::cast<T>(x)
#include <weft/weft.hpp>

void define(weft::Module& m) {
    m.kernel("mixed", {"x", "i", "out"}, [](weft::Float x, weft::Int i, weft::Array<float> out) {
#ifdef WEFT_BAD
        out[0] = x + i;
#else
        out[0] = x + weft::cast<float>(i);
#endif
    });
}
