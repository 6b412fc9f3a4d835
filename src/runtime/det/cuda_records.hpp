// The records strategy's GPU kernels (count, group and reduce a target's records), as source for
// the deterministic library module.
#pragma once

namespace weft::runtime::det {

// Device source defining the records kernels (det_publish_records, det_count_records,
// det_group_records, det_sum_records_*); it follows the device prelude in the library module's
// source.
const char* records_kernels();

}  // namespace weft::runtime::det
