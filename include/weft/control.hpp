// Traced control flow: tid, if_, for_, while_, break_, continue_, return_.
#pragma once

#include <array>
#include <concepts>
#include <functional>

#include "weft/builtins.hpp"

namespace weft {

/// The thread index of a 1-D launch.
inline Int tid(std::source_location s = std::source_location::current()) {
    return detail::Access::wrap<Int>(detail::emit_tid(0, 1, detail::Loc::from(s)));
}

/// The thread indices of an N-D launch: `auto [i, j] = weft::tid<2>();`.
template <int N>
std::array<Int, N> tid(std::source_location s = std::source_location::current()) {
    static_assert(N >= 1 && N <= 4, "launches have 1 to 4 dimensions");
    const auto loc = detail::Loc::from(s);
    return [&]<size_t... D>(std::index_sequence<D...>) {
        return std::array<Int, N>{detail::Access::wrap<Int>(detail::emit_tid(int(D), N, loc))...};
    }
    (std::make_index_sequence<N>{});
}

/// if_(cond, then) and if_(cond, then, otherwise); the bodies are lambdas taking no arguments.
///@{
inline void if_(const Located<bool>& cond, const std::function<void()>& then_body) {
    detail::emit_if(cond.ref, then_body, nullptr, cond.loc);
}
inline void if_(const Located<bool>& cond, const std::function<void()>& then_body,
                const std::function<void()>& else_body) {
    detail::emit_if(cond.ref, then_body, &else_body, cond.loc);
}
///@}

/// for_(stop, body), for_(start, stop, body), for_(start, stop, step, body): like Python's
/// range; bounds are evaluated once; `body` takes the int32 loop variable.
/// `body` is called directly, not through a std::function: that would hand the lambda a copy of
/// the loop variable, and an assignment to the loop variable would then go unreported.
///@{
template <std::invocable<Int> F>
void for_(const Located<int32_t>& start, const Located<int32_t>& stop, const Located<int32_t>& step,
          F&& body) {
    detail::emit_for(
        start.ref, stop.ref, step.ref, [&](detail::Ref i) { body(detail::Access::wrap<Int>(i)); }, start.loc);
}
template <std::invocable<Int> F>
void for_(const Located<int32_t>& start, const Located<int32_t>& stop, F&& body) {
    for_(start, stop, Located<int32_t>(1, std::source_location::current()), body);
}
template <std::invocable<Int> F>
void for_(const Located<int32_t>& stop, F&& body) {
    Located<int32_t> start(0, std::source_location::current());
    start.loc = stop.loc;  // the loop is where the user wrote it, not here
    for_(start, stop, body);
}
///@}

/// while_(cond, body): `cond` is a lambda returning a traced bool, re-evaluated every iteration.
template <class C>
void while_(C&& cond, const std::function<void()>& body,
            std::source_location s = std::source_location::current()) {
    detail::emit_while(
        [&] {
            const Bool c = cond();
            return detail::Access::ref(c);
        },
        body, detail::Loc::from(s));
}

/// Leaves the innermost for_ or while_ loop.
inline void break_(std::source_location s = std::source_location::current()) {
    detail::emit_break(detail::Loc::from(s));
}
/// Skips to the next iteration of the innermost for_ or while_ loop.
inline void continue_(std::source_location s = std::source_location::current()) {
    detail::emit_continue(detail::Loc::from(s));
}
/// Ends this thread (in a kernel) or returns from a void weft function.
inline void return_(std::source_location s = std::source_location::current()) {
    detail::emit_return(nullptr, detail::Loc::from(s));
}
/// Returns `value` from a weft function early.
template <Traced X>
void return_(const X& value, std::source_location s = std::source_location::current()) {
    const detail::Ref r = detail::Access::ref(static_cast<const scalar_of_t<X>&>(value));
    detail::emit_return(&r, detail::Loc::from(s));
}

}  // namespace weft
