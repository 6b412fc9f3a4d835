// weft::Error, what a user's mistake raises (with kernel and source line); weft::InternalError, a Weft bug.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace weft {

/// Every error a user can cause is a weft::Error. `what()` reads
/// "file:line: kernel 'name': message" so it can be pasted into an editor.
class Error : public std::runtime_error {
public:
    /// An error with `message`, naming `kernel` and `file`:`line` where known (empty or 0 where not).
    Error(std::string message, std::string kernel = {}, std::string file = {}, uint32_t line = 0);

    /// The message alone, without file, line or kernel.
    const std::string& message() const { return message_; }
    /// The kernel's name, or empty.
    const std::string& kernel() const { return kernel_; }
    /// The user's source file, or empty.
    const std::string& file() const { return file_; }
    /// The user's source line, or 0.
    uint32_t line() const { return line_; }

private:
    std::string message_;
    std::string kernel_;
    std::string file_;
    uint32_t line_;
};

/// A Weft bug, never the user's doing: an internal check of a compiler pass failed. It is not a
/// weft::Error, so code that handles user errors never mistakes one for the other. `what()` reads
/// "internal error in Weft (a bug; please report it), pass 'name': message".
class InternalError : public std::logic_error {
public:
    /// A failed check of compiler pass `pass`, in IR function `function` when known.
    InternalError(std::string pass, std::string message, std::string function = {});
    /// The compiler pass whose check failed.
    const std::string& pass() const { return pass_; }
    /// What the check found.
    const std::string& message() const { return message_; }
    /// The IR function being compiled, or empty.
    const std::string& function() const { return function_; }

private:
    std::string pass_;
    std::string message_;
    std::string function_;
};

}  // namespace weft
