// `muster simulate -f PATH... [--until DUR] [--config FILE] [-o json|table]
//  [--output FILE] [--seed N] [--trace FORMAT:PATH] [--report DIR]`: runs the manifests in
// virtual time (CONTRACT section 3). Exit 0 after a completed simulation, 1 for invalid
// input, 2 for bad
// usage.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "api/decode.h"
#include "cli/commands.h"
#include "core/duration.h"
#include "sim/report_html.h"
#include "sim/result_json.h"
#include "sim/result_table.h"
#include "sim/simulator.h"
#include "sim/trace_philly.h"
#include "workloads/workloads.h"

namespace muster::cli {
namespace {

struct SimulateFlags {
  std::vector<std::string> paths;
  std::vector<std::string> traces;  // FORMAT:PATH
  std::string until;
  std::string config;
  std::string output_format = "table";
  std::string output_file;
  std::string report_dir;  // --report: DIR/index.html
  uint64_t seed = 0;
  bool check_invariants = false;
  bool log_decisions = false;
  bool no_shortcuts = false;
};

// Prints `validate`'s lines for the diagnostics; true when any is an error.
bool ReportDiagnostics(const api::DecodeResult& decoded) {
  for (const auto& d : decoded.diagnostics) std::cerr << d.ToString() << "\n";
  return decoded.HasErrors();
}

// Adds a trace's cluster (nodes, and for Philly its team queues) to the manifests
// and its jobs to the workloads, after the manifests' own: a trace replays onto
// the cluster and queues the -f inputs describe, or onto its own.
Status MergeTrace(const std::string& spec, model::ManifestSet& manifests,
                  std::vector<model::Workload>& workloads) {
  auto reader = sim::OpenTrace(spec);
  if (!reader.ok()) return reader.status();
  const sim::TraceCluster& cluster = (*reader)->cluster();
  manifests.nodes.insert(manifests.nodes.end(), cluster.nodes.begin(), cluster.nodes.end());
  const model::ManifestSet& q = cluster.queues;
  manifests.resource_flavors.insert(manifests.resource_flavors.end(), q.resource_flavors.begin(),
                                    q.resource_flavors.end());
  manifests.cluster_queues.insert(manifests.cluster_queues.end(), q.cluster_queues.begin(),
                                  q.cluster_queues.end());
  manifests.local_queues.insert(manifests.local_queues.end(), q.local_queues.begin(),
                                q.local_queues.end());
  manifests.cohorts.insert(manifests.cohorts.end(), q.cohorts.begin(), q.cohorts.end());
  workloads.reserve(workloads.size() + static_cast<size_t>((*reader)->size()));
  while (auto w = (*reader)->Next()) workloads.push_back(std::move(*w));
  return Status::Ok();
}

int RunSimulate(const SimulateFlags& flags) {
  sim::SimOptions options;
  options.seed = flags.seed;
  options.check_invariants = flags.check_invariants;
  options.no_shortcuts = flags.no_shortcuts;
  if (!flags.until.empty()) {
    auto until = ParseDurationSeconds(flags.until);
    if (until.ok() && *until < 0) until = InvalidArgument("\"" + flags.until + "\" is negative");
    if (!until.ok()) {
      std::cerr << "muster simulate: --until: " << until.status().message() << "\n";
      return 2;
    }
    options.until = *until;
  }

  if (flags.paths.empty() && flags.traces.empty()) {
    std::cerr << "muster simulate: give manifests with -f, a trace with --trace, or both\n";
    return 2;
  }
  api::DecodeResult decoded;
  if (!flags.paths.empty()) decoded = api::LoadPaths(flags.paths);
  if (ReportDiagnostics(decoded)) return 1;
  // Valid, and acted on by serve (or the cluster), but no workload here.
  for (api::Diagnostic d : decoded.validated_only) {
    d.warning = true;
    d.message = d.kind == "CronJob"
                    ? "not simulated: muster simulate runs Jobs, not schedules (give the Job "
                      "its jobTemplate makes)"
                    : "not simulated: a bare Pod is a workload in muster serve and kube only";
    std::cerr << d.ToString() << "\n";
  }

  if (!flags.config.empty()) {
    api::DecodeResult config = api::LoadPaths({flags.config});
    if (ReportDiagnostics(config)) return 1;
    if (!config.manifests.kueue_config && !config.manifests.scheduler_config) {
      std::cerr << flags.config
                << ": no Configuration (config.kueue.x-k8s.io/v1beta1) or "
                   "SchedulerConfiguration (muster.dev/v1alpha1) found\n";
      return 1;
    }
    // --config overrides configuration objects found among the -f inputs.
    if (config.manifests.kueue_config)
      decoded.manifests.kueue_config = config.manifests.kueue_config;
    if (config.manifests.scheduler_config) {
      decoded.manifests.scheduler_config = config.manifests.scheduler_config;
    }
  }

  auto workloads = workloads::BuildWorkloads(decoded.manifests);
  if (!workloads.ok()) {
    std::cerr << "muster simulate: " << workloads.status().message() << "\n";
    return 1;
  }
  for (const std::string& spec : flags.traces) {
    Status merged = MergeTrace(spec, decoded.manifests, *workloads);
    if (!merged.ok()) {
      std::cerr << "muster simulate: --trace " << spec << ": " << merged.message() << "\n";
      return merged.code() == StatusCode::kInvalidArgument ? 2 : 1;
    }
  }
  auto simulator = sim::Simulator::Create(decoded.manifests, std::move(*workloads), options);
  if (!simulator.ok()) {
    std::cerr << "muster simulate: " << simulator.status().ToString() << "\n";
    return 1;
  }
  Status run = (*simulator)->Run();
  if (flags.log_decisions) std::cerr << (*simulator)->engine().log().ToString();
  if (!run.ok()) {
    std::cerr << "muster simulate: " << run.ToString() << "\n";
    return 1;
  }
  sim::SimulationResult result = (*simulator)->BuildResult();
  if (!flags.report_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(flags.report_dir, ec);
    std::string path = (std::filesystem::path(flags.report_dir) / "index.html").string();
    std::ofstream report(path, std::ios::binary | std::ios::trunc);
    report << sim::RenderReportHtml(result);
    report.close();
    if (ec || !report) {
      std::cerr << "muster simulate: cannot write " << path << "\n";
      return 2;
    }
  }
  std::string text = flags.output_format == "json" ? sim::ToJson(result) : sim::ToTable(result);
  if (flags.output_file.empty()) {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  std::ofstream out(flags.output_file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "muster simulate: cannot write " << flags.output_file << "\n";
    return 2;
  }
  return 0;
}

}  // namespace

void RegisterSimulateCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Run clusters, queues and workloads in virtual time and report what happened");
  cmd->add_option("-f,--filename", flags->paths,
                  "manifest file or directory (repeatable; '-' for stdin)");
  cmd->add_option("--trace", flags->traces,
                  "replay a public trace: openb:DIR (Alibaba cluster-trace-gpu-v2023) or "
                  "philly:FILE (Microsoft Philly job summary)");
  cmd->add_option("--until", flags->until, "stop at this virtual time (\"90\", \"15m\", \"2h\")");
  cmd->add_option("--config", flags->config,
                  "Kueue Configuration or muster SchedulerConfiguration manifest");
  cmd->add_option("-o,--output-format", flags->output_format, "json or table")
      ->check(CLI::IsMember({"json", "table"}));
  cmd->add_option("--output", flags->output_file, "write the result to this file");
  cmd->add_option("--report", flags->report_dir,
                  "also write an HTML report with charts to DIR/index.html");
  cmd->add_option("--seed", flags->seed, "seed for randomised inputs");
  cmd->add_flag("--check-invariants", flags->check_invariants,
                "verify engine invariants after every cycle (slower)");
  cmd->add_flag("--log-decisions", flags->log_decisions,
                "print the engine's decision log to stderr");
  cmd->add_flag("--no-shortcuts", flags->no_shortcuts,
                "admit without the shortcuts that must not change a decision (sleeping "
                "queues, shared flavor assignments, caches): slower; to check them");
  cmd->callback([flags, &exit_code] { exit_code = RunSimulate(*flags); });
}

}  // namespace muster::cli
