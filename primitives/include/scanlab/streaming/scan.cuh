// scanlab/streaming/scan.cuh: prefix scans of host arrays of any length (out of core),
// out of place (host in -> host out) or in place on the host (h_out == h_in).
//
//   SCANLAB_CHECK(scanlab::streaming::inclusive_sum(std::size_t{1} << 30, h_x, h_x, n));   // in place
//   scanlab::streaming::workspace ws(std::size_t{1} << 30);
//   SCANLAB_CHECK(scanlab::streaming::exclusive_scan(ws, h_x, h_y, n, 0.0, scanlab::plus{}));
//
// The carry. A slot holds its chunk one item in: buffer[1..m] = x[begin, begin + m). Before
// the chunk's scan a one-thread kernel puts the running value in buffer[0] (the previous
// chunk's carry from a device word, or `init` for chunk 0); the in-memory inclusive scan of
// buffer[0..m] (in place, aligned: 16-byte vector accesses) then gives
//   buffer[j] = carry op x[begin] op ... op x[begin + j - 1],
// so buffer[1..m] is the inclusive scan and buffer[0..m-1] the exclusive one, and a second
// one-thread kernel stores buffer[m] as the next chunk's carry. No host round trip and one
// pass over each chunk; the cost is two one-thread launches per chunk on the chain
// (microseconds against a chunk's milliseconds of PCIe). inclusive_scan without init
// scans chunk 0's buffer[1..m] unseeded (unaligned: element-wise accesses, one chunk).
//
// Guarantees: op associative, applied as op(earlier, later) (not necessarily commutative,
// no identity needed), as scanlab::inclusive_scan. One type T for input, output and
// accumulator. Deterministic for a given input, budget and options; float results differ
// from the in-memory scan by rounding (the chunk boundaries add a grouping), within
// n * eps * sum|x|. In place: h_out == h_in is allowed; other overlaps are not. Host
// arrays pinned (cudaMallocHost, cudaHostRegister: copied directly) or pageable (through
// pinned staging buffers, by the CPU). Host-synchronous: the output is complete when the
// call returns (on failure it is unspecified). cudaErrorInvalidValue for n < 0, null arrays
// with n > 0, or a budget that does not hold one item per chunk.
#pragma once

#include <scanlab/functional.cuh>
#include <scanlab/scan.cuh>
#include <scanlab/streaming/pipeline.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scanlab::streaming {

namespace detail {

enum class scan_kind { inclusive, inclusive_init, exclusive };

template <class T, class Op>
struct scan_stage {
  static constexpr std::size_t item_bytes = sizeof(T);
  static constexpr std::size_t word_bytes = sizeof(T);  // the carry
  const T* h_in;
  T* h_out;
  scan_kind kind;
  T init;
  Op op;

  [[nodiscard]] std::size_t slot_bytes(std::int64_t items) const {
    return static_cast<std::size_t>(items + 1) * sizeof(T);
  }
  [[nodiscard]] cudaError_t temp_bytes(std::int64_t items, std::size_t& bytes) const {
    return ::scanlab::inclusive_scan(nullptr, bytes, static_cast<T*>(nullptr), static_cast<T*>(nullptr), items + 1, op);
  }
  [[nodiscard]] transfer input(const pipeline& p, const chunk& c) const {
    return {const_cast<T*>(h_in + c.begin), reinterpret_cast<T*>(p.slot(c.slot)) + 1,
            static_cast<std::size_t>(c.items) * sizeof(T)};
  }
  [[nodiscard]] cudaError_t compute(const pipeline& p, const chunk& c, cudaStream_t stream) const {
    T* buffer = reinterpret_cast<T*>(p.slot(c.slot));
    T* carry = reinterpret_cast<T*>(p.words());
    const bool seeded = c.index > 0 || kind != scan_kind::inclusive;
    if (seeded) {
      SCANLAB_TRY(::scanlab::detail::launch(streaming_carry_kernel<T>, 1, 1, 0, stream, buffer,
                                            c.index > 0 ? static_cast<const T*>(carry) : nullptr, init));
    }
    T* first = seeded ? buffer : buffer + 1;
    std::size_t bytes = p.temp_bytes();
    SCANLAB_TRY(::scanlab::inclusive_scan(p.temp(), bytes, first, first, c.items + (seeded ? 1 : 0), op, stream));
    return ::scanlab::detail::launch(streaming_carry_kernel<T>, 1, 1, 0, stream, carry,
                                     static_cast<const T*>(buffer + c.items), T{});
  }
  [[nodiscard]] cudaError_t output(const pipeline& p, const chunk& c, transfer_list& out) const {
    T* buffer = reinterpret_cast<T*>(p.slot(c.slot));
    out = transfer{h_out + c.begin, kind == scan_kind::exclusive ? buffer : buffer + 1,
           static_cast<std::size_t>(c.items) * sizeof(T)};
    return cudaSuccess;
  }
  [[nodiscard]] cudaError_t finish(const pipeline&, cudaStream_t) const { return cudaSuccess; }
};

template <class T, class Op>
[[nodiscard]] cudaError_t stream_scan(workspace& ws, const T* h_in, T* h_out, std::int64_t n, scan_kind kind, T init,
                                      Op op) {
  if (n > 0 && (h_in == nullptr || h_out == nullptr)) return cudaErrorInvalidValue;
  scan_stage<T, Op> stage{h_in, h_out, kind, init, op};
  return stream_chunks(ws, stage, n, h_in, h_out);
}

}  // namespace detail

// h_out[i] = h_in[0] op ... op h_in[i].
template <class T, class Op>
[[nodiscard]] cudaError_t inclusive_scan(workspace& ws, const T* h_in, T* h_out, std::int64_t n, Op op) {
  return detail::stream_scan(ws, h_in, h_out, n, detail::scan_kind::inclusive, T{}, op);
}

// h_out[i] = init op h_in[0] op ... op h_in[i].
template <class T, class Op>
[[nodiscard]] cudaError_t inclusive_scan_init(workspace& ws, const T* h_in, T* h_out, std::int64_t n, T init, Op op) {
  return detail::stream_scan(ws, h_in, h_out, n, detail::scan_kind::inclusive_init, init, op);
}

// h_out[0] = init, h_out[i] = init op h_in[0] op ... op h_in[i - 1].
template <class T, class Op>
[[nodiscard]] cudaError_t exclusive_scan(workspace& ws, const T* h_in, T* h_out, std::int64_t n, T init, Op op) {
  return detail::stream_scan(ws, h_in, h_out, n, detail::scan_kind::exclusive, init, op);
}

// Prefix sums.
template <class T>
[[nodiscard]] cudaError_t inclusive_sum(workspace& ws, const T* h_in, T* h_out, std::int64_t n) {
  return inclusive_scan(ws, h_in, h_out, n, plus{});
}
template <class T>
[[nodiscard]] cudaError_t exclusive_sum(workspace& ws, const T* h_in, T* h_out, std::int64_t n) {
  return exclusive_scan(ws, h_in, h_out, n, T{}, plus{});
}

// The same with a workspace of device_bytes made for the call (default options).
template <class T, class Op>
[[nodiscard]] cudaError_t inclusive_scan(std::size_t device_bytes, const T* h_in, T* h_out, std::int64_t n, Op op) {
  workspace ws(device_bytes);
  return inclusive_scan(ws, h_in, h_out, n, op);
}
template <class T, class Op>
[[nodiscard]] cudaError_t inclusive_scan_init(std::size_t device_bytes, const T* h_in, T* h_out, std::int64_t n, T init,
                                              Op op) {
  workspace ws(device_bytes);
  return inclusive_scan_init(ws, h_in, h_out, n, init, op);
}
template <class T, class Op>
[[nodiscard]] cudaError_t exclusive_scan(std::size_t device_bytes, const T* h_in, T* h_out, std::int64_t n, T init,
                                         Op op) {
  workspace ws(device_bytes);
  return exclusive_scan(ws, h_in, h_out, n, init, op);
}
template <class T>
[[nodiscard]] cudaError_t inclusive_sum(std::size_t device_bytes, const T* h_in, T* h_out, std::int64_t n) {
  workspace ws(device_bytes);
  return inclusive_sum(ws, h_in, h_out, n);
}
template <class T>
[[nodiscard]] cudaError_t exclusive_sum(std::size_t device_bytes, const T* h_in, T* h_out, std::int64_t n) {
  workspace ws(device_bytes);
  return exclusive_sum(ws, h_in, h_out, n);
}

}  // namespace scanlab::streaming
