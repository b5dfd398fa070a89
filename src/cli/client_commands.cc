// muster apply / delete / logs, and the registration of every client command
// (get and describe live in client_get.cc and client_describe.cc): a thin client of
// the kubectl-compatible API `muster serve` offers, for machines without kubectl.
#include "cli/client_commands.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/api_client.h"
#include "cli/apply_patch.h"
#include "cli/client_options.h"
#include "cli/commands.h"
#include "cli/manifest_files.h"
#include "cli/resource_catalog.h"

namespace muster::cli {
namespace {

using nlohmann::json;

// One object a command acts on, located on the server.
struct Located {
  ApiResource type;
  std::string namespace_;  // "" for cluster-scoped types
  std::string name;
  json object;  // the manifest (apply); null for `delete TYPE NAME`
};

// Finds each manifest object's type and namespace (metadata.namespace, else -n).
// An object that cannot be located is reported in `errors` and left out, so the
// others still apply (as kubectl does).
Result<std::vector<Located>> LocateManifests(const ResourceCatalog& catalog,
                                             const std::vector<std::string>& paths,
                                             const ClientOptions& options,
                                             std::vector<Status>& errors) {
  auto objects = ReadManifestObjects(paths);
  if (!objects.ok()) return objects.status();
  std::vector<Located> out;
  for (auto& m : *objects) {
    json& o = m.object;
    const std::string api_version = o.value("apiVersion", "");
    const std::string kind = o.value("kind", "");
    if (api_version.empty() || kind.empty()) {
      errors.push_back(InvalidArgument("error validating \"" + m.source +
                                       "\": apiVersion and kind must be set"));
      continue;
    }
    auto type = catalog.ForKind(api_version, kind);
    if (!type.ok()) {
      errors.push_back(Status(type.status().code(), "unable to recognize \"" + m.source +
                                                        "\": " + type.status().message()));
      continue;
    }
    if (!o.contains("metadata") || !o["metadata"].is_object()) o["metadata"] = json::object();
    json& md = o["metadata"];
    const std::string name = md.value("name", "");
    if (name.empty()) {
      errors.push_back(
          InvalidArgument("\"" + m.source + "\": " + kind + ": resource name may not be empty"));
      continue;
    }
    std::string ns;
    if (type->namespaced) {
      ns = md.value("namespace", "");
      if (ns.empty()) ns = options.namespace_;
      md["namespace"] = ns;
    }
    out.push_back({*type, ns, name, std::move(o)});
  }
  return out;
}

// Creates the object, or patches the stored one three ways from the manifest last
// applied (apply_patch.h: what the server and other writers set stays); prints what
// happened the way kubectl apply does.
Status ApplyOnce(ApiClient& client, const Located& l) {
  const std::string what = l.type.DisplayName() + "/" + l.name;
  auto current = client.Send("GET", l.type.ObjectPath(l.namespace_, l.name));
  if (!current.ok()) return current.status();
  const json modified = WithLastApplied(l.object);
  if (current->code == 404) {
    auto created = client.Json("POST", l.type.CollectionPath(l.namespace_), modified.dump());
    if (!created.ok()) return created.status();
    std::cout << what << " created\n";
    return Status::Ok();
  }
  if (current->code != 200) return ReplyError(*current);
  json stored = json::parse(current->body, nullptr, false);
  if (!stored.is_object()) return Internal("the server's answer for " + what + " is not JSON");
  const json patch = ThreeWayMergePatch(LastApplied(stored), modified, stored);
  if (patch.empty()) {
    std::cout << what << " unchanged\n";
    return Status::Ok();
  }
  const std::string stored_rv = stored["metadata"].value("resourceVersion", "");
  auto updated = client.Json("PATCH", l.type.ObjectPath(l.namespace_, l.name), patch.dump());
  if (!updated.ok()) return updated.status();
  // The store writes nothing for an update that changes nothing, so an unchanged
  // resourceVersion means the object already was what the manifest says.
  const bool same = (*updated)["metadata"].value("resourceVersion", "") == stored_rv;
  std::cout << what << (same ? " unchanged" : " configured") << "\n";
  return Status::Ok();
}

// A conflict (another writer between our read and our write): read again and
// retry, as kubectl's apply does.
Status ApplyOne(ApiClient& client, const Located& l) {
  Status status;
  for (int attempt = 0; attempt < 5; ++attempt) {
    status = ApplyOnce(client, l);
    if (status.code() != StatusCode::kConflict) return status;
  }
  return status;
}

struct ApplyArgs {
  ClientOptions options;
  std::vector<std::string> paths;
};

int RunApply(const ApplyArgs& a) {
  ApiClient client(a.options.ServerUrl());
  auto catalog = ResourceCatalog::Discover(client);
  if (!catalog.ok()) return ReportError(catalog.status());
  std::vector<Status> errors;
  auto located = LocateManifests(*catalog, a.paths, a.options, errors);
  if (!located.ok()) return ReportError(located.status());
  int exit_code = 0;
  for (const auto& e : errors) exit_code = ReportError(e);
  for (const auto& l : *located) {
    if (Status s = ApplyOne(client, l); !s.ok()) {
      std::cout.flush();
      exit_code = ReportError(s);
      if (s.code() == StatusCode::kUnavailable) break;  // the server is gone
    }
  }
  std::cout.flush();
  return exit_code;
}

struct DeleteArgs {
  ClientOptions options;
  std::vector<std::string> paths;
  std::vector<std::string> args;  // TYPE NAME...
};

int RunDelete(const DeleteArgs& a) {
  if (a.paths.empty() == a.args.empty() || (a.paths.empty() && a.args.size() < 2)) {
    std::cerr << "error: give either TYPE NAME... or -f PATH\n";
    return 2;
  }
  ApiClient client(a.options.ServerUrl());
  auto catalog = ResourceCatalog::Discover(client);
  if (!catalog.ok()) return ReportError(catalog.status());
  std::vector<Located> targets;
  int exit_code = 0;
  if (!a.paths.empty()) {
    std::vector<Status> errors;
    auto located = LocateManifests(*catalog, a.paths, a.options, errors);
    if (!located.ok()) return ReportError(located.status());
    for (const auto& e : errors) exit_code = ReportError(e);
    targets = std::move(*located);
  } else {
    auto type = catalog->Resolve(a.args[0]);
    if (!type.ok()) return ReportError(type.status());
    for (size_t i = 1; i < a.args.size(); ++i) {
      targets.push_back({*type, type->namespaced ? a.options.namespace_ : "", a.args[i], nullptr});
    }
  }
  // kubectl's default cascade (Background): without it a batch/v1 Job's deletion
  // would orphan its pods, which then run on (the API's default for that version).
  const std::string options =
      R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"})";
  for (const auto& t : targets) {
    auto deleted = client.Json("DELETE", t.type.ObjectPath(t.namespace_, t.name), options);
    if (!deleted.ok()) {
      std::cout.flush();
      exit_code = ReportError(deleted.status());
      continue;
    }
    std::cout << t.type.DisplayName() << " \"" << t.name << "\" deleted\n";
  }
  std::cout.flush();
  return exit_code;
}

struct LogsArgs {
  ClientOptions options;
  std::string pod;
  std::string container;
  bool follow = false;
  bool previous = false;
  int64_t tail = -1;
};

int RunLogs(const LogsArgs& a) {
  ApiClient client(a.options.ServerUrl());
  std::map<std::string, std::string> query = {{"container", a.container}};
  if (a.follow) query["follow"] = "true";
  if (a.previous) query["previous"] = "true";
  if (a.tail >= 0) query["tailLines"] = std::to_string(a.tail);
  const std::string path = "/api/v1/namespaces/" + a.options.namespace_ + "/pods/" + a.pod + "/log";
  Status s = client.Stream(WithQuery(path, query), "text/plain, */*", [](std::string_view data) {
    std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    std::cout.flush();
    return static_cast<bool>(std::cout);
  });
  if (!s.ok()) return ReportError(s);
  return 0;
}

void RegisterApplyCommand(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("apply", "Create or update objects on a muster server from manifests");
  auto args = std::make_shared<ApplyArgs>();
  cmd->add_option("-f,--filename", args->paths,
                  "Manifest file, directory (recursive, name order) or - for stdin; repeatable")
      ->required()
      ->take_all();
  AddClientFlags(*cmd, args->options, /*all_namespaces_flag=*/false);
  cmd->callback([args, &exit_code] { exit_code = RunApply(*args); });
}

void RegisterDeleteCommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("delete", "Delete objects by TYPE NAME... or by manifest (-f)");
  auto args = std::make_shared<DeleteArgs>();
  cmd->add_option("args", args->args, "TYPE NAME...");
  cmd->add_option("-f,--filename", args->paths, "Manifests naming the objects to delete")
      ->take_all();
  AddClientFlags(*cmd, args->options, /*all_namespaces_flag=*/false);
  cmd->callback([args, &exit_code] { exit_code = RunDelete(*args); });
}

void RegisterLogsCommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("logs", "Print a pod's output (like kubectl logs)");
  auto args = std::make_shared<LogsArgs>();
  cmd->add_option("pod", args->pod, "Pod name")->required();
  cmd->add_option("-c,--container", args->container, "Container (default: the pod's only one)");
  cmd->add_flag("-f,--follow", args->follow, "Keep printing output until the pod finishes");
  cmd->add_flag("-p,--previous", args->previous, "The previous attempt's output");
  cmd->add_option("--tail", args->tail, "Only the last N lines (-1: all)")->capture_default_str();
  AddClientFlags(*cmd, args->options, /*all_namespaces_flag=*/false);
  cmd->callback([args, &exit_code] { exit_code = RunLogs(*args); });
}

}  // namespace

void RegisterClientCommands(CLI::App& app, int& exit_code) {
  RegisterApplyCommand(app, exit_code);
  RegisterGetCommand(app, exit_code);
  RegisterDescribeCommand(app, exit_code);
  RegisterDeleteCommand(app, exit_code);
  RegisterLogsCommand(app, exit_code);
}

}  // namespace muster::cli
