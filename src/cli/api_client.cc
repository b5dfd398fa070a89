#include "cli/api_client.h"

// The system cpp-httplib is a compiled library built with these options; the header
// must see the same ones (see server/http_server.cc).
#define CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#include <httplib.h>

#include "core/percent_encode.h"

namespace muster::cli {
namespace {

using nlohmann::json;

constexpr time_t kRequestTimeoutSeconds = 30;
// Streams (watch, logs -f) may be silent for as long as the pod prints nothing.
constexpr time_t kStreamTimeoutSeconds = time_t{7} * 24 * 3600;

std::string NormalizeUrl(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.find("://") == std::string::npos) url = "http://" + url;
  return url;
}

}  // namespace

std::string WithQuery(const std::string& path, const std::map<std::string, std::string>& query) {
  std::string out = path;
  char sep = '?';
  for (const auto& [k, v] : query) {
    if (v.empty()) continue;
    out += sep + PercentEncode(k) + "=" + PercentEncode(v);
    sep = '&';
  }
  return out;
}

ApiClient::ApiClient(std::string server_url)
    : server_url_(NormalizeUrl(std::move(server_url))),
      http_(std::make_unique<httplib::Client>(server_url_)) {
  http_->set_connection_timeout(10);
  http_->set_read_timeout(kRequestTimeoutSeconds);
}

ApiClient::~ApiClient() = default;

Status ApiClient::ConnectionError(int error) const {
  const auto e = static_cast<httplib::Error>(error);
  std::string why = e == httplib::Error::Connection ? "connection refused" : httplib::to_string(e);
  return Status(StatusCode::kUnavailable,
                "cannot reach the muster server at " + server_url_ + " (" + why +
                    "); is `muster serve` running? (set --server or $MUSTER_SERVER)");
}

Result<HttpReply> ApiClient::Send(const std::string& method, const std::string& path,
                                  const std::string& body, const std::string& accept) {
  if (!http_->is_valid()) return InvalidArgument("invalid server URL " + server_url_);
  httplib::Headers headers = {{"Accept", accept}};
  const char* type = "application/json";
  httplib::Result res{nullptr, httplib::Error::Unknown};
  if (method == "GET") {
    res = http_->Get(path, headers);
  } else if (method == "POST") {
    res = http_->Post(path, headers, body, type);
  } else if (method == "PUT") {
    res = http_->Put(path, headers, body, type);
  } else if (method == "PATCH") {
    res = http_->Patch(path, headers, body, "application/merge-patch+json");
  } else if (method == "DELETE") {
    res = http_->Delete(path, headers, body, type);
  } else {
    return InvalidArgument("unsupported method " + method);
  }
  if (!res) return ConnectionError(static_cast<int>(res.error()));
  return HttpReply{res->status, res->get_header_value("Content-Type"), res->body};
}

Result<json> ApiClient::Json(const std::string& method, const std::string& path,
                             const std::string& body, const std::string& accept) {
  auto reply = Send(method, path, body, accept);
  if (!reply.ok()) return reply.status();
  if (reply->code / 100 != 2) return ReplyError(*reply);
  json parsed = json::parse(reply->body, nullptr, false);
  if (parsed.is_discarded()) return Internal("the server's answer to " + path + " is not JSON");
  return parsed;
}

Status ApiClient::Stream(const std::string& path, const std::string& accept,
                         const std::function<bool(std::string_view)>& on_data) {
  if (!http_->is_valid()) return InvalidArgument("invalid server URL " + server_url_);
  HttpReply error;
  bool stopped = false;
  http_->set_read_timeout(kStreamTimeoutSeconds);
  auto res = http_->Get(
      path, {{"Accept", accept}},
      [&](const httplib::Response& r) {
        error.code = r.status;
        error.content_type = r.get_header_value("Content-Type");
        return true;
      },
      [&](const char* data, size_t n) {
        if (error.code / 100 != 2) {
          error.body.append(data, n);
          return true;
        }
        if (!on_data(std::string_view(data, n))) {
          stopped = true;
          return false;
        }
        return true;
      });
  http_->set_read_timeout(kRequestTimeoutSeconds);
  if (stopped) return Status::Ok();
  if (!res) return ConnectionError(static_cast<int>(res.error()));
  if (error.code / 100 != 2) return ReplyError(error);
  return Status::Ok();
}

Status ReplyError(const HttpReply& reply) {
  StatusCode code = StatusCode::kInvalidArgument;
  if (reply.code == 404) code = StatusCode::kNotFound;
  if (reply.code == 409) code = StatusCode::kConflict;
  if (reply.code >= 500) code = StatusCode::kUnavailable;
  json body = json::parse(reply.body, nullptr, false);
  if (body.is_object() && body.value("kind", "") == "Status") {
    if (body.value("reason", "") == "AlreadyExists") code = StatusCode::kAlreadyExists;
    std::string reason = body.value("reason", "");
    std::string message = body.value("message", "");
    return Status(
        code, "Error from server" + (reason.empty() ? "" : " (" + reason + ")") + ": " + message);
  }
  std::string text = reply.body;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return Status(code, "Error from server (HTTP " + std::to_string(reply.code) + "): " + text);
}

}  // namespace muster::cli
