// stf_get_version: the version this library was built as. CMake passes the
// project's version; the header's STF_VERSION_* must agree with it.
#include "starforest.h"

static_assert(STF_VERSION_MAJOR == STF_PROJECT_VERSION_MAJOR && STF_VERSION_MINOR == STF_PROJECT_VERSION_MINOR &&
                  STF_VERSION_PATCH == STF_PROJECT_VERSION_PATCH,
              "include/starforest.h's STF_VERSION_* differ from project(VERSION) in CMakeLists.txt");

extern "C" int stf_get_version(int *major, int *minor, int *patch) {
  if (major) *major = STF_VERSION_MAJOR;
  if (minor) *minor = STF_VERSION_MINOR;
  if (patch) *patch = STF_VERSION_PATCH;
  return STF_SUCCESS;
}
