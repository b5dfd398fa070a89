#include "server/batch_job_defaults.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

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

// One requirement of a LabelSelector, as apimachinery's labels.Requirement.
struct Term {
  std::string key;
  std::string op;  // "=", In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
};

// The selector's terms sorted by key; false when it is malformed (validated
// elsewhere: the decoder reads matchExpressions of the kinds that have them).
bool TermsOf(const json& selector, std::vector<Term>& out) {
  if (!selector.is_object()) return false;
  if (const json* labels = Find(selector, "matchLabels"); labels != nullptr) {
    if (!labels->is_object()) return false;
    for (const auto& [k, v] : labels->items()) {
      if (!v.is_string()) return false;
      out.push_back({k, "=", {v.get<std::string>()}});
    }
  }
  if (const json* exprs = Find(selector, "matchExpressions"); exprs != nullptr) {
    if (!exprs->is_array()) return false;
    for (const json& e : *exprs) {
      const json* key = Find(e, "key");
      const json* op = Find(e, "operator");
      if (key == nullptr || !key->is_string() || op == nullptr || !op->is_string()) return false;
      Term t{key->get<std::string>(), op->get<std::string>(), {}};
      if (t.op != "In" && t.op != "NotIn" && t.op != "Exists" && t.op != "DoesNotExist")
        return false;
      if (const json* values = Find(e, "values"); values != nullptr && values->is_array()) {
        for (const json& v : *values) {
          if (v.is_string()) t.values.push_back(v.get<std::string>());
        }
      }
      std::sort(t.values.begin(), t.values.end());
      out.push_back(std::move(t));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Term& a, const Term& b) { return a.key < b.key; });
  return true;
}

bool Matches(const std::vector<Term>& terms, const json& labels) {
  for (const Term& t : terms) {
    const json* v = Find(labels, t.key.c_str());
    const bool has = v != nullptr && v->is_string();
    const std::string value = has ? v->get<std::string>() : "";
    const bool listed = std::find(t.values.begin(), t.values.end(), value) != t.values.end();
    if (t.op == "=" && (!has || value != t.values[0])) return false;
    if (t.op == "In" && (!has || !listed)) return false;
    if (t.op == "NotIn" && has && listed) return false;
    if (t.op == "Exists" && !has) return false;
    if (t.op == "DoesNotExist" && has) return false;
  }
  return true;
}

}  // namespace

bool IsBatchJob(const control::ResourceType& type) {
  return type.group == "batch" && type.kind == "Job";
}

void DefaultBatchJob(json& job) {
  if (!job.is_object()) return;
  json* spec = ObjectAt(job, "spec");
  if (spec == nullptr) return;
  const bool has_completions = spec->contains("completions") && !(*spec)["completions"].is_null();
  const bool has_parallelism = spec->contains("parallelism") && !(*spec)["parallelism"].is_null();
  if (!has_completions && !has_parallelism) (*spec)["completions"] = 1;
  if (!has_parallelism) (*spec)["parallelism"] = 1;
  if (!spec->contains("backoffLimit") || (*spec)["backoffLimit"].is_null()) {
    const bool per_index =
        spec->contains("backoffLimitPerIndex") && !(*spec)["backoffLimitPerIndex"].is_null();
    (*spec)["backoffLimit"] = per_index ? std::numeric_limits<int32_t>::max() : 6;
  }
  const json template_labels = TemplateLabels(job);
  if (json* meta = Find(job, "metadata") ? &job["metadata"] : nullptr;
      meta != nullptr && meta->is_object() && !template_labels.empty()) {
    const json* labels = Find(*meta, "labels");
    if (labels == nullptr || !labels->is_object() || labels->empty()) {
      (*meta)["labels"] = template_labels;
    }
  }
  auto unset = [spec](const char* key) { return !spec->contains(key) || (*spec)[key].is_null(); };
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
  std::vector<Term> terms;
  if (!TermsOf(*selector, terms)) {
    out.push_back(InvalidValue("spec.selector", *selector, "not a valid label selector"));
    return out;
  }
  if (!Matches(terms, labels)) {
    out.push_back(InvalidValue("spec.template.metadata.labels", labels,
                               "`selector` does not match template `labels`"));
  }
  if (IsTrue(Find(*spec, "manualSelector"))) return out;
  // Generated: the template carries this Job's own uid and name, and the selector
  // picks them.
  const std::map<std::string, std::string> expected = {
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
  json own = json::object();
  for (const auto& [key, want] : expected) own[key] = want;
  if (!terms.empty() && !Matches(terms, own)) {
    out.push_back(InvalidValue("spec.selector", *selector, "`selector` not auto-generated"));
  }
  return out;
}

std::string FormatJobSelector(const json& selector) {
  std::vector<Term> terms;
  if (selector.is_null()) return "<none>";
  if (!TermsOf(selector, terms)) return "<error>";
  std::string out;
  for (const Term& t : terms) {
    if (!out.empty()) out += ",";
    std::string values;
    for (const std::string& v : t.values) values += (values.empty() ? "" : ",") + v;
    if (t.op == "=") out += t.key + "=" + t.values[0];
    if (t.op == "In") out += t.key + " in (" + values + ")";
    if (t.op == "NotIn") out += t.key + " notin (" + values + ")";
    if (t.op == "Exists") out += t.key;
    if (t.op == "DoesNotExist") out += "!" + t.key;
  }
  return out.empty() ? "<none>" : out;
}

}  // namespace muster::server
