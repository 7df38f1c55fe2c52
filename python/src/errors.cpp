// starforest.Error: a library error code and message as a Python exception.
#include "common.h"

namespace stfpy {

void fail(int code, const std::string &message) { throw Failure{code, message}; }

void check(int rc) {
  if (rc != STF_SUCCESS) fail(rc, stf_last_error_message());
}

namespace {
PyObject *error_type = nullptr;

void raise(const Failure &f) {
  nb::object exc = nb::steal(PyObject_CallFunction(error_type, "s", f.message.c_str()));
  if (!exc.is_valid()) return;  // the call set a Python error already
  exc.attr("code") = f.code;
  exc.attr("name") = stf_error_name(f.code);
  PyErr_SetObject(error_type, exc.ptr());
}
}  // namespace

void bind_errors(nb::module_ &m) {
  error_type = PyErr_NewExceptionWithDoc(
      "starforest.Error",
      "A starforest call failed: code (the library's error code), name (its "
      "symbol, e.g. 'STF_ERR_ARG') and the library's message.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = nb::handle(error_type);
  nb::register_exception_translator([](const std::exception_ptr &p, void *) {
    try {
      std::rethrow_exception(p);
    } catch (const Failure &f) {
      raise(f);
    }
  });
  m.def("error_name", &stf_error_name, "Symbol of an error code ('STF_ERR_RANK').");
  for (int c = STF_SUCCESS; c <= STF_ERR_TIMEOUT; ++c) m.attr(stf_error_name(c)) = c;
}

}  // namespace stfpy
