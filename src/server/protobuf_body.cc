#include "server/protobuf_body.h"

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/base64.h"
#include "server/request_body.h"

namespace muster::server {
namespace {

using nlohmann::json;

// The protobuf wire format: a field is a varint key (number << 3 | wire type) and a
// value; wire type 0 is a varint, 1 eight bytes, 2 length-delimited, 5 four bytes.
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool done() const { return pos_ >= data_.size(); }

  bool Varint(uint64_t& out) {
    out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      out |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool Bytes(std::string_view& out) {
    uint64_t n = 0;
    if (!Varint(n) || n > data_.size() - pos_) return false;
    out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool Skip(int wire_type) {
    uint64_t ignored = 0;
    std::string_view bytes;
    switch (wire_type) {
      case 0:
        return Varint(ignored);
      case 1:
        return Advance(8);
      case 2:
        return Bytes(bytes);
      case 5:
        return Advance(4);
      default:
        return false;  // groups (3, 4) are not used by Kubernetes
    }
  }

 private:
  bool Advance(size_t n) {
    if (n > data_.size() - pos_) return false;
    pos_ += n;
    return true;
  }
  std::string_view data_;
  size_t pos_ = 0;
};

// kBytesMap: map<string, bytes>, its values base64 in JSON (Secret data);
// kQuantityMap: map<string, Quantity> (a message whose field 1 is the string);
// kIntOrString: {type, intVal, strVal} as a JSON number or string.
enum class Type {
  kOptionalInt,  // a pointer integer (*int32, *int64): set, so zero is kept
  kString,
  kMessage,
  kStringMap,
  kBytesMap,
  kQuantityMap,
  kVarint,
  kBool,
  kIntOrString
};

struct Schema;
struct Field {
  int number;
  const char* name;
  Type type;
  bool repeated = false;
  const Schema* message = nullptr;
};
struct Schema {
  std::vector<Field> fields;
  // A field outside `fields` holding a value (not Go's zero: 0, "", an empty or
  // all-zero message) refuses the body (415) instead of dropping the value: the
  // kinds whose typed clients send more than `kubectl create` does.
  bool strict = false;
};

// Field numbers from the upstream generated.proto files (k8s.io/api, apimachinery).
const Schema kObjectMeta{{{1, "name", Type::kString},
                          {2, "generateName", Type::kString},
                          {3, "namespace", Type::kString},
                          {11, "labels", Type::kStringMap},
                          {12, "annotations", Type::kStringMap}}};
const Schema kPolicyRule{{{1, "verbs", Type::kString, true},
                          {2, "apiGroups", Type::kString, true},
                          {3, "resources", Type::kString, true},
                          {4, "resourceNames", Type::kString, true},
                          {5, "nonResourceURLs", Type::kString, true}}};
const Schema kRole{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                    {2, "rules", Type::kMessage, true, &kPolicyRule}}};
const Schema kSubject{{{1, "kind", Type::kString},
                       {2, "apiGroup", Type::kString},
                       {3, "name", Type::kString},
                       {4, "namespace", Type::kString}}};
const Schema kRoleRef{
    {{1, "apiGroup", Type::kString}, {2, "kind", Type::kString}, {3, "name", Type::kString}}};
const Schema kBinding{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                       {2, "subjects", Type::kMessage, true, &kSubject},
                       {3, "roleRef", Type::kMessage, false, &kRoleRef}}};
const Schema kNamespaceSpec{{{1, "finalizers", Type::kString, true}}};
const Schema kNamespace{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                         {2, "spec", Type::kMessage, false, &kNamespaceSpec}}};
// The core kinds kubectl's create commands send (configmap, secret, quota,
// serviceaccount, service).
const Schema kConfigMap{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                         {2, "data", Type::kStringMap},
                         {3, "binaryData", Type::kBytesMap},
                         {4, "immutable", Type::kBool}}};
const Schema kSecret{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                      {2, "data", Type::kBytesMap},
                      {3, "type", Type::kString},
                      {4, "stringData", Type::kStringMap},
                      {5, "immutable", Type::kBool}}};
const Schema kQuotaSpec{{{1, "hard", Type::kQuantityMap}, {2, "scopes", Type::kString, true}}};
const Schema kResourceQuota{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                             {2, "spec", Type::kMessage, false, &kQuotaSpec}}};
const Schema kObjectReference{{{3, "name", Type::kString}}};
const Schema kServiceAccount{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                              {2, "secrets", Type::kMessage, true, &kObjectReference},
                              {3, "imagePullSecrets", Type::kMessage, true, &kObjectReference},
                              {4, "automountServiceAccountToken", Type::kBool}}};
const Schema kServicePort{{{1, "name", Type::kString},
                           {2, "protocol", Type::kString},
                           {3, "port", Type::kVarint},
                           {4, "targetPort", Type::kIntOrString},
                           {5, "nodePort", Type::kVarint}}};
const Schema kServiceSpec{{{1, "ports", Type::kMessage, true, &kServicePort},
                           {2, "selector", Type::kStringMap},
                           {3, "clusterIP", Type::kString},
                           {4, "type", Type::kString},
                           {5, "externalIPs", Type::kString, true},
                           {7, "sessionAffinity", Type::kString},
                           {10, "externalName", Type::kString}}};
const Schema kService{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                       {2, "spec", Type::kMessage, false, &kServiceSpec}}};
const Schema kResourceAttributes{{{1, "namespace", Type::kString},
                                  {2, "verb", Type::kString},
                                  {3, "group", Type::kString},
                                  {4, "version", Type::kString},
                                  {5, "resource", Type::kString},
                                  {6, "subresource", Type::kString},
                                  {7, "name", Type::kString}}};
const Schema kNonResourceAttributes{{{1, "path", Type::kString}, {2, "verb", Type::kString}}};
const Schema kAccessReviewSpec{
    {{1, "resourceAttributes", Type::kMessage, false, &kResourceAttributes},
     {2, "nonResourceAttributes", Type::kMessage, false, &kNonResourceAttributes}}};
const Schema kAccessReview{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                            {2, "spec", Type::kMessage, false, &kAccessReviewSpec}}};
const Schema kRulesReviewSpec{{{1, "namespace", Type::kString}}};
const Schema kRulesReview{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                           {2, "spec", Type::kMessage, false, &kRulesReviewSpec}}};
const Schema kTypeMeta{{{1, "apiVersion", Type::kString}, {2, "kind", Type::kString}}};
// batch/v1 Job as `kubectl create job NAME --image=IMG -- CMD` sends it (and a typed
// client's common fields): a container's name, image, command, args, workingDir, env
// values, resources; the pod's restart policy, node selector, service account,
// scheduler, priority class; the Job's counts, limits, mode and suspend.
const Schema kEnvVar{{{1, "name", Type::kString}, {2, "value", Type::kString}}, true};
const Schema kResources{{{1, "limits", Type::kQuantityMap}, {2, "requests", Type::kQuantityMap}},
                        true};
const Schema kContainer{{{1, "name", Type::kString},
                         {2, "image", Type::kString},
                         {3, "command", Type::kString, true},
                         {4, "args", Type::kString, true},
                         {5, "workingDir", Type::kString},
                         {7, "env", Type::kMessage, true, &kEnvVar},
                         {8, "resources", Type::kMessage, false, &kResources},
                         {13, "terminationMessagePath", Type::kString},
                         {14, "imagePullPolicy", Type::kString},
                         {20, "terminationMessagePolicy", Type::kString}},
                        true};
const Schema kPodSpec{{{2, "containers", Type::kMessage, true, &kContainer},
                       {3, "restartPolicy", Type::kString},
                       {4, "terminationGracePeriodSeconds", Type::kOptionalInt},
                       {6, "dnsPolicy", Type::kString},
                       {7, "nodeSelector", Type::kStringMap},
                       {8, "serviceAccountName", Type::kString},
                       {19, "schedulerName", Type::kString},
                       {24, "priorityClassName", Type::kString}},
                      true};
const Schema kPodTemplateSpec{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                               {2, "spec", Type::kMessage, false, &kPodSpec}},
                              true};
const Schema kJobSpec{{{1, "parallelism", Type::kOptionalInt},
                       {2, "completions", Type::kOptionalInt},
                       {3, "activeDeadlineSeconds", Type::kOptionalInt},
                       {6, "template", Type::kMessage, false, &kPodTemplateSpec},
                       {7, "backoffLimit", Type::kOptionalInt},
                       {8, "ttlSecondsAfterFinished", Type::kOptionalInt},
                       {9, "completionMode", Type::kString},
                       {10, "suspend", Type::kBool}},
                      true};
const Schema kIgnored{};  // read past: a create sets no status
const Schema kJob{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                   {2, "spec", Type::kMessage, false, &kJobSpec},
                   {3, "status", Type::kMessage, false, &kIgnored}},
                  true};

// batch/v1 CronJob as `kubectl create cronjob` sends it: its schedule and policies,
// and a Job template as above.
const Schema kJobTemplateSpec{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                               {2, "spec", Type::kMessage, false, &kJobSpec}},
                              true};
const Schema kCronJobSpec{{{1, "schedule", Type::kString},
                           {2, "startingDeadlineSeconds", Type::kOptionalInt},
                           {3, "concurrencyPolicy", Type::kString},
                           {4, "suspend", Type::kBool},
                           {5, "jobTemplate", Type::kMessage, false, &kJobTemplateSpec},
                           {6, "successfulJobsHistoryLimit", Type::kOptionalInt},
                           {7, "failedJobsHistoryLimit", Type::kOptionalInt},
                           {8, "timeZone", Type::kString}},
                          true};
const Schema kCronJob{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                       {2, "spec", Type::kMessage, false, &kCronJobSpec},
                       {3, "status", Type::kMessage, false, &kIgnored}},
                      true};

// scheduling.k8s.io/v1 PriorityClass, as `kubectl create priorityclass` sends it.
const Schema kPriorityClass{{{1, "metadata", Type::kMessage, false, &kObjectMeta},
                             {2, "value", Type::kOptionalInt},  // 0 is a value
                             {3, "globalDefault", Type::kBool},
                             {4, "description", Type::kString},
                             {5, "preemptionPolicy", Type::kString}}};

const Schema* SchemaOf(const std::string& api_version, const std::string& kind) {
  if (api_version == "v1") {
    if (kind == "Namespace") return &kNamespace;
    if (kind == "ConfigMap") return &kConfigMap;
    if (kind == "Secret") return &kSecret;
    if (kind == "ResourceQuota") return &kResourceQuota;
    if (kind == "ServiceAccount") return &kServiceAccount;
    if (kind == "Service") return &kService;
  }
  if (api_version == "rbac.authorization.k8s.io/v1") {
    if (kind == "Role" || kind == "ClusterRole") return &kRole;
    if (kind == "RoleBinding" || kind == "ClusterRoleBinding") return &kBinding;
  }
  if (api_version == "scheduling.k8s.io/v1" && kind == "PriorityClass") return &kPriorityClass;
  if (api_version == "batch/v1" && kind == "Job") return &kJob;
  if (api_version == "batch/v1" && kind == "CronJob") return &kCronJob;
  if (api_version == "authorization.k8s.io/v1") {
    if (kind == "SelfSubjectAccessReview") return &kAccessReview;
    if (kind == "SelfSubjectRulesReview") return &kRulesReview;
  }
  return nullptr;
}

bool Decode(std::string_view bytes, const Schema& schema, json& out,
            std::string* unsupported = nullptr);

// The string in field 1 of a message (resource.Quantity).
bool DecodeQuantity(std::string_view bytes, std::string& out) {
  Reader r(bytes);
  while (!r.done()) {
    uint64_t tag = 0;
    std::string_view v;
    if (!r.Varint(tag)) return false;
    if (tag == ((1 << 3) | 2)) {
      if (!r.Bytes(v)) return false;
      out = std::string(v);
    } else if (!r.Skip(static_cast<int>(tag & 7))) {
      return false;
    }
  }
  return true;
}

// intstr.IntOrString: type 1 (0 int, 1 string), intVal 2, strVal 3.
bool DecodeIntOrString(std::string_view bytes, json& out) {
  Reader r(bytes);
  uint64_t type = 0, int_val = 0;
  std::string str_val;
  while (!r.done()) {
    uint64_t tag = 0;
    std::string_view v;
    if (!r.Varint(tag)) return false;
    const uint64_t field = tag >> 3;
    if ((field == 1 || field == 2) && (tag & 7) == 0) {
      if (!r.Varint(field == 1 ? type : int_val)) return false;
    } else if (field == 3 && (tag & 7) == 2) {
      if (!r.Bytes(v)) return false;
      str_val = std::string(v);
    } else if (!r.Skip(static_cast<int>(tag & 7))) {
      return false;
    }
  }
  out = type == 1 ? json(str_val) : json(static_cast<int32_t>(int_val));
  return true;
}

bool DecodeMapEntry(std::string_view bytes, json& map, Type type = Type::kStringMap) {
  Reader r(bytes);
  std::string key, value;
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(tag)) return false;
    std::string_view v;
    if ((tag >> 3) <= 2 && (tag & 7) == 2) {
      if (!r.Bytes(v)) return false;
      ((tag >> 3) == 1 ? key : value) = std::string(v);
    } else if (!r.Skip(static_cast<int>(tag & 7))) {
      return false;
    }
  }
  if (type == Type::kBytesMap) {
    map[key] = EncodeBase64(value);
  } else if (type == Type::kQuantityMap) {
    std::string quantity;
    if (!DecodeQuantity(value, quantity)) return false;
    map[key] = quantity;
  } else {
    map[key] = value;
  }
  return true;
}

bool DecodeField(Reader& r, const Field& f, int wire_type, json& out, std::string* unsupported) {
  if (f.type == Type::kOptionalInt) {
    uint64_t v = 0;
    if (wire_type != 0 || !r.Varint(v)) return false;
    out[f.name] = static_cast<int64_t>(v);
    return true;
  }
  if (f.type == Type::kVarint || f.type == Type::kBool) {
    uint64_t v = 0;
    if (wire_type != 0 || !r.Varint(v)) return false;
    if (f.type == Type::kBool) {
      out[f.name] = v != 0;
    } else if (v != 0) {
      // Go writes every int32 field, zero included; JSON's omitempty leaves zeros out
      // (a Service port's nodePort 0 is "none").
      out[f.name] = static_cast<int32_t>(v);
    }
    return true;
  }
  std::string_view bytes;
  if (wire_type != 2 || !r.Bytes(bytes)) return false;
  json value;
  switch (f.type) {
    case Type::kString:
      // Go writes every string field; JSON's omitempty leaves "" out (an empty
      // imagePullPolicy is "unset", not an invalid value). A list keeps its "".
      if (bytes.empty() && !f.repeated) return true;
      value = std::string(bytes);
      break;
    case Type::kMessage:
      value = json::object();
      if (!Decode(bytes, *f.message, value, unsupported)) return false;
      break;
    case Type::kStringMap:
    case Type::kBytesMap:
    case Type::kQuantityMap:
      if (!out.contains(f.name)) out[f.name] = json::object();
      return DecodeMapEntry(bytes, out[f.name], f.type);
    case Type::kIntOrString:
      if (!DecodeIntOrString(bytes, value)) return false;
      break;
    case Type::kVarint:
    case Type::kBool:
    case Type::kOptionalInt:
      break;
  }
  if (f.repeated) {
    if (!out.contains(f.name)) out[f.name] = json::array();
    out[f.name].push_back(std::move(value));
  } else {
    out[f.name] = std::move(value);
  }
  return true;
}

// Whether the bytes of a message hold only Go's zero values (0, "", empty or
// all-zero messages): what Go's marshalling writes for fields nobody set.
bool AllZero(std::string_view bytes, int depth = 0) {
  if (depth > 32) return false;
  Reader r(bytes);
  while (!r.done()) {
    uint64_t tag = 0, v = 0;
    std::string_view nested;
    if (!r.Varint(tag)) return false;
    switch (tag & 7) {
      case 0:
        if (!r.Varint(v) || v != 0) return false;
        break;
      case 2:
        if (!r.Bytes(nested) || (!nested.empty() && !AllZero(nested, depth + 1))) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

bool Decode(std::string_view bytes, const Schema& schema, json& out, std::string* unsupported) {
  Reader r(bytes);
  while (!r.done()) {
    uint64_t tag = 0;
    if (!r.Varint(tag)) return false;
    const int wire_type = static_cast<int>(tag & 7);
    const Field* field = nullptr;
    for (const Field& f : schema.fields) {
      if (static_cast<uint64_t>(f.number) == (tag >> 3)) field = &f;
    }
    if (field != nullptr) {
      if (!DecodeField(r, *field, wire_type, out, unsupported)) return false;
      continue;
    }
    if (!schema.strict || wire_type != 2) {
      uint64_t v = 0;
      if (schema.strict && wire_type == 0) {
        if (!r.Varint(v)) return false;
      } else if (!r.Skip(wire_type)) {
        return false;
      }
      if (v != 0 && unsupported != nullptr && unsupported->empty()) {
        *unsupported = "field " + std::to_string(tag >> 3);
      }
      continue;
    }
    std::string_view value;
    if (!r.Bytes(value)) return false;
    if (!value.empty() && !AllZero(value) && unsupported != nullptr && unsupported->empty()) {
      *unsupported = "field " + std::to_string(tag >> 3);
    }
  }
  return true;
}

}  // namespace

std::optional<Result<json>> DecodeProtobufObject(const std::string& body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (body.compare(0, kMagic.size(), kMagic) != 0) {
    return Result<json>(InvalidArgument("the protobuf body lacks the k8s prefix"));
  }
  // runtime.Unknown: typeMeta = 1, raw = 2 (contentEncoding, contentType ignored).
  const Schema unknown{
      {{1, "typeMeta", Type::kMessage, false, &kTypeMeta}, {2, "raw", Type::kString}}};
  json envelope = json::object();
  if (!Decode(std::string_view(body).substr(kMagic.size()), unknown, envelope)) {
    return Result<json>(InvalidArgument("the protobuf body is not a runtime.Unknown"));
  }
  const json type = envelope.value("typeMeta", json::object());
  const std::string api_version = type.value("apiVersion", "");
  const std::string kind = type.value("kind", "");
  const Schema* schema = SchemaOf(api_version, kind);
  if (schema == nullptr) return std::nullopt;
  json object = json::object();
  const std::string raw = envelope.value("raw", "");
  std::string unsupported;
  if (!Decode(raw, *schema, object, &unsupported)) {
    return Result<json>(InvalidArgument("the protobuf body is not a valid " + kind));
  }
  // A value this decoder would drop: answered as a kind it does not know (415), so the
  // client sends JSON, rather than stored without it.
  if (!unsupported.empty()) return std::nullopt;
  object["apiVersion"] = api_version;
  object["kind"] = kind;
  try {
    // Strings must be UTF-8, as in a JSON body: checked here, not at the first dump.
    (void)object.dump();
  } catch (const json::exception&) {
    return Result<json>(InvalidArgument("the protobuf body holds a string that is not UTF-8"));
  }
  return Result<json>(std::move(object));
}

std::optional<ApiError> ConvertProtobufBody(std::string& content_type, std::string& body) {
  if (body.empty() || MediaType(content_type) != kProtobufMediaType) return std::nullopt;
  auto decoded = DecodeProtobufObject(body);
  if (!decoded) return std::nullopt;
  if (!decoded->ok()) return BadRequest(decoded->status().message());
  body = (*decoded)->dump();
  content_type = "application/json";
  return std::nullopt;
}

}  // namespace muster::server
