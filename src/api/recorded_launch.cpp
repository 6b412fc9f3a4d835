// weft::RecordedLaunch: a prepared launch (api/prepared_launch.hpp) with arguments replaced by name.
#include "api/prepared_launch.hpp"
#include "weft/error.hpp"
#include "weft/graph.hpp"

namespace weft {

namespace {

[[noreturn]] void fail(const detail::PreparedLaunch& p, const std::source_location& s,
                       const std::string& message) {
    throw Error(message, p.kernel.body->name, s.file_name(), s.line());
}

std::string shape_class(const AnyArray& a) {
    return std::to_string(a.ndim()) + "-D " + (a.is_contiguous() ? "contiguous" : "strided") + " array of " +
           dtype_name(a.dtype()) + (a.components() > 1 ? " x " + std::to_string(a.components()) : "");
}

}  // namespace

RecordedLaunch::RecordedLaunch(const detail::KernelState& kernel, const Dim& dim, std::vector<LaunchArg> args)
    : prepared_(
          std::make_shared<detail::PreparedLaunch>(detail::prepare_launch(kernel, dim, std::move(args)))) {}

size_t RecordedLaunch::find(const std::string& name, std::source_location s) {
    // Copies share the prepared launch until one of them changes (copy on write).
    if (prepared_.use_count() > 1) prepared_ = std::make_shared<detail::PreparedLaunch>(*prepared_);
    const std::vector<std::string>& names = prepared_->kernel.body->param_names;
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return i;
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "'" : ", '") + n + "'";
    fail(*prepared_, s,
         "RecordedLaunch::set: the kernel has no parameter named '" + name + "' (it has " + known + ")");
}

void RecordedLaunch::set(const std::string& name, const AnyArray& array, std::source_location s) {
    const size_t i = find(name, s);
    detail::PreparedLaunch& p = *prepared_;
    const auto* old = std::get_if<AnyArray>(&p.args[i]);
    if (!old)
        fail(p, s, "RecordedLaunch::set: parameter '" + name + "' is a scalar; pass a value, not an array");
    if (!array.valid())
        fail(p, s, "RecordedLaunch::set: the array for '" + name + "' is empty (default-constructed)");
    if (array.dtype() != old->dtype() || array.components() != old->components() ||
        array.ndim() != old->ndim() || array.is_contiguous() != old->is_contiguous())
        fail(p, s,
             "RecordedLaunch::set: '" + name + "' was recorded as a " + shape_class(*old) +
                 " and cannot become a " + shape_class(array) + "; record another launch for it");
    const LaunchArg previous = p.args[i];
    p.args[i] = array;
    try {
        detail::recheck_launch(p);
    } catch (...) {
        p.args[i] = previous;
        throw;
    }
}

void RecordedLaunch::set_scalar(const std::string& name, ScalarArg value, std::source_location s) {
    const size_t i = find(name, s);
    detail::PreparedLaunch& p = *prepared_;
    const auto* old = std::get_if<ScalarArg>(&p.args[i]);
    if (!old)
        fail(p, s, "RecordedLaunch::set: parameter '" + name + "' is an array; pass an array, not a value");
    if (old->dtype != value.dtype)
        fail(p, s,
             "RecordedLaunch::set: '" + name + "' is a " + dtype_name(old->dtype) +
                 " scalar but the value is a " + dtype_name(value.dtype) +
                 "; pass a value of the parameter's type");
    p.args[i] = value;
}

void RecordedLaunch::set_dim(const Dim& dim) {
    if (prepared_.use_count() > 1) prepared_ = std::make_shared<detail::PreparedLaunch>(*prepared_);
    const Dim previous = prepared_->dim;
    prepared_->dim = dim;
    try {
        detail::recheck_launch(*prepared_);
    } catch (...) {
        prepared_->dim = previous;
        throw;
    }
}

void RecordedLaunch::launch() const {
    detail::issue(*prepared_);
}

}  // namespace weft
