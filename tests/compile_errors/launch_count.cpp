// A launch with an argument missing says so, once.
// expect: the number of launch arguments (after the grid) differs from the kernel's number of parameters
#include <weft/weft.hpp>

void run(weft::Module& m) {
    auto k = m.kernel("k", {"out", "scale"},
                      [](weft::Array<float> out, weft::Float scale) { out[weft::tid()] = scale; });
    auto out = weft::zeros<float>(4);
#ifdef WEFT_BAD
    weft::launch(k, 4, out);
#else
    weft::launch(k, 4, out, 1.0f);
#endif
}
