// A user's program: one kernel, launched on the default device, its result checked on the host.
#include <cstdio>
#include <vector>
#include <weft/weft.hpp>

int main() {
    try {
        weft::Module module{"consumer"};
        auto saxpy = module.kernel("saxpy", {"a", "x", "y"},
                                   [](weft::Float a, weft::Array<float> x, weft::Array<float> y) {
                                       auto tid = weft::tid();
                                       y[tid] = a * x[tid] + y[tid];
                                   });
        const int n = 1000;
        std::vector<float> x(n), y(n);
        for (int i = 0; i < n; ++i) {
            x[i] = static_cast<float>(i);
            y[i] = 1.0f;
        }
        const weft::Device dev = weft::default_device();
        auto dx = weft::from_vector(x, dev);
        auto dy = weft::from_vector(y, dev);
        weft::launch(saxpy, n, 2.0f, dx, dy);
        const std::vector<float> got = dy.to_vector();
        for (int i = 0; i < n; ++i) {
            if (got[i] != 2.0f * x[i] + 1.0f) {
                std::fprintf(stderr, "weft_consumer: y[%d] = %g, expected %g\n", i, got[i],
                             2.0f * x[i] + 1.0f);
                return 1;
            }
        }
        std::printf("weft_consumer: saxpy on %s is right\n", dev.name().c_str());
        return 0;
    } catch (const weft::Error& e) {
        std::fprintf(stderr, "weft_consumer: %s\n", e.what());
        return 1;
    }
}
