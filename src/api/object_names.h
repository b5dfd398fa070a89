// Name, label and annotation rules of Kubernetes' apimachinery validation
// (k8s.io/apimachinery/pkg/util/validation), with upstream's messages, so a
// rejection reads exactly as kube-apiserver's: what is wrong and what is allowed.
// Each check returns the problems found (""-free list; empty when valid).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace muster::api {

// How a kind's metadata.name is validated upstream.
enum class NameRule {
  kDnsSubdomain,  // most kinds: lowercase RFC 1123 subdomain, at most 253 characters
  kDnsLabel,      // Namespace: lowercase RFC 1123 label, at most 63 characters
  kPathSegment,   // RBAC kinds: anything but "." and "..", without '/' or '%'
};

std::vector<std::string> IsDns1123Subdomain(std::string_view value);
std::vector<std::string> IsDns1123Label(std::string_view value);
std::vector<std::string> IsPathSegmentName(std::string_view value);
std::vector<std::string> ValidateName(std::string_view name, NameRule rule);
// A label or annotation key: [prefix/]name, the prefix a DNS subdomain.
std::vector<std::string> IsQualifiedName(std::string_view value);
// A label value: empty, or at most 63 alphanumerics, '-', '_', '.' starting and
// ending alphanumeric.
std::vector<std::string> IsValidLabelValue(std::string_view value);

// Upstream's bound on all annotations of one object together (keys and values).
inline constexpr size_t kTotalAnnotationSizeLimit = size_t{256} * 1024;

}  // namespace muster::api
