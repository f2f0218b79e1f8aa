// scanlab-dist: the distributed algorithms (scanlab/distributed.cuh) across the GPUs of this
// machine, one rank (and host thread) per GPU, behind a plain C++ interface so that main.cpp
// (CLI, JSON) never sees a CUDA or NCCL header.
#pragma once

#include "common/array.hpp"
#include "common/bench.hpp"
#include "common/check.hpp"
#include "common/operators.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scanlab::dist_app {

enum class job { reduce, scan, compact, sort };
std::string_view name(job j);

// The dtypes scanlab-dist takes (one translation unit each, dist_gpu_<type>.cu).
bool supported(io::dtype t);
inline constexpr const char* supported_list = "int32, uint32, int64, uint64, float32, float64";

struct request {
  job what = job::reduce;
  ops::op_id op = ops::op_id::sum;  // reduce and scan
  bool exclusive = false;           // scan
  double greater_than = 0;          // compact: keeps the items > this
  int gpus = 1;                     // ranks: GPUs 0 .. gpus - 1
  bool validate = false;            // against the single-GPU result on GPU 0
  bool bench = false;               // weak scaling, 1 .. gpus ranks, against the single-GPU primitive
  int repeat = 10;
  std::string dataset;
};

struct report {
  io::host_array output;               // the ranks' results, gathered in rank order
  std::vector<std::int64_t> pieces;    // how the input was cut (items per rank)
  std::vector<std::int64_t> out_pieces;  // how the output is cut (compact: kept per rank)
  std::vector<check> checks;           // with validate
  std::vector<bench::result> rows;     // with bench
  std::vector<std::string> notes;      // with bench: the scaling, one line per rank count
};

// x: the whole input, cut evenly across the ranks. Needs request.gpus GPUs.
report run(const io::host_array& x, const request& r);

template <class T>
report run_typed(const io::host_array& x, const request& r);

}  // namespace scanlab::dist_app
