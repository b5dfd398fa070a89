// Engine settings: config.kueue.x-k8s.io Configuration (the parts muster uses) and
// muster.dev/v1alpha1 SchedulerConfiguration (docs/scheduler-configuration.md).
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

model::FairSharingConfig DecodeFairSharingConfig(const YamlValue& v) {
  using S = model::FairSharingPreemptionStrategy;
  model::FairSharingConfig fs;
  v.Get("enable").Read(fs.enable);
  YamlValue strategies = v.Get("preemptionStrategies");
  if (strategies.IsSet()) {
    fs.preemption_strategies.clear();
    for (const auto& s : strategies.Items()) {
      if (auto e = s.Enum({"LessThanOrEqualToFinalShare", "LessThanInitialShare"})) {
        fs.preemption_strategies.push_back(static_cast<S>(*e));
      }
    }
  }
  return fs;
}

model::WaitForPodsReadyConfig DecodeWaitForPodsReady(const YamlValue& v) {
  model::WaitForPodsReadyConfig w;
  v.Get("enable").Read(w.enable);
  if (auto t = v.Get("timeout").Duration()) w.timeout_seconds = *t;
  // Kueue defaults blockAdmission to the value of enable.
  w.block_admission = w.enable;
  v.Get("blockAdmission").Read(w.block_admission);
  if (auto t = v.Get("recoveryTimeout").Duration()) w.recovery_timeout_seconds = *t;
  YamlValue rs = v.Get("requeuingStrategy");
  YamlValue ts = rs.Get("timestamp");
  if (ts.IsSet()) {
    if (auto e = ts.Enum({"Eviction", "Creation"}))
      w.requeuing_timestamp = *e == 0 ? "Eviction" : "Creation";
  }
  if (auto n = rs.Get("backoffLimitCount").Int32(0)) w.backoff_limit_count = *n;
  if (auto b = rs.Get("backoffBaseSeconds").Int32(0)) w.backoff_base_seconds = *b;
  if (auto b = rs.Get("backoffMaxSeconds").Int32(0)) w.backoff_max_seconds = *b;
  return w;
}

}  // namespace

void ReadPositiveDuration(const YamlValue& v, std::optional<double>& out) {
  if (!v.IsSet()) return;
  auto d = v.Duration();
  if (!d) return;
  if (*d <= 0) {
    v.Error("must be a positive duration");
  } else {
    out = *d;
  }
}

void DecodeKueueConfiguration(const YamlValue& root, model::ObjectMeta meta, DecodeResult& out) {
  model::KueueConfiguration cfg;
  cfg.fair_sharing = DecodeFairSharingConfig(root.Get("fairSharing"));
  cfg.wait_for_pods_ready = DecodeWaitForPodsReady(root.Get("waitForPodsReady"));
  if (out.manifests.kueue_config) {
    root.Get("kind").Error("a second Configuration; the first is at " +
                           out.manifests.kueue_config->meta.source.file + ":" +
                           std::to_string(out.manifests.kueue_config->meta.source.line));
  }
  cfg.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.kueue_config = std::move(cfg);
}

void DecodeSchedulerConfiguration(const YamlValue& root, model::ObjectMeta meta,
                                  DecodeResult& out) {
  model::SchedulerConfiguration cfg;
  // Settings sit at the top level like Kueue's Configuration; a `spec` map is
  // accepted too, for users who expect one.
  YamlValue v = root.Get("spec").IsSet() ? root.Get("spec") : root;
  YamlValue scoring = v.Get("scoringPolicy");
  if (scoring.IsSet()) {
    if (auto s = scoring.Enum({"Binpack", "Spread", "GpuPacking", "BestFit", "FGD"})) {
      cfg.scoring = static_cast<model::ScoringPolicy>(*s);
    }
  }
  for (const auto& [resource, weight] : v.Get("binpackWeights").Entries()) {
    if (auto w = weight.Int(0, 1000000)) cfg.binpack_weights[resource] = *w;
  }
  if (auto d = v.Get("reservationAfter").Duration()) cfg.reservation_after_seconds = *d;
  v.Get("quotaOnlyAdmission").Read(cfg.quota_only_admission);
  v.Get("maxAdmissionsPerQueuePerCycle").Read(cfg.max_admissions_per_queue_per_cycle);
  // What Volcano's actions and plugins switch (docs: "Volcano's scheduler configuration").
  YamlValue vol = v.Get("volcano");
  vol.Get("preempt").Read(cfg.volcano.preempt);
  vol.Get("reclaim").Read(cfg.volcano.reclaim);
  vol.Get("drfJobOrder").Read(cfg.volcano.drf_job_order);
  vol.Get("sla").Read(cfg.volcano.sla);
  vol.Get("taskTopology").Read(cfg.volcano.task_topology);
  if (auto w = vol.Get("taskTopologyWeight").Int(0, 1000000)) {
    cfg.volcano.task_topology_weight = static_cast<int32_t>(*w);
  }
  ReadPositiveDuration(vol.Get("slaWaitingTime"), cfg.volcano.sla_waiting_seconds);
  if (out.manifests.scheduler_config) {
    root.Get("kind").Error("a second SchedulerConfiguration; the first is at " +
                           out.manifests.scheduler_config->meta.source.file + ":" +
                           std::to_string(out.manifests.scheduler_config->meta.source.line));
  }
  cfg.meta = std::move(meta);
  if (!root.ctx().has_errors()) out.manifests.scheduler_config = std::move(cfg);
}

}  // namespace muster::api::internal
