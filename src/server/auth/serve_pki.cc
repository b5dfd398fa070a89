#include "server/auth/serve_pki.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <filesystem>
#include <set>

namespace muster::server::auth {
namespace {

constexpr int kCaDays = 3650;
constexpr int kLeafDays = 365;
constexpr int kRenewBeforeDays = 30;

// This machine's addresses (every interface, IPv4 and IPv6 without a zone).
std::set<std::string> LocalAddresses() {
  std::set<std::string> out = {"127.0.0.1", "::1"};
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, buf, sizeof buf);
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<sockaddr_in6*>(a->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&v6->sin6_addr)) continue;  // needs a zone to be used
      inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
    } else {
      continue;
    }
    out.insert(buf);
  }
  freeifaddrs(list);
  return out;
}

bool IsAddress(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

// A pair kept in CERT/KEY files: read when both are there, else nullopt.
std::optional<KeyPair> ReadPair(const std::string& cert, const std::string& key) {
  auto c = ReadFile(cert);
  auto k = ReadFile(key);
  if (!c.ok() || !k.ok() || c->empty() || k->empty()) return std::nullopt;
  return KeyPair{*c, *k};
}

Status WritePair(const KeyPair& pair, const std::string& cert, const std::string& key) {
  if (Status s = WriteFile(key, pair.key_pem, /*secret=*/true); !s.ok()) return s;
  return WriteFile(cert, pair.cert_pem, /*secret=*/false);
}

}  // namespace

Result<ServePki> EnsureServePki(const std::string& data_dir, const std::string& listen_host) {
  namespace fs = std::filesystem;
  ServePki pki;
  pki.dir = (fs::path(data_dir) / "pki").string();
  std::error_code ec;
  fs::create_directories(pki.dir, ec);
  if (ec) return Status(StatusCode::kUnavailable, "cannot create " + pki.dir + ": " + ec.message());
  fs::permissions(pki.dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  const auto path = [&](const char* name) { return (fs::path(pki.dir) / name).string(); };
  pki.ca_cert_file = path("ca.crt");
  pki.server_cert_file = path("serving.crt");
  pki.server_key_file = path("serving.key");

  bool new_ca = false;
  if (auto ca = ReadPair(pki.ca_cert_file, path("ca.key"))) {
    pki.ca = *ca;
  } else {
    auto created = CreateCertificateAuthority("muster-serve-ca", kCaDays);
    if (!created.ok()) return created.status();
    pki.ca = *created;
    if (Status s = WritePair(pki.ca, pki.ca_cert_file, path("ca.key")); !s.ok()) return s;
    new_ca = true;
  }

  // The serving certificate: every name a client on this machine or the network
  // may use for it.
  CertificateSpec serving;
  serving.common_name = "muster-serve";
  serving.server = true;
  serving.days = kLeafDays;
  serving.dns_names = {"localhost"};
  char hostname[256] = {};
  if (gethostname(hostname, sizeof hostname - 1) == 0 && hostname[0] != '\0') {
    serving.dns_names.push_back(hostname);
  }
  std::set<std::string> addresses = LocalAddresses();
  if (!listen_host.empty() && IsAddress(listen_host)) {
    addresses.insert(listen_host);
  } else if (!listen_host.empty() && listen_host != "localhost") {
    serving.dns_names.push_back(listen_host);
  }
  serving.ip_addresses.assign(addresses.begin(), addresses.end());
  auto current = ReadPair(pki.server_cert_file, pki.server_key_file);
  bool covers = current.has_value() && !new_ca;
  for (const auto& name : serving.dns_names) {
    covers = covers && CertificateCovers(current->cert_pem, name, kRenewBeforeDays);
  }
  for (const auto& ip : serving.ip_addresses) {
    covers = covers && CertificateCovers(current->cert_pem, ip, kRenewBeforeDays);
  }
  if (!covers) {
    auto issued = IssueCertificate(pki.ca, serving);
    if (!issued.ok()) return issued.status();
    if (Status s = WritePair(*issued, pki.server_cert_file, pki.server_key_file); !s.ok()) {
      return s;
    }
  }

  // The admin's client certificate: renewed with a new CA or before it expires.
  auto admin = ReadPair(path("admin.crt"), path("admin.key"));
  CertificateSpec admin_spec;
  admin_spec.common_name = kAdminUser;
  admin_spec.organizations = {"system:masters"};
  admin_spec.days = kLeafDays;
  if (!admin || new_ca || !CertificateValidFor(admin->cert_pem, kRenewBeforeDays)) {
    auto issued = IssueCertificate(pki.ca, admin_spec);
    if (!issued.ok()) return issued.status();
    if (Status s = WritePair(*issued, path("admin.crt"), path("admin.key")); !s.ok()) return s;
    admin = *issued;
  }
  pki.admin = *admin;
  return pki;
}

std::string AdminKubeconfig(const ServePki& pki, const std::string& server_url) {
  return "apiVersion: v1\n"
         "kind: Config\n"
         "clusters:\n"
         "- name: muster\n"
         "  cluster:\n"
         "    server: " +
         server_url +
         "\n"
         "    certificate-authority-data: " +
         Base64(pki.ca.cert_pem) +
         "\n"
         "users:\n"
         "- name: " +
         kAdminUser +
         "\n"
         "  user:\n"
         "    client-certificate-data: " +
         Base64(pki.admin.cert_pem) +
         "\n"
         "    client-key-data: " +
         Base64(pki.admin.key_pem) +
         "\n"
         "contexts:\n"
         "- name: muster\n"
         "  context:\n"
         "    cluster: muster\n"
         "    user: " +
         kAdminUser +
         "\n"
         "current-context: muster\n";
}

Result<std::string> WriteAdminKubeconfig(const std::string& data_dir, const ServePki& pki,
                                         const std::string& server_url) {
  const std::string path = (std::filesystem::path(data_dir) / "admin.kubeconfig").string();
  if (Status s = WriteFile(path, AdminKubeconfig(pki, server_url), /*secret=*/true); !s.ok()) {
    return s;
  }
  return path;
}

}  // namespace muster::server::auth
