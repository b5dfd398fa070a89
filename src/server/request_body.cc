#include "server/request_body.h"

#include <cctype>

#include "core/nesting_depth.h"

namespace muster::server {

std::string MediaType(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  while (!content_type.empty() && content_type.front() == ' ') content_type.remove_prefix(1);
  while (!content_type.empty() && content_type.back() == ' ') content_type.remove_suffix(1);
  std::string out(content_type);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<ApiError> CheckRequestBody(const ApiRequest& request) {
  if (request.body.empty()) return std::nullopt;
  const std::string media = MediaType(request.content_type);
  // PATCH bodies name their patch type in the media type; the patch handler
  // answers 415 for the ones it does not know.
  if (request.method == "POST" || request.method == "PUT") {
    if (media != "application/json" && media != "application/yaml") {
      return UnsupportedMediaType(
          "the body of the request was in an unknown format - accepted media types include: "
          "application/json, application/yaml");
    }
  }
  if (ExceedsNestingDepth(request.body, kMaxBodyNestingDepth)) {
    return BadRequest("the request body is nested deeper than " +
                      std::to_string(kMaxBodyNestingDepth) + " levels");
  }
  return std::nullopt;
}

}  // namespace muster::server
