// scanlab-reduce --keys: find_key_runs (key_runs.hpp) for uint32 and uint64 keys.
#include "reduce/key_runs.hpp"

#include <scanlab/algorithms/select.cuh>
#include <scanlab/iterator.cuh>

namespace scanlab::reduce_app {

template <class K>
cudaError_t find_key_runs(void* d_temp, std::size_t& temp_bytes, const K* d_keys, K* d_run_keys,
                          std::int64_t* d_starts, std::int64_t* d_runs, std::int64_t n, cudaStream_t stream) {
  // The first (key, position) pair of each run of equal keys: its key and where it starts.
  return scanlab::unique_by_key(d_temp, temp_bytes, d_keys, scanlab::counting_iterator<std::int64_t>(0), d_run_keys,
                                d_starts, d_runs, n, stream);
}

template cudaError_t find_key_runs<std::uint32_t>(void*, std::size_t&, const std::uint32_t*, std::uint32_t*,
                                                  std::int64_t*, std::int64_t*, std::int64_t, cudaStream_t);
template cudaError_t find_key_runs<std::uint64_t>(void*, std::size_t&, const std::uint64_t*, std::uint64_t*,
                                                  std::int64_t*, std::int64_t*, std::int64_t, cudaStream_t);

}  // namespace scanlab::reduce_app
