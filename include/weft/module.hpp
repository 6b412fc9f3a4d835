// Modules (the unit of compilation and of options), kernels and weft functions.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "weft/array.hpp"
#include "weft/detail/composite.hpp"
#include "weft/device.hpp"
#include "weft/options.hpp"

namespace weft {

namespace detail {

struct ModuleState;
struct KernelState;

/// How a kernel or function parameter of type P flattens into IR parameters (docs/design/0015):
/// a scalar or an array is one; a composite value one scalar per component; a registered struct
/// (weft/struct.hpp) its fields' leaves, in field order. Each leaf is named by its path from the
/// parameter's name (`model.forces`, `gravity[1]`), so no two leaves of a kernel share a name.
///   leaves(name, specs, names)  appends the leaves' types and names
///   count                       the number of leaves
///   take(refs)                  builds a P from its leaves' traced values, refs[0] onwards
///   refs(p, out)                appends p's leaves' traced values (a call's arguments)
template <class P>
struct ParamTraits;
template <ElementType T>
struct ParamTraits<Scalar<T>> {
    static constexpr size_t count = 1;
    static ParamSpec spec() { return {false, dtype_of<T>, 0}; }
    static void leaves(const std::string& name, std::vector<ParamSpec>& specs,
                       std::vector<std::string>& names) {
        specs.push_back(spec());
        names.push_back(name);
    }
    static Scalar<T> take(const Ref* refs) { return Access::wrap<Scalar<T>>(refs[0]); }
    static void refs(const Scalar<T>& v, std::vector<Ref>& out) { out.push_back(Access::ref(v)); }
};
template <ArrayElement E, int N>
struct ParamTraits<Array<E, N>> {
    static constexpr size_t count = 1;
    static void leaves(const std::string& name, std::vector<ParamSpec>& specs,
                       std::vector<std::string>& names) {
        specs.push_back({true, scalar_dtype_of<E>, N, components_of<E>});
        names.push_back(name);
    }
    static Array<E, N> take(const Ref* refs) { return Access::wrap<Array<E, N>>(refs[0]); }
    static void refs(const Array<E, N>& v, std::vector<Ref>& out) { out.push_back(Access::ref(v)); }
};
template <class V>
requires is_composite<V>
struct ParamTraits<V> {
    static constexpr size_t count = static_cast<size_t>(components_of<V>);
    static void leaves(const std::string& name, std::vector<ParamSpec>& specs,
                       std::vector<std::string>& names) {
        for (size_t c = 0; c < count; ++c) {
            specs.push_back({false, scalar_dtype_of<V>, 0});
            names.push_back(name + "[" + std::to_string(c) + "]");
        }
    }
    static V take(const Ref* refs) {
        std::array<Ref, count> r;
        for (size_t c = 0; c < count; ++c) r[c] = refs[c];
        return V(FromRefs{}, r);
    }
    static void refs(const V& v, std::vector<Ref>& out) {
        for (const Ref& r : v.refs()) out.push_back(r);
    }
};

template <class P>
concept Param = requires {
    ParamTraits<P>::count;
};

/// \cond internal (Doxygen takes this derivation for a recursive one)
// The signature of a (non-generic) lambda.
template <class F>
struct LambdaTraits : LambdaTraits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct LambdaTraits<R (C::*)(A...) const> {
    using result = R;
    using params = std::tuple<std::remove_cvref_t<A>...>;
};
template <class C, class R, class... A>
struct LambdaTraits<R (C::*)(A...)> : LambdaTraits<R (C::*)(A...) const> {};
/// \endcond

/// The result type of a weft function: a Scalar, a composite, or void. (Not std::conditional_t:
/// it would form scalar_of_t<void>.)
template <class R>
struct ReturnOfT {
    using type = scalar_of_t<R>;
};
template <>
struct ReturnOfT<void> {
    using type = void;
};
template <int N, ElementType T>
struct ReturnOfT<vec<N, T>> {
    using type = vec<N, T>;
};
template <int R, int C, ElementType T>
struct ReturnOfT<mat<R, C, T>> {
    using type = mat<R, C, T>;
};
template <ElementType T>
struct ReturnOfT<quat_t<T>> {
    using type = quat_t<T>;
};
template <ElementType T>
struct ReturnOfT<transform_t<T>> {
    using type = transform_t<T>;
};
template <class V>
struct ReturnOfT<CompositeElement<V>> {
    using type = V;
};
template <class R>
using ReturnOf = typename ReturnOfT<R>::type;

template <class F, class... P>
std::shared_ptr<TraceBody> make_trace_body(std::string name, std::vector<std::string> names, F fn, Loc loc,
                                           std::tuple<P...>*) {
    static_assert((Param<P> && ...),
                  "kernel and function parameters must be weft::Array<T, N>, weft::Scalar<T> (Int, "
                  "Float, ...), a composite (vec3, mat33, quat, transform, ...) or a struct registered "
                  "with WEFT_STRUCT, taken by value");
    auto body = std::make_shared<TraceBody>();
    body->name = std::move(name);
    body->user_param_count = sizeof...(P);
    body->user_param_names = names;
    for (size_t i = names.size(); i < sizeof...(P); ++i) names.push_back("arg" + std::to_string(i));
    if (names.size() == sizeof...(P)) {  // (too many names: an error the module reports)
        size_t i = 0;
        (ParamTraits<P>::leaves(names[i++], body->params, body->param_names), ...);
    }
    body->loc = loc;
    using R = ReturnOf<std::remove_cvref_t<decltype(fn(std::declval<P>()...))>>;
    if constexpr (is_composite<R>) {
        body->composite_result = components_of<R>;
    } else if constexpr (!std::is_void_v<R>) {
        body->has_return = true;
        body->ret = ParamTraits<R>::spec();
    }
    body->trace = [fn](const std::vector<Ref>& refs) -> std::vector<Ref> {
        // Parameter I's leaves start after those of the parameters before it.
        static constexpr std::array<size_t, sizeof...(P) + 1> first = [] {
            std::array<size_t, sizeof...(P) + 1> f{};
            size_t i = 0;
            ((f[i + 1] = f[i] + ParamTraits<P>::count, ++i), ...);
            return f;
        }();
        return [&]<size_t... I>(std::index_sequence<I...>)->std::vector<Ref> {
            if constexpr (std::is_void_v<R>) {
                fn(ParamTraits<P>::take(refs.data() + first[I])...);
                return {};
            } else if constexpr (is_composite<R>) {
                const R result = fn(ParamTraits<P>::take(refs.data() + first[I])...);
                const auto r = result.refs();
                return std::vector<Ref>(r.begin(), r.end());
            } else {
                const R result = fn(ParamTraits<P>::take(refs.data() + first[I])...);
                return {Access::ref(result)};
            }
        }
        (std::index_sequence_for<P...>{});
    };
    return body;
}

}  // namespace detail

class Module;

/// How a module's code for one device was obtained: compiled now, or loaded from the disk cache.
struct CompileReport {
    std::string device;              ///< "cpu", "cuda:0", ...
    bool loaded_from_cache = false;  ///< false: the code was generated and compiled.
    double milliseconds = 0;         ///< Generating the code, then compiling or loading it.
};

/// A kernel: launched with weft::launch. P... are its parameter types.
template <class... P>
class Kernel {
public:
    /// The kernel's name, as given to Module::kernel.
    const std::string& name() const;
    /// The module this kernel is compiled in (a unique kernel's own module).
    Module module() const;
    /// The kernel's state (for Weft's own code, such as launch; not a stable interface).
    const std::shared_ptr<detail::KernelState>& state() const { return state_; }

private:
    friend class Module;
    explicit Kernel(std::shared_ptr<detail::KernelState> state) : state_(std::move(state)) {}
    std::shared_ptr<detail::KernelState> state_;
};

class Module;

/// A weft function: a real function boundary in the IR, callable from kernels and functions.
template <class Sig>
class Func;
/// A weft function returning R (void, a Scalar or a composite) and taking P...: Module::func makes
/// one.
template <class R, class... P>
class Func<R(P...)> {
public:
    // (P... are fixed by the class, so the source location can follow them.)
    /// A call: inside a kernel or function being traced, records a call of this function with `args`.
    R operator()(const P&... args, std::source_location s = std::source_location::current()) const {
        std::vector<detail::Ref> leaves;
        (detail::ParamTraits<P>::refs(args, leaves), ...);
        if constexpr (is_composite<R>) {
            const std::vector<detail::Ref> result =
                detail::emit_inline_call(body_, leaves, detail::Loc::from(s));
            std::array<detail::Ref, components_of<R>> r;
            std::copy(result.begin(), result.end(), r.begin());
            return R(detail::FromRefs{}, r);
        } else {
            const detail::Ref result = detail::emit_call(body_, leaves, detail::Loc::from(s));
            if constexpr (!std::is_void_v<R>) return detail::Access::wrap<R>(result);
        }
    }
    /// The function's name, as given to Module::func.
    const std::string& name() const { return body_->name; }

private:
    friend class Module;
    explicit Func(std::shared_ptr<const detail::TraceBody> body) : body_(std::move(body)) {}
    std::shared_ptr<const detail::TraceBody> body_;
};

namespace detail {
template <class R, class Tuple>
struct FuncOf;
template <class R, class... P>
struct FuncOf<R, std::tuple<P...>> {
    using type = Func<ReturnOf<R>(P...)>;
};
template <class Tuple>
struct KernelOf;
template <class... P>
struct KernelOf<std::tuple<P...>> {
    using type = Kernel<P...>;
};
}  // namespace detail

/// A module holds kernels and functions and compiles them as one unit. It captures
/// weft::config() when it is created; set_options changes only this module.
class Module {
public:
    /// A module named `name` (in messages and printed IR), its options weft::config() changed by
    /// `options`: weft::Error, naming the caller's line, for a bad option.
    explicit Module(std::string name, const OptionsPatch& options = {},
                    std::source_location s = std::source_location::current());
    /// A module whose options are exactly `options` (a template, so that `{.debug = true}` still
    /// means an OptionsPatch).
    template <std::same_as<Options> O>
    Module(std::string name, const O& options, std::source_location s = std::source_location::current())
        : Module(std::move(name), patch_of(options), s) {}

    /// The name given at creation.
    const std::string& name() const;
    /// The module's options now.
    Options options() const;
    /// Changes options; the module recompiles at its next launch. A bad name or value is a
    /// weft::Error naming the module and the caller's line.
    void set_options(const OptionsPatch& patch, std::source_location s = std::source_location::current());
    /// Changes one option by name (as weft::set_option): the module recompiles at its next launch.
    void set_option(std::string_view name, const OptionValue& value,
                    std::source_location s = std::source_location::current());

    /// Defines a kernel from a lambda whose parameters are weft::Array / weft::Scalar values.
    /// `param_names` name the parameters in errors and printed IR (default arg0, arg1, ...).
    template <class F>
    auto kernel(std::string name, std::vector<std::string> param_names, F fn,
                std::source_location s = std::source_location::current()) {
        using Traits = detail::LambdaTraits<F>;
        static_assert(std::is_void_v<typename Traits::result>, "a kernel returns nothing");
        auto body =
            detail::make_trace_body(std::move(name), std::move(param_names), std::move(fn),
                                    detail::Loc::from(s), static_cast<typename Traits::params*>(nullptr));
        return typename detail::KernelOf<typename Traits::params>::type(add_kernel(std::move(body)));
    }
    /// kernel(name, {}, fn): the parameters are named arg0, arg1, ...
    template <class F>
    auto kernel(std::string name, F fn, std::source_location s = std::source_location::current()) {
        return kernel(std::move(name), {}, std::move(fn), s);
    }

    /// Defines a weft function; it is compiled with this module even when no kernel calls it.
    /// `param_names` name the parameters in errors and printed IR, as a kernel's do (default
    /// arg0, arg1, ...).
    template <class F>
    auto func(std::string name, std::vector<std::string> param_names, F fn,
              std::source_location s = std::source_location::current()) {
        using Traits = detail::LambdaTraits<F>;
        auto body =
            detail::make_trace_body(std::move(name), std::move(param_names), std::move(fn),
                                    detail::Loc::from(s), static_cast<typename Traits::params*>(nullptr));
        add_func(body);
        return typename detail::FuncOf<typename Traits::result, typename Traits::params>::type(body);
    }
    /// func(name, {}, fn): the parameters are named arg0, arg1, ...
    template <class F>
    auto func(std::string name, F fn, std::source_location s = std::source_location::current()) {
        return func(std::move(name), {}, std::move(fn), s);
    }

    /// Autodiff (docs/autodiff.md). func_grad gives weft function `f` a user-written adjoint, used
    /// in backward passes instead of the generated one: a lambda taking f's parameters, then (if f
    /// returns a value) the adjoint of its result; in it, `weft::adjoint(a)[i] += v` accumulates
    /// into the gradient of f's float array parameter `a`. func_replay gives `f` a lambda with f's
    /// signature that backward passes run instead of f's body when they replay the forward code
    /// (and differentiate, unless f has a custom adjoint), e.g. to read a slot the forward pass
    /// saved instead of allocating it again. A lambda of the wrong signature is a weft::Error.
    ///@{
    template <class R, class... P, class G>
    void func_grad(const Func<R(P...)>& f, G grad, std::source_location s = std::source_location::current()) {
        using Traits = detail::LambdaTraits<G>;
        auto body = detail::make_trace_body(f.name() + "__grad", {}, std::move(grad), detail::Loc::from(s),
                                            static_cast<typename Traits::params*>(nullptr));
        add_derivative(f.body_, std::move(body), false);
    }
    template <class R, class... P, class G>
    void func_replay(const Func<R(P...)>& f, G replay,
                     std::source_location s = std::source_location::current()) {
        using Traits = detail::LambdaTraits<G>;
        auto body =
            detail::make_trace_body(f.name() + "__replay", {}, std::move(replay), detail::Loc::from(s),
                                    static_cast<typename Traits::params*>(nullptr));
        add_derivative(f.body_, std::move(body), true);
    }
    ///@}

    /// Traces, lowers and compiles (or loads from the cache) for `device` now, instead of at the
    /// first launch, and says which it did. Once compiled for `device`, the module keeps that code
    /// and its report until its options or definitions change.
    CompileReport compile(Device device = default_device()) const;
    /// The module's IR after the lowering pipeline, as text.
    std::string ir() const;
    /// The generated source for `device`, without the prelude.
    std::string generated_source(Device device = default_device()) const;

    /// The module's state (for Weft's own code; not a stable interface).
    const std::shared_ptr<detail::ModuleState>& state() const { return state_; }
    /// A handle to an existing module state (for Weft's own code; not a stable interface).
    explicit Module(std::shared_ptr<detail::ModuleState> state) : state_(std::move(state)) {}

private:
    std::shared_ptr<detail::KernelState> add_kernel(std::shared_ptr<detail::TraceBody> body);
    void add_func(std::shared_ptr<detail::TraceBody> body);
    void add_derivative(const std::shared_ptr<const detail::TraceBody>& of,
                        std::shared_ptr<detail::TraceBody> body, bool replay);
    std::shared_ptr<detail::ModuleState> state_;
};

/// A kernel in a module of its own, with its own options (the spec's module="unique").
template <class F>
auto unique_kernel(std::string name, const OptionsPatch& options, std::vector<std::string> param_names, F fn,
                   std::source_location s = std::source_location::current()) {
    Module module(name, options, s);
    return module.kernel(std::move(name), std::move(param_names), std::move(fn), s);
}
/// unique_kernel(name, options, {}, fn): the parameters are named arg0, arg1, ...
template <class F>
auto unique_kernel(std::string name, const OptionsPatch& options, F fn,
                   std::source_location s = std::source_location::current()) {
    return unique_kernel(std::move(name), options, {}, std::move(fn), s);
}
/// The same with a whole Options (e.g. a copy of weft::config() with a field changed): the
/// module's options are exactly `options`. (A template, so that a braced list `{.debug = true}`
/// still means an OptionsPatch.)
template <std::same_as<Options> O, class F>
auto unique_kernel(std::string name, const O& options, std::vector<std::string> param_names, F fn,
                   std::source_location s = std::source_location::current()) {
    return unique_kernel(std::move(name), patch_of(options), std::move(param_names), std::move(fn), s);
}
/// unique_kernel(name, options, {}, fn) with a whole Options.
template <std::same_as<Options> O, class F>
auto unique_kernel(std::string name, const O& options, F fn,
                   std::source_location s = std::source_location::current()) {
    return unique_kernel(std::move(name), patch_of(options), {}, std::move(fn), s);
}

namespace detail {
const std::string& kernel_name(const KernelState& k);
Module kernel_module(const KernelState& k);
}  // namespace detail

template <class... P>
const std::string& Kernel<P...>::name() const {
    return detail::kernel_name(*state_);
}
template <class... P>
Module Kernel<P...>::module() const {
    return detail::kernel_module(*state_);
}

}  // namespace weft
