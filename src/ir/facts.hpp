// The facts of one function that passes keep asking for, worked out in one walk.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/ir.hpp"

namespace weft::ir {

// Per value of a function: the node that defines it, how often it is read, the constant it
// holds, the array parameter whose memory it is, and (for mutable locals) the Assign nodes that
// overwrite it and whether a loop does. The table points into the function's nodes: it is a
// snapshot, valid until the function is edited; a pass that edits builds a new one after.
class Facts {
public:
    explicit Facts(const Function& fn);

    const Function& function() const { return fn_; }

    // The node whose result `v` is (a Param node for parameters); null for none.
    const Node* definition(ValueId v) const { return definition_[v]; }
    // How many operands (of every node, Assign targets included) name `v`.
    int uses(ValueId v) const { return uses_[v]; }
    bool used(ValueId v) const { return uses_[v] > 0; }

    // The Const node of `v` when `v` is a constant that is never assigned; null otherwise.
    const Node* constant(ValueId v) const;
    // Its value, as the integer of v's type (sign-extended for int32 and int64).
    std::optional<int64_t> integer(ValueId v) const;

    // For an array value, the array parameter whose memory it is (through views); kNoValue for
    // scalars. param_of() gives that parameter's index, or -1.
    ValueId root(ValueId v) const { return root_[v]; }
    int param_of(ValueId v) const;
    // The parameter index of `v` itself, or -1 when it is not a parameter.
    int param_index(ValueId v) const { return param_index_[v]; }

    // Mutable locals (docs/design/0014): the Assign nodes that overwrite `v`, in program order,
    // and whether one of them sits in a loop (the value then changes from one iteration to the
    // next, and its earlier values are lost unless something keeps them).
    const std::vector<const Node*>& assignments(ValueId v) const { return assignments_[v]; }
    bool mutable_local(ValueId v) const { return !assignments_[v].empty(); }
    bool assigned_in_loop(ValueId v) const { return in_loop_[v]; }
    // Whether the node defining `v` sits in a loop body (a new value each iteration).
    bool defined_in_loop(ValueId v) const { return defined_in_loop_[v]; }

private:
    void walk(const Block& b, int loop_depth);

    const Function& fn_;
    std::vector<const Node*> definition_;
    std::vector<int> uses_;
    std::vector<ValueId> root_;
    std::vector<int> param_index_;
    std::vector<std::vector<const Node*>> assignments_;
    std::vector<bool> in_loop_;
    std::vector<bool> defined_in_loop_;
};

}  // namespace weft::ir
