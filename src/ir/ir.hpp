// The Weft IR: structured, typed statements over numbered values.
//
// Semantics
// ---------
// A Program is a list of Functions (kernels and weft functions). A Function owns a table of
// values (each with a Type) and a body Block. A Block is an ordered list of Nodes; control flow
// is structured: If, For and While nodes own child Blocks, and Break/Continue/Return leave them.
//
// A value is defined by exactly one node (its `result`) and is visible in the rest of the block
// that defines it and in the blocks nested inside that rest. Values are *mutable registers*:
// an Assign node overwrites a value that was defined earlier (a local variable that the user
// reassigns, possibly inside a nested block). Values that are never assigned are in SSA form;
// `ValueInfo::assigned` tells which is which, so analyses can treat the rest as constants or
// pure expressions.
//
// Arrays are values of array type: parameters, and View nodes (a lower-dimensional view of an
// array, `grid[i]`, sharing its memory). Loads, stores and atomics index them with one integer
// value per dimension. An Atomic returns the element's previous value. Calls name
// their callee by index into Program::functions and pass arrays by reference, scalars by value.
//
// Every node records the user's source location, so every error can name it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weft/detail/ops.hpp"
#include "weft/detail/trace_api.hpp"
#include "weft/dtype.hpp"

namespace weft::ir {

using detail::AtomicOp;
using detail::BinaryOp;
using detail::Loc;
using detail::MathOp;
using detail::UnaryOp;

// Scalars and arrays. Composite values exist only in the frontend (docs/design/0015): an array
// of composite elements is an array whose elements are `components` scalars of `dtype`, packed.
struct Type {
    enum class Kind : uint8_t { Void, Scalar, Array };
    Kind kind = Kind::Void;
    DType dtype = DType::Int32;
    uint8_t ndim = 0;        // arrays only
    uint8_t components = 1;  // arrays only: scalars per element (a vec3 array: 3)

    static Type void_type() { return {}; }
    static Type scalar(DType t) { return {Kind::Scalar, t, 0}; }
    static Type array(DType t, int ndim, int components = 1) {
        return {Kind::Array, t, static_cast<uint8_t>(ndim), static_cast<uint8_t>(components)};
    }
    bool is_void() const { return kind == Kind::Void; }
    bool is_scalar() const { return kind == Kind::Scalar; }
    bool is_array() const { return kind == Kind::Array; }
    bool is_float() const { return is_scalar() && weft::is_float(dtype); }
    bool is_integer() const { return is_scalar() && weft::is_integer(dtype); }
    bool is_bool() const { return is_scalar() && dtype == DType::Bool; }
    std::string str() const;
    friend bool operator==(const Type&, const Type&) = default;
};

// Tid's `sub` for the thread's linear index (dimensions are 0..3).
inline constexpr uint8_t kLinearTid = 4;

using ValueId = uint32_t;
inline constexpr ValueId kNoValue = UINT32_MAX;

// The node list, in one place. Operands (`args`) per kind:
//   Param                       result = parameter `bits`
//   Const                       result = constant whose raw bits are `bits`
//   Tid                         result = thread index along dimension `sub` (`bits` = launch ndim);
//                               sub == kLinearTid: the Int64 index of the thread in the launch
//   Copy      [src]             result = src
//   Unary     [a]               result = op(a), op = UnaryOp(sub)
//   Binary    [a, b]            result = op(a, b), op = BinaryOp(sub); integer x / 0 == 0,
//                               x % 0 == x, INT_MIN / -1 == INT_MIN (wrapping), INT_MIN % -1 == 0
//   Math      [a]               result = op(a), op = MathOp(sub)
//   Select    [c, t, f]         result = c ? t : f
//   Cast      [a]               result = a converted to the result type
//   Shape     [arr]             result = extent of dimension `sub` of arr
//   View      [arr, i]          result = arr[i], an array of ndim - 1 sharing arr's memory:
//                               dimension 0 removed (data += i * stride 0)
//   Load      [arr, i...]       result = arr[i...]; in every indexed node a negative index
//                               counts from the end (i + extent), as in Python, and `bits` is
//                               the component of the element it addresses (0 for scalar
//                               elements; below the array type's `components`)
//   Store     [arr, i..., v]    arr[i...] = v
//   Atomic    [arr, i..., v]    result = old arr[i...]; arr[i...] = op(old, v), op = AtomicOp(sub)
//                               (Cas: [arr, i..., compare, v])
//   Accumulate [arr, i..., v]   deterministic atomic_<op>(arr[i...], v) whose result is unused,
//                               op = AtomicOp(sub) in {Add, Sub, Min, Max}; made by the
//                               deterministic lowering, applied through the target's state
//   Reserve   [ctr, i..., n]    result = the deterministic slot for a consumed int32
//                               atomic_add(ctr[i...], n): made by the slot-allocation lowering;
//                               in a counting pass it only records the reservation
//   Assign    [dst, src]        dst = src (dst becomes a mutable value)
//   Call      [args...]         result (unless void) = functions[bits](args...)
//   Print     [args...]         printf(text, args...)
//   If        [c]               blocks: then, else
//   For       [start, stop, step]  result = loop variable; blocks: body; Python's range: the
//                               trip count is computed once, without overflow
//   While     [c]               blocks: cond (defines c), body; loops while c after cond
//   Break, Continue             leave / restart the innermost loop
//   Return    [value?]          leaves the function (a kernel: ends the thread)
#define WEFT_IR_NODES(X)                                                                                   \
    X(Param)                                                                                               \
    X(Const)                                                                                               \
    X(Tid)                                                                                                 \
    X(Copy) X(Unary) X(Binary) X(Math) X(Select) X(Cast) X(Shape) X(Load) X(Store) X(Atomic) X(Accumulate) \
        X(Assign) X(Call) X(Print) X(If) X(For) X(While) X(Break) X(Continue) X(Return) X(View) X(Reserve)

enum class NodeKind : uint8_t {
#define WEFT_IR_ENUM(name) name,
    WEFT_IR_NODES(WEFT_IR_ENUM)
#undef WEFT_IR_ENUM
};
const char* node_kind_name(NodeKind kind);

struct Block;

struct Node {
    NodeKind kind;
    uint8_t sub = 0;
    ValueId result = kNoValue;
    std::vector<ValueId> args;
    uint64_t bits = 0;
    std::string text;
    std::vector<Block> blocks;
    Loc loc;

    AtomicOp atomic_op() const { return static_cast<AtomicOp>(sub); }
    // Load, Store, Atomic, Accumulate and Reserve: the component of the element addressed.
    uint32_t component() const { return static_cast<uint32_t>(bits); }
    BinaryOp binary_op() const { return static_cast<BinaryOp>(sub); }
    UnaryOp unary_op() const { return static_cast<UnaryOp>(sub); }
    MathOp math_op() const { return static_cast<MathOp>(sub); }
};

struct Block {
    std::vector<Node> nodes;
};

struct ValueInfo {
    Type type;
    bool assigned = false;  // the target of some Assign
};

struct Function {
    std::string name;
    bool is_kernel = false;
    std::vector<std::string> param_names;
    std::vector<ValueId> params;
    Type ret;
    std::vector<ValueInfo> values;
    Block body;
    // The launch dimensionality tid() is used with, here or in callees (0: unused). A traced
    // fact, which the builder checks across calls; what lowering decides lives in plan/.
    int tid_ndim = 0;
    // Autodiff: the functions (indices in Program::functions) a user wrote to replace this
    // function's generated adjoint and its replay in backward passes (-1: none). A custom
    // adjoint takes this function's parameters, the adjoint of its result (if it returns one),
    // then the gradient of each of its float array parameters.
    int custom_adjoint = -1;
    int custom_replay = -1;
    Loc loc;

    const Type& type_of(ValueId v) const { return values[v].type; }
};

struct Program {
    std::string module_name;
    std::vector<std::unique_ptr<Function>> functions;

    Program() = default;
    Program(const Program& other);
    Program& operator=(const Program& other);
    Program(Program&&) = default;
    Program& operator=(Program&&) = default;

    // The index of the function called `name`, or -1.
    int find(const std::string& name) const;
};

// Visits every node of `block` and of the blocks nested in it, in program order.
template <class F>
void for_each_node(const Block& block, F&& f) {
    for (const Node& n : block.nodes) {
        f(n);
        for (const Block& b : n.blocks) for_each_node(b, f);
    }
}

}  // namespace weft::ir
