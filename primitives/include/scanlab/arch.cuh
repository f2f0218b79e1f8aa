// scanlab/arch.cuh: the GPU architectures scanlab is tuned for, their limits, and how an
// algorithm's tuning is chosen per architecture.
//
// Families. Each tuned algorithm has one policy per architecture family:
//   75   Turing  (sm_75: T4, RTX 20xx)
//   80   Ampere datacentre (sm_80: A100, A30)
//   86   Ampere  (sm_86: A10, A40, RTX 30xx; sm_87: Jetson Orin)
//   89   Ada     (sm_89: L4, L40, RTX 40xx)
//   90   Hopper  (sm_90: H100, H200, GH200): where every policy was measured
//   100  Blackwell datacentre (sm_100, sm_103: B200, B300, GB200)
//   120  Blackwell (sm_120, sm_121: RTX 50xx, RTX PRO, DGX Spark)
// A GPU newer than the newest family uses the newest family's policy.
//
// Tuning. An algorithm's policy parameter is either one policy (used on every GPU: what a
// user passes to tune for their own GPU) or a tuning table: a type with a member template
// `at<Family>` whose `::type` is the policy for that family (scanlab's defaults, e.g.
// scanlab::device::scan_tuning<T>). Device code takes the policy of the architecture it is
// compiled for (__CUDA_ARCH__); the host takes the policy of the code the driver runs for
// the kernel (its PTX version, cudaFuncGetAttributes), so both sides agree also when the
// driver compiles older PTX for a newer GPU (a compute_80 build running on an H100 uses the
// family-80 policy on both sides).
//
// Limits. fits() checks a kernel's shape against a family's limits at compile time; each
// algorithm static_asserts it for every family of its table (in every build, whatever
// architectures it targets: an H100 running older PTX has the larger limits and would not
// notice an overflow) and for the policy it compiles (a user policy is checked only for the
// architectures it is built for).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace scanlab::arch {

// Limits of one family (its smallest member where they differ), from the CUDA C++
// Programming Guide's table of compute capabilities. Shared memory in bytes: the most one
// block may ask for (dynamic included, after opting in), the SM's total, and what the
// system reserves per resident block.
struct limits {
  int sm;                   // compute capability x 10
  int threads_per_sm;       // resident threads per SM
  int blocks_per_sm;        // resident blocks per SM
  int registers_per_sm;     // 32-bit registers
  std::size_t smem_per_block;
  std::size_t smem_per_sm;
  std::size_t reserved_smem_per_block;
};

inline constexpr int families[] = {75, 80, 86, 89, 90, 100, 120};
inline constexpr int newest_family = 120;

// The family whose policy a GPU of compute capability `sm` (x 10: 75, 86, 90, ...) uses.
__host__ __device__ constexpr int family_of(int sm) {
  if (sm >= 120) return 120;
  if (sm >= 100) return 100;
  if (sm >= 90) return 90;
  if (sm >= 89) return 89;
  if (sm >= 86) return 86;
  if (sm >= 80) return 80;
  return 75;  // the oldest GPUs CUDA 13 builds for
}

__host__ __device__ constexpr limits limits_of(int family) {
  constexpr std::size_t kb = 1024;
  switch (family_of(family)) {
    case 75: return {75, 1024, 16, 65536, 64 * kb, 64 * kb, 0};
    case 80: return {80, 2048, 32, 65536, 163 * kb, 164 * kb, 1 * kb};
    case 86: return {86, 1536, 16, 65536, 99 * kb, 100 * kb, 1 * kb};
    case 89: return {89, 1536, 24, 65536, 99 * kb, 100 * kb, 1 * kb};
    case 90: return {90, 2048, 32, 65536, 227 * kb, 228 * kb, 1 * kb};
    case 100: return {100, 2048, 32, 65536, 227 * kb, 228 * kb, 1 * kb};
    default: return {120, 1536, 32, 65536, 99 * kb, 100 * kb, 1 * kb};
  }
}

// A block of `threads` threads using `smem` bytes of shared memory (static and dynamic)
// runs on the family, and `min_blocks` of them fit on one SM at once (what the kernel's
// __launch_bounds__ promises), each thread keeping at least `min_registers` registers.
__host__ __device__ constexpr bool fits(int family, int threads, int min_blocks, std::size_t smem,
                                        int min_registers = 64) {
  const limits l = limits_of(family);
  return threads >= 32 && threads <= 1024 && threads % 32 == 0 && min_blocks >= 1 &&
         smem <= l.smem_per_block && threads * min_blocks <= l.threads_per_sm && min_blocks <= l.blocks_per_sm &&
         (smem + l.reserved_smem_per_block) * static_cast<std::size_t>(min_blocks) <= l.smem_per_sm &&
         l.registers_per_sm / (threads * min_blocks) >= min_registers;
}

// The hard limits alone: one such block runs at all on the family. What a kernel checks for
// the policy it is compiled with (a user policy may promise more blocks per SM than fit:
// that only costs occupancy).
__host__ __device__ constexpr bool fits_block(int family, int threads, std::size_t smem) {
  return fits(family, threads, 1, smem, 0);
}

// The family of the code being compiled: __CUDA_ARCH__'s in device code; in host code
// (which never runs a policy's device side) the Hopper family, whose policies the host
// pass of a kernel's definition then sees.
#if defined(__CUDA_ARCH__)
inline constexpr int compiled_family = family_of(__CUDA_ARCH__ / 10);
#else
inline constexpr int compiled_family = 90;
#endif

// ---- tuning tables ----------------------------------------------------------------------

template <class Tuning, class = void>
struct is_table : std::false_type {};
template <class Tuning>
struct is_table<Tuning, std::void_t<typename Tuning::template at<90>::type>> : std::true_type {};

// The policy `Tuning` gives family `Family`: a table's entry, or the one policy itself.
template <class Tuning, int Family, bool = is_table<Tuning>::value>
struct policy_at {
  using type = Tuning;
};
template <class Tuning, int Family>
struct policy_at<Tuning, Family, true> {
  using type = typename Tuning::template at<family_of(Family)>::type;
};
template <class Tuning, int Family>
using policy_for = typename policy_at<Tuning, Family>::type;

// The policy the code being compiled uses.
template <class Tuning>
using active_policy = policy_for<Tuning, compiled_family>;

template <int Family>
using family_tag = std::integral_constant<int, Family>;

// Host: calls fn(family_tag<Family>{}) for the family of `sm` (a constant per kernel and
// device, from detail::kernel_sm), so the host side of a dispatch is written once, as a
// generic lambda on the family.
template <class Fn>
decltype(auto) with_family(int sm, Fn&& fn) {
  switch (family_of(sm)) {
    case 75: return fn(family_tag<75>{});
    case 80: return fn(family_tag<80>{});
    case 86: return fn(family_tag<86>{});
    case 89: return fn(family_tag<89>{});
    case 90: return fn(family_tag<90>{});
    case 100: return fn(family_tag<100>{});
    default: return fn(family_tag<120>{});
  }
}

// fn(family_tag<Family>{}) for every family, and-ed: a tuning table's checks run over all
// its entries with one generic lambda.
template <class Fn>
constexpr bool all_families(Fn fn) {
  return fn(family_tag<75>{}) && fn(family_tag<80>{}) && fn(family_tag<86>{}) && fn(family_tag<89>{}) &&
         fn(family_tag<90>{}) && fn(family_tag<100>{}) && fn(family_tag<120>{});
}

// Every entry of a tuning table fits its family: smem is a generic lambda
// [](auto policy) { return shared memory bytes of a block under decltype(policy)::type; }
// (called with std::type_identity<Policy>); min_registers as in fits(). A single
// policy passes here (the kernel's own check covers it for the architectures it is built for).
template <class Tuning, class Smem>
constexpr bool table_fits(Smem smem, int min_registers = 64) {
  if constexpr (!is_table<Tuning>::value) {
    return true;
  } else {
    return all_families([&](auto family) {
      using P = policy_for<Tuning, decltype(family)::value>;
      return fits(decltype(family)::value, P::block_threads, P::min_blocks_per_sm, smem(std::type_identity<P>{}),
                  min_registers);
    });
  }
}

// The largest fn(std::type_identity<Policy>{}) over the policies of `Tuning` (every family's,
// or the one policy): temp-storage sizes that hold on every GPU, computed without asking the
// device which one it is.
template <class Tuning, class Fn>
constexpr auto max_over_policies(Fn fn) {
  if constexpr (!is_table<Tuning>::value) {
    return fn(std::type_identity<Tuning>{});
  } else {
    auto largest = fn(std::type_identity<policy_for<Tuning, 90>>{});
    all_families([&](auto family) {
      const auto value = fn(std::type_identity<policy_for<Tuning, decltype(family)::value>>{});
      if (value > largest) largest = value;
      return true;
    });
    return largest;
  }
}

}  // namespace scanlab::arch
