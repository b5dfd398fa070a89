// batch/v1 Job failure and clean-up fields: podFailurePolicy, backoffLimitPerIndex,
// maxFailedIndexes, ttlSecondsAfterFinished, podReplacementPolicy; and its selector. Validation
// follows upstream's pkg/apis/batch/validation; what muster maps onto its whole-gang restarts, or
// does not act on, is said in a warning (docs/batch-jobs.md).
#include <cstdint>
#include <string>

#include "api/decode_common.h"

namespace muster::api::internal {
namespace {

model::PodFailurePolicyRule DecodeRule(const YamlValue& v) {
  model::PodFailurePolicyRule rule;
  static const char* const kActions[] = {"FailJob", "FailIndex", "Ignore", "Count"};
  YamlValue action = v.Get("action");
  if (!action.IsSet()) action.Error("is required");
  if (auto a = action.Enum({"FailJob", "FailIndex", "Ignore", "Count"})) rule.action = kActions[*a];
  YamlValue codes = v.Get("onExitCodes");
  YamlValue conditions = v.Get("onPodConditions");
  if (codes.IsSet() == conditions.IsSet()) {
    v.Error("specifying one of onExitCodes and onPodConditions is required");
  }
  if (codes.IsSet()) {
    YamlValue name = codes.Get("containerName");
    if (auto n = name.String()) rule.container_name = *n;
    YamlValue op = codes.Get("operator");
    if (!op.IsSet()) op.Error("is required");
    if (auto o = op.Enum({"In", "NotIn"})) rule.op = *o == 0 ? "In" : "NotIn";
    YamlValue values = codes.Get("values");
    if (!values.IsSet()) values.Error("is required");
    for (const YamlValue& item : values.Items()) {
      auto code = item.Int(INT32_MIN, INT32_MAX);
      if (!code) continue;
      // Upstream: 0 is refused with In (a success is never a failure to match).
      if (*code == 0 && rule.op == "In") item.Error("must not be 0 for the In operator");
      rule.values.push_back(static_cast<int32_t>(*code));
    }
  }
  for (const YamlValue& c : conditions.Items()) {
    std::string type, status = "True";
    c.Get("type").Read(type);
    if (type.empty()) c.Get("type").Error("is required");
    YamlValue st = c.Get("status");
    if (st.IsSet()) {
      static const char* const kStatus[] = {"True", "False", "Unknown"};
      if (auto s = st.Enum({"True", "False", "Unknown"})) status = kStatus[*s];
    }
    rule.on_pod_conditions.emplace_back(type, status);
  }
  return rule;
}

// spec.selector, manualSelector and podReplacementPolicy: what the API server
// generates and defaults (server/batch_job_defaults.h). The executor runs the pods it
// creates, so a selector adopts nothing; a gang's replacement starts once every pod
// of the last one has ended, which is what Failed says and what TerminatingOrFailed
// allows (its earlier start would have two ranks on one GPU).
void DecodeJobSelection(const YamlValue& spec, bool has_failure_policy) {
  YamlValue selector = spec.Get("selector");
  selector.Get("matchLabels").StringMap();
  for (const YamlValue& e : selector.Get("matchExpressions").Items()) {
    e.Get("key").String();
    e.Get("operator").Enum({"In", "NotIn", "Exists", "DoesNotExist"});
    e.Get("values").StringList();
  }
  YamlValue manual = spec.Get("manualSelector");
  if (manual.Bool().value_or(false)) {
    manual.Warn("not acted on: muster runs the pods it creates and adopts no others");
  }
  YamlValue replacement = spec.Get("podReplacementPolicy");
  if (auto r = replacement.Enum({"TerminatingOrFailed", "Failed"});
      r && *r == 0 && has_failure_policy) {
    replacement.Error(
        "Unsupported value: \"TerminatingOrFailed\": supported values: \"Failed\" "
        "(podFailurePolicy is specified)");
  }
}

}  // namespace

void DecodeJobPolicies(const YamlValue& spec, model::BatchJobSpec& js) {
  DecodeJobSelection(spec, spec.Get("podFailurePolicy").IsSet());
  const bool indexed = js.completion_mode == model::CompletionMode::kIndexed;
  const std::string& restart = js.tmpl.spec.restart_policy;
  YamlValue ttl = spec.Get("ttlSecondsAfterFinished");
  if (auto t = ttl.Int32(0)) js.ttl_seconds_after_finished = *t;

  YamlValue per_index = spec.Get("backoffLimitPerIndex");
  if (auto b = per_index.Int32(0)) {
    js.backoff_limit_per_index = *b;
    if (!indexed) per_index.Error("requires indexed completion mode");
    // Upstream defaults backoffLimit to the int32 maximum when only the per-index
    // limit is set; muster's gang restarts as a whole, so one gang restart is one
    // retry of every index and the per-index limit bounds the restarts.
    // (The API server writes that default into the object: read as unset.)
    if (!spec.Get("backoffLimit").IsSet() || js.backoff_limit == INT32_MAX) js.backoff_limit = *b;
    per_index.Warn(
        "not acted on per index: muster restarts the gang as a whole (every index again), at "
        "most " +
        std::to_string(js.backoff_limit) +
        " times, and the Job fails (reason FailedIndexes) when an index fails after that; "
        "the other indexes do not run on alone");
  }
  YamlValue max_failed = spec.Get("maxFailedIndexes");
  if (auto m = max_failed.Int32(0)) {
    js.max_failed_indexes = *m;
    if (!js.backoff_limit_per_index) {
      max_failed.Error("requires backoffLimitPerIndex");
    } else {
      max_failed.Warn(
          "not acted on: the first index that fails for good fails the whole gang, as if it "
          "were 0");
    }
  }

  YamlValue policy = spec.Get("podFailurePolicy");
  if (!policy.IsSet()) return;
  if (restart != "Never") {
    spec.Get("template")
        .Get("spec")
        .Get("restartPolicy")
        .Error("only \"Never\" is supported when podFailurePolicy is specified");
  }
  YamlValue rules = policy.Get("rules");
  if (!rules.IsSet()) rules.Error("is required");
  for (const YamlValue& rv : rules.Items()) {
    model::PodFailurePolicyRule rule = DecodeRule(rv);
    if (rule.action == "FailIndex") {
      if (!js.backoff_limit_per_index) {
        rv.Get("action").Error("FailIndex requires backoffLimitPerIndex");
      } else {
        rv.Get("action").Warn(
            "FailIndex fails the whole Job (reason FailedIndexes): muster's gang is not split "
            "into indexes that fail alone");
      }
    }
    if (!rule.on_pod_conditions.empty()) {
      rv.Get("onPodConditions")
          .Warn(
              "never matches: muster sets no condition on a failed pod; its preemptions and "
              "evictions requeue the whole gang without counting a failure (what a "
              "DisruptionTarget Ignore rule asks)");
    }
    js.pod_failure_policy.push_back(std::move(rule));
  }
}

void WarnJobTemplatePolicies(const YamlValue& job_spec) {
  for (const char* field : {"podFailurePolicy", "backoffLimitPerIndex", "maxFailedIndexes",
                            "ttlSecondsAfterFinished", "activeDeadlineSeconds"}) {
    if (YamlValue v = job_spec.Get(field); v.IsSet()) {
      v.Warn("not acted on in a JobSet's job template");
    }
  }
}

}  // namespace muster::api::internal
