// Standard base64 (RFC 4648 section 4), as Kubernetes uses it for Secret data,
// kubeconfig certificates and admission patches.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace muster {

// Padded output.
std::string EncodeBase64(std::string_view bytes);
// Padding optional, whitespace ignored; kInvalidArgument on bad input.
Result<std::string> DecodeBase64(std::string_view encoded);

}  // namespace muster
