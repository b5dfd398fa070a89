// ConfigMap and Secret validation (upstream's ValidateConfigMap, ValidateSecret).
#include <algorithm>

#include "core/base64.h"
#include "server/core_validation.h"
#include "server/meta_validation.h"

namespace muster::server {
namespace {

using nlohmann::json;

constexpr size_t kMaxListedCauses = 64;

std::string KeyField(const char* map, const std::string& key) {
  return std::string(map) + "[" + key + "]";
}

// Checks the keys of map `name` of `object` and that its values are strings; adds
// the size of each entry (the key and the value, decoded for base64 maps) to
// `total`. Returns the keys.
std::vector<std::string> CheckDataMap(const json& object, const char* name, bool base64,
                                      size_t& total, std::vector<StatusCause>& out) {
  std::vector<std::string> keys;
  if (!object.contains(name) || object[name].is_null()) return keys;
  const json& map = object[name];
  if (!map.is_object()) {
    out.push_back(InvalidValue(name, map, "must be a map of strings"));
    return keys;
  }
  for (const auto& [key, value] : map.items()) {
    keys.push_back(key);
    // Enough to show what is wrong; a hostile map of a million bad keys is not listed.
    if (out.size() > kMaxListedCauses) out.resize(kMaxListedCauses);
    for (const auto& m : ConfigKeyErrors(key))
      out.push_back(InvalidValue(KeyField(name, key), key, m));
    if (!value.is_string()) {
      out.push_back(InvalidValue(KeyField(name, key), value, "must be a string"));
      continue;
    }
    const std::string& text = value.get_ref<const std::string&>();
    if (!base64) {
      total += key.size() + text.size();
      continue;
    }
    auto decoded = DecodeBase64(text);
    if (!decoded.ok()) {
      // Upstream refuses the body as undecodable JSON (400); here it names the key.
      out.push_back(InvalidValue(KeyField(name, key), "<value omitted>",
                                 "illegal base64 data: " + decoded.status().message()));
      continue;
    }
    total += key.size() + decoded->size();
  }
  return keys;
}

bool HasKey(const json& object, const char* map, const char* key) {
  return object.contains(map) && object[map].is_object() && object[map].contains(key);
}

void RequireKey(const json& object, const char* key, std::vector<StatusCause>& out) {
  if (!HasKey(object, "data", key)) out.push_back(RequiredValue(KeyField("data", key)));
}

void CheckImmutableFlag(const json& object, std::vector<StatusCause>& out) {
  if (object.contains("immutable") && !object["immutable"].is_null() &&
      !object["immutable"].is_boolean()) {
    out.push_back(InvalidValue("immutable", object["immutable"], "must be a boolean"));
  }
}

}  // namespace

std::vector<std::string> ConfigKeyErrors(const std::string& key) {
  std::vector<std::string> errors;
  if (key.size() > kMaxConfigKeyLength) {
    errors.push_back("must be no more than " + std::to_string(kMaxConfigKeyLength) + " characters");
  }
  // [-._a-zA-Z0-9]+ by hand: a megabyte of one-letter keys is checked in linear time.
  const bool allowed = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_';
  });
  if (!allowed) {
    errors.push_back(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
        "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
        "'[-._a-zA-Z0-9]+')");
  }
  if (key == ".") {
    errors.push_back("must not be '.'");
  } else if (key == "..") {
    errors.push_back("must not be '..'");
  } else if (key.rfind("..", 0) == 0) {
    errors.push_back("must not start with '..'");
  }
  return errors;
}

void ValidateConfigMap(const json& object, std::vector<StatusCause>& out) {
  size_t total = 0;
  const auto data = CheckDataMap(object, "data", false, total, out);
  const auto binary = CheckDataMap(object, "binaryData", true, total, out);
  for (const std::string& key : data) {
    if (HasKey(object, "binaryData", key.c_str())) {
      out.push_back(
          InvalidValue(KeyField("data", key), key, "duplicate of key present in binaryData"));
    }
  }
  CheckImmutableFlag(object, out);
  if (total > kMaxConfigDataBytes) out.push_back(TooLong("", kMaxConfigDataBytes));
}

void ValidateSecret(const json& object, std::vector<StatusCause>& out) {
  size_t total = 0;
  CheckDataMap(object, "data", true, total, out);
  CheckImmutableFlag(object, out);
  if (total > kMaxConfigDataBytes) out.push_back(TooLong("data", kMaxConfigDataBytes));
  const json type = object.value("type", json("Opaque"));
  if (!type.is_string()) {
    out.push_back(InvalidValue("type", type, "must be a string"));
    return;
  }
  // The required keys of the built-in types (upstream's switch on secret.Type).
  const std::string& t = type.get_ref<const std::string&>();
  if (t == "kubernetes.io/tls") {
    RequireKey(object, "tls.key", out);
    RequireKey(object, "tls.crt", out);
  } else if (t == "kubernetes.io/basic-auth") {
    if (!HasKey(object, "data", "username") && !HasKey(object, "data", "password")) {
      out.push_back(RequiredValue(KeyField("data", "username")));
      out.push_back(RequiredValue(KeyField("data", "password")));
    }
  } else if (t == "kubernetes.io/ssh-auth") {
    RequireKey(object, "ssh-privatekey", out);
  } else if (t == "kubernetes.io/dockerconfigjson") {
    RequireKey(object, ".dockerconfigjson", out);
  } else if (t == "kubernetes.io/dockercfg") {
    RequireKey(object, ".dockercfg", out);
  } else if (t == "kubernetes.io/service-account-token") {
    const json name = object.value("metadata", json::object())
                          .value("annotations", json::object())
                          .value("kubernetes.io/service-account.name", json(""));
    if (!name.is_string() || name.get<std::string>().empty()) {
      out.push_back(RequiredValue("metadata.annotations[kubernetes.io/service-account.name]"));
    }
  } else if (t.empty()) {
    out.push_back(RequiredValue("type"));
  }
}

}  // namespace muster::server
