#include "model/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace stf::model {

Json Json::boolean(bool b) {
  Json j;
  j.kind_ = Kind::boolean;
  j.b_ = b;
  return j;
}

Json Json::number(double x) {
  Json j;
  j.kind_ = Kind::number;
  j.x_ = x;
  return j;
}

Json Json::string(std::string s) {
  Json j;
  j.kind_ = Kind::string;
  j.s_ = std::move(s);
  return j;
}

Json Json::array() {
  Json j;
  j.kind_ = Kind::array;
  return j;
}

Json Json::object() {
  Json j;
  j.kind_ = Kind::object;
  return j;
}

Json Json::object(std::vector<std::pair<std::string, Json>> members) {
  Json j = object();
  j.members_ = std::move(members);
  return j;
}

Json &Json::push(Json v) {
  items_.push_back(std::move(v));
  return *this;
}

Json &Json::set(const std::string &key, Json v) {
  for (auto &m : members_)
    if (m.first == key) {
      m.second = std::move(v);
      return *this;
    }
  members_.emplace_back(key, std::move(v));
  return *this;
}

const Json *Json::find(const std::string &key) const {
  if (kind_ != Kind::object) return nullptr;
  for (const auto &m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

namespace {

void quote(std::string &out, const std::string &s) {
  out += '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

void newline(std::string &out, int indent, int depth) {
  out += '\n';
  out.append(static_cast<size_t>(indent * depth), ' ');
}

}  // namespace

void Json::dump_to(std::string &out, int indent, int depth) const {
  switch (kind_) {
    case Kind::null: out += "null"; break;
    case Kind::boolean: out += b_ ? "true" : "false"; break;
    case Kind::number: {
      if (!std::isfinite(x_)) {
        out += "null";
        break;
      }
      // The shortest of 15..17 digits that reads back exactly, so that
      // 5e-07 is not written as 4.9999999999999998e-07.
      char buf[32];
      for (int digits = 15; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, x_);
        if (std::strtod(buf, nullptr) == x_) break;
      }
      out += buf;
      break;
    }
    case Kind::string: quote(out, s_); break;
    case Kind::array:
      // Arrays of numbers stay on one line; others get a line per item.
      out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += items_[i].kind_ == Kind::number ? ", " : ",";
        if (items_[i].kind_ != Kind::number) newline(out, indent, depth + 1);
        items_[i].dump_to(out, indent, depth + 1);
      }
      if (!items_.empty() && items_.back().kind_ != Kind::number) newline(out, indent, depth);
      out += ']';
      break;
    case Kind::object:
      out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) out += ',';
        newline(out, indent, depth + 1);
        quote(out, members_[i].first);
        out += ": ";
        members_[i].second.dump_to(out, indent, depth + 1);
      }
      if (!members_.empty()) newline(out, indent, depth);
      out += '}';
      break;
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out + "\n";
}

namespace {

constexpr int kMaxDepth = 64;

// Recursive descent over the text; the first error wins.
class Parser {
 public:
  explicit Parser(const std::string &t) : t_(t) {}

  bool document(Json *out, std::string *error) {
    skip_space();
    bool ok = value(out, 0);
    if (ok) {
      skip_space();
      if (i_ != t_.size()) ok = fail("text after the value");
    }
    if (!ok && error) *error = error_;
    return ok;
  }

 private:
  bool fail(const char *what) {
    if (!error_.empty()) return false;
    size_t line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < t_.size(); ++k) {
      if (t_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    error_ = "line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what;
    return false;
  }

  void skip_space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }

  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (t_.compare(i_, n, word) != 0) return fail("unknown word");
    i_ += n;
    return true;
  }

  bool value(Json *out, int depth) {
    if (depth > kMaxDepth) return fail("nested too deeply");
    if (i_ >= t_.size()) return fail("unexpected end of text");
    char c = t_[i_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') {
      std::string s;
      if (!string(&s)) return false;
      *out = Json::string(std::move(s));
      return true;
    }
    if (c == 't') {
      *out = Json::boolean(true);
      return literal("true");
    }
    if (c == 'f') {
      *out = Json::boolean(false);
      return literal("false");
    }
    if (c == 'n') {
      *out = Json();
      return literal("null");
    }
    return number(out);
  }

  bool number(Json *out) {
    // JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    size_t start = i_;
    auto digits = [&] {
      size_t from = i_;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
      return i_ > from;
    };
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    if (i_ < t_.size() && t_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      i_ = start;
      return fail("expected a value");
    }
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (!digits()) return fail("expected digits after '.'");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) return fail("expected digits in the exponent");
    }
    const std::string text = t_.substr(start, i_ - start);
    *out = Json::number(std::strtod(text.c_str(), nullptr));
    return true;
  }

  bool hex4(unsigned *code) {
    if (i_ + 4 > t_.size()) return fail("short \\u escape");
    *code = 0;
    for (int k = 0; k < 4; ++k) {
      char h = t_[i_++];
      unsigned d = h >= '0' && h <= '9'   ? h - '0'
                   : h >= 'a' && h <= 'f' ? h - 'a' + 10
                   : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                          : 16;
      if (d == 16) return fail("bad \\u escape");
      *code = *code * 16 + d;
    }
    return true;
  }

  static void utf8(std::string *s, unsigned code) {
    if (code < 0x80) {
      *s += static_cast<char>(code);
    } else if (code < 0x800) {
      *s += static_cast<char>(0xc0 | code >> 6);
      *s += static_cast<char>(0x80 | (code & 0x3f));
    } else if (code < 0x10000) {
      *s += static_cast<char>(0xe0 | code >> 12);
      *s += static_cast<char>(0x80 | (code >> 6 & 0x3f));
      *s += static_cast<char>(0x80 | (code & 0x3f));
    } else {
      *s += static_cast<char>(0xf0 | code >> 18);
      *s += static_cast<char>(0x80 | (code >> 12 & 0x3f));
      *s += static_cast<char>(0x80 | (code >> 6 & 0x3f));
      *s += static_cast<char>(0x80 | (code & 0x3f));
    }
  }

  bool string(std::string *s) {
    ++i_;  // the opening quote
    while (true) {
      if (i_ >= t_.size()) return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(t_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return fail("control character in a string");
      if (c != '\\') {
        *s += static_cast<char>(c);
        continue;
      }
      if (i_ >= t_.size()) return fail("unterminated string");
      char e = t_[i_++];
      switch (e) {
        case '"': *s += '"'; break;
        case '\\': *s += '\\'; break;
        case '/': *s += '/'; break;
        case 'b': *s += '\b'; break;
        case 'f': *s += '\f'; break;
        case 'n': *s += '\n'; break;
        case 'r': *s += '\r'; break;
        case 't': *s += '\t'; break;
        case 'u': {
          unsigned code = 0;
          if (!hex4(&code)) return false;
          // A surrogate pair names one code point beyond the first plane.
          if (code >= 0xd800 && code < 0xdc00 && t_.compare(i_, 2, "\\u") == 0) {
            i_ += 2;
            unsigned low = 0;
            if (!hex4(&low)) return false;
            if (low < 0xdc00 || low >= 0xe000) return fail("bad surrogate pair");
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          }
          utf8(s, code);
          break;
        }
        default: return fail("bad escape in a string");
      }
    }
  }

  bool array(Json *out, int depth) {
    ++i_;
    *out = Json::array();
    skip_space();
    if (i_ < t_.size() && t_[i_] == ']') {
      ++i_;
      return true;
    }
    while (true) {
      skip_space();
      Json item;
      if (!value(&item, depth + 1)) return false;
      out->push(std::move(item));
      skip_space();
      if (i_ >= t_.size()) return fail("unterminated array");
      char c = t_[i_++];
      if (c == ']') return true;
      if (c != ',') {
        --i_;
        return fail("expected ',' or ']'");
      }
    }
  }

  // A repeated key replaces the earlier member, found by an index of the
  // object's keys, so that an object of n members parses in O(n).
  bool object(Json *out, int depth) {
    ++i_;
    *out = Json::object();
    skip_space();
    if (i_ < t_.size() && t_[i_] == '}') {
      ++i_;
      return true;
    }
    std::vector<std::pair<std::string, Json>> members;
    std::unordered_map<std::string, std::size_t> index;
    while (true) {
      skip_space();
      if (i_ >= t_.size() || t_[i_] != '"') return fail("expected a key");
      std::string key;
      if (!string(&key)) return false;
      skip_space();
      if (i_ >= t_.size() || t_[i_] != ':') return fail("expected ':'");
      ++i_;
      skip_space();
      Json v;
      if (!value(&v, depth + 1)) return false;
      auto [at, added] = index.emplace(key, members.size());
      if (added) members.emplace_back(std::move(key), std::move(v));
      else members[at->second].second = std::move(v);
      skip_space();
      if (i_ >= t_.size()) return fail("unterminated object");
      char c = t_[i_++];
      if (c == '}') {
        *out = Json::object(std::move(members));
        return true;
      }
      if (c != ',') {
        --i_;
        return fail("expected ',' or '}'");
      }
    }
  }

  const std::string &t_;
  size_t i_ = 0;
  std::string error_;
};

}  // namespace

bool parse_json(const std::string &text, Json *out, std::string *error) {
  Json v;
  Parser p(text);
  if (!p.document(&v, error)) return false;
  *out = std::move(v);
  return true;
}

}  // namespace stf::model
