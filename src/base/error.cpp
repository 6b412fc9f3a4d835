// weft::Error and weft::InternalError formatting.
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

InternalError::InternalError(std::string pass, std::string message, std::string function)
    : std::logic_error("internal error in Weft (a bug; please report it), pass '" + pass + "'" +
                       (function.empty() ? "" : ", function '" + function + "'") + ": " + message),
      pass_(std::move(pass)),
      message_(std::move(message)),
      function_(std::move(function)) {}

}  // namespace weft
