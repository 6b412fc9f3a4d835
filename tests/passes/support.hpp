// Building small programs by hand for pass tests: one kernel or function at a time, through ir::Builder.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/builder.hpp"
#include "ir/ir.hpp"

namespace weft::test {

// The types the hand-built kernels use most.
inline const ir::Type f32_array = ir::Type::array(DType::Float32, 1);
inline const ir::Type i32_array = ir::Type::array(DType::Int32, 1);
inline const ir::Type none = ir::Type::void_type();

inline ir::Loc here(uint32_t line) {
    return {"pass_test.cpp", line};
}

// Adds function `name` with parameters of `types` to `program`; `body` gets the builder and the
// parameter values. Returns its index.
inline uint32_t add_function(ir::Program& program, const std::string& name, bool is_kernel,
                             const std::vector<ir::Type>& types, ir::Type ret,
                             const std::function<void(ir::Builder&, const std::vector<ir::ValueId>&)>& body) {
    auto fn = std::make_unique<ir::Function>();
    fn->name = name;
    fn->is_kernel = is_kernel;
    fn->ret = ret;
    for (size_t i = 0; i < types.size(); ++i) fn->param_names.push_back("p" + std::to_string(i));
    ir::Function& f = *fn;
    program.functions.push_back(std::move(fn));
    ir::Builder b(f);
    std::vector<ir::ValueId> params;
    for (const ir::Type& t : types) params.push_back(b.param(t, here(1)));
    body(b, params);
    return static_cast<uint32_t>(program.functions.size() - 1);
}

inline ir::Program program_named(const std::string& name) {
    ir::Program p;
    p.module_name = name;
    return p;
}

// The node kinds of `block`, nested blocks in brackets: "Param Tid If[Store][]".
inline std::string kinds(const ir::Block& block) {
    std::string out;
    for (const ir::Node& n : block.nodes) {
        out += (out.empty() ? "" : " ") + std::string(ir::node_kind_name(n.kind));
        for (const ir::Block& child : n.blocks) out += "[" + kinds(child) + "]";
    }
    return out;
}

}  // namespace weft::test
