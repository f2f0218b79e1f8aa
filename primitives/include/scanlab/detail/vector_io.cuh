// 16-byte vector loads over plain device arrays: where the aligned body of a range
// starts and ends, and how to load one 16-byte vector of T.
//
// A range [p, p + n) of T splits into
//   head    : 0 .. (16/sizeof(T) - 1) scalars before the first 16-byte boundary,
//   body    : whole 16-byte vectors (one LDG.128 each),
//   tail    : 0 .. (16/sizeof(T) - 1) scalars after the last whole vector.
// The split needs p to be aligned to sizeof(T) (always true for arithmetic T; a
// struct with alignof(T) < sizeof(T) may not be): callers check element_aligned(p)
// and take a scalar path otherwise.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <iterator>
#include <type_traits>

namespace scanlab::detail {

inline constexpr int vector_bytes = 16;

// T can travel in 16-byte vectors: trivially copyable, and a whole number of T fit in 16 bytes.
template <class T>
inline constexpr bool is_vector_loadable_v = std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T> &&
                                             sizeof(T) <= vector_bytes && vector_bytes % sizeof(T) == 0;

// Elements of T per 16-byte vector (1 for types that are not vector-loadable).
template <class T>
inline constexpr int vector_items = is_vector_loadable_v<T> ? static_cast<int>(vector_bytes / sizeof(T)) : 1;

template <class T>
struct alignas(vector_bytes) vector16 {
  T items[vector_items<T>];
};

// The element type an input iterator yields.
template <class InputIt>
using input_value_t = std::remove_cvref_t<decltype(std::declval<InputIt>()[0])>;

// True for raw pointers to vector-loadable element types: those get the vectorised path.
template <class InputIt>
inline constexpr bool is_vectorizable_input_v =
    std::is_pointer_v<InputIt> && is_vector_loadable_v<std::remove_cv_t<std::remove_pointer_t<InputIt>>>;

template <class T>
__host__ __device__ constexpr bool element_aligned(const T* p) {
  return reinterpret_cast<std::uintptr_t>(p) % sizeof(T) == 0;
}

// How [p, p + n) splits into head scalars, whole aligned vectors and tail scalars.
struct vector_split {
  std::int64_t head = 0;     // scalars before the first 16-byte boundary
  std::int64_t vectors = 0;  // whole 16-byte vectors, starting at p + head
  std::int64_t tail = 0;     // scalars after the last whole vector
};

// Requires element_aligned(p).
template <class T>
__host__ __device__ constexpr vector_split split_for_vectors(const T* p, std::int64_t n) {
  const auto misalignment = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) % vector_bytes);
  std::int64_t head = misalignment == 0 ? 0 : (vector_bytes - misalignment) / static_cast<std::int64_t>(sizeof(T));
  if (head > n) head = n;
  const std::int64_t vectors = (n - head) / vector_items<T>;
  return {head, vectors, n - head - vectors * vector_items<T>};
}

// Loads the 16-byte vector at `aligned` (16-byte aligned) through the read-only
// data path. The input must not be written while the kernel runs.
template <class T>
__device__ __forceinline__ vector16<T> load_vector(const T* aligned) {
  static_assert(is_vector_loadable_v<T>, "load_vector needs a vector-loadable type");
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(aligned));
  vector16<T> v;
  std::memcpy(&v, &raw, sizeof(raw));
  return v;
}

}  // namespace scanlab::detail
