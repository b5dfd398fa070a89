#include "cli/manifest_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "server/yaml_json.h"

namespace muster::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool IsManifest(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

Status Collect(const fs::path& path, std::vector<fs::path>& out) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("the path \"" + path.string() + "\" does not exist");
  if (!fs::is_directory(path, ec)) {
    out.push_back(path);
    return Status::Ok();
  }
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

Status AddDocuments(const std::string& source, const std::string& text,
                    std::vector<ManifestObject>& out) {
  auto docs = server::ParseDocuments(text);
  if (!docs.ok()) return InvalidArgument(source + ": " + docs.status().message());
  for (auto& doc : *docs) {
    if (!doc.is_object()) return InvalidArgument(source + ": a document is not an object");
    const std::string kind = doc.value("kind", "");
    if (kind == "List" || (kind.size() > 4 && kind.ends_with("List") && doc.contains("items"))) {
      if (doc.contains("items") && doc["items"].is_array()) {
        for (auto& item : doc["items"]) out.push_back({source, std::move(item)});
      }
      continue;
    }
    out.push_back({source, std::move(doc)});
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<ManifestObject>> ReadManifestObjects(const std::vector<std::string>& paths) {
  std::vector<ManifestObject> out;
  for (const auto& p : paths) {
    if (p == "-") {
      std::stringstream ss;
      ss << std::cin.rdbuf();
      if (Status s = AddDocuments("<stdin>", ss.str(), out); !s.ok()) return s;
      continue;
    }
    std::vector<fs::path> files;
    if (Status s = Collect(p, files); !s.ok()) return s;
    for (const auto& f : files) {
      std::ifstream in(f);
      if (!in) return InvalidArgument(f.string() + ": cannot read");
      std::stringstream ss;
      ss << in.rdbuf();
      if (Status s = AddDocuments(f.string(), ss.str(), out); !s.ok()) return s;
    }
  }
  return out;
}

}  // namespace muster::cli
