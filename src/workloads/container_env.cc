#include "workloads/container_env.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace muster::workloads {
namespace {

// "metadata.labels['key']" -> {"metadata.labels", "key"}; nullopt without a subscript.
std::optional<std::pair<std::string, std::string>> SplitSubscript(const std::string& path) {
  size_t open = path.find("['");
  if (open == std::string::npos || !path.ends_with("']") || open + 4 > path.size()) {
    return std::nullopt;
  }
  return std::make_pair(path.substr(0, open), path.substr(open + 2, path.size() - open - 4));
}

std::string FormatMap(const model::StringMap& m) {
  std::string out;
  for (const auto& [key, value] : m) {  // StringMap is ordered: sorted as upstream
    out += key + "=" + GoQuote(value) + "\n";
  }
  if (!out.empty()) out.pop_back();
  return out;
}

std::string Lookup(const model::StringMap& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? "" : it->second;
}

// ceil(a / b) for positive b, without floating point.
int64_t CeilDiv(int64_t a, int64_t b) {
  if (b <= 0) return 0;
  int64_t q = a / b;
  if (a % b != 0 && a > 0) ++q;
  return q;
}

const model::Container* ContainerNamed(const model::PodSpec& spec, const std::string& name) {
  for (const auto& c : spec.containers) {
    if (c.name == name) return &c;
  }
  for (const auto& c : spec.init_containers) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Ordered environment with "later definition replaces in place" semantics.
class EnvList {
 public:
  void Set(const std::string& name, std::string value) {
    auto it = index_.find(name);
    if (it != index_.end()) {
      entries_[it->second].second = std::move(value);
      return;
    }
    index_[name] = entries_.size();
    entries_.emplace_back(name, std::move(value));
  }
  const std::string* Get(std::string_view name) const {
    auto it = index_.find(std::string(name));
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  bool Has(const std::string& name) const { return index_.count(name) != 0; }
  std::vector<std::pair<std::string, std::string>> Take() { return std::move(entries_); }

 private:
  std::vector<std::pair<std::string, std::string>> entries_;
  std::map<std::string, size_t> index_;
};

Result<std::string> KeyValue(const ConfigLookup& config, const model::KeySelector& key, bool secret,
                             const std::string& pod_namespace, bool& skip) {
  const model::StringMap* data = secret ? config.Secret(key.name) : config.ConfigMap(key.name);
  const char* kind = secret ? "secret" : "configmap";
  if (data == nullptr) {
    if (key.optional) {
      skip = true;
      return std::string();
    }
    return FailedPrecondition(std::string(kind) + " \"" + key.name + "\" not found");
  }
  auto it = data->find(key.key);
  if (it == data->end()) {
    if (key.optional) {
      skip = true;
      return std::string();
    }
    return FailedPrecondition("couldn't find key " + key.key + " in " +
                              (secret ? "Secret " : "ConfigMap ") + pod_namespace + "/" + key.name);
  }
  return it->second;
}

}  // namespace

std::string ExpandVariables(std::string_view input, const VariableLookup& lookup) {
  std::string out;
  out.reserve(input.size());
  size_t i = 0;
  while (i < input.size()) {
    char c = input[i];
    if (c != '$' || i + 1 >= input.size()) {
      out += c;
      ++i;
      continue;
    }
    char next = input[i + 1];
    if (next == '$') {  // "$$": an escaped operator
      out += '$';
      i += 2;
    } else if (next == '(') {
      size_t close = input.find(')', i + 2);
      if (close == std::string_view::npos) {  // unterminated: keep "$(" and go on after it
        out += "$(";
        i += 2;
        continue;
      }
      std::string_view name = input.substr(i + 2, close - i - 2);
      const std::string* value = lookup(name);
      if (value != nullptr) {
        out += *value;
      } else {
        out += "$(";
        out += name;
        out += ')';
      }
      i = close + 1;
    } else {  // "$x": not an expression; both characters pass through
      out += '$';
      out += next;
      i += 2;
    }
  }
  return out;
}

bool IsEnvVarName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return c >= ' ' && c <= '~' && c != '='; });
}

std::string GoQuote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);  // UTF-8 passes through as Go prints it
        }
    }
  }
  return out + "\"";
}

Result<std::string> DownwardFieldValue(const PodFacts& pod, const std::string& field_path,
                                       bool for_volume) {
  if (auto sub = SplitSubscript(field_path)) {
    if (sub->first == "metadata.labels") return Lookup(pod.labels, sub->second);
    if (sub->first == "metadata.annotations") return Lookup(pod.annotations, sub->second);
  }
  if (field_path == "metadata.name") return pod.name;
  if (field_path == "metadata.namespace") return pod.namespace_;
  if (field_path == "metadata.uid") return pod.uid;
  if (for_volume) {
    if (field_path == "metadata.labels") return FormatMap(pod.labels);
    if (field_path == "metadata.annotations") return FormatMap(pod.annotations);
  } else {
    if (field_path == "spec.nodeName") return pod.node_name;
    if (field_path == "spec.serviceAccountName") return pod.service_account;
    if (field_path == "status.podIP" || field_path == "status.podIPs") return pod.pod_ip;
    if (field_path == "status.hostIP" || field_path == "status.hostIPs") return pod.host_ip;
  }
  return InvalidArgument(
      "fieldPath " + GoQuote(field_path) + " is not supported" +
      (for_volume ? std::string(": supported values: metadata.name, metadata.namespace, "
                                "metadata.uid, metadata.labels, metadata.annotations and "
                                "metadata.labels['KEY'], metadata.annotations['KEY']")
                  : std::string(": supported values: metadata.name, metadata.namespace, "
                                "metadata.uid, metadata.labels['KEY'], "
                                "metadata.annotations['KEY'], spec.nodeName, "
                                "spec.serviceAccountName, status.hostIP, status.hostIPs, "
                                "status.podIP, status.podIPs")));
}

Result<std::string> ResourceFieldValue(const model::Container& container, const PodFacts& pod,
                                       const std::string& resource,
                                       const std::optional<Quantity>& divisor) {
  size_t dot = resource.find('.');
  std::string kind = dot == std::string::npos ? "" : resource.substr(0, dot);
  std::string name = dot == std::string::npos ? "" : resource.substr(dot + 1);
  bool known_name = name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
                    name.starts_with("hugepages-");
  if ((kind != "limits" && kind != "requests") || !known_name) {
    return InvalidArgument("resource " + GoQuote(resource) +
                           " is not supported: supported values: limits.cpu, limits.memory, "
                           "limits.ephemeral-storage, requests.cpu, requests.memory, "
                           "requests.ephemeral-storage, limits.hugepages-*, requests.hugepages-*");
  }
  std::optional<Quantity> value;
  const model::QuantityMap& own = kind == "limits" ? container.limits : container.requests;
  if (auto it = own.find(name); it != own.end()) value = it->second;
  // The apiserver defaults a request to its limit; the kubelet fills unset limits
  // with the node's allocatable.
  if (!value && kind == "requests") {
    if (auto it = container.limits.find(name); it != container.limits.end()) value = it->second;
  }
  if (!value && kind == "limits") {
    if (auto it = pod.node_allocatable.find(name); it != pod.node_allocatable.end()) {
      value = it->second;
    }
  }
  Quantity q = value.value_or(Quantity());
  Quantity d = divisor.value_or(Quantity::FromInt(1));
  if (d.Sign() <= 0) return InvalidArgument("divisor must be positive");
  if (name == "cpu") return std::to_string(CeilDiv(q.MilliValue(), d.MilliValue()));
  return std::to_string(CeilDiv(q.Value(), d.Value()));
}

Result<ResolvedContainer> ResolveContainer(
    const model::PodSpec& spec, const model::Container& container, const PodFacts& pod,
    const ConfigLookup& config, const std::vector<std::pair<std::string, std::string>>& appended) {
  ResolvedContainer out;
  EnvList env;
  auto lookup = [&env](std::string_view name) { return env.Get(name); };

  for (const model::EnvFromSource& from : container.env_from) {
    const bool secret = !from.secret.empty();
    const std::string& name = secret ? from.secret : from.config_map;
    const model::StringMap* data = secret ? config.Secret(name) : config.ConfigMap(name);
    if (data == nullptr) {
      if (from.optional) continue;
      return FailedPrecondition(std::string(secret ? "secret" : "configmap") + " \"" + name +
                                "\" not found (envFrom)");
    }
    std::vector<std::string> invalid;
    for (const auto& [key, value] : *data) {
      std::string var = from.prefix + key;
      if (!IsEnvVarName(var)) {
        invalid.push_back(key);
        continue;
      }
      env.Set(var, value);
    }
    if (!invalid.empty()) {
      std::string keys;
      for (const auto& k : invalid) keys += (keys.empty() ? "" : ", ") + k;
      out.warnings.push_back("Keys [" + keys + "] from the EnvFrom " +
                             (secret ? "secret " : "configMap ") + pod.namespace_ + "/" + name +
                             " were skipped since they are considered invalid environment "
                             "variable names.");
    }
  }

  for (const model::EnvVar& var : container.env) {
    if (!var.value_from) {
      env.Set(var.name, ExpandVariables(var.value, lookup));
      continue;
    }
    const model::EnvVarSource& from = *var.value_from;
    Result<std::string> value = std::string();
    bool skip = false;
    if (!from.field_path.empty()) {
      value = DownwardFieldValue(pod, from.field_path, /*for_volume=*/false);
    } else if (!from.resource.empty()) {
      const model::Container* target =
          from.container_name.empty() ? &container : ContainerNamed(spec, from.container_name);
      if (target == nullptr) {
        value = InvalidArgument("resourceFieldRef names container \"" + from.container_name +
                                "\", which the pod does not have");
      } else {
        value = ResourceFieldValue(*target, pod, from.resource, from.divisor);
      }
    } else if (from.config_map_key) {
      value = KeyValue(config, *from.config_map_key, false, pod.namespace_, skip);
    } else if (from.secret_key) {
      value = KeyValue(config, *from.secret_key, true, pod.namespace_, skip);
    }
    if (!value.ok()) {
      return Status(value.status().code(), "env " + var.name + ": " + value.status().message());
    }
    if (!skip) env.Set(var.name, std::move(value).value());
  }

  for (const auto& [name, value] : appended) {
    if (!env.Has(name)) env.Set(name, ExpandVariables(value, lookup));
  }

  for (const auto& arg : container.command) out.command.push_back(ExpandVariables(arg, lookup));
  for (const auto& arg : container.args) out.args.push_back(ExpandVariables(arg, lookup));
  out.env = env.Take();
  return out;
}

}  // namespace muster::workloads
