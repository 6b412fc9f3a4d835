// The IR verifier: definitions before uses, scoping, operand kinds, loop and call structure.
#include "ir/verifier.hpp"

#include <string>
#include <vector>

#include "weft/error.hpp"

namespace weft::ir {

namespace {

class Verifier {
public:
    Verifier(const Program& p, const Function& fn, const char* pass) : program_(p), fn_(fn), pass_(pass) {}

    void run() {
        visible_.assign(fn_.values.size(), false);
        defined_.assign(fn_.values.size(), false);
        block(fn_.body, 0);
    }

private:
    [[noreturn]] void fail(const Node& n, const std::string& what) const {
        throw InternalError(pass_,
                            std::string("the IR is invalid after it: ") + node_kind_name(n.kind) +
                                " (traced at " + n.loc.file + ":" + std::to_string(n.loc.line) + "): " + what,
                            fn_.name);
    }

    void use(const Node& n, ValueId v) const {
        if (v >= fn_.values.size()) fail(n, "operand %" + std::to_string(v) + " does not exist");
        if (!visible_[v])
            fail(n, "operand %" + std::to_string(v) + " is used outside the scope that defines it");
    }

    void define(const Node& n, ValueId v, std::vector<ValueId>& scope) {
        if (v >= fn_.values.size()) fail(n, "result %" + std::to_string(v) + " does not exist");
        // append, not "%" + std::to_string: g++ 12 warns (-Wrestrict) on operator+'s insert at 0.
        if (defined_[v]) fail(n, std::string("%").append(std::to_string(v)) + " is defined twice");
        defined_[v] = visible_[v] = true;
        scope.push_back(v);
    }

    void expect(const Node& n, bool ok, const char* what) const {
        if (!ok) fail(n, what);
    }

    void block(const Block& b, int loops) {
        std::vector<ValueId> scope;
        for (const Node& n : b.nodes) {
            for (ValueId a : n.args)
                if (!(n.kind == NodeKind::While)) use(n, a);
            check(n, loops);
            if (n.kind == NodeKind::For) {
                std::vector<ValueId> inner;
                define(n, n.result, inner);
                block(n.blocks[0], loops + 1);
                for (ValueId v : inner) visible_[v] = false;
                continue;
            }
            if (n.kind == NodeKind::While) {
                // The condition's block stays in scope for the test and the body.
                std::vector<ValueId> cond_scope;
                for (const Node& c : n.blocks[0].nodes) {
                    for (ValueId a : c.args) use(c, a);
                    check(c, loops);
                    expect(c, c.blocks.empty(), "a while_ condition cannot hold nested control flow");
                    if (c.result != kNoValue) define(c, c.result, cond_scope);
                }
                use(n, n.args.at(0));
                expect(n, fn_.type_of(n.args[0]).is_bool(), "the condition is not a bool");
                block(n.blocks[1], loops + 1);
                for (ValueId v : cond_scope) visible_[v] = false;
                continue;
            }
            for (const Block& child : n.blocks) block(child, loops);
            if (n.result != kNoValue) define(n, n.result, scope);
        }
        for (ValueId v : scope) visible_[v] = false;
    }

    void check(const Node& n, int loops) const {
        auto type = [&](size_t i) { return fn_.type_of(n.args.at(i)); };
        switch (n.kind) {
            case NodeKind::Load:
            case NodeKind::Store:
            case NodeKind::Atomic:
            case NodeKind::Accumulate:
            case NodeKind::Reserve:
                expect(n, !n.args.empty() && type(0).is_array(), "the first operand is not an array");
                expect(n, n.component() < type(0).components, "the component is past the element's");
                break;
            case NodeKind::View: {
                expect(n, n.args.size() == 2 && type(0).is_array() && type(0).ndim >= 2,
                       "the first operand is not an array of 2 or more dimensions");
                expect(n, type(1).is_integer(), "the index is not an integer");
                expect(n, n.result < fn_.values.size(), "the result does not exist");
                const Type& r = fn_.type_of(n.result);
                expect(n,
                       r.is_array() && r.dtype == type(0).dtype && r.ndim == type(0).ndim - 1 &&
                           r.components == type(0).components,
                       "the result is not an array of one dimension fewer");
                break;
            }
            case NodeKind::If: expect(n, type(0).is_bool() && n.blocks.size() == 2, "malformed if"); break;
            case NodeKind::For: expect(n, n.args.size() == 3 && n.blocks.size() == 1, "malformed for"); break;
            case NodeKind::Break:
            case NodeKind::Continue: expect(n, loops > 0, "outside a loop"); break;
            case NodeKind::Assign: expect(n, type(0) == type(1), "assignment between different types"); break;
            case NodeKind::Call:
                expect(n, n.bits < program_.functions.size(), "callee does not exist");
                expect(n, n.args.size() == program_.functions[n.bits]->params.size(), "wrong argument count");
                break;
            case NodeKind::Return:
                expect(n, fn_.ret.is_void() ? n.args.empty() : (n.args.size() == 1 && type(0) == fn_.ret),
                       "the returned value does not match the function's type");
                break;
            default: break;
        }
    }

    const Program& program_;
    const Function& fn_;
    const char* pass_;
    std::vector<bool> visible_;
    std::vector<bool> defined_;
};

}  // namespace

void verify(const Program& program, const char* after_pass) {
    for (const auto& fn : program.functions) Verifier(program, *fn, after_pass).run();
}

}  // namespace weft::ir
