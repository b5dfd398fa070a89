// ServeStack: muster serve's ObjectStore + ApiHandler + HttpServer on 127.0.0.1:<any>,
// for the KubeClient and LeaderElector tests. An optional hook sees every request first
// and may answer it itself (fault injection) or return nullopt to let the API serve it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "kube/cluster_connection.h"
#include "server/api_handler.h"
#include "server/http_server.h"
#include "server/object_store.h"

namespace muster::kube::testing {

class ServeStack {
 public:
  using Hook = std::function<std::optional<server::ApiResponse>(const server::ApiRequest&)>;

  ServeStack() {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("muster-kube-stack-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    std::filesystem::remove_all(dir_);
    auto opened = server::ObjectStore::Open(dir_.string());
    if (!opened.ok()) {
      ADD_FAILURE() << opened.status().ToString();
      return;
    }
    store_ = std::move(opened).value();
    handler_ = std::make_unique<server::ApiHandler>(*store_, "127.0.0.1:0");
    handler_->set_ready(true);
    http_ = std::make_unique<server::HttpServer>([this](const server::ApiRequest& r) {
      if (hook_) {
        if (auto answer = hook_(r)) return server::ApiResult(std::move(*answer));
      }
      return handler_->Handle(r);
    });
    if (Status s = http_->Bind("127.0.0.1", 0); !s.ok()) {
      ADD_FAILURE() << s.ToString();
      return;
    }
    handler_->set_server_address("127.0.0.1:" + std::to_string(http_->port()));
    thread_ = std::thread([this] { http_->Serve(); });
  }

  ~ServeStack() {
    if (http_) http_->Stop();
    if (thread_.joinable()) thread_.join();
    http_.reset();
    handler_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Set before the requests it should see (not while requests are in flight).
  void set_hook(Hook hook) { hook_ = std::move(hook); }
  server::ApiHandler& handler() { return *handler_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(http_->port()); }
  ClusterConnection connection() const {
    ClusterConnection c;
    c.server = url();
    c.namespace_ = "default";
    c.source = "test";
    return c;
  }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<server::ObjectStore> store_;
  std::unique_ptr<server::ApiHandler> handler_;
  std::unique_ptr<server::HttpServer> http_;
  std::thread thread_;
  Hook hook_;
};

}  // namespace muster::kube::testing
