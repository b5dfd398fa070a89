// WarnUnreadFields: "a field muster does not act on gets a warning, never silence".
// The decoders are the one place that reads a manifest's fields (serve, kube and
// simulate act on the model they build), so a field none of them looked up is one
// muster ignores: a field of the kind it does not act on, or one the kind does not
// have at all (a typo). Each gets a warning naming its path and line.
#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "api/yaml_value.h"

namespace muster::api::internal {
namespace {

// The two document forms the decoders read: yaml-cpp nodes (files) and nlohmann
// JSON (API bodies, walked as they are: walking yaml-cpp's copy costs twice as much).
struct YamlForm {
  using Node = YAML::Node;
  static bool IsList(const Node& n) { return n.IsSequence(); }
  static bool IsMap(const Node& n) { return n.IsMap(); }
  template <typename F>
  static void Items(const Node& n, F f) {
    for (const auto& item : n) f(item);
  }
  // f(key, value, line); keys that are not strings were reported by the decoders.
  template <typename F>
  static void Fields(const Node& n, int line_offset, F f) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      const int line = it->first.Mark().line;
      f(it->first.Scalar(), it->second, line >= 0 ? line + 1 + line_offset : 1);
    }
  }
  static bool IsNull(const Node& n) { return n.IsNull(); }
};

struct JsonForm {
  using Node = nlohmann::json;
  static bool IsList(const Node& n) { return n.is_array(); }
  static bool IsMap(const Node& n) { return n.is_object(); }
  template <typename F>
  static void Items(const Node& n, F f) {
    for (const auto& item : n) f(item);
  }
  template <typename F>
  static void Fields(const Node& n, int /*line_offset*/, F f) {
    for (const auto& [key, value] : n.items()) f(key, value, 1);  // no lines once parsed
  }
  static bool IsNull(const Node& n) { return n.is_null(); }
};

template <typename Form>
class UnreadWalker {
 public:
  explicit UnreadWalker(DocContext& ctx) : ctx_(ctx) {
    std::sort(ctx.read_paths().begin(), ctx.read_paths().end());
    std::sort(ctx.free_form_paths().begin(), ctx.free_form_paths().end());
  }

  void Walk(const typename Form::Node& node, const std::string& path, std::string_view parent_key) {
    if (Form::IsList(node)) {
      size_t i = 0;
      Form::Items(node, [&](const typename Form::Node& item) {
        Walk(item, path + "[" + std::to_string(i++) + "]", parent_key);
      });
      return;
    }
    // An object's metadata (a pod template's too) follows the server's rules, not
    // the decoders': only its labels and annotations are read, by design.
    if (!Form::IsMap(node) || parent_key == "metadata") return;
    Form::Fields(node, ctx_.line_offset(),
                 [&](const std::string& key, const typename Form::Node& value, int line) {
                   if (path.empty() && (key == "apiVersion" || key == "kind" || key == "metadata" ||
                                        key == "status")) {
                     return;
                   }
                   const std::string child = path.empty() ? key : path + "." + key;
                   if (Has(ctx_.free_form_paths(), child)) return;
                   if (Has(ctx_.read_paths(), child)) {
                     Walk(value, child, key);
                   } else if (!Form::IsNull(value)) {  // `field: null` is absent
                     ctx_.Report(line, child, kUnreadFieldMessage, true);
                   }
                 });
  }

 private:
  // A hash collision could only hide a warning, never invent one.
  static bool Has(const std::deque<uint64_t>& sorted, std::string_view path) {
    return std::binary_search(sorted.begin(), sorted.end(), DocContext::PathHash(path));
  }

  DocContext& ctx_;
};

}  // namespace

void WarnUnreadFields(const YAML::Node& root, DocContext& ctx) {
  UnreadWalker<YamlForm>(ctx).Walk(root, "", "");
}

void WarnUnreadFields(const nlohmann::json& root, DocContext& ctx) {
  UnreadWalker<JsonForm>(ctx).Walk(root, "", "");
}

}  // namespace muster::api::internal
