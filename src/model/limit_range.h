// A v1 LimitRange: per-namespace defaults and bounds for containers, pods and claims.
// Its defaults become part of a job's pod templates (kube-apiserver's LimitRanger
// writes them into every pod) and its bounds decide whether Kueue admits the job.
#pragma once

#include <string>
#include <vector>

#include "model/meta.h"
#include "model/pod.h"

namespace muster::model {

struct LimitRangeItem {
  std::string type;  // "Container", "Pod", "PersistentVolumeClaim" or a qualified name
  QuantityMap max;
  QuantityMap min;
  // For type Container, defaulted as upstream does on create: `default_limit` from
  // max, `default_request` from default_limit, then from min.
  QuantityMap default_limit;  // spec.limits[].default
  QuantityMap default_request;
  QuantityMap max_limit_request_ratio;
};

struct LimitRange {
  ObjectMeta meta;
  std::vector<LimitRangeItem> limits;
};

}  // namespace muster::model
