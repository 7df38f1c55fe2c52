// MPI handles from mpi4py objects, through mpi4py's C API (the only file that
// includes it: its function table is per translation unit).
#include <mpi4py/mpi4py.h>

#include <cctype>
#include <cstring>

#include "common.h"

namespace stfpy {

MPI_Comm to_comm(nb::handle comm) {
  if (!PyObject_TypeCheck(comm.ptr(), &PyMPIComm_Type))
    throw nb::type_error("expected an mpi4py communicator (MPI.Comm)");
  MPI_Comm c = *PyMPIComm_Get(comm.ptr());
  if (c == MPI_COMM_NULL) throw nb::value_error("the communicator is MPI.COMM_NULL");
  return c;
}

nb::object from_comm(MPI_Comm comm) { return nb::steal(PyMPIComm_New(comm)); }

namespace {
struct NamedOp {
  const char *name;
  MPI_Op op;
};

MPI_Op op_by_name(const char *name) {
  const NamedOp ops[] = {{"replace", MPI_REPLACE}, {"sum", MPI_SUM},   {"prod", MPI_PROD},
                         {"max", MPI_MAX},         {"min", MPI_MIN},   {"land", MPI_LAND},
                         {"lor", MPI_LOR},         {"lxor", MPI_LXOR}, {"band", MPI_BAND},
                         {"bor", MPI_BOR},         {"bxor", MPI_BXOR}, {"maxloc", MPI_MAXLOC},
                         {"minloc", MPI_MINLOC}};
  std::string lower(name);
  for (char &ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.rfind("mpi_", 0) == 0) lower.erase(0, 4);
  for (const NamedOp &o : ops)
    if (lower == o.name) return o.op;
  throw nb::value_error(("unknown op name '" + std::string(name) +
                         "' (replace, sum, prod, max, min, land, lor, lxor, band, bor, bxor, maxloc, minloc)")
                            .c_str());
}
}  // namespace

MPI_Op to_op(nb::handle op, MPI_Op fallback) {
  if (op.is_none()) return fallback;
  if (PyObject_TypeCheck(op.ptr(), &PyMPIOp_Type)) {
    MPI_Op o = *PyMPIOp_Get(op.ptr());
    if (o == MPI_OP_NULL) throw nb::value_error("the op is MPI.OP_NULL");
    return o;
  }
  if (PyUnicode_Check(op.ptr())) return op_by_name(PyUnicode_AsUTF8(op.ptr()));
  throw nb::type_error("op must be an mpi4py MPI.Op or an op name such as 'sum'");
}

bool mpi_finalized() {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

void bind_mpi(nb::module_ &) {
  if (import_mpi4py() < 0) throw nb::python_error();
}

}  // namespace stfpy
