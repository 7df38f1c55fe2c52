// A whole file into memory: gzip files decompressed (with zlib), plain files
// as they are.
#pragma once

#include <string>

namespace stf_apps {
// STF_ERR_ARG when the file cannot be opened or read; STF_ERR_UNSUPPORTED
// for a gzip file in a build without zlib.
int read_file(const char *path, std::string *out);
}  // namespace stf_apps
