#include "read_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "apps_error.h"

#if STF_HAVE_ZLIB
#include <zlib.h>
#endif

namespace stf_apps {
namespace {

int read_bytes(const char *path, std::string *out) {
  std::FILE *f = std::fopen(path, "rb");
  if (!f) return fail(STF_ERR_ARG, "cannot open '%s': %s", path, std::strerror(errno));
  char chunk[1 << 16];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) out->append(chunk, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return fail(STF_ERR_ARG, "cannot read '%s'", path);
  return STF_SUCCESS;
}

bool gzip_magic(const std::string &bytes, std::size_t at) {
  return bytes.size() >= at + 2 && static_cast<unsigned char>(bytes[at]) == 0x1f &&
         static_cast<unsigned char>(bytes[at + 1]) == 0x8b;
}

#if STF_HAVE_ZLIB
// Every gzip member of gz, one after the other (as gzip -d writes them).
// Anything else after a member is an error, not silently dropped, and so is
// a stream cut short.
int gunzip(const char *path, const std::string &gz, std::string *out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return fail(STF_ERR_MEMORY, "cannot start zlib for '%s'", path);
  std::size_t at = 0;  // bytes of gz handed to zlib so far
  int rc = STF_SUCCESS;
  char chunk[1 << 16];
  for (;;) {
    if (z.avail_in == 0 && at < gz.size()) {  // zlib counts input in 32 bits
      const std::size_t n = std::min<std::size_t>(gz.size() - at, 1u << 30);
      z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(gz.data() + at));
      z.avail_in = static_cast<uInt>(n);
      at += n;
    }
    z.next_out = reinterpret_cast<Bytef *>(chunk);
    z.avail_out = sizeof chunk;
    const int zrc = inflate(&z, Z_NO_FLUSH);
    out->append(chunk, sizeof chunk - z.avail_out);
    if (zrc == Z_STREAM_END) {
      const std::size_t next = at - z.avail_in;  // the first byte after this member
      if (next == gz.size()) break;
      if (!gzip_magic(gz, next)) {
        rc = fail(STF_ERR_ARG, "'%s': %zu byte(s) after the end of its gzip data, which are not gzip data", path,
                  gz.size() - next);
        break;
      }
      inflateReset(&z);
      continue;
    }
    if (zrc == Z_OK) continue;
    if (zrc == Z_BUF_ERROR && z.avail_in == 0 && at == gz.size()) {
      rc = fail(STF_ERR_ARG, "'%s' is truncated: its compressed data ends before the end of the stream", path);
    } else {
      rc = fail(zrc == Z_MEM_ERROR ? STF_ERR_MEMORY : STF_ERR_ARG, "cannot read '%s': %s", path,
                z.msg ? z.msg : "corrupt gzip data");
    }
    break;
  }
  inflateEnd(&z);
  return rc;
}
#endif

}  // namespace

int read_file(const char *path, std::string *out) {
  std::string bytes;
  if (int rc = read_bytes(path, &bytes)) return rc;
  if (!gzip_magic(bytes, 0)) {
    out->swap(bytes);
    return STF_SUCCESS;
  }
#if STF_HAVE_ZLIB
  return gunzip(path, bytes, out);
#else
  return fail(STF_ERR_UNSUPPORTED, "'%s' is gzip-compressed, and this build has no zlib (reconfigure with zlib "
              "installed, e.g. zlib1g-dev)", path);
#endif
}

}  // namespace stf_apps
