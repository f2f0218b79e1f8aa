// scanlab_py::sort: scanlab's onesweep radix sort (keys, pairs, argsort) for each key type.
// Keys of one size share their kernels (the sort works on the ordered bits), so six key
// types cost four sets of kernels, each for keys only, 4-byte and 8-byte values.
#include "typed.cuh"

#include <scanlab/algorithms/radix_sort.cuh>

namespace scanlab_py {
namespace {

template <class Key>
cudaError_t sort_typed(const void* d_keys_in, void* d_keys_out, int value_bytes, const void* d_values_in,
                       void* d_values_out, std::int64_t n, const scanlab::radix_sort_options& o, void* d_temp,
                       std::size_t& temp_bytes, cudaStream_t stream) {
  const Key* keys_in = static_cast<const Key*>(d_keys_in);
  Key* keys_out = static_cast<Key*>(d_keys_out);
  switch (value_bytes) {
    case 0: return scanlab::radix_sort_keys(d_temp, temp_bytes, keys_in, keys_out, n, o, stream);
    case 4:
      return scanlab::radix_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, static_cast<const std::uint32_t*>(d_values_in),
                                       static_cast<std::uint32_t*>(d_values_out), n, o, stream);
    case 8:
      if (d_values_in == nullptr) {  // argsort: int64 positions, and the sorted keys where asked
        return scanlab::radix_argsort(d_temp, temp_bytes, keys_in, static_cast<std::int64_t*>(d_values_out), n, o,
                                      stream, keys_out);
      }
      return scanlab::radix_sort_pairs(d_temp, temp_bytes, keys_in, keys_out, static_cast<const std::uint64_t*>(d_values_in),
                                       static_cast<std::uint64_t*>(d_values_out), n, o, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t sort(dtype key, const void* d_keys_in, void* d_keys_out, int value_bytes, const void* d_values_in,
                 void* d_values_out, std::int64_t n, bool descending, int begin_bit, int end_bit, void* d_temp,
                 std::size_t& temp_bytes, cudaStream_t stream) {
  scanlab::radix_sort_options o;
  o.descending = descending;
  o.begin_bit = begin_bit;
  o.end_bit = end_bit;
  return visit(key, [&](auto tag) {
    return sort_typed<typename decltype(tag)::type>(d_keys_in, d_keys_out, value_bytes, d_values_in, d_values_out, n,
                                                    o, d_temp, temp_bytes, stream);
  });
}

}  // namespace scanlab_py
