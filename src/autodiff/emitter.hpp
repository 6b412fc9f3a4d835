// Appending new nodes to a block of a function that a pass builds (autodiff's small builder).
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "ir/ir.hpp"

namespace weft::autodiff {

// Nodes go to the end of `*out`; new values are added to `fn`. Unlike ir::Builder it checks
// nothing: the pipeline's verifier checks what the autodiff passes make.
class Emitter {
public:
    Emitter(ir::Function& fn, std::vector<ir::Node>* out, ir::Loc loc) : fn_(fn), out_(out), loc_(loc) {}

    ir::Function& function() { return fn_; }
    std::vector<ir::Node>* out() const { return out_; }
    void set_out(std::vector<ir::Node>* out) { out_ = out; }
    void set_loc(ir::Loc loc) { loc_ = loc; }
    const ir::Type& type(ir::ValueId v) const { return fn_.values[v].type; }

    ir::ValueId value(ir::Type type, bool assigned = false) {
        fn_.values.push_back({type, assigned});
        return static_cast<ir::ValueId>(fn_.values.size() - 1);
    }
    // Appends `n`, giving it a new result of `type` unless that is void; returns the result.
    ir::ValueId node(ir::Node n, ir::Type type = ir::Type::void_type(), bool assigned = false) {
        if (!type.is_void()) n.result = value(type, assigned);
        n.loc = loc_;
        out_->push_back(std::move(n));
        return out_->back().result;
    }

    ir::ValueId zero(DType t) { return node({.kind = ir::NodeKind::Const}, ir::Type::scalar(t)); }
    // 1 in float type `t`.
    ir::ValueId one(DType t) {
        const uint64_t bits = t == DType::Float64    ? 0x3FF0000000000000u
                              : t == DType::Float16  ? 0x3C00u
                              : t == DType::BFloat16 ? 0x3F80u
                                                     : 0x3F800000u;
        return node({.kind = ir::NodeKind::Const, .bits = bits}, ir::Type::scalar(t));
    }
    ir::ValueId integer(DType t, int64_t v) {
        return node({.kind = ir::NodeKind::Const, .bits = static_cast<uint64_t>(v)}, ir::Type::scalar(t));
    }
    ir::ValueId boolean(bool b) {
        return node({.kind = ir::NodeKind::Const, .bits = b ? 1u : 0u}, ir::Type::scalar(DType::Bool));
    }
    ir::ValueId copy(ir::ValueId v, bool assigned = false) {
        return node({.kind = ir::NodeKind::Copy, .args = {v}}, type(v), assigned);
    }
    void assign(ir::ValueId dst, ir::ValueId src) {
        fn_.values[dst].assigned = true;
        node({.kind = ir::NodeKind::Assign, .args = {dst, src}});
    }
    ir::ValueId unary(ir::UnaryOp op, ir::ValueId a) {
        return node({.kind = ir::NodeKind::Unary, .sub = static_cast<uint8_t>(op), .args = {a}}, type(a));
    }
    ir::ValueId binary(ir::BinaryOp op, ir::ValueId a, ir::ValueId b) {
        const ir::Type t = detail::is_comparison(op) ? ir::Type::scalar(DType::Bool) : type(a);
        return node({.kind = ir::NodeKind::Binary, .sub = static_cast<uint8_t>(op), .args = {a, b}}, t);
    }
    ir::ValueId math(ir::MathOp op, ir::ValueId a) {
        return node({.kind = ir::NodeKind::Math, .sub = static_cast<uint8_t>(op), .args = {a}}, type(a));
    }
    ir::ValueId select(ir::ValueId c, ir::ValueId t, ir::ValueId f) {
        return node({.kind = ir::NodeKind::Select, .args = {c, t, f}}, type(t));
    }
    ir::ValueId cast(DType to, ir::ValueId a) {
        return node({.kind = ir::NodeKind::Cast, .args = {a}}, ir::Type::scalar(to));
    }
    ir::ValueId load(ir::ValueId array, std::vector<ir::ValueId> index, uint32_t component) {
        index.insert(index.begin(), array);
        return node({.kind = ir::NodeKind::Load, .args = std::move(index), .bits = component},
                    ir::Type::scalar(type(array).dtype));
    }
    void atomic_add(ir::ValueId array, std::vector<ir::ValueId> index, uint32_t component, ir::ValueId v) {
        index.insert(index.begin(), array);
        index.push_back(v);
        node({.kind = ir::NodeKind::Atomic,
              .sub = static_cast<uint8_t>(ir::AtomicOp::Add),
              .args = std::move(index),
              .bits = component},
             ir::Type::scalar(type(array).dtype));
    }
    // if (c) { then_body } else { else_body }, each emitted by its callback into its block.
    void if_(ir::ValueId c, const std::function<void()>& then_body,
             const std::function<void()>& else_body = {}) {
        ir::Node n{.kind = ir::NodeKind::If, .args = {c}, .blocks = std::vector<ir::Block>(2)};
        in_block(n.blocks[0], then_body);
        if (else_body) in_block(n.blocks[1], else_body);
        node(std::move(n));
    }
    // for (i = start; ...; i += step) in Python's range semantics; `body` gets the loop variable.
    void for_(ir::ValueId start, ir::ValueId stop, ir::ValueId step,
              const std::function<void(ir::ValueId)>& body) {
        ir::Node n{
            .kind = ir::NodeKind::For, .args = {start, stop, step}, .blocks = std::vector<ir::Block>(1)};
        n.result = value(type(start));
        const ir::ValueId var = n.result;
        in_block(n.blocks[0], [&] { body(var); });
        n.loc = loc_;
        out_->push_back(std::move(n));
    }
    void in_block(ir::Block& b, const std::function<void()>& body) {
        std::vector<ir::Node>* saved = out_;
        out_ = &b.nodes;
        body();
        out_ = saved;
    }

private:
    ir::Function& fn_;
    std::vector<ir::Node>* out_;
    ir::Loc loc_;
};

}  // namespace weft::autodiff
