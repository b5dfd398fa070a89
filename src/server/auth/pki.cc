#include "server/auth/pki.h"

#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>

namespace muster::server::auth {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

Status Error(const std::string& what) {
  const unsigned long e = ERR_get_error();
  char buf[256] = "unknown error";
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return Internal("certificate: " + what + ": " + buf);
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

Result<CertPtr> ParseCert(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Error("parse certificate");
  return cert;
}

Result<KeyPtr> ParseKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Error("parse private key");
  return key;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// Builds and signs a certificate for `key`; `issuer`/`issuer_key` null: self-signed.
Result<KeyPair> Build(const CertificateSpec& spec, bool is_ca, X509* issuer, EVP_PKEY* issuer_key) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return Error("generate key");
  CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  {
    std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(BN_new());
    BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
    BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  }
  // Valid from an hour ago: clocks of client machines drift.
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(spec.days) * 86400);
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& o : spec.organizations) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(cert.get(), key.get());
  X509* signer = issuer ? issuer : cert.get();
  bool ok = true;
  if (is_ca) {
    ok = AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExtension(cert.get(), signer, NID_key_usage,
                      "critical,digitalSignature,keyCertSign,cRLSign");
  } else {
    ok = AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE") &&
         AddExtension(cert.get(), signer, NID_key_usage,
                      "critical,digitalSignature,keyEncipherment") &&
         AddExtension(cert.get(), signer, NID_ext_key_usage,
                      spec.server ? "serverAuth" : "clientAuth");
    std::string san;
    for (const auto& d : spec.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
    for (const auto& ip : spec.ip_addresses) san += (san.empty() ? "IP:" : ",IP:") + ip;
    if (ok && !san.empty()) ok = AddExtension(cert.get(), signer, NID_subject_alt_name, san);
  }
  ok = ok && AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (issuer) ok = ok && AddExtension(cert.get(), signer, NID_authority_key_identifier, "keyid");
  if (!ok) return Error("extensions");
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key.get(), EVP_sha256()) == 0) {
    return Error("sign");
  }
  BioPtr cert_bio(BIO_new(BIO_s_mem())), key_bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cert_bio.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) !=
          1) {
    return Error("write PEM");
  }
  return KeyPair{BioText(cert_bio.get()), BioText(key_bio.get())};
}

}  // namespace

Result<KeyPair> CreateCertificateAuthority(const std::string& common_name, int days) {
  CertificateSpec spec;
  spec.common_name = common_name;
  spec.days = days;
  return Build(spec, true, nullptr, nullptr);
}

Result<KeyPair> IssueCertificate(const KeyPair& ca, const CertificateSpec& spec) {
  auto cert = ParseCert(ca.cert_pem);
  if (!cert.ok()) return cert.status();
  auto key = ParseKey(ca.key_pem);
  if (!key.ok()) return key.status();
  return Build(spec, false, cert->get(), key->get());
}

bool CertificateValidFor(const std::string& cert_pem, int days) {
  auto cert = ParseCert(cert_pem);
  if (!cert.ok()) return false;
  time_t until = std::time(nullptr) + static_cast<time_t>(days) * 86400;
  return X509_cmp_time(X509_get0_notAfter(cert->get()), &until) > 0;
}

bool CertificateCovers(const std::string& cert_pem, const std::string& host, int days) {
  if (!CertificateValidFor(cert_pem, days)) return false;
  auto cert = ParseCert(cert_pem);
  if (!cert.ok()) return false;
  if (X509_check_ip_asc(cert->get(), host.c_str(), 0) == 1) return true;
  return X509_check_host(cert->get(), host.c_str(), host.size(), 0, nullptr) == 1;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Status WriteFile(const std::string& path, const std::string& content, bool secret) {
  const std::string tmp = path + ".tmp";
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, secret ? 0600 : 0644);
  if (fd < 0) return Status(StatusCode::kUnavailable, "cannot write " + tmp);
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0) {
      ::close(fd);
      return Status(StatusCode::kUnavailable, "cannot write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status(StatusCode::kUnavailable, "cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

std::string Base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace muster::server::auth
