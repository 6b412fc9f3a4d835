// The claims on a stream's status area.
#include "runtime/cuda/status_claims.hpp"

namespace weft::runtime::cuda {

int StatusClaims::claim(const std::string& key, bool captured) {
    int at = -1;
    for (size_t i = 0; i < claims_.size() && (at < 0 || claims_[static_cast<size_t>(at)].key != key); ++i)
        if (claims_[i].key == key || (at < 0 && claims_[i].key.empty())) at = static_cast<int>(i);
    if (at < 0 && claims_.size() < capacity_) {
        at = static_cast<int>(claims_.size());
        claims_.emplace_back();
    }
    if (at < 0) return -1;
    StatusClaim& c = claims_[static_cast<size_t>(at)];
    if (c.key != key) c = {key, false, 0, 0, {}, {}};
    c.persistent = c.persistent || captured;
    c.use = ++claims_made_;
    ++c.pending;
    return at;
}

void StatusClaims::queued(int entry) {
    --claims_[static_cast<size_t>(entry)].pending;
}

bool StatusClaims::unchanged(size_t i, const StatusClaim& read) const {
    return i < claims_.size() && claims_[i].key == read.key && claims_[i].use == read.use &&
           claims_[i].pending == 0;
}

void StatusClaims::release(const std::vector<StatusClaim>& read) {
    for (size_t i = 0; i < read.size(); ++i)
        if (readable(read[i]) && unchanged(i, read[i]) && !claims_[i].persistent) claims_[i] = {};
    while (!claims_.empty() && claims_.back().key.empty()) claims_.pop_back();
}

}  // namespace weft::runtime::cuda
