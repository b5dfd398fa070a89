// PercentEncode: RFC 3986 percent-encoding of a URL query value or path segment
// (unreserved characters kept), shared by the serve client and the kube reflector.
#pragma once

#include <string>
#include <string_view>

namespace muster {

std::string PercentEncode(std::string_view value);

}  // namespace muster
