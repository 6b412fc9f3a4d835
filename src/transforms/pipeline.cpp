// The lowering pipeline, as one readable list of passes.
#include "transforms/pipeline.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/internal_check.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "transforms/eliminate_dead_code.hpp"
#include "transforms/generate_adjoints.hpp"
#include "transforms/kernel_plans.hpp"
#include "transforms/lower_deterministic_atomics.hpp"
#include "transforms/lower_slot_allocation.hpp"

namespace weft::transforms {

namespace {

bool env_flag(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::strcmp(v, "0") != 0;
}

class Stage {
public:
    Stage(ir::Program& program, const plan::ProgramPlan& plan) : program_(program), plan_(plan) {
#ifndef NDEBUG
        verify_ = true;
#endif
        verify_ = verify_ || env_flag("WEFT_VERIFY_IR");
        dump_ = env_flag("WEFT_DUMP_IR");
        time_ = env_flag("WEFT_TIME_PASSES");
        after("trace");
    }

    template <class Pass>
    void run(const char* name, Pass&& pass) {
        const auto start = std::chrono::steady_clock::now();
        program_ = pass(std::move(program_));
        if (time_)
            std::fprintf(
                stderr, "weft: module '%s': pass %s took %.3f ms\n", program_.module_name.c_str(), name,
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
        after(name);
    }

private:
    // Verifies, and prints the IR when it changed: a pass that left it as it was is not logged.
    void after(const char* name) {
        // Codegen and the runtime index plans by function: a pass that adds functions adds their plans.
        WEFT_INTERNAL_CHECK(plan_.functions.size() == program_.functions.size(), name,
                            "the plan lists every function of the program");
        if (verify_) ir::verify(program_, name);
        if (!dump_) return;
        std::string printed = ir::print(program_);
        if (printed == last_printed_) return;
        std::fprintf(stderr, "=== IR after %s ===\n%s\n", name, printed.c_str());
        last_printed_ = std::move(printed);
    }

    ir::Program& program_;
    const plan::ProgramPlan& plan_;
    bool verify_ = false;
    bool dump_ = false;
    bool time_ = false;
    std::string last_printed_;
};

}  // namespace

Lowered lower(ir::Program program, const Options& options, bool adjoints) {
    plan::ProgramPlan plan = initial_plan(program);
    Stage stage(program, plan);
    // Dead loads go first: `out[i] += v` reads out[i] while tracing, which the hazard check of
    // the deterministic lowering must not see.
    stage.run("eliminate_dead_code", eliminate_dead_code);
    // Adjoints before the deterministic lowering: their gradient accumulations are atomics.
    if (adjoints && options.enable_backward)
        stage.run("generate_adjoints", [&](ir::Program p) { return generate_adjoints(std::move(p), plan); });
    stage.run("lower_deterministic_atomics", [&](ir::Program p) {
        return lower_deterministic_atomics(std::move(p), options.deterministic, plan);
    });
    stage.run("lower_slot_allocation", [&](ir::Program p) {
        return lower_slot_allocation(std::move(p), options.deterministic, plan);
    });
    // The counting passes drop writes; what only fed them goes too.
    stage.run("eliminate_dead_code", eliminate_dead_code);
    complete_plan(program, plan);
    return {std::move(program), std::move(plan)};
}

}  // namespace weft::transforms
