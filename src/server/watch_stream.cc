#include "server/watch_stream.h"

#include <ctime>

#include "server/api_status.h"

namespace muster::server {

using nlohmann::json;

json PresentObject(json object, const control::ResourceType& type, const std::string& version) {
  if (object.is_object()) {
    object["apiVersion"] = type.ApiVersion(version);
    object["kind"] = type.kind;
  }
  return object;
}

WatchStream::WatchStream(const WatchHub& hub, WatchFilter filter, int64_t from_rv,
                         std::vector<json> initial, std::chrono::seconds timeout)
    : hub_(hub),
      filter_(std::move(filter)),
      cursor_(from_rv),
      initial_(std::move(initial)),
      deadline_(std::chrono::steady_clock::now() + timeout),
      last_sent_(std::chrono::steady_clock::now()) {}

bool WatchStream::Matches(const control::Change& c) const {
  if (c.resource != filter_.type->StoreKey()) return false;
  if (!filter_.namespace_.empty() && c.namespace_ != filter_.namespace_) return false;
  // A change that moves an object out of a selector is not reported as DELETED,
  // as upstream does; watchers with selectors see only matching states.
  return filter_.labels.Matches(c.Object()) && filter_.fields.Matches(c.Object());
}

std::string WatchStream::Event(const char* type, const json& object) {
  json payload;
  if (filter_.as_table && std::string(type) != "BOOKMARK" && std::string(type) != "ERROR") {
    TableOptions opts;
    opts.no_headers = headers_sent_;
    opts.include = filter_.include;
    opts.now_unix = static_cast<int64_t>(std::time(nullptr));
    payload =
        RenderTable(*filter_.type, {object}, FieldValue(object, "metadata.resourceVersion"), opts);
    headers_sent_ = true;
  } else {
    payload = object;
  }
  last_sent_ = std::chrono::steady_clock::now();
  return ToWire(json{{"type", type}, {"object", payload}}) + "\n";
}

std::optional<std::string> WatchStream::Next(std::chrono::milliseconds wait) {
  if (done_) return std::nullopt;
  std::string out;
  if (!initial_.empty()) {
    for (auto& o : initial_)
      out += Event("ADDED", PresentObject(std::move(o), *filter_.type, filter_.version));
    initial_.clear();
    return out;
  }
  const auto now = std::chrono::steady_clock::now();
  if (now >= deadline_ || hub_.closed()) {
    done_ = true;
    return std::nullopt;
  }
  auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now);
  hub_.WaitNewer(cursor_, std::min(wait, remaining));
  auto changes = hub_.Since(cursor_);
  if (!changes.ok()) {
    // Fell behind the retained history: tell the client to relist, as upstream does.
    done_ = true;
    return Event("ERROR", Gone(changes.status().message()).ToJson());
  }
  for (const auto& ptr : *changes) {
    const control::Change& c = *ptr;
    cursor_ = c.resource_version;
    if (!Matches(c)) continue;
    out += Event(control::ChangeTypeName(c.type),
                 PresentObject(c.Object(), *filter_.type, filter_.version));
  }
  if (out.empty() && filter_.bookmarks &&
      std::chrono::steady_clock::now() - last_sent_ > std::chrono::seconds(30)) {
    json bookmark = {{"kind", filter_.type->kind},
                     {"apiVersion", filter_.type->ApiVersion(filter_.version)},
                     {"metadata", {{"resourceVersion", std::to_string(cursor_)}}}};
    out = Event("BOOKMARK", bookmark);
  }
  return out;
}

}  // namespace muster::server
