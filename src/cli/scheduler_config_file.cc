#include "cli/scheduler_config_file.h"

#include "api/decode.h"

namespace muster::cli {

std::optional<SchedulerConfigFile> LoadSchedulerConfigFile(const std::string& path,
                                                           const std::string& who,
                                                           std::ostream& err) {
  api::DecodeResult config = api::LoadPaths({path});
  for (const auto& d : config.diagnostics) err << d.ToString() << "\n";
  if (config.HasErrors()) return std::nullopt;
  if (!config.manifests.kueue_config && !config.manifests.scheduler_config) {
    err << path
        << ": no Configuration (config.kueue.x-k8s.io/v1beta1), SchedulerConfiguration "
           "(muster.dev/v1alpha1) or volcano-scheduler.conf found\n";
    return std::nullopt;
  }
  SchedulerConfigFile out;
  out.scheduler_config = config.manifests.scheduler_config;
  out.kueue_config = config.manifests.kueue_config;
  if (out.scheduler_config) {
    const std::string& from = out.scheduler_config->mapped_from;
    err << who << ": scheduler configuration from " << path
        << (from.empty() ? "" : " (" + from + ")") << "\n";
  }
  if (out.kueue_config) err << who << ": Kueue configuration from " << path << "\n";
  return out;
}

}  // namespace muster::cli
