// YamlValue: a yaml-cpp node, or a parsed JSON value, together with its field path
// and line, so every decoder reports problems as CONTRACT section 2 wants them
// without threading paths and lines by hand, and reads an API request's JSON body
// as it reads a manifest's YAML. DocContext collects the diagnostics of one document.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/decode.h"
#include "core/quantity.h"
#include "core/quantity_bounds.h"
#include "model/meta.h"
#include "model/pod.h"

namespace muster::api::internal {

// Diagnostics and cross-object references of the document being decoded. The
// object's identity (kind, namespace, name) is filled in once metadata is read.
class DocContext {
 public:
  DocContext(std::string file, std::vector<Diagnostic>* out) : file_(std::move(file)), out_(out) {}

  void SetObject(std::string kind, std::string ns, std::string name) {
    kind_ = std::move(kind);
    namespace_ = std::move(ns);
    name_ = std::move(name);
  }
  void Report(int line, const std::string& field, std::string message, bool warning);
  void AddRef(int line, const std::string& field, std::string target_kind, std::string target_ns,
              std::string target_name);

  bool has_errors() const { return errors_ > 0; }

  // Unread-field tracking (DecodeResult::warn_unread_fields): the path of every
  // struct field a decoder looks up, and of every free-form map it reads whole, so
  // that WarnUnreadFields (unread_fields.cc) can name the fields nothing read.
  // Paths are kept as 64-bit hashes in deques: a deque grows by blocks of 512
  // bytes, and no allocation on the API's create path is large enough for glibc to
  // consolidate its free lists (which a growing vector or string of paths did, at
  // the cost of a third of the decode).
  void set_track_reads(bool on) { track_reads_ = on; }
  // Whether the document was decoded as a kind muster knows (only then are its
  // unread fields worth naming).
  void set_decoded() { decoded_ = true; }
  bool decoded() const { return decoded_; }
  bool track_reads() const { return track_reads_; }
  static uint64_t PathHash(std::string_view path) { return std::hash<std::string_view>{}(path); }
  void NoteRead(std::string_view path) { read_.push_back(PathHash(path)); }
  void NoteFreeForm(std::string_view path) { free_form_.push_back(PathHash(path)); }
  std::deque<uint64_t>& read_paths() { return read_; }
  std::deque<uint64_t>& free_form_paths() { return free_form_; }
  // Lines of the document's first line in its file minus one: documents are parsed
  // one by one, so yaml-cpp's marks count from the document's start.
  void set_line_offset(int offset) { line_offset_ = offset; }
  int line_offset() const { return line_offset_; }
  const std::string& file() const { return file_; }
  std::vector<ObjectRef>& refs() { return refs_; }

 private:
  std::string file_;
  std::vector<Diagnostic>* out_;
  std::string kind_, namespace_, name_;
  int errors_ = 0;
  int line_offset_ = 0;
  // The same problem reached twice (e.g. several Get() calls on a scalar that
  // should be a map) is reported once.
  std::set<std::string> seen_;
  std::vector<ObjectRef> refs_;
  bool track_reads_ = false;
  bool decoded_ = false;
  std::deque<uint64_t> read_, free_form_;
};

// Warns, on `ctx`, about every field of the document `root` that no decoder read
// (neither looked up nor inside a map read whole): a field muster does not act on,
// or one the kind does not have. apiVersion, kind, metadata and status are not
// checked (the server owns metadata's rules and status is not the user's).
void WarnUnreadFields(const YAML::Node& root, DocContext& ctx);
void WarnUnreadFields(const nlohmann::json& root, DocContext& ctx);

class YamlValue {
 public:
  YamlValue(const YAML::Node& node, std::string path, int fallback_line, DocContext* ctx);
  // A JSON value read in place (it must outlive this value), as its YAML text would
  // read: numbers and booleans as their JSON text, strings as they are, null as
  // absent. Lines are `fallback_line` (a parsed JSON value has none).
  YamlValue(const nlohmann::json* json, std::string path, int fallback_line, DocContext* ctx);

  // Present and not null: `field:` and `field: null` count as absent, as in Go.
  bool IsSet() const;
  bool IsMap() const;
  bool IsList() const;
  int line() const { return line_; }
  const std::string& path() const { return path_; }
  DocContext& ctx() const { return *ctx_; }

  // A struct field. Reports an error when this value is set but not a map.
  YamlValue Get(std::string_view key) const;
  // Elements of a list ("path[i]"); reports an error when set but not a list.
  std::vector<YamlValue> Items() const;
  // Entries of a map with free-form keys ("path[key]"); reports non-maps.
  std::vector<std::pair<std::string, YamlValue>> Entries() const;

  // Scalar readers: nullopt when absent or invalid (the problem is reported).
  std::optional<std::string> String() const;
  std::optional<int64_t> Int(int64_t min, int64_t max) const;
  std::optional<int32_t> Int32(int32_t min = 0) const;
  std::optional<bool> Bool() const;
  std::optional<double> Number() const;
  // Non-negative unless `allow_negative`.
  std::optional<Quantity> Qty(bool allow_negative = false) const;
  // An amount of resource `resource`: non-negative and within its bounds for `scope`
  // (core/quantity_bounds.h), so no object carries what the engine cannot hold.
  std::optional<Quantity> ResourceQty(std::string_view resource, QuantityScope scope) const;
  // Seconds given as a number or a Go duration ("90", "1.5", "15m", "1h30m").
  std::optional<double> Duration() const;
  // Index of the value in `allowed`; reports "is not one of ...".
  std::optional<size_t> Enum(std::initializer_list<std::string_view> allowed) const;

  // Convenience: assign when present and valid, keep the default otherwise.
  void Read(std::string& out) const {
    if (auto v = String()) out = *v;
  }
  void Read(bool& out) const {
    if (auto v = Bool()) out = *v;
  }
  void Read(int32_t& out, int32_t min = 0) const {
    if (auto v = Int32(min)) out = *v;
  }
  void Read(std::optional<int32_t>& out, int32_t min = 0) const {
    if (auto v = Int32(min)) out = *v;
  }

  model::StringMap StringMap() const;
  // resource name -> amount, each checked with ResourceQty.
  model::QuantityMap QuantityMap(QuantityScope scope) const;
  std::vector<std::string> StringList() const;

  // Fields of this map that have no effect by their nature (a description, an
  // exporter's figure muster computes itself): read, so they are not warned about as
  // fields muster ignores (unread_fields.cc).
  void Known(std::initializer_list<std::string_view> keys) const;

  void Error(std::string message) const;
  void Warn(std::string message) const;
  // Records that this field names another object (checked by ValidateCrossObject).
  void Ref(std::string target_kind, std::string target_ns, std::string target_name) const;

 private:
  std::string TypeName() const;
  std::optional<std::string> ScalarText() const;

  YAML::Node node_;  // undefined or unused when json_ is set
  const nlohmann::json* json_ = nullptr;
  std::string path_;
  int line_;
  DocContext* ctx_;
};

// "a map", "a list", "a string"... for type-mismatch messages.
std::string Quote(std::string_view s);

}  // namespace muster::api::internal
