// A batch/v1 Job in Kubernetes' protobuf encoding, as `kubectl create job NAME
// --image=IMG -- CMD` sends it: decoded to the JSON a manifest would hold (Go's zero
// values left out, a pointer integer's 0 kept), and a body with a value the decoder
// would drop refused (the client then sends JSON) rather than stored without it.
#include <gtest/gtest.h>

#include <string>

#include "server/protobuf_body.h"

namespace muster::server {
namespace {

using nlohmann::json;

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
// A length-delimited field (a string or a message).
std::string Bytes(int number, const std::string& value) {
  return Varint(static_cast<uint64_t>(number) << 3 | 2) + Varint(value.size()) + value;
}
std::string Int(int number, uint64_t value) {
  return Varint(static_cast<uint64_t>(number) << 3) + Varint(value);
}
std::string Envelope(const std::string& raw) {
  const std::string type = Bytes(1, "batch/v1") + Bytes(2, "Job");
  return std::string("k8s\0", 4) + Bytes(1, type) + Bytes(2, raw);
}
// kubectl create job hello --image=busybox -- echo hi, with the zero values Go writes
// (empty strings, false, empty messages).
std::string PbContainer(const std::string& extra = "") {
  return Bytes(1, "hello") + Bytes(2, "busybox") + Bytes(3, "echo") + Bytes(3, "hi") +
         Bytes(5, "") + Bytes(8, "") + Bytes(13, "") + Bytes(14, "") + Int(16, 0) + extra;
}
std::string PbJob(const std::string& pod_spec_extra = "", const std::string& job_spec_extra = "",
                  const std::string& container_extra = "") {
  const std::string pod_spec = Bytes(2, PbContainer(container_extra)) + Bytes(3, "Never") +
                               Bytes(6, "") + Int(11, 0) + pod_spec_extra;
  const std::string tmpl = Bytes(1, Bytes(8, Int(1, 0))) + Bytes(2, pod_spec);
  const std::string spec = Bytes(6, tmpl) + job_spec_extra;
  const std::string status = Int(4, 0) + Int(5, 0) + Int(6, 0);
  return Envelope(Bytes(1, Bytes(1, "hello")) + Bytes(2, spec) + Bytes(3, status));
}

TEST(ProtobufJobTest, KubectlCreateJobDecodesToItsManifest) {
  auto decoded = DecodeProtobufObject(PbJob());
  ASSERT_TRUE(decoded.has_value());
  ASSERT_TRUE(decoded->ok()) << decoded->status().ToString();
  const json& job = **decoded;
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  EXPECT_EQ(job["metadata"]["name"], "hello");
  const json& pod = job["spec"]["template"]["spec"];
  EXPECT_EQ(pod["restartPolicy"], "Never");
  EXPECT_FALSE(pod.contains("dnsPolicy"));  // "" is unset
  ASSERT_EQ(pod["containers"].size(), 1u);
  const json& c = pod["containers"][0];
  EXPECT_EQ(c["name"], "hello");
  EXPECT_EQ(c["image"], "busybox");
  EXPECT_EQ(c["command"], json({"echo", "hi"}));
  EXPECT_FALSE(c.contains("imagePullPolicy"));
  EXPECT_FALSE(c.contains("workingDir"));
}

TEST(ProtobufJobTest, APointerIntegersZeroIsKept) {
  // backoffLimit: 0 (no retries) and parallelism 3.
  auto decoded = DecodeProtobufObject(PbJob("", Int(7, 0) + Int(1, 3)));
  ASSERT_TRUE(decoded.has_value() && decoded->ok());
  EXPECT_EQ((**decoded)["spec"]["backoffLimit"], 0);
  EXPECT_EQ((**decoded)["spec"]["parallelism"], 3);
}

TEST(ProtobufJobTest, AValueTheDecoderWouldDropRefusesTheBody) {
  // hostNetwork: true (PodSpec field 11), a container's livenessProbe (field 10): not
  // decoded, so not accepted in protobuf.
  EXPECT_FALSE(DecodeProtobufObject(PbJob(Int(11, 1))).has_value());
  EXPECT_FALSE(DecodeProtobufObject(PbJob("", "", Bytes(10, Bytes(4, Int(1, 5))))).has_value());
  // A malformed body is a 400, not a refusal by kind.
  std::string cut = PbJob();
  cut.resize(cut.size() - 3);
  auto bad = DecodeProtobufObject(cut);
  ASSERT_TRUE(bad.has_value());
  EXPECT_FALSE(bad->ok());
}

}  // namespace
}  // namespace muster::server
