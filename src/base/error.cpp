// weft::Error formatting.
#include "weft/error.hpp"

namespace weft {

namespace {

std::string format(const std::string& message, const std::string& kernel, const std::string& file,
                   uint32_t line) {
    std::string out;
    if (!file.empty()) out += file + ":" + std::to_string(line) + ": ";
    if (!kernel.empty()) out += "kernel '" + kernel + "': ";
    return out + message;
}

}  // namespace

Error::Error(std::string message, std::string kernel, std::string file, uint32_t line)
    : std::runtime_error(format(message, kernel, file, line)),
      message_(std::move(message)),
      kernel_(std::move(kernel)),
      file_(std::move(file)),
      line_(line) {}

}  // namespace weft
