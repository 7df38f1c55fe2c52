// starforest.Request.
#include "request.h"

namespace stfpy {

void Request::release() {
  req = nullptr;
  owner.reset();
  for (int i = 0; i < 3; ++i) arrays[i].reset(), buffers[i] = Buffer();
}

void Request::end() {
  if (!req) fail(STF_ERR_REQUEST, "the request has ended already");
  run([&] { return end_fn(handle, &req); });
  release();
}

bool Request::test() {
  if (!req) fail(STF_ERR_REQUEST, "the request has ended already");
  if (!test_fn) fail(STF_ERR_REQUEST, "test() is for an SF's operations; end() this one");
  int done = 0;
  run([&] { return test_fn(handle, &req, &done); });
  if (done) release();
  return done != 0;
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
      .def("test", &Request::test,
           "Whether the operation has completed, without waiting (stf_test; drives MPI's progress): True ends "
           "it as end() would, False leaves it in flight. An SF's operations only.")
      .def_prop_ro("ended", [](const Request &r) { return r.req == nullptr; },
                   "Whether end() or a test() that returned True has completed it (asks nothing of MPI).")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](Request &r, nb::args) {
        if (r.req) r.end();
      });
}

}  // namespace stfpy
