// LoadPaths: files, directories (recursively, in name order) and stdin.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "api/decode.h"

namespace muster::api {
namespace {

namespace fs = std::filesystem;

// Deeper trees are almost certainly a symlink loop.
constexpr int kMaxDirectoryDepth = 32;

bool IsManifestFile(const fs::path& p) {
  std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

void FileError(DecodeResult& out, const std::string& file, std::string message) {
  Diagnostic d;
  d.file = file;
  d.line = 0;
  d.message = std::move(message);
  out.diagnostics.push_back(std::move(d));
  if (std::find(out.files.begin(), out.files.end(), file) == out.files.end()) {
    out.files.push_back(file);
  }
}

void LoadFile(const std::string& path, DecodeResult& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    FileError(out, path, std::string("cannot read file: ") + std::strerror(errno));
    return;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    FileError(out, path, "cannot read file");
    return;
  }
  DecodeText(text.str(), path, out);
}

// Entries of one directory sorted by name; subdirectories are walked where they
// sort, so "a/z.yaml" comes before "b.yaml".
void LoadDirectory(const fs::path& dir, int depth, DecodeResult& out) {
  if (depth > kMaxDirectoryDepth) {
    FileError(
        out, dir.string(),
        "directory nesting deeper than " + std::to_string(kMaxDirectoryDepth) + " levels; skipped");
    return;
  }
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
  }
  if (ec) {
    FileError(out, dir.string(), "cannot read directory: " + ec.message());
    return;
  }
  std::sort(entries.begin(), entries.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  for (const auto& e : entries) {
    if (fs::is_directory(e, ec)) {
      LoadDirectory(e, depth + 1, out);
    } else if (IsManifestFile(e) && fs::is_regular_file(e, ec)) {
      LoadFile(e.string(), out);
    }
  }
}

}  // namespace

DecodeResult LoadPaths(const std::vector<std::string>& paths, bool warn_unread_fields) {
  DecodeResult out;
  out.warn_unread_fields = warn_unread_fields;
  for (const auto& path : paths) {
    if (path == "-") {
      std::ostringstream text;
      text << std::cin.rdbuf();
      DecodeText(text.str(), "<stdin>", out);
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      LoadDirectory(path, 0, out);
    } else if (fs::exists(path, ec)) {
      LoadFile(path, out);
    } else {
      FileError(out, path, "no such file or directory");
    }
  }
  ValidateCrossObject(out);
  SortDiagnostics(out);
  return out;
}

}  // namespace muster::api
