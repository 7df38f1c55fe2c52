#include "read_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "apps_error.h"

#if STF_HAVE_ZLIB
#include <zlib.h>
#endif

namespace stf_apps {

#if STF_HAVE_ZLIB
// zlib reads plain files as they are.
int read_file(const char *path, std::string *out) {
  gzFile f = gzopen(path, "rb");
  if (!f) return fail(STF_ERR_ARG, "cannot open '%s': %s", path, std::strerror(errno));
  char chunk[1 << 16];
  int n;
  while ((n = gzread(f, chunk, sizeof chunk)) > 0) out->append(chunk, n);
  // A stream cut short reads as end of file (n == 0); only gzerror's
  // Z_BUF_ERROR tells it from a complete one (trailer checked).
  int zerr = Z_OK;
  const char *msg = gzerror(f, &zerr);
  const std::string why = msg ? msg : "";
  gzclose(f);
  if (n < 0) return fail(STF_ERR_ARG, "cannot read '%s': %s", path, why.c_str());
  if (zerr == Z_BUF_ERROR)
    return fail(STF_ERR_ARG, "'%s' is truncated: its compressed data ends before the end of the stream", path);
  return STF_SUCCESS;
}
#else
int read_file(const char *path, std::string *out) {
  std::FILE *f = std::fopen(path, "rb");
  if (!f) return fail(STF_ERR_ARG, "cannot open '%s': %s", path, std::strerror(errno));
  char chunk[1 << 16];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) out->append(chunk, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return fail(STF_ERR_ARG, "cannot read '%s'", path);
  const unsigned char *bytes = reinterpret_cast<const unsigned char *>(out->data());
  if (out->size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b)  // gzip's magic number
    return fail(STF_ERR_UNSUPPORTED, "'%s' is gzip-compressed, and this build has no zlib (reconfigure with zlib "
                "installed, e.g. zlib1g-dev)", path);
  return STF_SUCCESS;
}
#endif

}  // namespace stf_apps
