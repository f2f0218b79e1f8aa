// The CUB baseline of scanlab-linrec (and of its tests): cub::DeviceScan::InclusiveScan
// with the affine-composition operator, on the same inputs and with the same reset rule.
//
// CUB's generic scan reads maps and writes maps; to give it the same 12 bytes per float
// element as scanlab, its input is a transform iterator that builds each map from a[i]
// and b[i] on the fly (the first element of each sequence becomes the constant map
// (0, f(x0_k)), exactly as scanlab does, so a batch is one scan), and its output is a
// transform output iterator that writes only the map's b (the solution: every composed
// map contains a reset, so its a is 0). One instantiation per element type: the form
// (a,b), (lambda,u), EMA, the layout and the direction are runtime fields of the functors.
//
// Reverse solves: the same scan over the maps read from each sequence's end (the scan's
// i-th map of a sequence is its element length - 1 - i, through the index functors: CUB's
// scan over reversed iterators). The backward pass (solve_gradient): the reverse scan over
// the maps (a[i+1], dL/dx[i]) with the gradients' epilogue in the output iterator (a
// tabulate output iterator: dL/db = g, dL/da = g x[i-1], dL/dx0 = a[0] g[0]): the same
// 5 arrays moved as scanlab's fused pass.
//
// Element types: the maps are built in the state type (linrec_state_t: float for __half and
// __nv_bfloat16, widened on load) and each result is rounded to the stored type where it is
// written, as scanlab does; complex gradients take scanlab's (PyTorch's) conjugates.
#pragma once

#include <scanlab/algorithms/linrec.cuh>

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scanlab::linrec_cub {

enum class form : int { ab = 0, lambda = 1, ema = 2 };

template <class T>
struct problem {
  form kind = form::ab;
  const T* p = nullptr;  // a, lambda or the signal
  const T* q = nullptr;  // b or u
  T alpha{};
  const T* x0s = nullptr;  // per sequence, or nullptr: x0
  T x0{};
  std::int64_t batch = 1;
  std::int64_t length = 0;
  bool interleaved = false;
  bool reverse = false;  // x[i] = a[i] x[i+1] + b[i] from x[length] = x0 (per sequence)
};

// Sequence position of flat index i (in sequence order: k * length + t). Powers of two
// use a shift, so that CUB does not pay a 64-bit division per element where scanlab's
// kernel does none either.
struct sequence_index {
  std::int64_t length;
  int shift;  // log2(length) when a power of two, else -1
  __host__ __device__ void split(std::int64_t i, std::int64_t& k, std::int64_t& t) const {
    if (shift >= 0) {
      k = i >> shift;
      t = i & (length - 1);
    } else {
      k = i / length;
      t = i - k * length;
    }
  }
};

// The element of step t (scan order) of sequence k.
inline __host__ __device__ std::int64_t element(std::int64_t k, std::int64_t t, std::int64_t batch,
                                                std::int64_t length, bool interleaved, bool reverse) {
  const std::int64_t row = reverse ? length - 1 - t : t;
  return interleaved ? row * batch + k : k * length + row;
}

using linrec_detail::conj_of;
using linrec_detail::narrow;
using linrec_detail::widen;

template <class T>
struct map_at {
  using V = linrec_state_t<T>;
  problem<T> pr;
  sequence_index seq;
  __device__ affine_map<V> operator()(std::int64_t i) const {
    std::int64_t k = 0, t = i;
    if (pr.batch > 1) seq.split(i, k, t);
    const std::int64_t e = pr.reverse ? element(k, t, pr.batch, pr.length, pr.interleaved, true)
                                      : (pr.interleaved ? t * pr.batch + k : i);
    affine_map<V> m;
    switch (pr.kind) {
      case form::ab: m = {widen(pr.p[e]), widen(pr.q[e])}; break;
      case form::lambda: m = {V(1) - widen(pr.p[e]), widen(pr.p[e]) * widen(pr.q[e])}; break;
      default: m = {V(1) - widen(pr.alpha), widen(pr.alpha) * widen(pr.p[e])}; break;
    }
    if (t == 0) {
      m.b = apply(m, widen(pr.x0s != nullptr ? pr.x0s[k] : pr.x0));
      m.a = V(0);
    }
    return m;
  }
};

template <class T>
struct element_of {  // sequence order -> storage order
  std::int64_t batch;
  sequence_index seq;
  bool interleaved;
  bool reverse;
  __host__ __device__ std::int64_t operator()(std::int64_t i) const {
    if (!reverse && (!interleaved || batch == 1)) return i;
    std::int64_t k = 0, t = i;
    if (batch > 1) seq.split(i, k, t);
    return element(k, t, batch, seq.length, interleaved, reverse);
  }
};

template <class T>
struct take_b {
  __host__ __device__ T operator()(const affine_map<linrec_state_t<T>>& m) const { return narrow<T>(m.b); }
};

inline sequence_index make_index(std::int64_t length) {
  int shift = -1;
  if (length > 0 && (length & (length - 1)) == 0) {
    shift = 0;
    while ((std::int64_t{1} << shift) < length) ++shift;
  }
  return {length > 0 ? length : 1, shift};
}

// x (same layout as the inputs) by CUB's generic scan; two-phase temp storage as CUB.
template <class T>
[[nodiscard]] cudaError_t solve(void* d_temp, std::size_t& temp_bytes, const problem<T>& pr, T* d_x,
                                cudaStream_t stream) {
  const std::int64_t n = pr.batch * pr.length;
  const sequence_index seq = make_index(pr.length);
  const auto maps = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), map_at<T>{pr, seq});
  const auto positions =
      thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                      element_of<T>{pr.batch, seq, pr.interleaved, pr.reverse});
  const auto out = thrust::make_transform_output_iterator(thrust::make_permutation_iterator(d_x, positions), take_b<T>{});
  return cub::DeviceScan::InclusiveScan(d_temp, temp_bytes, maps, out, scanlab::affine_then{},
                                        static_cast<long long>(n), stream);
}

// ---- the backward pass of a forward solve ----

template <class T>
struct gradient_problem {
  const T* a = nullptr;
  const T* x = nullptr;       // the forward solution
  const T* grad_x = nullptr;  // dL/dx
  T* grad_a = nullptr;
  T* grad_b = nullptr;
  T* grad_x0 = nullptr;       // per sequence, or nullptr
  const T* x0s = nullptr;     // the forward's initial states, or nullptr: x0
  T x0{};
  std::int64_t batch = 1;
  std::int64_t length = 0;
  bool interleaved = false;
};

// Scan step t of sequence k takes element row = length - 1 - t: the map (a[row + 1],
// dL/dx[row]), the first (row = length - 1) the constant (0, dL/dx).
template <class T>
struct gradient_map_at {
  gradient_problem<T> pr;
  sequence_index seq;
  using V = linrec_state_t<T>;
  __device__ affine_map<V> operator()(std::int64_t i) const {
    std::int64_t k = 0, t = i;
    if (pr.batch > 1) seq.split(i, k, t);
    const std::int64_t e = element(k, t, pr.batch, pr.length, pr.interleaved, true);
    const V a_next = t == 0 ? V(0) : widen(pr.a[element(k, t - 1, pr.batch, pr.length, pr.interleaved, true)]);
    return {conj_of(a_next), widen(pr.grad_x[e])};
  }
};

// The epilogue: g = the scanned map's b.
template <class T>
struct gradient_write {
  gradient_problem<T> pr;
  sequence_index seq;
  using V = linrec_state_t<T>;
  __device__ void operator()(std::ptrdiff_t i, const affine_map<V>& m) const {
    std::int64_t k = 0, t = static_cast<std::int64_t>(i);
    if (pr.batch > 1) seq.split(static_cast<std::int64_t>(i), k, t);
    const std::int64_t e = element(k, t, pr.batch, pr.length, pr.interleaved, true);
    const V g = m.b;
    pr.grad_b[e] = narrow<T>(g);
    const bool first = t == pr.length - 1;  // the sequence's first element
    const V previous = widen(first ? (pr.x0s != nullptr ? pr.x0s[k] : pr.x0)
                                   : pr.x[element(k, t + 1, pr.batch, pr.length, pr.interleaved, true)]);
    pr.grad_a[e] = narrow<T>(g * conj_of(previous));
    if (first && pr.grad_x0 != nullptr) {
      const V a0 = widen(pr.a[e]);
      pr.grad_x0[k] = narrow<T>(a0 == V(0) ? V(0) : conj_of(a0) * g);
    }
  }
};

// dL/da, dL/db (and dL/dx0) by CUB's generic scan; two-phase temp storage as CUB.
template <class T>
[[nodiscard]] cudaError_t solve_gradient(void* d_temp, std::size_t& temp_bytes, const gradient_problem<T>& pr,
                                         cudaStream_t stream) {
  const std::int64_t n = pr.batch * pr.length;
  const sequence_index seq = make_index(pr.length);
  const auto maps =
      thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), gradient_map_at<T>{pr, seq});
  const auto out = thrust::make_tabulate_output_iterator(gradient_write<T>{pr, seq});
  if (n == 0 && d_temp != nullptr && pr.grad_x0 != nullptr && pr.batch > 0) {
    return cudaMemsetAsync(pr.grad_x0, 0, static_cast<std::size_t>(pr.batch) * sizeof(T), stream);
  }
  return cub::DeviceScan::InclusiveScan(d_temp, temp_bytes, maps, out, scanlab::affine_then{},
                                        static_cast<long long>(n), stream);
}

}  // namespace scanlab::linrec_cub
