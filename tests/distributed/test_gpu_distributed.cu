// The distributed algorithms on the GPUs of this machine: one rank per GPU (all of them,
// up to 8), one host thread per rank, checked against the CPU on the whole array. With
// one GPU the same code runs as one rank; the sizes of the ranks' pieces vary (even,
// uneven, empty ranks, everything on one rank, fewer items than ranks).
#include <scanlab/distributed.cuh>

#include "common/device_buffer.hpp"
#include "common/gpu_test.hpp"
#include "common/test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace dist = scanlab::distributed;
using scanlab::device_buffer;

void check(const dist::status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.message());
}

class Distributed : public scanlab::test::gpu_test {
 protected:
  // The ranks: every GPU, made once for the process.
  static std::vector<dist::communicator>& comms() {
    static std::vector<dist::communicator> all = [] {
      int count = 0;
      SCANLAB_CHECK(cudaGetDeviceCount(&count));
      std::vector<int> devices(static_cast<std::size_t>(std::min(count, 8)));
      std::iota(devices.begin(), devices.end(), 0);
      std::vector<dist::communicator> made;
      check(dist::communicator::create_all(devices, made), "communicator::create_all");
      return made;
    }();
    return all;
  }
  static int ranks() { return static_cast<int>(comms().size()); }

  // f(rank, comm) on every rank, each in its own thread with its GPU current.
  static void on_ranks(const std::function<void(int, const dist::communicator&)>& f) {
    std::vector<std::string> errors(static_cast<std::size_t>(ranks()));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks(); ++r) {
      threads.emplace_back([&, r] {
        try {
          const auto& comm = comms()[static_cast<std::size_t>(r)];
          SCANLAB_CHECK(cudaSetDevice(comm.device()));
          f(r, comm);
          SCANLAB_CHECK(cudaDeviceSynchronize());
        } catch (const std::exception& e) {
          errors[static_cast<std::size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < ranks(); ++r) {
      if (!errors[static_cast<std::size_t>(r)].empty()) ADD_FAILURE() << "rank " << r << ": " << errors[static_cast<std::size_t>(r)];
    }
  }

  // Ways to cut n items into one piece per rank.
  static std::vector<std::vector<std::int64_t>> layouts(std::int64_t n) {
    const int p = ranks();
    std::vector<std::vector<std::int64_t>> out;
    std::vector<std::int64_t> even(static_cast<std::size_t>(p), n / p);
    even[0] += n % p;
    out.push_back(even);
    std::vector<std::int64_t> last(static_cast<std::size_t>(p), 0);  // everything on the last rank
    last.back() = n;
    out.push_back(last);
    if (p > 1) {
      std::vector<std::int64_t> uneven(static_cast<std::size_t>(p), 0);  // rank 0 a third, an empty rank 1
      uneven[0] = n / 3;
      uneven.back() += n - n / 3;
      out.push_back(uneven);
    }
    return out;
  }

  template <class T>
  static std::vector<std::vector<T>> cut(const std::vector<T>& all, const std::vector<std::int64_t>& sizes) {
    std::vector<std::vector<T>> pieces;
    std::int64_t at = 0;
    for (const std::int64_t s : sizes) {
      pieces.emplace_back(all.begin() + at, all.begin() + at + s);
      at += s;
    }
    return pieces;
  }

  static std::string describe(const std::vector<std::int64_t>& sizes) {
    std::string s = "pieces";
    for (const std::int64_t v : sizes) s += " " + std::to_string(v);
    return s;
  }
};

std::vector<std::int64_t> sizes_to_test() { return {0, 1, 2, 5, 1000, 300007, 4000037}; }

TEST_F(Distributed, ReduceSumMaxAndNoIdentity) {
  for (const std::int64_t n : sizes_to_test()) {
    const auto values = scanlab::test::random_values<std::int32_t>(n, 11 + static_cast<std::uint64_t>(n), false);
    std::int64_t sum = 17;
    std::int32_t max = std::numeric_limits<std::int32_t>::lowest();
    for (const auto v : values) {
      sum += v;
      max = std::max(max, v);
    }
    for (const auto& sizes : layouts(n)) {
      SCOPED_TRACE("n " + std::to_string(n) + ", " + describe(sizes));
      const auto pieces = cut(values, sizes);
      std::vector<std::int64_t> sums(static_cast<std::size_t>(ranks()));
      std::vector<std::int32_t> maxes(static_cast<std::size_t>(ranks()));
      std::vector<double> doubles(static_cast<std::size_t>(ranks()));
      on_ranks([&](int r, const dist::communicator& comm) {
        const device_buffer<std::int32_t> d_in{std::span<const std::int32_t>(pieces[static_cast<std::size_t>(r)])};
        device_buffer<std::int64_t> d_sum(1);
        device_buffer<std::int32_t> d_max(1);
        check(dist::reduce(comm, d_in.data(), d_in.size(), d_sum.data(), std::int64_t{17}, scanlab::plus{}), "reduce sum");
        check(dist::reduce(comm, d_in.data(), d_in.size(), d_max.data(), std::numeric_limits<std::int32_t>::lowest(),
                           scanlab::maximum{}),
              "reduce max");
        sums[static_cast<std::size_t>(r)] = d_sum.to_host()[0];
        maxes[static_cast<std::size_t>(r)] = d_max.to_host()[0];
      });
      for (int r = 0; r < ranks(); ++r) {
        EXPECT_EQ(sums[static_cast<std::size_t>(r)], sum) << "rank " << r;
        EXPECT_EQ(maxes[static_cast<std::size_t>(r)], max) << "rank " << r;
      }
    }
  }
}

// An operator with no identity in scanlab::identity: the ranks' partials fold without one.
struct absmax {
  __host__ __device__ double operator()(double a, double b) const { return fabs(a) > fabs(b) ? a : b; }
};

TEST_F(Distributed, ReduceWithoutIdentityAndNaN) {
  const std::int64_t n = 100003;
  auto values = scanlab::test::random_values<double>(n, 5);
  values[777] = -3.5;
  for (const auto& sizes : layouts(n)) {
    SCOPED_TRACE(describe(sizes));
    const auto pieces = cut(values, sizes);
    std::vector<double> got(static_cast<std::size_t>(ranks()));
    on_ranks([&](int r, const dist::communicator& comm) {
      const device_buffer<double> d_in{std::span<const double>(pieces[static_cast<std::size_t>(r)])};
      device_buffer<double> d_out(1);
      check(dist::reduce(comm, d_in.data(), d_in.size(), d_out.data(), 0.0, absmax{}), "reduce absmax");
      got[static_cast<std::size_t>(r)] = d_out.to_host()[0];
    });
    for (int r = 0; r < ranks(); ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], -3.5) << "rank " << r;
  }
  // min with a NaN on one rank: NaN everywhere (scanlab::minimum propagates NaN).
  values[n - 5] = std::nan("");
  for (const auto& sizes : layouts(n)) {
    const auto pieces = cut(values, sizes);
    std::vector<double> got(static_cast<std::size_t>(ranks()));
    on_ranks([&](int r, const dist::communicator& comm) {
      const device_buffer<double> d_in{std::span<const double>(pieces[static_cast<std::size_t>(r)])};
      device_buffer<double> d_out(1);
      check(dist::reduce(comm, d_in.data(), d_in.size(), d_out.data(), std::numeric_limits<double>::infinity(),
                         scanlab::minimum{}),
            "reduce min");
      got[static_cast<std::size_t>(r)] = d_out.to_host()[0];
    });
    for (int r = 0; r < ranks(); ++r) EXPECT_TRUE(std::isnan(got[static_cast<std::size_t>(r)])) << describe(sizes) << " rank " << r;
  }
}

// A non-commutative operator: composing affine maps x -> a x + b (exact in small integers).
struct affine {
  std::int64_t a, b;
};
struct compose {
  __host__ __device__ affine operator()(const affine& f, const affine& g) const {
    return {g.a * f.a, g.a * f.b + g.b};  // first f, then g
  }
};

TEST_F(Distributed, ScansAllKindsNonCommutative) {
  for (const std::int64_t n : sizes_to_test()) {
    const auto values = scanlab::test::random_values<std::int32_t>(n, 23 + static_cast<std::uint64_t>(n), false);
    std::vector<affine> maps(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) maps[static_cast<std::size_t>(i)] = {(i % 7 == 0) ? -1 : 1, values[static_cast<std::size_t>(i)] % 1000};
    // References: inclusive (in int32, wrapping through uint32), inclusive from 5 in int64,
    // exclusive from -3 in int64, the affine maps' inclusive composition.
    std::vector<std::int32_t> incl(static_cast<std::size_t>(n));
    std::vector<std::int64_t> incl_init(static_cast<std::size_t>(n)), excl(static_cast<std::size_t>(n));
    std::vector<affine> comp(static_cast<std::size_t>(n));
    std::uint32_t acc32 = 0;
    std::int64_t acc_init = 5, acc_excl = -3;
    affine f{1, 0};
    for (std::size_t i = 0; i < values.size(); ++i) {
      acc32 += static_cast<std::uint32_t>(values[i]);
      incl[i] = static_cast<std::int32_t>(acc32);
      acc_init += values[i];
      incl_init[i] = acc_init;
      excl[i] = acc_excl;
      acc_excl += values[i];
      f = i == 0 ? maps[i] : compose{}(f, maps[i]);
      comp[i] = f;
    }
    for (const auto& sizes : layouts(n)) {
      SCOPED_TRACE("n " + std::to_string(n) + ", " + describe(sizes));
      const auto pieces = cut(values, sizes);
      const auto map_pieces = cut(maps, sizes);
      std::vector<std::vector<std::int32_t>> got_incl(static_cast<std::size_t>(ranks()));
      std::vector<std::vector<std::int64_t>> got_init(static_cast<std::size_t>(ranks())), got_excl(static_cast<std::size_t>(ranks()));
      std::vector<std::vector<affine>> got_comp(static_cast<std::size_t>(ranks()));
      on_ranks([&](int r, const dist::communicator& comm) {
        const auto me = static_cast<std::size_t>(r);
        const device_buffer<std::int32_t> d_in{std::span<const std::int32_t>(pieces[me])};
        const device_buffer<affine> d_maps{std::span<const affine>(map_pieces[me])};
        device_buffer<std::int32_t> d_incl(d_in.size());
        device_buffer<std::int64_t> d_init(d_in.size()), d_excl(d_in.size());
        device_buffer<affine> d_comp(d_in.size());
        check(dist::inclusive_scan(comm, d_in.data(), d_incl.data(), d_in.size(), scanlab::plus{}), "inclusive_scan");
        check(dist::inclusive_scan_init(comm, d_in.data(), d_init.data(), d_in.size(), std::int64_t{5}, scanlab::plus{}),
              "inclusive_scan_init");
        check(dist::exclusive_scan(comm, d_in.data(), d_excl.data(), d_in.size(), std::int64_t{-3}, scanlab::plus{}),
              "exclusive_scan");
        check(dist::inclusive_scan(comm, d_maps.data(), d_comp.data(), d_maps.size(), compose{}), "inclusive_scan affine");
        got_incl[me] = d_incl.to_host();
        got_init[me] = d_init.to_host();
        got_excl[me] = d_excl.to_host();
        got_comp[me] = d_comp.to_host();
      });
      std::size_t at = 0;
      for (int r = 0; r < ranks(); ++r) {
        const auto me = static_cast<std::size_t>(r);
        for (std::size_t i = 0; i < got_incl[me].size(); ++i, ++at) {
          ASSERT_EQ(got_incl[me][i], incl[at]) << "inclusive, rank " << r << ", item " << i;
          ASSERT_EQ(got_init[me][i], incl_init[at]) << "inclusive from 5, rank " << r << ", item " << i;
          ASSERT_EQ(got_excl[me][i], excl[at]) << "exclusive from -3, rank " << r << ", item " << i;
          ASSERT_EQ(got_comp[me][i].a, comp[at].a) << "affine, rank " << r << ", item " << i;
          ASSERT_EQ(got_comp[me][i].b, comp[at].b) << "affine, rank " << r << ", item " << i;
        }
      }
      EXPECT_EQ(at, values.size());
    }
  }
}

struct is_odd {
  __host__ __device__ bool operator()(std::int32_t v) const { return (v & 1) != 0; }
};

TEST_F(Distributed, SelectAndRebalance) {
  for (const std::int64_t n : sizes_to_test()) {
    const auto values = scanlab::test::random_values<std::int32_t>(n, 31 + static_cast<std::uint64_t>(n), false);
    std::vector<std::int32_t> expected;
    for (const auto v : values) {
      if (is_odd{}(v)) expected.push_back(v);
    }
    for (const auto& sizes : layouts(n)) {
      SCOPED_TRACE("n " + std::to_string(n) + ", " + describe(sizes));
      const auto pieces = cut(values, sizes);
      std::vector<dist::selection> sel(static_cast<std::size_t>(ranks()));
      std::vector<std::vector<std::int32_t>> kept(static_cast<std::size_t>(ranks())), balanced(static_cast<std::size_t>(ranks()));
      on_ranks([&](int r, const dist::communicator& comm) {
        const auto me = static_cast<std::size_t>(r);
        const device_buffer<std::int32_t> d_in{std::span<const std::int32_t>(pieces[me])};
        device_buffer<std::int32_t> d_out(d_in.size());
        check(dist::select_if(comm, d_in.data(), d_in.size(), d_out.data(), is_odd{}, sel[me]), "select_if");
        auto all = d_out.to_host();
        kept[me].assign(all.begin(), all.begin() + sel[me].count);
        const std::int64_t room = (sel[me].total + comm.size() - 1) / comm.size();
        device_buffer<std::int32_t> d_balanced(room);
        std::int64_t count = 0;
        check(dist::rebalance(comm, static_cast<const std::int32_t*>(d_out.data()), sel[me].count, sel[me].total,
                              d_balanced.data(), count),
              "rebalance");
        auto b = d_balanced.to_host();
        balanced[me].assign(b.begin(), b.begin() + count);
      });
      std::vector<std::int32_t> joined, rejoined;
      std::int64_t offset = 0;
      for (int r = 0; r < ranks(); ++r) {
        const auto me = static_cast<std::size_t>(r);
        EXPECT_EQ(sel[me].offset, offset) << "rank " << r;
        EXPECT_EQ(sel[me].total, static_cast<std::int64_t>(expected.size())) << "rank " << r;
        offset += sel[me].count;
        joined.insert(joined.end(), kept[me].begin(), kept[me].end());
        const std::int64_t share = static_cast<std::int64_t>(expected.size()) / ranks() +
                                   (r < static_cast<std::int64_t>(expected.size()) % ranks() ? 1 : 0);
        EXPECT_EQ(static_cast<std::int64_t>(balanced[me].size()), share) << "rank " << r;
        rejoined.insert(rejoined.end(), balanced[me].begin(), balanced[me].end());
      }
      EXPECT_EQ(joined, expected);
      EXPECT_EQ(rejoined, expected);
    }
  }
}

// The sort of keys (and of keys with their global positions, to check stability) against
// std::stable_sort by scanlab's radix order.
template <class Key>
void check_sort(const std::vector<Key>& keys, const std::vector<std::vector<std::int64_t>>& layouts_to_test,
                int ranks, const std::function<void(const std::function<void(int, const dist::communicator&)>&)>& run) {
  const auto n = static_cast<std::int64_t>(keys.size());
  std::vector<std::int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    return scanlab::radix_ordered_bits(keys[static_cast<std::size_t>(a)]) < scanlab::radix_ordered_bits(keys[static_cast<std::size_t>(b)]);
  });
  for (const auto& sizes : layouts_to_test) {
    std::string what = "n " + std::to_string(n) + ", pieces";
    for (const auto s : sizes) what += " " + std::to_string(s);
    SCOPED_TRACE(what);
    std::vector<std::int64_t> starts(sizes.size() + 1, 0);
    for (std::size_t q = 0; q < sizes.size(); ++q) starts[q + 1] = starts[q] + sizes[q];
    std::vector<std::vector<Key>> got_keys(static_cast<std::size_t>(ranks)), got_pair_keys(static_cast<std::size_t>(ranks));
    std::vector<std::vector<std::int64_t>> got_values(static_cast<std::size_t>(ranks));
    run([&](int r, const dist::communicator& comm) {
      const auto me = static_cast<std::size_t>(r);
      const std::vector<Key> piece(keys.begin() + starts[me], keys.begin() + starts[me + 1]);
      std::vector<std::int64_t> positions(piece.size());
      std::iota(positions.begin(), positions.end(), starts[me]);
      const device_buffer<Key> d_keys{std::span<const Key>(piece)};
      const device_buffer<std::int64_t> d_positions{std::span<const std::int64_t>(positions)};
      device_buffer<Key> d_out(d_keys.size()), d_pair_keys(d_keys.size());
      device_buffer<std::int64_t> d_values(d_keys.size());
      check(dist::sort_keys(comm, d_keys.data(), d_out.data(), d_keys.size()), "sort_keys");
      check(dist::sort_pairs(comm, d_keys.data(), d_pair_keys.data(), d_positions.data(), d_values.data(), d_keys.size()),
            "sort_pairs");
      got_keys[me] = d_out.to_host();
      got_pair_keys[me] = d_pair_keys.to_host();
      got_values[me] = d_values.to_host();
    });
    std::size_t at = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto me = static_cast<std::size_t>(r);
      ASSERT_EQ(static_cast<std::int64_t>(got_keys[me].size()), sizes[me]);
      for (std::size_t i = 0; i < got_keys[me].size(); ++i, ++at) {
        const Key want = keys[static_cast<std::size_t>(order[at])];
        ASSERT_EQ(scanlab::radix_ordered_bits(got_keys[me][i]), scanlab::radix_ordered_bits(want)) << "keys, rank " << r << ", item " << i;
        ASSERT_EQ(got_values[me][i], order[at]) << "pairs (stability), rank " << r << ", item " << i;
        ASSERT_EQ(scanlab::radix_ordered_bits(got_pair_keys[me][i]), scanlab::radix_ordered_bits(want)) << "pair keys, rank " << r;
      }
    }
  }
}

TEST_F(Distributed, SortRandomKeys) {
  for (const std::int64_t n : sizes_to_test()) {
    check_sort(scanlab::test::random_values<std::uint32_t>(n, 41 + static_cast<std::uint64_t>(n), false), layouts(n), ranks(), on_ranks);
    check_sort(scanlab::test::random_values<std::int64_t>(n, 43 + static_cast<std::uint64_t>(n), false), layouts(n), ranks(), on_ranks);
  }
}

TEST_F(Distributed, SortHostileKeys) {
  const std::int64_t n = 300007;
  // All keys equal: every splitter a tie, handed out in rank order.
  check_sort(std::vector<std::uint32_t>(static_cast<std::size_t>(n), 42u), layouts(n), ranks(), on_ranks);
  // Few distinct keys, the largest key, sorted and reversed input.
  auto few = scanlab::test::random_values<std::uint32_t>(n, 47);
  for (auto& k : few) k = (k % 3 == 0) ? 0xffffffffu : k % 3;
  check_sort(few, layouts(n), ranks(), on_ranks);
  std::vector<std::uint32_t> up(static_cast<std::size_t>(n)), down(static_cast<std::size_t>(n));
  std::iota(up.begin(), up.end(), 0u);
  std::copy(up.rbegin(), up.rend(), down.begin());
  check_sort(up, layouts(n), ranks(), on_ranks);
  check_sort(down, layouts(n), ranks(), on_ranks);
  // Floats: NaNs last, -0.0 and +0.0 equal (stable), infinities.
  auto floats = scanlab::test::random_values<float>(n, 53);
  for (std::int64_t i = 0; i < n; i += 97) floats[static_cast<std::size_t>(i)] = std::nanf("");
  for (std::int64_t i = 5; i < n; i += 89) floats[static_cast<std::size_t>(i)] = (i % 2) ? -0.0f : 0.0f;
  floats[11] = std::numeric_limits<float>::infinity();
  floats[12] = -std::numeric_limits<float>::infinity();
  check_sort(floats, layouts(n), ranks(), on_ranks);
  // Fewer items than ranks.
  check_sort(std::vector<std::uint32_t>{9u}, layouts(1), ranks(), on_ranks);
}

TEST_F(Distributed, InvalidArguments) {
  on_ranks([&](int, const dist::communicator& comm) {
    device_buffer<std::int32_t> d(4);
    std::int64_t out_count = 0;
    // Every rank fails the same way before any exchange, so no rank waits for another.
    EXPECT_EQ(dist::reduce(comm, d.data(), -1, static_cast<std::int32_t*>(nullptr), 0, scanlab::plus{}).cuda,
              cudaErrorInvalidValue);
    EXPECT_EQ(dist::inclusive_scan(comm, d.data(), d.data(), -2, scanlab::plus{}).cuda, cudaErrorInvalidValue);
    EXPECT_EQ(dist::sort_keys(comm, static_cast<const std::int32_t*>(nullptr), d.data(), 4).cuda, cudaErrorInvalidValue);
    EXPECT_EQ(dist::rebalance(comm, static_cast<const std::int32_t*>(d.data()), 0, -1, d.data(), out_count).cuda,
              cudaErrorInvalidValue);
  });
}

}  // namespace
