// A hook through which a distributed sum (weft::DistributedSum) takes over the resolve of chosen
// deterministic targets, keeping their exact state instead of rounding it into the array.
#pragma once

#include <vector>

#include "runtime/det/accumulation.hpp"

namespace weft::runtime::det {

// Installed per host thread for the lifetime of a distributed sum (docs/design/0028). A launch
// on that thread hands every target plan to wants(); after its kernel, take() receives the
// launch's state (host memory where `host_state`) and must leave the taken targets' state as an
// untouched target's (so that Accumulation::resolve leaves their arrays alone) before the launch
// resolves the others.
class ResolveSink {
public:
    virtual ~ResolveSink() = default;
    // Whether the sink takes the target planned as `plan` (throws weft::Error for a target it
    // cannot take, such as a view of one of its arrays).
    virtual bool wants(const TargetPlan& plan, const LaunchSite& site) const = 0;
    virtual void take(const std::vector<TargetPlan>& plans, Accumulation& accumulation, bool host_state,
                      const LaunchSite& site) = 0;
};

// The calling thread's sink, or null.
ResolveSink* resolve_sink();
// Installs `sink` on the calling thread (null removes it); returns the one it replaces.
ResolveSink* exchange_resolve_sink(ResolveSink* sink);

}  // namespace weft::runtime::det
