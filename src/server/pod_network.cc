#include "server/pod_network.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <tuple>

namespace muster::server {
namespace {

// The low 16 bits of `ip` when it is 127.<octet>.x.y.
std::optional<uint32_t> Low16(const std::string& ip, uint8_t octet) {
  uint32_t parts[4] = {0, 0, 0, 0};
  const char* p = ip.data();
  const char* end = ip.data() + ip.size();
  for (int i = 0; i < 4; ++i) {
    auto [next, ec] = std::from_chars(p, end, parts[i]);
    if (ec != std::errc() || parts[i] > 255) return std::nullopt;
    p = next;
    if (i < 3) {
      if (p == end || *p != '.') return std::nullopt;
      ++p;
    }
  }
  if (p != end || parts[0] != 127 || parts[1] != octet) return std::nullopt;
  return parts[2] << 8 | parts[3];
}

bool Selects(const DnsService& service, const DnsPod& pod) {
  if (service.namespace_ != pod.namespace_ || service.selector.empty()) return false;
  for (const auto& [key, value] : service.selector) {
    auto it = pod.labels.find(key);
    if (it == pod.labels.end() || it->second != value) return false;
  }
  return true;
}

// "<base>.<ns>.svc.cluster.local <base>.<ns>.svc <base>.<ns>" and "<base>" itself
// when the viewer is in the same namespace.
void AddForms(std::vector<std::string>& names, const std::string& base, const std::string& ns,
              bool same_namespace) {
  names.push_back(base + "." + ns + ".svc." + kClusterDomain);
  names.push_back(base + "." + ns + ".svc");
  names.push_back(base + "." + ns);
  if (same_namespace) names.push_back(base);
}

std::string Line(const std::string& ip, const std::vector<std::string>& names) {
  std::string line = ip;
  for (const auto& n : names) line += "\t" + n;
  return line + "\n";
}

}  // namespace

uint8_t PodAddressPool::OctetFor(const std::string& tag) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across runs and builds
  for (unsigned char c : tag) h = (h ^ c) * 16777619u;
  return static_cast<uint8_t>(16 + h % 239);
}

std::string PodAddressPool::Allocate() {
  // x.y.0 and x.y.255 look like network and broadcast addresses: skipped.
  auto skip = [](uint32_t c) {
    while ((c & 0xff) == 0 || (c & 0xff) == 0xff) ++c;
    return c;
  };
  uint32_t candidate = skip(1);
  for (uint32_t used : used_) {
    if (used < candidate) continue;
    if (used > candidate) break;
    candidate = skip(candidate + 1);
  }
  if (candidate > 0xfffe) return "";
  used_.insert(candidate);
  return "127." + std::to_string(octet_) + "." + std::to_string(candidate >> 8) + "." +
         std::to_string(candidate & 0xff);
}

bool PodAddressPool::Reserve(const std::string& ip) {
  auto low = Low16(ip, octet_);
  if (!low) return false;
  used_.insert(*low);
  return true;
}

void PodAddressPool::Release(const std::string& ip) {
  if (auto low = Low16(ip, octet_)) used_.erase(*low);
}

std::string HostsFile(const DnsPod& self, const std::vector<DnsPod>& pods,
                      const std::vector<DnsService>& services) {
  // The kubelet's managed header.
  std::string out =
      "# Kubernetes-managed hosts file (muster).\n"
      "127.0.0.1\tlocalhost\n"
      "::1\tlocalhost ip6-localhost ip6-loopback\n"
      "fe00::0\tip6-localnet\n"
      "fe00::0\tip6-mcastprefix\n"
      "fe00::1\tip6-allnodes\n"
      "fe00::2\tip6-allrouters\n";
  if (!self.subdomain.empty()) {
    out += Line(self.ip, {self.hostname + "." + self.subdomain + "." + self.namespace_ + ".svc." +
                              kClusterDomain,
                          self.hostname});
  } else {
    out += Line(self.ip, {self.hostname});
  }

  std::vector<const DnsPod*> sorted;
  for (const auto& p : pods) sorted.push_back(&p);
  std::sort(sorted.begin(), sorted.end(), [](const DnsPod* a, const DnsPod* b) {
    return std::tie(a->namespace_, a->hostname, a->ip) <
           std::tie(b->namespace_, b->hostname, b->ip);
  });
  std::map<std::pair<std::string, std::string>, const DnsService*> by_name;
  for (const auto& s : services) by_name[{s.namespace_, s.name}] = &s;

  for (const DnsPod* p : sorted) {
    if (p->ip.empty() || p->hostname.empty()) continue;
    const bool same = p->namespace_ == self.namespace_;
    std::vector<std::string> names;
    if (!p->subdomain.empty()) {
      auto svc = by_name.find({p->namespace_, p->subdomain});
      bool served =
          p->subdomain_by_controller || (svc != by_name.end() && Selects(*svc->second, *p));
      if (served) AddForms(names, p->hostname + "." + p->subdomain, p->namespace_, same);
    }
    if (p->per_pod_service) AddForms(names, p->hostname, p->namespace_, same);
    if (!names.empty()) out += Line(p->ip, names);
  }

  std::vector<const DnsService*> sorted_services;
  for (const auto& s : services) sorted_services.push_back(&s);
  std::sort(sorted_services.begin(), sorted_services.end(),
            [](const DnsService* a, const DnsService* b) {
              return std::tie(a->namespace_, a->name) < std::tie(b->namespace_, b->name);
            });
  for (const DnsService* s : sorted_services) {
    std::vector<std::string> names;
    AddForms(names, s->name, s->namespace_, s->namespace_ == self.namespace_);
    for (const DnsPod* p : sorted) {
      if (!p->ip.empty() && Selects(*s, *p)) out += Line(p->ip, names);
    }
  }
  return out;
}

}  // namespace muster::server
