// scanlab-sort: the GPU side (sort_gpu_impl.cuh, instantiated per key width in
// sort_gpu_<bits>.cu): scanlab's radix sorts, CUB and thrust on the same device arrays,
// the CPU reference, timings; and the streaming path (issue #24), scanlab's external sort of
// host arrays. Plain C++ interface: main.cpp never sees a CUDA header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"
#include "common/check.hpp"
#include "common/stream_workspace.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace scanlab::sort_app {

enum class mode { keys, pairs, argsort };

struct gpu_request {
  mode what = mode::keys;
  bool descending = false;
  int begin_bit = 0;
  int end_bit = -1;          // -1: all bits
  bool multipass = false;    // the teaching implementation instead of onesweep
  bool want_output = false;  // copy the sorted keys / values / permutation back
  bool validate = false;     // CPU std::stable_sort and CUB
  bool bench = false;        // onesweep, multipass, CUB (and thrust::sort for keys)
  bool production_only = false;  // with bench: onesweep and CUB only
  int repeat = 20;
  std::string dataset;       // names the input in benchmark rows
};

using scanlab::check;  // {against, passed, detail}

struct gpu_result {
  io::host_array keys;                  // sorted keys (with want_output)
  std::optional<io::host_array> values;  // sorted values, or the permutation (int64) for argsort
  std::vector<check> checks;            // with validate
  std::string skipped;                  // with validate: a check not made, and why
  std::vector<bench::result> rows;      // with bench: onesweep, multipass, cub[, thrust]
  double memcpy_gbps = 0;
  double sort_ms = 0;                   // the requested sort, one untimed-harness run (events)
};

// keys: any dtype; values (pairs only): a 4- or 8-byte dtype, same length. Needs a selected
// device. Defined per key type in sort_gpu_<bits>.cu.
template <class Key>
gpu_result run_typed(const io::host_array& keys, const io::host_array* values, const gpu_request& request);

// The device bytes run_typed would allocate for n keys (and values of value_bytes bytes, for
// pairs): the arrays and the temp storage of every sort `request` runs. Needs a selected device.
template <class Key>
std::uint64_t in_memory_device_bytes(std::int64_t n, std::size_t value_bytes, const gpu_request& request);

// The streaming path's host arrays (mapped files, pinned or pageable memory), n items each.
struct stream_arrays {
  const void* keys_in = nullptr;
  void* keys_out = nullptr;
  const void* values_in = nullptr;  // pairs and argsort; may be values_out (sorted in place)
  void* values_out = nullptr;
  std::size_t value_bytes = 0;      // 0 (keys only), 4 or 8 (argsort: the int64 positions)
  bool positions = false;           // the values are the positions 0..n-1 (argsort, --pairs without --values)
  std::int64_t n = 0;
};

// Told how far the external sort has come: pass 1 (run formation) or 2 (the merge), the items
// of that pass done, n, and the runs (1: no merge pass). Called on the calling thread.
using stream_progress = std::function<void(int pass, std::int64_t done, std::int64_t n, std::int64_t runs)>;

// The streaming path: the keys (and values) sorted from the input arrays into the output
// arrays within ws's device budget (scanlab::streaming::sort_keys / sort_pairs: ascending, all
// key bits, stable; the request's order, bit range and algorithm are not used), sort_ms timed
// on the host, and with request.validate the CPU check of the in-memory path (CUB is not run:
// `skipped` says so). Throws cuda_error (a budget the merge does not fit: invalid argument).
template <class Key>
gpu_result stream_typed(stream_workspace& ws, const stream_arrays& arrays, const gpu_request& request,
                        const stream_progress& progress);

}  // namespace scanlab::sort_app
