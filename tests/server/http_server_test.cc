// The API's HTTP server over real sockets: framing, limits, timeouts, and that no
// kind of client (slow, idle, watching, flooding) keeps the others waiting.
#include "server/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "api_fixture.h"
#include "http_test_client.h"
#include "server/exec_protocol.h"
#include "server/exec_session.h"
#include "server/watch_stream.h"
#include "websocket_test_util.h"

namespace muster::server {
namespace {

using nlohmann::json;
using testing::RawClient;
using testing::RawResponse;

// A server over `handler` on 127.0.0.1:<any>, serving on its own thread.
class Running {
 public:
  Running(HttpServer::RequestHandler handler, HttpServerOptions options)
      : server_(std::move(handler), std::move(options)) {
    EXPECT_TRUE(server_.Bind("127.0.0.1", 0).ok());
    thread_ = std::thread([this] { server_.Serve(); });
    while (!server_.running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~Running() {
    server_.Stop();
    thread_.join();
  }
  HttpServer& server() { return server_; }
  int port() { return server_.port(); }

 private:
  HttpServer server_;
  std::thread thread_;
};

ApiResult Echo(const ApiRequest& r) {
  if (r.path == "/healthz") return ApiResponse{200, "text/plain", "ok"};
  return ApiResponse{200, "text/plain", r.method + " " + r.path + " " + r.body};
}

std::string GetRequest(const std::string& path, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n";
}

TEST(HttpServerTest, KeepAlivePipeliningAndHead) {
  Running s(Echo, {});
  RawClient c(s.port());
  ASSERT_TRUE(c.Send(GetRequest("/a") + GetRequest("/b") +
                     "POST /c HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz" +
                     "HEAD /d HTTP/1.1\r\nConnection: close\r\n\r\n"));
  for (const char* want : {"GET /a ", "GET /b ", "POST /c xyz"}) {
    auto r = c.Read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->code, 200);
    EXPECT_EQ(r->body, want);
  }
  // HEAD: the length of the GET body ("GET /d "), and no body before the close.
  std::string rest;
  for (int i = 0; i < 10; ++i) rest += c.ReadSome();
  EXPECT_NE(rest.find("Content-Length: 7\r\n"), std::string::npos) << rest;
  EXPECT_EQ(rest.substr(rest.size() - 4), "\r\n\r\n") << rest;
}

// HTTP/1.0 keeps a connection only when both sides say keep-alive (ab -k, old
// proxies); otherwise the server closes after the response.
TEST(HttpServerTest, Http10KeepAliveIsAnnouncedAndPlain10Closes) {
  Running s(Echo, {});
  RawClient kept(s.port());
  ASSERT_TRUE(kept.Send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  auto r = kept.Read();
  ASSERT_TRUE(r);
  EXPECT_NE(r->head.find("Connection: keep-alive\r\n"), std::string::npos) << r->head;
  ASSERT_TRUE(kept.Send("GET /b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  r = kept.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /b ");

  RawClient plain(s.port());
  ASSERT_TRUE(plain.Send("GET /c HTTP/1.0\r\n\r\n"));
  r = plain.Read();
  ASSERT_TRUE(r);
  EXPECT_NE(r->head.find("Connection: close\r\n"), std::string::npos) << r->head;
  EXPECT_EQ(r->head.find("keep-alive"), std::string::npos) << r->head;
  EXPECT_TRUE(plain.Closed());
}

TEST(HttpServerTest, ExpectContinueAndChunkedBodies) {
  Running s(Echo, {});
  RawClient c(s.port());
  ASSERT_TRUE(c.Send("POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"));
  auto cont = c.Read();
  ASSERT_TRUE(cont);
  EXPECT_EQ(cont->code, 100);
  ASSERT_TRUE(c.Send("ok"));
  EXPECT_EQ(c.Read()->body, "POST /x ok");
  ASSERT_TRUE(c.Send("PUT /y HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"));
  EXPECT_EQ(c.Read()->body, "PUT /y ab");
}

TEST(HttpServerTest, OversizedRequestsGetAStatusBodyAndAClose) {
  HttpServerOptions o;
  o.limits.max_body_bytes = 1000;
  Running s(Echo, o);
  RawClient c(s.port());
  ASSERT_TRUE(c.Send("POST /x HTTP/1.1\r\nContent-Length: 5000\r\n\r\n"));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->code, 413);
  json status = json::parse(r->body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["reason"], "RequestEntityTooLarge");
  EXPECT_EQ(status["message"], "the request body is 5000 bytes; the limit is 1000");
  EXPECT_TRUE(c.Closed());
  RawClient h(s.port());
  ASSERT_TRUE(h.Send("GET /x HTTP/1.1\r\nX: " + std::string(100000, 'a') + "\r\n\r\n"));
  auto big = h.Read();
  ASSERT_TRUE(big);
  EXPECT_EQ(big->code, 431);
}

TEST(HttpServerTest, SlowAndIdleClientsAreTimedOut) {
  HttpServerOptions o;
  o.header_timeout = std::chrono::milliseconds(300);
  o.idle_timeout = std::chrono::milliseconds(300);
  Running s(Echo, o);
  RawClient slow(s.port());
  ASSERT_TRUE(slow.Send("GET /x HTTP/1.1\r\nHo"));  // and never the rest
  auto r = slow.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->code, 408);
  EXPECT_TRUE(slow.Closed());
  RawClient idle(s.port());
  ASSERT_TRUE(idle.Send(GetRequest("/x")));
  ASSERT_TRUE(idle.Read());
  EXPECT_TRUE(idle.Closed());  // after the idle timeout
}

TEST(HttpServerTest, ManyIdleConnectionsDoNotDelayANewRequest) {
  Running s(Echo, {});
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 500; ++i) {
    idle.push_back(std::make_unique<RawClient>(s.port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  // Slow clients mid-request too.
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<RawClient>(s.port()));
    idle.back()->Send("GET /slow HTTP/1.1\r\nX-A: ");
  }
  RawClient c(s.port(), 2000);
  ASSERT_TRUE(c.Send(GetRequest("/fresh")));
  auto r = c.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /fresh ");
}

TEST(HttpServerTest, PerClientLimitEvictsTheOldestIdleConnection) {
  HttpServerOptions o;
  o.max_connections_per_client = 5;
  Running s(Echo, o);
  std::vector<std::unique_ptr<RawClient>> conns;
  for (int i = 0; i < 5; ++i) {
    conns.push_back(std::make_unique<RawClient>(s.port(), 1000));
    ASSERT_TRUE(conns.back()->Send(GetRequest("/warm")));  // accepted and served: idle now
    ASSERT_TRUE(conns.back()->Read());
  }
  RawClient extra(s.port());
  ASSERT_TRUE(extra.Send(GetRequest("/new")));
  auto r = extra.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "GET /new ");
  EXPECT_TRUE(conns.front()->Closed());  // the oldest idle one made room
}

TEST(HttpServerTest, TooManyConnectionsWithNoneIdleAreRefusedWithAStatus) {
  HttpServerOptions o;
  o.max_connections = 4;
  Running s(Echo, o);
  // Four clients mid-request: none is idle, so none can be evicted for a fifth.
  std::vector<std::unique_ptr<RawClient>> busy;
  for (int i = 0; i < 4; ++i) {
    busy.push_back(std::make_unique<RawClient>(s.port()));
    ASSERT_TRUE(busy.back()->Send("GET /slow HTTP/1.1\r\nX-A: "));
  }
  for (int i = 0; i < 100 && s.server().stats().connections < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(s.server().stats().connections, 4u);
  RawClient refused(s.port());
  auto r = refused.Read();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->code, 503);
  EXPECT_NE(r->head.find("Retry-After: 1"), std::string::npos);
  EXPECT_EQ(json::parse(r->body)["message"], "too many connections");
  EXPECT_TRUE(refused.Closed());
  EXPECT_EQ(s.server().stats().connections, 4u);
  // A busy client that finishes its request is served, and the freed slot reused.
  ASSERT_TRUE(busy[0]->Send("b\r\nConnection: close\r\n\r\n"));
  auto done = busy[0]->Read();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->body, "GET /slow ");
  EXPECT_TRUE(busy[0]->Closed());
  RawClient later(s.port());
  ASSERT_TRUE(later.Send(GetRequest("/later")));
  auto ok = later.Read();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->body, "GET /later ");
}

TEST(HttpServerTest, BusyWorkersAnswer429AndHealthStillAnswers) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::atomic<int> blocked{0};
  auto handler = [&](const ApiRequest& r) -> ApiResult {
    if (r.path == "/healthz") return ApiResponse{200, "text/plain", "ok"};
    ++blocked;
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
    return ApiResponse{200, "text/plain", "done"};
  };
  HttpServerOptions o;
  o.workers = 2;
  o.max_inflight = 2;
  Running s(handler, o);
  RawClient a(s.port()), b(s.port());
  ASSERT_TRUE(a.Send(GetRequest("/block")));
  ASSERT_TRUE(b.Send(GetRequest("/block")));
  while (blocked < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  RawClient c(s.port());
  ASSERT_TRUE(c.Send(GetRequest("/more")));
  auto busy = c.Read();
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->code, 429);
  EXPECT_NE(busy->head.find("Retry-After: 1"), std::string::npos);
  EXPECT_EQ(json::parse(busy->body)["reason"], "TooManyRequests");
  ASSERT_TRUE(c.Send(GetRequest("/healthz")));
  auto health = c.Read();
  ASSERT_TRUE(health);
  EXPECT_EQ(health->body, "ok");
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  EXPECT_EQ(a.Read()->body, "done");
  EXPECT_EQ(b.Read()->body, "done");
}

// An exec's upgraded connection through the real reactor: 101 with the accept value,
// frames the client sent right behind its request reach the command, its output and
// exit status come back as frames, and the server closes once the session ends.
TEST(HttpServerTest, AnUpgradedConnectionCarriesAnExecSession) {
  Running s(
      [](const ApiRequest& r) -> ApiResult {
        if (r.upgrade.protocol != "websocket") return ApiResponse{400, "text/plain", "no"};
        ExecPlan plan;
        plan.argv = {"cat"};
        plan.env = {"PATH=/usr/bin:/bin"};
        auto process = StartExecProcess(plan, ExecStreams{.in = true, .out = true, .err = true});
        if (!process.ok()) return ApiResponse{500, "text/plain", process.status().message()};
        ExecSession::Options options;
        options.protocol = exec_protocol::ChooseProtocol(r.upgrade.protocols).value_or("none");
        options.accept = websocket::AcceptValue(r.upgrade.key);
        options.command = plan.argv;
        return std::make_unique<ExecSession>(*process, std::move(options));
      },
      {});
  RawClient c(s.port());
  using websocket::Opcode;
  ASSERT_TRUE(c.Send(GetRequest("/exec",
                                "Connection: Upgrade\r\nUpgrade: websocket\r\n"
                                "Sec-WebSocket-Version: 13\r\n"
                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                "Sec-WebSocket-Protocol: v5.channel.k8s.io\r\n") +
                     testing::ClientFrame(Opcode::kBinary, std::string("\0hello ", 7))));
  std::string bytes;
  while (bytes.find("\r\n\r\n") == std::string::npos) {
    std::string more = c.ReadSome();
    ASSERT_FALSE(more.empty()) << bytes;
    bytes += more;
  }
  const std::string head = bytes.substr(0, bytes.find("\r\n\r\n"));
  bytes.erase(0, head.size() + 4);
  EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 101") << head;
  EXPECT_NE(head.find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), std::string::npos);
  // More stdin once upgraded, then v5's end of stdin: cat exits 0.
  ASSERT_TRUE(c.Send(testing::ClientFrame(Opcode::kBinary, std::string("\0world", 6)) +
                     testing::ClientFrame(Opcode::kBinary, std::string("\xff\x00", 2))));
  std::string out;
  std::optional<json> status;
  bool closed = false;
  for (int i = 0; i < 100 && !closed; ++i) {
    bytes += c.ReadSome();
    for (auto& f : testing::ReadServerFrames(bytes)) {
      if (f.op == Opcode::kClose) closed = true;
      if (f.op != Opcode::kBinary || f.payload.empty()) continue;
      if (f.payload[0] == exec_protocol::kStdout) out += f.payload.substr(1);
      if (f.payload[0] == exec_protocol::kError) status = json::parse(f.payload.substr(1));
    }
  }
  EXPECT_TRUE(closed);
  EXPECT_EQ(out, "hello world");
  ASSERT_TRUE(status);
  EXPECT_EQ((*status)["status"], "Success");
  EXPECT_TRUE(c.Closed());
}

TEST(HttpServerTest, AClientThatStopsReadingIsDropped) {
  HttpServerOptions o;
  o.write_timeout = std::chrono::milliseconds(300);
  const std::string big(64 << 20, 'x');
  Running s([&](const ApiRequest&) -> ApiResult { return ApiResponse{200, "text/plain", big}; }, o);
  RawClient c(s.port());
  ASSERT_TRUE(c.Send(GetRequest("/big")));  // and never read
  for (int i = 0; i < 100 && s.server().stats().connections == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(s.server().stats().connections, 1u);
  // Up to 30 s: building and copying the 64 MiB answer takes seconds under TSan on a
  // loaded machine before the write timeout can start to run.
  for (int i = 0; i < 600 && s.server().stats().connections > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(s.server().stats().connections, 0u);
}

class HttpWatchTest : public testing::ApiFixture {};

TEST_F(HttpWatchTest, WatchesHoldNoWorkerAndSeeEveryChange) {
  HttpServerOptions o;
  o.workers = 2;
  Running s([this](const ApiRequest& r) { return handler_->Handle(r); }, o);
  const auto wake =
      store_->hub().Subscribe([&](const WatchHub::ChangePtr&) { s.server().WakeStreams(); });
  std::vector<std::unique_ptr<RawClient>> watches;
  const std::string path =
      "/api/v1/namespaces?watch=1&resourceVersion=" + std::to_string(store_->resource_version());
  for (int i = 0; i < 130; ++i) {
    watches.push_back(std::make_unique<RawClient>(s.port()));
    ASSERT_TRUE(watches.back()->Send(GetRequest(path)));
  }
  for (int i = 0; i < 100 && s.server().stats().streams < 130; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s.server().stats().streams, 130u);
  // Requests still run on the two workers.
  RawClient c(s.port());
  ASSERT_TRUE(
      c.Send("POST /api/v1/namespaces HTTP/1.1\r\nContent-Type: application/json\r\n"
             "Content-Length: 25\r\n\r\n{\"metadata\":{\"name\":\"w\"}}"));
  auto created = c.Read();
  ASSERT_TRUE(created);
  EXPECT_EQ(created->code, 201) << created->body;
  for (auto& w : watches) {
    std::string seen;
    for (int i = 0; i < 20 && seen.find("\"ADDED\"") == std::string::npos; ++i) {
      seen += w->ReadSome();
    }
    EXPECT_NE(seen.find("\"name\":\"w\""), std::string::npos) << seen.substr(0, 300);
  }
  watches.clear();  // the clients go; so do their streams
  for (int i = 0; i < 100 && s.server().stats().streams > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s.server().stats().streams, 0u);
  store_->hub().Unsubscribe(wake);
}

TEST(HttpWatchHistoryTest, AWatchFromAnOldVersionSkipsManyOtherChangesQuickly) {
  // 20,000 changes of another kind, then the one the watch wants: the history is
  // read in batches of 1,000, and a batch without a match must not stall the
  // stream until the next wake-up (the watch's own timeout is 2 s).
  WatchHub hub(50000);
  const control::ResourceType* namespaces = control::FindResource("", "v1", "namespaces");
  const control::ResourceType* pods = control::FindResource("", "v1", "pods");
  ASSERT_NE(namespaces, nullptr);
  ASSERT_NE(pods, nullptr);
  int64_t rv = 0;
  for (int i = 0; i < 20000; ++i) {
    hub.Publish({++rv, control::ChangeType::kAdded, pods->StoreKey(), "default",
                 "p" + std::to_string(i),
                 std::make_shared<const json>(json{{"metadata", {{"name", "p"}}}}), nullptr});
  }
  hub.Publish(
      {++rv, control::ChangeType::kAdded, namespaces->StoreKey(), "", "wanted",
       std::make_shared<const json>(
           json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "wanted"}}}}),
       nullptr});
  Running s(
      [&](const ApiRequest&) -> ApiResult {
        WatchFilter filter;
        filter.type = namespaces;
        filter.version = "v1";
        return std::make_unique<WatchStream>(hub, filter, 0, std::vector<json>{},
                                             std::chrono::seconds(2));
      },
      {});
  RawClient c(s.port(), 3000);
  ASSERT_TRUE(c.Send(GetRequest("/api/v1/namespaces?watch=1&resourceVersion=0")));
  std::string seen;
  for (int i = 0; i < 10 && seen.find("wanted") == std::string::npos; ++i) seen += c.ReadSome();
  EXPECT_NE(seen.find("\"name\":\"wanted\""), std::string::npos) << seen.substr(0, 300);
}

}  // namespace
}  // namespace muster::server
