// scanlab-dist: ranks and their threads (ranks.hpp).
#include "dist/ranks.hpp"

#include <scanlab/error.hpp>

#include <cuda_runtime_api.h>

#include <exception>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace scanlab::dist_app {

void require(const distributed::status& s, const std::string& what) {
  if (!s.ok()) throw std::runtime_error(what + ": " + s.message());
}

std::vector<distributed::communicator> make_ranks(int gpus) {
  int count = 0;
  SCANLAB_CHECK(cudaGetDeviceCount(&count));
  if (gpus < 1 || gpus > count) {
    throw std::invalid_argument("--gpus " + std::to_string(gpus) + ": this machine has " + std::to_string(count) +
                                " GPU" + (count == 1 ? "" : "s"));
  }
  std::vector<int> devices(static_cast<std::size_t>(gpus));
  std::iota(devices.begin(), devices.end(), 0);
  std::vector<distributed::communicator> comms;
  require(distributed::communicator::create_all(devices, comms), "NCCL communicators for " + std::to_string(gpus) + " GPUs");
  return comms;
}

void on_ranks(const std::vector<distributed::communicator>& comms,
              const std::function<void(int, const distributed::communicator&)>& f) {
  std::vector<std::exception_ptr> failures(comms.size());
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < comms.size(); ++r) {
    threads.emplace_back([&, r] {
      try {
        SCANLAB_CHECK(cudaSetDevice(comms[r].device()));
        f(static_cast<int>(r), comms[r]);
        SCANLAB_CHECK(cudaDeviceSynchronize());
      } catch (...) {
        failures[r] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace scanlab::dist_app
