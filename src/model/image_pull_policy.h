// A container's imagePullPolicy when its manifest sets none, as kube-apiserver's
// SetDefaults_Container decides it: Always for an image without a tag or tagged
// `:latest`, IfNotPresent for any other tag or an image pinned by digest (@sha256:...).
// The tag is what follows the last ':' of the last path element ("host:5000/a/b" has
// none). Serve writes it into Pod objects; the podman runtime pulls by it.
#pragma once

#include <string>

namespace muster::model {

inline const char* DefaultImagePullPolicy(const std::string& image) {
  if (image.find('@') != std::string::npos) return "IfNotPresent";
  const size_t slash = image.rfind('/');
  const size_t colon = image.rfind(':');
  if (colon == std::string::npos || (slash != std::string::npos && colon < slash)) return "Always";
  return image.compare(colon + 1, std::string::npos, "latest") == 0 ? "Always" : "IfNotPresent";
}

}  // namespace muster::model
