#include "kube/reflector.h"

#include <iostream>
#include <utility>

#include "control/json_fields.h"
#include "core/percent_encode.h"
#include "kube/object_parser.h"

namespace muster::kube {
namespace {

using nlohmann::json;

// A watch that ends this soon with nothing in it is treated as a failure, so a server
// that closes every watch at once is not hammered in a tight loop.
constexpr std::chrono::seconds kShortWatch{1};

std::string ResourceVersionOf(const json& object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return "";
  }
  const json& md = object["metadata"];
  auto it = md.find("resourceVersion");
  return it != md.end() && it->is_string() ? it->get<std::string>() : "";
}

// "<code> <message>" of a failed response, for logs.
std::string Describe(const HttpResponse& r) {
  if (r.code == 0) return "transport error: " + r.error;
  json status = json::parse(r.body, nullptr, false);
  std::string message = control::StringField(status, "message");
  if (message.empty()) message = r.body.substr(0, 200);
  return "HTTP " + std::to_string(r.code) + ": " + message;
}

bool IsGoneStatus(const json& status) {
  if (!status.is_object()) return false;
  if (status.contains("code") && status["code"].is_number_integer() && status["code"] == 410) {
    return true;
  }
  const std::string reason = control::StringField(status, "reason");
  return reason == "Expired" || reason == "Gone";
}

}  // namespace

Reflector::Reflector(KubeClient& client, const control::ResourceType& type, ObjectCache& cache,
                     ReflectorOptions options)
    : client_(client),
      type_(type),
      cache_(cache),
      options_(std::move(options)),
      resource_(type.StoreKey()),
      backoff_(options_.backoff, options_.random),
      version_(type.versions.empty() ? "v1" : type.versions.front()) {}

Reflector::~Reflector() { Stop(); }

void Reflector::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Reflector::RequestStop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
}

void Reflector::Stop() {
  RequestStop();
  if (thread_.joinable()) thread_.join();
}

std::string Reflector::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

std::string Reflector::version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return version_;
}

ReflectorCounters Reflector::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

void Reflector::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::cerr << "muster kube: " << line << "\n";
  }
}

bool Reflector::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !wake_.wait_for(lock, d, [this] { return stop_.load(); });
}

void Reflector::Fail(const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++counters_.errors;
  }
  if (!failing_) Log(resource_ + ": " + what + " (retrying with backoff)");
  failing_ = true;
  Sleep(backoff_.Next());
}

void Reflector::Recovered() {
  backoff_.Reset();
  if (failing_) Log(resource_ + ": recovered");
  failing_ = false;
}

std::string Reflector::CollectionPath(const std::string& version) const {
  return ApiPrefix(type_.group, version) + "/" + type_.plural;
}

void Reflector::Complete(json& object, const std::string& version) const {
  if (!object.is_object()) return;
  if (!object.contains("apiVersion")) object["apiVersion"] = type_.ApiVersion(version);
  if (!object.contains("kind")) object["kind"] = type_.kind;
}

void Reflector::Run() {
  bool need_list = true;
  while (!stopping()) {
    try {
      RunOnce(need_list);
    } catch (const std::exception& e) {
      // Nothing the server sends may end the thread: start over from a list.
      need_list = true;
      Fail(std::string("unexpected answer: ") + e.what());
    }
  }
}

void Reflector::RunOnce(bool& need_list) {
  if (need_list) {
    const Outcome listed = List();
    if (listed == Outcome::kStopped || stopping()) return;
    if (listed == Outcome::kAbsent) {
      Sleep(options_.absent_recheck);
      return;
    }
    if (listed != Outcome::kOk) return;  // List() already backed off
    need_list = false;
  }
  const Outcome watched = Watch();
  // kOk: the stream ended (server timeout, dropped connection): resume from the last
  // version. kFailed: Watch() backed off; resume the same way.
  if (watched == Outcome::kGone || watched == Outcome::kNotFound) need_list = true;
}

Reflector::Outcome Reflector::List() {
  // The preferred version first; a cluster with an older CRD may serve only a later one.
  std::vector<std::string> versions = type_.versions;
  bool any_served = false;
  for (const auto& version : versions) {
    std::vector<json> items;
    std::string rv;
    const Outcome o = ListVersion(version, items, rv);
    if (o == Outcome::kNotFound) continue;
    any_served = true;
    if (o != Outcome::kOk) return o;
    const bool was_absent = absent_.exchange(false);
    if (was_absent) Log(resource_ + " is served now (" + version + ")");
    cache_.Replace(resource_, std::move(items));
    {
      std::lock_guard<std::mutex> lock(mu_);
      version_ = version;
      resource_version_ = rv;
      ++counters_.lists;
    }
    synced_ = true;
    Recovered();
    return Outcome::kOk;
  }
  if (any_served) return Outcome::kFailed;
  // No version is served: nothing of this kind exists, which is a complete view too.
  if (!absent_.exchange(true)) {
    Log(resource_ + " is not served by the API server (CRD not installed?); re-checking every " +
        std::to_string(options_.absent_recheck.count() / 1000) + "s");
  }
  cache_.Replace(resource_, {});
  {
    std::lock_guard<std::mutex> lock(mu_);
    resource_version_.clear();
  }
  synced_ = true;
  Recovered();
  return Outcome::kAbsent;
}

Reflector::Outcome Reflector::ListVersion(const std::string& version, std::vector<json>& items,
                                          std::string& resource_version) {
  const std::string base = CollectionPath(version) + "?limit=" + std::to_string(options_.page_size);
  std::string token;
  do {
    if (stopping()) return Outcome::kStopped;
    HttpResponse r = client_.Get(token.empty() ? base : base + "&continue=" + PercentEncode(token));
    if (stopping()) return Outcome::kStopped;
    if (r.code == 404 && token.empty()) return Outcome::kNotFound;
    if (!r.ok()) {
      // 410 on a later page: the continue token expired; the next attempt starts over.
      Fail("list " + CollectionPath(version) + ": " + Describe(r));
      return Outcome::kFailed;
    }
    // Without managedFields (object_parser.h): muster reads none of it, and the API
    // server keeps it when an update leaves it out.
    json list = ParseApiObject(r.body);
    if (!list.is_object() || !list.contains("items") ||
        !(list["items"].is_array() || list["items"].is_null())) {
      Fail("list " + CollectionPath(version) + ": the answer is not a list");
      return Outcome::kFailed;
    }
    if (list["items"].is_array()) {
      for (auto& item : list["items"]) {
        Complete(item, version);
        items.push_back(std::move(item));
      }
    }
    const json md = list.value("metadata", json::object());
    resource_version = control::StringField(md, "resourceVersion");
    token = control::StringField(md, "continue");
  } while (!token.empty());
  return Outcome::kOk;
}

Reflector::Outcome Reflector::Watch() {
  std::string version;
  std::string from;
  {
    std::lock_guard<std::mutex> lock(mu_);
    version = version_;
    from = resource_version_;
    ++counters_.watches;
  }
  std::string path = CollectionPath(version) + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                     std::to_string(options_.watch_timeout_s);
  if (!from.empty()) path += "&resourceVersion=" + PercentEncode(from);

  uint64_t events = 0;
  bool gone = false;
  std::string error;  // an ERROR event other than 410
  auto on_line = [&](std::string_view line) -> bool {
    json event = ParseApiObject(line);
    // Lines that are not watch events (an error body, blank keep-alives) are skipped;
    // the response code tells what happened.
    if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) return true;
    const std::string type = event["type"].get<std::string>();
    // Moved out of the event, not copied: the object is most of the line.
    json object = json::object();
    if (auto it = event.find("object"); it != event.end()) object = std::move(*it);
    if (type == "ERROR") {
      gone = IsGoneStatus(object);
      if (!gone) error = "watch error event: " + object.dump().substr(0, 300);
      return false;
    }
    const std::string rv = ResourceVersionOf(object);
    if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
      Complete(object, version);
      const control::ChangeType change = type == "ADDED"      ? control::ChangeType::kAdded
                                         : type == "MODIFIED" ? control::ChangeType::kModified
                                                              : control::ChangeType::kDeleted;
      cache_.Apply(resource_, change, std::move(object));
    } else if (type != "BOOKMARK") {
      return true;  // an event type from a newer server: nothing to mirror
    }
    if (++events == 1) Recovered();  // the watch works: a later failure starts afresh
    std::lock_guard<std::mutex> lock(mu_);
    if (!rv.empty()) resource_version_ = rv;
    ++counters_.events;
    return !stop_.load();
  };
  const auto started = std::chrono::steady_clock::now();
  HttpResponse r = client_.Stream(path, on_line, &stop_);
  if (stopping()) return Outcome::kStopped;
  if (gone || r.code == 410) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++counters_.relists_410;
    }
    Log(resource_ + ": resourceVersion " + from + " is too old; relisting");
    return Outcome::kGone;
  }
  if (r.code == 404) {
    // The CRD went away (or not yet served in this version): the relist finds out.
    Fail("watch " + CollectionPath(version) + ": " + Describe(r));
    return Outcome::kNotFound;
  }
  if (!error.empty()) {
    Fail(error);
    return Outcome::kFailed;
  }
  if (!r.ok()) {
    Fail("watch " + CollectionPath(version) + ": " + Describe(r));
    return Outcome::kFailed;
  }
  if (!r.error.empty()) {  // the connection broke mid-stream
    Fail("watch " + CollectionPath(version) + ": " + r.error);
    return Outcome::kFailed;
  }
  if (events == 0 && std::chrono::steady_clock::now() - started < kShortWatch) {
    Fail("watch " + CollectionPath(version) + " ended at once with no events");
    return Outcome::kFailed;
  }
  return Outcome::kOk;
}

const std::vector<const control::ResourceType*>& WatchedResources() {
  static const std::vector<const control::ResourceType*> kWatched = [] {
    // (group, kind) in the order muster kube starts them: capacity, then queues, then jobs.
    const std::vector<std::pair<std::string, std::string>> wanted = {
        {"", "Node"},
        {"", "Namespace"},
        {"", "LimitRange"},
        {"topology.node.k8s.io", "NodeResourceTopology"},
        {"scheduling.k8s.io", "PriorityClass"},
        {"muster.dev", "SchedulerConfiguration"},
        {"kueue.x-k8s.io", "ResourceFlavor"},
        {"kueue.x-k8s.io", "Topology"},
        {"kueue.x-k8s.io", "Cohort"},
        {"kueue.x-k8s.io", "ClusterQueue"},
        {"kueue.x-k8s.io", "LocalQueue"},
        {"kueue.x-k8s.io", "WorkloadPriorityClass"},
        {"kueue.x-k8s.io", "Workload"},
        {"scheduling.volcano.sh", "Queue"},
        {"topology.volcano.sh", "HyperNode"},
        {"scheduling.volcano.sh", "PodGroup"},
        {"batch", "Job"},
        {"jobset.x-k8s.io", "JobSet"},
        {"kubeflow.org", "PyTorchJob"},
        {"kubeflow.org", "MPIJob"},
        {"kubeflow.org", "TFJob"},
        {"batch.volcano.sh", "Job"},
        {"", "Pod"},
    };
    std::vector<const control::ResourceType*> out;
    for (const auto& [group, kind] : wanted) {
      for (const auto& t : control::ResourceTypes()) {
        if (t.group == group && t.kind == kind) out.push_back(&t);
      }
    }
    return out;
  }();
  return kWatched;
}

}  // namespace muster::kube
