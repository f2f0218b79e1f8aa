// scanlab-reduce --keys: the runs of equal consecutive keys, found on the GPU by scanlab's
// unique_by_key over (key, position) pairs. The keys are uint32 or uint64 bit patterns
// (io::load_keys), whatever the data's dtype, so this is built once per key type
// (key_runs.cu), not once per dtype and operator.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scanlab::reduce_app {

// d_run_keys[r] gets the key of run r and d_starts[r] the position where it begins
// (d_starts[0] = 0), for r < runs; *d_runs gets runs (0 for n = 0), in device memory. Each
// output holds n values at most. Two-phase temp storage (d_temp == nullptr: the size only),
// everything enqueued on `stream`, as scanlab::unique_by_key.
template <class K>
[[nodiscard]] cudaError_t find_key_runs(void* d_temp, std::size_t& temp_bytes, const K* d_keys, K* d_run_keys,
                                        std::int64_t* d_starts, std::int64_t* d_runs, std::int64_t n,
                                        cudaStream_t stream);

extern template cudaError_t find_key_runs<std::uint32_t>(void*, std::size_t&, const std::uint32_t*, std::uint32_t*,
                                                         std::int64_t*, std::int64_t*, std::int64_t, cudaStream_t);
extern template cudaError_t find_key_runs<std::uint64_t>(void*, std::size_t&, const std::uint64_t*, std::uint64_t*,
                                                         std::int64_t*, std::int64_t*, std::int64_t, cudaStream_t);

}  // namespace scanlab::reduce_app
