// A C++ if on a traced value: the message names weft::if_, weft::while_ and weft::select.
// expect: a traced value has no value while the kernel is traced
// expect: weft::if_(cond, [&] { ... })
#include <weft/weft.hpp>

void run(weft::Module& m) {
    m.kernel("k", {"values"}, [](weft::Array<float> values) {
        weft::Float v = values[weft::tid()];
        weft::Bool big = v > 1.0f && !(v > 2.0f) || v < -5.0f;
        big = big && true;
        big = false || !big;
#ifdef WEFT_BAD
        if (big) values[weft::tid()] = 1.0f;
#else
        weft::if_(big, [&] { values[weft::tid()] = 1.0f; });
#endif
    });
}
