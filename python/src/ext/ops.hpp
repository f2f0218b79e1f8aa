// The CUDA side of scanlab's Python bindings: one plain C++ function per family of
// operations, dispatching on the element type at run time to scanlab's templates.
// Compiled by nvcc (the .cu files) and called from module.cpp (the host compiler, nanobind),
// so nothing here may name nanobind or a CUDA template.
//
// Every function follows the library's two-phase protocol: with d_temp == nullptr only
// temp_bytes is set; otherwise it enqueues the work on `stream` and returns the first
// failing CUDA status. Nothing throws.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scanlab_py {

// The element types of the bindings (the values are shared with the Python side,
// _arrays.DTYPE_CODE). float16 and bfloat16 are storage types of the linear recurrence only
// (computed in float32): every other operation returns cudaErrorInvalidValue for them, and the
// Python side refuses them first.
enum class dtype : int {
  int32 = 0,
  int64 = 1,
  uint32 = 2,
  uint64 = 3,
  float32 = 4,
  float64 = 5,
  float16 = 6,
  bfloat16 = 7
};
// Reduction and scan operators.
enum class op_code : int { sum = 0, prod = 1, min = 2, max = 3 };

inline constexpr int dtype_count = 8;

constexpr std::size_t dtype_size(dtype t) {
  if (t == dtype::float16 || t == dtype::bfloat16) return 2;
  return (t == dtype::int32 || t == dtype::uint32 || t == dtype::float32) ? 4 : 8;
}

// The type a reduction or scan of `in` with `op` accumulates in and returns, as NumPy's
// np.sum / np.cumsum (and PyTorch's): sums and products of integers in 64 bits (int64 for
// signed, uint64 for unsigned inputs), of floats in their own type; min and max in the
// input's type.
constexpr dtype accumulator(dtype in, op_code op) {
  if (op == op_code::min || op == op_code::max) return in;
  switch (in) {
    case dtype::int32:
    case dtype::int64: return dtype::int64;
    case dtype::uint32:
    case dtype::uint64: return dtype::uint64;
    default: return in;
  }
}

// A host scalar, read as the member matching the accumulator type.
struct scalar {
  std::int64_t i = 0;
  std::uint64_t u = 0;
  double f = 0.0;
};

// *d_out = the reduction of d_in[0, n) with op (NaN-aware min/max: scanlab::minimum,
// maximum); d_out has type accumulator(in, op). n == 0 writes the operator's identity.
cudaError_t reduce(dtype in, op_code op, const void* d_in, void* d_out, std::int64_t n, void* d_temp,
                   std::size_t& temp_bytes, cudaStream_t stream);

// Inclusive or exclusive scan of d_in[0, n) into d_out (type accumulator(in, op)).
// Exclusive: out[0] = init (read as the accumulator type).
cudaError_t scan(dtype in, op_code op, bool exclusive, scalar init, const void* d_in, void* d_out, std::int64_t n,
                 void* d_temp, std::size_t& temp_bytes, cudaStream_t stream);

// Stable radix sort of keys (any dtype). value_bytes: 0 (keys only), 4 or 8 (values moved
// with their keys; d_values_in == nullptr with 8 means argsort: int64 positions).
// end_bit < 0: every bit.
cudaError_t sort(dtype key, const void* d_keys_in, void* d_keys_out, int value_bytes, const void* d_values_in,
                 void* d_values_out, std::int64_t n, bool descending, int begin_bit, int end_bit, void* d_temp,
                 std::size_t& temp_bytes, cudaStream_t stream);

// Where the sequences of a recurrence lie (scanlab/algorithms/linrec.cuh).
enum class recurrence_layout : int {
  row_major = 0,      // [batch, length]: sequence k is a[k * length + t]
  interleaved = 1,    // [length, batch]: sequence k is a[t * batch + k]
  channels_last = 2,  // [batch, length, channels]: sequence b * channels + c
  varlen = 3,         // `batch` sequences concatenated in `length` elements, at d_offsets
};
inline constexpr int recurrence_layout_count = 4;

struct recurrence_shape {
  recurrence_layout layout = recurrence_layout::row_major;
  std::int64_t batch = 1;     // sequences (varlen: offsets' size - 1)
  std::int64_t length = 0;    // steps of each (varlen: all elements, n)
  std::int64_t channels = 1;  // channels_last only
  const std::int64_t* d_offsets = nullptr;  // varlen only: batch + 1 int64
};

// x = the recurrence x[i] = a[i] x[i-1] + b[i] (reverse: x[i] = a[i] x[i+1] + b[i]) of each
// sequence of `shape`, initial states d_x0s (one per sequence) or x0 for all; d_final (one
// per sequence, or nullptr): each sequence's last state (reverse: its first; an empty
// sequence: its initial state). float32 and float64; float16 and bfloat16 stored in 16 bits
// and computed in float32 (x0 rounded to the storage type first).
cudaError_t linear_recurrence(dtype t, const void* d_a, const void* d_b, void* d_x, void* d_final, const void* d_x0s,
                              double x0, const recurrence_shape& shape, bool reverse, void* d_temp,
                              std::size_t& temp_bytes, cudaStream_t stream);

// The backward pass of the forward recurrence (scanlab::linear_recurrence_backward_batched,
// _channels_last, _varlen): any of d_grad_a, d_grad_b, d_grad_x0 may be nullptr. The dtypes
// of the forward.
cudaError_t linear_recurrence_backward(dtype t, const void* d_a, const void* d_x, const void* d_grad_x,
                                       void* d_grad_a, void* d_grad_b, void* d_grad_x0, const void* d_x0s,
                                       const recurrence_shape& shape, void* d_temp, std::size_t& temp_bytes,
                                       cudaStream_t stream);

// ---- compaction (select.cu) ----
// Keeps the items of d_in[0, n) (element type t) for which lo <= x <= hi (lo and hi read as t),
// or, where d_flags is not nullptr (n bytes), those whose flag is nonzero; in order, into d_out.
// Their positions go to d_indices (int64) where it is not nullptr, their number to *d_count
// (an int64 in device memory, written when the work is done).
cudaError_t select(dtype t, const void* d_in, const void* d_flags, scalar lo, scalar hi, void* d_out,
                   std::int64_t* d_indices, std::int64_t* d_count, std::int64_t n, void* d_temp,
                   std::size_t& temp_bytes, cudaStream_t stream);

// The first item of every run of equal consecutive items of d_in[0, n) (== : NaNs are never
// equal, -0.0 equals +0.0) into d_out, their number to *d_count; where d_run_lengths is not
// nullptr, the length of each run (int64) into it.
cudaError_t unique_consecutive(dtype t, const void* d_in, void* d_out, std::int64_t* d_run_lengths,
                               std::int64_t* d_count, std::int64_t n, void* d_temp, std::size_t& temp_bytes,
                               cudaStream_t stream);

// ---- partitions (partition.cu) ----
// Two ways: d_out = [the x with lo <= x <= hi, in input order | the rest, in reverse input
// order (stable: in input order)]; d_counts[0..1] = (the first part's size, the rest's).
cudaError_t partition_two_way(dtype t, const void* d_in, void* d_out, std::int64_t* d_counts, std::int64_t n,
                              scalar lo, scalar hi, bool stable, void* d_temp, std::size_t& temp_bytes,
                              cudaStream_t stream);

// Three ways around `pivot` (scanlab::nan_last_less): d_out = [less | equal | greater (in
// reverse input order; stable: in input order)]; d_counts[0..2] = the three sizes.
cudaError_t partition_three_way(dtype t, const void* d_in, void* d_out, std::int64_t* d_counts, std::int64_t n,
                                scalar pivot, bool stable, void* d_temp, std::size_t& temp_bytes,
                                cudaStream_t stream);

// ---- quicksort (quicksort.cu) ----
// d_out = d_in sorted (NaNs last in both orders). Synchronises `stream` once per level.
cudaError_t quicksort(dtype t, const void* d_in, void* d_out, std::int64_t n, bool descending, void* d_temp,
                      std::size_t& temp_bytes, cudaStream_t stream);

// ---- norms (norms.cu) ----
enum class norm_kind : int { dot = 0, rms = 1, l2 = 2 };
inline constexpr int norm_kind_count = 3;

// *d_out (type acc, float32 or float64, at least as wide as t) = dot(x, y), rms(x) or
// l2_norm(x) of n float32 or float64 items (scanlab/algorithms/norms.cuh); d_y: dot only.
cudaError_t norm(norm_kind kind, dtype t, dtype acc, const void* d_x, const void* d_y, void* d_out, std::int64_t n,
                 void* d_temp, std::size_t& temp_bytes, cudaStream_t stream);

}  // namespace scanlab_py
