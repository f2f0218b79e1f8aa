// The device side of apps/common/operators.hpp: scanlab's functor for each --op, and the
// conversion CUB's inputs go through so that its operators see the accumulator type.
#pragma once

#include "common/operators.hpp"

#include <scanlab/functional.cuh>

#include <type_traits>

namespace scanlab::ops {

template <op_id Op>
using functor_t = std::conditional_t<
    Op == op_id::sum, scanlab::plus,
    std::conditional_t<Op == op_id::prod, scanlab::multiplies,
                       std::conditional_t<Op == op_id::min, scanlab::minimum, scanlab::maximum>>>;

template <class Acc>
struct to_accumulator {
  template <class T>
  __host__ __device__ Acc operator()(T x) const {
    return static_cast<Acc>(x);
  }
};

}  // namespace scanlab::ops
