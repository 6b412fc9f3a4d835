// Composite locals assigned inside for_ and if_, copies as snapshots, and the errors for a bad
// component index (at the user's line) and for mismatched shapes (the code does not compile).
#include <gtest/gtest.h>

#include <weft/weft.hpp>

#include "support/composite_checks.hpp"
#include "support/composite_reference.hpp"
#include "support/errors.hpp"

namespace {

template <class A, class B>
concept Multipliable = requires(const A& a, const B& b) {
    a* b;
};
template <class A, class B>
concept Addable = requires(const A& a, const B& b) {
    a + b;
};
template <class V>
concept HasCross = requires(const V& a) {
    weft::cross(a, a);
};
template <class V>
concept HasZ = requires(V v) {
    v.z;
};
template <class V, int I>
concept HasComponent = requires(const V& v) {
    weft::get<I>(v);
};
template <class M>
concept Invertible = requires(const M& m) {
    weft::inverse(m);
};

// Shapes are part of the types: an operator on mismatched shapes does not compile.
static_assert(Multipliable<weft::mat<2, 3, float>, weft::vec3>);
static_assert(!Multipliable<weft::mat<2, 3, float>, weft::vec2>);
static_assert(Multipliable<weft::vec2, weft::mat<2, 3, float>>);
static_assert(!Multipliable<weft::vec3, weft::mat<2, 3, float>>);
static_assert(Multipliable<weft::mat<2, 3, float>, weft::mat<3, 4, float>>);
static_assert(!Multipliable<weft::mat<2, 3, float>, weft::mat<2, 3, float>>);
static_assert(!Multipliable<weft::mat33, weft::mat33d>);
static_assert(!Addable<weft::vec2, weft::vec3>);
static_assert(!Addable<weft::vec3, weft::vec3d>);
static_assert(!Addable<weft::vec3, weft::vec3i>);
static_assert(!Addable<weft::mat22, weft::mat33>);
static_assert(Addable<weft::quat, weft::quat>);
static_assert(!Addable<weft::quat, weft::vec4>);
// A vector product is written as dot, cross or cw_mul; `*` of two vectors does not compile.
static_assert(!Multipliable<weft::vec3, weft::vec3>);
static_assert(Multipliable<weft::vec3, weft::Float>);
static_assert(!Multipliable<weft::vec3, weft::Double>);
static_assert(HasCross<weft::vec3> && !HasCross<weft::vec2> && !HasCross<weft::vec4>);
static_assert(HasZ<weft::vec3> && !HasZ<weft::vec2>);
// A constant component index out of range does not compile.
static_assert(HasComponent<weft::vec3, 2> && !HasComponent<weft::vec3, 3> && !HasComponent<weft::vec3, -1>);
static_assert(Invertible<weft::mat33> && !Invertible<weft::mat<2, 3, float>> &&
              !Invertible<weft::mat<3, 3, int32_t>>);

using namespace weft::test;
namespace r = weft::test::ref;
using weft::Array;

TEST(CompositeLocals, AssignedInsideForAndIf) {
    std::vector<Check<float>> checks;
    checks.push_back({"vec_mat_locals", 3, 3 + 3 + 4 + 3,
                      [](const Io<float>& io) {
                          const weft::vec3 v = io.v<3>(0);
                          weft::vec3 acc;
                          weft::mat22 m = weft::identity<2>();
                          const weft::vec3 before = acc;  // a snapshot: the loop does not change it
                          weft::vec3 flips;
                          weft::for_(5, [&](weft::Int j) {
                              acc += v * weft::cast<float>(j);
                              acc.y = acc.y + 1.0f;
                              weft::if_(j % 2 == 0, [&] {
                                  acc = acc - v;
                                  acc[2] *= 2.0f;
                                  flips.x += 1.0f;
                              });
                              m[0][1] += 1.0f;
                              m[1] = m[1] + weft::vec2(0.5f, 0.0f);
                              m *= 0.5f;
                          });
                          io.put(0, acc);
                          io.put(3, before);
                          io.put(6, m);
                          io.put(10, flips);
                      },
                      [](const r::V& in) {
                          r::V acc(3, 0.0), flips(3, 0.0);
                          r::V m = {1, 0, 0, 1};
                          for (int j = 0; j < 5; ++j) {
                              acc = r::add(acc, r::scale(in, j));
                              acc[1] += 1;
                              if (j % 2 == 0) {
                                  acc = r::sub(acc, in);
                                  acc[2] *= 2;
                                  flips[0] += 1;
                              }
                              m[1] += 1;
                              m[2] += 0.5;
                              m = r::scale(m, 0.5);
                          }
                          return r::cat(r::cat(r::cat(acc, {0, 0, 0}), m), flips);
                      }});
    checks.push_back({"quat_transform_locals", 7, 7,
                      [](const Io<float>& io) {
                          weft::transform t(io.v<3>(0), io.q(3));
                          weft::quat step = io.q(3);
                          weft::for_(3, [&](weft::Int) {
                              t.p.x += 1.0f;
                              t.q = t.q * step;
                              weft::if_(t.p.x > 100.0f, [&] { t = weft::transform_identity(); });
                          });
                          io.put(0, t.p);
                          io.put(3, t.q);
                      },
                      [](const r::V& in) {
                          r::V p = r::slice(in, 0, 3), q = r::slice(in, 3, 4);
                          const r::V step = q;
                          for (int j = 0; j < 3; ++j) {
                              p[0] += 1;
                              q = r::qmul(q, step);
                          }
                          return r::cat(p, q);
                      }});
    run_checks<float>("composite_locals", checks, 2e-5);
}

// The error names the kernel and this file's line, and says the index and the extent.
void expect_index_error(const weft::Error& e, const std::string& kernel, int line, const char* what) {
    EXPECT_EQ(e.kernel(), kernel) << e.what();
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << e.what();
    EXPECT_NE(e.file().find("vec_locals_test.cpp"), std::string::npos) << e.what();
    EXPECT_TRUE(has(e.message(), what)) << e.what();
    EXPECT_TRUE(has(e.message(), "out of range")) << e.what();
}

TEST(CompositeErrors, VectorComponentOutOfRange) {
    weft::Module m{"vec_index_error"};
    m.kernel("bad_component", {"out"}, [](Array<float> out) {
        weft::vec3 v;
        out[0] = v[3];
    });
    const int line = __LINE__ - 2;
    expect_index_error(error_from([&] { (void)m.ir(); }), "bad_component", line, "vector component index 3");
}

TEST(CompositeErrors, MatrixRowAndColumnOutOfRange) {
    weft::Module rows{"mat_row_error"};
    rows.kernel("bad_row", {"out"}, [](Array<float> out) {
        weft::mat33 m;
        out[0] = m[-1][0];
    });
    const int row_line = __LINE__ - 2;
    expect_index_error(error_from([&] { (void)rows.ir(); }), "bad_row", row_line, "matrix row index -1");

    weft::Module cols{"mat_col_error"};
    cols.kernel("bad_col", {"out"}, [](Array<float> out) {
        weft::mat<2, 3, float> m;
        m[1][3] = 1.0f;
        out[0] = m[1][0];
    });
    const int col_line = __LINE__ - 3;
    expect_index_error(error_from([&] { (void)cols.ir(); }), "bad_col", col_line, "vector component index 3");
}

TEST(CompositeErrors, QuaternionComponentOutOfRange) {
    weft::Module m{"quat_index_error"};
    m.kernel("bad_quat", {"out"}, [](Array<float> out) {
        const weft::quat q = weft::quat_identity();
        out[0] = q[4];
    });
    const int line = __LINE__ - 2;
    expect_index_error(error_from([&] { (void)m.ir(); }), "bad_quat", line, "quaternion component index 4");
}

}  // namespace
