// The engine over MPI_COMM_WORLD (a weft::Error in a build without MPI).
#pragma once

#include <memory>

#include "distributed/engine.hpp"

namespace weft::distributed {

std::shared_ptr<Engine> mpi_world_engine();

}  // namespace weft::distributed
