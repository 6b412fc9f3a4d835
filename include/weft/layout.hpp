// Array element layouts: the scalar type and component count of every element type an array can
// hold, and the plain host structs composite elements travel in (docs/kernel-language.md).
//
// A composite element is its scalar components packed in a fixed order with no padding, the
// same on the CPU and on GPUs and the same as Warp's: a vec3 is 12 bytes x, y, z; a mat33 its
// 9 entries row by row; a quat x, y, z, w; a transform p (x, y, z), then q (x, y, z, w).
#pragma once

#include <type_traits>

#include "weft/dtype.hpp"
#include "weft/half.hpp"

namespace weft {

/// The traced composites (weft/vec.hpp, mat.hpp, quat.hpp, transform.hpp).
template <int N, ElementType T>
class vec;
template <int R, int C, ElementType T>
class mat;
template <ElementType T>
class quat_t;
template <ElementType T>
class transform_t;

/// Plain host values of the composites: what DeviceArray<vec3> and friends are filled from and
/// copied back into. Zero-initialised; aggregates, so `{1.0f, 2.0f, 3.0f}` builds a vec3.
namespace host {

template <int N, class T>
struct vec;
template <class T>
struct vec<2, T> {
    T x{}, y{};
    T& operator[](int i) { return i == 0 ? x : y; }
    const T& operator[](int i) const { return i == 0 ? x : y; }
    friend bool operator==(const vec&, const vec&) = default;
};
template <class T>
struct vec<3, T> {
    T x{}, y{}, z{};
    T& operator[](int i) { return i == 0 ? x : i == 1 ? y : z; }
    const T& operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
    friend bool operator==(const vec&, const vec&) = default;
};
template <class T>
struct vec<4, T> {
    T x{}, y{}, z{}, w{};
    T& operator[](int i) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
    const T& operator[](int i) const { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
    friend bool operator==(const vec&, const vec&) = default;
};

/// Rows of C entries: m[r][c].
template <int R, int C, class T>
struct mat {
    vec<C, T> row[R];
    vec<C, T>& operator[](int r) { return row[r]; }
    const vec<C, T>& operator[](int r) const { return row[r]; }
    friend bool operator==(const mat&, const mat&) = default;
};

template <class T>
struct quat {
    T x{}, y{}, z{}, w{};
    friend bool operator==(const quat&, const quat&) = default;
};

template <class T>
struct transform {
    vec<3, T> p;
    quat<T> q;
    friend bool operator==(const transform&, const transform&) = default;
};

using vec2f = vec<2, float>;
using vec3f = vec<3, float>;
using vec4f = vec<4, float>;
using vec2d = vec<2, double>;
using vec3d = vec<3, double>;
using vec4d = vec<4, double>;
using vec2i = vec<2, int32_t>;
using vec3i = vec<3, int32_t>;
using vec4i = vec<4, int32_t>;
using vec3h = vec<3, float16>;
using mat22f = mat<2, 2, float>;
using mat33f = mat<3, 3, float>;
using mat44f = mat<4, 4, float>;
using mat33d = mat<3, 3, double>;
using quatf = quat<float>;
using quatd = quat<double>;
using transformf = transform<float>;
using transformd = transform<double>;

}  // namespace host

/// Layout<E>: an array element type E as `components` scalars of `scalar`, held on the host as
/// `host`. Defined for every ElementType (one component) and for the composites below; an array
/// of any other type does not compile.
template <class E>
struct Layout;

template <ElementType T>
struct Layout<T> {
    using scalar = T;
    using host = T;
    static constexpr int components = 1;
};
template <int N, ElementType T>
requires(N >= 2 && N <= 4) struct Layout<vec<N, T>> {
    using scalar = T;
    using host = host::vec<N, T>;
    static constexpr int components = N;
};
template <int R, int C, ElementType T>
requires(R >= 2 && R <= 4 && C >= 2 && C <= 4) struct Layout<mat<R, C, T>> {
    using scalar = T;
    using host = host::mat<R, C, T>;
    static constexpr int components = R * C;
};
template <ElementType T>
struct Layout<quat_t<T>> {
    using scalar = T;
    using host = host::quat<T>;
    static constexpr int components = 4;
};
template <ElementType T>
struct Layout<transform_t<T>> {
    using scalar = T;
    using host = host::transform<T>;
    static constexpr int components = 7;
};

template <class E>
concept ArrayElement = requires {
    typename Layout<E>::scalar;
};

/// Whether E is a composite (more than one scalar per element).
template <class E>
inline constexpr bool is_composite = false;
template <ArrayElement E>
inline constexpr bool is_composite<E> = Layout<E>::components > 1;

/// The host value of an element of type E (`weft::host_t<weft::vec3>` is weft::host::vec3f).
template <ArrayElement E>
using host_t = typename Layout<E>::host;

/// The scalar type of E's components.
template <ArrayElement E>
inline constexpr DType scalar_dtype_of = dtype_of<typename Layout<E>::scalar>;

template <ArrayElement E>
inline constexpr int components_of = Layout<E>::components;

namespace detail {
/// The traced composite whose host value is H: one per host type (host::vec<N, T> is vec<N, T>,
/// host::mat<R, C, T> mat<R, C, T>, host::quat<T> quat_t<T>, host::transform<T> transform_t<T>).
template <class H>
struct TracedOf {};
template <int N, ElementType T>
struct TracedOf<host::vec<N, T>> {
    using type = vec<N, T>;
};
template <int R, int C, ElementType T>
struct TracedOf<host::mat<R, C, T>> {
    using type = mat<R, C, T>;
};
template <ElementType T>
struct TracedOf<host::quat<T>> {
    using type = quat_t<T>;
};
template <ElementType T>
struct TracedOf<host::transform<T>> {
    using type = transform_t<T>;
};

template <class H>
constexpr bool host_composite() {
    if constexpr (requires { typename TracedOf<H>::type; })
        return is_composite<typename TracedOf<H>::type> &&
               std::is_same_v<host_t<typename TracedOf<H>::type>, H>;
    else
        return false;
}
}  // namespace detail

/// Whether H is the host value of a composite element type (weft::host::vec3f, mat33d, ...).
template <class H>
concept HostComposite = detail::host_composite<H>();

/// The traced composite of host value H (`weft::traced_t<weft::host::vec3f>` is weft::vec3).
template <HostComposite H>
using traced_t = typename detail::TracedOf<H>::type;

}  // namespace weft
