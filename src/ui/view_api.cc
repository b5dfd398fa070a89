#include "ui/view_api.h"

#include <algorithm>
#include <functional>
#include <set>

#include "ui/view_json.h"
#include "ui/view_reader.h"

namespace muster::ui {
namespace {

using nlohmann::json;

ViewResponse Status(int code, const std::string& reason, const std::string& message,
                    const std::string& kind = "", const std::string& name = "") {
  json details = json::object();
  if (!name.empty()) details["name"] = name;
  if (!kind.empty()) {
    details["group"] = kViewGroup;
    details["kind"] = kind;
  }
  json body = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object()},
               {"status", "Failure"}, {"message", message}, {"reason", reason},
               {"details", details},  {"code", code}};
  return {code, std::move(body)};
}

// One object of the view, built to JSON only when it is returned or filtered.
struct Item {
  const std::string* namespace_;
  const std::string* name;
  std::function<json()> build;
  // A field read without building the JSON (the common selector paths), or nullopt.
  std::function<std::optional<std::string>(const std::string&)> field;
};

const std::string kEmpty;
const std::string kClusterName = kClusterViewName;

std::vector<Item> Items(const control::SchedulerView& view, const std::string& plural,
                        const ViewReader& reader, const std::set<std::string>& namespaces) {
  std::vector<Item> items;
  const int64_t gen = view.generation;
  if (plural == "queueviews") {
    for (const auto& q : view.queues) {
      items.push_back({&kEmpty, &q.name, [&q, gen] { return QueueViewJson(q, gen); }, {}});
    }
  } else if (plural == "workloadviews") {
    for (const auto& w : view.workloads) {
      items.push_back({&w.namespace_, &w.name,
                       [&w, gen, &reader, &namespaces] {
                         json o = WorkloadViewJson(w, gen);
                         reader.Redact("workloadviews", o, namespaces);
                         return o;
                       },
                       [&w](const std::string& path) -> std::optional<std::string> {
                         if (path == "state") return w.state;
                         if (path == "queue.clusterQueue") return w.cluster_queue;
                         if (path == "queue.localQueue") return w.local_queue;
                         if (path == "metadata.namespace") return w.namespace_;
                         if (path == "metadata.name") return w.name;
                         return std::nullopt;
                       }});
    }
  } else if (plural == "nodeviews") {
    for (const auto& n : view.nodes) {
      items.push_back({&kEmpty,
                       &n.name,
                       [&n, gen, &reader, &namespaces] {
                         json o = NodeViewJson(n, gen);
                         reader.Redact("nodeviews", o, namespaces);
                         return o;
                       },
                       {}});
    }
  } else if (plural == "clusterviews") {
    const auto& c = view.cluster;
    items.push_back({&kEmpty,
                     &kClusterName,
                     [&view, &c, gen, &reader] {
                       json o = ClusterViewJson(c, gen);
                       if (reader.restricted()) {
                         // The counts of what the reader may read, as their list shows.
                         std::map<std::string, int64_t> counts;
                         for (const auto& w : view.workloads) {
                           if (reader.MayReadNamespace(w.namespace_)) ++counts[w.state];
                         }
                         o["workloads"] = counts;
                       }
                       return o;
                     },
                     {}});
  }
  return items;
}

std::string Param(const ViewRequest& r, const std::string& key) {
  auto it = r.query.find(key);
  return it == r.query.end() ? "" : it->second;
}

// A dotted path's value as a string ("" when absent; numbers and booleans as JSON).
std::string PathValue(const json& object, const std::string& path) {
  const json* cur = &object;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t dot = path.find('.', pos);
    if (dot == std::string::npos) dot = path.size();
    const std::string key = path.substr(pos, dot - pos);
    if (!cur->is_object() || !cur->contains(key)) return "";
    cur = &(*cur)[key];
    pos = dot + 1;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_null()) return "";
  return cur->dump();
}

struct FieldTerm {
  std::string path;
  std::string value;
  bool equal = true;
};

// "a=b,c!=d" (and "a==b"); InvalidArgument-style message on a malformed term.
bool ParseFieldSelector(const std::string& text, std::vector<FieldTerm>& terms,
                        std::string& error) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string term = text.substr(pos, comma - pos);
    pos = comma + 1;
    if (term.empty()) continue;
    FieldTerm t;
    size_t op = term.find("!=");
    size_t len = 2;
    if (op != std::string::npos) {
      t.equal = false;
    } else if ((op = term.find("==")) == std::string::npos) {
      op = term.find('=');
      len = 1;
    }
    if (op == std::string::npos || op == 0) {
      error = "invalid field selector term \"" + term + "\": want path=value or path!=value";
      return false;
    }
    t.path = term.substr(0, op);
    t.value = term.substr(op + len);
    terms.push_back(std::move(t));
  }
  return true;
}

// Whether the item matches every term; builds the JSON only when a term needs it,
// and then keeps it in `built`.
bool Matches(const Item& item, const std::vector<FieldTerm>& terms, std::optional<json>& built) {
  for (const auto& t : terms) {
    std::optional<std::string> value;
    if (item.field) value = item.field(t.path);
    if (!value) {
      if (!built) built = item.build();
      value = PathValue(*built, t.path);
    }
    if ((*value == t.value) != t.equal) return false;
  }
  return true;
}

// Whether an object without labels matches: only when every requirement is a
// negative one ("!key", "key!=value", "key notin (...)").
bool LabelSelectorMatchesUnlabelled(const std::string& selector) {
  int depth = 0;
  std::string term;
  auto negative = [](const std::string& t) {
    size_t b = t.find_first_not_of(' ');
    if (b == std::string::npos) return true;  // empty term
    return t[b] == '!' || t.find("!=") != std::string::npos ||
           t.find(" notin ") != std::string::npos;
  };
  for (char c : selector + ",") {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      if (!negative(term)) return false;
      term.clear();
      continue;
    }
    term += c;
  }
  return true;
}

}  // namespace

std::vector<const control::ResourceType*> ViewKinds() {
  std::vector<const control::ResourceType*> out;
  for (const auto& t : control::ResourceTypes()) {
    if (t.view) out.push_back(&t);
  }
  return out;
}

const control::ResourceType* FindViewKind(const std::string& plural) {
  return control::FindResource(kViewGroup, kViewVersion, plural);
}

std::optional<ViewRequest> ParseViewPath(std::string_view path) {
  const std::string_view prefix = "/apis/muster.dev/v1alpha1/";
  if (!path.starts_with(prefix)) return std::nullopt;
  std::vector<std::string> seg;
  for (size_t pos = prefix.size(); pos < path.size();) {
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    if (next > pos) seg.emplace_back(path.substr(pos, next - pos));
    pos = next + 1;
  }
  ViewRequest r;
  size_t i = 0;
  if (seg.size() >= 3 && seg[0] == "namespaces") {
    r.namespace_ = seg[1];
    i = 2;
  }
  if (i >= seg.size() || seg.size() - i > 3) return std::nullopt;
  const control::ResourceType* kind = FindViewKind(seg[i]);
  if (kind == nullptr || !kind->view || (!kind->namespaced && !r.namespace_.empty()))
    return std::nullopt;
  r.plural = seg[i];
  if (i + 1 < seg.size()) r.name = seg[i + 1];
  if (i + 2 < seg.size()) r.subresource = seg[i + 2];
  return r;
}

ViewResponse HandleViewRead(const control::SchedulerView* view, const ViewRequest& r,
                            const ViewReader& reader) {
  const control::ResourceType* kind = FindViewKind(r.plural);
  if (kind == nullptr || !kind->view) {
    return Status(404, "NotFound", "the server could not find the requested resource");
  }
  if (view == nullptr) {
    return Status(503, "ServiceUnavailable",
                  "the scheduler has not published its view yet (no reconcile has run)",
                  kind->plural);
  }
  const std::string rv = std::to_string(view->generation);
  // The namespaces the view mentions, for withholding names in messages.
  std::set<std::string> namespaces;
  if (reader.restricted()) {
    for (const auto& w : view->workloads) namespaces.insert(w.namespace_);
  }
  std::vector<Item> items = Items(*view, r.plural, reader, namespaces);

  if (!r.subresource.empty()) {
    if (r.plural != "clusterviews" || r.name != kClusterViewName ||
        (r.subresource != "utilization" && r.subresource != "timeline")) {
      return Status(404, "NotFound",
                    "the server could not find the requested resource (subresources: "
                    "clusterviews/cluster/utilization, clusterviews/cluster/timeline)");
    }
    if (r.subresource == "utilization") {
      return {200, ClusterUtilizationJson(view->cluster, view->generation)};
    }
    size_t limit = control::kMaxTimelineEntries;
    if (std::string l = Param(r, "limit"); !l.empty()) {
      char* end = nullptr;
      long long v = std::strtoll(l.c_str(), &end, 10);
      if (end == l.c_str() || *end != '\0' || v < 0) {
        return Status(400, "BadRequest", "limit must be a non-negative integer, got \"" + l + "\"");
      }
      if (v > 0) limit = std::min<size_t>(limit, static_cast<size_t>(v));
    }
    json timeline = ClusterTimelineJson(view->cluster, view->generation, limit);
    reader.Redact("timeline", timeline, namespaces);
    return {200, std::move(timeline)};
  }
  if (!r.name.empty()) {
    for (const auto& item : items) {
      if (*item.name != r.name) continue;
      if (kind->namespaced && !r.namespace_.empty() && *item.namespace_ != r.namespace_) continue;
      return {200, item.build()};
    }
    return Status(404, "NotFound",
                  kind->plural + "." + kViewGroup + " \"" + r.name + "\" not found", kind->plural,
                  r.name);
  }

  const std::string watch = Param(r, "watch");
  if (watch == "true" || watch == "1") {
    return Status(405, "MethodNotAllowed",
                  kind->plural + "." + kViewGroup +
                      " cannot be watched: it is derived from objects that can be (watch "
                      "workloads, nodes, pods or events and read it again)",
                  kind->plural);
  }
  std::vector<FieldTerm> terms;
  std::string error;
  if (!ParseFieldSelector(Param(r, "fieldSelector"), terms, error)) {
    return Status(400, "BadRequest", error);
  }
  if (!LabelSelectorMatchesUnlabelled(Param(r, "labelSelector"))) {
    // Views carry no labels: a selector that requires one matches nothing.
    return {200, json({{"apiVersion", kViewApiVersion},
                       {"kind", kind->kind + "List"},
                       {"metadata", {{"resourceVersion", rv}}},
                       {"items", json::array()}})};
  }
  int64_t limit = kMaxViewPage;
  if (std::string l = Param(r, "limit"); !l.empty()) {
    char* end = nullptr;
    long long v = std::strtoll(l.c_str(), &end, 10);
    if (end == l.c_str() || *end != '\0' || v < 0) {
      return Status(400, "BadRequest", "limit must be a non-negative integer, got \"" + l + "\"");
    }
    if (v > 0) limit = std::min<int64_t>(v, kMaxViewPage);
  }
  // The continue token is the last "namespace/name" returned (names hold no "/").
  std::string after_ns, after_name;
  const std::string token = Param(r, "continue");
  if (!token.empty()) {
    auto slash = token.find('/');
    if (slash == std::string::npos) {
      return Status(400, "BadRequest", "continue: malformed token \"" + token + "\"");
    }
    after_ns = token.substr(0, slash);
    after_name = token.substr(slash + 1);
  }

  json out = json::array();
  std::string next;
  int64_t remaining = 0;
  for (const auto& item : items) {
    if (kind->namespaced && !r.namespace_.empty() && *item.namespace_ != r.namespace_) continue;
    // A list across namespaces holds what the reader may read (view_reader.h).
    if (kind->namespaced && !reader.MayReadNamespace(*item.namespace_)) continue;
    if (!token.empty() &&
        std::tie(*item.namespace_, *item.name) <= std::tie(after_ns, after_name)) {
      continue;
    }
    std::optional<json> built;
    if (!Matches(item, terms, built)) continue;
    if (static_cast<int64_t>(out.size()) >= limit) {
      ++remaining;
      continue;
    }
    if (static_cast<int64_t>(out.size()) + 1 == limit) next = *item.namespace_ + "/" + *item.name;
    out.push_back(built ? std::move(*built) : item.build());
  }
  json metadata = {{"resourceVersion", rv}};
  if (remaining > 0) {
    metadata["continue"] = next;
    metadata["remainingItemCount"] = remaining;
  }
  json list = {{"apiVersion", kViewApiVersion},
               {"kind", kind->kind + "List"},
               {"metadata", metadata},
               {"items", std::move(out)}};
  return {200, std::move(list)};
}

}  // namespace muster::ui
