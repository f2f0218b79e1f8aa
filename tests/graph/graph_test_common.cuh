// Scaffolding of the CUDA graph tests (test_gpu_graph): capture library calls on a stream,
// check what was captured, replay the graph on new inputs in the same buffers.
//
// Every test follows the same steps:
//   1. temp storage sized (the two-phase query) and allocated OUTSIDE the capture, filled with
//      garbage (nothing may rely on zeroed temp storage);
//   2. the calls captured on a non-blocking stream in cudaStreamCaptureModeGlobal. For the
//      capturing thread Global and ThreadLocal forbid the same things (a synchronisation, a
//      synchronous copy, cudaMalloc...: the call fails and the capture is invalidated instead
//      of the work quietly escaping the graph); Global also forbids them to other threads
//      while the capture lasts. Global is the default and the strictest, so a call that passes
//      here passes under either;
//   3. the graph checked (nonempty, no copy to or from pageable host memory) and instantiated;
//   4. rounds of: new random inputs written into the same device buffers outside the graph,
//      outputs poisoned, the graph launched twice back to back (the second launch finds the
//      first one's leftovers in temp storage, as every replay after the first does), the stream
//      synchronised, the outputs compared with a CPU reference of that round's inputs.
#pragma once

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <scanlab/error.hpp>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace scanlab::test::graph {

using scanlab::device_buffer;

// Sizes that reach every launch path of the dispatchers: one element; one tile in one block
// (reduce_tile_kernel, a single-block scan, compaction or partition); a few tiles (the looping
// single-block reduction, a small cooperative grid); a cooperative grid of one resident wave
// with several tiles per block. Capped under the sanitizer (SCANLAB_TEST_MAX_N).
inline std::vector<std::int64_t> default_sizes() {
  return capped({1, 1000, 20000, (std::int64_t{1} << 20) + 7});
}
// The sizes with several tiles, for the tests that force a launch mode.
inline std::vector<std::int64_t> multi_tile_sizes() { return capped({20000, (std::int64_t{1} << 20) + 7}); }

inline std::string error_name(cudaError_t status) { return cudaGetErrorName(status); }

// Owners of a stream, a graph and an executable graph (each a pointer to an opaque type).
struct stream_deleter {
  void operator()(cudaStream_t stream) const { cudaStreamDestroy(stream); }
};
struct graph_deleter {
  void operator()(cudaGraph_t graph) const { cudaGraphDestroy(graph); }
};
struct graph_exec_deleter {
  void operator()(cudaGraphExec_t exec) const { cudaGraphExecDestroy(exec); }
};
using owned_stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, stream_deleter>;
using owned_graph = std::unique_ptr<std::remove_pointer_t<cudaGraph_t>, graph_deleter>;

// A stream of its own, non-blocking: capture cannot start on the legacy default stream, and
// while a blocking stream captures, the legacy stream cannot be used at all.
inline owned_stream make_stream() {
  cudaStream_t stream = nullptr;
  SCANLAB_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return owned_stream(stream);
}

class graph_exec {
 public:
  graph_exec() = default;
  explicit graph_exec(cudaGraph_t graph) {
    cudaGraphExec_t exec = nullptr;
    SCANLAB_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    exec_.reset(exec);
  }
  void launch(cudaStream_t stream) const { SCANLAB_CHECK(cudaGraphLaunch(exec_.get(), stream)); }

 private:
  std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, graph_exec_deleter> exec_;
};

// Pinned host memory: what a memcpy node of a graph may copy to or from (the graph keeps the
// address; pageable memory would have to be staged at capture time).
template <class T>
class pinned_buffer {
 public:
  explicit pinned_buffer(std::int64_t count) : count_(count) {
    SCANLAB_CHECK(cudaMallocHost(&ptr_, static_cast<std::size_t>(count) * sizeof(T)));
  }
  ~pinned_buffer() { cudaFreeHost(ptr_); }
  pinned_buffer(const pinned_buffer&) = delete;
  pinned_buffer& operator=(const pinned_buffer&) = delete;
  [[nodiscard]] T* data() const { return ptr_; }
  [[nodiscard]] std::size_t bytes() const { return static_cast<std::size_t>(count_) * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::int64_t count_ = 0;
};

// What a capture produced: the captured code's status, the stream's capture status right
// after it (Invalidated once the driver refused an operation), cudaStreamEndCapture's
// status and the graph (empty when the capture was invalidated).
struct capture_outcome {
  cudaError_t call = cudaSuccess;
  cudaStreamCaptureStatus after_call = cudaStreamCaptureStatusNone;
  cudaError_t end = cudaSuccess;
  owned_graph graph;
};

// Runs enqueue(stream) -> cudaError_t inside a Global-mode capture on `stream` and ends the
// capture whatever happened.
template <class Enqueue>
capture_outcome try_capture(cudaStream_t stream, Enqueue&& enqueue) {
  capture_outcome out;
  SCANLAB_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  out.call = enqueue(stream);
  SCANLAB_CHECK(cudaStreamIsCapturing(stream, &out.after_call));
  cudaGraph_t graph = nullptr;
  out.end = cudaStreamEndCapture(stream, &graph);
  out.graph.reset(graph);
  return out;
}

inline std::size_t node_count(cudaGraph_t graph) {
  std::size_t count = 0;
  SCANLAB_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
  return count;
}

// The memcpy nodes of `graph` with an operand in pageable (unregistered) host memory. A call
// that copies to or from a host variable of its own (a value on its stack, a total it reads
// back) leaves such a node behind: on replay it reads or writes an address that is long dead.
inline std::vector<std::string> pageable_copies(cudaGraph_t graph) {
  std::size_t count = node_count(graph);
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0) SCANLAB_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
  std::vector<std::string> found;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type{};
    SCANLAB_CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeMemcpy) continue;
    cudaMemcpy3DParms params{};
    SCANLAB_CHECK(cudaGraphMemcpyNodeGetParams(node, &params));
    for (const auto& [what, pointer] : {std::pair{"from", params.srcPtr.ptr}, std::pair{"to", params.dstPtr.ptr}}) {
      if (pointer == nullptr) continue;  // a CUDA array
      cudaPointerAttributes attributes{};
      SCANLAB_CHECK(cudaPointerGetAttributes(&attributes, pointer));
      if (attributes.type == cudaMemoryTypeUnregistered) {
        found.push_back(std::string("a copy ") + what + " pageable host memory at " +
                        std::to_string(reinterpret_cast<std::uintptr_t>(pointer)));
      }
    }
  }
  return found;
}

// Captures enqueue(stream) into an executable graph. Throws, with the reason, when the call
// or the capture fails, when nothing was captured, or when the graph copies to or from
// pageable host memory.
template <class Enqueue>
graph_exec capture(cudaStream_t stream, Enqueue&& enqueue) {
  const capture_outcome c = try_capture(stream, std::forward<Enqueue>(enqueue));
  std::string problem;
  if (c.call != cudaSuccess) {
    problem = "the captured call returned " + error_name(c.call);
  } else if (c.end != cudaSuccess || c.graph.get() == nullptr) {
    problem = "cudaStreamEndCapture returned " + error_name(c.end);
  } else if (node_count(c.graph.get()) == 0) {
    problem = "nothing was captured";
  } else if (const auto copies = pageable_copies(c.graph.get()); !copies.empty()) {
    problem = "the graph holds " + copies.front();
  }
  if (!problem.empty()) {
    (void)cudaGetLastError();  // leave no stale error to the next call
    throw std::runtime_error("capture failed: " + problem);
  }
  return graph_exec(c.graph.get());
}

// The calls, each a two-phase call (d_temp, temp_bytes, stream) -> cudaError_t, one after
// another on one stream, sharing one temp allocation (calls in one stream never overlap):
// with d_temp == nullptr, temp_bytes becomes the most any of them asks for; otherwise each
// runs with all of it.
template <class... Calls>
cudaError_t in_sequence(void* d_temp, std::size_t& temp_bytes, cudaStream_t stream, Calls&... calls) {
  cudaError_t status = cudaSuccess;
  const bool query = d_temp == nullptr;
  std::size_t most = 1;
  const auto one = [&](auto& call) {
    if (status != cudaSuccess) return;
    std::size_t bytes = query ? 0 : temp_bytes;
    status = call(d_temp, bytes, stream);
    most = std::max(most, bytes);
  };
  (one(calls), ...);
  if (query) temp_bytes = most;
  return status;
}

// A graph and the temp storage it was captured with (the graph holds its address).
struct captured_graph {
  device_buffer<unsigned char> temp;
  graph_exec graph;
};

// Sizes one temp allocation for the calls outside any capture, allocates it (garbage-filled)
// and captures the calls, in order, into one graph.
template <class... Calls>
captured_graph capture_calls(cudaStream_t stream, Calls... calls) {
  std::size_t bytes = 0;
  SCANLAB_CHECK(in_sequence(nullptr, bytes, stream, calls...));
  captured_graph out{device_buffer<unsigned char>(static_cast<std::int64_t>(bytes)), graph_exec{}};
  out.temp.fill_bytes(0x5c, stream);
  SCANLAB_CHECK(cudaStreamSynchronize(stream));
  void* d_temp = out.temp.data();
  out.graph = capture(stream, [&](cudaStream_t s) {
    std::size_t available = bytes;
    return in_sequence(d_temp, available, s, calls...);
  });
  return out;
}

// One graph of the calls make_call(0), ..., make_call(Count - 1): one operation under
// several options (launch modes, algorithms), side by side.
template <int Count, class MakeCall>
captured_graph capture_variants(cudaStream_t stream, MakeCall make_call) {
  return [&]<int... K>(std::integer_sequence<int, K...>) {
    return capture_calls(stream, make_call(K)...);
  }(std::make_integer_sequence<int, Count>{});
}

// `rounds` replays: refill(seed) writes new inputs into the buffers the graph reads and
// poisons its outputs (on `stream`); the graph runs twice; check() compares the outputs
// with the reference of those inputs. Each round's data seed derives from the test seed.
template <class Refill, class Check>
void replay(const graph_exec& graph, cudaStream_t stream, std::int64_t n, Refill&& refill, Check&& check,
            int rounds = 3) {
  for (int round = 0; round < rounds; ++round) {
    const std::uint64_t seed =
        test_seed() + 1000003ull * static_cast<std::uint64_t>(n) + 7919ull * static_cast<std::uint64_t>(round);
    SCOPED_TRACE("replay " + std::to_string(round) + ", data seed " + std::to_string(seed) + " derived from " +
                 seed_trace(test_seed()));
    refill(seed);
    graph.launch(stream);
    graph.launch(stream);
    SCANLAB_CHECK(cudaStreamSynchronize(stream));
    check();
  }
}

// Host -> device on `stream`, in stream order before the next launch; returns `host` (the
// reference's input). From pageable memory the copy is staged before the call returns.
template <class T>
std::vector<T> upload(device_buffer<T>& device, std::vector<T> host, cudaStream_t stream) {
  if (!host.empty()) {
    SCANLAB_CHECK(cudaMemcpyAsync(device.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  return host;
}

// Garbage in outputs, so that a graph that did not write them cannot pass.
template <class... Buffers>
void poison(cudaStream_t stream, Buffers&... outputs) {
  (outputs.fill_bytes(0xa5, stream), ...);
}

// Part k of `whole` cut into parts of n items: the output of the k-th of several calls that
// a test runs side by side into one buffer.
template <class T>
std::vector<T> part(const std::vector<T>& whole, std::int64_t k, std::int64_t n) {
  return std::vector<T>(whole.begin() + k * n, whole.begin() + (k + 1) * n);
}

// Random integers in [lo, hi] as T (integer-valued floats: sums of them are exact).
template <class T>
std::vector<T> random_integers(std::int64_t n, std::uint64_t seed, std::int64_t lo, std::int64_t hi) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  std::vector<T> out(static_cast<std::size_t>(n));
  for (auto& v : out) v = static_cast<T>(dist(rng));
  return out;
}

// got[0, count) == want[0, count), bit for bit (sorts, compactions and partitions move
// values, they never compute them); names the first difference.
template <class T>
::testing::AssertionResult same_items(const std::vector<T>& got, const std::vector<T>& want, std::size_t count) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (got.size() < count || want.size() < count) {
    return ::testing::AssertionFailure() << "fewer than " << count << " items (got " << got.size() << ", want "
                                         << want.size() << ")";
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
      return ::testing::AssertionFailure() << "first difference at " << i << " of " << count << ": got "
                                           << ::testing::PrintToString(got[i]) << ", want "
                                           << ::testing::PrintToString(want[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// The fixture: skips without a GPU, else gives each test a stream of its own.
class graph_test : public gpu_test {
 protected:
  void SetUp() override {
    gpu_test::SetUp();
    if (IsSkipped()) return;
    stream_ = make_stream();
  }
  [[nodiscard]] cudaStream_t stream() const { return stream_.get(); }

 private:
  owned_stream stream_;
};

// One fixture name per area, for --gtest_filter (graph_scan.*).
class graph_reduce : public graph_test {};
class graph_norms : public graph_test {};
class graph_scan : public graph_test {};
class graph_select : public graph_test {};
class graph_partition : public graph_test {};
class graph_sort : public graph_test {};
class graph_linrec : public graph_test {};
class graph_quicksort : public graph_test {};

}  // namespace scanlab::test::graph
