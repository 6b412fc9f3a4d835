// Array views, host-side and kernel-side: every load, store and atomic lands on exactly the right element.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <regex>
#include <string>
#include <tuple>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::DeviceArray;
using weft::Int;
using weft::Shape;
using weft::test::error_from;

weft::Device dev() {
    return weft::test::test_device();
}

weft::Module& module() {
    static weft::Module m{"views"};
    return m;
}

template <class T>
std::string type_name() {
    return weft::dtype_name(weft::dtype_of<T>);
}

// ---------------------------------------------------------------------------------------------
// Kernels. Each applies one operation, chosen by `op`, at every index of a view.

enum Op { kLoad, kStore, kAtomicAdd, kPlusEquals, kAtomicMax, kNumOps };
const char* const kOpNames[] = {"load", "store", "atomic_add", "+=", "atomic_max"};

// At index i... of `view`: load into out, store from src, or an atomic with src's element.
template <class T, int N, class... I>
void apply_op(const Array<T, N>& view, const Array<T, N>& src, const Array<T, N>& out, const Int& op,
              const I&... i) {
    weft::if_(op == int(kLoad), [&] { out(i...) = view(i...); });
    weft::if_(op == int(kStore), [&] { view(i...) = src(i...); });
    weft::if_(op == int(kAtomicAdd), [&] { weft::atomic_add(view, i..., src(i...)); });
    weft::if_(op == int(kPlusEquals), [&] { view(i...) += src(i...); });
    weft::if_(op == int(kAtomicMax), [&] { weft::atomic_max(view, i..., src(i...)); });
}

template <class T, int N>
using OpsKernel = weft::Kernel<Array<T, N>, Array<T, N>, Array<T, N>, Int>;

// The view is the argument (a host-side view, or a whole array).
template <class T, int N>
OpsKernel<T, N> make_ops_kernel() {
    return module().kernel("ops" + std::to_string(N) + "_" + type_name<T>(), {"view", "src", "out", "op"},
                           [](Array<T, N> view, Array<T, N> src, Array<T, N> out, Int op) {
                               const auto idx = weft::tid<N>();
                               std::apply([&](const auto&... i) { apply_op(view, src, out, op, i...); }, idx);
                           });
}

template <class T>
struct Kernels {
    OpsKernel<T, 1> ops1 = make_ops_kernel<T, 1>();
    OpsKernel<T, 2> ops2 = make_ops_kernel<T, 2>();
    OpsKernel<T, 3> ops3 = make_ops_kernel<T, 3>();

    // Kernel-side views: row r of a 2-D array; plane p and line (p, q) of a 3-D array.
    weft::Kernel<Array<T, 2>, Int, Array<T>, Array<T>, Int> row =
        module().kernel("row_" + type_name<T>(), {"grid", "r", "src", "out", "op"},
                        [](Array<T, 2> grid, Int r, Array<T> src, Array<T> out, Int op) {
                            apply_op(grid[r], src, out, op, weft::tid());
                        });
    weft::Kernel<Array<T, 3>, Int, Array<T, 2>, Array<T, 2>, Int> plane =
        module().kernel("plane_" + type_name<T>(), {"cube", "p", "src", "out", "op"},
                        [](Array<T, 3> cube, Int p, Array<T, 2> src, Array<T, 2> out, Int op) {
                            auto [i, j] = weft::tid<2>();
                            apply_op(cube[p], src, out, op, i, j);
                        });
    weft::Kernel<Array<T, 3>, Int, Int, Array<T>, Array<T>, Int> line =
        module().kernel("line_" + type_name<T>(), {"cube", "p", "q", "src", "out", "op"},
                        [](Array<T, 3> cube, Int p, Int q, Array<T> src, Array<T> out, Int op) {
                            apply_op(cube[p][q], src, out, op, weft::tid());
                        });
    // Every row of a 2-D array (and of src and out), one thread per element.
    OpsKernel<T, 2> rows = module().kernel("rows_" + type_name<T>(), {"grid", "src", "out", "op"},
                                           [](Array<T, 2> grid, Array<T, 2> src, Array<T, 2> out, Int op) {
                                               auto [i, j] = weft::tid<2>();
                                               apply_op(grid[i], src[i], out[i], op, j);
                                           });
    // The same, with the rows passed to a weft function.
    weft::Func<void(Array<T>, Array<T>, Array<T>, Int, Int)> row_op = module().func(
        "row_op_" + type_name<T>(),
        [](Array<T> row, Array<T> src, Array<T> out, Int op, Int j) { apply_op(row, src, out, op, j); });
    OpsKernel<T, 2> func_rows =
        module().kernel("func_rows_" + type_name<T>(), {"grid", "src", "out", "op"},
                        [f = row_op](Array<T, 2> grid, Array<T, 2> src, Array<T, 2> out, Int op) {
                            auto [i, j] = weft::tid<2>();
                            f(grid[i], src[i], out[i], op, j);
                        });

    template <int N>
    const OpsKernel<T, N>& ops() const {
        if constexpr (N == 1)
            return ops1;
        else if constexpr (N == 2)
            return ops2;
        else
            return ops3;
    }
};

// Definition order is fixed, so every test process traces the same module.
const Kernels<int32_t> kIntKernels;
const Kernels<double> kDoubleKernels;

template <class T>
const Kernels<T>& kernels() {
    if constexpr (std::is_same_v<T, int32_t>)
        return kIntKernels;
    else
        return kDoubleKernels;
}

// ---------------------------------------------------------------------------------------------
// The host model. A view is described by hand, independently of the library: `where[k]` is the
// flat index in the base array of the view's element k (row-major order).

// A distinct value in every base element, so a write to the wrong element shows.
template <class T>
std::vector<T> sentinel(int64_t n) {
    std::vector<T> v(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) v[k] = T(100000 + 7 * k);
    return v;
}

// The operand of each view element for `op`. Stores write a value that depends only on the base
// element, so threads that share one (broadcast views) agree.
template <class T>
std::vector<T> operands(Op op, const std::vector<int64_t>& where) {
    std::vector<T> v(where.size());
    for (size_t k = 0; k < where.size(); ++k) {
        switch (op) {
            case kStore: v[k] = T(500000 + where[k]); break;
            case kAtomicMax: v[k] = T(100000 + 7 * where[k] + (k % 3 == 0 ? 3 : -3)); break;
            default: v[k] = T(int(k % 5) + 1); break;
        }
    }
    return v;
}

// The base after `op` at every view element.
template <class T>
std::vector<T> expected_base(Op op, std::vector<T> base, const std::vector<int64_t>& where,
                             const std::vector<T>& src) {
    for (size_t k = 0; k < where.size(); ++k) {
        T& e = base[where[k]];
        if (op == kStore) e = src[k];
        if (op == kAtomicAdd || op == kPlusEquals) e += src[k];
        if (op == kAtomicMax) e = std::max(e, src[k]);
    }
    return base;
}

template <class T>
std::vector<T> gather(const std::vector<T>& base, const std::vector<int64_t>& where) {
    std::vector<T> out;
    for (int64_t w : where) out.push_back(base[w]);
    return out;
}

weft::Dim dim_of(const Shape& s) {
    weft::Dim d(1);
    d.ndim = s.ndim;
    for (int k = 0; k < s.ndim; ++k) d.dims[k] = s.dims[k];
    return d;
}

// Launches a kernel that applies `op` through a view of shape `shape`, with src and out of that shape.
template <class T>
using Launcher = std::function<void(Op op, const DeviceArray<T>& src, const DeviceArray<T>& out)>;

// Runs every operation through the view and compares the whole base array (and, for loads, the
// output) with the model.
template <class T>
void check_ops(const std::string& what, DeviceArray<T> base, const Shape& shape,
               const std::vector<int64_t>& where, const Launcher<T>& launch) {
    ASSERT_EQ(shape.size(), static_cast<int64_t>(where.size())) << what;
    const std::vector<T> initial = sentinel<T>(base.size());
    for (int o = 0; o < kNumOps; ++o) {
        const Op op = static_cast<Op>(o);
        base.copy_from_host(initial.data(), initial.size());
        const std::vector<T> src = operands<T>(op, where);
        auto out = weft::full<T>(shape, T(-1), dev());
        launch(op, weft::from_vector(src, shape, dev()), out);
        EXPECT_EQ(base.to_vector(), expected_base(op, initial, where, src)) << what << ": " << kOpNames[o];
        if (op == kLoad) EXPECT_EQ(out.to_vector(), gather(initial, where)) << what << ": load";
    }
}

// A host-side view passed to a kernel.
template <class T, int N>
void check_view(const std::string& what, DeviceArray<T> base, DeviceArray<T> view,
                const std::vector<int64_t>& where) {
    ASSERT_EQ(view.ndim(), N) << what;
    check_ops<T>(what, base, view.shape(), where,
                 [&](Op op, const DeviceArray<T>& src, const DeviceArray<T>& out) {
                     weft::launch(kernels<T>().template ops<N>(), dim_of(view.shape()), view, src, out,
                                  static_cast<int>(op));
                 });
}

// Host copies through the view: to_vector, copy_from_host, fill_, zero_ and to().
template <class T>
void check_host_copies(const std::string& what, DeviceArray<T> base, DeviceArray<T> view,
                       const std::vector<int64_t>& where) {
    const std::vector<T> initial = sentinel<T>(base.size());
    base.copy_from_host(initial.data(), initial.size());
    EXPECT_EQ(view.to_vector(), gather(initial, where)) << what << ": to_vector";
    EXPECT_EQ(view.to(dev()).to_vector(), gather(initial, where)) << what << ": to";

    const std::vector<T> src = operands<T>(kStore, where);
    view.copy_from_host(src.data(), src.size());
    EXPECT_EQ(base.to_vector(), expected_base(kStore, initial, where, src)) << what << ": copy_from_host";

    base.copy_from_host(initial.data(), initial.size());
    view.fill_(T(3));
    EXPECT_EQ(base.to_vector(), expected_base(kStore, initial, where, std::vector<T>(where.size(), T(3))))
        << what << ": fill_";

    base.copy_from_host(initial.data(), initial.size());
    view.zero_();
    EXPECT_EQ(base.to_vector(), expected_base(kStore, initial, where, std::vector<T>(where.size(), T(0))))
        << what << ": zero_";

    // copy() into the view from a dense array, and out of it into a dense one.
    base.copy_from_host(initial.data(), initial.size());
    weft::copy(view, weft::from_vector(src, view.shape(), dev()));
    EXPECT_EQ(base.to_vector(), expected_base(kStore, initial, where, src)) << what << ": copy into";
    auto dense = weft::zeros<T>(view.shape(), dev());
    weft::copy(dense, view);
    EXPECT_EQ(dense.to_vector(), gather(base.to_vector(), where)) << what << ": copy out of";
}

template <class T, int N>
void check_all(const std::string& what, DeviceArray<T> base, DeviceArray<T> view,
               const std::vector<int64_t>& where) {
    check_view<T, N>(what, base, view, where);
    check_host_copies<T>(what, base, view, where);
}

// where[] for a view given by a function of its index, in row-major order.
std::vector<int64_t> where_1d(int64_t n, const std::function<int64_t(int64_t)>& f) {
    std::vector<int64_t> w;
    for (int64_t i = 0; i < n; ++i) w.push_back(f(i));
    return w;
}
std::vector<int64_t> where_2d(int64_t n0, int64_t n1, const std::function<int64_t(int64_t, int64_t)>& f) {
    std::vector<int64_t> w;
    for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j) w.push_back(f(i, j));
    return w;
}
std::vector<int64_t> where_3d(int64_t n0, int64_t n1, int64_t n2,
                              const std::function<int64_t(int64_t, int64_t, int64_t)>& f) {
    std::vector<int64_t> w;
    for (int64_t i = 0; i < n0; ++i)
        for (int64_t j = 0; j < n1; ++j)
            for (int64_t k = 0; k < n2; ++k) w.push_back(f(i, j, k));
    return w;
}

Shape shape2(int64_t a, int64_t b) {
    return Shape{a, b};
}

// ---------------------------------------------------------------------------------------------
// Host-side views, passed to kernels.

template <class T>
class Views : public ::testing::Test {};
using ViewTypes = ::testing::Types<int32_t, double>;
TYPED_TEST_SUITE(Views, ViewTypes);

TYPED_TEST(Views, RowOfA2DArray) {
    using T = TypeParam;
    auto base = weft::zeros<T>({5, 7}, dev());
    auto row = base[2];
    EXPECT_EQ(row.shape(), Shape(7));
    check_all<T, 1>("base[2]", base, row, where_1d(7, [](int64_t j) { return 2 * 7 + j; }));
    check_all<T, 1>("base[-1]", base, base[-1], where_1d(7, [](int64_t j) { return 4 * 7 + j; }));
    // select() fixes any dimension: column 3.
    check_all<T, 1>("select(1, 3)", base, base.select(1, 3),
                    where_1d(5, [](int64_t i) { return i * 7 + 3; }));
    check_all<T, 1>("select(1, -2)", base, base.select(1, -2),
                    where_1d(5, [](int64_t i) { return i * 7 + 5; }));
}

TYPED_TEST(Views, SliceWithAStep) {
    using T = TypeParam;
    auto base = weft::zeros<T>(20, dev());
    auto odd = base.slice(0, 1, weft::to_end, 2);
    EXPECT_EQ(odd.shape(), Shape(10));
    check_all<T, 1>("slice(0, 1, end, 2)", base, odd, where_1d(10, [](int64_t i) { return 1 + 2 * i; }));
    check_all<T, 1>("slice(0, 0, 20, 3)", base, base.slice(0, 0, 20, 3),
                    where_1d(7, [](int64_t i) { return 3 * i; }));
    check_all<T, 1>("slice(0, 5, 100, 4)", base, base.slice(0, 5, 100, 4),
                    where_1d(4, [](int64_t i) { return 5 + 4 * i; }));

    // A slice of columns of a 2-D array, with a step.
    auto grid = weft::zeros<T>({4, 9}, dev());
    auto cols = grid.slice(1, 1, 8, 3);  // columns 1, 4, 7
    EXPECT_EQ(cols.shape(), shape2(4, 3));
    check_all<T, 2>("grid.slice(1, 1, 8, 3)", grid, cols,
                    where_2d(4, 3, [](int64_t i, int64_t j) { return i * 9 + 1 + 3 * j; }));
}

TYPED_TEST(Views, SliceWithNegativeBounds) {
    using T = TypeParam;
    auto base = weft::zeros<T>(20, dev());
    check_all<T, 1>("slice(0, -7, -1)", base, base.slice(0, -7, -1),
                    where_1d(6, [](int64_t i) { return 13 + i; }));
    check_all<T, 1>("slice(0, -3, end)", base, base.slice(0, -3, weft::to_end),
                    where_1d(3, [](int64_t i) { return 17 + i; }));
    // Bounds beyond the ends are clamped, as in Python.
    check_all<T, 1>("slice(0, -100, 5)", base, base.slice(0, -100, 5),
                    where_1d(5, [](int64_t i) { return i; }));
    EXPECT_EQ(base.slice(0, 15, 3).size(), 0);
    EXPECT_EQ(base.slice(0, -2, -5).size(), 0);

    auto grid = weft::zeros<T>({6, 8}, dev());
    check_all<T, 2>("grid.slice(1, -6, -1, 2)", grid, grid.slice(1, -6, -1, 2),
                    where_2d(6, 3, [](int64_t i, int64_t j) { return i * 8 + 2 + 2 * j; }));
    check_all<T, 2>("grid.slice(0, -2, end)", grid, grid.slice(0, -2, weft::to_end),
                    where_2d(2, 8, [](int64_t i, int64_t j) { return (4 + i) * 8 + j; }));
}

TYPED_TEST(Views, TransposeOf2DAnd3D) {
    using T = TypeParam;
    auto base = weft::zeros<T>({3, 5}, dev());
    auto t = base.transpose();
    EXPECT_EQ(t.shape(), shape2(5, 3));
    check_all<T, 2>("transpose 2-D", base, t, where_2d(5, 3, [](int64_t i, int64_t j) { return j * 5 + i; }));
    check_all<T, 2>("transpose(0, 1) 2-D", base, base.transpose(1, 0),
                    where_2d(5, 3, [](int64_t i, int64_t j) { return j * 5 + i; }));

    auto cube = weft::zeros<T>({2, 3, 4}, dev());  // flat index i*12 + j*4 + k
    auto reversed = cube.transpose();
    EXPECT_EQ(reversed.shape(), (Shape{4, 3, 2}));
    check_all<T, 3>("transpose 3-D", cube, reversed,
                    where_3d(4, 3, 2, [](int64_t a, int64_t b, int64_t c) { return c * 12 + b * 4 + a; }));
    check_all<T, 3>("transpose(0, 1) 3-D", cube, cube.transpose(0, 1),
                    where_3d(3, 2, 4, [](int64_t a, int64_t b, int64_t c) { return b * 12 + a * 4 + c; }));
    check_all<T, 3>("transpose(1, 2) 3-D", cube, cube.transpose(1, 2),
                    where_3d(2, 4, 3, [](int64_t a, int64_t b, int64_t c) { return a * 12 + c * 4 + b; }));
}

TYPED_TEST(Views, ZeroStrideBroadcast) {
    using T = TypeParam;
    // Every row of the view is the base; atomics from all rows accumulate into one element.
    auto base = weft::zeros<T>(4, dev());
    auto rows = base.broadcast({3, 4});
    EXPECT_EQ(rows.stride(0), 0);
    check_all<T, 2>("broadcast [4] to [3, 4]", base, rows,
                    where_2d(3, 4, [](int64_t, int64_t j) { return j; }));

    // A size-1 dimension repeated.
    auto column = weft::zeros<T>({3, 1}, dev());
    check_all<T, 2>("broadcast [3, 1] to [3, 5]", column, column.broadcast({3, 5}),
                    where_2d(3, 5, [](int64_t i, int64_t) { return i; }));

    // Two new leading dimensions.
    check_all<T, 3>("broadcast [4] to [2, 3, 4]", base, base.broadcast({2, 3, 4}),
                    where_3d(2, 3, 4, [](int64_t, int64_t, int64_t k) { return k; }));

    // A broadcast of a strided slice.
    auto line = weft::zeros<T>(9, dev());
    check_all<T, 2>("broadcast of slice(0, 2, end, 3)", line,
                    line.slice(0, 2, weft::to_end, 3).broadcast({2, 3}),
                    where_2d(2, 3, [](int64_t, int64_t j) { return 2 + 3 * j; }));
}

TYPED_TEST(Views, ViewsOfViews) {
    using T = TypeParam;
    auto cube = weft::zeros<T>({4, 6, 8}, dev());  // flat index i*48 + j*8 + k
    // Plane 1, columns 1 and 4, transposed: (c, j) -> cube(1, j, 1 + 3c).
    auto v = cube[1].slice(1, 1, 7, 3).transpose();
    EXPECT_EQ(v.shape(), shape2(2, 6));
    check_all<T, 2>("cube[1].slice(1, 1, 7, 3).transpose()", cube, v,
                    where_2d(2, 6, [](int64_t c, int64_t j) { return 48 + j * 8 + 1 + 3 * c; }));
    check_all<T, 1>("cube[-1][2]", cube, cube[-1][2],
                    where_1d(8, [](int64_t k) { return 3 * 48 + 2 * 8 + k; }));
    // Every other plane, last row, reversed dims: (k, p) -> cube(2p, 5, k).
    check_all<T, 2>("cube.slice(0, 0, end, 2).select(1, -1).transpose()", cube,
                    cube.slice(0, 0, weft::to_end, 2).select(1, -1).transpose(),
                    where_2d(8, 2, [](int64_t k, int64_t p) { return 2 * p * 48 + 5 * 8 + k; }));
    check_all<T, 2>("cube[2][3].broadcast({2, 8})", cube, cube[2][3].broadcast({2, 8}),
                    where_2d(2, 8, [](int64_t, int64_t k) { return 2 * 48 + 3 * 8 + k; }));
}

// ---------------------------------------------------------------------------------------------
// Kernel-side views: a[i] inside the kernel.

TYPED_TEST(Views, KernelSideRow) {
    using T = TypeParam;
    const auto& k = kernels<T>();
    auto base = weft::zeros<T>({5, 7}, dev());
    check_ops<T>("grid[3] in the kernel", base, Shape(7), where_1d(7, [](int64_t j) { return 3 * 7 + j; }),
                 [&](Op op, const DeviceArray<T>& src, const DeviceArray<T>& out) {
                     weft::launch(k.row, 7, base, 3, src, out, static_cast<int>(op));
                 });
    // A row of a transposed view is a column of the base.
    check_ops<T>("transpose()[2] in the kernel", base, Shape(5),
                 where_1d(5, [](int64_t i) { return i * 7 + 2; }),
                 [&](Op op, const DeviceArray<T>& src, const DeviceArray<T>& out) {
                     weft::launch(k.row, 5, base.transpose(), 2, src, out, static_cast<int>(op));
                 });
}

TYPED_TEST(Views, KernelSidePlaneAndViewOfAView) {
    using T = TypeParam;
    const auto& k = kernels<T>();
    auto cube = weft::zeros<T>({3, 4, 5}, dev());  // flat index i*20 + j*5 + l
    check_ops<T>("cube[1] in the kernel", cube, shape2(4, 5),
                 where_2d(4, 5, [](int64_t j, int64_t l) { return 20 + j * 5 + l; }),
                 [&](Op op, const DeviceArray<T>& src, const DeviceArray<T>& out) {
                     weft::launch(k.plane, {4, 5}, cube, 1, src, out, static_cast<int>(op));
                 });
    check_ops<T>("cube[2][3] in the kernel", cube, Shape(5),
                 where_1d(5, [](int64_t l) { return 40 + 15 + l; }),
                 [&](Op op, const DeviceArray<T>& src, const DeviceArray<T>& out) {
                     weft::launch(k.line, 5, cube, 2, 3, src, out, static_cast<int>(op));
                 });
    // Kernel-side views of a host-side view: plane 0 of cube.transpose(0, 2) is cube(:, :, 0)
    // transposed: (j, i) -> cube(i, j, 0).
    check_ops<T>("cube.transpose(0, 2)[0][j] in the kernel", cube, shape2(4, 3),
                 where_2d(4, 3, [](int64_t j, int64_t i) { return i * 20 + j * 5; }),
                 [&](Op op, const DeviceArray<T>& src, const DeviceArray<T>& out) {
                     weft::launch(k.plane, {4, 3}, cube.transpose(0, 2), 0, src, out, static_cast<int>(op));
                 });
}

TYPED_TEST(Views, KernelSideRowsOfHostViewsAndThroughAFunction) {
    using T = TypeParam;
    const auto& k = kernels<T>();
    auto base = weft::zeros<T>({4, 6}, dev());
    struct Case {
        std::string what;
        DeviceArray<T> grid;
        std::vector<int64_t> where;
    };
    const std::vector<Case> cases = {
        {"base", base, where_2d(4, 6, [](int64_t i, int64_t j) { return i * 6 + j; })},
        {"base.transpose()", base.transpose(),
         where_2d(6, 4, [](int64_t i, int64_t j) { return j * 6 + i; })},
        {"base.slice(1, 1, end, 2)", base.slice(1, 1, weft::to_end, 2),
         where_2d(4, 3, [](int64_t i, int64_t j) { return i * 6 + 1 + 2 * j; })},
        {"base[2].broadcast({3, 6})", base[2].broadcast({3, 6}),
         where_2d(3, 6, [](int64_t, int64_t j) { return 12 + j; })},
    };
    for (const Case& c : cases) {
        for (const auto* kernel : {&k.rows, &k.func_rows}) {
            check_ops<T>(c.what + " via " + kernel->name(), base, c.grid.shape(), c.where,
                         [&](Op op, const DeviceArray<T>& src, const DeviceArray<T>& out) {
                             weft::launch(*kernel, dim_of(c.grid.shape()), c.grid, src, out,
                                          static_cast<int>(op));
                         });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// View metadata, overlapping copies, scans, and launches that fault.

TEST(ViewMetadata, OffsetsStridesAndContiguity) {
    auto base = weft::zeros<float>({4, 6}, dev());
    EXPECT_TRUE(base.is_contiguous());
    EXPECT_EQ(base.offset(), 0);

    auto row = base[2];
    EXPECT_EQ(row.offset(), 2 * 6 * 4);
    EXPECT_EQ(static_cast<char*>(row.data()), static_cast<char*>(base.data()) + row.offset());
    EXPECT_TRUE(row.is_contiguous());
    EXPECT_EQ(row.stride(0), 4);

    auto t = base.transpose();
    EXPECT_FALSE(t.is_contiguous());
    EXPECT_EQ(t.stride(0), 4);
    EXPECT_EQ(t.stride(1), 24);

    auto odd = base.slice(1, 1, weft::to_end, 2);
    EXPECT_EQ(odd.offset(), 4);
    EXPECT_EQ(odd.stride(1), 8);
    EXPECT_FALSE(odd.is_contiguous());
    EXPECT_TRUE(base.slice(0, 1, 3).is_contiguous());   // whole rows
    EXPECT_FALSE(base.slice(1, 2, 3).is_contiguous());  // one column
    EXPECT_TRUE(base[1].slice(0, 2, 5).is_contiguous());
    EXPECT_FALSE(base[0].broadcast({2, 6}).is_contiguous());
    EXPECT_TRUE(base[0].broadcast({1, 6}).is_contiguous());  // a size-1 dimension's stride does not matter

    EXPECT_TRUE(weft::may_share_memory(base, row));
    EXPECT_FALSE(weft::may_share_memory(base[0], base[1]));
    EXPECT_TRUE(
        weft::may_share_memory(base[0], base.transpose()[0]));  // row 0 and column 0 share element (0, 0)
    EXPECT_FALSE(weft::may_share_memory(base, weft::zeros<float>({4, 6}, dev())));
}

TEST(ViewCopies, OverlappingViewsCopyAsIfTheSourceWereReadFirst) {
    std::vector<int> values(10);
    for (int i = 0; i < 10; ++i) values[i] = i;
    auto a = weft::from_vector(values, dev());
    weft::copy(a.slice(0, 1, weft::to_end), a.slice(0, 0, -1));
    EXPECT_EQ(a.to_vector(), (std::vector<int>{0, 0, 1, 2, 3, 4, 5, 6, 7, 8}));

    // A square matrix transposed in place.
    auto m = weft::from_vector(std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}, dev());
    weft::copy(m, m.transpose());
    EXPECT_EQ(m.to_vector(), (std::vector<int>{1, 4, 7, 2, 5, 8, 3, 6, 9}));
}

TEST(ViewCopies, ScanOfStridedAndOverlappingViews) {
    auto a = weft::from_vector(std::vector<int>{1, 10, 2, 20, 3, 30, 4, 40}, dev());
    auto out = weft::full<int>({2, 4}, -1, dev());
    weft::array_scan(a.slice(0, 0, weft::to_end, 2), out[1]);
    EXPECT_EQ(out.to_vector(), (std::vector<int>{-1, -1, -1, -1, 1, 3, 6, 10}));
    // In place on a strided view.
    weft::array_scan(a.slice(0, 1, weft::to_end, 2), a.slice(0, 1, weft::to_end, 2));
    EXPECT_EQ(a.to_vector(), (std::vector<int>{1, 10, 2, 30, 3, 60, 4, 100}));
    // Output shifted by one over the input.
    auto b = weft::from_vector(std::vector<int>{1, 1, 1, 1, 0}, dev());
    weft::array_scan(b.slice(0, 0, 4), b.slice(0, 1, 5));
    EXPECT_EQ(b.to_vector(), (std::vector<int>{1, 1, 2, 3, 4}));
}

TEST(ViewLaunches, AFaultingLaunchRestoresTheBaseOfAViewArgument) {
    weft::Module m{"views_fault", {.bounds_check = true}};
    auto k = m.kernel("bump", {"v"}, [](Array<int, 2> v) {
        auto [i, j] = weft::tid<2>();
        v(i, j) += 1;
        v(i, j + 1) += 1;  // faults on the last column
    });
    auto base = weft::from_vector(sentinel<int>(12), {3, 4}, dev());
    EXPECT_THROW(weft::launch(k, {4, 3}, base.transpose()), weft::Error);
    EXPECT_EQ(base.to_vector(), sentinel<int>(12));
}

// Deterministic accumulation finds its target through host-side and kernel-side views.
TEST(ViewLaunches, DeterministicAccumulationThroughViews) {
    for (const auto strategy : {weft::DeterministicStrategy::Exact, weft::DeterministicStrategy::Records,
                                weft::DeterministicStrategy::Compact}) {
        weft::Module m{"views_det_" + std::string(weft::strategy_name(strategy)),
                       {.deterministic = weft::Deterministic::RunToRun, .deterministic_strategy = strategy}};
        auto add = m.kernel("add", {"grid", "src"}, [](Array<float, 2> grid, Array<float, 2> src) {
            auto [i, j] = weft::tid<2>();
            grid[i][j] += src(i, j);
        });
        auto max = m.kernel("max", {"grid", "src"}, [](Array<float, 2> grid, Array<float, 2> src) {
            auto [i, j] = weft::tid<2>();
            weft::atomic_max(grid[i], j, src(i, j));
        });
        EXPECT_NE(m.ir().find("accumulate.add"), std::string::npos) << "the atomics were lowered";
        auto base = weft::zeros<float>({4, 6}, dev());
        struct Case {
            std::string what;
            DeviceArray<float> view;
            std::vector<int64_t> where;
        };
        const std::vector<Case> cases = {
            {"transpose()", base.transpose(), where_2d(6, 4, [](int64_t i, int64_t j) { return j * 6 + i; })},
            {"slice(1, 1, end, 2)", base.slice(1, 1, weft::to_end, 2),
             where_2d(4, 3, [](int64_t i, int64_t j) { return i * 6 + 1 + 2 * j; })},
            {"[1].broadcast({5, 6})", base[1].broadcast({5, 6}),
             where_2d(5, 6, [](int64_t, int64_t j) { return 6 + j; })},
        };
        const std::vector<float> initial = sentinel<float>(24);
        for (const Case& c : cases) {
            const std::string what = c.what + " (" + weft::strategy_name(strategy) + ")";
            for (const Op op : {kAtomicAdd, kAtomicMax}) {
                base.copy_from_host(initial.data(), initial.size());
                const std::vector<float> src = operands<float>(op, c.where);
                weft::launch(op == kAtomicAdd ? add : max, dim_of(c.view.shape()), c.view,
                             weft::from_vector(src, c.view.shape(), dev()));
                EXPECT_EQ(base.to_vector(), expected_base(op, initial, c.where, src))
                    << what << ": " << kOpNames[op];
            }
        }
    }
}

TEST(ViewIr, AViewIsOneNodeAndOneHelperCall) {
    weft::Module m{"views_ir"};
    m.kernel("row_sum", {"grid", "out"}, [](Array<float, 2> grid, Array<float> out) {
        auto t = weft::tid();
        auto row = grid[t];
        out[t] = row[0] + row[1];
    });
    const std::string ir = m.ir();
    EXPECT_TRUE(std::regex_search(ir, std::regex(R"(%\d+: array<float32, 1> = view %0\[%\d+\])"))) << ir;
    EXPECT_NE(m.generated_source(dev()).find("wf::view0("), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Errors name the user's line.

// `line` is taken by reference: it is read after error_from(...), an argument of the same call,
// has run the code that sets it.
void expect_error(const weft::Error& e, const std::string& kernel, const int& line,
                  std::initializer_list<const char*> says) {
    EXPECT_EQ(e.kernel(), kernel) << e.what();
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("views_test.cpp:" + std::to_string(line) + ": "), std::string::npos)
        << e.what();
    for (const char* s : says)
        EXPECT_NE(e.message().find(s), std::string::npos) << "missing \"" << s << "\" in: " << e.what();
}

TEST(ViewErrors, SliceStepMustBePositive) {
    auto a = weft::zeros<float>(8, dev());
    int line = 0;
    expect_error(error_from([&] { line = __LINE__, a.slice(0, 0, 8, 0); }), "", line,
                 {"slice: step 0", "at least 1"});
    expect_error(error_from([&] { line = __LINE__, a.slice(0, 8, 0, -1); }), "", line, {"step -1"});
    expect_error(error_from([&] { line = __LINE__, a.slice(1, 0, 8); }), "", line,
                 {"slice: dimension 1 of a 1-D array"});
}

TEST(ViewErrors, IndexOutOfRange) {
    auto a = weft::zeros<float>({4, 3}, dev());
    int line = 0;
    expect_error(error_from([&] { line = __LINE__, a[4]; }), "", line,
                 {"index 4 is out of range for dimension 0 of extent 4", "-4 to 3"});
    expect_error(error_from([&] { line = __LINE__, a[-5]; }), "", line, {"index -5 is out of range"});
    expect_error(error_from([&] { line = __LINE__, a.select(1, 3); }), "", line,
                 {"index 3 is out of range for dimension 1 of extent 3"});
    expect_error(error_from([&] { line = __LINE__, a[1][0]; }), "", line, {"1-D array", "single element"});
    expect_error(error_from([&] { line = __LINE__, a.transpose(0, 2); }), "", line,
                 {"transpose: dimension 2 of a 2-D array"});
}

TEST(ViewErrors, IncompatibleBroadcast) {
    auto a = weft::zeros<float>(3, dev());
    int line = 0;
    expect_error(error_from([&] {
                     line = __LINE__, a.broadcast({4, 4});
                 }),
                 "", line, {"cannot broadcast a [3] array to [4, 4]", "extent 3, which must be 1 or 4"});
    auto b = weft::zeros<float>({2, 3}, dev());
    expect_error(error_from([&] { line = __LINE__, b.broadcast(3); }), "", line,
                 {"cannot broadcast a [2, 3] array to [3]", "cannot remove"});
}

TEST(ViewErrors, ShapeMismatchInACopy) {
    auto a = weft::zeros<float>({2, 3}, dev());
    auto b = weft::zeros<float>({2, 3}, dev());
    int line = 0;
    expect_error(error_from([&] { line = __LINE__, weft::copy(a.transpose(), b); }), "", line,
                 {"differ in type or shape", "[3, 2] vs float32 [2, 3]"});
}

TEST(ViewErrors, KernelGivenAViewOfTheWrongDimensions) {
    const auto& k = kernels<int32_t>();
    auto base = weft::zeros<int>({3, 4}, dev());
    auto src = weft::zeros<int>({3, 4}, dev());
    int line = 0;
    expect_error(error_from([&] {
                     line = __LINE__, weft::launch(k.ops2, {3, 4}, base[1], src, src, 0);
                 }),
                 "ops2_int32", line,
                 {"argument 0 ('view') must be a 2-D array of int32, got a 1-D array of int32"});
}

TEST(ViewErrors, KernelSideViewIndicesAreBoundsChecked) {
    weft::Module m{"views_bounds", {.bounds_check = true}};
    int view_line = 0, access_line = 0, inner_line = 0;
    auto row = m.kernel("row_put", {"grid", "r", "j"}, [&](Array<int, 2> grid, Int r, Int j) {
        view_line = __LINE__, access_line = __LINE__, grid[r][j] = 1;
    });
    auto line = m.kernel("line_put", {"cube", "q"}, [&](Array<int, 3> cube, Int q) {
        auto plane = cube[1];
        inner_line = __LINE__, plane[q][0] = 1;
    });
    auto grid = weft::from_vector(sentinel<int>(15), {5, 3}, dev());
    expect_error(error_from([&] { weft::launch(row, 1, grid, 5, 0); }), "row_put", view_line,
                 {"index 5 is out of bounds for dimension 0 of array 'grid' (extent 5)"});
    // A negative kernel index counts from the end; below -extent it is out of bounds.
    expect_error(error_from([&] { weft::launch(row, 1, grid, -6, 0); }), "row_put", view_line,
                 {"index -6 is out of bounds for dimension 0 of array 'grid' (extent 5;"});
    // An access through the view names the array's own dimension.
    expect_error(error_from([&] { weft::launch(row, 1, grid, 2, 3); }), "row_put", access_line,
                 {"index 3 is out of bounds for dimension 1 of array 'grid' (extent 3)"});
    EXPECT_EQ(grid.to_vector(), sentinel<int>(15));
    auto cube = weft::from_vector(sentinel<int>(24), {2, 3, 4}, dev());
    expect_error(error_from([&] { weft::launch(line, 1, cube, 3); }), "line_put", inner_line,
                 {"index 3 is out of bounds for dimension 1 of array 'cube' (extent 3)"});
    EXPECT_EQ(cube.to_vector(), sentinel<int>(24));
    // In bounds, the write lands.
    weft::launch(row, 1, grid, 4, 2);
    std::vector<int> expected = sentinel<int>(15);
    expected[4 * 3 + 2] = 1;
    EXPECT_EQ(grid.to_vector(), expected);
}

}  // namespace
