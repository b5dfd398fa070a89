// The inside of HttpServer (http_server.h), shared by its three parts:
// http_server.cc (sockets, the reactor loop, accepting, timeouts, limits),
// http_connection.cc (one connection's reads, parsing, dispatch, responses, writes)
// and http_streams.cc (the stream pump and the worker pool).
//
// Threads: the reactor owns every Connection; workers and the pump never touch one.
// They hand results back as Completions (by connection id, so a connection closed
// meanwhile just drops them) through a queue and an eventfd.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "server/http_server.h"
#include "server/http_transport.h"

namespace muster::server {

using HttpClock = std::chrono::steady_clock;

// One watch or followed log on its way to a client, or an exec on its upgraded
// connection (which the client writes to as well).
struct StreamHandle {
  uint64_t conn_id = 0;
  std::variant<std::unique_ptr<WatchStream>, std::unique_ptr<LogStream>,
               std::unique_ptr<ExecSession>>
      stream;
  bool keep_alive = true;
  std::atomic<bool> cancelled{false};  // the connection is gone
  // Bytes the pump posted that the reactor has not appended yet, and bytes in the
  // connection's buffer the client has not read: together the backlog.
  std::atomic<size_t> posted{0};
  std::atomic<size_t> unwritten{0};
};

struct Completion {
  // kResumeRead: an upgraded connection's session has room for the client's bytes again.
  enum class Kind { kResponse, kStreamStart, kStreamData, kStreamEnd, kResumeRead };
  uint64_t conn_id = 0;
  Kind kind = Kind::kResponse;
  std::string bytes;
  bool keep_alive = true;
  std::shared_ptr<StreamHandle> stream;  // kStreamStart
};

// A parsed, authenticated request for a worker.
struct Job {
  uint64_t conn_id = 0;
  ApiRequest request;
  bool head = false;  // HEAD: answer as GET without the body
  bool keep_alive = true;
};

struct Connection {
  // kUpgraded: a stream both ways (exec's WebSocket); the client's bytes go to it.
  // kLingering: an upgraded connection's last bytes are written and its write side
  // shut: what the client still sends is read and dropped until it closes (or a few
  // seconds pass), so that closing never answers a late frame with a reset that would
  // discard the exit status the client has not read yet.
  enum class State { kHandshake, kReading, kWaiting, kStreaming, kUpgraded, kClosing, kLingering };
  uint64_t id = 0;
  int fd = -1;
  std::unique_ptr<Transport> io;
  auth::PeerIdentity peer;
  State state = State::kReading;
  HttpRequestParser parser;
  std::string in;
  std::string out;
  size_t out_off = 0;
  bool peer_closed = false;       // the client sent FIN (or the socket broke)
  bool keep_alive = true;         // of the request being answered
  bool http10 = false;            // the request being answered is HTTP/1.0
  bool write_wants_read = false;  // TLS: a write must read first
  bool read_wants_write = false;  // TLS: a read must write first
  bool read_paused = false;       // kUpgraded: the session's input is full
  bool linger = false;            // upgraded: close through kLingering
  HttpClock::time_point linger_until;
  uint32_t events = 0;  // what epoll watches now
  HttpClock::time_point accepted;
  HttpClock::time_point last_activity;    // last byte in or out
  HttpClock::time_point request_started;  // first byte of the request being read
  bool request_in_progress = false;
  HttpClock::time_point last_write_progress;
  std::shared_ptr<StreamHandle> stream;

  size_t pending_out() const { return out.size() - out_off; }
  bool Idle() const {
    return state == State::kReading && !request_in_progress && in.empty() && pending_out() == 0;
  }
};

class HttpServer::Impl {
 public:
  Impl(RequestHandler handler, HttpServerOptions options);
  ~Impl();

  Status Bind(const std::string& host, int port);
  void Serve();
  void Stop();
  void Post(Completion completion);  // any thread
  void WakeStreams();

  RequestHandler handler_;
  Authenticate authenticate_;
  const HttpServerOptions options_;
  int port_ = 0;
  std::atomic<bool> running_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> inflight_{0};
  std::atomic<size_t> connections_{0};
  std::atomic<size_t> streams_{0};

 private:
  // http_server.cc: the loop, accepting, limits, timeouts.
  void Accept();
  bool AdmitClient(const std::string& address);
  bool EvictIdle(const std::string* address);
  void CheckTimeouts(HttpClock::time_point now);
  void DrainCompletions();
  void Shutdown();

  // http_connection.cc: one connection.
  void OnEvent(Connection& c, uint32_t events);
  void Handshake(Connection& c);
  // Reads chunks (kReadsPerEvent at most) while `more` holds, handing each to `take`;
  // returns why it stopped (kOk: budget or `more` ran out) with read_wants_write set.
  template <typename More, typename Take>
  IoResult ReadChunks(Connection& c, More more, Take take);
  void ReadSome(Connection& c);
  void ReadUpgraded(Connection& c);
  void Linger(Connection& c);        // kClosing -> kLingering
  void DiscardInput(Connection& c);  // kLingering
  // An exec's session takes over the connection (kStreamStart of an ExecSession).
  void StartUpgraded(Connection& c, ExecSession& session);
  void ProcessInput(Connection& c);
  void Dispatch(Connection& c, HttpRequest request);
  void Respond(Connection& c, std::string bytes, bool keep_alive);
  void RespondError(Connection& c, int code, const std::string& message);
  void Apply(Connection& c, Completion& completion);
  void Flush(Connection& c);
  void UpdateInterest(Connection& c);
  void Close(Connection& c);
  void AfterResponse(Connection& c);

  // http_streams.cc: workers and the stream pump.
  void WorkerLoop();
  void PumpLoop();
  // Pulls what a stream has now; false when it ended (the end is posted).
  bool Pull(StreamHandle& s);

  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;

  // Reactor thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::map<std::string, size_t> per_client_;
  uint64_t next_id_ = 2;  // 0 and 1 tag the listening socket and the eventfd
  bool accept_paused_ = false;
  HttpClock::time_point accept_resume_;
  std::vector<uint64_t> closed_;  // closed during one event round, erased after it

  // Reactor <- workers and pump.
  std::mutex completions_mu_;
  std::vector<Completion> completions_;

  // Reactor -> workers.
  std::mutex jobs_mu_;
  std::condition_variable jobs_cv_;
  std::deque<Job> jobs_;
  bool workers_stop_ = false;
  std::vector<std::thread> workers_;

  // Reactor -> pump.
  std::mutex pump_mu_;
  std::condition_variable pump_cv_;
  std::vector<std::shared_ptr<StreamHandle>> pump_added_;
  bool pump_woken_ = false;
  bool pump_stop_ = false;
  std::thread pump_;
};

// The bytes of a non-streaming response (http_connection.cc).
std::string SerializeResponse(const ApiResponse& response, bool keep_alive, bool head_only);

}  // namespace muster::server
