#include "common/bench_report.hpp"

#include "common/atomic_file.hpp"
#include "common/table.hpp"

#include <scanlab/error.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ostream>
#include <sstream>

namespace scanlab::bench {

namespace {

struct clock_summary {
  double sm_min = 0, sm_median = 0, sm_max = 0;
  double mem_min = 0, mem_median = 0, mem_max = 0;
  std::uint64_t reasons = 0;  // the limiting reasons seen in any sample
  bool throttled = false;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

std::optional<clock_summary> summarize(const clocks::record& record) {
  if (!record.available()) return std::nullopt;
  std::vector<double> sm, mem;
  clock_summary s;
  for (const clocks::sample& x : record.samples) {
    sm.push_back(x.sm_mhz);
    mem.push_back(x.mem_mhz);
    s.reasons |= clocks::limiting(x.reasons);
  }
  s.sm_min = *std::min_element(sm.begin(), sm.end());
  s.sm_max = *std::max_element(sm.begin(), sm.end());
  s.sm_median = median_of(sm);
  s.mem_min = *std::min_element(mem.begin(), mem.end());
  s.mem_max = *std::max_element(mem.begin(), mem.end());
  s.mem_median = median_of(mem);
  s.throttled = clocks::throttled(record);
  return s;
}

nlohmann::json optional_number(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// The cells of the text and Markdown tables.
const std::vector<std::string> table_header = {"suite", "variant", "type", "dataset", "n", "time",
                                               "noise", "GB/s", "% ceiling", "vs CUB", "check"};

std::vector<std::vector<std::string>> table_cells(const report& r) {
  std::vector<std::vector<std::string>> cells;
  for (const result& row : r.rows) {
    const auto speedup = row.speedup();
    const auto pct = r.percent_of_ceiling(row);
    const bool throttled = clocks::throttled(row.time.clocks);
    cells.push_back({row.suite, row.variant, row.type, row.dataset, format_count(row.n),
                     format_time_ms(row.time.median_ms) + (throttled ? " !" : ""),
                     format_fixed(100.0 * row.time.noise, 1) + "%", row.bytes > 0 ? format_fixed(row.gbps(), 0) : "",
                     pct ? format_fixed(*pct, 1) + "% " + std::string(name(row.bound)) : "",
                     speedup ? format_fixed(*speedup, 2) + "x" : "", row.validation});
  }
  return cells;
}

// The lines under the table: what the columns are compared with and how they were measured.
std::vector<std::string> footer(const report& r) {
  std::vector<std::string> lines;
  std::string ceilings = "% ceiling: GB/s over memcpy (device to device, read + write) " +
                         format_fixed(r.env.memcpy_gbps, 0) + " GB/s";
  if (r.env.read_gbps) ceilings += ", or over a read-only kernel " + format_fixed(*r.env.read_gbps, 0) + " GB/s";
  lines.push_back(ceilings + ", as each row names.");
  // The settings, when the rows share them (else see the JSON).
  if (!r.rows.empty()) {
    const timing& first = r.rows.front().time;
    const bool same = std::all_of(r.rows.begin(), r.rows.end(), [&](const result& x) {
      return x.time.runs == first.runs && x.time.warmup == first.warmup && x.time.flush_l2 == first.flush_l2;
    });
    lines.push_back(same ? "time: median of " + std::to_string(first.runs) + " runs after " +
                               std::to_string(first.warmup) + " warm-up runs, L2 " +
                               (first.flush_l2 ? "flushed before each" : "not flushed") +
                               "; noise: standard deviation of the runs over their mean."
                         : "time: median of each row's runs (runs, warm-up and L2 flush per row in the JSON); "
                           "noise: standard deviation of the runs over their mean.");
  }
  if (!r.env.nvml) {
    lines.push_back("clocks: not sampled (NVML not available).");
  } else {
    std::vector<double> sm, mem;
    std::uint64_t reasons = 0;
    std::vector<std::string> throttled_rows;
    unsigned sm_max = 0;
    for (const result& row : r.rows) {
      for (const clocks::sample& s : row.time.clocks.samples) {
        sm.push_back(s.sm_mhz);
        mem.push_back(s.mem_mhz);
      }
      sm_max = std::max(sm_max, row.time.clocks.sm_max_mhz);
      if (clocks::throttled(row.time.clocks)) {
        for (const clocks::sample& s : row.time.clocks.samples) reasons |= clocks::limiting(s.reasons);
        throttled_rows.push_back(row.suite + " " + row.variant);
      }
    }
    if (!sm.empty()) {
      std::string line = "clocks (NVML, sampled during the runs): SM median " + format_fixed(median_of(sm), 0) +
                         " MHz (min " + format_fixed(*std::min_element(sm.begin(), sm.end()), 0) + ", max clock " +
                         std::to_string(sm_max) + "), memory " + format_fixed(median_of(mem), 0) + " MHz; ";
      if (throttled_rows.empty()) {
        line += "no row throttled.";
      } else {
        const auto names = clocks::reason_names(reasons);
        line += "! throttled (" + (names.empty() ? "SM clock below 75 % of its max" : joined(names, ", ")) +
                "): " + std::to_string(throttled_rows.size()) + " of " + std::to_string(r.rows.size()) +
                " rows; their times are suspect.";
      }
      lines.push_back(line);
    }
  }
  lines.push_back("'vs CUB' > 1 means faster than CUB on the same input; " + baseline_label() + ".");
  return lines;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(double v) {
  std::ostringstream out;
  out.precision(12);
  out << v;
  return out.str();
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::optional<double> report::ceiling_gbps(ceiling c) const {
  switch (c) {
    case ceiling::memcpy: return env.memcpy_gbps > 0 ? std::optional<double>(env.memcpy_gbps) : std::nullopt;
    case ceiling::read: return env.read_gbps;
    case ceiling::none: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> report::percent_of_ceiling(const result& r) const {
  const auto gbps = ceiling_gbps(r.bound);
  if (!gbps || r.bytes <= 0) return std::nullopt;
  return 100.0 * r.gbps() / *gbps;
}

bool report::throttled() const {
  return std::any_of(rows.begin(), rows.end(), [](const result& r) { return clocks::throttled(r.time.clocks); });
}

report make_report(std::vector<result> rows, int device, config settings) {
  report r;
  r.env.device = query_device(device);
  r.env.driver_version = clocks::driver_version();
  r.env.nvml = clocks::nvml_available();
  r.env.settings = settings;
  harness h({.warmup = 1, .repeat = 10});  // L2 flushed, as for the rows
  r.env.memcpy_gbps = h.memcpy_gbps();
  if (std::any_of(rows.begin(), rows.end(), [](const result& x) { return x.bound == ceiling::read; })) {
    try {
      r.env.read_gbps = h.read_gbps();
    } catch (const cuda_error& e) {
      // Short of memory for the 2 x 16 MiB it needs at the least: the rows go without it.
      cudaGetLastError();
      spdlog::warn("the read-only ceiling was not measured: {}", e.what());
    }
  }
  r.rows = std::move(rows);
  return r;
}

void print(std::ostream& out, const report& r) {
  text_table table(table_header);
  for (auto& row : table_cells(r)) table.add_row(std::move(row));
  table.print(out);
  for (const std::string& line : footer(r)) out << line << '\n';
}

nlohmann::json to_json(const report& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const result& x : r.rows) {
    nlohmann::json clocks_json;  // null without NVML
    if (const auto s = summarize(x.time.clocks)) {
      clocks_json = {
          {"samples", x.time.clocks.samples.size()},
          {"sm_mhz", {{"min", s->sm_min}, {"median", s->sm_median}, {"max", s->sm_max}}},
          {"mem_mhz", {{"min", s->mem_min}, {"median", s->mem_median}, {"max", s->mem_max}}},
          {"sm_max_mhz", x.time.clocks.sm_max_mhz > 0 ? nlohmann::json(x.time.clocks.sm_max_mhz) : nlohmann::json()},
          {"reasons", clocks::reason_names(s->reasons)},
          {"throttled", s->throttled},
      };
    }
    const auto gbps = r.ceiling_gbps(x.bound);
    rows.push_back({
        {"suite", x.suite},
        {"variant", x.variant},
        {"type", x.type},
        {"dataset", x.dataset},
        {"n", x.n},
        {"bytes", x.bytes},
        {"median_ms", x.time.median_ms},
        {"min_ms", x.time.min_ms},
        {"max_ms", x.time.max_ms},
        {"mean_ms", x.time.mean_ms},
        {"noise", x.time.noise},
        {"runs", x.time.runs},
        {"warmup", x.time.warmup},
        {"flush_l2", x.time.flush_l2},
        {"samples_ms", x.time.samples_ms},
        {"gbps", x.gbps()},
        {"items_per_second", x.items_per_second()},
        {"ceiling", x.bound == ceiling::none ? nlohmann::json() : nlohmann::json(std::string(name(x.bound)))},
        {"ceiling_gbps", optional_number(gbps)},
        {"pct_of_ceiling", optional_number(r.percent_of_ceiling(x))},
        {"baseline_ms", optional_number(x.baseline_ms)},
        {"speedup_vs_baseline", optional_number(x.speedup())},
        {"check", x.validation},
        {"clocks", std::move(clocks_json)},
    });
  }
  const baseline_info cub = baseline();
  const device_info& d = r.env.device;
  return {
      {"device",
       {{"name", d.name},
        {"ordinal", d.ordinal},
        {"sm_count", d.sm_count},
        {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
        {"l2_bytes", d.l2_bytes},
        {"global_bytes", d.global_bytes}}},
      {"driver_version", r.env.driver_version ? nlohmann::json(*r.env.driver_version) : nlohmann::json()},
      {"cuda_driver_version", d.driver_version},
      {"cuda_runtime_version", d.runtime_version},
      {"nvml", r.env.nvml},
      {"baseline", {{"cub_version", cub.cub_version}, {"headers", cub.headers}}},
      {"harness",
       {{"warmup", r.env.settings.warmup},
        {"repeat", r.env.settings.repeat},
        {"min_repeat", 10},
        {"flush_l2", r.env.settings.flush_l2}}},
      {"ceilings", {{"memcpy_gbps", r.env.memcpy_gbps}, {"read_gbps", optional_number(r.env.read_gbps)}}},
      {"throttled", r.throttled()},
      {"rows", std::move(rows)},
  };
}

std::string to_csv(const report& r) {
  std::string out =
      "suite,variant,type,dataset,n,bytes,median_ms,min_ms,max_ms,mean_ms,noise,runs,gbps,ceiling,pct_of_ceiling,"
      "baseline_ms,speedup_vs_baseline,check,sm_mhz_median,mem_mhz_median,throttled\n";
  for (const result& x : r.rows) {
    const auto pct = r.percent_of_ceiling(x);
    const auto s = summarize(x.time.clocks);
    const std::vector<std::string> fields = {
        csv_field(x.suite), csv_field(x.variant), csv_field(x.type), csv_field(x.dataset), std::to_string(x.n),
        number(x.bytes), number(x.time.median_ms), number(x.time.min_ms), number(x.time.max_ms),
        number(x.time.mean_ms), number(x.time.noise), std::to_string(x.time.runs), number(x.gbps()),
        x.bound == ceiling::none ? "" : std::string(name(x.bound)), pct ? number(*pct) : "",
        x.baseline_ms ? number(*x.baseline_ms) : "", x.speedup() ? number(*x.speedup()) : "",
        csv_field(x.validation), s ? number(s->sm_median) : "", s ? number(s->mem_median) : "",
        s ? (s->throttled ? "true" : "false") : ""};
    out += joined(fields, ",") + "\n";
  }
  return out;
}

std::string to_markdown(const report& r) {
  std::string out = "|";
  for (const std::string& h : table_header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t i = 0; i < table_header.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& row : table_cells(r)) {
    out += "|";
    for (const std::string& cell : row) out.append(" ").append(markdown_cell(cell)).append(" |");
    out += "\n";
  }
  out += "\n";
  const device_info& d = r.env.device;
  out += d.name + " (sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor) + "), driver " +
         r.env.driver_version.value_or("unknown") + ", scanlab " + this_build().scanlab_version + " (" +
         this_build().commit.substr(0, 12) + (this_build().dirty ? ", modified" : "") + ").\n\n";
  for (const std::string& line : footer(r)) out += line + "\n\n";  // one paragraph each
  return out;
}

void write_json(const std::filesystem::path& path, const nlohmann::json& document) {
  io::write_file_atomically(path, document.dump(2) + "\n");
}

}  // namespace scanlab::bench
