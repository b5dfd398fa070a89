#include "server/store_routes.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "server/api_status.h"
#include "server/log_stream.h"

namespace muster::server {
namespace {

ApiResponse Text(int code, std::string text) {
  return {code, "text/plain; charset=utf-8", std::move(text)};
}

}  // namespace

ApiResponse HandleReadyz(const ObjectStore& store, bool started, const ApiRequest& request) {
  const WriteHealth health = store.write_health();
  struct Check {
    const char* name;
    bool ok;
    std::string why;
  };
  const Check checks[] = {
      {"ping", true, ""},
      {"started", started, "the server is starting or stopping"},
      {"store", health.writable, health.reason},
  };
  bool all_ok = true;
  std::string lines;
  for (const Check& c : checks) {
    all_ok = all_ok && c.ok;
    lines += c.ok ? std::string("[+]") + c.name + " ok\n"
                  : std::string("[-]") + c.name + " failed: " + c.why + "\n";
  }
  const bool verbose = request.query.count("verbose") > 0;
  if (all_ok) return Text(200, verbose ? lines + "readyz check passed\n" : "ok");
  return Text(503, lines + "readyz check failed\n");
}

ApiResult HandleSnapshot(ObjectStore& store, const std::string& data_dir,
                         const ApiRequest& request) {
  if (request.method != "GET") {
    return ErrorResponse(MethodNotAllowed("the snapshot is read with GET"));
  }
  // Unauthenticated serve (loopback only) runs every request as the server's user,
  // who is in system:masters; in-process callers carry no user at all.
  if (!request.user.name.empty() && !request.user.InGroup(auth::kMastersGroup)) {
    return ErrorResponse(MakeError(403, "Forbidden",
                                   "User \"" + request.user.name + "\" cannot get path \"" +
                                       kSnapshotPath +
                                       "\": a snapshot holds every object, Secrets included; only "
                                       "members of system:masters may take one"));
  }
  if (data_dir.empty()) return ErrorResponse(NotFoundError("snapshots are not served"));
  static std::atomic<uint64_t> sequence{0};
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(data_dir) / "snapshots";
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path path =
      dir / ("snapshot-" + std::to_string(getpid()) + "-" + std::to_string(++sequence) + ".db");
  auto rv = store.SaveSnapshot(path.string());
  if (!rv.ok()) {
    return ErrorResponse(
        MakeError(503, "ServiceUnavailable", "cannot take a snapshot: " + rv.status().message()));
  }
  // Opened by the stream before the unlink: the open file is all that is left.
  auto stream = std::make_unique<LogStream>(store, control::ObjectKey{}, path.string(), "", 0,
                                            std::nullopt, /*follow=*/false);
  std::filesystem::remove(path, ec);
  return stream;
}

}  // namespace muster::server
