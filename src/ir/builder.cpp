// Validating construction of IR nodes (the tracer's only way to make IR).
#include "ir/builder.hpp"

#include "base/text.hpp"
#include "weft/error.hpp"

namespace weft::ir {

namespace {

std::string kind_of_function(const Function& fn) {
    return fn.is_kernel ? "kernel" : "function";
}

bool numeric(const Type& t) {
    return t.is_scalar() && t.dtype != DType::Bool;
}

}  // namespace

Builder::Builder(Function& fn) : fn_(fn) {
    blocks_.push_back(&fn_.body);
    open_scopes_.push_back(next_scope_++);
    value_scopes_.assign(fn_.values.size(), {0, open_scopes_[0]});
    made_.assign(fn_.values.size(), {});
    for_each_node(fn_.body, [&](const Node& n) {
        if (n.kind == NodeKind::Const) made_[n.result] = {true, n.bits, false};
        if (n.kind == NodeKind::For) made_[n.result].loop_variable = true;
    });
}

std::optional<uint64_t> Builder::constant_bits(ValueId v) const {
    if (fn_.values[v].assigned || !made_[v].constant) return std::nullopt;
    return made_[v].bits;
}

bool Builder::visible(ValueId v) const {
    const Scope& s = value_scopes_.at(v);
    return s.depth < open_scopes_.size() && open_scopes_[s.depth] == s.id;
}

void Builder::fail(Loc loc, const std::string& message) const {
    throw Error(message, fn_.name, loc.file, loc.line);
}

ValueId Builder::new_value(Type t) {
    fn_.values.push_back({t, false});
    value_scopes_.push_back({open_scopes_.size() - 1, open_scopes_.back()});
    made_.emplace_back();
    return static_cast<ValueId>(fn_.values.size() - 1);
}

Node& Builder::append(Node node) {
    blocks_.back()->nodes.push_back(std::move(node));
    return blocks_.back()->nodes.back();
}

void Builder::in_block(Block& block, const std::function<void()>& body) {
    blocks_.push_back(&block);
    open_scopes_.push_back(next_scope_++);
    try {
        body();
    } catch (...) {
        blocks_.pop_back();
        open_scopes_.pop_back();
        throw;
    }
    blocks_.pop_back();
    open_scopes_.pop_back();
}

void Builder::check_same(ValueId a, ValueId b, const char* what, Loc loc) {
    if (type(a) != type(b))
        fail(loc, std::string(what) + " needs operands of one type, got " + type(a).str() + " and " +
                      type(b).str() + "; convert one with weft::cast<T>(x)");
}

ValueId Builder::param(Type t, Loc loc) {
    const ValueId v = new_value(t);
    append({.kind = NodeKind::Param, .result = v, .bits = fn_.params.size(), .loc = loc});
    fn_.params.push_back(v);
    return v;
}

ValueId Builder::constant(DType t, uint64_t bits, Loc loc) {
    const ValueId v = new_value(Type::scalar(t));
    append({.kind = NodeKind::Const, .result = v, .bits = bits, .loc = loc});
    made_[v] = {true, bits, false};
    return v;
}

void Builder::use_tid(int ndim, Loc loc) {
    if (fn_.tid_ndim != 0 && fn_.tid_ndim != ndim)
        fail(loc, "tid is used for a " + std::to_string(ndim) + "-D launch here but for a " +
                      std::to_string(fn_.tid_ndim) + "-D launch elsewhere; use one form per kernel");
    fn_.tid_ndim = ndim;
}

ValueId Builder::tid(int dim, int ndim, Loc loc) {
    use_tid(ndim, loc);
    const ValueId v = new_value(Type::scalar(DType::Int32));
    append({.kind = NodeKind::Tid,
            .sub = static_cast<uint8_t>(dim),
            .result = v,
            .bits = static_cast<uint64_t>(ndim),
            .loc = loc});
    return v;
}

ValueId Builder::copy(ValueId a, Loc loc) {
    if (!type(a).is_scalar()) fail(loc, "only scalar values can be copied");
    const ValueId v = new_value(type(a));
    append({.kind = NodeKind::Copy, .result = v, .args = {a}, .loc = loc});
    return v;
}

void Builder::assign(ValueId dst, ValueId src, Loc loc) {
    check_same(dst, src, "assignment", loc);
    if (!type(dst).is_scalar()) fail(loc, "arrays cannot be reassigned inside a kernel");
    if (made_[dst].loop_variable)
        fail(loc,
             "the loop variable of for_ cannot be assigned; copy it into a local "
             "variable (Int j = i;) and change that");
    fn_.values[dst].assigned = true;
    append({.kind = NodeKind::Assign, .args = {dst, src}, .loc = loc});
}

ValueId Builder::unary(UnaryOp op, ValueId a, Loc loc) {
    const Type& t = type(a);
    const bool ok = op == UnaryOp::Neg ? numeric(t) : op == UnaryOp::Not ? t.is_bool() : t.is_integer();
    if (!ok)
        fail(loc, std::string("operator ") +
                      (op == UnaryOp::Neg   ? "-"
                       : op == UnaryOp::Not ? "!"
                                            : "~") +
                      " is not defined for " + t.str() +
                      (op == UnaryOp::Not   ? "; compare with == 0 to get a bool"
                       : t.is_bool()        ? "; use ! to negate a bool"
                       : op == UnaryOp::Neg ? ""
                                            : "; it takes integers (convert with weft::cast<T>(x))"));
    const ValueId v = new_value(t);
    append({.kind = NodeKind::Unary, .sub = static_cast<uint8_t>(op), .result = v, .args = {a}, .loc = loc});
    return v;
}

ValueId Builder::binary(BinaryOp op, ValueId a, ValueId b, Loc loc) {
    check_same(a, b, detail::op_name(op), loc);
    const Type& t = type(a);
    bool ok = t.is_scalar();
    std::string hint;
    switch (op) {
        case BinaryOp::Add:
        case BinaryOp::Sub:
        case BinaryOp::Mul:
        case BinaryOp::Div:
        case BinaryOp::Mod:
        case BinaryOp::Min:
        case BinaryOp::Max:
        case BinaryOp::Lt:
        case BinaryOp::Le:
        case BinaryOp::Gt:
        case BinaryOp::Ge:
            ok = numeric(t);
            hint = "; convert the bools with weft::cast<int>(x)";
            break;
        case BinaryOp::Pow:
            ok = t.is_float();
            hint = "; cast the operands with weft::cast<float>(x)";
            break;
        case BinaryOp::BitAnd:
        case BinaryOp::BitOr:
        case BinaryOp::BitXor:
            ok = t.is_integer() || t.is_bool();
            hint = "; bitwise operators take integers or bools (convert with weft::cast<T>(x))";
            break;
        case BinaryOp::Shl:
        case BinaryOp::Shr:
            ok = t.is_integer();
            hint = "; shifts take integers (convert with weft::cast<T>(x))";
            break;
        case BinaryOp::And:
        case BinaryOp::Or:
            ok = t.is_bool();
            hint = "; compare with != 0 to get a bool";
            break;
        case BinaryOp::Eq:
        case BinaryOp::Ne: break;
    }
    if (!ok) fail(loc, std::string(detail::op_name(op)) + " is not defined for " + t.str() + hint);
    const ValueId v = new_value(detail::is_comparison(op) || op == BinaryOp::And || op == BinaryOp::Or
                                    ? Type::scalar(DType::Bool)
                                    : t);
    append(
        {.kind = NodeKind::Binary, .sub = static_cast<uint8_t>(op), .result = v, .args = {a, b}, .loc = loc});
    return v;
}

ValueId Builder::math(MathOp op, ValueId a, Loc loc) {
    const Type& t = type(a);
    const bool ok = op == MathOp::Abs ? numeric(t) : t.is_float();
    if (!ok)
        fail(loc, std::string(detail::op_name(op)) + " needs a floating-point operand, got " + t.str() +
                      "; convert it first with weft::cast<float>(x)");
    const ValueId v = new_value(t);
    append({.kind = NodeKind::Math, .sub = static_cast<uint8_t>(op), .result = v, .args = {a}, .loc = loc});
    return v;
}

ValueId Builder::select(ValueId c, ValueId t, ValueId f, Loc loc) {
    if (!type(c).is_bool()) fail(loc, "select needs a bool condition, got " + type(c).str());
    check_same(t, f, "select", loc);
    const ValueId v = new_value(type(t));
    append({.kind = NodeKind::Select, .result = v, .args = {c, t, f}, .loc = loc});
    return v;
}

ValueId Builder::cast(DType to, ValueId a, Loc loc) {
    if (!type(a).is_scalar()) fail(loc, "only scalars can be cast, got " + type(a).str());
    const ValueId v = new_value(Type::scalar(to));
    append({.kind = NodeKind::Cast, .result = v, .args = {a}, .loc = loc});
    return v;
}

ValueId Builder::shape(ValueId array, int dim, Loc loc) {
    if (!type(array).is_array()) fail(loc, "shape() needs an array");
    if (dim < 0 || dim >= type(array).ndim)
        fail(loc, "shape(" + std::to_string(dim) + ") of a " + std::to_string(type(array).ndim) +
                      "-D array; dimensions are numbered from 0");
    const ValueId v = new_value(Type::scalar(DType::Int32));
    append({.kind = NodeKind::Shape,
            .sub = static_cast<uint8_t>(dim),
            .result = v,
            .args = {array},
            .loc = loc});
    return v;
}

ValueId Builder::view(ValueId array, ValueId index, Loc loc) {
    const Type t = type(array);  // a copy: new_value() below may move the value table
    if (!t.is_array()) fail(loc, "indexing a view needs an array, got " + t.str());
    if (t.ndim < 2)
        fail(loc, "a view of a 1-D array would have no dimensions; a[i] on a 1-D array is its element");
    if (!type(index).is_integer())
        fail(loc, std::string("array indices must be integers, got ") + type(index).str());
    const ValueId v = new_value(Type::array(t.dtype, t.ndim - 1, t.components));
    append({.kind = NodeKind::View, .result = v, .args = {array, index}, .loc = loc});
    return v;
}

void Builder::check_index(ValueId array, const std::vector<ValueId>& index, int component, const char* what,
                          Loc loc) {
    const Type& t = type(array);
    if (!t.is_array()) fail(loc, std::string(what) + " needs an array, got " + t.str());
    if (component < 0 || component >= t.components)
        fail(loc, std::string(what) + " of component " + std::to_string(component) + " of an element of " +
                      std::to_string(t.components) + " components; components are 0 to " +
                      std::to_string(t.components - 1));
    if (static_cast<int>(index.size()) != t.ndim)
        fail(loc, std::string(what) + " of a " + std::to_string(t.ndim) + "-D array with " +
                      std::to_string(index.size()) + " indices; give one index per dimension");
    for (ValueId i : index)
        if (!type(i).is_integer())
            fail(loc, std::string("array indices must be integers, got ") + type(i).str());
}

ValueId Builder::load(ValueId array, const std::vector<ValueId>& index, int component, Loc loc) {
    check_index(array, index, component, "a load", loc);
    const ValueId v = new_value(Type::scalar(type(array).dtype));
    std::vector<ValueId> args{array};
    args.insert(args.end(), index.begin(), index.end());
    append({.kind = NodeKind::Load,
            .result = v,
            .args = std::move(args),
            .bits = static_cast<uint64_t>(component),
            .loc = loc});
    return v;
}

void Builder::store(ValueId array, const std::vector<ValueId>& index, int component, ValueId value, Loc loc) {
    check_index(array, index, component, "a store", loc);
    if (type(value) != Type::scalar(type(array).dtype))
        fail(loc, "storing a " + type(value).str() + " into an array of " + dtype_name(type(array).dtype) +
                      "; convert it with weft::cast<T>(x)");
    std::vector<ValueId> args{array};
    args.insert(args.end(), index.begin(), index.end());
    args.push_back(value);
    append({.kind = NodeKind::Store,
            .args = std::move(args),
            .bits = static_cast<uint64_t>(component),
            .loc = loc});
}

ValueId Builder::atomic(AtomicOp op, ValueId array, const std::vector<ValueId>& index, int component,
                        ValueId value, ValueId compare, Loc loc) {
    check_index(array, index, component, (std::string("atomic_") + detail::op_name(op)).c_str(), loc);
    const DType elem = type(array).dtype;
    const bool arithmetic =
        op == AtomicOp::Add || op == AtomicOp::Sub || op == AtomicOp::Min || op == AtomicOp::Max;
    const bool ok = arithmetic ? (is_integer(elem) || is_float(elem)) : is_integer(elem);
    if (!ok)
        fail(loc, std::string("atomic_") + detail::op_name(op) + " is not supported on an array of " +
                      dtype_name(elem) +
                      (arithmetic ? "; use an integer or float array"
                                  : "; it works on integer arrays only (use atomic_add/min/max for floats)"));
    if (type(value) != Type::scalar(elem))
        fail(loc, std::string("atomic_") + detail::op_name(op) + " of a " + type(value).str() +
                      " on an array of " + dtype_name(elem) + "; convert it with weft::cast<T>(x)");
    std::vector<ValueId> args{array};
    args.insert(args.end(), index.begin(), index.end());
    if (op == AtomicOp::Cas) {
        if (type(compare) != Type::scalar(elem))
            fail(loc,
                 "atomic_cas compares with a " + type(compare).str() + " on an array of " + dtype_name(elem));
        args.push_back(compare);
    }
    args.push_back(value);
    const ValueId v = new_value(Type::scalar(elem));
    append({.kind = NodeKind::Atomic,
            .sub = static_cast<uint8_t>(op),
            .result = v,
            .args = std::move(args),
            .bits = static_cast<uint64_t>(component),
            .loc = loc});
    return v;
}

ValueId Builder::call(uint32_t callee, const Function& callee_fn, const std::vector<ValueId>& args, Loc loc) {
    if (args.size() != callee_fn.params.size())
        fail(loc, "function '" + callee_fn.name + "' takes " + std::to_string(callee_fn.params.size()) +
                      " arguments, got " + std::to_string(args.size()));
    for (size_t i = 0; i < args.size(); ++i)
        if (type(args[i]) != callee_fn.type_of(callee_fn.params[i]))
            fail(loc, "argument " + std::to_string(i) + " of function '" + callee_fn.name + "' is a " +
                          callee_fn.type_of(callee_fn.params[i]).str() + ", got " + type(args[i]).str());
    // A callee that reads tid needs the caller launched the same way.
    if (callee_fn.tid_ndim != 0) use_tid(callee_fn.tid_ndim, loc);
    const ValueId v = callee_fn.ret.is_void() ? kNoValue : new_value(callee_fn.ret);
    append({.kind = NodeKind::Call, .result = v, .args = args, .bits = callee, .loc = loc});
    return v;
}

void Builder::print(const std::string& format, const std::vector<ValueId>& args, Loc loc) {
    std::vector<DType> types;
    for (ValueId a : args) {
        if (!type(a).is_scalar()) fail(loc, "print takes scalars, got " + type(a).str());
        types.push_back(type(a).dtype);
    }
    const std::string problem = check_print_format(format, types);
    if (!problem.empty()) fail(loc, "print(\"" + format + "\"): " + problem);
    append({.kind = NodeKind::Print, .args = args, .text = format, .loc = loc});
}

void Builder::if_(ValueId c, const std::function<void()>& then_body, const std::function<void()>* else_body,
                  Loc loc) {
    if (!type(c).is_bool())
        fail(loc, "if_ needs a bool condition, got " + type(c).str() + "; compare it, e.g. x != 0");
    Node& node = append({.kind = NodeKind::If, .args = {c}, .blocks = std::vector<Block>(2), .loc = loc});
    // `node` stays valid: only the nested blocks grow while the bodies are traced.
    in_block(node.blocks[0], then_body);
    if (else_body) in_block(node.blocks[1], *else_body);
}

void Builder::for_(ValueId start, ValueId stop, ValueId step, const std::function<void(ValueId)>& body,
                   Loc loc) {
    for (ValueId b : {start, stop, step})
        if (type(b) != Type::scalar(DType::Int32))
            fail(loc,
                 "for_ bounds must be int32, got " + type(b).str() + "; convert with weft::cast<int32_t>(x)");
    const ValueId var = new_value(Type::scalar(DType::Int32));
    Node& node = append({.kind = NodeKind::For,
                         .result = var,
                         .args = {start, stop, step},
                         .blocks = std::vector<Block>(1),
                         .loc = loc});
    made_[var].loop_variable = true;
    if (const auto c = constant_bits(step); c && static_cast<int32_t>(*c) == 0)
        fail(loc, "for_ with a step of 0 never ends; use a nonzero step");
    ++loop_depth_;
    in_block(node.blocks[0], [&] {
        value_scopes_[var] = {open_scopes_.size() - 1, open_scopes_.back()};  // the body's own
        body(var);
    });
    --loop_depth_;
}

void Builder::while_(const std::function<ValueId()>& cond, const std::function<void()>& body, Loc loc) {
    Node& node = append({.kind = NodeKind::While, .blocks = std::vector<Block>(2), .loc = loc});
    ValueId c = kNoValue;
    ++while_cond_depth_;
    in_block(node.blocks[0], [&] { c = cond(); });
    --while_cond_depth_;
    if (!type(c).is_bool()) fail(loc, "while_ needs a bool condition, got " + type(c).str());
    node.args = {c};
    ++loop_depth_;
    in_block(node.blocks[1], body);
    --loop_depth_;
}

void Builder::break_(Loc loc) {
    if (loop_depth_ == 0) fail(loc, "break_ outside a for_ or while_ body");
    append({.kind = NodeKind::Break, .loc = loc});
}

void Builder::continue_(Loc loc) {
    if (loop_depth_ == 0) fail(loc, "continue_ outside a for_ or while_ body");
    append({.kind = NodeKind::Continue, .loc = loc});
}

void Builder::return_(const ValueId* value, Loc loc) {
    if (while_cond_depth_ > 0) fail(loc, "return_ inside a while_ condition");
    if (fn_.ret.is_void() && value)
        fail(loc,
             kind_of_function(fn_) + " '" + fn_.name + "' returns nothing; call return_() without a value");
    if (!fn_.ret.is_void()) {
        if (!value)
            fail(loc, "function '" + fn_.name + "' returns " + base::with_article(fn_.ret.str()) +
                          "; pass it to return_(value)");
        if (type(*value) != fn_.ret)
            fail(loc, "function '" + fn_.name + "' returns " + base::with_article(fn_.ret.str()) + ", not " +
                          base::with_article(type(*value).str()));
    }
    append({.kind = NodeKind::Return,
            .args = value ? std::vector<ValueId>{*value} : std::vector<ValueId>{},
            .loc = loc});
}

std::string check_print_format(const std::string& format, const std::vector<DType>& args) {
    size_t next = 0;
    for (size_t i = 0; i < format.size(); ++i) {
        if (format[i] != '%') continue;
        if (++i >= format.size()) return "the format ends with a lone %";
        if (format[i] == '%') continue;
        while (i < format.size() &&
               std::string_view("-+ #0123456789.").find(format[i]) != std::string_view::npos)
            ++i;
        while (i < format.size() && (format[i] == 'l' || format[i] == 'h')) ++i;
        if (i >= format.size()) return "the format ends inside a conversion";
        const char conv = format[i];
        const bool int_conv = std::string_view("diuxXoc").find(conv) != std::string_view::npos;
        const bool float_conv = std::string_view("fFeEgGaA").find(conv) != std::string_view::npos;
        if (!int_conv && !float_conv)
            return std::string("conversion %") + conv + " is not supported; use %d, %u, %x, %f, %e or %g";
        if (next >= args.size()) return "more conversions than arguments";
        const DType t = args[next++];
        if (int_conv && is_float(t))
            return "argument " + std::to_string(next - 1) + " is " + base::with_article(dtype_name(t)) +
                   " but the conversion is %" + conv + "; use %f or %g";
        if (float_conv && !is_float(t))
            return "argument " + std::to_string(next - 1) + " is " + base::with_article(dtype_name(t)) +
                   " but the conversion is %" + conv + "; use %d or %u";
    }
    if (next != args.size()) return "more arguments than conversions";
    return {};
}

}  // namespace weft::ir
