#include "kube/kube_client.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

// Debian's compiled cpp-httplib: every TU must see the options it was built with.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "kube/serve_stack.h"

namespace muster::kube {
namespace {

using nlohmann::json;
using testing::ServeStack;

const std::string kLeases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";

std::string LeaseJson(const std::string& name, const std::string& holder) {
  return json{{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"holderIdentity", holder}}}}
      .dump();
}

TEST(ApiPrefixTest, CoreAndNamedGroups) {
  EXPECT_EQ(ApiPrefix("", "v1"), "/api/v1");
  EXPECT_EQ(ApiPrefix("coordination.k8s.io", "v1"), "/apis/coordination.k8s.io/v1");
}

TEST(KubeClientTest, CreateGetUpdatePatchDelete) {
  ServeStack stack;
  KubeClient client(stack.connection());

  HttpResponse created = client.Request("POST", kLeases, LeaseJson("l1", "a"));
  ASSERT_EQ(created.code, 201) << created.body << created.error;
  EXPECT_EQ(client.Request("POST", kLeases, LeaseJson("l1", "a")).code, 409);

  HttpResponse got = client.Get(kLeases + "/l1");
  ASSERT_TRUE(got.ok()) << got.body;
  json lease = json::parse(got.body);
  EXPECT_EQ(lease["spec"]["holderIdentity"], "a");
  const std::string rv = lease["metadata"]["resourceVersion"];

  lease["spec"]["holderIdentity"] = "b";
  HttpResponse updated = client.Request("PUT", kLeases + "/l1", lease.dump());
  ASSERT_EQ(updated.code, 200) << updated.body;
  EXPECT_EQ(json::parse(updated.body)["spec"]["holderIdentity"], "b");
  // The same resourceVersion again is stale now: optimistic concurrency says 409.
  lease["spec"]["holderIdentity"] = "c";
  HttpResponse stale = client.Request("PUT", kLeases + "/l1", lease.dump());
  EXPECT_EQ(stale.code, 409);
  EXPECT_EQ(json::parse(stale.body)["reason"], "Conflict");

  HttpResponse patched =
      client.Request("PATCH", kLeases + "/l1", R"({"metadata":{"labels":{"team":"a"}}})",
                     "application/merge-patch+json");
  ASSERT_EQ(patched.code, 200) << patched.body;
  json after = json::parse(patched.body);
  EXPECT_EQ(after["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(after["spec"]["holderIdentity"], "b");

  EXPECT_EQ(client.Request("DELETE", kLeases + "/l1").code, 200);
  HttpResponse gone = client.Get(kLeases + "/l1");
  EXPECT_EQ(gone.code, 404);
  EXPECT_EQ(json::parse(gone.body)["kind"], "Status");
  EXPECT_FALSE(gone.ok());
  EXPECT_EQ(client.Get(ApiPrefix("", "v1") + "/namespaces/default/events").code, 200);
  EXPECT_EQ(client.requests(), 9u);
}

TEST(KubeClientTest, WatchDeliversAddedThenModified) {
  ServeStack stack;
  KubeClient client(stack.connection());
  ASSERT_EQ(client.Request("POST", kLeases, LeaseJson("w1", "a")).code, 201);

  std::vector<json> events;
  HttpResponse resp = client.Stream(kLeases + "?watch=1", [&](std::string_view line) {
    events.push_back(json::parse(line));
    if (events.size() == 1) {
      // The watch is open (the existing object arrived as ADDED): change it.
      HttpResponse p =
          client.Request("PATCH", kLeases + "/w1", R"({"spec":{"holderIdentity":"b"}})",
                         "application/merge-patch+json");
      EXPECT_EQ(p.code, 200) << p.body;
    }
    return events.size() < 2;  // end the stream after the second event
  });
  EXPECT_EQ(resp.code, 200);
  EXPECT_EQ(resp.error, "");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["spec"]["holderIdentity"], "a");
  EXPECT_EQ(events[1]["type"], "MODIFIED");
  EXPECT_EQ(events[1]["object"]["spec"]["holderIdentity"], "b");
}

TEST(KubeClientTest, StopFlagEndsAnIdleWatch) {
  ServeStack stack;
  KubeClient client(stack.connection());
  ASSERT_EQ(client.Request("POST", kLeases, LeaseJson("s1", "a")).code, 201);
  std::atomic<bool> stop{false};
  int lines = 0;
  // After the first event the stream goes idle (nothing changes); only the stop flag,
  // set here, can end it. Without the flag check this test would hang.
  HttpResponse resp = client.Stream(
      kLeases + "?watch=1",
      [&](std::string_view) {
        ++lines;
        stop = true;
        return true;
      },
      &stop);
  EXPECT_EQ(resp.code, 200);
  EXPECT_EQ(resp.error, "");
  EXPECT_EQ(lines, 1);
  // A stop flag already set sends nothing.
  const uint64_t before = client.requests();
  EXPECT_EQ(client
                .Stream(
                    kLeases + "?watch=1", [](std::string_view) { return true; }, &stop)
                .code,
            0);
  EXPECT_EQ(client.requests(), before);
}

TEST(KubeClientTest, StopFlagFromAnotherThread) {
  ServeStack stack;
  KubeClient client(stack.connection());
  ASSERT_EQ(client.Request("POST", kLeases, LeaseJson("s2", "a")).code, 201);
  std::atomic<bool> stop{false};
  std::atomic<bool> opened{false};
  std::thread stopper([&] {
    while (!opened) std::this_thread::yield();
    stop = true;
  });
  HttpResponse resp = client.Stream(
      kLeases + "?watch=1",
      [&](std::string_view) {
        opened = true;
        return true;
      },
      &stop);
  stopper.join();
  EXPECT_EQ(resp.code, 200);
}

TEST(KubeClientTest, WatchErrorAnswerIsABodyNotLines) {
  ServeStack stack;
  KubeClient client(stack.connection());
  int lines = 0;
  HttpResponse resp = client.Stream("/apis/nope.example/v1/things?watch=1", [&](std::string_view) {
    ++lines;
    return true;
  });
  EXPECT_EQ(resp.code, 404);
  EXPECT_EQ(lines, 0);
  EXPECT_EQ(json::parse(resp.body)["kind"], "Status");
}

TEST(KubeClientTest, ConnectionRefusedIsCodeZeroWithError) {
  ClusterConnection conn;
  conn.server = "http://127.0.0.1:1";
  KubeClient client(conn);
  HttpResponse resp = client.Get("/api/v1/pods");
  EXPECT_EQ(resp.code, 0);
  EXPECT_FALSE(resp.error.empty());
  EXPECT_FALSE(resp.ok());
  HttpResponse watch = client.Stream("/api/v1/pods?watch=1", [](std::string_view) { return true; });
  EXPECT_EQ(watch.code, 0);
  EXPECT_FALSE(watch.error.empty());
}

// A raw HTTP server that records what the client sent.
class RawServer {
 public:
  RawServer() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~RawServer() {
    server_.stop();
    thread_.join();
  }
  httplib::Server& server() { return server_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(KubeClientTest, SendsBearerTokenAndHeaders) {
  RawServer raw;
  std::mutex mu;
  httplib::Headers seen;
  std::string seen_body;
  raw.server().Post("/x", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu);
    seen = req.headers;
    seen_body = req.body;
    res.set_content("{}", "application/json");
  });
  ClusterConnection conn;
  conn.server = raw.url() + "/";  // a trailing slash is tolerated
  conn.token = "s3cret";
  ClientOptions options;
  options.user_agent = "muster-test/1";
  KubeClient client(conn, options);
  HttpResponse resp = client.Request("POST", "/x", "[]", "application/json-patch+json");
  ASSERT_EQ(resp.code, 200) << resp.error;
  std::lock_guard lock(mu);
  auto header = [&](const std::string& name) {
    auto it = seen.find(name);
    return it == seen.end() ? std::string("<none>") : it->second;
  };
  EXPECT_EQ(header("Authorization"), "Bearer s3cret");
  EXPECT_EQ(header("Accept"), "application/json");
  EXPECT_EQ(header("Content-Type"), "application/json-patch+json");
  EXPECT_EQ(header("User-Agent"), "muster-test/1");
  EXPECT_EQ(seen_body, "[]");
}

TEST(KubeClientTest, RereadsTheTokenFileOnceOn401) {
  RawServer raw;
  std::atomic<int> calls{0};
  raw.server().Get("/y", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    if (req.get_header_value("Authorization") != "Bearer rotated") {
      res.status = 401;
      res.set_content(R"({"kind":"Status","code":401})", "application/json");
      return;
    }
    res.set_content("ok", "text/plain");
  });
  const std::string token_file =
      std::filesystem::temp_directory_path() / ("muster-kube-token-" + std::to_string(::getpid()));
  std::ofstream(token_file) << "rotated\n";
  ClusterConnection conn;
  conn.server = raw.url();
  conn.token = "expired";
  conn.token_file = token_file;
  KubeClient client(conn);
  HttpResponse resp = client.Get("/y");
  EXPECT_EQ(resp.code, 200);
  EXPECT_EQ(resp.body, "ok");
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(client.requests(), 2u);
  // Still 401 after the re-read: one retry only, the 401 is returned.
  std::ofstream(token_file) << "wrong\n";
  KubeClient stale(ClusterConnection{conn});
  EXPECT_EQ(stale.Get("/y").code, 401);
  EXPECT_EQ(stale.requests(), 2u);
  // No token file: no retry.
  conn.token_file.clear();
  KubeClient fixed(conn);
  EXPECT_EQ(fixed.Get("/y").code, 401);
  EXPECT_EQ(fixed.requests(), 1u);
  std::filesystem::remove(token_file);
}

TEST(KubeClientTest, StreamSplitsLinesAcrossChunks) {
  RawServer raw;
  raw.server().Get("/watch", [](const httplib::Request&, httplib::Response& res) {
    auto pieces = std::make_shared<std::vector<std::string>>(
        std::vector<std::string>{R"({"a":)", "1}\n{\"b\"", ":2}\r\n\n", R"({"c":3}
{"d":4})",
                                 "\n", R"({"partial":)"});
    res.set_chunked_content_provider("application/json",
                                     [pieces](size_t offset, httplib::DataSink& sink) {
                                       (void)offset;
                                       if (pieces->empty()) {
                                         sink.done();
                                         return true;
                                       }
                                       std::string piece = pieces->front();
                                       pieces->erase(pieces->begin());
                                       return sink.write(piece.data(), piece.size());
                                     });
  });
  ClusterConnection conn;
  conn.server = raw.url();
  KubeClient client(conn);
  std::vector<std::string> lines;
  HttpResponse resp = client.Stream("/watch", [&](std::string_view line) {
    lines.emplace_back(line);
    return true;
  });
  EXPECT_EQ(resp.code, 200);
  EXPECT_EQ(resp.error, "");
  // Empty lines are skipped, "\r\n" is a line end, an unterminated tail is dropped.
  EXPECT_EQ(lines,
            (std::vector<std::string>{R"({"a":1})", R"({"b":2})", R"({"c":3})", R"({"d":4})"}));
}

TEST(KubeClientTest, AnExceptionInTheLineCallbackEndsTheStream) {
  RawServer raw;
  raw.server().Get("/watch", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("{}\n{}\n", "application/json");
  });
  ClusterConnection conn;
  conn.server = raw.url();
  KubeClient client(conn);
  HttpResponse resp =
      client.Stream("/watch", [](std::string_view) -> bool { throw std::runtime_error("boom"); });
  EXPECT_EQ(resp.code, 200);
  EXPECT_EQ(resp.error, "watch consumer failed: boom");
}

TEST(KubeClientTest, ConcurrentRequestsShareOneClient) {
  ServeStack stack;
  KubeClient client(stack.connection());
  std::vector<std::thread> threads;
  std::atomic<int> created{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        const std::string name = "c" + std::to_string(t) + "-" + std::to_string(i);
        if (client.Request("POST", kLeases, LeaseJson(name, "x")).code == 201) ++created;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(created.load(), 20);
  json list = json::parse(client.Get(kLeases).body);
  EXPECT_EQ(list["items"].size(), 20u);
}

}  // namespace
}  // namespace muster::kube
