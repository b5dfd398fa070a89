// `muster gen cluster ...` and `muster gen workload ...`: synthetic manifests for
// benchmarks and what-ifs (issue 6), deterministic from --seed. Exit 0, 1 when the
// output file cannot be written, 2 for bad usage.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "sim/generator.h"

namespace muster::cli {
namespace {

int Write(const std::string& text, const std::string& file) {
  if (file.empty() || file == "-") {
    std::cout << text;
    std::cout.flush();
    return 0;
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "muster gen: cannot write " << file << "\n";
    return 1;
  }
  return 0;
}

struct WorkloadFlags {
  sim::WorkloadSpec spec;
  std::string mix = "small:0.6,medium:0.3,large:0.1";
  std::string output;
};

}  // namespace

void RegisterGenCommand(CLI::App& app, int& exit_code) {
  CLI::App* gen = app.add_subcommand("gen", "Generate synthetic cluster or workload manifests");
  gen->require_subcommand(1);

  auto cluster = std::make_shared<sim::ClusterSpec>();
  auto cluster_out = std::make_shared<std::string>();
  CLI::App* c = gen->add_subcommand(
      "cluster",
      "Nodes, NodeResourceTopology, a Kueue Topology, a ResourceFlavor and optional queues");
  c->add_option("--nodes", cluster->nodes, "nodes")->check(CLI::Range(1, 1000000));
  c->add_option("--gpus-per-node", cluster->gpus_per_node, "GPUs per node")
      ->check(CLI::Range(0, 1024));
  c->add_option("--numa", cluster->numa, "NUMA zones per node")->check(CLI::Range(1, 64));
  c->add_option("--racks", cluster->racks, "racks (0 = one per 32 nodes)")
      ->check(CLI::Range(0, 1000000));
  c->add_option("--blocks", cluster->blocks, "blocks the racks are split into")
      ->check(CLI::Range(1, 1000000));
  c->add_option("--cpu-per-node", cluster->cpu_per_node, "cpu cores per node")
      ->check(CLI::Range(1, 100000));
  c->add_option("--memory-gi-per-node", cluster->memory_gi_per_node, "memory per node in GiB")
      ->check(CLI::Range(1, 1000000));
  c->add_option("--gpu-product", cluster->gpu_product, "nvidia.com/gpu.product label value");
  c->add_option("--cluster-queues", cluster->cluster_queues,
                "ClusterQueues sharing the cluster (0 = no queues)")
      ->check(CLI::Range(0, 100000));
  c->add_option("--cohorts", cluster->cohorts, "cohorts the ClusterQueues are spread over")
      ->check(CLI::Range(1, 100000));
  c->add_option("--seed", cluster->seed, "seed (recorded; the layout follows the shape)");
  c->add_option("-o,--output", *cluster_out, "write to this file instead of stdout");
  c->callback([cluster, cluster_out, &exit_code] {
    exit_code = Write(sim::ClusterYaml(*cluster), *cluster_out);
  });

  auto wf = std::make_shared<WorkloadFlags>();
  CLI::App* w =
      gen->add_subcommand("workload",
                          "Jobs (Indexed Jobs, PyTorchJobs) with gangs of 1-512 pods, priorities, "
                          "topology requests, arrival times and durations");
  w->add_option("--jobs", wf->spec.jobs, "jobs")->check(CLI::Range(0, 10000000));
  w->add_option("--mix", wf->mix, "class fractions: small:F,medium:F,large:F");
  w->add_option("--seed", wf->spec.seed, "seed");
  w->add_option("--queues", wf->spec.queues,
                "spread jobs over the LocalQueues of `gen cluster --cluster-queues N` (0 = none)")
      ->check(CLI::Range(0, 100000));
  w->add_option("--gpus-per-node", wf->spec.gpus_per_node, "GPUs per node of the target cluster")
      ->check(CLI::Range(1, 1024));
  w->add_option(
       "--rack-gpus", wf->spec.rack_gpus,
       "GPUs per rack of the target cluster (large gangs within half a rack ask for a rack, "
       "bigger ones for a block)")
      ->check(CLI::Range(1, 100000000));
  w->add_option("--mean-interarrival", wf->spec.mean_interarrival_seconds,
                "mean seconds between submissions (exponential)")
      ->check(CLI::PositiveNumber);
  w->add_option("-o,--output", wf->output, "write to this file instead of stdout");
  w->callback([wf, &exit_code] {
    auto mix = sim::ParseJobMix(wf->mix);
    if (!mix.ok()) {
      std::cerr << "muster gen workload: --mix: " << mix.status().message() << "\n";
      exit_code = 2;
      return;
    }
    wf->spec.mix = *mix;
    exit_code = Write(sim::WorkloadYaml(wf->spec), wf->output);
  });
}

}  // namespace muster::cli
