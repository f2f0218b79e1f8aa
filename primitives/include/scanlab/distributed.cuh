// scanlab/distributed.cuh: reduce, scan, compaction and sort of arrays sharded across the
// GPUs of one or several hosts, over NCCL (target scanlab::distributed, which links it).
// One rank per GPU; every rank calls with its own piece (communicator.hpp says how to
// make the ranks). Each algorithm is explained at the top of its header.
#pragma once

#include <scanlab/distributed/communicator.hpp>
#include <scanlab/distributed/reduce.cuh>
#include <scanlab/distributed/select.cuh>
#include <scanlab/distributed/sort.cuh>
