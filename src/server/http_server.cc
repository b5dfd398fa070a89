#include "server/http_server.h"

// Debian ships cpp-httplib as a compiled library (libcpp-httplib.so) built with these
// options; the header must see the same ones so that its declarations match it.
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include <iostream>
#include <utility>

namespace muster::server {
namespace {

// cpp-httplib holds a thread per connection: per open watch, and per idle keep-alive
// connection for up to its 5 s timeout. A controller watching every resource (muster
// kube has ~25 watches) plus pooled client connections must not starve requests.
constexpr size_t kThreads = 128;
constexpr size_t kMaxBody = 16u << 20;

ApiRequest ToApiRequest(const httplib::Request& req) {
  ApiRequest r;
  r.method = req.method;
  r.path = req.path;
  for (const auto& [k, v] : req.params) r.query.emplace(k, v);  // first value wins
  r.accept = req.get_header_value("Accept");
  r.content_type = req.get_header_value("Content-Type");
  r.body = req.body;
  return r;
}

// Sends a stream's chunks with chunked encoding until it ends (or the client goes).
template <typename Stream>
void StreamChunks(httplib::Response& res, std::unique_ptr<Stream> owned, const char* content_type) {
  std::shared_ptr<Stream> stream = std::move(owned);
  res.status = 200;
  res.set_header("Cache-Control", "no-cache, private");
  res.set_chunked_content_provider(content_type, [stream](size_t, httplib::DataSink& sink) {
    auto chunk = stream->Next(std::chrono::milliseconds(1000));
    if (!chunk) {
      sink.done();
      return true;
    }
    if (!chunk->empty()) return sink.write(chunk->data(), chunk->size());
    return true;
  });
}

}  // namespace

HttpServer::HttpServer(ApiHandler& handler)
    : HttpServer(RequestHandler([&handler](const ApiRequest& r) { return handler.Handle(r); })) {}

HttpServer::HttpServer(RequestHandler handler)
    : handler_(std::move(handler)), server_(std::make_unique<httplib::Server>()) {
  server_->new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  server_->set_payload_max_length(kMaxBody);
  // A response goes out in two writes (headers, body): with Nagle the body waits for
  // the client's delayed ACK of the headers, ~40 ms per request on a keep-alive
  // connection. Set on the listening socket; Linux copies it to accepted ones.
  server_->set_tcp_nodelay(true);
  auto handle = [this](const httplib::Request& req, httplib::Response& res) {
    ApiResult result = handler_(ToApiRequest(req));
    if (auto* resp = std::get_if<ApiResponse>(&result)) {
      res.status = resp->code;
      res.set_content(resp->body, resp->content_type.c_str());
      if (resp->code >= 500) {
        std::cerr << "muster serve: " << req.method << " " << req.path << " -> " << resp->code
                  << ": " << resp->body << "\n";
      }
      return;
    }
    // A watch: stream newline-delimited events with chunked encoding.
    // Not plain "application/json": httplib gzips that when the client accepts gzip
    // (kubectl does), and the compressor would hold events back until the stream ends.
    if (auto* watch = std::get_if<std::unique_ptr<WatchStream>>(&result)) {
      StreamChunks(res, std::move(*watch), "application/json;stream=watch");
      return;
    }
    // A followed pod log. httplib gzips every "text/..." type, holding lines back
    // the same way; octet-stream is what the bytes are, and kubectl copies them as is.
    StreamChunks(res, std::move(std::get<std::unique_ptr<LogStream>>(result)),
                 "application/octet-stream");
  };
  const std::string any = R"(/.*)";
  server_->Get(any, handle);
  server_->Post(any, handle);
  server_->Put(any, handle);
  server_->Patch(any, handle);
  server_->Delete(any, handle);
}

HttpServer::~HttpServer() = default;

Status HttpServer::Bind(const std::string& host, int port) {
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ <= 0) return Status(StatusCode::kUnavailable, "cannot listen on " + host);
  } else {
    if (!server_->bind_to_port(host, port)) {
      return Status(StatusCode::kUnavailable,
                    "cannot listen on " + host + ":" + std::to_string(port));
    }
    port_ = port;
  }
  return Status::Ok();
}

void HttpServer::Serve() { server_->listen_after_bind(); }

bool HttpServer::running() const { return server_->is_running(); }

void HttpServer::Stop() { server_->stop(); }

Status ParseListenAddress(const std::string& listen, std::string& host, int& port) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return InvalidArgument("--listen must be HOST:PORT, got \"" + listen + "\"");
  }
  host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string p = listen.substr(colon + 1);
  if (p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--listen port must be a number, got \"" + p + "\"");
  }
  port = std::stoi(p);
  if (port > 65535) return InvalidArgument("--listen port must be at most 65535");
  return Status::Ok();
}

}  // namespace muster::server
