// A small cache of device state that launches hand back for the next launch of the same key.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace weft::runtime::det {

// Key: compared with ==. Value: holds its device memory as `memory`, a shared allocation whose
// `bytes` it counts, unless its owner names what it costs (host memory that only holds the pages
// its launches reached). A launch takes its entry out while it runs, so no two launches share one.
template <class Key, class Value>
class StateCache {
public:
    // At most this many bytes kept in all: kept state is memory the user never asked for, so a
    // program with many shapes must not pile it up.
    static constexpr std::size_t kBytes = std::size_t{256} << 20;

    std::optional<Value> take(const Key& key) {
        std::lock_guard lock(mutex_);
        for (auto it = entries_.begin(); it != entries_.end(); ++it) {
            if (!(it->key == key)) continue;
            Value v = std::move(it->value);
            bytes_ -= it->charged;
            entries_.erase(it);
            return v;
        }
        return std::nullopt;
    }
    // Keeps the newest entries, at most kEntries of them and kBytes in all.
    void put(Key key, Value v) {
        const std::size_t bytes = v.memory->bytes;
        put(std::move(key), std::move(v), bytes);
    }
    void put(Key key, Value v, std::size_t charged) {
        std::lock_guard lock(mutex_);
        if (charged > kBytes) return;
        bytes_ += charged;
        entries_.push_back({std::move(key), std::move(v), charged});
        while (entries_.size() > kEntries || bytes_ > kBytes) {
            bytes_ -= entries_.front().charged;
            entries_.erase(entries_.begin());
        }
    }

private:
    static constexpr std::size_t kEntries = 16;
    struct Entry {
        Key key;
        Value value;
        std::size_t charged;
    };
    std::mutex mutex_;
    std::vector<Entry> entries_;  // oldest first
    std::size_t bytes_ = 0;
};

}  // namespace weft::runtime::det
