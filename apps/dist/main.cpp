// scanlab-dist: reduce, scan, compaction and sort of one dataset across the GPUs of this
// machine (scanlab/distributed.cuh over NCCL: one rank and host thread per GPU, the input cut
// evenly), checked against the single-GPU result (--validate) and timed for scaling (--bench:
// n items per GPU on 1, 2, 4, ... GPUs against one GPU's single-GPU primitive).
//
//   scanlab-dist sort --gpus 2 -i keys.npy -o sorted.npy --validate
//   scanlab-dist scan --op max -i x.npy -o running_max.npy
//   scanlab-dist compact --gt 0.5 -i x.npy -o kept.npy
//   scanlab-dist reduce --n 2^31 --dtype int32 --bench      weak scaling, 2^31 items per GPU
//
// NVLink multicast is never used; NCCL_NVLS_ENABLE=0 is set for this process unless the
// environment sets it (machines whose GPUs others share must not use it).
#include "dist/dist_gpu.hpp"

#include "common/bench_report.hpp"
#include "common/cli.hpp"
#include "common/dataset.hpp"
#include "common/values.hpp"

#include <cuda_runtime_api.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  namespace io = scanlab::io;
  namespace da = scanlab::dist_app;
  scanlab::cli::app app("scanlab-dist",
                        "Reduce, scan, compaction or sort of a dataset across the GPUs of this machine (NCCL, one "
                        "rank per GPU), checked against one GPU (--validate) and timed for scaling (--bench).",
                        {scanlab::gen::distribution::uniform, std::int64_t{1} << 24, io::dtype::i32});
  CLI::App& parser = app.parser();
  std::string job_text = "reduce";
  int gpus = 0;
  bool exclusive = false;
  double greater_than = 0;
  const std::map<std::string, da::job> jobs = {
      {"reduce", da::job::reduce}, {"scan", da::job::scan}, {"compact", da::job::compact}, {"sort", da::job::sort}};
  parser.add_option("job", job_text, "reduce | scan | compact | sort (default reduce)")
      ->check(CLI::IsMember({"reduce", "scan", "compact", "sort"}));
  parser.add_option("--gpus", gpus, "Ranks: GPUs 0 .. N-1 (default: every GPU)")->check(CLI::PositiveNumber);
  app.add_op_option();
  parser.add_flag("--exclusive", exclusive, "scan: exclusive (item i gets the items before it)");
  parser.add_option("--gt", greater_than, "compact: keep the items greater than this (default 0)");
  app.footer(std::string("Dtypes: ") + da::supported_list +
             ". reduce and scan: result types as scanlab-reduce and scanlab-scan (NumPy's: integer sums in 64 "
             "bits). sort: ascending, stable, NaNs last. The output (-o) is the ranks' results in rank order: "
             "the whole array for scan and sort, the kept items for compact, one value for reduce. --bench "
             "gives every GPU the whole input (weak scaling) and compares with one GPU's single-GPU primitive.");

  return app.run(argc, argv, [&] {
    const auto& o = app.options();
    da::request request;
    request.what = jobs.at(job_text);
    request.op = app.op();
    request.exclusive = exclusive;
    request.greater_than = greater_than;
    const io::host_array x = app.load_input();
    if (!da::supported(x.type())) {
      throw std::runtime_error(std::string("scanlab-dist takes ") + da::supported_list + ", not " +
                                  std::string(io::name(x.type())));
    }
    app.select_device();
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    request.gpus = gpus > 0 ? gpus : count;
    request.validate = o.validate;
    request.bench = o.bench;
    request.repeat = o.repeat;
    request.dataset = app.dataset_name();
    spdlog::info("{} of {} x {} on {} GPU{}", job_text, x.size(), io::name(x.type()), request.gpus,
                 request.gpus == 1 ? "" : "s");
    const da::report report = da::run(x, request);

    std::cout << job_text << " on " << request.gpus << " GPU" << (request.gpus == 1 ? "" : "s") << ": "
              << report.output.size() << " item" << (report.output.size() == 1 ? "" : "s") << " out";
    for (std::int64_t i = 0; i < std::min<std::int64_t>(report.output.size(), 8); ++i) {
      std::cout << (i == 0 ? ": " : " ") << io::text_of(report.output, i);
    }
    std::cout << (report.output.size() > 8 ? " ...\n" : "\n");

    scanlab::app_report out = app.new_report();
    nlohmann::json& json = out.result();
    json["job"] = job_text;
    json["gpus"] = request.gpus;
    json["n"] = x.size();
    json["dtype"] = io::name(x.type());
    json["op"] = (request.what == da::job::reduce || request.what == da::job::scan) ? nlohmann::json(std::string(scanlab::ops::name(request.op))) : nlohmann::json(nullptr);
    json["pieces"] = report.pieces;
    json["output_pieces"] = report.out_pieces;
    json["output_items"] = report.output.size();
    for (const auto& c : report.checks) out.add(c);
    if (!out.checks().empty()) scanlab::print_checks(std::cout, out.checks());
    if (o.bench) {
      scanlab::bench::report bench = app.print_bench(report.rows);
      std::cout << "Weak scaling (every GPU holds the whole input; times from the start of all ranks to the end "
                   "of the last; \"vs CUB\" here is the speedup over g x one GPU's time: 1 = linear):\n";
      for (const auto& line : report.notes) std::cout << "  " << line << '\n';
      json["scaling"] = report.notes;
      out.set_bench(std::move(bench));
    }
    if (!o.output.empty()) {
      io::write_dataset(o.output, report.output);
      spdlog::info("wrote {} ({} x {})", o.output, report.output.size(), io::name(report.output.type()));
    }
    return app.finish(out, "the result differs from the single-GPU one (see the check column)");
  });
}
