// DecodeText: YAML/JSON text -> documents -> kind dispatch. Per-kind decoders live
// in decode_<family>.cc.
#include "api/decode.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>

#include "api/decode_common.h"
#include "api/object_names.h"
#include "api/yaml_value.h"
#include "core/nesting_depth.h"
#include "core/yaml_documents.h"

namespace muster::api {
namespace {

using internal::DocContext;
using internal::YamlValue;

using DecodeFn = void (*)(const YamlValue&, model::ObjectMeta, DecodeResult&);

struct KindInfo {
  const char* group;  // "" for the core group ("v1")
  const char* kind;
  std::vector<std::string_view> versions;
  bool namespaced;
  DecodeFn decode;
  bool name_required = true;
};

// CONTRACT section 1: every understood (group, kind) with its versions and scope.
const std::vector<KindInfo>& Kinds() {
  using namespace internal;  // NOLINT: the decoder table reads better unqualified
  static const std::vector<KindInfo> kKinds = {
      {"", "Node", {"v1"}, false, DecodeNode},
      {"", "Namespace", {"v1"}, false, DecodeNamespace},
      {"", "Pod", {"v1"}, true, DecodeBarePod},
      {"", "LimitRange", {"v1"}, true, DecodeLimitRange},
      {"topology.node.k8s.io",
       "NodeResourceTopology",
       {"v1alpha2"},
       false,
       DecodeNodeResourceTopology},
      {"scheduling.k8s.io", "PriorityClass", {"v1"}, false, DecodePriorityClass},
      {"kueue.x-k8s.io", "ResourceFlavor", {"v1beta1", "v1beta2"}, false, DecodeResourceFlavor},
      {"kueue.x-k8s.io", "ClusterQueue", {"v1beta1", "v1beta2"}, false, DecodeClusterQueue},
      {"kueue.x-k8s.io", "LocalQueue", {"v1beta1", "v1beta2"}, true, DecodeLocalQueue},
      {"kueue.x-k8s.io", "Cohort", {"v1beta1", "v1beta2", "v1alpha1"}, false, DecodeCohort},
      {"kueue.x-k8s.io",
       "WorkloadPriorityClass",
       {"v1beta1", "v1beta2"},
       false,
       DecodeWorkloadPriorityClass},
      {"kueue.x-k8s.io", "Topology", {"v1beta1", "v1beta2", "v1alpha1"}, false, DecodeTopology},
      {"scheduling.volcano.sh", "Queue", {"v1beta1"}, false, DecodeVolcanoQueue},
      {"scheduling.volcano.sh", "PodGroup", {"v1beta1"}, true, DecodePodGroup},
      {"topology.volcano.sh", "HyperNode", {"v1alpha1"}, false, DecodeHyperNode},
      {"batch.volcano.sh", "Job", {"v1alpha1"}, true, DecodeVolcanoJob},
      {"kubeflow.org", "PyTorchJob", {"v1"}, true, DecodeKubeflowJob},
      {"kubeflow.org", "TFJob", {"v1"}, true, DecodeKubeflowJob},
      {"kubeflow.org", "MPIJob", {"v2beta1"}, true, DecodeKubeflowJob},
      {"jobset.x-k8s.io", "JobSet", {"v1alpha2"}, true, DecodeJobSet},
      {"batch", "Job", {"v1"}, true, DecodeBatchJob},
      {"batch", "CronJob", {"v1"}, true, DecodeCronJob},
      {"trainer.kubeflow.org",
       "ClusterTrainingRuntime",
       {"v1alpha1"},
       false,
       DecodeTrainingRuntime},
      {"trainer.kubeflow.org", "TrainingRuntime", {"v1alpha1"}, true, DecodeTrainingRuntime},
      {"trainer.kubeflow.org", "TrainJob", {"v1alpha1"}, true, DecodeTrainJob},
      {"config.kueue.x-k8s.io",
       "Configuration",
       {"v1beta1", "v1beta2"},
       false,
       DecodeKueueConfiguration,
       false},
      {"muster.dev",
       "SchedulerConfiguration",
       {"v1alpha1"},
       false,
       DecodeSchedulerConfiguration,
       false},
  };
  return kKinds;
}

// Rejects documents nested deeper than any manifest needs before yaml-cpp sees
// them: its recursive-descent parser would otherwise spend the stack on
// "[[[[..." or "{{{{..." bombs. Brackets in double-quoted strings (JSON's, so an
// annotation holding JSON passes) are skipped; a stray quote in a plain YAML scalar
// can only make the count too low, and yaml-cpp's own depth guard backs it up.
constexpr int kMaxFlowDepth = 256;

bool FlowTooDeep(std::string_view text) { return ExceedsNestingDepth(text, kMaxFlowDepth); }

void AddError(DecodeResult& out, const std::string& file, int line, std::string message) {
  Diagnostic d;
  d.file = file;
  d.line = line;
  d.message = std::move(message);
  out.diagnostics.push_back(std::move(d));
}

// `root`: the document's YAML node or JSON value.
void DecodeDocument(const YamlValue& root, DocContext& ctx, DecodeResult& out) {
  const std::string& file = ctx.file();
  if (!root.IsSet()) return;  // an empty document ("---" followed by comments)
  if (!root.IsMap()) {
    root.Error("a document must be a map with apiVersion, kind and metadata, got " +
               std::string(root.IsList() ? "a list" : "a scalar"));
    return;
  }
  model::ObjectMeta meta;
  root.Get("apiVersion").Read(meta.api_version);
  root.Get("kind").Read(meta.kind);
  ctx.SetObject(meta.kind, "", "");
  if (meta.api_version.empty() && meta.kind.empty() &&
      (root.Get("actions").IsSet() || root.Get("tiers").IsSet())) {
    // A raw volcano-scheduler.conf (what Volcano's --scheduler-conf file holds).
    ctx.SetObject(std::string(internal::kVolcanoSchedulerConfKey), "", "");
    meta.name = internal::kVolcanoSchedulerConfKey;
    meta.order = out.next_order++;
    meta.source = {file, root.line()};
    internal::DecodeVolcanoSchedulerConf(root, std::move(meta), out);
    return;
  }
  if (meta.api_version.empty()) root.Get("apiVersion").Error("is required");
  if (meta.kind.empty()) root.Get("kind").Error("is required");
  if (meta.api_version.empty() || meta.kind.empty()) return;

  std::string group, version = meta.api_version;
  if (auto slash = meta.api_version.find('/'); slash != std::string::npos) {
    group = meta.api_version.substr(0, slash);
    version = meta.api_version.substr(slash + 1);
  }
  const KindInfo* info = nullptr;
  bool kind_known = false;
  for (const auto& k : Kinds()) {
    if (k.group != group || k.kind != meta.kind) continue;
    kind_known = true;
    if (std::find_if(k.versions.begin(), k.versions.end(),
                     [&](std::string_view v) { return v == version; }) != k.versions.end()) {
      info = &k;
    }
  }

  YamlValue md = root.Get("metadata");
  md.Get("name").Read(meta.name);
  md.Get("generateName").Read(meta.generate_name);
  md.Get("namespace").Read(meta.namespace_);
  if (info && !info->namespaced) meta.namespace_.clear();  // ignored upstream, too
  if (info && info->namespaced && meta.namespace_.empty()) meta.namespace_ = "default";
  if (meta.name.empty() && !meta.generate_name.empty()) {
    // Kubernetes appends 5 random characters; a counter keeps runs reproducible.
    char suffix[24];
    std::snprintf(suffix, sizeof suffix, "%05lld", static_cast<long long>(++out.generated_names));
    meta.name = meta.generate_name + suffix;
  }
  ctx.SetObject(meta.kind, meta.namespace_, meta.name);
  meta.labels = md.Get("labels").StringMap();
  meta.annotations = md.Get("annotations").StringMap();

  if (group.empty() && meta.kind == "ConfigMap" && !meta.name.empty() &&
      root.Get("data").Get(internal::kVolcanoSchedulerConfKey).IsSet()) {
    // Volcano's scheduler ConfigMap: its volcano-scheduler.conf is decoded as the
    // raw file would be, with lines counted in this file.
    internal::DecodeVolcanoSchedulerConfigMap(root, meta, out);
    if (!info) return;
  }
  if (!info) {
    if (kind_known) {
      root.Get("apiVersion")
          .Warn(internal::Quote(meta.api_version) + " is not a supported version of " + meta.kind +
                "; object skipped");
    } else {
      root.Get("kind").Warn("unknown kind " + meta.kind + " (apiVersion " + meta.api_version +
                            "); object skipped");
    }
    return;
  }
  if (meta.name.empty() && info->name_required) {
    md.Get("name").Error("is required (set metadata.name or metadata.generateName)");
    return;
  }
  // kube-apiserver's name rules (a Namespace is a DNS label, the rest subdomains),
  // so `muster validate` refuses what the API refuses.
  const NameRule rule = meta.kind == "Namespace" ? NameRule::kDnsLabel : NameRule::kDnsSubdomain;
  if (!meta.name.empty() && meta.generate_name.empty()) {
    for (const auto& m : ValidateName(meta.name, rule)) {
      md.Get("name").Error("Invalid value: " + internal::Quote(meta.name) + ": " + m);
    }
  }
  meta.order = out.next_order++;
  meta.source = {file, root.line()};
  info->decode(root, std::move(meta), out);
  ctx.set_decoded();
  if (!ctx.has_errors()) {
    for (auto& r : ctx.refs()) out.references.push_back(std::move(r));
  }
}

// Whether `value` nests deeper than kMaxFlowDepth, as DecodeText refuses of text.
bool JsonTooDeep(const nlohmann::json& value, int depth) {
  if (depth > kMaxFlowDepth) return true;
  if (!value.is_structured()) return false;
  for (const auto& item : value) {
    if (JsonTooDeep(item, depth + 1)) return true;
  }
  return false;
}

}  // namespace

void DecodeObject(const nlohmann::json& object, const std::string& file, DecodeResult& out) {
  if (std::find(out.files.begin(), out.files.end(), file) == out.files.end()) {
    out.files.push_back(file);
  }
  DocContext ctx(file, &out.diagnostics);
  ctx.set_track_reads(out.warn_unread_fields);
  // The decoders read the JSON in place (YamlValue), as they read YAML text: no
  // conversion to a YAML node, which cost as much as the decoding on the API's
  // create path.
  if (JsonTooDeep(object, 0)) {
    AddError(out, file, 1,
             "invalid JSON: nested deeper than " + std::to_string(kMaxFlowDepth) + " levels");
    return;
  }
  try {
    DecodeDocument(YamlValue(&object, "", 1, &ctx), ctx, out);
    if (ctx.track_reads() && ctx.decoded()) WarnUnreadFields(object, ctx);
  } catch (const std::exception& e) {
    AddError(out, file, 1, std::string("internal error while decoding: ") + e.what());
  } catch (...) {
    AddError(out, file, 1, "internal error while decoding");
  }
}

void DecodeText(std::string_view text, const std::string& file, DecodeResult& out) {
  if (std::find(out.files.begin(), out.files.end(), file) == out.files.end()) {
    out.files.push_back(file);
  }
  if (FlowTooDeep(text)) {
    AddError(out, file, 1,
             "invalid YAML: nested deeper than " + std::to_string(kMaxFlowDepth) + " levels");
    return;
  }
  // One document at a time with YAML::Load, not YAML::LoadAll (core/yaml_documents.h).
  for (const auto& doc : SplitYamlDocuments(text)) {
    DocContext ctx(file, &out.diagnostics);
    ctx.set_track_reads(out.warn_unread_fields);
    ctx.set_line_offset(doc.first_line - 1);
    YAML::Node node;
    try {
      node = YAML::Load(std::string(doc.text));
    } catch (const YAML::Exception& e) {
      int line = e.mark.line >= 0 ? e.mark.line + doc.first_line : doc.first_line;
      AddError(out, file, line, "invalid YAML: " + e.msg);
      continue;
    } catch (const std::exception& e) {
      AddError(out, file, doc.first_line, std::string("invalid YAML: ") + e.what());
      continue;
    } catch (...) {
      AddError(out, file, doc.first_line, "invalid YAML");
      continue;
    }
    try {
      DecodeDocument(YamlValue(node, "", ctx.line_offset() + 1, &ctx), ctx, out);
      if (ctx.track_reads() && ctx.decoded()) WarnUnreadFields(node, ctx);
    } catch (const std::exception& e) {
      // A decoder bug must not take the command down; report it against the document.
      AddError(out, file, doc.first_line,
               std::string("internal error while decoding: ") + e.what());
    } catch (...) {
      AddError(out, file, doc.first_line, "internal error while decoding");
    }
  }
}

}  // namespace muster::api
