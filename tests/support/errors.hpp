// Helpers for tests that check weft::Error reports.
#pragma once

#include <gtest/gtest.h>

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

inline bool has(const std::string& text, const std::string& needle) {
    return text.find(needle) != std::string::npos;
}

}  // namespace weft::test
