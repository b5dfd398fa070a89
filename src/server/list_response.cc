#include "server/list_response.h"

#include <nlohmann/json.hpp>

#include "server/api_status.h"
#include "server/watch_stream.h"

namespace muster::server {

Result<Selectors> ParseSelectors(const ApiRequest& r) {
  auto labels = LabelSelector::Parse(QueryParam(r, "labelSelector"));
  if (!labels.ok()) return labels.status();
  auto fields = FieldSelector::Parse(QueryParam(r, "fieldSelector"));
  if (!fields.ok()) return fields.status();
  return Selectors{std::move(*labels), std::move(*fields)};
}

std::string WriteListBody(const ObjectStore::TextList& list, const control::ResourceType& type,
                          const std::string& version, const LabelSelector& labels,
                          const FieldSelector& fields) {
  const std::string api_version = type.ApiVersion(version);
  const bool filter = !labels.empty() || !fields.empty();
  size_t bytes = 128;
  for (const auto& item : list.items) bytes += item->text.size() + 1;
  std::string out;
  out.reserve(bytes);
  out += ToWire({{"kind", type.kind + "List"},
                 {"apiVersion", api_version},
                 {"metadata", {{"resourceVersion", std::to_string(list.resource_version)}}}});
  out.pop_back();  // the closing brace: items follow
  out += ",\"items\":[";
  bool first = true;
  for (const auto& item : list.items) {
    const bool as_stored = item->api_version == api_version && item->kind == type.kind;
    nlohmann::json object;
    if (filter || !as_stored) {
      object = nlohmann::json::parse(item->text, nullptr, false);
      if (object.is_discarded()) continue;  // cannot happen: the store wrote it
      if (filter && !(labels.Matches(object) && fields.Matches(object))) continue;
    }
    if (!first) out += ',';
    first = false;
    if (as_stored) {
      out += item->text;
    } else {
      out += ToWire(PresentObject(std::move(object), type, version));
    }
  }
  out += "]}";
  return out;
}

}  // namespace muster::server
