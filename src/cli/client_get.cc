// muster get TYPE [NAME...]: lists or shows objects like `kubectl get`, as the
// server's Table (default, -o wide) or as name/json/yaml; -w keeps watching.
#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/client_commands.h"
#include "cli/client_options.h"
#include "cli/resource_catalog.h"
#include "cli/table_output.h"
#include "cli/yaml_output.h"

namespace muster::cli {
namespace {

using nlohmann::json;

struct GetArgs {
  ClientOptions options;
  std::string type;
  std::vector<std::string> names;
  std::string output;
  std::string selector;
  bool watch = false;
};

bool TableFormat(const std::string& output) { return output.empty() || output == "wide"; }

std::string ObjectName(const json& o) {
  if (!o.contains("metadata") || !o["metadata"].is_object()) return "";
  return o["metadata"].value("name", "");
}

void PrintObjects(const std::vector<json>& objects, bool single, const GetArgs& a,
                  const ApiResource& type) {
  if (a.output == "name") {
    for (const auto& o : objects) std::cout << type.DisplayName() << "/" << ObjectName(o) << "\n";
    return;
  }
  json doc = single && objects.size() == 1 ? objects[0]
                                           : json{{"apiVersion", "v1"},
                                                  {"items", objects},
                                                  {"kind", "List"},
                                                  {"metadata", {{"resourceVersion", ""}}}};
  if (a.output == "json") {
    std::cout << doc.dump(4) << "\n";
  } else {
    std::cout << ToYaml(doc);
  }
}

// Prints the events of a watch as they come: table rows lined up with what was
// printed before, or objects in the chosen output.
Status Watch(ApiClient& client, const GetArgs& a, const ApiResource& type, const std::string& ns,
             const std::string& resource_version, TableOutput& table) {
  std::map<std::string, std::string> query = {
      {"watch", "1"}, {"resourceVersion", resource_version}, {"labelSelector", a.selector}};
  if (a.names.size() == 1) query["fieldSelector"] = "metadata.name=" + a.names[0];
  const bool as_table = TableFormat(a.output);
  std::string buffer;
  Status error = Status::Ok();
  Status s = client.Stream(
      WithQuery(type.CollectionPath(ns), query), as_table ? kAcceptTable : "application/json",
      [&](std::string_view data) {
        buffer.append(data);
        for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
          json event = json::parse(buffer.substr(0, nl), nullptr, false);
          buffer.erase(0, nl + 1);
          if (!event.is_object() || !event.contains("object")) continue;
          const std::string kind = event.value("type", "");
          if (kind == "BOOKMARK") continue;
          if (kind == "ERROR") {
            error = Status(StatusCode::kUnavailable,
                           "Error from server: " + event["object"].value("message", ""));
            return false;
          }
          if (as_table) {
            std::cout << table.Format(event["object"], !table.has_columns());
          } else {
            PrintObjects({event["object"]}, true, a, type);
          }
        }
        std::cout.flush();
        return true;
      });
  return s.ok() ? error : s;
}

int RunGet(const GetArgs& a) {
  ApiClient client(a.options.ServerUrl());
  auto catalog = ResourceCatalog::Discover(client);
  if (!catalog.ok()) return ReportError(catalog.status());
  auto type = catalog->Resolve(a.type);
  if (!type.ok()) return ReportError(type.status());
  const std::string list_ns = type->namespaced ? a.options.RequestNamespace() : "";
  const std::string object_ns = type->namespaced ? a.options.namespace_ : "";
  const bool as_table = TableFormat(a.output);
  const std::string accept = as_table ? kAcceptTable : "application/json";
  int exit_code = 0;
  std::string resource_version;
  std::vector<json> results;  // Tables or objects
  if (a.names.empty()) {
    auto list = client.Json(
        "GET", WithQuery(type->CollectionPath(list_ns), {{"labelSelector", a.selector}}), "",
        accept);
    if (!list.ok()) return ReportError(list.status());
    if (list->contains("metadata") && (*list)["metadata"].is_object()) {
      resource_version = (*list)["metadata"].value("resourceVersion", "");
    }
    if (as_table) {
      results.push_back(std::move(*list));
    } else if (list->contains("items") && (*list)["items"].is_array()) {
      for (auto& item : (*list)["items"]) {
        // Lists leave kind/apiVersion out of their items; kubectl puts them back.
        item["apiVersion"] = type->GroupVersion();
        item["kind"] = type->kind;
        results.push_back(std::move(item));
      }
    }
  } else {
    for (const auto& name : a.names) {
      auto got = client.Json("GET", type->ObjectPath(object_ns, name), "", accept);
      if (!got.ok()) {
        exit_code = ReportError(got.status());
        continue;
      }
      results.push_back(std::move(*got));
    }
  }

  TableOutput table(a.output == "wide",
                    type->namespaced && a.options.all_namespaces && a.names.empty());
  if (as_table) {
    json merged = {{"rows", json::array()}};
    for (auto& t : results) {
      table.TakeColumns(t);
      if (t.contains("rows") && t["rows"].is_array()) {
        for (auto& row : t["rows"]) merged["rows"].push_back(std::move(row));
      }
    }
    if (!merged["rows"].empty()) {
      std::cout << table.Format(merged, true);
    } else if (a.names.empty() && !a.watch) {
      std::cerr << (list_ns.empty() ? std::string("No resources found")
                                    : "No resources found in " + list_ns + " namespace.")
                << "\n";
    }
  } else if (!results.empty() || a.names.empty()) {
    PrintObjects(results, !a.names.empty() && a.names.size() == 1, a, *type);
  }
  std::cout.flush();
  if (a.watch && exit_code == 0) {
    if (resource_version.empty()) {
      resource_version = std::to_string(0);  // named objects: watch from their current state
      for (const auto& r : results) {
        const json& meta = r.contains("metadata") ? r["metadata"] : json::object();
        const std::string rv = meta.is_object() ? meta.value("resourceVersion", "") : "";
        if (!rv.empty()) resource_version = rv;
      }
    }
    if (Status s =
            Watch(client, a, *type, a.names.empty() ? list_ns : object_ns, resource_version, table);
        !s.ok()) {
      return ReportError(s);
    }
  }
  return exit_code;
}

}  // namespace

void RegisterGetCommand(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("get", "List or show objects from a muster server (like kubectl get)");
  auto args = std::make_shared<GetArgs>();
  cmd->add_option("type", args->type, "Resource type: plural, singular, short name or Kind")
      ->required();
  cmd->add_option("names", args->names, "Object names (default: every object)");
  cmd->add_option("-o,--output", args->output, "Output format")
      ->check(CLI::IsMember({"", "wide", "yaml", "json", "name"}));
  cmd->add_option("-l,--selector", args->selector, "Label selector (e.g. team=a,tier!=x)");
  cmd->add_flag("-w,--watch", args->watch, "After listing, print changes as they happen");
  AddClientFlags(*cmd, args->options, /*all_namespaces_flag=*/true);
  cmd->callback([args, &exit_code] { exit_code = RunGet(*args); });
}

}  // namespace muster::cli
