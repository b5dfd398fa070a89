// One connection of HttpServer, on the reactor thread: reading and parsing
// requests, handing them to workers (or answering on the spot), and writing
// responses and stream chunks as the client takes them.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/text.h"
#include "server/api_status.h"
#include "server/http_server_impl.h"

namespace muster::server {
namespace {

constexpr size_t kReadChunk = 16 << 10;
// Reads per readiness event: a fast client does not monopolize the reactor.
constexpr int kReadsPerEvent = 8;

// Health checks are answered on the reactor: they must answer while every worker
// is busy (a load balancer's probe is how an overload is noticed, not a victim).
bool IsHealthCheck(const HttpRequest& r) {
  if (r.method != "GET" && r.method != "HEAD") return false;
  for (const char* p : {"/healthz", "/livez", "/readyz"}) {
    if (r.path == p || r.path == std::string(p) + "/") return true;
  }
  return false;
}

std::string StatusReason(int code) {
  switch (code) {
    case 401:
      return "Unauthorized";
    case 408:
      return "Timeout";
    case 413:
      return "RequestEntityTooLarge";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    default:
      return code >= 500 ? "InternalError" : "BadRequest";
  }
}

}  // namespace

ApiRequest ToApiRequest(HttpRequest&& r, auth::UserInfo user) {
  ApiRequest a;
  a.method = r.method == "HEAD" ? "GET" : r.method;
  a.path = std::move(r.path);
  a.query = std::move(r.query);
  if (const size_t q = r.target.find('?'); q != std::string::npos) {
    a.query_string = r.target.substr(q + 1);
  }
  if (AsciiLower(r.Header("connection")).find("upgrade") != std::string::npos) {
    a.upgrade.protocol = AsciiLower(r.Header("upgrade"));
    a.upgrade.key = std::string(r.Header("sec-websocket-key"));
    a.upgrade.version = std::string(r.Header("sec-websocket-version"));
    a.upgrade.protocols = std::string(r.Header("sec-websocket-protocol"));
  }
  a.accept = std::string(r.Header("accept"));
  a.content_type = std::string(r.Header("content-type"));
  a.body = std::move(r.body);
  a.user = std::move(user);
  return a;
}

std::string SerializeResponse(const ApiResponse& response, bool keep_alive, bool head_only) {
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Content-Type", response.content_type},
      {"Cache-Control", "no-cache, private"},
      {"X-Content-Type-Options", "nosniff"}};
  for (const std::string& w : response.warnings) {
    // RFC 7234 warn-text is a quoted string: quotes and backslashes escaped, and
    // nothing that could end the header line.
    std::string text;
    for (char c : w) {
      if (c == '"' || c == '\\') text += '\\';
      text += (c == '\r' || c == '\n') ? ' ' : c;
    }
    headers.push_back({"Warning", "299 - \"" + text + "\""});
  }
  std::string out = ResponseHead(response.code, headers, response.body.size(), keep_alive);
  if (!head_only) out += response.body;
  return out;
}

std::string StatusBytes(int code, const std::string& message, bool keep_alive,
                        const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  ApiResponse r;
  r.code = code;
  r.body = ToWire(MakeError(code, StatusReason(code), message).ToJson());
  std::string bytes = SerializeResponse(r, keep_alive, false);
  if (!extra.empty()) {
    // Extra headers go before the blank line that ends the head.
    std::string lines;
    for (const auto& [k, v] : extra) lines += k + ": " + v + "\r\n";
    bytes.insert(bytes.find("\r\n\r\n") + 2, lines);
  }
  return bytes;
}

void HttpServer::Impl::OnEvent(Connection& c, uint32_t events) {
  if ((events & EPOLLERR) != 0) {
    Close(c);
    return;
  }
  if (c.state == Connection::State::kHandshake) {
    Handshake(c);
    if (c.fd < 0) return;
    if (c.state == Connection::State::kHandshake) {
      UpdateInterest(c);
      return;
    }
  }
  const bool hangup = (events & (EPOLLRDHUP | EPOLLHUP)) != 0;
  if (c.state == Connection::State::kLingering) {
    if ((events & EPOLLIN) != 0 || hangup) DiscardInput(c);
    if (c.fd >= 0) UpdateInterest(c);
    return;
  }
  if ((events & EPOLLIN) != 0 || hangup) {
    if (c.state == Connection::State::kReading) {
      ReadSome(c);
    } else if (c.state == Connection::State::kUpgraded && !c.read_paused) {
      ReadUpgraded(c);
      if (c.fd < 0) return;
    } else if (c.write_wants_read) {
      Flush(c);
    } else if (hangup) {
      // The client went away mid-request or mid-stream: a stream ends now; a request
      // still running is answered into the void and the connection closed after.
      c.peer_closed = true;
      if (c.state == Connection::State::kStreaming || c.state == Connection::State::kUpgraded ||
          (events & EPOLLHUP) != 0) {
        Close(c);
        return;
      }
    }
  }
  if (c.fd >= 0 && ((events & EPOLLOUT) != 0 || c.read_wants_write)) {
    if (c.read_wants_write && c.state == Connection::State::kReading) {
      ReadSome(c);
    } else if (c.read_wants_write && c.state == Connection::State::kUpgraded) {
      ReadUpgraded(c);
      if (c.fd >= 0) Flush(c);
    } else {
      Flush(c);
    }
  }
  if (c.fd >= 0) UpdateInterest(c);
}

void HttpServer::Impl::Handshake(Connection& c) {
  switch (c.io->Handshake()) {
    case IoResult::kOk:
      c.io->Identify(c.peer);
      c.state = Connection::State::kReading;
      c.read_wants_write = false;
      c.last_activity = HttpClock::now();
      ReadSome(c);
      break;
    case IoResult::kWantRead:
      c.read_wants_write = false;
      break;
    case IoResult::kWantWrite:
      c.read_wants_write = true;
      break;
    default:
      Close(c);
  }
}

template <typename More, typename Take>
IoResult HttpServer::Impl::ReadChunks(Connection& c, More more, Take take) {
  char buf[kReadChunk];
  for (int i = 0; i < kReadsPerEvent && c.fd >= 0 && more(); ++i) {
    size_t n = 0;
    const IoResult r = c.io->Read(buf, sizeof buf, n);
    if (r == IoResult::kWantWrite) {
      c.read_wants_write = true;
      return r;
    }
    c.read_wants_write = false;
    if (r != IoResult::kOk) return r;
    take(std::string_view(buf, n));
  }
  return IoResult::kOk;
}

void HttpServer::Impl::ReadSome(Connection& c) {
  const IoResult r = ReadChunks(
      c, [&] { return c.state == Connection::State::kReading; },
      [&](std::string_view bytes) {
        c.last_activity = HttpClock::now();
        if (!c.request_in_progress) {
          c.request_in_progress = true;
          c.request_started = c.last_activity;
        }
        c.in.append(bytes);
        ProcessInput(c);
      });
  if (r != IoResult::kClosed && r != IoResult::kError) return;
  // End of input (or a broken socket): nothing more will come.
  c.peer_closed = true;
  if (r == IoResult::kError || c.pending_out() == 0) {
    Close(c);
  } else {
    c.state = Connection::State::kClosing;  // after what is being written
  }
}

void HttpServer::Impl::ReadUpgraded(Connection& c) {
  auto* session = c.stream ? std::get_if<std::unique_ptr<ExecSession>>(&c.stream->stream) : nullptr;
  if (session == nullptr) return;
  const IoResult r = ReadChunks(
      c, [&] { return !c.read_paused; },
      [&](std::string_view bytes) {
        c.last_activity = HttpClock::now();
        if (!(*session)->Receive(bytes)) c.read_paused = true;
      });
  if (r != IoResult::kClosed && r != IoResult::kError) return;
  // The client is gone: so is its command (Close drops the session, which kills it).
  c.peer_closed = true;
  Close(c);
}

void HttpServer::Impl::Linger(Connection& c) {
  ::shutdown(c.fd, SHUT_WR);
  c.state = Connection::State::kLingering;
  c.linger_until = HttpClock::now() + std::chrono::seconds(2);
  DiscardInput(c);
  if (c.fd >= 0) UpdateInterest(c);
}

void HttpServer::Impl::DiscardInput(Connection& c) {
  // Late bytes are dropped and are no activity (idle eviction still sees it as old).
  const IoResult r = ReadChunks(
      c, [] { return true; }, [](std::string_view) {});
  if (r == IoResult::kClosed || r == IoResult::kError) Close(c);  // the client closed too
}

void HttpServer::Impl::StartUpgraded(Connection& c, ExecSession& session) {
  c.state = Connection::State::kUpgraded;
  c.linger = true;
  c.read_paused = false;
  const uint64_t id = c.id;
  session.Start([this] { WakeStreams(); },
                [this, id] {
                  Completion resume;
                  resume.conn_id = id;
                  resume.kind = Completion::Kind::kResumeRead;
                  Post(std::move(resume));
                });
  // Frames the client sent right behind its request.
  if (!c.in.empty()) {
    if (!session.Receive(c.in)) c.read_paused = true;
    c.in.clear();
  }
}

void HttpServer::Impl::ProcessInput(Connection& c) {
  while (c.fd >= 0 && c.state == Connection::State::kReading) {
    switch (c.parser.Parse(c.in)) {
      case HttpRequestParser::State::kNeedMore:
        return;
      case HttpRequestParser::State::kHeadersDone:
        if (c.parser.request().expect_continue) {
          if (c.pending_out() == 0) c.last_write_progress = HttpClock::now();
          c.out += "HTTP/1.1 100 Continue\r\n\r\n";
          Flush(c);
        }
        break;
      case HttpRequestParser::State::kError:
        RespondError(c, c.parser.status(), c.parser.error());
        return;
      case HttpRequestParser::State::kComplete:
        Dispatch(c, c.parser.TakeRequest());
        break;
    }
  }
}

void HttpServer::Impl::Dispatch(Connection& c, HttpRequest request) {
  c.keep_alive = request.keep_alive && !c.peer_closed;
  c.http10 = request.minor_version == 0;
  c.request_in_progress = false;
  const bool head = request.method == "HEAD";
  const bool public_file = options_.public_path && (request.method == "GET" || head) &&
                           options_.public_path(request.path);
  if (IsHealthCheck(request) || public_file) {
    // Without credentials too, as kube-apiserver's system:public-info-viewer allows:
    // a load balancer's probe carries none (nor does a browser loading the dashboard's
    // page, which asks for a token once it runs).
    ApiResult result = handler_(ToApiRequest(std::move(request), auth::UserInfo{}));
    if (auto* r = std::get_if<ApiResponse>(&result)) {
      Respond(c, SerializeResponse(*r, c.keep_alive, head), c.keep_alive);
    } else {
      RespondError(c, 500, "a health check answered with a stream");
    }
    return;
  }
  std::optional<auth::UserInfo> user = authenticate_
                                           ? authenticate_(request, c.peer)
                                           : std::optional<auth::UserInfo>(auth::UserInfo{});
  if (!user) {
    Respond(c, StatusBytes(401, "Unauthorized", c.keep_alive), c.keep_alive);
    return;
  }
  if (inflight_ >= options_.max_inflight) {
    // kube-apiserver's answer when max-requests-inflight is reached.
    Respond(c,
            StatusBytes(429, "Too many requests, please try again later.", c.keep_alive,
                        {{"Retry-After", "1"}}),
            c.keep_alive);
    return;
  }
  c.state = Connection::State::kWaiting;
  ++inflight_;
  Job job;
  job.conn_id = c.id;
  job.head = head;
  job.keep_alive = c.keep_alive;
  job.request = ToApiRequest(std::move(request), std::move(*user));
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    jobs_.push_back(std::move(job));
  }
  jobs_cv_.notify_one();
}

void HttpServer::Impl::Respond(Connection& c, std::string bytes, bool keep_alive) {
  if (c.pending_out() == 0) c.last_write_progress = HttpClock::now();
  // An HTTP/1.0 client keeps the connection only if the response says so (RFC 9112
  // section 9.3); without the header it waits for a close that never comes (ab -k).
  if (keep_alive && c.http10) {
    const size_t end = bytes.find("\r\n\r\n");
    if (end != std::string::npos) bytes.insert(end + 2, "Connection: keep-alive\r\n");
  }
  c.out += bytes;
  c.keep_alive = keep_alive;
  AfterResponse(c);
  Flush(c);
}

void HttpServer::Impl::RespondError(Connection& c, int code, const std::string& message) {
  Respond(c, StatusBytes(code, message, false), false);
}

void HttpServer::Impl::AfterResponse(Connection& c) {
  if (c.keep_alive && !c.peer_closed) {
    c.state = Connection::State::kReading;
    c.request_in_progress = !c.in.empty();
    if (c.request_in_progress) c.request_started = HttpClock::now();
  } else {
    c.state = Connection::State::kClosing;
  }
}

void HttpServer::Impl::Apply(Connection& c, Completion& done) {
  using Kind = Completion::Kind;
  switch (done.kind) {
    case Kind::kResponse:
      Respond(c, std::move(done.bytes), done.keep_alive && !c.peer_closed);
      break;
    case Kind::kStreamStart:
      if (c.pending_out() == 0) c.last_write_progress = HttpClock::now();
      c.out += done.bytes;
      c.state = Connection::State::kStreaming;
      c.stream = done.stream;
      ++streams_;
      if (auto* e = std::get_if<std::unique_ptr<ExecSession>>(&done.stream->stream)) {
        StartUpgraded(c, **e);
      }
      {
        std::lock_guard<std::mutex> lock(pump_mu_);
        pump_added_.push_back(done.stream);
      }
      pump_cv_.notify_one();
      Flush(c);
      break;
    case Kind::kStreamData:
      if (c.stream) c.stream->posted -= done.bytes.size();
      if (c.pending_out() == 0) c.last_write_progress = HttpClock::now();
      c.out += done.bytes;
      Flush(c);
      break;
    case Kind::kResumeRead:
      c.read_paused = false;
      if (c.state == Connection::State::kUpgraded) ReadUpgraded(c);
      break;
    case Kind::kStreamEnd:
      if (c.pending_out() == 0) c.last_write_progress = HttpClock::now();
      c.out += done.bytes;
      c.stream.reset();
      --streams_;
      c.keep_alive = done.keep_alive && !c.peer_closed;
      AfterResponse(c);
      Flush(c);
      break;
  }
  if (c.fd < 0) return;
  // Pipelined requests that arrived meanwhile, and bytes TLS already decrypted.
  if (c.state == Connection::State::kReading) {
    ProcessInput(c);
    if (c.fd >= 0 && c.state == Connection::State::kReading && c.io->HasBuffered()) ReadSome(c);
  } else if (c.state == Connection::State::kUpgraded && !c.read_paused && c.io->HasBuffered()) {
    ReadUpgraded(c);
  }
  if (c.fd >= 0) UpdateInterest(c);
}

void HttpServer::Impl::Flush(Connection& c) {
  const size_t before = c.pending_out();
  while (c.pending_out() > 0) {
    size_t n = 0;
    const IoResult r = c.io->Write(c.out.data() + c.out_off, c.pending_out(), n);
    if (r == IoResult::kOk) {
      c.out_off += n;
      c.last_write_progress = c.last_activity = HttpClock::now();
      c.write_wants_read = false;
      continue;
    }
    if (r == IoResult::kWantWrite) {
      c.write_wants_read = false;
      break;
    }
    if (r == IoResult::kWantRead) {
      c.write_wants_read = true;
      break;
    }
    Close(c);
    return;
  }
  if (c.out_off == c.out.size()) {
    c.out.clear();
    c.out_off = 0;
  } else if (c.out_off > (1u << 20)) {
    c.out.erase(0, c.out_off);
    c.out_off = 0;
  }
  if (c.stream) {
    c.stream->unwritten = c.pending_out();
    // A client that caught up with its backlog gets more at once.
    if (before >= options_.stream_high_water && c.pending_out() < options_.stream_high_water) {
      WakeStreams();
    }
  }
  if (c.state == Connection::State::kClosing && c.pending_out() == 0) {
    if (c.linger) {
      Linger(c);
    } else {
      Close(c);
    }
  }
}

void HttpServer::Impl::UpdateInterest(Connection& c) {
  uint32_t want = 0;
  if (!c.peer_closed) want |= EPOLLRDHUP;
  const bool reads =
      c.state == Connection::State::kHandshake ||
      (c.state == Connection::State::kReading && !c.peer_closed) ||
      (c.state == Connection::State::kUpgraded && !c.peer_closed && !c.read_paused) ||
      c.state == Connection::State::kLingering;
  if (reads) want |= c.read_wants_write ? EPOLLOUT : EPOLLIN;
  if (c.pending_out() > 0) want |= c.write_wants_read ? EPOLLIN : EPOLLOUT;
  if (want == c.events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = c.id;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = want;
}

void HttpServer::Impl::Close(Connection& c) {
  if (c.fd < 0) return;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c.fd, nullptr);
  ::close(c.fd);
  c.fd = -1;
  if (auto it = per_client_.find(c.peer.address); it != per_client_.end() && --it->second == 0) {
    per_client_.erase(it);
  }
  if (c.stream) {
    c.stream->cancelled = true;
    c.stream.reset();
    --streams_;
    WakeStreams();  // the pump drops (and destroys) it promptly
  }
  closed_.push_back(c.id);
}

}  // namespace muster::server
