// Helpers for tests that check weft::Error reports.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <weft/weft.hpp>

namespace weft::test {

// Runs `f`, which must throw weft::Error, and returns the error (a failure if none is thrown).
template <class F>
Error error_from(F f) {
    try {
        f();
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "expected a weft::Error";
    return Error("(no error was thrown)");
}

// The error `f` reports at once or at the next synchronization of `device`, if any.
template <class F>
std::optional<Error> error_by_sync(Device device, F f) {
    try {
        f();
        synchronize(device);
    } catch (const Error& e) {
        return e;
    }
    return std::nullopt;
}

inline bool has(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
}

}  // namespace weft::test
