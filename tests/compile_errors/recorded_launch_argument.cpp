// RecordedLaunch checks its arguments as weft::launch does, naming the one that does not fit.
// expect: a launch argument does not fit its kernel parameter
// expect: Argument = 2; Parameter = weft::Scalar<float>; Given = weft::DeviceArray<float>
#include <weft/weft.hpp>

void record(weft::Module& m) {
    auto k = m.kernel("k", {"out", "scale"},
                      [](weft::Array<float> out, weft::Float scale) { out[weft::tid()] = scale; });
    auto out = weft::zeros<float>(4);
#ifdef WEFT_BAD
    weft::RecordedLaunch recorded(k, 4, out, out);
#else
    weft::RecordedLaunch recorded(k, 4, out, 2);
#endif
}
