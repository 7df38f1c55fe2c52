// A small JSON reader and writer, only as much as machine profiles need:
// objects, arrays, numbers, strings, true/false/null. Objects keep their
// keys in the order read or added, so a written profile reads like the
// header documents it.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace stf::model {

class Json {
 public:
  enum class Kind { null, boolean, number, string, array, object };

  Json() = default;
  static Json boolean(bool b);
  static Json number(double x);
  static Json string(std::string s);
  static Json array();
  static Json object();

  Kind kind() const { return kind_; }
  bool is(Kind k) const { return kind_ == k; }
  bool as_bool() const { return b_; }
  double as_number() const { return x_; }
  const std::string &as_string() const { return s_; }
  const std::vector<Json> &items() const { return items_; }
  const std::vector<std::pair<std::string, Json>> &members() const { return members_; }

  // Objects made from members whose keys are distinct (the parser's).
  static Json object(std::vector<std::pair<std::string, Json>> members);
  // Arrays: append. Objects: add or replace a member (returns *this).
  Json &push(Json v);
  Json &set(const std::string &key, Json v);
  // The member named key, or nullptr (also when this is not an object).
  const Json *find(const std::string &key) const;

  // Indented text; numbers with the fewest digits (15 to 17) that read back
  // exactly, non-finite numbers as null (JSON has none).
  std::string dump(int indent = 2) const;

 private:
  void dump_to(std::string &out, int indent, int depth) const;
  Kind kind_ = Kind::null;
  bool b_ = false;
  double x_ = 0;
  std::string s_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// Parses one JSON value (and nothing after it but white space). On failure
// returns false and says what and where ("line 3, column 7: ...") in *error;
// nesting deeper than 64 levels is refused rather than recursed into.
bool parse_json(const std::string &text, Json *out, std::string *error);

}  // namespace stf::model
