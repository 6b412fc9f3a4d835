// What a slot reservation depends on that a counting pass sees differently from the execution pass.
#pragma once

#include <map>
#include <memory>
#include <set>

#include "ir/facts.hpp"
#include "ir/ir.hpp"

namespace weft::analysis {

// Whether node `n` of a function is a slot reservation: a consumed int32 atomic_add.
bool is_reservation(const ir::Function& fn, const ir::Node& n, const ir::Facts& facts);

// What is followed from a kernel through the functions it calls:
// - Scratch: loads of arrays the kernel writes, and results of consumed atomics other than
//   reservations (a counting pass performs no writes, and turns such an atomic into a load).
// - Slots: the slots earlier reservations returned (a counting pass has only placeholders).
enum class DependenceSource { Scratch, Slots };

struct ReservationDependence {
    // The first reservation (in the order the walk meets them) whose count, index or execution
    // depends on a source, and that source: a load or an atomic, and the kernel parameter it
    // accesses (-1: not known). Null when no reservation does.
    const ir::Node* reservation = nullptr;
    const ir::Node* source = nullptr;
    int source_param = -1;
};

// `written` holds the kernel parameters the kernel writes (stores and non-reservation atomics).
// Values are followed to a fixpoint (assignments inside loops carry dependence backwards),
// through calls and through the conditions of the ifs and loops around a reservation.
ReservationDependence reservation_dependence(const ir::Program& program, uint32_t kernel,
                                             const std::set<int>& written, DependenceSource source);

}  // namespace weft::analysis
