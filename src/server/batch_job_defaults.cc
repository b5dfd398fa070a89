#include "server/batch_job_defaults.h"

#include <cstdint>
#include <limits>
#include <utility>

#include "server/label_selector.h"
#include "server/meta_validation.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr char kControllerUid[] = "batch.kubernetes.io/controller-uid";
constexpr char kLegacyControllerUid[] = "controller-uid";
constexpr char kJobName[] = "batch.kubernetes.io/job-name";
constexpr char kLegacyJobName[] = "job-name";

// object[key] made an object (a null or absent member becomes {}), or nullptr when
// it holds something else, which validation reports.
json* ObjectAt(json& object, const char* key) {
  json& v = object[key];
  if (v.is_null()) v = json::object();
  return v.is_object() ? &v : nullptr;
}

const json* Find(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool IsTrue(const json* v) { return v != nullptr && v->is_boolean() && v->get<bool>(); }

json TemplateLabels(const json& job) {
  const json* spec = Find(job, "spec");
  const json* tmpl = spec != nullptr ? Find(*spec, "template") : nullptr;
  const json* meta = tmpl != nullptr ? Find(*tmpl, "metadata") : nullptr;
  const json* labels = meta != nullptr ? Find(*meta, "labels") : nullptr;
  return labels != nullptr && labels->is_object() ? *labels : json::object();
}

// The template's labels that are strings, for LabelSelector::Matches.
model::StringMap TemplateLabelMap(const json& labels) {
  model::StringMap out;
  for (const auto& [k, v] : labels.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

}  // namespace

bool IsBatchJob(const control::ResourceType& type) {
  return type.group == "batch" && type.kind == "Job";
}

bool IsCronJob(const control::ResourceType& type) {
  return type.group == "batch" && type.kind == "CronJob";
}

void DefaultCronJob(json& cronjob) {
  if (!cronjob.is_object()) return;
  json* spec = ObjectAt(cronjob, "spec");
  if (spec == nullptr) return;
  auto unset = [spec](const char* key) { return !spec->contains(key) || (*spec)[key].is_null(); };
  if (unset("concurrencyPolicy")) (*spec)["concurrencyPolicy"] = "Allow";
  if (unset("suspend")) (*spec)["suspend"] = false;
  if (unset("successfulJobsHistoryLimit")) (*spec)["successfulJobsHistoryLimit"] = 3;
  if (unset("failedJobsHistoryLimit")) (*spec)["failedJobsHistoryLimit"] = 1;
}

void DefaultBatchJob(json& job) {
  if (!job.is_object()) return;
  json* spec = ObjectAt(job, "spec");
  if (spec == nullptr) return;
  auto unset = [spec](const char* key) { return !spec->contains(key) || (*spec)[key].is_null(); };
  if (unset("completions") && unset("parallelism")) (*spec)["completions"] = 1;
  if (unset("parallelism")) (*spec)["parallelism"] = 1;
  if (unset("backoffLimit")) {
    (*spec)["backoffLimit"] =
        unset("backoffLimitPerIndex") ? 6 : std::numeric_limits<int32_t>::max();
  }
  const json template_labels = TemplateLabels(job);
  if (json* meta = Find(job, "metadata") ? &job["metadata"] : nullptr;
      meta != nullptr && meta->is_object() && !template_labels.empty()) {
    const json* labels = Find(*meta, "labels");
    if (labels == nullptr || !labels->is_object() || labels->empty()) {
      (*meta)["labels"] = template_labels;
    }
  }
  if (unset("completionMode")) (*spec)["completionMode"] = "NonIndexed";
  if (unset("suspend")) (*spec)["suspend"] = false;
  const bool failure_policy = !unset("podFailurePolicy");
  if (unset("podReplacementPolicy")) {
    (*spec)["podReplacementPolicy"] = failure_policy ? "Failed" : "TerminatingOrFailed";
  }
  if (unset("manualSelector")) (*spec)["manualSelector"] = false;
  if (failure_policy && (*spec)["podFailurePolicy"].is_object()) {
    json& rules = (*spec)["podFailurePolicy"]["rules"];
    if (!rules.is_array()) return;
    for (json& rule : rules) {
      if (!rule.is_object() || !rule.contains("onPodConditions")) continue;
      json& patterns = rule["onPodConditions"];
      if (!patterns.is_array()) continue;
      for (json& p : patterns) {
        if (p.is_object() && (!p.contains("status") || p["status"] == "")) p["status"] = "True";
      }
    }
  }
}

std::vector<StatusCause> JobSelectorGeneration::Apply(json& job, const std::string& name) {
  if (!job.is_object()) return {};
  json* spec = ObjectAt(job, "spec");
  if (spec == nullptr) return {};
  json* tmpl = ObjectAt(*spec, "template");
  json* meta = tmpl != nullptr ? ObjectAt(*tmpl, "metadata") : nullptr;
  json* labels = meta != nullptr ? ObjectAt(*meta, "labels") : nullptr;
  if (labels != nullptr && !IsTrue(Find(*spec, "manualSelector"))) {
    if (generated_) {
      for (const std::string& key : name_labels_) (*labels)[key] = name;
    } else {
      generated_ = true;
      for (const char* key : {kLegacyJobName, kJobName}) {
        if (labels->contains(key)) continue;
        (*labels)[key] = name;
        name_labels_.emplace_back(key);
      }
      for (const char* key : {kLegacyControllerUid, kControllerUid}) {
        if (!labels->contains(key)) (*labels)[key] = uid_;
      }
      json* selector = ObjectAt(*spec, "selector");
      json* match = selector != nullptr ? ObjectAt(*selector, "matchLabels") : nullptr;
      if (match != nullptr && !match->contains(kControllerUid)) (*match)[kControllerUid] = uid_;
    }
  }
  return ValidateJobSelector(job, name, uid_);
}

std::vector<StatusCause> ValidateJobSelector(const json& job, const std::string& name,
                                             const std::string& uid) {
  std::vector<StatusCause> out;
  const json* spec = Find(job, "spec");
  if (spec == nullptr) return out;
  const json* selector = Find(*spec, "selector");
  if (selector == nullptr || selector->is_null()) {
    out.push_back(RequiredValue("spec.selector"));
    return out;
  }
  const json labels = TemplateLabels(job);
  auto terms = LabelSelector::FromObject(*selector);
  if (!terms.ok()) {
    out.push_back(InvalidValue("spec.selector", *selector, "not a valid label selector"));
    return out;
  }
  if (!terms->Matches(TemplateLabelMap(labels))) {
    out.push_back(InvalidValue("spec.template.metadata.labels", labels,
                               "`selector` does not match template `labels`"));
  }
  if (IsTrue(Find(*spec, "manualSelector"))) return out;
  // Generated: the template carries this Job's own uid and name, and the selector
  // picks them.
  const model::StringMap expected = {
      {kLegacyControllerUid, uid}, {kControllerUid, uid}, {kLegacyJobName, name}, {kJobName, name}};
  for (const auto& [key, want] : expected) {
    const std::string field = "spec.template.metadata.labels[" + key + "]";
    const json* have = Find(labels, key.c_str());
    if (have == nullptr) {
      out.push_back(RequiredValue(field));
    } else if (*have != want) {
      out.push_back(InvalidValue(field, *have, "must be '" + want + "'"));
    }
  }
  if (!terms->empty() && !terms->Matches(expected)) {
    out.push_back(InvalidValue("spec.selector", *selector, "`selector` not auto-generated"));
  }
  return out;
}

}  // namespace muster::server
