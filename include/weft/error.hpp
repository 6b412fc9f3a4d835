// weft::Error: the one exception type the library throws, carrying kernel and user source line.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace weft {

// Every error a user can cause is a weft::Error. `what()` reads
// "file:line: kernel 'name': message" so it can be pasted into an editor.
class Error : public std::runtime_error {
public:
    Error(std::string message, std::string kernel = {}, std::string file = {}, uint32_t line = 0);

    const std::string& message() const { return message_; }
    const std::string& kernel() const { return kernel_; }
    const std::string& file() const { return file_; }
    uint32_t line() const { return line_; }

private:
    std::string message_;
    std::string kernel_;
    std::string file_;
    uint32_t line_;
};

}  // namespace weft
