// Builds one Function's IR node by node, validating every operation as it is added.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace weft::ir {

// Each method checks its operands and throws weft::Error naming the function and the user's
// source line, with what to do instead. Nested blocks are built by callbacks.
class Builder {
public:
    explicit Builder(Function& fn);

    Function& function() { return fn_; }
    // Whether `v` may be used here: values made inside an if_/for_/while_ body end with it.
    bool visible(ValueId v) const;

    ValueId param(Type type, Loc loc);
    ValueId constant(DType type, uint64_t bits, Loc loc);
    ValueId tid(int dim, int ndim, Loc loc);
    ValueId copy(ValueId v, Loc loc);
    void assign(ValueId dst, ValueId src, Loc loc);
    ValueId unary(UnaryOp op, ValueId a, Loc loc);
    ValueId binary(BinaryOp op, ValueId a, ValueId b, Loc loc);
    ValueId math(MathOp op, ValueId a, Loc loc);
    ValueId select(ValueId c, ValueId t, ValueId f, Loc loc);
    ValueId cast(DType to, ValueId a, Loc loc);
    ValueId shape(ValueId array, int dim, Loc loc);
    // array[index]: the (ndim - 1)-D view that fixes dimension 0 (array must be 2-D or more).
    ValueId view(ValueId array, ValueId index, Loc loc);
    // Indexed nodes address `component` of the element (docs/design/0015).
    ValueId load(ValueId array, const std::vector<ValueId>& index, int component, Loc loc);
    void store(ValueId array, const std::vector<ValueId>& index, int component, ValueId v, Loc loc);
    ValueId atomic(AtomicOp op, ValueId array, const std::vector<ValueId>& index, int component, ValueId v,
                   ValueId compare, Loc loc);
    // `callee` is the callee's index in the program; `callee_fn` its (possibly partial) IR.
    ValueId call(uint32_t callee, const Function& callee_fn, const std::vector<ValueId>& args, Loc loc);
    void print(const std::string& format, const std::vector<ValueId>& args, Loc loc);
    void if_(ValueId c, const std::function<void()>& then_body, const std::function<void()>* else_body,
             Loc loc);
    void for_(ValueId start, ValueId stop, ValueId step, const std::function<void(ValueId)>& body, Loc loc);
    void while_(const std::function<ValueId()>& cond, const std::function<void()>& body, Loc loc);
    void break_(Loc loc);
    void continue_(Loc loc);
    void return_(const ValueId* value, Loc loc);

    [[noreturn]] void fail(Loc loc, const std::string& message) const;

private:
    ValueId new_value(Type type);
    // The bits of `v` if it is an unassigned constant.
    std::optional<uint64_t> constant_bits(ValueId v) const;
    // Records that the function reads tid of an `ndim`-D launch (directly or through a call).
    void use_tid(int ndim, Loc loc);
    Node& append(Node node);
    void in_block(Block& block, const std::function<void()>& body);
    const Type& type(ValueId v) const { return fn_.values[v].type; }
    void check_index(ValueId array, const std::vector<ValueId>& index, int component, const char* what,
                     Loc loc);
    void check_same(ValueId a, ValueId b, const char* what, Loc loc);

    struct Scope {
        size_t depth;
        uint64_t id;
    };

    Function& fn_;
    std::vector<Block*> blocks_;
    std::vector<uint64_t> open_scopes_;  // one id per block in blocks_
    std::vector<Scope> value_scopes_;    // per value: the block that made it
    // Per value, what the builder made it as, so checks need not search the function's nodes.
    struct Made {
        bool constant = false;  // by a Const node, with these bits
        uint64_t bits = 0;
        bool loop_variable = false;  // by a For node
    };
    std::vector<Made> made_;
    uint64_t next_scope_ = 0;
    int loop_depth_ = 0;
    int while_cond_depth_ = 0;
};

// Checks a printf-style format against argument types; returns an error message or "".
std::string check_print_format(const std::string& format, const std::vector<DType>& args);

}  // namespace weft::ir
