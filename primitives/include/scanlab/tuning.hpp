// scanlab/tuning.hpp: the optional tuning knobs of scanlab's device-wide algorithms. Plain
// C++ (no CUDA needed to include it). Nothing here is needed for correct results: every
// entry point runs its tuned defaults when these are left out.
//
// Policies. The single-pass algorithms take a tile shape (threads per block, items per
// thread, resident blocks per SM, ...) as their FIRST template parameter, as CUB's dispatch
// layer accepts a user policy:
//
//   scanlab::select_if<scanlab::select_policy<256, 16, 4, 3>>(d_temp, temp_bytes, ...);
//   scanlab::partition<scanlab::partition_policy<256, 16, 3>>(d_temp, temp_bytes, ...);
//   scanlab::inclusive_scan<scanlab::scan_policy<256, 16, 3>>(d_temp, temp_bytes, ...);
//   scanlab::radix_sort_keys<my_onesweep_policy>(d_temp, temp_bytes, ...);
//   scanlab::linear_recurrence<float, scanlab::linrec_policy<256, 16, 2, true>>(...);  // T first
//
// The default, `default_policy`, picks the tuned shape for the element types: a
// per-architecture table (scanlab/arch.cuh) whose row for the GPU the kernel is compiled
// for runs. A policy changes speed and temp-storage size,
// never results: size the temp storage (d_temp == nullptr) and run with the same policy.
// The policy types are named in each algorithm's header (select_policy in select.cuh, ...).
//
// Launch options. The single-pass algorithms with a decoupled look-back (scan, select and
// its relatives, partition, linear recurrences) take `single_pass_options` as an optional
// last argument: how the tiles are handed to the blocks and how many blocks run. These are
// benchmark and test knobs; the default (automatic, as many blocks as are resident) is
// what production code wants.
#pragma once

namespace scanlab {

// The tuned tile shape for the call's element types.
struct default_policy {};

// How a single-pass kernel hands out its tiles.
enum class launch_mode : int {
  automatic = 0,  // one block for a single tile, else a cooperative grid; tickets where the
                  // device or the context refuses cooperative launch
  cooperative,    // an all-resident cooperative grid, block b taking tiles b, b + grid, ...
                  // (falls back to tickets where cooperative launch is unavailable or refused)
  tickets,        // a regular grid; blocks claim tiles in order from an atomic ticket counter
                  // (the tile states are reset by a memset first)
};

// Optional launch knobs of scan, select_if and its relatives, the partitions and the linear
// recurrences. They change neither the results (every mode gives the same bits) nor the
// temp storage size.
struct single_pass_options {
  launch_mode mode = launch_mode::automatic;
  int max_blocks = 0;  // > 0: at most this many blocks (more tiles per block, more look-back
                       // rounds); 0: as many as can be resident at once. < 0 is an error.
};

namespace detail {

// A call with other options returns cudaErrorInvalidValue before doing anything.
constexpr bool valid_options(const single_pass_options& options) {
  return options.max_blocks >= 0 && (options.mode == launch_mode::automatic ||
                                     options.mode == launch_mode::cooperative || options.mode == launch_mode::tickets);
}

// The public options as a dispatcher's options struct (Options: a `mode` whose enum names
// automatic, cooperative and tickets, and an int `max_blocks`; other members keep their
// defaults).
template <class Options>
constexpr Options to_dispatch_options(const single_pass_options& options) {
  using mode_t = decltype(Options{}.mode);
  Options o{};
  o.mode = options.mode == launch_mode::cooperative ? mode_t::cooperative
           : options.mode == launch_mode::tickets   ? mode_t::tickets
                                                    : mode_t::automatic;
  o.max_blocks = options.max_blocks;
  return o;
}

// Policy, or Default where Policy is default_policy.
template <class Policy, class Default>
struct resolve_policy {
  using type = Policy;
};
template <class Default>
struct resolve_policy<default_policy, Default> {
  using type = Default;
};
template <class Policy, class Default>
using resolve_policy_t = typename resolve_policy<Policy, Default>::type;

template <class Policy>
inline constexpr bool is_default_policy = false;
template <>
inline constexpr bool is_default_policy<default_policy> = true;

}  // namespace detail

}  // namespace scanlab
