// IR basics: type names, node names, program copies and lookup.
#include "ir/ir.hpp"

namespace weft::ir {

std::string Type::str() const {
    switch (kind) {
        case Kind::Void: return "void";
        case Kind::Scalar: return dtype_name(dtype);
        case Kind::Array:
            return "array<" + std::string(dtype_name(dtype)) +
                   (components > 1 ? " x" + std::to_string(components) : std::string()) + ", " +
                   std::to_string(ndim) + ">";
    }
    return "?";
}

const char* node_kind_name(NodeKind kind) {
    switch (kind) {
#define WEFT_IR_NAME(name) \
    case NodeKind::name: return #name;
        WEFT_IR_NODES(WEFT_IR_NAME)
#undef WEFT_IR_NAME
    }
    return "?";
}

Program::Program(const Program& other) : module_name(other.module_name) {
    for (const auto& f : other.functions) functions.push_back(std::make_unique<Function>(*f));
}

Program& Program::operator=(const Program& other) {
    if (this != &other) *this = Program(other);
    return *this;
}

int Program::find(const std::string& name) const {
    for (size_t i = 0; i < functions.size(); ++i)
        if (functions[i]->name == name) return static_cast<int>(i);
    return -1;
}

}  // namespace weft::ir
