// HttpServer's worker pool (runs the request handler) and stream pump (pulls
// watch events and log bytes for every open stream, on one thread).
#include <iostream>

#include "server/api_status.h"
#include "server/http_server_impl.h"

namespace muster::server {
namespace {

// How often streams are looked at without a wake-up: log files are polled (the
// executor appends to them from other processes) and watch timeouts checked.
constexpr auto kPumpInterval = std::chrono::milliseconds(100);
// Chunks taken from one stream per round, so a busy stream cannot starve the rest.
constexpr int kChunksPerRound = 16;

}  // namespace

void HttpServer::Impl::WorkerLoop() {
  while (true) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(jobs_mu_);
      jobs_cv_.wait(lock, [&] { return workers_stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    Completion done;
    done.conn_id = job.conn_id;
    done.keep_alive = job.keep_alive;
    ApiResult result = ApiResponse{};
    try {
      result = handler_(job.request);
    } catch (const std::exception& e) {
      // The handler should never throw (ApiHandler catches); a wrapper might.
      result = ApiResponse{500, "application/json",
                           ToWire(MakeError(500, "InternalError", e.what()).ToJson())};
    }
    if (auto* response = std::get_if<ApiResponse>(&result)) {
      if (response->code >= 500) {
        std::cerr << "muster serve: " << job.request.method << " " << job.request.path << " -> "
                  << response->code << ": " << response->body.substr(0, 1000) << "\n";
      }
      done.bytes = SerializeResponse(*response, job.keep_alive, job.head);
    } else {
      auto stream = std::make_shared<StreamHandle>();
      stream->conn_id = job.conn_id;
      stream->keep_alive = job.keep_alive;
      const char* type = "application/json;stream=watch";
      if (auto* e = std::get_if<std::unique_ptr<ExecSession>>(&result)) {
        // The connection is the session's from here: never reused for HTTP.
        done.bytes = (*e)->HandshakeResponse();
        stream->keep_alive = false;
        stream->stream = std::move(*e);
      } else {
        if (auto* w = std::get_if<std::unique_ptr<WatchStream>>(&result)) {
          stream->stream = std::move(*w);
        } else {
          stream->stream = std::move(std::get<std::unique_ptr<LogStream>>(result));
          type = "text/plain";
        }
        done.bytes =
            ResponseHead(200, {{"Content-Type", type}, {"Cache-Control", "no-cache, private"}},
                         std::nullopt, job.keep_alive);
      }
      done.kind = Completion::Kind::kStreamStart;
      done.stream = std::move(stream);
    }
    --inflight_;
    Post(std::move(done));
  }
}

void HttpServer::Impl::WakeStreams() {
  // Called for every committed change: with no stream open there is nothing to pull,
  // and waking the pump anyway was a context switch per write. A stream being added
  // now is pulled when the pump takes it, from its own starting resourceVersion.
  if (streams_ == 0) return;
  {
    std::lock_guard<std::mutex> lock(pump_mu_);
    pump_woken_ = true;
  }
  pump_cv_.notify_one();
}

void HttpServer::Impl::PumpLoop() {
  std::vector<std::shared_ptr<StreamHandle>> streams;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(pump_mu_);
      auto ready = [&] { return pump_stop_ || pump_woken_ || !pump_added_.empty(); };
      if (streams.empty()) {
        pump_cv_.wait(lock, ready);
      } else {
        pump_cv_.wait_for(lock, kPumpInterval, ready);
      }
      if (pump_stop_) break;
      pump_woken_ = false;
      for (auto& s : pump_added_) streams.push_back(std::move(s));
      pump_added_.clear();
    }
    for (size_t i = 0; i < streams.size();) {
      if (streams[i]->cancelled || !Pull(*streams[i])) {
        streams[i] = std::move(streams.back());
        streams.pop_back();
      } else {
        ++i;
      }
    }
  }
  streams.clear();  // the streams are destroyed here, off the reactor
}

bool HttpServer::Impl::Pull(StreamHandle& s) {
  for (int i = 0; i < kChunksPerRound; ++i) {
    if (s.posted + s.unwritten >= options_.stream_high_water) return true;
    std::optional<std::string> chunk;
    try {
      chunk = std::visit([](auto& stream) { return stream->Next(std::chrono::milliseconds(0)); },
                         s.stream);
    } catch (const std::exception& e) {
      std::cerr << "muster serve: a stream failed: " << e.what() << "\n";
      chunk.reset();
    }
    // An upgraded connection's bytes are the session's own frames, not HTTP chunks.
    const bool upgraded = std::holds_alternative<std::unique_ptr<ExecSession>>(s.stream);
    if (!chunk) {
      Completion end;
      end.conn_id = s.conn_id;
      end.kind = Completion::Kind::kStreamEnd;
      if (!upgraded) end.bytes = Chunk("");
      end.keep_alive = s.keep_alive;
      Post(std::move(end));
      return false;
    }
    if (chunk->empty()) {
      // A watch reads the history in batches: one without a matching change is not
      // the end of what is there (a watch from an old resourceVersion skips
      // thousands of other kinds' changes).
      auto* watch = std::get_if<std::unique_ptr<WatchStream>>(&s.stream);
      if (watch == nullptr || !(*watch)->Behind()) return true;
      continue;
    }
    Completion data;
    data.conn_id = s.conn_id;
    data.kind = Completion::Kind::kStreamData;
    data.bytes = upgraded ? std::move(*chunk) : Chunk(*chunk);
    s.posted += data.bytes.size();
    Post(std::move(data));
  }
  return true;
}

}  // namespace muster::server
