// weft::RecordedLaunch: a prepared launch (api/prepared_launch.hpp) with arguments replaced by name.
#include "api/prepared_launch.hpp"
#include "base/text.hpp"
#include "weft/error.hpp"
#include "weft/graph.hpp"
#include "weft/tape.hpp"

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

// Checks that `value` may replace `old`, the argument of leaf `name`: an array keeps its shape
// class, a scalar its dtype.
void check_replacement(const detail::PreparedLaunch& p, const std::string& name, const LaunchArg& old,
                       const LaunchArg& value, const std::source_location& s) {
    if (const auto* old_array = std::get_if<AnyArray>(&old)) {
        const auto* array = std::get_if<AnyArray>(&value);
        if (!array)
            fail(p, s,
                 "RecordedLaunch::set: parameter '" + name + "' is an array; pass an array, not a value");
        if (!array->valid())
            fail(p, s, "RecordedLaunch::set: the array for '" + name + "' is empty (default-constructed)");
        if (array->dtype() != old_array->dtype() || array->components() != old_array->components() ||
            array->ndim() != old_array->ndim() || array->is_contiguous() != old_array->is_contiguous())
            fail(p, s,
                 "RecordedLaunch::set: '" + name + "' was recorded as a " + shape_class(*old_array) +
                     " and cannot become a " + shape_class(*array) + "; record another launch for it");
        return;
    }
    const auto& old_scalar = std::get<ScalarArg>(old);
    const auto* scalar = std::get_if<ScalarArg>(&value);
    if (!scalar)
        fail(p, s, "RecordedLaunch::set: parameter '" + name + "' is a scalar; pass a value, not an array");
    if (old_scalar.dtype != scalar->dtype)
        fail(p, s,
             "RecordedLaunch::set: '" + name + "' is " + base::with_article(dtype_name(old_scalar.dtype)) +
                 " scalar but the value is " + base::with_article(dtype_name(scalar->dtype)) +
                 "; pass a value of the parameter's type");
}

std::string quoted_list(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
    return out;
}

// Whether leaf `leaf` belongs to parameter or field `name` (`name.field...`, `name[c]`).
bool leaf_of(const std::string& leaf, const std::string& name) {
    return leaf.size() > name.size() && leaf.compare(0, name.size(), name) == 0 &&
           (leaf[name.size()] == '.' || leaf[name.size()] == '[');
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
    check_replacement(p, name, p.args[i], array, s);
    const LaunchArg previous = p.args[i];
    p.args[i] = array;
    try {
        detail::recheck_launch(p);
    } catch (...) {
        p.args[i] = previous;
        throw;
    }
}

DType RecordedLaunch::scalar_dtype(const std::string& name, std::source_location s) {
    const size_t i = find(name, s);
    const auto* scalar = std::get_if<ScalarArg>(&prepared_->args[i]);
    if (!scalar)
        fail(*prepared_, s,
             "RecordedLaunch::set: parameter '" + name + "' is an array; pass an array, not a value");
    return scalar->dtype;
}

void RecordedLaunch::reject_value(const std::string& name, const std::string& value, std::source_location s) {
    const DType dtype = std::get<ScalarArg>(prepared_->args[find(name, s)]).dtype;
    fail(*prepared_, s,
         "RecordedLaunch::set: the value " + value + " for '" + name + "' does not fit its " +
             dtype_name(dtype) + " parameter (" + dtype_name(dtype) + " holds " + detail::holds_text(dtype) +
             "); pass a value in that range");
}

void RecordedLaunch::set_scalar(const std::string& name, ScalarArg value, std::source_location s) {
    const size_t i = find(name, s);
    detail::PreparedLaunch& p = *prepared_;
    check_replacement(p, name, p.args[i], value, s);
    p.args[i] = value;
}

void RecordedLaunch::set_leaves(const std::string& name, const std::vector<std::string>& leaves,
                                std::vector<LaunchArg> values, std::source_location s) {
    if (prepared_.use_count() > 1) prepared_ = std::make_shared<detail::PreparedLaunch>(*prepared_);
    detail::PreparedLaunch& p = *prepared_;
    const std::vector<std::string>& names = p.kernel.body->param_names;
    std::vector<std::string> own;  // the kernel's leaves of `name`
    for (const std::string& n : names)
        if (leaf_of(n, name)) own.push_back(n);
    const std::string has = own.empty() ? "no parameter of the kernel has fields or components under '" +
                                              name + "'; its leaves are " + quoted_list(names)
                                        : "'" + name + "' has " + quoted_list(own);
    std::vector<size_t> at;
    for (const std::string& leaf : leaves) {
        size_t i = 0;
        while (i < names.size() && names[i] != leaf) ++i;
        if (i == names.size())
            fail(p, s,
                 "RecordedLaunch::set: the value for '" + name + "' has a leaf '" + leaf +
                     "' that the kernel does not have (" + has + "); nothing was set");
        at.push_back(i);
    }
    if (own.size() != leaves.size())
        fail(p, s,
             "RecordedLaunch::set: the value for '" + name + "' has " + std::to_string(leaves.size()) +
                 " leaves (" + quoted_list(leaves) + ") but " + has + "; nothing was set");
    for (size_t k = 0; k < at.size(); ++k) check_replacement(p, leaves[k], p.args[at[k]], values[k], s);
    const std::vector<LaunchArg> previous = p.args;
    for (size_t k = 0; k < at.size(); ++k) p.args[at[k]] = std::move(values[k]);
    try {
        detail::recheck_launch(p);
    } catch (...) {
        p.args = previous;
        throw;
    }
}

const detail::KernelState& RecordedLaunch::kernel_state() const {
    return prepared_->kernel;
}

const Dim& RecordedLaunch::dim() const {
    return prepared_->dim;
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
    // As weft::launch does: a tape recording on this thread sees the launch.
    const detail::PreparedLaunch& p = *prepared_;
    if (!p.checked.compiled->options.enable_backward) return detail::issue(p);
    const std::vector<uint64_t> versions = detail::tape_ready(p.args, p.checked.plan->writes);
    detail::issue(p);
    detail::tape_record(p.kernel, p.dim, p.args, p.checked.plan->writes, versions);
}

}  // namespace weft
