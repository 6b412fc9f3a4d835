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

/// A vector of N components of T (N is 2, 3 or 4).
template <int N, class T>
struct vec;
/// Two components, x and y.
template <class T>
struct vec<2, T> {
    /// The components.
    ///@{
    T x{}, y{};
    ///@}
    /// Component i (0 is x, 1 is y; not checked).
    T& operator[](int i) { return i == 0 ? x : y; }
    /// Component i, read only.
    const T& operator[](int i) const { return i == 0 ? x : y; }
    /// Component by component.
    friend bool operator==(const vec&, const vec&) = default;
};
/// Three components, x, y and z.
template <class T>
struct vec<3, T> {
    /// The components.
    ///@{
    T x{}, y{}, z{};
    ///@}
    /// Component i (0 is x ... 2 is z; not checked).
    T& operator[](int i) { return i == 0 ? x : i == 1 ? y : z; }
    /// Component i, read only.
    const T& operator[](int i) const { return i == 0 ? x : i == 1 ? y : z; }
    /// Component by component.
    friend bool operator==(const vec&, const vec&) = default;
};
/// Four components, x, y, z and w.
template <class T>
struct vec<4, T> {
    /// The components.
    ///@{
    T x{}, y{}, z{}, w{};
    ///@}
    /// Component i (0 is x ... 3 is w; not checked).
    T& operator[](int i) { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
    /// Component i, read only.
    const T& operator[](int i) const { return i == 0 ? x : i == 1 ? y : i == 2 ? z : w; }
    /// Component by component.
    friend bool operator==(const vec&, const vec&) = default;
};

/// Rows of C entries: m[r][c].
template <int R, int C, class T>
struct mat {
    /// The rows, R of them.
    vec<C, T> row[R];
    /// Row r, whose [c] is entry (r, c) (r is not checked).
    vec<C, T>& operator[](int r) { return row[r]; }
    /// Row r, read only.
    const vec<C, T>& operator[](int r) const { return row[r]; }
    /// Entry by entry.
    friend bool operator==(const mat&, const mat&) = default;
};

/// A quaternion x, y, z, w (w the real part; the identity is {0, 0, 0, 1}).
template <class T>
struct quat {
    /// The components, vector part first.
    ///@{
    T x{}, y{}, z{}, w{};
    ///@}
    /// Component by component.
    friend bool operator==(const quat&, const quat&) = default;
};

/// A rigid transform: the translation p, then the rotation q (a unit quaternion).
template <class T>
struct transform {
    /// The translation.
    vec<3, T> p;
    /// The rotation.
    quat<T> q;
    /// Component by component.
    friend bool operator==(const transform&, const transform&) = default;
};

using vec2f = vec<2, float>;           ///< The host value of weft::vec2f.
using vec3f = vec<3, float>;           ///< The host value of weft::vec3f.
using vec4f = vec<4, float>;           ///< The host value of weft::vec4f.
using vec2d = vec<2, double>;          ///< The host value of weft::vec2d.
using vec3d = vec<3, double>;          ///< The host value of weft::vec3d.
using vec4d = vec<4, double>;          ///< The host value of weft::vec4d.
using vec2i = vec<2, int32_t>;         ///< The host value of weft::vec2i.
using vec3i = vec<3, int32_t>;         ///< The host value of weft::vec3i.
using vec4i = vec<4, int32_t>;         ///< The host value of weft::vec4i.
using vec3h = vec<3, float16>;         ///< Three float16: the host value of weft::vec<3, weft::float16>.
using mat22f = mat<2, 2, float>;       ///< The host value of weft::mat22f.
using mat33f = mat<3, 3, float>;       ///< The host value of weft::mat33f.
using mat44f = mat<4, 4, float>;       ///< The host value of weft::mat44f.
using mat33d = mat<3, 3, double>;      ///< The host value of weft::mat33d.
using quatf = quat<float>;             ///< The host value of weft::quatf.
using quatd = quat<double>;            ///< The host value of weft::quatd.
using transformf = transform<float>;   ///< The host value of weft::transformf.
using transformd = transform<double>;  ///< The host value of weft::transformd.

}  // namespace host

/// Layout<E>: an array element type E as `components` scalars of `scalar`, held on the host as
/// `host`. Defined for every ElementType (one component) and for the composites below; an array
/// of any other type does not compile.
template <class E>
struct Layout;

/// A scalar element: one component of itself.
template <ElementType T>
struct Layout<T> {
    /// The scalar type of the components.
    using scalar = T;
    /// The type the host holds an element as.
    using host = T;
    /// Scalars per element.
    static constexpr int components = 1;
};
/// A vector of N (2 to 4) components.
template <int N, ElementType T>
requires(N >= 2 && N <= 4) struct Layout<vec<N, T>> {
    /// The scalar type of the components.
    using scalar = T;
    /// The type the host holds an element as.
    using host = host::vec<N, T>;
    /// Scalars per element.
    static constexpr int components = N;
};
/// A matrix of R x C (each 2 to 4) entries, row by row.
template <int R, int C, ElementType T>
requires(R >= 2 && R <= 4 && C >= 2 && C <= 4) struct Layout<mat<R, C, T>> {
    /// The scalar type of the components.
    using scalar = T;
    /// The type the host holds an element as.
    using host = host::mat<R, C, T>;
    /// Scalars per element.
    static constexpr int components = R * C;
};
/// A quaternion: x, y, z, w.
template <ElementType T>
struct Layout<quat_t<T>> {
    /// The scalar type of the components.
    using scalar = T;
    /// The type the host holds an element as.
    using host = host::quat<T>;
    /// Scalars per element.
    static constexpr int components = 4;
};
/// A transform: p (x, y, z), then q (x, y, z, w).
template <ElementType T>
struct Layout<transform_t<T>> {
    /// The scalar type of the components.
    using scalar = T;
    /// The type the host holds an element as.
    using host = host::transform<T>;
    /// Scalars per element.
    static constexpr int components = 7;
};

/// Whether E can be an array's element: an ElementType or a composite with a Layout.
template <class E>
concept ArrayElement = requires {
    typename Layout<E>::scalar;
};

/// Whether E is a composite (more than one scalar per element).
template <class E>
inline constexpr bool is_composite = false;
/// Composites: elements whose Layout has more than one component.
template <ArrayElement E>
inline constexpr bool is_composite<E> = Layout<E>::components > 1;

/// The host value of an element of type E (`weft::host_t<weft::vec3>` is weft::host::vec3f).
template <ArrayElement E>
using host_t = typename Layout<E>::host;

/// The scalar type of E's components.
template <ArrayElement E>
inline constexpr DType scalar_dtype_of = dtype_of<typename Layout<E>::scalar>;

/// The number of scalars per element of E (1 for a scalar, 3 for a vec3, 7 for a transform).
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
