// The Matrix Market reader on arbitrary bytes, three ways: parsed from
// memory, read as a file (which the reader may take for gzip), and, with
// zlib, gzip-compressed first. Each result must be a consistent matrix or
// an error the header documents; a file that is not gzip and the
// compressed copy must give what parsing the bytes gives.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "stf_apps.h"

#if STF_HAVE_ZLIB
#include <zlib.h>
#endif

namespace {

struct Result {
  int rc;
  stf_coo m{};
  ~Result() { stf_coo_free(&m); }
};

// Checks what a read returned; aborts (a finding) when it is inconsistent.
void check(const Result &r) {
  if (r.rc != STF_SUCCESS) {
    const bool documented = r.rc == STF_ERR_ARG || r.rc == STF_ERR_UNSUPPORTED || r.rc == STF_ERR_MEMORY;
    if (!documented || r.m.row || r.m.col || r.m.val || r.m.nnz || !*stf_last_error_message()) std::abort();
    return;
  }
  const stf_coo &m = r.m;
  if (m.nrows < 0 || m.ncols < 0 || m.nnz < 0 || !m.row || !m.col || !m.val) std::abort();
  for (int64_t k = 0; k < m.nnz; k++)
    if (m.row[k] < 0 || m.row[k] >= m.nrows || m.col[k] < 0 || m.col[k] >= m.ncols || !std::isfinite(m.val[k]))
      std::abort();
}

bool same(const Result &a, const Result &b) {
  if (a.rc != b.rc) return false;
  if (a.rc != STF_SUCCESS) return true;
  const std::size_t n = static_cast<std::size_t>(a.m.nnz);
  return a.m.nrows == b.m.nrows && a.m.ncols == b.m.ncols && a.m.nnz == b.m.nnz &&
         !std::memcmp(a.m.row, b.m.row, n * sizeof(int64_t)) && !std::memcmp(a.m.col, b.m.col, n * sizeof(int64_t)) &&
         !std::memcmp(a.m.val, b.m.val, n * sizeof(double));
}

// One temporary file for the whole run, in memory where there is /dev/shm.
std::string temp_name() {
  const char *tmp = std::getenv("TMPDIR");
  const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : tmp ? tmp : "/tmp";
  return std::string(dir) + "/stf_fuzz_mm." + std::to_string(getpid());
}
const std::string &temp_path() {
  static const std::string path = temp_name();
  static const int removed_at_exit = std::atexit([] { std::remove(temp_path().c_str()); });
  (void)removed_at_exit;
  return path;
}

void write_file(const void *bytes, std::size_t n) {
  std::FILE *f = std::fopen(temp_path().c_str(), "wb");
  if (!f || std::fwrite(bytes, 1, n, f) != n || std::fclose(f) != 0) std::abort();  // the harness's own failure
}

#if STF_HAVE_ZLIB
std::string gzip(const uint8_t *data, std::size_t size) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::string out(deflateBound(&z, size), '\0');
  z.next_in = const_cast<Bytef *>(data);
  z.avail_in = static_cast<uInt>(size);
  z.next_out = reinterpret_cast<Bytef *>(&out[0]);
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, std::size_t size) {
  Result parsed;
  parsed.rc = stf_mm_parse(reinterpret_cast<const char *>(data), static_cast<int64_t>(size), &parsed.m);
  check(parsed);

  Result file;
  write_file(data, size);
  file.rc = stf_mm_read(temp_path().c_str(), &file.m);
  check(file);
  const bool gzip_magic = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (!gzip_magic && !same(parsed, file)) std::abort();

#if STF_HAVE_ZLIB
  const std::string z = gzip(data, size);
  Result compressed;
  write_file(z.data(), z.size());
  compressed.rc = stf_mm_read(temp_path().c_str(), &compressed.m);
  check(compressed);
  if (!same(parsed, compressed)) std::abort();
#endif
  return 0;
}
