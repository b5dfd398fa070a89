// The HTTP request path of muster serve, transport-free, for fuzzing: bytes as a
// client would send them on one connection go through the request parser (as the
// server's connection feeds it) and every complete request through the API handler
// against a real store, as the server's own user. Shared by the libFuzzer target
// (fuzz/http_fuzz.cc, clang) and the replay test run under ASan + UBSan
// (tests/server/http_fuzz_replay_test.cc), so CI exercises the same code.
//
// Nothing a client sends may crash the server, hang it, or make it answer 500
// InternalError (what the handler answers when an exception escaped: a bug).
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>

#include "server/api_handler.h"
#include "server/auth/identity.h"
#include "server/http_parser.h"
#include "server/object_store.h"
#include "server/watch_stream.h"

namespace muster::fuzz {

class HttpApiHarness {
 public:
  HttpApiHarness() {
    // tmpfs where there is one: the store's fsyncs are free there.
    const std::filesystem::path base =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    dir_ = (base / ("muster-http-fuzz-" + std::to_string(::getpid()))).string();
    std::filesystem::remove_all(dir_);
    auto store = server::ObjectStore::Open(dir_);
    if (!store.ok()) {
      std::fprintf(stderr, "cannot open the store: %s\n", store.status().ToString().c_str());
      std::abort();
    }
    store_ = std::move(*store);
    handler_ = std::make_unique<server::ApiHandler>(*store_, "127.0.0.1:6443");
    handler_->set_data_dir(dir_);
    handler_->set_ready(true);
  }
  ~HttpApiHarness() {
    handler_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Feeds `data` as one connection's bytes; returns how many requests completed.
  int Run(const uint8_t* data, size_t size) {
    std::string buffer(reinterpret_cast<const char*>(data), size);
    server::HttpRequestParser parser;
    int handled = 0;
    // A pipelined burst is bounded by the input's size; the guard only stops a
    // parser that would stop consuming.
    for (int guard = 0; guard < 1000 && !buffer.empty(); ++guard) {
      const size_t before = buffer.size();
      const auto state = parser.Parse(buffer);
      if (state == server::HttpRequestParser::State::kError ||
          state == server::HttpRequestParser::State::kNeedMore) {
        break;
      }
      if (state == server::HttpRequestParser::State::kHeadersDone) {
        if (buffer.size() == before && buffer.empty()) break;
        continue;
      }
      Handle(parser.TakeRequest());
      ++handled;
      parser.Reset();
    }
    return handled;
  }

 private:
  void Handle(server::HttpRequest&& r) {
    server::ApiRequest a = server::ToApiRequest(std::move(r), server::auth::ServerUser());
    server::ApiResult result = handler_->Handle(a);
    if (auto* response = std::get_if<server::ApiResponse>(&result)) {
      if (response->code == 500 && response->body.find("InternalError") != std::string::npos) {
        std::fprintf(stderr, "500 InternalError for %s %s: %s\n", a.method.c_str(), a.path.c_str(),
                     response->body.substr(0, 500).c_str());
        std::abort();
      }
      return;
    }
    // A stream (watch, log): its first pieces, without waiting.
    for (int i = 0; i < 3; ++i) {
      std::optional<std::string> next;
      if (auto* w = std::get_if<std::unique_ptr<server::WatchStream>>(&result)) {
        next = (*w)->Next(std::chrono::milliseconds(0));
      } else if (auto* l = std::get_if<std::unique_ptr<server::LogStream>>(&result)) {
        next = (*l)->Next(std::chrono::milliseconds(0));
      }
      if (!next) break;
    }
  }

  std::string dir_;
  std::unique_ptr<server::ObjectStore> store_;
  std::unique_ptr<server::ApiHandler> handler_;
};

}  // namespace muster::fuzz
