// starforest.Request.
#include "request.h"

namespace stfpy {

void Request::end() {
  if (!req) fail(STF_ERR_REQUEST, "the request has ended already");
  run([&] { return end_fn(handle, &req); });
  owner.reset();
  for (int i = 0; i < 3; ++i) arrays[i].reset(), buffers[i] = Buffer();
}

// Dropped without end: ended here (errors cannot be raised from a destructor).
Request::~Request() {
  if (req && !mpi_finalized()) {
    nb::gil_scoped_release unlocked;
    end_fn(handle, &req);
  }
}

void bind_request(nb::module_ &m) {
  nb::class_<Request>(m, "Request", "An operation in flight: end() completes it; also a context manager.")
      .def("end", &Request::end, "Complete the operation (the arrays are the caller's again).")
      .def_prop_ro("done", [](const Request &r) { return r.req == nullptr; })
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](Request &r, nb::args) {
        if (r.req) r.end();
      });
}

}  // namespace stfpy
