// `muster bench [SCENARIO...] [-o json|table] [--scales 1,2,4] [--shared DIR]`:
// runs the named in-process scenarios (issue 6) and prints one line per scenario
// and scale, then how throughput grows with size (ratios against the first
// scale), so super-linear cost shows. Exit 0, 1 when a scenario fails, 2 for bad
// usage.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "control/process_heap.h"
#include "sim/bench_scenarios.h"

namespace muster::cli {
namespace {

struct BenchFlags {
  std::vector<std::string> scenarios;
  std::string output_format = "table";
  std::string scales = "1";
  std::string shared;
  std::string decisions;  // file for what the scenarios decided
  bool no_shortcuts = false;
};

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::string TableLine(const sim::BenchResult& r) {
  std::ostringstream o;
  o << r.scenario << " x" << Fixed(r.scale, r.scale == static_cast<int64_t>(r.scale) ? 0 : 2)
    << " [" << r.path << "] " << r.size << ": " << r.work << " " << r.unit << " in "
    << Fixed(r.wall_seconds, 3) << " s = " << Fixed(r.throughput, 0) << " " << r.unit << "/s";
  if (r.p99_ms) {
    o << ", per " << r.p99_of << " p50 " << Fixed(r.p50_ms.value_or(0), 3) << " / p99 "
      << Fixed(*r.p99_ms, 3) << " / max " << Fixed(r.max_ms.value_or(0), 3) << " ms";
  }
  o << ", cpu " << Fixed(r.cpu_seconds, 3) << " s, setup " << Fixed(r.setup_seconds, 2)
    << " s, peak RSS " << r.peak_rss_kb / 1024 << " MiB";
  for (const auto& [k, v] : r.details)
    o << ", " << k << " " << Fixed(v, v == static_cast<int64_t>(v) ? 0 : 2);
  if (!r.note.empty()) o << " (" << r.note << ")";
  return o.str();
}

nlohmann::ordered_json ToJson(const sim::BenchResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["scale"] = r.scale;
  j["path"] = r.path;
  j["size"] = r.size;
  j["unit"] = r.unit;
  j["work"] = r.work;
  j["wallSeconds"] = r.wall_seconds;
  j["cpuSeconds"] = r.cpu_seconds;
  j["setupSeconds"] = r.setup_seconds;
  j["throughput"] = r.throughput;
  if (r.p99_ms) {
    if (r.p50_ms) j["p50Ms"] = *r.p50_ms;
    j["p99Ms"] = *r.p99_ms;
    if (r.max_ms) j["maxMs"] = *r.max_ms;
    j["p99Of"] = r.p99_of;
  }
  j["peakRssKiB"] = r.peak_rss_kb;
  nlohmann::ordered_json d = nlohmann::ordered_json::object();
  for (const auto& [k, v] : r.details) d[k] = v;
  j["details"] = d;
  if (!r.note.empty()) j["note"] = r.note;
  return j;
}

int RunBench(BenchFlags flags) {
  std::vector<double> scales;
  std::stringstream ss(flags.scales);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    double v = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !(v > 0) || v > 64) {
      std::cerr << "muster bench: --scales: \"" << item << "\" is not a number in (0, 64]\n";
      return 2;
    }
    scales.push_back(v);
  }
  if (scales.empty()) scales.push_back(1);
  const auto known = sim::BenchScenarioNames();
  if (flags.scenarios.empty()) flags.scenarios = known;
  for (const auto& s : flags.scenarios) {
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      std::cerr << "muster bench: unknown scenario \"" << s << "\" (";
      for (size_t i = 0; i < known.size(); ++i) std::cerr << (i ? ", " : "") << known[i];
      std::cerr << ")\n";
      return 2;
    }
  }
  sim::BenchOptions options;
  if (!flags.shared.empty()) {
    options.shared_dir = flags.shared;
  } else if (const char* env = std::getenv("MUSTER_SHARED_DIR"); env && *env) {
    options.shared_dir = env;
  }
  std::string decisions;
  if (!flags.decisions.empty()) options.decisions = &decisions;
  options.no_shortcuts = flags.no_shortcuts;
  const bool json = flags.output_format == "json";
  nlohmann::ordered_json results = nlohmann::ordered_json::array();
  nlohmann::ordered_json growth = nlohmann::ordered_json::array();
  std::vector<std::string> growth_lines;
  int rc = 0;
  for (const auto& name : flags.scenarios) {
    std::vector<sim::BenchResult> runs;
    for (double scale : scales) {
      options.scale = scale;
      if (options.decisions != nullptr) {
        decisions += "# " + name + " x" + Fixed(scale, 3) + "\n";
      }
      auto r = sim::RunBenchScenario(name, options);
      if (!r.ok()) {
        std::cerr << "muster bench: " << name << ": " << r.status().ToString() << "\n";
        rc = 1;
        break;
      }
      if (json) {
        results.push_back(ToJson(*r));
      } else {
        std::cout << TableLine(*r) << "\n";
        std::cout.flush();
      }
      runs.push_back(std::move(*r));
    }
    // Throughput at each scale over the first: 1.0 is linear cost; below 1 the
    // cost per unit of work grows with size.
    if (runs.size() > 1 && runs[0].throughput > 0) {
      nlohmann::ordered_json g;
      g["scenario"] = name;
      nlohmann::ordered_json ratios = nlohmann::ordered_json::object();
      std::string line = name + " throughput vs x" + Fixed(runs[0].scale, 0) + ":";
      for (size_t i = 1; i < runs.size(); ++i) {
        double ratio = runs[i].throughput / runs[0].throughput;
        ratios["x" + Fixed(runs[i].scale,
                           runs[i].scale == static_cast<int64_t>(runs[i].scale) ? 0 : 2)] = ratio;
        line += " x" + Fixed(runs[i].scale, 0) + " " + Fixed(ratio, 2);
      }
      g["throughputRatio"] = ratios;
      growth.push_back(g);
      growth_lines.push_back(line);
    }
  }
  if (json) {
    nlohmann::ordered_json out;
    out["results"] = results;
    out["growth"] = growth;
    out["peakRssKiB"] = sim::PeakRssKb();
    out["allocator"] = control::HeapAllocatorName();
    std::cout << out.dump(2) << "\n";
  } else {
    for (const auto& l : growth_lines) std::cout << l << "\n";
  }
  std::cout.flush();
  if (!flags.decisions.empty()) {
    std::ofstream f(flags.decisions, std::ios::binary);
    f << decisions;
    if (!f) {
      std::cerr << "muster bench: cannot write " << flags.decisions << "\n";
      return 1;
    }
  }
  return rc;
}

}  // namespace

void RegisterBenchCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* cmd =
      app.add_subcommand("bench",
                         "Run named performance scenarios in-process (placement-5k, gang-10k, "
                         "admission-1k-cq, kueue-baseline, sim-philly)");
  cmd->add_option("scenario", flags->scenarios, "scenarios to run (default: all)");
  cmd->add_option("-o,--output-format", flags->output_format, "json or table")
      ->check(CLI::IsMember({"json", "table"}));
  cmd->add_option("--scales", flags->scales, "size multipliers, e.g. 1,2,4 (default 1)");
  cmd->add_option(
      "--shared", flags->shared,
      "shared data dir holding traces/philly (default $MUSTER_SHARED_DIR or ../shared)");
  cmd->add_option("--decisions", flags->decisions,
                  "write what each scenario decided (decision log, final workload states, "
                  "plans) to this file, for bench/decisions_check.sh");
  cmd->add_flag("--no-shortcuts", flags->no_shortcuts,
                "admit without the shortcuts that must not change a decision (sleeping "
                "queues, shared flavor assignments, caches): slower; to check them");
  cmd->callback([flags, &exit_code] { exit_code = RunBench(*flags); });
}

}  // namespace muster::cli
