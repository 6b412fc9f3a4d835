// The claims on a stream's status area.
#include "runtime/cuda/status_claims.hpp"

namespace weft::runtime::cuda {

int StatusClaims::claim(const std::string& key, bool captured) {
    int free = -1;
    for (size_t i = 0; i < claims_.size(); ++i) {
        if (claims_[i].key == key) {
            claims_[i].persistent = claims_[i].persistent || captured;
            return static_cast<int>(i);
        }
        if (free < 0 && claims_[i].key.empty()) free = static_cast<int>(i);
    }
    if (free < 0 && claims_.size() < capacity_) {
        free = static_cast<int>(claims_.size());
        claims_.emplace_back();
    }
    if (free >= 0) claims_[static_cast<size_t>(free)] = {key, captured, {}, {}};
    return free;
}

void StatusClaims::release(const std::vector<StatusClaim>& read) {
    for (size_t i = 0; i < read.size() && i < claims_.size(); ++i)
        if (!claims_[i].persistent && claims_[i].key == read[i].key) claims_[i] = {};
    while (!claims_.empty() && claims_.back().key.empty()) claims_.pop_back();
}

}  // namespace weft::runtime::cuda
