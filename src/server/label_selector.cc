#include "server/label_selector.h"

#include <algorithm>
#include <cctype>

namespace muster::server {
namespace {

using Op = Requirement::Op;

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

// A small cursor over the selector text; every method skips leading blanks.
class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}
  void SkipSpace() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ >= s_.size();
  }
  char Peek() {
    SkipSpace();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool Consume(std::string_view tok) {
    SkipSpace();
    if (s_.substr(pos_, tok.size()) == tok) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }
  // A key or value: anything up to a separator or operator character.
  std::string Word() {
    SkipSpace();
    size_t start = pos_;
    while (pos_ < s_.size() && !IsSpace(s_[pos_]) &&
           std::string_view(",=!()").find(s_[pos_]) == std::string_view::npos) {
      ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }
  // "in" / "notin" must be followed by a blank or "(" to be keywords.
  bool Keyword(std::string_view kw) {
    SkipSpace();
    if (s_.substr(pos_, kw.size()) != kw) return false;
    size_t after = pos_ + kw.size();
    if (after < s_.size() && !IsSpace(s_[after]) && s_[after] != '(') return false;
    pos_ = after;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

Status Invalid(std::string_view text, const Lexer& lex, const std::string& what) {
  return InvalidArgument("unable to parse selector \"" + std::string(text) + "\" at " +
                         std::to_string(lex.pos()) + ": " + what);
}

bool ValidKey(const std::string& key) {
  if (key.empty() || key.size() > 316) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == '/';
  });
}

Result<std::vector<Requirement>> ParseTerms(std::string_view text, bool allow_sets) {
  std::vector<Requirement> out;
  Lexer lex(text);
  if (lex.AtEnd()) return out;
  while (true) {
    Requirement r;
    bool negated = lex.Consume("!");
    r.key = lex.Word();
    if (!ValidKey(r.key)) return Invalid(text, lex, "expected a key");
    if (negated) {
      if (!allow_sets) return Invalid(text, lex, "'!' is not allowed here");
      r.op = Op::kDoesNotExist;
    } else if (lex.Consume("==") || lex.Consume("=")) {
      r.op = Op::kEquals;
    } else if (lex.Consume("!=")) {
      r.op = Op::kNotEquals;
    } else if (allow_sets && lex.Keyword("notin")) {
      r.op = Op::kNotIn;
    } else if (allow_sets && lex.Keyword("in")) {
      r.op = Op::kIn;
    } else if (allow_sets) {
      r.op = Op::kExists;
    } else {
      return Invalid(text, lex, "expected =, == or !=");
    }
    if (r.op == Op::kEquals || r.op == Op::kNotEquals) {
      r.values.push_back(lex.Word());
    } else if (r.op == Op::kIn || r.op == Op::kNotIn) {
      if (!lex.Consume("(")) return Invalid(text, lex, "expected ( after in/notin");
      while (true) {
        r.values.push_back(lex.Word());
        if (lex.Consume(")")) break;
        if (!lex.Consume(",")) return Invalid(text, lex, "expected , or ) in a value set");
      }
      std::sort(r.values.begin(), r.values.end());
    }
    out.push_back(std::move(r));
    if (lex.AtEnd()) break;
    if (!lex.Consume(",")) return Invalid(text, lex, "expected ,");
  }
  return out;
}

bool MatchOne(const Requirement& r, bool present, const std::string& value) {
  switch (r.op) {
    case Op::kExists:
      return present;
    case Op::kDoesNotExist:
      return !present;
    case Op::kEquals:
      return present && value == r.values[0];
    case Op::kNotEquals:
      return !present || value != r.values[0];
    case Op::kIn:
      return present && std::binary_search(r.values.begin(), r.values.end(), value);
    case Op::kNotIn:
      return !present || !std::binary_search(r.values.begin(), r.values.end(), value);
  }
  return false;
}

}  // namespace

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  auto terms = ParseTerms(text, /*allow_sets=*/true);
  if (!terms.ok()) return terms.status();
  LabelSelector s;
  s.requirements_ = std::move(*terms);
  return s;
}

Result<LabelSelector> LabelSelector::FromObject(const nlohmann::json& selector) {
  if (!selector.is_object()) return InvalidArgument("a label selector must be an object");
  LabelSelector s;
  if (auto labels = selector.find("matchLabels"); labels != selector.end()) {
    if (!labels->is_object()) return InvalidArgument("matchLabels must be an object");
    for (const auto& [k, v] : labels->items()) {
      if (!v.is_string()) return InvalidArgument("matchLabels[" + k + "] must be a string");
      s.requirements_.push_back({k, Op::kEquals, {v.get<std::string>()}});
    }
  }
  if (auto exprs = selector.find("matchExpressions"); exprs != selector.end()) {
    if (!exprs->is_array()) return InvalidArgument("matchExpressions must be a list");
    for (const nlohmann::json& e : *exprs) {
      if (!e.is_object() || !e.value("key", nlohmann::json()).is_string() ||
          !e.value("operator", nlohmann::json()).is_string()) {
        return InvalidArgument("a matchExpressions entry needs a key and an operator");
      }
      Requirement r;
      r.key = e["key"].get<std::string>();
      const std::string op = e["operator"].get<std::string>();
      if (op == "In") {
        r.op = Op::kIn;
      } else if (op == "NotIn") {
        r.op = Op::kNotIn;
      } else if (op == "Exists") {
        r.op = Op::kExists;
      } else if (op == "DoesNotExist") {
        r.op = Op::kDoesNotExist;
      } else {
        return InvalidArgument("unknown operator \"" + op + "\"");
      }
      if (auto values = e.find("values"); values != e.end() && values->is_array()) {
        for (const nlohmann::json& v : *values) {
          if (v.is_string()) r.values.push_back(v.get<std::string>());
        }
      }
      std::sort(r.values.begin(), r.values.end());
      s.requirements_.push_back(std::move(r));
    }
  }
  std::stable_sort(s.requirements_.begin(), s.requirements_.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return s;
}

std::string LabelSelector::String() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ",";
    std::string values;
    for (const std::string& v : r.values) values += (values.empty() ? "" : ",") + v;
    switch (r.op) {
      case Op::kEquals:
        out += r.key + "=" + r.values[0];
        break;
      case Op::kNotEquals:
        out += r.key + "!=" + r.values[0];
        break;
      case Op::kIn:
        out += r.key + " in (" + values + ")";
        break;
      case Op::kNotIn:
        out += r.key + " notin (" + values + ")";
        break;
      case Op::kExists:
        out += r.key;
        break;
      case Op::kDoesNotExist:
        out += "!" + r.key;
        break;
    }
  }
  return out;
}

std::string FormatLabelSelector(const nlohmann::json& selector) {
  if (selector.is_null()) return "<none>";
  auto parsed = LabelSelector::FromObject(selector);
  if (!parsed.ok()) return "<error>";
  std::string out = parsed->String();
  return out.empty() ? "<none>" : out;
}

bool LabelSelector::Matches(const model::StringMap& labels) const {
  for (const auto& r : requirements_) {
    auto it = labels.find(r.key);
    if (!MatchOne(r, it != labels.end(), it != labels.end() ? it->second : "")) return false;
  }
  return true;
}

bool LabelSelector::Matches(const nlohmann::json& object) const {
  if (requirements_.empty()) return true;
  model::StringMap labels;
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object()) {
    const auto& md = object["metadata"];
    if (md.contains("labels") && md["labels"].is_object()) {
      for (auto it = md["labels"].begin(); it != md["labels"].end(); ++it) {
        if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
      }
    }
  }
  return Matches(labels);
}

Result<FieldSelector> FieldSelector::Parse(std::string_view text) {
  auto terms = ParseTerms(text, /*allow_sets=*/false);
  if (!terms.ok()) return terms.status();
  FieldSelector s;
  s.requirements_ = std::move(*terms);
  return s;
}

bool FieldSelector::Matches(const nlohmann::json& object) const {
  for (const auto& r : requirements_) {
    // Fields always "exist" (missing reads as ""), as the API server treats them.
    if (!MatchOne(r, true, FieldValue(object, r.key))) return false;
  }
  return true;
}

std::string FieldSelector::EqualityValue(std::string_view path) const {
  for (const auto& r : requirements_) {
    if (r.key == path && r.op == Op::kEquals) return r.values[0];
  }
  return "";
}

std::string FieldValue(const nlohmann::json& object, std::string_view path) {
  const nlohmann::json* cur = &object;
  while (!path.empty()) {
    size_t dot = path.find('.');
    std::string part(path.substr(0, dot));
    if (!cur->is_object()) return "";
    auto it = cur->find(part);
    if (it == cur->end()) return "";
    cur = &*it;
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

}  // namespace muster::server
