// scanlab-dist: the ranks of a run (one per GPU, one host thread each) and running work on
// all of them. Host code; the communicators come from scanlab/distributed/communicator.hpp.
#pragma once

#include <scanlab/distributed/communicator.hpp>

#include <functional>
#include <string>
#include <vector>

namespace scanlab::dist_app {

// Throws std::runtime_error naming `what` if `s` is a failure.
void require(const distributed::status& s, const std::string& what);

// One rank for each of GPUs 0 .. gpus - 1 (throws if there are fewer).
std::vector<distributed::communicator> make_ranks(int gpus);

// f(rank, comm) on every rank at once, each in its own thread with its GPU current; waits
// for all, then rethrows the first failure. A rank that fails between collectives leaves
// the others waiting for it (NCCL has no timeout here): the app sizes and checks its inputs
// before the ranks start.
void on_ranks(const std::vector<distributed::communicator>& comms,
              const std::function<void(int, const distributed::communicator&)>& f);

}  // namespace scanlab::dist_app
