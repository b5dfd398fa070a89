#include "server/manifest_seed.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/decode.h"
#include "control/resource_types.h"
#include "server/yaml_json.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SourceFile {
  std::string name;
  std::string text;
};

bool IsManifest(const fs::path& p) {
  std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

Status Collect(const fs::path& path, std::vector<SourceFile>& out) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(path, ec)) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) {
      if (fs::is_directory(e, ec) || IsManifest(e)) {
        if (Status s = Collect(e, out); !s.ok()) return s;
      }
    }
    return Status::Ok();
  }
  std::ifstream in(path);
  if (!in) return InvalidArgument(path.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  out.push_back({path.string(), ss.str()});
  return Status::Ok();
}

}  // namespace

Result<SeedStats> SeedManifests(ApiHandler& handler, const std::vector<std::string>& paths,
                                bool fresh_store, std::ostream& err) {
  std::vector<SourceFile> files;
  for (const auto& p : paths) {
    if (p == "-") {
      std::stringstream ss;
      ss << std::cin.rdbuf();
      files.push_back({"<stdin>", ss.str()});
    } else if (Status s = Collect(p, files); !s.ok()) {
      return s;
    }
  }
  api::DecodeResult decoded;
  for (const auto& f : files) api::DecodeText(f.text, f.name, decoded);
  api::ValidateCrossObject(decoded);
  api::SortDiagnostics(decoded);
  if (decoded.HasErrors()) {
    for (const auto& d : decoded.diagnostics) err << d.ToString() << '\n';
    return InvalidArgument("invalid manifests");
  }
  SeedStats stats;
  for (const auto& f : files) {
    auto docs = ParseDocuments(f.text);
    if (!docs.ok()) return InvalidArgument(f.name + ": " + docs.status().message());
    for (auto& doc : *docs) {
      const std::string api_version = doc.value("apiVersion", "");
      const std::string kind = doc.value("kind", "");
      const control::ResourceType* type = control::FindByKind(api_version, kind);
      if (!type) {
        ++stats.skipped;
        continue;
      }
      std::string name, ns;
      if (doc.contains("metadata") && doc["metadata"].is_object()) {
        name = doc["metadata"].value("name", "");
        ns = doc["metadata"].value("namespace", "");
      }
      if (ns.empty()) ns = "default";
      // A generated name cannot be matched on restart: create those only once.
      if (name.empty() && !fresh_store) {
        ++stats.present;
        continue;
      }
      const std::string collection =
          (type->group.empty() ? "/api/" : "/apis/" + type->group + "/") +
          api_version.substr(api_version.find('/') + 1) +
          (type->namespaced ? "/namespaces/" + ns + "/" : "/") + type->plural;
      if (!name.empty()) {
        ApiRequest get{"GET", collection + "/" + name, {}, "application/json", "",
                       "",    auth::ServerUser()};
        auto got = handler.Handle(get);
        if (auto* r = std::get_if<ApiResponse>(&got); r && r->code == 200) {
          ++stats.present;
          continue;
        }
      }
      ApiRequest post{"POST",     collection,        {}, "application/json", "application/json",
                      doc.dump(), auth::ServerUser()};
      auto created = handler.Handle(post);
      auto* r = std::get_if<ApiResponse>(&created);
      if (!r || r->code != 201) {
        return InvalidArgument(f.name + ": " + kind + " " + name + ": " +
                               (r ? r->body : std::string("unexpected watch")));
      }
      ++stats.created;
    }
  }
  return stats;
}

}  // namespace muster::server
