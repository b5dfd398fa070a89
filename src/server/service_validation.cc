// Service validation (upstream's ValidateService and ValidateServiceUpdate, for the
// fields muster reads: ports, selector, type, clusterIP, sessionAffinity).
#include <arpa/inet.h>

#include <set>

#include "api/object_names.h"
#include "server/core_defaults.h"
#include "server/core_validation.h"
#include "server/meta_validation.h"

namespace muster::server {
namespace {

using nlohmann::json;

const json& At(const json& object, const char* key) {
  static const json kNull;
  return object.is_object() && object.contains(key) ? object[key] : kNull;
}

std::string Text(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }

bool ValidPortNumber(const json& v) {
  return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 65535;
}

// IsValidPortName: an IANA service name.
std::vector<std::string> PortNameErrors(const std::string& name) {
  std::vector<std::string> errors;
  if (name.size() > 15) errors.push_back("must be no more than 15 characters");
  bool letter = false, ok = true;
  for (char c : name) {
    if (c >= 'a' && c <= 'z') letter = true;
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) ok = false;
  }
  if (!ok)
    errors.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (!letter) errors.push_back("must contain at least one letter (a-z)");
  if (name.find("--") != std::string::npos)
    errors.push_back("must not contain consecutive hyphens");
  if (!name.empty() && (name.front() == '-' || name.back() == '-'))
    errors.push_back("must not begin or end with a hyphen");
  return errors;
}

std::vector<std::string> Dns1035LabelErrors(const std::string& name) {
  std::vector<std::string> errors;
  if (name.size() > 63) errors.push_back("must be no more than 63 characters");
  bool ok =
      !name.empty() && name.front() >= 'a' && name.front() <= 'z' &&
      ((name.back() >= 'a' && name.back() <= 'z') || (name.back() >= '0' && name.back() <= '9'));
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) ok = false;
  }
  if (!ok) {
    errors.push_back(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with "
        "an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
  }
  return errors;
}

void ValidatePort(const json& port, size_t i, size_t count, std::set<std::string>& names,
                  std::set<std::string>& ports, std::vector<StatusCause>& out) {
  const std::string field = "spec.ports[" + std::to_string(i) + "]";
  if (!port.is_object()) {
    out.push_back(InvalidValue(field, port, "must be an object"));
    return;
  }
  const json& name = At(port, "name");
  if (!name.is_null() && !name.is_string()) {
    out.push_back(InvalidValue(field + ".name", name, "must be a string"));
  } else if (Text(name).empty()) {
    if (count > 1) out.push_back(RequiredValue(field + ".name"));
  } else {
    for (const auto& m : api::IsDns1123Label(Text(name))) {
      out.push_back(InvalidValue(field + ".name", name, m));
    }
    if (!names.insert(Text(name)).second) out.push_back(DuplicateValue(field + ".name", name));
  }
  const json& number = At(port, "port");
  if (!ValidPortNumber(number)) {
    out.push_back(InvalidValue(field + ".port", number, "must be between 1 and 65535, inclusive"));
  }
  const json& protocol = At(port, "protocol");
  if (Text(protocol).empty()) {
    out.push_back(RequiredValue(field + ".protocol"));
  } else if (Text(protocol) != "TCP" && Text(protocol) != "UDP" && Text(protocol) != "SCTP") {
    out.push_back(NotSupportedValue(field + ".protocol", protocol, {"SCTP", "TCP", "UDP"}));
  }
  const json& target = At(port, "targetPort");
  if (target.is_string()) {
    for (const auto& m : PortNameErrors(Text(target))) {
      out.push_back(InvalidValue(field + ".targetPort", target, m));
    }
  } else if (!target.is_null() && !ValidPortNumber(target)) {
    out.push_back(
        InvalidValue(field + ".targetPort", target, "must be between 1 and 65535, inclusive"));
  }
  if (ValidPortNumber(number)) {
    const std::string key = std::to_string(number.get<int64_t>()) + "/" + Text(protocol);
    if (!ports.insert(key).second) {
      out.push_back(DuplicateValue(field, json{{"port", number}, {"protocol", protocol}}));
    }
  }
}

}  // namespace

void ValidateService(const json& object, std::vector<StatusCause>& out) {
  const std::string name = Text(At(At(object, "metadata"), "name"));
  // Checked only when it passed the generic subdomain rule, so one problem is one
  // message.
  if (!name.empty() && api::IsDns1123Subdomain(name).empty()) {
    for (const auto& m : Dns1035LabelErrors(name))
      out.push_back(InvalidValue("metadata.name", name, m));
  }
  const json& spec = At(object, "spec");
  if (!spec.is_object()) {
    out.push_back(RequiredValue("spec"));
    return;
  }
  const std::string type = Text(At(spec, "type"));
  if (type != "ClusterIP" && type != "NodePort" && type != "LoadBalancer" &&
      type != "ExternalName") {
    out.push_back(NotSupportedValue("spec.type", At(spec, "type"),
                                    {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}));
  }
  if (type == "ExternalName" && Text(At(spec, "externalName")).empty()) {
    out.push_back(RequiredValue("spec.externalName"));
  }
  const json& cluster_ip = At(spec, "clusterIP");
  const std::string ip = Text(cluster_ip);
  if (!cluster_ip.is_null() && !cluster_ip.is_string()) {
    out.push_back(InvalidValue("spec.clusterIP", cluster_ip, "must be a string"));
  } else if (ip == "None") {
    if (type != "ClusterIP" && type != "ExternalName") {
      out.push_back(
          InvalidValue("spec.clusterIP", ip, "may not be set to 'None' for " + type + " services"));
    }
  } else if (!ip.empty()) {
    in_addr addr{};
    in6_addr addr6{};
    if (inet_pton(AF_INET, ip.c_str(), &addr) != 1 &&
        inet_pton(AF_INET6, ip.c_str(), &addr6) != 1) {
      out.push_back(InvalidValue("spec.clusterIP", ip,
                                 "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"));
    } else if (!InServiceRange(ip)) {
      out.push_back(InvalidValue("spec.clusterIP", ip,
                                 "failed to allocate IP " + ip +
                                     ": provided IP is not in the valid range. The range of "
                                     "valid IPs is " +
                                     std::string(kServiceCidr)));
    }
  }
  const json& ports = At(spec, "ports");
  if (!ports.is_null() && !ports.is_array()) {
    out.push_back(InvalidValue("spec.ports", ports, "must be a list"));
  } else if (ports.size() > kMaxServicePorts) {
    out.push_back({"FieldValueTooMany",
                   "Too many: " + std::to_string(ports.size()) + ": must have at most " +
                       std::to_string(kMaxServicePorts) + " items",
                   "spec.ports"});
  } else {
    if ((ports.is_null() || ports.empty()) && type != "ExternalName" && ip != "None") {
      out.push_back(RequiredValue("spec.ports"));
    }
    std::set<std::string> names, numbers;
    for (size_t i = 0; i < ports.size(); ++i) {
      ValidatePort(ports[i], i, ports.size(), names, numbers, out);
    }
  }
  const json& selector = At(spec, "selector");
  if (!selector.is_null() && !selector.is_object()) {
    out.push_back(InvalidValue("spec.selector", selector, "must be a map of strings"));
  } else if (selector.is_object()) {
    for (const auto& [k, v] : selector.items()) {
      for (const auto& m : api::IsQualifiedName(k))
        out.push_back(InvalidValue("spec.selector", k, m));
      if (!v.is_string()) {
        out.push_back(InvalidValue("spec.selector", v, "must be a string"));
        continue;
      }
      for (const auto& m : api::IsValidLabelValue(v.get<std::string>())) {
        out.push_back(InvalidValue("spec.selector", v, m));
      }
    }
  }
  const json& affinity = At(spec, "sessionAffinity");
  if (Text(affinity) != "None" && Text(affinity) != "ClientIP") {
    out.push_back(NotSupportedValue("spec.sessionAffinity", affinity, {"ClientIP", "None"}));
  }
}

void ValidateServiceUpdate(const json& current, const json& next, std::vector<StatusCause>& out) {
  const std::string before = Text(At(At(current, "spec"), "clusterIP"));
  const std::string after = Text(At(At(next, "spec"), "clusterIP"));
  // Upstream lets a ClusterIP Service become ExternalName (which drops its address);
  // muster serves no ExternalName resolution, so an address, once set, stays.
  if (!before.empty() && before != after) {
    out.push_back(InvalidValue("spec.clusterIP", after, "field is immutable"));
  }
}

}  // namespace muster::server
