// The CUB baseline of scanlab-linrec (and of its tests): cub::DeviceScan::InclusiveScan
// with the affine-composition operator, on the same inputs and with the same reset rule.
//
// CUB's generic scan reads maps and writes maps; to give it the same 12 bytes per float
// element as scanlab, its input is a transform iterator that builds each map from a[i]
// and b[i] on the fly (the first element of each sequence becomes the constant map
// (0, f(x0_k)), exactly as scanlab does, so a batch is one scan), and its output is a
// transform output iterator that writes only the map's b (the solution: every composed
// map contains a reset, so its a is 0). One instantiation per element type: the form
// (a,b), (lambda,u), EMA and the layout are runtime fields of the functors.
#pragma once

#include <scanlab/algorithms/linrec.cuh>

#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/permutation_iterator.h>
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
  T alpha = 0;
  const T* x0s = nullptr;  // per sequence, or nullptr: x0
  T x0 = 0;
  std::int64_t batch = 1;
  std::int64_t length = 0;
  bool interleaved = false;
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

template <class T>
struct map_at {
  problem<T> pr;
  sequence_index seq;
  __device__ affine_map<T> operator()(std::int64_t i) const {
    std::int64_t k = 0, t = i;
    if (pr.batch > 1) seq.split(i, k, t);
    const std::int64_t e = pr.interleaved ? t * pr.batch + k : i;
    affine_map<T> m;
    switch (pr.kind) {
      case form::ab: m = {pr.p[e], pr.q[e]}; break;
      case form::lambda: m = {T(1) - pr.p[e], pr.p[e] * pr.q[e]}; break;
      default: m = {T(1) - pr.alpha, pr.alpha * pr.p[e]}; break;
    }
    if (t == 0) {
      m.b = apply(m, pr.x0s != nullptr ? pr.x0s[k] : pr.x0);
      m.a = T(0);
    }
    return m;
  }
};

template <class T>
struct element_of {  // sequence order -> storage order
  std::int64_t batch;
  sequence_index seq;
  bool interleaved;
  __host__ __device__ std::int64_t operator()(std::int64_t i) const {
    if (!interleaved || batch == 1) return i;
    std::int64_t k, t;
    seq.split(i, k, t);
    return t * batch + k;
  }
};

template <class T>
struct take_b {
  __host__ __device__ T operator()(const affine_map<T>& m) const { return m.b; }
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
      thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), element_of<T>{pr.batch, seq, pr.interleaved});
  const auto out = thrust::make_transform_output_iterator(thrust::make_permutation_iterator(d_x, positions), take_b<T>{});
  return cub::DeviceScan::InclusiveScan(d_temp, temp_bytes, maps, out, scanlab::affine_then{},
                                        static_cast<long long>(n), stream);
}

}  // namespace scanlab::linrec_cub
