// muster describe TYPE NAME: an indented human view of one object like `kubectl
// describe`: metadata, the spec and status as nested "Key:  value" lines, status
// conditions as a table, and the Events the store holds about the object.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/client_commands.h"
#include "cli/client_options.h"
#include "cli/resource_catalog.h"

namespace muster::cli {
namespace {

using nlohmann::json;

struct DescribeArgs {
  ClientOptions options;
  std::string type;
  std::string name;
};

// "nominalQuota" -> "Nominal Quota", "podIP" -> "Pod IP": how kubectl's generic
// describer titles fields.
std::string Title(const std::string& key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    bool upper = std::isupper(static_cast<unsigned char>(c));
    bool prev_lower = i > 0 && std::islower(static_cast<unsigned char>(key[i - 1]));
    bool next_lower = i + 1 < key.size() && std::islower(static_cast<unsigned char>(key[i + 1]));
    bool prev_upper = i > 0 && std::isupper(static_cast<unsigned char>(key[i - 1]));
    if (i > 0 && upper && (prev_lower || (prev_upper && next_lower))) out += ' ';
    out += i == 0 ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
  }
  return out;
}

std::string Scalar(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "<none>";
  return v.dump();
}

bool IsScalar(const json& v) { return !v.is_object() && !v.is_array(); }

// Aligned "Key:  value" lines at `indent`: values start two columns after the
// longest key of the block, nested blocks go two deeper.
std::string Block(const std::vector<std::pair<std::string, std::string>>& rows, size_t indent) {
  size_t width = 0;
  for (const auto& [k, v] : rows) width = std::max(width, k.size() + 1);
  std::string out;
  for (const auto& [k, v] : rows) {
    out += std::string(indent, ' ') + k + ":";
    if (!v.empty()) out += std::string(width - k.size() - 1 + 2, ' ') + v;
    out += "\n";
  }
  return out;
}

std::string TableText(const std::vector<std::vector<std::string>>& rows, size_t indent) {
  std::vector<size_t> widths;
  for (const auto& r : rows) {
    if (widths.size() < r.size()) widths.resize(r.size(), 0);
    for (size_t i = 0; i < r.size(); ++i) widths[i] = std::max(widths[i], r[i].size());
  }
  std::string out;
  for (const auto& r : rows) {
    std::string line(indent, ' ');
    for (size_t i = 0; i < r.size(); ++i) {
      line += r[i];
      if (i + 1 < r.size()) line += std::string(widths[i] - r[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string Nested(const json& v, size_t indent);

std::string ConditionsTable(const json& conditions, size_t indent) {
  std::vector<std::vector<std::string>> rows = {{"Type", "Status", "Reason", "Message"},
                                                {"----", "------", "------", "-------"}};
  for (const auto& c : conditions) {
    if (!c.is_object()) continue;
    rows.push_back({c.value("type", ""), c.value("status", ""), c.value("reason", ""),
                    c.value("message", "")});
  }
  return TableText(rows, indent);
}

std::string MapText(const json& object, size_t indent) {
  std::string out;
  std::vector<std::pair<std::string, std::string>> scalars;
  auto flush = [&] {
    out += Block(scalars, indent);
    scalars.clear();
  };
  for (const auto& [k, v] : object.items()) {
    if (IsScalar(v) || v.empty()) {
      scalars.emplace_back(Title(k), v.empty() && !IsScalar(v) ? "" : Scalar(v));
      continue;
    }
    flush();
    out += std::string(indent, ' ') + Title(k) + ":\n";
    if (k == "conditions" && v.is_array()) {
      out += ConditionsTable(v, indent + 2);
    } else {
      out += Nested(v, indent + 2);
    }
  }
  flush();
  return out;
}

std::string Nested(const json& v, size_t indent) {
  if (v.is_object()) return MapText(v, indent);
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) out += Nested(item, indent);
    return out;
  }
  return std::string(indent, ' ') + Scalar(v) + "\n";
}

std::string Pairs(const json& md, const char* key, const char* separator) {
  if (!md.contains(key) || !md[key].is_object() || md[key].empty()) return "<none>";
  std::string out;
  const std::string pad(13, ' ');  // continuation lines line up under the first value
  for (const auto& [k, v] : md[key].items()) {
    if (!out.empty()) out += "\n" + pad;
    out += k + separator + Scalar(v);
  }
  return out;
}

int64_t ParseTime(const std::string& rfc3339) {
  std::tm tm{};
  std::istringstream in(rfc3339);
  in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return -1;
  return static_cast<int64_t>(timegm(&tm));
}

std::string Age(const json& event) {
  for (const char* f : {"lastTimestamp", "eventTime", "firstTimestamp"}) {
    if (event.contains(f) && event[f].is_string()) {
      int64_t t = ParseTime(event[f].get<std::string>());
      if (t < 0) continue;
      int64_t s = std::max<int64_t>(0, static_cast<int64_t>(std::time(nullptr)) - t);
      if (s < 120) return std::to_string(s) + "s";
      if (s < 7200) return std::to_string(s / 60) + "m";
      if (s < 172800) return std::to_string(s / 3600) + "h";
      return std::to_string(s / 86400) + "d";
    }
  }
  return "<unknown>";
}

std::string EventsText(ApiClient& client, const ResourceCatalog& catalog, const json& object,
                       const ApiResource& type, const std::string& ns) {
  auto events_type = catalog.Resolve("events");
  if (!events_type.ok()) return "Events:  <none>\n";
  const std::string selector = "involvedObject.name=" + object["metadata"].value("name", "") +
                               ",involvedObject.kind=" + type.kind;
  auto list =
      client.Json("GET", WithQuery(events_type->CollectionPath(ns), {{"fieldSelector", selector}}));
  if (!list.ok() || !list->contains("items") || (*list)["items"].empty()) {
    return "Events:  <none>\n";
  }
  std::vector<std::vector<std::string>> rows = {{"Type", "Reason", "Age", "From", "Message"},
                                                {"----", "------", "----", "----", "-------"}};
  for (const auto& e : (*list)["items"]) {
    std::string from;
    if (e.contains("source") && e["source"].is_object()) from = e["source"].value("component", "");
    if (from.empty()) from = e.value("reportingComponent", "");
    rows.push_back(
        {e.value("type", ""), e.value("reason", ""), Age(e), from, e.value("message", "")});
  }
  return "Events:\n" + TableText(rows, 2);
}

int RunDescribe(const DescribeArgs& a) {
  ApiClient client(a.options.ServerUrl());
  auto catalog = ResourceCatalog::Discover(client);
  if (!catalog.ok()) return ReportError(catalog.status());
  auto type = catalog->Resolve(a.type);
  if (!type.ok()) return ReportError(type.status());
  const std::string ns = type->namespaced ? a.options.namespace_ : "";
  auto object = client.Json("GET", type->ObjectPath(ns, a.name));
  if (!object.ok()) return ReportError(object.status());
  const json& o = *object;
  const json md =
      o.contains("metadata") && o["metadata"].is_object() ? o["metadata"] : json::object();

  std::vector<std::pair<std::string, std::string>> head = {{"Name", md.value("name", "")}};
  if (type->namespaced) head.emplace_back("Namespace", md.value("namespace", ""));
  head.emplace_back("Labels", Pairs(md, "labels", "="));
  head.emplace_back("Annotations", Pairs(md, "annotations", ": "));
  head.emplace_back("API Version", o.value("apiVersion", type->GroupVersion()));
  head.emplace_back("Kind", o.value("kind", type->kind));
  std::string out = Block(head, 0);
  json rest_md = md;
  for (const char* f : {"name", "namespace", "labels", "annotations", "managedFields"}) {
    rest_md.erase(f);
  }
  if (!rest_md.empty()) out += "Metadata:\n" + Nested(rest_md, 2);
  for (const auto& [k, v] : o.items()) {
    if (k == "apiVersion" || k == "kind" || k == "metadata") continue;
    if (IsScalar(v)) {
      out += Block({{Title(k), Scalar(v)}}, 0);
    } else {
      out += Title(k) + ":\n" + Nested(v, 2);
    }
  }
  out += EventsText(client, *catalog, o, *type, ns);
  std::cout << out;
  std::cout.flush();
  return 0;
}

}  // namespace

void RegisterDescribeCommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("describe", "Show one object in detail, with its events");
  auto args = std::make_shared<DescribeArgs>();
  cmd->add_option("type", args->type, "Resource type: plural, singular, short name or Kind")
      ->required();
  cmd->add_option("name", args->name, "Object name")->required();
  AddClientFlags(*cmd, args->options, /*all_namespaces_flag=*/false);
  cmd->callback([args, &exit_code] { exit_code = RunDescribe(*args); });
}

}  // namespace muster::cli
