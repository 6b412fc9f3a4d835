// A small cache of device state that launches hand back for the next launch of the same key.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace weft::runtime::det {

// Key: compared with ==. Value: holds its device memory as `memory`, a shared allocation whose
// `bytes` it counts. A launch takes its entry out while it runs, so no two launches share one.
template <class Key, class Value>
class StateCache {
public:
    std::optional<Value> take(const Key& key) {
        std::lock_guard lock(mutex_);
        for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            if (!(it->first == key)) continue;
            Value v = std::move(it->second);
            bytes_ -= v.memory->bytes;
            entries_.erase(it);
            return v;
        }
        return std::nullopt;
    }
    // Keeps the newest entries, at most kEntries of them and kBytes in all: kept state is device
    // memory the user never asked for, so a program with many shapes must not pile it up.
    void put(Key key, Value v) {
        std::lock_guard lock(mutex_);
        if (v.memory->bytes > kBytes) return;
        bytes_ += v.memory->bytes;
        entries_.emplace_back(std::move(key), std::move(v));
        while (entries_.size() > kEntries || bytes_ > kBytes) {
            bytes_ -= entries_.front().second.memory->bytes;
            entries_.erase(entries_.begin());
        }
    }

private:
    static constexpr std::size_t kEntries = 16;
    static constexpr std::size_t kBytes = std::size_t{256} << 20;
    std::mutex mutex_;
    std::vector<std::pair<Key, Value>> entries_;  // oldest first
    std::size_t bytes_ = 0;
};

}  // namespace weft::runtime::det
