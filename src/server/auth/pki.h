// The certificates muster serve makes for itself, like kubeadm does for a cluster:
// a CA in DATA/pki (when the operator gives none), the serving certificate it
// signs (SANs: localhost, the loopback addresses, this host's name and the listen
// address), and an admin client certificate for the kubeconfig written to
// DATA/admin.kubeconfig. ECDSA P-256 keys; private keys are written 0600.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server::auth {

struct CertificateSpec {
  std::string common_name;
  std::vector<std::string> organizations;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  bool server = false;  // extendedKeyUsage serverAuth (else clientAuth)
  int days = 365;
};

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed CA certificate and its key.
Result<KeyPair> CreateCertificateAuthority(const std::string& common_name, int days);
// A certificate for `spec`, signed by `ca`.
Result<KeyPair> IssueCertificate(const KeyPair& ca, const CertificateSpec& spec);
// Whether `cert_pem` (a serving certificate) names `host` (a DNS name or an IP) and
// is valid for at least `days` more days.
bool CertificateCovers(const std::string& cert_pem, const std::string& host, int days);
// Whether `cert_pem` parses and is valid for at least `days` more days.
bool CertificateValidFor(const std::string& cert_pem, int days);

// Reads / writes a file whole; private keys get mode 0600 (written atomically).
Result<std::string> ReadFile(const std::string& path);
Status WriteFile(const std::string& path, const std::string& content, bool secret);

// Base64 (standard alphabet, padded): kubeconfig's *-data fields.
std::string Base64(const std::string& bytes);

}  // namespace muster::server::auth
