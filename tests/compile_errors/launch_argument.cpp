// Swapped launch arguments: the message names the argument's number (counted from 1), the
// parameter's type and the argument's type.
// expect: a launch argument does not fit its kernel parameter
// expect: Argument = 1; Parameter = weft::Array<float
// expect: Given = weft::DeviceArray<int>
#include <weft/weft.hpp>

void run(weft::Module& m) {
    auto k = m.kernel("k", {"values", "bins"}, [](weft::Array<float> values, weft::Array<int> bins) {
        values[bins[weft::tid()]] = 1.0f;
    });
    auto values = weft::zeros<float>(4);
    auto bins = weft::zeros<int>(4);
#ifdef WEFT_BAD
    weft::launch(k, 4, bins, values);
#else
    weft::launch(k, 4, values, bins);
#endif
}
