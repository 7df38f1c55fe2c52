// Matrix Market coordinate reader. Written to survive hostile input: every
// line is bounded, every number is checked for range and trailing garbage,
// and the declared entry count is never trusted for allocation.
#include <cctype>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "apps_error.h"
#include "read_file.h"

namespace stf_apps {
namespace {

constexpr std::size_t max_line = 4096;
constexpr int64_t max_dimension = int64_t(1) << 40;

enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew };

struct Matrix {
  int64_t nrows = 0, ncols = 0;
  std::vector<int64_t> row, col;
  std::vector<double> val;
  void add(int64_t i, int64_t j, double v) {
    row.push_back(i);
    col.push_back(j);
    val.push_back(v);
  }
};

// Splits a buffer into lines, numbering them from 1.
class Lines {
 public:
  Lines(const char *text, int64_t length) : p_(text), end_(text + length) {}
  // False at end of input; *error set for a line that is too long or holds
  // bytes that cannot appear in a text file.
  bool next(std::string *line, int *error) {
    *error = STF_SUCCESS;
    if (p_ >= end_) return false;
    number_++;
    const char *nl = static_cast<const char *>(std::memchr(p_, '\n', end_ - p_));
    const char *stop = nl ? nl : end_;
    std::size_t n = stop - p_;
    if (n > 0 && stop[-1] == '\r') n--;
    if (n > max_line) *error = fail(STF_ERR_ARG, "line %lld: longer than %zu characters", number_, max_line);
    for (std::size_t k = 0; k < n && !*error; k++) {
      unsigned char c = static_cast<unsigned char>(p_[k]);
      if (c < 32 && c != '\t')
        *error = fail(STF_ERR_ARG, "line %lld: control character 0x%02x in column %zu", number_, c, k + 1);
    }
    line->assign(p_, n);
    p_ = nl ? nl + 1 : end_;
    return true;
  }
  long long number() const { return number_; }

 private:
  const char *p_, *end_;
  long long number_ = 0;
};

std::vector<std::string> tokens(const std::string &line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) i++;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') i++;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

bool is_blank(const std::string &line) { return tokens(line).empty(); }

std::string lower(std::string s) {
  for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int parse_int(const std::string &tok, long long line, const char *what, int64_t lo, int64_t hi, int64_t *out) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(tok.c_str(), &end, 10);
  if (end == tok.c_str() || *end != '\0')
    return fail(STF_ERR_ARG, "line %lld: %s '%s' is not an integer", line, what, tok.c_str());
  if (errno == ERANGE || v < lo || v > hi)
    return fail(STF_ERR_ARG, "line %lld: %s %s is outside [%lld, %lld]", line, what, tok.c_str(),
                static_cast<long long>(lo), static_cast<long long>(hi));
  *out = v;
  return STF_SUCCESS;
}

int parse_value(const std::string &tok, long long line, Field field, double *out) {
  if (field == Field::integer) {
    int64_t v = 0;
    int rc = parse_int(tok, line, "value", -(int64_t(1) << 53), int64_t(1) << 53, &v);
    *out = static_cast<double>(v);
    return rc;
  }
  // Decimal only: strtod would also take hexadecimal ("inf" and "nan" are
  // refused as not finite, below).
  if (tok.find_first_of("xX") != std::string::npos)
    return fail(STF_ERR_ARG, "line %lld: value '%s' is not a decimal number", line, tok.c_str());
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(tok.c_str(), &end);
  if (end == tok.c_str() || *end != '\0')
    return fail(STF_ERR_ARG, "line %lld: value '%s' is not a number", line, tok.c_str());
  // Underflow (ERANGE with a subnormal or zero result) is a value like any
  // other; overflow is not.
  if (!std::isfinite(v) || (errno == ERANGE && std::fabs(v) > DBL_MIN))
    return fail(STF_ERR_ARG, "line %lld: value '%s' is not a finite double", line, tok.c_str());
  *out = v;
  return STF_SUCCESS;
}

int parse_header(const std::string &line, Field *field, Symmetry *sym) {
  std::vector<std::string> t = tokens(line);
  if (t.empty() || t[0] != "%%MatrixMarket")
    return fail(STF_ERR_ARG, "line 1: expected a '%%%%MatrixMarket' header");
  if (t.size() != 5) return fail(STF_ERR_ARG, "line 1: the header needs 5 words, found %zu", t.size());
  if (lower(t[1]) != "matrix") return fail(STF_ERR_UNSUPPORTED, "line 1: object '%s' is not 'matrix'", t[1].c_str());
  if (lower(t[2]) != "coordinate")
    return fail(STF_ERR_UNSUPPORTED, "line 1: format '%s' is not supported (only 'coordinate')", t[2].c_str());
  std::string f = lower(t[3]), s = lower(t[4]);
  if (f == "real") *field = Field::real;
  else if (f == "integer") *field = Field::integer;
  else if (f == "pattern") *field = Field::pattern;
  else return fail(STF_ERR_UNSUPPORTED, "line 1: field '%s' is not supported (real, integer, pattern)", t[3].c_str());
  if (s == "general") *sym = Symmetry::general;
  else if (s == "symmetric") *sym = Symmetry::symmetric;
  else if (s == "skew-symmetric") *sym = Symmetry::skew;
  else
    return fail(STF_ERR_UNSUPPORTED, "line 1: symmetry '%s' is not supported (general, symmetric, skew-symmetric)",
                t[4].c_str());
  if (*field == Field::pattern && *sym == Symmetry::skew)
    return fail(STF_ERR_ARG, "line 1: a pattern matrix cannot be skew-symmetric");
  return STF_SUCCESS;
}

int parse(const char *text, int64_t length, Matrix *m) {
  Lines lines(text, length);
  std::string line;
  int err = STF_SUCCESS;
  if (!lines.next(&line, &err)) return fail(STF_ERR_ARG, "line 1: empty input, expected a header");
  if (err) return err;
  Field field = Field::real;
  Symmetry sym = Symmetry::general;
  if (int rc = parse_header(line, &field, &sym)) return rc;

  // Comments and blank lines, then the size line.
  bool have_size = false;
  while (!have_size && lines.next(&line, &err)) {
    if (err) return err;
    if (!line.empty() && line[0] == '%') continue;
    if (is_blank(line)) continue;
    have_size = true;
  }
  if (!have_size) return fail(STF_ERR_ARG, "line %lld: end of input before the size line", lines.number());
  std::vector<std::string> t = tokens(line);
  if (t.size() != 3)
    return fail(STF_ERR_ARG, "line %lld: size line needs 'rows cols entries', found %zu words", lines.number(),
                t.size());
  int64_t entries = 0;
  if (int rc = parse_int(t[0], lines.number(), "row count", 0, max_dimension, &m->nrows)) return rc;
  if (int rc = parse_int(t[1], lines.number(), "column count", 0, max_dimension, &m->ncols)) return rc;
  if (int rc = parse_int(t[2], lines.number(), "entry count", 0, max_dimension, &entries)) return rc;
  if (sym != Symmetry::general && m->nrows != m->ncols)
    return fail(STF_ERR_ARG, "line %lld: a symmetric matrix must be square, got %lld x %lld", lines.number(),
                static_cast<long long>(m->nrows), static_cast<long long>(m->ncols));

  const std::size_t words = field == Field::pattern ? 2 : 3;
  int64_t seen = 0;
  while (lines.next(&line, &err)) {
    if (err) return err;
    if (is_blank(line) || line[0] == '%') continue;  // comments may come between entries too
    const long long ln = lines.number();
    if (seen == entries)
      return fail(STF_ERR_ARG, "line %lld: more entries than the %lld declared", ln, static_cast<long long>(entries));
    t = tokens(line);
    if (t.size() != words)
      return fail(STF_ERR_ARG, "line %lld: an entry needs %zu words, found %zu", ln, words, t.size());
    int64_t i = 0, j = 0;
    double v = 1.0;
    if (int rc = parse_int(t[0], ln, "row index", 1, m->nrows, &i)) return rc;
    if (int rc = parse_int(t[1], ln, "column index", 1, m->ncols, &j)) return rc;
    if (words == 3)
      if (int rc = parse_value(t[2], ln, field, &v)) return rc;
    if (sym != Symmetry::general && j > i)
      return fail(STF_ERR_ARG, "line %lld: entry (%lld, %lld) above the diagonal in a symmetric file", ln,
                  static_cast<long long>(i), static_cast<long long>(j));
    if (sym == Symmetry::skew && i == j)
      return fail(STF_ERR_ARG, "line %lld: diagonal entry in a skew-symmetric file", ln);
    m->add(i - 1, j - 1, v);
    if (sym != Symmetry::general && i != j) m->add(j - 1, i - 1, sym == Symmetry::skew ? -v : v);
    seen++;
  }
  if (seen != entries)
    return fail(STF_ERR_ARG, "line %lld: end of input after %lld of %lld declared entries", lines.number(),
                static_cast<long long>(seen), static_cast<long long>(entries));
  return STF_SUCCESS;
}

template <typename T>
T *to_c_array(const std::vector<T> &v) {
  T *p = static_cast<T *>(std::malloc(sizeof(T) * (v.empty() ? 1 : v.size())));
  if (p && !v.empty()) std::memcpy(p, v.data(), sizeof(T) * v.size());
  return p;
}

int export_matrix(const Matrix &m, stf_coo *out) {
  out->row = to_c_array(m.row);
  out->col = to_c_array(m.col);
  out->val = to_c_array(m.val);
  if (!out->row || !out->col || !out->val) {
    stf_coo_free(out);
    return fail(STF_ERR_MEMORY, "cannot allocate %zu matrix entries", m.row.size());
  }
  out->nrows = m.nrows;
  out->ncols = m.ncols;
  out->nnz = static_cast<int64_t>(m.row.size());
  return STF_SUCCESS;
}

int parse_into(const char *text, int64_t length, stf_coo *out) {
  Matrix m;
  try {
    if (int rc = parse(text, length, &m)) return rc;
  } catch (const std::bad_alloc &) {
    return fail(STF_ERR_MEMORY, "out of memory while reading the matrix");
  }
  return export_matrix(m, out);
}

}  // namespace
}  // namespace stf_apps

extern "C" int stf_mm_parse(const char *text, int64_t length, stf_coo *out) try {
  if (!out) return stf_apps::fail(STF_ERR_NULL, "output matrix is NULL");
  *out = stf_coo{};
  if (!text && length > 0) return stf_apps::fail(STF_ERR_NULL, "text is NULL");
  if (length < 0) return stf_apps::fail(STF_ERR_ARG, "negative length %lld", static_cast<long long>(length));
  return stf_apps::parse_into(text, length, out);
} STF_APPS_CATCH

extern "C" int stf_mm_read(const char *path, stf_coo *out) try {
  if (!out) return stf_apps::fail(STF_ERR_NULL, "output matrix is NULL");
  *out = stf_coo{};
  if (!path) return stf_apps::fail(STF_ERR_NULL, "path is NULL");
  std::string text;
  try {
    if (int rc = stf_apps::read_file(path, &text)) return rc;
  } catch (const std::bad_alloc &) {
    return stf_apps::fail(STF_ERR_MEMORY, "out of memory while reading '%s'", path);
  }
  return stf_apps::parse_into(text.data(), static_cast<int64_t>(text.size()), out);
} STF_APPS_CATCH

extern "C" void stf_coo_free(stf_coo *m) {
  if (!m) return;
  std::free(m->row);
  std::free(m->col);
  std::free(m->val);
  *m = stf_coo{};
}
