// Matrix Market reader: valid files of every supported kind, one test per
// rejection rule (with its line number), a mutation fuzz test, and the
// shared real matrices checked against their published sizes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "stf_apps.h"

namespace {

struct Parsed {
  int rc;
  stf_coo m{};
  std::string message;
  explicit Parsed(const std::string &text) {
    rc = stf_mm_parse(text.data(), static_cast<int64_t>(text.size()), &m);
    message = stf_last_error_message();
  }
  ~Parsed() { stf_coo_free(&m); }
};

TEST(MatrixMarket, GeneralReal) {
  Parsed p("%%MatrixMarket matrix coordinate real general\n% comment\n\n3 4 3\n1 1 1.5\n3 4 -2e3\n2 1 7\n");
  ASSERT_EQ(p.rc, STF_SUCCESS) << p.message;
  EXPECT_EQ(p.m.nrows, 3);
  EXPECT_EQ(p.m.ncols, 4);
  ASSERT_EQ(p.m.nnz, 3);
  EXPECT_EQ(p.m.row[1], 2);
  EXPECT_EQ(p.m.col[1], 3);
  EXPECT_EQ(p.m.val[1], -2000.0);
}

TEST(MatrixMarket, IntegerPatternCrlfAndCase) {
  Parsed a("%%MatrixMarket MATRIX Coordinate Integer General\r\n2 2 1\r\n2 2 -7\r\n");
  ASSERT_EQ(a.rc, STF_SUCCESS) << a.message;
  EXPECT_EQ(a.m.val[0], -7.0);
  Parsed b("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1");
  ASSERT_EQ(b.rc, STF_SUCCESS) << b.message;
  ASSERT_EQ(b.m.nnz, 2);
  EXPECT_EQ(b.m.val[0], 1.0);
}

TEST(MatrixMarket, SymmetricAndSkewExpand) {
  Parsed s("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 4\n3 1 2\n");
  ASSERT_EQ(s.rc, STF_SUCCESS) << s.message;
  ASSERT_EQ(s.m.nnz, 3);  // the diagonal once, (3,1) and (1,3)
  EXPECT_EQ(s.m.row[2], 0);
  EXPECT_EQ(s.m.col[2], 2);
  EXPECT_EQ(s.m.val[2], 2.0);
  Parsed k("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 5\n");
  ASSERT_EQ(k.rc, STF_SUCCESS) << k.message;
  ASSERT_EQ(k.m.nnz, 2);
  EXPECT_EQ(k.m.val[1], -5.0);
}

struct Bad {
  const char *text;
  int code;
  const char *expect;  // must appear in the message
};

// The format lets comment lines come anywhere after the header, and a
// subnormal value is a finite double like any other.
TEST(MatrixMarket, CommentsBetweenEntriesAndSubnormalValues) {
  Parsed p("%%MatrixMarket matrix coordinate real general\n% a\n2 2 2\n1 1 1e-310\n% b\n%\n2 2 -4.9e-324\n");
  ASSERT_EQ(p.rc, STF_SUCCESS) << p.message;
  ASSERT_EQ(p.m.nnz, 2);
  EXPECT_EQ(p.m.val[0], 1e-310);
  EXPECT_EQ(p.m.val[1], -4.9e-324);
  EXPECT_NE(p.m.val[1], 0.0);
}

TEST(MatrixMarket, RejectsMalformedInputWithLineNumbers) {
  const std::string h = "%%MatrixMarket matrix coordinate real general\n";
  const std::string sym = "%%MatrixMarket matrix coordinate real symmetric\n";
  const std::vector<std::pair<std::string, Bad>> cases = {
      {"", {"", STF_ERR_ARG, "line 1"}},
      {"%MatrixMarket matrix coordinate real general\n1 1 0\n", {"", STF_ERR_ARG, "line 1"}},
      {"%%MatrixMarket matrix coordinate real\n1 1 0\n", {"", STF_ERR_ARG, "5 words"}},
      {"%%MatrixMarket matrix array real general\n1 1\n1\n", {"", STF_ERR_UNSUPPORTED, "coordinate"}},
      {"%%MatrixMarket matrix coordinate complex general\n1 1 0\n", {"", STF_ERR_UNSUPPORTED, "complex"}},
      {"%%MatrixMarket matrix coordinate real hermitian\n1 1 0\n", {"", STF_ERR_UNSUPPORTED, "hermitian"}},
      {h, {"", STF_ERR_ARG, "size line"}},
      {h + "2 2\n", {"", STF_ERR_ARG, "line 2"}},
      {h + "2 -2 1\n", {"", STF_ERR_ARG, "line 2"}},
      {h + "2 2 1\n3 1 1.0\n", {"", STF_ERR_ARG, "line 3: row index 3"}},
      {h + "2 2 1\n1 0 1.0\n", {"", STF_ERR_ARG, "line 3: column index 0"}},
      {h + "2 2 2\n1 1 1.0\n", {"", STF_ERR_ARG, "1 of 2 declared"}},
      {h + "2 2 1\n1 1 1.0\n2 2 1.0\n", {"", STF_ERR_ARG, "line 4: more entries"}},
      {h + "2 2 1\n1 1 1.5x\n", {"", STF_ERR_ARG, "line 3: value '1.5x'"}},
      {h + "2 2 1\n1 1 nan\n", {"", STF_ERR_ARG, "finite"}},
      {h + "2 2 1\n1 1 1e999\n", {"", STF_ERR_ARG, "finite"}},
      {h + "2 2 1\n1 1 0x1p3\n", {"", STF_ERR_ARG, "line 3: value '0x1p3' is not a decimal number"}},
      {h + "2 2 1\n1 1\n", {"", STF_ERR_ARG, "3 words"}},
      {h + "2 2 1\n99999999999999999999 1 1\n", {"", STF_ERR_ARG, "line 3"}},
      {h + "2 2 1\n1\x01 1 1\n", {"", STF_ERR_ARG, "control character"}},
      {h + "2 2 1\n1 1 " + std::string(5000, '1') + "\n", {"", STF_ERR_ARG, "longer than"}},
      {sym + "2 3 0\n", {"", STF_ERR_ARG, "square"}},
      {sym + "2 2 1\n1 2 1.0\n", {"", STF_ERR_ARG, "line 3: entry (1, 2) above the diagonal"}},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n", {"", STF_ERR_ARG, "diagonal"}},
      {"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", {"", STF_ERR_ARG, "not an integer"}},
  };
  for (const auto &c : cases) {
    Parsed p(c.first);
    EXPECT_EQ(p.rc, c.second.code) << "input:\n" << c.first << "\nmessage: " << p.message;
    EXPECT_NE(p.message.find(c.second.expect), std::string::npos)
        << "message '" << p.message << "' lacks '" << c.second.expect << "'";
    EXPECT_EQ(p.m.nnz, 0);
    EXPECT_EQ(p.m.row, nullptr);
  }
}

// A random valid file and what it must read as.
std::string random_file(std::mt19937 &rng, int *nnz_expected) {
  int n = 1 + rng() % 20, entries = rng() % 30;
  bool symmetric = rng() % 2;
  std::string s = std::string("%%MatrixMarket matrix coordinate real ") + (symmetric ? "symmetric" : "general") +
                  "\n% generated\n" + std::to_string(n) + " " + std::to_string(n) + " " +
                  std::to_string(entries) + "\n";
  *nnz_expected = 0;
  for (int e = 0; e < entries; e++) {
    int i = 1 + rng() % n, j = 1 + rng() % n;
    if (symmetric && j > i) std::swap(i, j);
    *nnz_expected += symmetric && i != j ? 2 : 1;
    s += std::to_string(i) + " " + std::to_string(j) + " " + std::to_string(static_cast<int>(rng() % 200) - 100) +
         ".25\n";
  }
  return s;
}

std::string mutate(std::string s, std::mt19937 &rng) {
  static const char alphabet[] = "0123456789 -+.eE%\n\r\tnaxMm\x00\x7f\xff";
  int edits = 1 + rng() % 4;
  for (int e = 0; e < edits && !s.empty(); e++) {
    std::size_t at = rng() % s.size();
    switch (rng() % 6) {
      case 0: s[at] = alphabet[rng() % (sizeof alphabet - 1)]; break;
      case 1: s.erase(at, 1 + rng() % 8); break;
      case 2: s.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
      case 3: s.resize(at); break;
      case 4: s.insert(at, s.substr(at, 1 + rng() % 16)); break;
      case 5: s.insert(at, std::to_string(rng())); break;
    }
  }
  return s;
}

TEST(MatrixMarket, MutatedInputNeverCrashesAndValidInputRoundTrips) {
  std::mt19937 rng(20261122);
  int accepted = 0, rejected = 0;
  for (int round = 0; round < 3000; round++) {
    int nnz = 0;
    std::string text = random_file(rng, &nnz);
    {
      Parsed p(text);
      ASSERT_EQ(p.rc, STF_SUCCESS) << p.message << "\n" << text;
      ASSERT_EQ(p.m.nnz, nnz);
    }
    Parsed q(mutate(text, rng));
    if (q.rc == STF_SUCCESS) {
      accepted++;
      for (int64_t k = 0; k < q.m.nnz; k++) {
        ASSERT_TRUE(q.m.row[k] >= 0 && q.m.row[k] < q.m.nrows) << "round " << round;
        ASSERT_TRUE(q.m.col[k] >= 0 && q.m.col[k] < q.m.ncols) << "round " << round;
      }
    } else {
      rejected++;
      ASSERT_TRUE(q.rc == STF_ERR_ARG || q.rc == STF_ERR_UNSUPPORTED) << q.message;
      ASSERT_FALSE(q.message.empty());
    }
  }
  EXPECT_GT(rejected, 1000);  // the mutations must actually exercise the error paths
  EXPECT_GT(accepted, 10);
}

// The same small matrix as a plain file and gzip-compressed: both read with
// zlib; without it the gzip file is refused, saying why.
TEST(MatrixMarket, PlainAndGzipFiles) {
  const std::string text = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.5\n2 2 -3\n";
  const unsigned char gz[] = {  // text, gzip-compressed
      0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x53, 0x55, 0xf5, 0x4d, 0x2c, 0x29,
      0xca, 0xac, 0xf0, 0x4d, 0x2c, 0xca, 0x4e, 0x2d, 0x51, 0xc8, 0x05, 0x73, 0x14, 0x92, 0xf3, 0xf3,
      0x8b, 0x52, 0x32, 0xf3, 0x12, 0x4b, 0x52, 0x15, 0x8a, 0x52, 0x13, 0x73, 0x14, 0xd2, 0x53, 0xf3,
      0x52, 0x8b, 0x12, 0x73, 0xb8, 0x8c, 0x14, 0x80, 0x90, 0xcb, 0x50, 0x01, 0x08, 0xf5, 0x4c, 0xc1,
      0x3c, 0x5d, 0x63, 0x2e, 0x00, 0x6d, 0x80, 0xe1, 0x53, 0x43, 0x00, 0x00, 0x00};
  char dir[] = "/tmp/stf_mm_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string plain = std::string(dir) + "/a.mtx", zipped = std::string(dir) + "/a.mtx.gz";
  FILE *f = std::fopen(plain.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  f = std::fopen(zipped.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(gz, 1, sizeof gz, f);
  std::fclose(f);
  stf_coo m{};
  ASSERT_EQ(stf_mm_read(plain.c_str(), &m), STF_SUCCESS) << stf_last_error_message();
  EXPECT_EQ(m.nnz, 2);
  EXPECT_EQ(m.val[1], -3.0);
  stf_coo_free(&m);
#if STF_HAVE_ZLIB
  ASSERT_EQ(stf_mm_read(zipped.c_str(), &m), STF_SUCCESS) << stf_last_error_message();
  EXPECT_EQ(m.nnz, 2);
  EXPECT_EQ(m.val[0], 1.5);
  stf_coo_free(&m);
  // Cut at every byte: an error every time, never a shorter matrix.
  for (std::size_t cut = 1; cut < sizeof gz; cut++) {
    f = std::fopen(zipped.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(gz, 1, cut, f);
    std::fclose(f);
    EXPECT_NE(stf_mm_read(zipped.c_str(), &m), STF_SUCCESS) << "cut after " << cut << " of " << sizeof gz << " bytes";
    EXPECT_EQ(m.nnz, 0);
  }
  // Two members in a row are read as one stream; anything else after the
  // gzip data is an error, not dropped.
  for (const std::string tail : {std::string(reinterpret_cast<const char *>(gz), sizeof gz), std::string("2 1 7\n"),
                                 std::string(1, '\0')}) {
    f = std::fopen(zipped.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(gz, 1, sizeof gz, f);
    std::fwrite(tail.data(), 1, tail.size(), f);
    std::fclose(f);
    const bool member = tail.size() == sizeof gz;
    ASSERT_EQ(stf_mm_read(zipped.c_str(), &m), STF_ERR_ARG) << stf_last_error_message();
    EXPECT_NE(std::string(stf_last_error_message()).find(member ? "more entries" : "after the end of its gzip data"),
              std::string::npos)
        << stf_last_error_message();
    EXPECT_EQ(m.nnz, 0);
  }
#else
  EXPECT_EQ(stf_mm_read(zipped.c_str(), &m), STF_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(stf_last_error_message()).find("no zlib"), std::string::npos) << stf_last_error_message();
  EXPECT_EQ(m.nnz, 0);
#endif
  std::remove(plain.c_str());
  std::remove(zipped.c_str());
  rmdir(dir);
}

TEST(MatrixMarket, SharedMatricesMatchTheirPublishedSizes) {
  struct stat st;
  if (stat(STF_MATRIX_DIR, &st) != 0) GTEST_SKIP() << "no shared matrices (or no zlib) at " << STF_MATRIX_DIR;
  struct Expect {
    const char *file;
    int64_t rows, nnz;
  };
  const Expect all[] = {{"1138_bus", 1138, 4054},   {"bcsstk13", 2003, 83883},  {"Pd", 8081, 13036},
                        {"cage10", 11397, 150645},  {"4elt", 15606, 91756},     {"cs4", 22499, 87716},
                        {"de2010", 24115, 116056},  {"wing", 62032, 243088}};
  for (const Expect &e : all) {
    std::string path = std::string(STF_MATRIX_DIR) + "/" + e.file + ".mtx.gz";
    stf_coo m{};
    ASSERT_EQ(stf_mm_read(path.c_str(), &m), STF_SUCCESS) << stf_last_error_message();
    EXPECT_EQ(m.nrows, e.rows) << e.file;
    EXPECT_EQ(m.ncols, e.rows) << e.file;
    EXPECT_EQ(m.nnz, e.nnz) << e.file;
    stf_coo_free(&m);
  }
  stf_coo m{};
  EXPECT_EQ(stf_mm_read("/nonexistent/file.mtx", &m), STF_ERR_ARG);
}

}  // namespace
