// `muster experiment fgd-packing --trace DIR [--policy fgd,bestfit,...]
//  [--seeds 42-51] [--expected FILE] [--tune 1.3] [--ties name|random] [-j N]
//  [--per-seed]`:
// reproduces the packing experiment of the FGD paper (Weng et al., ATC'23) on the
// openb trace with sim::RunPackingExperiment and prints muster's GPU allocation
// ratio at 130% arrived demand next to the published simulator's
// (analysis_allo_discrete.csv, column "130"), with the difference in points.
// Exit 0 after a completed run, 1 for unreadable inputs, 2 for bad usage.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "sim/packing_experiment.h"
#include "sim/trace_openb.h"

namespace muster::cli {
namespace {

namespace fs = std::filesystem;

struct ExperimentFlags {
  std::string trace;
  std::string expected;  // "" = <trace>/../fgd-expected/analysis_allo_discrete.csv
  std::string policies = "fgd,bestfit,gpupacking";
  std::string seeds = "42-51";
  double tune = 1.3;
  int jobs = 0;  // 0 = hardware threads
  bool per_seed = false;
  std::string ties = "name";
};

// The published simulator's policy names, in its table order; muster runs the
// ones it has a scorer for.
struct PolicyRow {
  const char* published;
  std::optional<model::ScoringPolicy> muster;
};
const PolicyRow kRows[] = {
    {"FGD", model::ScoringPolicy::kFgd},
    {"BestFit", model::ScoringPolicy::kBestFit},
    {"GpuPacking", model::ScoringPolicy::kGpuPacking},
    {"GpuClustering", std::nullopt},
    {"DotProd", std::nullopt},
    {"Random", std::nullopt},
};

std::string PolicyName(model::ScoringPolicy p) {
  using P = model::ScoringPolicy;
  switch (p) {
    case P::kFgd:
      return "FGD";
    case P::kBestFit:
      return "BestFit";
    case P::kGpuPacking:
      return "GpuPacking";
    case P::kBinpack:
      return "binpack";
    case P::kSpread:
      return "spread";
  }
  return "?";
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

// "42-51" or "42,44,50" (or a mix): seeds in the given order, duplicates dropped.
std::optional<std::vector<uint64_t>> ParseSeeds(const std::string& text) {
  std::vector<uint64_t> out;
  for (const std::string& part : Split(text, ',')) {
    try {
      size_t dash = part.find('-');
      size_t used = 0;
      if (dash == std::string::npos) {
        uint64_t v = std::stoull(part, &used);
        if (used != part.size()) return std::nullopt;
        out.push_back(v);
        continue;
      }
      std::string lo_s = part.substr(0, dash), hi_s = part.substr(dash + 1);
      uint64_t lo = std::stoull(lo_s, &used);
      if (used != lo_s.size()) return std::nullopt;
      uint64_t hi = std::stoull(hi_s, &used);
      if (used != hi_s.size() || hi < lo || hi - lo > 10000) return std::nullopt;
      for (uint64_t v = lo; v <= hi; ++v) out.push_back(v);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  std::vector<uint64_t> unique;
  for (uint64_t v : out) {
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  }
  return unique;
}

// Published values: (policy name without its "NN-" prefix, seed) -> column "130"
// for `workload` at `tune`. The file is upstream's merged analysis CSV.
Result<std::map<std::pair<std::string, uint64_t>, double>> ReadExpected(const std::string& path,
                                                                        const std::string& workload,
                                                                        double tune) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read " + path);
  std::string line;
  if (!std::getline(in, line)) return InvalidArgument(path + ": empty file");
  auto header =
      sim::csv::Header::Parse(line, {"workload", "sc_policy", "tune", "seed", "130"}, path);
  if (!header.ok()) return header.status();
  std::map<std::pair<std::string, uint64_t>, double> out;
  int64_t row = 1;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty()) continue;
    auto cols = sim::csv::SplitLine(line);
    if (cols.size() < header->columns()) continue;  // a short row has no column 130
    if (cols[header->Index("workload")] != workload) continue;
    const std::string where = path + ":" + std::to_string(row);
    auto t = sim::csv::ParseDouble(cols[header->Index("tune")], where);
    if (!t.ok()) return t.status();
    if (std::abs(*t - tune) > 1e-9) continue;
    auto seed = sim::csv::ParseInt(cols[header->Index("seed")], where);
    if (!seed.ok()) return seed.status();
    auto v = sim::csv::ParseDouble(cols[header->Index("130")], where);
    if (!v.ok()) return v.status();
    std::string policy(cols[header->Index("sc_policy")]);
    if (auto dash = policy.find('-'); dash != std::string::npos) policy = policy.substr(dash + 1);
    out[{policy, static_cast<uint64_t>(*seed)}] = *v;
  }
  return out;
}

std::string Points(std::optional<double> v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *v);
  return buf;
}

std::string Diff(std::optional<double> a, std::optional<double> b) {
  if (!a || !b) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f", *a - *b);
  return buf;
}

int RunFgdPacking(const ExperimentFlags& flags) {
  auto seeds = ParseSeeds(flags.seeds);
  if (!seeds || seeds->empty()) {
    std::cerr << "muster experiment: --seeds: expected N, N-M or a comma list, got \""
              << flags.seeds << "\"\n";
    return 2;
  }
  std::vector<model::ScoringPolicy> policies;
  for (const std::string& name : Split(flags.policies, ',')) {
    auto p = sim::ParseScoringPolicy(name);
    if (!p.ok()) {
      std::cerr << "muster experiment: --policy: " << p.status().message() << "\n";
      return 2;
    }
    if (std::find(policies.begin(), policies.end(), *p) == policies.end()) policies.push_back(*p);
  }

  auto reader = sim::OpenOpenbTrace(flags.trace);
  if (!reader.ok()) {
    std::cerr << "muster experiment: " << reader.status().ToString() << "\n";
    return 1;
  }
  const std::vector<model::Node> nodes = (*reader)->cluster().nodes;
  std::vector<model::Workload> pods;
  pods.reserve(static_cast<size_t>((*reader)->size()));
  while (auto w = (*reader)->Next()) pods.push_back(std::move(*w));
  // The published rows name the workload after the pod list, as upstream's data dir.
  fs::path trace_path(flags.trace);
  const std::string workload = fs::is_directory(trace_path)
                                   ? fs::path(sim::OpenbOptions{}.default_pod_list).stem().string()
                                   : trace_path.stem().string();
  std::string expected_path = flags.expected;
  if (expected_path.empty()) {
    fs::path dir = fs::is_directory(trace_path) ? trace_path : trace_path.parent_path();
    expected_path =
        (dir.lexically_normal().parent_path() / "fgd-expected" / "analysis_allo_discrete.csv")
            .string();
  }
  auto expected = ReadExpected(expected_path, workload, flags.tune);
  if (!expected.ok()) {
    std::cerr << "muster experiment: " << expected.status().ToString() << "\n";
    return 1;
  }

  // Every (policy, seed) run is independent: run them on worker threads, each
  // writing its own slot, so the output does not depend on the thread count.
  struct Run {
    model::ScoringPolicy policy;
    uint64_t seed;
    std::optional<sim::PackingResult> result;
    std::string error;
  };
  std::vector<Run> runs;
  for (auto p : policies) {
    for (uint64_t s : *seeds) runs.push_back({p, s, std::nullopt, ""});
  }
  sim::PackingOptions options;
  options.tune_ratio = flags.tune;
  options.random_tie_break = flags.ties == "random";
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < runs.size(); i = next++) {
      auto r = sim::RunPackingExperiment(nodes, pods, runs[i].policy, runs[i].seed, options);
      if (r.ok()) {
        runs[i].result = std::move(*r);
      } else {
        runs[i].error = r.status().ToString();
      }
    }
  };
  int jobs = flags.jobs > 0 ? flags.jobs : static_cast<int>(std::thread::hardware_concurrency());
  jobs = std::clamp(jobs, 1, static_cast<int>(runs.size()));
  std::vector<std::thread> threads;
  for (int t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  for (const Run& r : runs) {
    if (!r.result) {
      std::cerr << "muster experiment: seed " << r.seed << ": " << r.error << "\n";
      return 1;
    }
  }

  int64_t gpus = 0;
  for (const auto& n : nodes) gpus += n.allocatable.Get(kNvidiaGpu);
  std::printf(
      "FGD packing experiment (Weng et al., ATC'23): %s, %zu pods on %zu nodes (%lld GPUs)\n",
      workload.c_str(), pods.size(), nodes.size(), static_cast<long long>(gpus));
  std::printf("GPU allocation ratio (%%) at %.0f%% arrived GPU demand, mean of seeds %s\n",
              flags.tune * 100, flags.seeds.c_str());
  std::printf("published: %s\n\n", expected_path.c_str());
  std::printf("%-14s %8s %10s %7s %16s\n", "policy", "muster", "published", "diff",
              "muster min..max");
  for (const PolicyRow& row : kRows) {
    std::optional<double> ours, theirs;
    double lo = 1e9, hi = -1e9;
    if (row.muster && std::find(policies.begin(), policies.end(), *row.muster) != policies.end()) {
      double sum = 0;
      int n = 0;
      for (const Run& r : runs) {
        if (r.policy != *row.muster) continue;
        double v = r.result->allocation_at_130_percent;
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        ++n;
      }
      ours = sum / n;
    }
    double sum = 0;
    size_t n = 0;
    for (uint64_t s : *seeds) {
      auto it = expected->find({row.published, s});
      if (it == expected->end()) continue;
      sum += it->second;
      ++n;
    }
    // Published means cover the same seeds as ours, or are left out.
    if (n == seeds->size()) theirs = sum / static_cast<double>(n);
    if (!ours && !theirs) continue;
    std::string range = ours ? Points(lo) + ".." + Points(hi) : "-";
    std::printf("%-14s %8s %10s %7s %16s\n", row.published, Points(ours).c_str(),
                Points(theirs).c_str(), Diff(ours, theirs).c_str(), range.c_str());
  }
  for (auto p : policies) {
    bool listed = false;
    for (const PolicyRow& row : kRows) listed |= row.muster && *row.muster == p;
    if (!listed) {
      double sum = 0;
      for (const Run& r : runs) sum += r.policy == p ? r.result->allocation_at_130_percent : 0;
      std::printf("%-14s %8s %10s %7s\n", PolicyName(p).c_str(),
                  Points(sum / static_cast<double>(seeds->size())).c_str(), "-", "-");
    }
  }
  if (flags.per_seed) {
    std::printf("\n%-12s %6s %9s %7s %7s %7s %9s\n", "policy", "seed", "arrived%", "pods", "placed",
                "failed", "alloc%");
    for (const Run& r : runs) {
      const sim::PackingResult& pr = *r.result;
      std::printf("%-12s %6llu %9.2f %7lld %7lld %7lld %9.2f\n", PolicyName(r.policy).c_str(),
                  static_cast<unsigned long long>(r.seed),
                  100.0 * static_cast<double>(pr.arrived_gpu_milli) /
                      static_cast<double>(pr.total_gpu_milli),
                  static_cast<long long>(pr.pods_arrived), static_cast<long long>(pr.pods_placed),
                  static_cast<long long>(pr.pods_failed), pr.allocation_at_130_percent);
    }
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

void RegisterExperimentCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("experiment", "Reproduce published scheduling experiments");
  cmd->require_subcommand(1);
  auto flags = std::make_shared<ExperimentFlags>();
  CLI::App* fgd = cmd->add_subcommand(
      "fgd-packing",
      "FGD paper's packing experiment on the openb trace, side by side with the published results");
  fgd->add_option("--trace", flags->trace,
                  "openb trace directory (node and pod lists) or pod-list CSV")
      ->required();
  fgd->add_option("--expected", flags->expected,
                  "published analysis_allo_discrete.csv (default: <trace>/../fgd-expected/)");
  fgd->add_option("--policy", flags->policies,
                  "comma list of fgd, bestfit, gpupacking, binpack, spread");
  fgd->add_option("--seeds", flags->seeds, "seeds: N, N-M or a comma list (default 42-51)");
  fgd->add_option("--tune", flags->tune, "arrived GPU demand at which arrivals stop (1.3 = 130%)")
      ->check(CLI::Range(0.01, 10.0));
  fgd->add_option("-j,--jobs", flags->jobs, "runs in parallel (default: hardware threads)")
      ->check(CLI::Range(0, 1024));
  fgd->add_option(
         "--ties", flags->ties,
         "equal-score nodes: name (first by name, default; matches the published runs) or random")
      ->check(CLI::IsMember({"random", "name"}));
  fgd->add_flag("--per-seed", flags->per_seed, "also print every run");
  fgd->callback([flags, &exit_code] { exit_code = RunFgdPacking(*flags); });
}

}  // namespace muster::cli
