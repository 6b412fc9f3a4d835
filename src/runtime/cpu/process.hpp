// Running a program as a child process, with an argument vector (never a shell command line).
#pragma once

#include <string>
#include <vector>

namespace weft::runtime::cpu {

struct ProcessResult {
    int spawn_error = 0;  // errno when the program could not be started, else 0
    int exit_code = -1;   // when it exited
    int signal = 0;       // when a signal killed it
    std::string output;   // stdout and stderr, interleaved
    bool succeeded() const { return spawn_error == 0 && signal == 0 && exit_code == 0; }
};

// Runs the program at the absolute path `args[0]` with arguments `args`, stdin from /dev/null,
// and collects what it writes through a pipe (no log file anywhere).
ProcessResult run_process(const std::vector<std::string>& args);

}  // namespace weft::runtime::cpu
