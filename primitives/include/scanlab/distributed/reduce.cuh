// scanlab/distributed/reduce.cuh: reduce and scan of an array sharded across ranks.
//
// Rank r holds items [offset_r, offset_r + n_r) of the global array (pieces in rank
// order, any sizes, empty ones too). Every rank calls the same function with its piece.
//
// reduce: every rank's *d_out = op(init, x_0, ..., x_{N-1}) over the N items of all
// ranks. Each rank reduces its piece (scanlab::reduce, one pass); the partials (one item
// per rank) are all-gathered and folded in rank order by every rank, so all ranks hold the
// same bits, run after run (the single-GPU determinism carried over). Nothing waits on
// the host: the call is asynchronous on `stream`.
//
// Scans: each rank needs the total of the ranks before it. The ranks reduce their pieces
// first (the last rank skips it: nobody needs its total), all-gather the partials, fold
// those of the ranks before them onto init, and then run the single-GPU scan seeded with
// that prefix (inclusive_scan_init, exclusive_scan). In order, so non-commutative
// operators work; deterministic like the single-GPU scan. Memory traffic: a rank other
// than the last reads its piece twice and writes it once (1.5x the one-GPU scan), against
// 2x for a local scan followed by a fix-up pass. The prefix comes to the host (the
// single-GPU scan takes its seed by value): the call returns once it is known.
//
// Operators: callable on the device as op(T, T); reduce also needs them associative and
// commutative (within a rank the single-GPU reduce reorders), the scans only associative.
// No identity element is needed: a rank with no items contributes nothing. Each rank's
// total: scanlab::reduce seeded with the identity for scanlab's operators (plus,
// multiplies, minimum, maximum); for other operators, in order for the scans (the
// single-GPU scan keeping only its last item) and with a "no items" state for reduce.
#pragma once

#include <scanlab/distributed/communicator.hpp>
#include <scanlab/distributed/detail/exchange.cuh>
#include <scanlab/functional.cuh>
#include <scanlab/iterator.cuh>
#include <scanlab/reduce.cuh>
#include <scanlab/scan.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

namespace scanlab::distributed {

namespace detail {

template <class T>
struct make_partial {
  __host__ __device__ partial<T> operator()(const T& v) const { return {v, 1}; }
};

// op lifted to partials: a missing side is no operand.
template <class T, class Op>
struct partial_op {
  Op op;
  __host__ __device__ partial<T> operator()(const partial<T>& a, const partial<T>& b) const {
    if (!a.has) return b;
    if (!b.has) return a;
    return {static_cast<T>(op(a.value, b.value)), 1};
  }
};

template <class T>
struct as_partial {
  template <class U>
  __host__ __device__ partial<T> operator()(const U& x) const {
    return {static_cast<T>(x), 1};
  }
};

template <class T>
struct as_value {
  template <class U>
  __host__ __device__ T operator()(const U& x) const {
    return static_cast<T>(x);
  }
};

template <class Op, class T>
concept has_identity = requires { scanlab::identity<Op, T>::value(); };

// The last item of a scan as a partial; the scan's other results are dropped, so a scan
// through it is an in-order reduction that writes nothing but its total.
template <class T>
struct last_item_output {
  using value_type = void;
  using difference_type = std::int64_t;
  using reference = void;
  using pointer = void;
  using iterator_category = std::output_iterator_tag;

  struct slot {
    partial<T>* out;
    bool last;
    template <class V>
    __device__ void operator=(const V& v) const {
      if (last) *out = partial<T>{static_cast<T>(v), 1};
    }
  };

  partial<T>* out;
  std::int64_t last;
  __device__ slot operator[](std::int64_t i) const { return {out, i == last}; }
};

// *d_partial = this rank's items reduced in T, or "none" for an empty piece. `ordered`: the
// items combined in their order (the scans' operators need only be associative).
template <bool Ordered, class InputIt, class T, class Op>
[[nodiscard]] status local_partial(InputIt d_in, std::int64_t n, Op op, partial<T>* d_partial, scratch& mem,
                                   cudaStream_t stream) {
  std::size_t bytes = 0;
  std::byte* d_temp = nullptr;
  const auto twice = [&](auto&& call) -> status {
    SCANLAB_DIST_TRY(call(nullptr));
    SCANLAB_DIST_TRY(mem.allocate(d_temp, static_cast<std::int64_t>(bytes)));
    return to_status(call(d_temp));
  };
  if constexpr (has_identity<Op, T>) {
    // scanlab's own operators (commutative), seeded with their identity: the single-GPU
    // reduce at full speed; an empty piece gives the identity, which is harmless.
    const auto out = scanlab::with_epilogue(d_partial, make_partial<T>{});
    const T init = scanlab::identity<Op, T>::value();
    return twice([&](void* t) { return scanlab::reduce(t, bytes, d_in, out, n, init, op, stream); });
  } else if constexpr (Ordered) {
    // Any associative operator: the single-GPU scan, in order, keeping only its last item.
    if (n == 0) return to_status(cudaMemsetAsync(d_partial, 0, sizeof(partial<T>), stream));
    const scanlab::transform_iterator in(d_in, as_value<T>{});
    const last_item_output<T> out{d_partial, n - 1};
    return twice([&](void* t) { return scanlab::inclusive_scan(t, bytes, in, out, n, op, stream); });
  } else {
    // Commutative but without a known identity: partials with a "none" state.
    const partial<T> none{T{}, 0};
    return twice([&](void* t) {
      return scanlab::transform_reduce(t, bytes, d_in, d_partial, n, none, partial_op<T, Op>{op}, as_partial<T>{}, stream);
    });
  }
}

// Every rank's partial gathered; *d_folded = op(start, partials of ranks [0, upto)).
template <bool Ordered, class InputIt, class T, class Op>
[[nodiscard]] status gather_and_fold(const communicator& comm, InputIt d_in, std::int64_t n, bool skip_local,
                                     int upto, partial<T> start, Op op, partial<T>*& d_folded, scratch& mem,
                                     cudaStream_t stream) {
  partial<T>* d_mine = nullptr;
  partial<T>* d_all = nullptr;
  SCANLAB_DIST_TRY(mem.allocate(d_mine, 1));
  SCANLAB_DIST_TRY(mem.allocate(d_all, comm.size()));
  SCANLAB_DIST_TRY(mem.allocate(d_folded, 1));
  if (skip_local) {
    SCANLAB_DIST_TRY(cudaMemsetAsync(d_mine, 0, sizeof(partial<T>), stream));
  } else {
    SCANLAB_DIST_TRY(local_partial<Ordered>(d_in, n, op, d_mine, mem, stream));
  }
  SCANLAB_DIST_TRY(all_gather(comm, d_mine, d_all, 1, stream));
  return to_status(launch_fold(d_all, upto, start, op, d_folded, stream));
}

enum class scan_kind { inclusive, inclusive_init, exclusive };

template <class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] status scan(const communicator& comm, InputIt d_in, OutputIt d_out, std::int64_t n, scan_kind kind,
                          T init, Op op, cudaStream_t stream) {
  if (n < 0) return to_status(cudaErrorInvalidValue);
  const device_scope scope(comm.device());
  SCANLAB_DIST_TRY(scope.status());
  scratch mem(comm, stream);
  const bool seeded = kind != scan_kind::inclusive;
  partial<T> prefix{init, seeded ? 1 : 0};
  if (comm.size() > 1) {
    partial<T>* d_prefix = nullptr;
    const bool last = comm.rank() == comm.size() - 1;
    SCANLAB_DIST_TRY(gather_and_fold<true>(comm, d_in, n, last, comm.rank(), prefix, op, d_prefix, mem, stream));
    SCANLAB_DIST_TRY(cudaMemcpyAsync(&prefix, d_prefix, sizeof(prefix), cudaMemcpyDeviceToHost, stream));
    SCANLAB_DIST_TRY(cudaStreamSynchronize(stream));
  }
  // The single-GPU scan of this piece, seeded with the prefix of the ranks before it.
  const auto local = [&](void* d_temp, std::size_t& bytes) -> cudaError_t {
    if (kind == scan_kind::exclusive) return scanlab::exclusive_scan(d_temp, bytes, d_in, d_out, n, prefix.value, op, stream);
    if (prefix.has) return scanlab::inclusive_scan_init(d_temp, bytes, d_in, d_out, n, prefix.value, op, stream);
    if constexpr (std::is_convertible_v<T, typename std::iterator_traits<InputIt>::value_type>) {
      return scanlab::inclusive_scan(d_temp, bytes, d_in, d_out, n, op, stream);
    } else {
      return cudaErrorInvalidValue;  // unreachable: an unseeded scan accumulates in the input's type
    }
  };
  std::size_t bytes = 0;
  SCANLAB_DIST_TRY(local(nullptr, bytes));
  std::byte* d_temp = nullptr;
  SCANLAB_DIST_TRY(mem.allocate(d_temp, static_cast<std::int64_t>(bytes)));
  return to_status(local(d_temp, bytes));
}

}  // namespace detail

// *d_out = op(init, every item of every rank in rank order), on every rank (T: trivially
// copyable; d_out a device pointer). Asynchronous on `stream`.
template <class InputIt, class T, class Op>
[[nodiscard]] status reduce(const communicator& comm, InputIt d_in, std::int64_t n, T* d_out, T init, Op op,
                            cudaStream_t stream = nullptr) {
  if (n < 0 || d_out == nullptr) return to_status(cudaErrorInvalidValue);
  const device_scope scope(comm.device());
  SCANLAB_DIST_TRY(scope.status());
  detail::scratch mem(comm, stream);
  detail::partial<T>* d_total = nullptr;
  SCANLAB_DIST_TRY(detail::gather_and_fold<false>(comm, d_in, n, false, comm.size(), detail::partial<T>{init, 1}, op,
                                           d_total, mem, stream));
  return to_status(cudaMemcpyAsync(d_out, &d_total->value, sizeof(T), cudaMemcpyDeviceToDevice, stream));
}

// d_out[i] = x_0 op ... op x_(offset + i) for this rank's items (offset: the items of the
// ranks before it), accumulated in the input's value type.
template <class InputIt, class OutputIt, class Op>
[[nodiscard]] status inclusive_scan(const communicator& comm, InputIt d_in, OutputIt d_out, std::int64_t n, Op op,
                                    cudaStream_t stream = nullptr) {
  using T = std::remove_cv_t<typename std::iterator_traits<InputIt>::value_type>;
  return detail::scan(comm, d_in, d_out, n, detail::scan_kind::inclusive, T{}, op, stream);
}

// d_out[i] = init op x_0 op ... op x_(offset + i), accumulated in T.
template <class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] status inclusive_scan_init(const communicator& comm, InputIt d_in, OutputIt d_out, std::int64_t n,
                                         T init, Op op, cudaStream_t stream = nullptr) {
  return detail::scan(comm, d_in, d_out, n, detail::scan_kind::inclusive_init, init, op, stream);
}

// d_out[i] = init op x_0 op ... op x_(offset + i - 1), accumulated in T.
template <class InputIt, class OutputIt, class T, class Op>
[[nodiscard]] status exclusive_scan(const communicator& comm, InputIt d_in, OutputIt d_out, std::int64_t n, T init,
                                    Op op, cudaStream_t stream = nullptr) {
  return detail::scan(comm, d_in, d_out, n, detail::scan_kind::exclusive, init, op, stream);
}

}  // namespace scanlab::distributed
