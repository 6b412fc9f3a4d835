// What CPU and GPU modules share: launch records and fault reports.
#include "runtime/device_module.hpp"

#include <cstdio>

#include "weft/error.hpp"

namespace weft::runtime {

int64_t LaunchGrid::total() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= dims[d];
    return n;
}

void DeviceModule::adopt(codegen::Generated generated, const plan::ProgramPlan& plan) {
    module_name_ = plan.module_name;
    for (const plan::FunctionPlan& f : plan.functions) function_names_.push_back(f.name);
    generated_ = std::move(generated);
}

LaunchRecord DeviceModule::launch_record(const LaunchGrid& grid, FaultRecord* fault) const {
    LaunchRecord r{};
    for (int d = 0; d < 4; ++d) r.dims[d] = grid.dims[d];
    r.total = grid.total();
    r.ndim = grid.ndim;
    r.error = fault;
    return r;
}

void DeviceModule::throw_fault(size_t function, const FaultRecord& fault, bool undone) const {
    const codegen::AccessSite& site = generated_.sites.at(static_cast<size_t>(fault.site));
    const std::string& where = site.function;
    throw Error("index " + std::to_string(fault.index) + " is out of bounds for dimension " +
                    std::to_string(fault.dim + site.dim_offset) + " of array '" + site.array + "' (extent " +
                    std::to_string(fault.extent) +
                    (fault.index < 0
                         ? "; a negative index counts from the end, down to -" + std::to_string(fault.extent)
                         : "") +
                    ")" + (where != function_names_[function] ? " in function '" + where + "'" : "") +
                    (undone ? "; the launch was undone, so the arrays hold their values from before it"
                            : "; it was found after a replay of a captured graph, which is not undone: the "
                              "replay's other writes stay applied"),
                function_names_[function], site.file, site.line);
}

void DeviceModule::report(const Options& options, const char* device, double ms) {
    load_ms_ = ms;
    if (options.verbose)
        std::fprintf(stderr, "weft: module '%s' for %s %s in %.1f ms\n", module_name_.c_str(), device,
                     from_cache_ ? "loaded from cache" : "compiled", ms);
}

}  // namespace weft::runtime
