// ApiClient: the HTTP side of muster's own client commands (apply, get, describe,
// delete, logs), for machines without kubectl. Talks to `muster serve` (or any
// Kubernetes API server without authentication) and turns metav1.Status answers
// into Status values carrying the server's message.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"

namespace httplib {
class Client;
}

namespace muster::cli {

struct HttpReply {
  int code = 0;
  std::string content_type;
  std::string body;
};

// Accept header asking the server to render a list as a meta.k8s.io Table.
inline constexpr const char* kAcceptTable =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

// "<path>?k=v&..." with the values percent-encoded; empty values are left out.
std::string WithQuery(const std::string& path, const std::map<std::string, std::string>& query);

class ApiClient {
 public:
  // `server_url`: "http://host:port" ("host:port" is taken as http).
  explicit ApiClient(std::string server_url);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  const std::string& server_url() const { return server_url_; }

  // One request. A non-OK Status only when no HTTP answer came (kUnavailable for a
  // refused connection, naming the URL); 4xx/5xx answers are replies.
  Result<HttpReply> Send(const std::string& method, const std::string& path,
                         const std::string& body = "",
                         const std::string& accept = "application/json");

  // Send, then the JSON of a 2xx reply; any other reply becomes ReplyError.
  Result<nlohmann::json> Json(const std::string& method, const std::string& path,
                              const std::string& body = "",
                              const std::string& accept = "application/json");

  // A GET whose body is handed to `on_data` as it arrives (watch, logs -f) until the
  // server ends it or `on_data` returns false.
  Status Stream(const std::string& path, const std::string& accept,
                const std::function<bool(std::string_view)>& on_data);

 private:
  Status ConnectionError(int error) const;

  std::string server_url_;
  std::unique_ptr<httplib::Client> http_;
};

// "Error from server (<reason>): <message>" for a metav1.Status body, as kubectl
// prints it; the raw body otherwise. Codes: 404 kNotFound, 409 kConflict/
// kAlreadyExists, other 4xx kInvalidArgument, 5xx kUnavailable.
Status ReplyError(const HttpReply& reply);

}  // namespace muster::cli
