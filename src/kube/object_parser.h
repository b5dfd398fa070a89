// ParseApiObject: what the API server sends (an object, a list of objects or a watch
// event) parsed without the objects' metadata.managedFields. Server-side apply's
// bookkeeping is often the largest part of an object and muster reads none of it;
// dropping it while parsing, rather than after, saves building and freeing it for
// every watch event (as kube-scheduler's and Kueue's informers drop it, but before
// it costs anything). simdjson lexes it, three times faster than nlohmann's lexer;
// what simdjson refuses (an integer beyond 64 bits, nesting beyond 1,024) nlohmann's
// parser takes. The values are those json::parse gives.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace muster::kube {

// The value of `text`, where the managedFields of the top-level object, of each
// element of a top-level "items" array (a list) and of a top-level "object" (a watch
// event) are left out; every other field, managedFields nested elsewhere included, is
// kept. A value that is not JSON is discarded (is_discarded()), as
// json::parse(text, nullptr, false) answers it.
nlohmann::json ParseApiObject(std::string_view text);

}  // namespace muster::kube
