// Linear recurrences over float: every test body of linrec_test_common.cuh, and the
// *Large* ones (2^28 elements as one sequence and as batches; about 5 GB of GPU memory,
// a minute of host time for the data and the reference).
#include "linrec/linrec_test_common.cuh"

SCANLAB_LINREC_TESTS(linrec_float, float)

TEST_F(linrec_float, Large) { scanlab::test::linrec::large_test<float>(); }

// ---- the public API: input forms, a policy and single_pass_options ----

// Every input form (linrec_ab, linrec_lambda, linrec_ema) through solve_linear_recurrence,
// both layouts, x and final states, with a non-default tile shape (256 x 8, a quarter of the
// default tile: small inputs take the look-back) and each launch configuration; then the
// named forms with the policy and options. Each result against the long double reference.
TEST_F(linrec_float, PublicPolicyOptionsAndForms) {
  namespace lt = scanlab::test::linrec;
  using T = float;
  using small_policy = scanlab::linrec_policy<256, 8, 4, true>;
  using scanlab::batch_layout;
  using scanlab::launch_mode;
  const std::uint64_t seed = scanlab::test::test_seed();
  SCOPED_TRACE(scanlab::test::seed_trace(seed));
  const std::int64_t tile = small_policy::tile_items;
  const scanlab::single_pass_options configs[] = {
      {}, {launch_mode::cooperative, 2}, {launch_mode::tickets, 0}, {launch_mode::tickets, 3}};
  const T alpha = 0.25f;
  for (const auto& [batch, length] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 3 * tile + 5}, {1, 33 * tile - 1}, {7, 2 * tile + 3}, {300, 41}}) {
    if (batch * length > scanlab::test::max_test_n()) continue;
    auto h = lt::make_problem<T>(batch * length, lt::a_kind::contracting, seed + static_cast<std::uint64_t>(length));
    for (auto& p : h.p) p = std::fabs(p);  // usable as lambda too: in [0, 0.9)
    h.x0s = lt::random_states<T>(batch, seed + 3);
    scanlab::device_buffer<T> d_p(lt::view(h.p)), d_q(lt::view(h.q)), d_x0s(lt::view(h.x0s));
    scanlab::device_buffer<T> d_x(batch * length), d_final(batch);
    const auto check = [&](auto src, lt::reference_form form, batch_layout layout, bool final_only,
                           const scanlab::single_pass_options& config) {
      SCOPED_TRACE("form " + std::to_string(static_cast<int>(form)) + ", batch " + std::to_string(batch) + " x " +
                   std::to_string(length) + (layout == batch_layout::interleaved ? " interleaved" : " row-major") +
                   (final_only ? ", final states" : "") + ", mode " + std::to_string(static_cast<int>(config.mode)) +
                   ", max_blocks " + std::to_string(config.max_blocks));
      T* x = final_only ? nullptr : d_x.data();
      T* fin = final_only ? d_final.data() : nullptr;
      std::size_t bytes = 0;
      ASSERT_EQ(scanlab::solve_linear_recurrence<small_policy>(nullptr, bytes, src, x, fin, batch, length, layout,
                                                               d_x0s.data(), T(0), nullptr, config),
                cudaSuccess);
      scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
      temp.fill_bytes(0xa5);
      (final_only ? d_final : d_x).fill_bytes(0xff);  // NaN: anything left unwritten fails
      ASSERT_EQ(scanlab::solve_linear_recurrence<small_policy>(temp.data(), bytes, src, x, fin, batch, length, layout,
                                                               d_x0s.data(), T(0), nullptr, config),
                cudaSuccess);
      SCANLAB_CHECK(cudaDeviceSynchronize());
      const std::vector<T> got = (final_only ? d_final : d_x).to_host();
      const auto r = lt::reference_check(lt::reference_operands(h, form, form == lt::reference_form::ema ? alpha : 0.0),
                                         batch, length, layout == batch_layout::interleaved, lt::view(h.x0s), T(0),
                                         lt::view(got), final_only);
      EXPECT_TRUE(r.pass()) << lt::describe(r);
    };
    for (const batch_layout layout : {batch_layout::row_major, batch_layout::interleaved}) {
      for (const bool final_only : {false, true}) {
        for (const auto& config : configs) {
          check(scanlab::linrec_ab(d_p.data(), d_q.data()), lt::reference_form::ab, layout, final_only, config);
          check(scanlab::linrec_lambda(d_p.data(), d_q.data()), lt::reference_form::lambda, layout, final_only,
                config);
          check(scanlab::linrec_ema(static_cast<const T*>(d_p.data()), alpha), lt::reference_form::ema, layout,
                final_only, config);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
    // The named one-sequence forms with the policy and options (x0 = h.x0).
    if (batch != 1) continue;
    for (const auto& config : configs) {
      const T* p = d_p.data();
      const T* q = d_q.data();
      for (int form = 0; form < 3; ++form) {
        SCOPED_TRACE("named form " + std::to_string(form) + ", n = " + std::to_string(length));
        const auto call = [&](void* temp, std::size_t& bytes) {
          if (form == 0) {
            return scanlab::linear_recurrence<T, small_policy>(temp, bytes, p, q, d_x.data(), length, h.x0, nullptr,
                                                                config);
          }
          if (form == 1) {
            return scanlab::linear_recurrence_lambda<T, small_policy>(temp, bytes, p, q, d_x.data(), length, h.x0,
                                                                       nullptr, config);
          }
          return scanlab::exponential_moving_average<T, small_policy>(temp, bytes, p, d_x.data(), length, alpha, h.x0,
                                                                       nullptr, config);
        };
        std::size_t bytes = 0;
        ASSERT_EQ(call(nullptr, bytes), cudaSuccess);
        scanlab::device_buffer<unsigned char> temp(static_cast<std::int64_t>(bytes));
        d_x.fill_bytes(0xff);
        ASSERT_EQ(call(temp.data(), bytes), cudaSuccess);
        SCANLAB_CHECK(cudaDeviceSynchronize());
        const std::vector<T> got = d_x.to_host();
        const auto kind = form == 0 ? lt::reference_form::ab : form == 1 ? lt::reference_form::lambda
                                                                         : lt::reference_form::ema;
        const auto r = lt::reference_check(lt::reference_operands(h, kind, form == 2 ? alpha : 0.0), 1, length, false,
                                           std::span<const T>(), h.x0, lt::view(got), false);
        EXPECT_TRUE(r.pass()) << lt::describe(r);
      }
    }
  }
}
