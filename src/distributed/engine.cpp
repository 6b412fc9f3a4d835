// What every engine shares: the collective time-out and its message.
#include "distributed/engine.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "weft/error.hpp"

namespace weft::distributed {

double collective_timeout() {
    const char* text = std::getenv("WEFT_DIST_TIMEOUT");
    if (!text || !*text) return 300.0;
    char* end = nullptr;
    errno = 0;
    const double seconds = std::strtod(text, &end);
    if (errno != 0 || *end != '\0' || !std::isfinite(seconds) || seconds <= 0)
        throw Error(std::string("WEFT_DIST_TIMEOUT must be a positive number of seconds, not '") + text +
                    "'");
    return seconds;
}

std::string timeout_message(const Engine& engine, const char* what) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", collective_timeout());
    return "weft: rank " + std::to_string(engine.rank()) + " of " + std::to_string(engine.size()) + " (" +
           engine.name() + ") waited more than WEFT_DIST_TIMEOUT = " + seconds + " s in " + what +
           ": another rank failed or called a different collective. Aborting every rank so that none waits "
           "forever";
}

}  // namespace weft::distributed
