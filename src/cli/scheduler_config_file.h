// `--config FILE` of `muster serve` and `muster kube`: muster's SchedulerConfiguration,
// Volcano's volcano-scheduler.conf (or its ConfigMap) mapped onto it, or a Kueue
// Configuration, read as `muster simulate --config` reads it. It takes the place of
// such objects in the store or the cluster.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "model/manifest_set.h"

namespace muster::cli {

struct SchedulerConfigFile {
  std::optional<model::SchedulerConfiguration> scheduler_config;
  std::optional<model::KueueConfiguration> kueue_config;
};

// Prints validate's diagnostics (Volcano's actions and plugins muster does not act on
// are warnings) and which configuration was read to `err`, prefixed with `who`
// ("muster serve"); nullopt when the file has errors or holds no configuration.
std::optional<SchedulerConfigFile> LoadSchedulerConfigFile(const std::string& path,
                                                           const std::string& who,
                                                           std::ostream& err);

}  // namespace muster::cli
