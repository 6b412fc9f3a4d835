// Puts the embedded device sources together into the text of each library module.
#include "runtime/cuda/device_sources.hpp"

#include "codegen/generated.hpp"
#include "weft/error.hpp"

namespace weft::runtime::cuda {

namespace embedded {
extern const char* const kAbiH;
extern const char* const kLibraryAbiH;
extern const char* const kScanCu;
extern const char* const kSlotsCu;
extern const char* const kSlotBinsCu;
extern const char* const kSlotGroupsCu;
extern const char* const kAccumulationCu;
extern const char* const kRecordsCu;
extern const char* const kExactF64Cu;
extern const char* const kGraphConditionCu;
extern const char* const kDistributedWindowH;
extern const char* const kDistributedWindowCu;
}  // namespace embedded

namespace {

// A kernel source after what it includes: the whole prelude (which starts with the ABI), then the
// library ABI.
std::string with_prelude(const char* source) {
    return codegen::prelude() + embedded::kLibraryAbiH + source;
}

}  // namespace

const std::vector<LibraryModule>& library_modules() {
    static const std::vector<LibraryModule> all = {LibraryModule::Scan,
                                                   LibraryModule::Slots,
                                                   LibraryModule::SlotBins,
                                                   LibraryModule::SlotGroups,
                                                   LibraryModule::Deterministic,
                                                   LibraryModule::GraphCondition,
                                                   LibraryModule::DistributedWindow};
    return all;
}

const char* library_module_name(LibraryModule module) {
    switch (module) {
        case LibraryModule::Scan: return "scan";
        case LibraryModule::Slots: return "slots";
        case LibraryModule::SlotBins: return "slot_bins";
        case LibraryModule::SlotGroups: return "slot_groups";
        case LibraryModule::Deterministic: return "deterministic";
        case LibraryModule::GraphCondition: return "weft_graph";
        case LibraryModule::DistributedWindow: return "distributed_window";
    }
    throw InternalError("library kernels",
                        "no name for library module " + std::to_string(static_cast<int>(module)));
}

const std::string& library_source(LibraryModule module) {
    switch (module) {
        case LibraryModule::Scan: {
            // The scan needs no prelude: the ABI's types and the library ABI only.
            static const std::string text =
                std::string(embedded::kAbiH) + embedded::kLibraryAbiH + embedded::kScanCu;
            return text;
        }
        case LibraryModule::Slots: {
            static const std::string text = with_prelude(embedded::kSlotsCu);
            return text;
        }
        case LibraryModule::SlotBins: {
            static const std::string text = with_prelude(embedded::kSlotBinsCu);
            return text;
        }
        case LibraryModule::SlotGroups: {
            static const std::string text = with_prelude(embedded::kSlotGroupsCu);
            return text;
        }
        case LibraryModule::Deterministic: {
            static const std::string text =
                with_prelude(embedded::kAccumulationCu) + embedded::kRecordsCu + embedded::kExactF64Cu;
            return text;
        }
        case LibraryModule::GraphCondition: {
            static const std::string text = embedded::kGraphConditionCu;
            return text;
        }
        case LibraryModule::DistributedWindow: {
            static const std::string text =
                with_prelude(embedded::kDistributedWindowH) + embedded::kDistributedWindowCu;
            return text;
        }
    }
    throw InternalError("library kernels",
                        "no source for library module " + std::to_string(static_cast<int>(module)));
}

std::vector<std::string> library_options(LibraryModule module) {
    // cudaGraphSetConditional is a device runtime function: relocatable code, linked afterwards.
    if (module == LibraryModule::GraphCondition) return {"-rdc=true"};
    return {};
}

}  // namespace weft::runtime::cuda
