// Fancy input iterators for device algorithms: values computed on the fly, no buffer.
//
// Tests use counting_iterator to reduce or scan more than 2^31 elements with
// closed-form answers; users can feed transformed inputs without a pass over memory.
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>

namespace scanlab {

// Yields start, start + 1, start + 2, ... (as T).
template <class T>
class counting_iterator {
 public:
  using value_type = T;
  using difference_type = std::int64_t;
  using reference = T;
  using pointer = void;
  using iterator_category = std::random_access_iterator_tag;

  __host__ __device__ constexpr explicit counting_iterator(T start = T(0)) : value_(start) {}
  __host__ __device__ constexpr T operator*() const { return value_; }
  __host__ __device__ constexpr T operator[](difference_type i) const { return value_ + static_cast<T>(i); }
  __host__ __device__ constexpr counting_iterator operator+(difference_type i) const {
    return counting_iterator(value_ + static_cast<T>(i));
  }
  __host__ __device__ constexpr counting_iterator& operator+=(difference_type i) {
    value_ += static_cast<T>(i);
    return *this;
  }
  __host__ __device__ constexpr counting_iterator& operator++() {
    ++value_;
    return *this;
  }
  __host__ __device__ constexpr difference_type operator-(const counting_iterator& other) const {
    return static_cast<difference_type>(value_ - other.value_);
  }

 private:
  T value_;
};

// Yields f(base[i]).
template <class Iterator, class F>
class transform_iterator {
 public:
  using value_type = std::remove_cvref_t<std::invoke_result_t<F, decltype(std::declval<Iterator>()[0])>>;
  using difference_type = std::int64_t;
  using reference = value_type;
  using pointer = void;
  using iterator_category = std::random_access_iterator_tag;

  __host__ __device__ constexpr transform_iterator(Iterator base, F f) : base_(base), f_(f) {}
  __host__ __device__ constexpr value_type operator*() const { return f_(base_[0]); }
  __host__ __device__ constexpr value_type operator[](difference_type i) const { return f_(base_[i]); }
  __host__ __device__ constexpr transform_iterator operator+(difference_type i) const {
    return transform_iterator(base_ + i, f_);
  }
  __host__ __device__ constexpr transform_iterator& operator+=(difference_type i) {
    base_ += i;
    return *this;
  }

 private:
  Iterator base_;
  F f_;
};

}  // namespace scanlab
