// The lowering pipeline, as one readable list of passes.
#include "transforms/pipeline.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "transforms/eliminate_dead_code.hpp"
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
    explicit Stage(ir::Program& program) : program_(program) {
#ifndef NDEBUG
        verify_ = true;
#endif
        verify_ = verify_ || env_flag("WEFT_VERIFY_IR");
        dump_ = env_flag("WEFT_DUMP_IR");
        after("trace");
    }

    template <class Pass>
    void run(const char* name, Pass&& pass) {
        program_ = pass(std::move(program_));
        after(name);
    }

private:
    void after(const char* name) {
        if (verify_) ir::verify(program_, name);
        if (dump_) std::fprintf(stderr, "=== IR after %s ===\n%s\n", name, ir::print(program_).c_str());
    }

    ir::Program& program_;
    bool verify_ = false;
    bool dump_ = false;
};

}  // namespace

Lowered lower(ir::Program program, const Options& options) {
    plan::ProgramPlan plan = initial_plan(program);
    Stage stage(program);
    // Dead loads go first: `out[i] += v` reads out[i] while tracing, which the hazard check of
    // the deterministic lowering must not see.
    stage.run("eliminate_dead_code", eliminate_dead_code);
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
