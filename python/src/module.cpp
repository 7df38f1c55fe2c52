// starforest._core: the extension module, assembled from its parts.
#include "common.h"

NB_MODULE(_core, m) {
  m.doc() = "starforest C library bindings (use the starforest package)";
  stfpy::bind_errors(m);
  stfpy::bind_mpi(m);
  stfpy::bind_buffers(m);
  stfpy::bind_sf(m);
  stfpy::bind_device(m);
  stfpy::bind_apps(m);
  stfpy::bind_bench(m);
}
